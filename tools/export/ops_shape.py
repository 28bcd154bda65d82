"""Single-operator cases for the shape / data-movement / indexing / resampling
family (rust/etch-kernels/src/ops/shape.rs, index.rs, convert.rs,
upsample.rs). Driven by ops.py; see its docstring.

Copies are exact by construction. Some operators never survive `to_edge` as
themselves (torch.stack -> cat + view_copy, transpose/t -> permute_copy,
torch.roll -> arange/fmod/index_select, pixel_shuffle -> view/permute, ...):
those are called here as `torch.ops.aten.<op>` where the edge dialect keeps
them, and otherwise covered by the Rust unit tests only.
"""

import torch
import torch.nn.functional as F

from ops import case

A = torch.ops.aten
torch.manual_seed(11)


class Fn(torch.nn.Module):
    """A module whose forward is `fn(*inputs)`."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def randn(*shape):
    return torch.randn(*shape)


def ints(dtype, *shape, lo=-100, hi=100):
    return torch.randint(lo, hi, shape).to(dtype)


def cl(t):
    """The same values in channels-last dim order."""
    return t.contiguous(memory_format=torch.channels_last)


CASES = [
    # split / unbind: Tensor[] outputs.
    case("split_with_sizes_f32", Fn(lambda x: torch.split(x, [1, 2, 1], dim=1)), (randn(2, 4, 3),)),
    case("split_with_sizes_i8_neg_dim", Fn(lambda x: torch.split(x, [2, 0, 3], dim=-1)), (ints(torch.int8, 3, 5),)),
    case("split_copy_f32", Fn(lambda x: A.split_copy.Tensor(x, 2, 2)), (randn(2, 3, 5),)),
    case("split_copy_i64_dim0", Fn(lambda x: A.split_copy.Tensor(x, 3, 0)), (ints(torch.int64, 7, 2),)),
    case("unbind_copy_i32", Fn(lambda x: A.unbind_copy.int(x, 1)), (ints(torch.int32, 2, 3, 4),)),
    case("unbind_copy_f32_neg_dim", Fn(lambda x: A.unbind_copy.int(x, -1)), (randn(3, 2),)),
    # select / narrow / alias
    case("select_copy_f32", Fn(lambda x: x[:, 1]), (randn(2, 3, 4),)),
    case("select_copy_i64_neg", Fn(lambda x: A.select_copy.int(x, -2, -1)), (ints(torch.int64, 2, 3, 4),)),
    case("narrow_copy_f32", Fn(lambda x: A.narrow_copy(x, 1, 1, 2)), (randn(2, 4, 3),)),
    case("narrow_copy_u8", Fn(lambda x: A.narrow_copy(x, 1, 2, 3)), (ints(torch.uint8, 2, 5, lo=0, hi=255),)),
    case("alias_copy_f32", Fn(lambda x: A.alias_copy(x)), (randn(2, 3),)),
    # repeat / flip
    case("repeat_f32", Fn(lambda x: x.repeat(2, 1, 3)), (randn(2, 3),)),
    case("repeat_bool", Fn(lambda x: x.repeat(3, 2)), (torch.tensor([[True, False, True], [False, False, True]]),)),
    case("flip_f32", Fn(lambda x: x.flip(0, 2)), (randn(2, 3, 4),)),
    case("flip_i16_neg", Fn(lambda x: x.flip(-1)), (ints(torch.int16, 3, 5),)),
]
