"""Single-operator cases for the shape / data-movement / indexing / resampling
family (rust/etch-kernels/src/ops/shape/, index/, fill/, upsample/ and
dtype/convert.rs). Driven by ops.py; see its docstring.

Copies are exact by construction. Some operators never survive `to_edge` as
themselves (torch.stack -> cat + view_copy, transpose/t -> permute_copy,
torch.roll -> arange/fmod/index_select, pixel_shuffle -> view/permute, ...):
those are called here as `torch.ops.aten.<op>` where the edge dialect keeps
them, and otherwise covered by the Rust unit tests only.
"""

import torch
import torch.nn.functional as F

from ops import Fn, case

A = torch.ops.aten
torch.manual_seed(11)


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


class Embed(torch.nn.Module):
    def __init__(self, rows, width, dtype=torch.float32):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(rows, width).to(dtype), requires_grad=False)

    def forward(self, idx):
        return F.embedding(idx, self.weight)


def idx(*values, dtype=torch.int64):
    return torch.tensor(values, dtype=dtype)


CASES += [
    # constant_pad_nd: pairs from the last dim backwards; Int/Double values cast with the overflow check.
    case("constant_pad_nd_f32", Fn(lambda x: F.pad(x, (1, 2, 0, 1), value=1.5)), (randn(1, 2, 3, 4),)),
    case("constant_pad_nd_f32_int_value", Fn(lambda x: F.pad(x, (2, 0), value=-3)), (randn(2, 3),)),
    case("constant_pad_nd_i8_trunc", Fn(lambda x: F.pad(x, (0, 1, 1, 1, 1, 0), value=-7.9)), (ints(torch.int8, 2, 2, 2),)),
    case("constant_pad_nd_u8_3d", Fn(lambda x: F.pad(x, (1, 1), value=255)), (ints(torch.uint8, 2, 3, lo=0, hi=255),)),
    # full_like / arange
    case("full_like_f32", Fn(lambda x: torch.full_like(x, -2.25)), (randn(2, 3),)),
    case("full_like_i32", Fn(lambda x: torch.full_like(x, 7)), (ints(torch.int32, 3, 2),)),
    case("full_like_bool", Fn(lambda x: torch.full_like(x, True)), (torch.tensor([True, False, False]),)),
    case("arange_f32", Fn(lambda x: torch.arange(0.5, 3.1, 0.3, dtype=torch.float32) + x), (randn(9),)),
    case("arange_i64", Fn(lambda x: (torch.arange(-3, 10, 4), x.clone())), (ints(torch.int64, 4),)),
    # index_select / gather / embedding / index.Tensor
    case("index_select_f32", Fn(lambda x, i: torch.index_select(x, 1, i)), (randn(2, 3, 4), idx(2, 0, 2, 1))),
    case("index_select_u8_i32_idx", Fn(lambda x, i: torch.index_select(x, -1, i)), (ints(torch.uint8, 3, 5, lo=0, hi=255), idx(4, 4, 0, dtype=torch.int32))),
    case("gather_f32", Fn(lambda x, i: torch.gather(x, 1, i)), (randn(2, 3), idx([0, 2], [1, 1]))),
    case("gather_i64_dim0", Fn(lambda x, i: torch.gather(x, 0, i)), (ints(torch.int64, 3, 4), idx([2, 1, 0, 2], [0, 0, 1, 1]))),
    case("embedding_f32", Embed(5, 3), (idx([1, 0], [4, 4]),)),
    case("embedding_f32_i32_idx", Embed(4, 6), (idx(3, 0, 2, dtype=torch.int32),)),
    case("index_tensor_1d", Fn(lambda x, i: x[i]), (randn(4, 3), idx(3, 0, -1))),
    case("index_tensor_adjacent", Fn(lambda x, i, j: x[:, i, j]), (randn(2, 4, 3), idx(3, 0), idx([1], [2]))),
    case("index_tensor_apart_i32", Fn(lambda x, i, j: x[i, :, j]), (ints(torch.int32, 3, 2, 4), idx(2, 0, 1), idx(-1, 3, 0))),
]

CASES += [
    case("scalar_tensor_f32", Fn(lambda x: (A.scalar_tensor(-2.5), x.clone())), (randn(2),)),
    case("scalar_tensor_i32", Fn(lambda x: (A.scalar_tensor(7, dtype=torch.int32), x.clone())), (randn(2),)),
]

CASES += [
    # upsample_nearest2d: scale form, size form (scale 1/(out/in) in f64 then f32), channels-last.
    case("upsample_nearest2d_scale_f32", Fn(lambda x: F.interpolate(x, scale_factor=2, mode="nearest")), (randn(1, 2, 3, 4),)),
    case("upsample_nearest2d_size_f32", Fn(lambda x: F.interpolate(x, size=(5, 7), mode="nearest")), (randn(1, 2, 3, 4),)),
    case("upsample_nearest2d_frac_i8", Fn(lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="nearest")), (ints(torch.int8, 2, 1, 3, 5),)),
    case("upsample_nearest2d_cl_f32", Fn(lambda x: F.interpolate(x, scale_factor=3, mode="nearest")), (cl(randn(1, 3, 2, 2)),)),
    # upsample_bilinear2d: half-pixel (scale, size, fractional scales, downscale) and align_corners,
    # channels-last, an integer dtype (loads as float, truncates on store).
    case("upsample_bilinear2d_scale_f32", Fn(lambda x: F.interpolate(x, scale_factor=2, mode="bilinear")), (randn(1, 2, 3, 4),)),
    case("upsample_bilinear2d_size_f32", Fn(lambda x: F.interpolate(x, size=(5, 7), mode="bilinear")), (randn(1, 2, 3, 4),)),
    case("upsample_bilinear2d_frac_f32", Fn(lambda x: F.interpolate(x, scale_factor=(1.7, 0.6), mode="bilinear")), (randn(2, 1, 3, 5),)),
    case("upsample_bilinear2d_down_f32", Fn(lambda x: F.interpolate(x, size=(3, 2), mode="bilinear")), (randn(1, 2, 7, 5),)),
    case("upsample_bilinear2d_align_f32", Fn(lambda x: F.interpolate(x, size=(5, 9), mode="bilinear", align_corners=True)), (randn(1, 2, 3, 4),)),
    case("upsample_bilinear2d_align_scale_f32", Fn(lambda x: F.interpolate(x, scale_factor=2.5, mode="bilinear", align_corners=True)), (randn(1, 1, 3, 4),)),
    case("upsample_bilinear2d_cl_f32", Fn(lambda x: F.interpolate(x, scale_factor=3, mode="bilinear")), (cl(randn(1, 3, 2, 2)),)),
    case("upsample_bilinear2d_u8", Fn(lambda x: F.interpolate(x, size=(6, 5), mode="bilinear")), (ints(torch.uint8, 1, 2, 3, 4, lo=0, hi=256),)),
]

# Operators `to_edge` decomposes (stack -> cat + view_copy, transpose/t ->
# permute_copy, roll -> arange/fmod/index_select, pixel_(un)shuffle ->
# view/permute) kept by EdgeCompileConfig.preserve_ops, and clone kept as
# aten::clone (not dim_order_ops::_clone_dim_order) by _skip_dim_order.
CASES += [
    case("stack_f32", Fn(lambda a, b: torch.stack([a, b], 1)), (randn(2, 3), randn(2, 3)), preserve=[A.stack.default]),
    case("stack_i64_neg_dim", Fn(lambda a, b, c: torch.stack([a, b, c], -1)), (ints(torch.int64, 2, 2), ints(torch.int64, 2, 2), ints(torch.int64, 2, 2)), preserve=[A.stack.default]),
    case("transpose_copy_f32", Fn(lambda x: A.transpose_copy.int(x, 0, 2)), (randn(2, 3, 4),), preserve=[A.transpose_copy.int]),
    case("transpose_copy_i8_neg", Fn(lambda x: A.transpose_copy.int(x, -1, 1)), (ints(torch.int8, 2, 3, 4),), preserve=[A.transpose_copy.int]),
    case("t_copy_f32", Fn(lambda x: A.t_copy(x)), (randn(2, 3),), preserve=[A.t_copy.default]),
    case("roll_f32", Fn(lambda x: torch.roll(x, (1, -2), (0, 1))), (randn(4, 3),), preserve=[A.roll.default]),
    case("roll_i32_wrap", Fn(lambda x: torch.roll(x, -7, 1)), (ints(torch.int32, 2, 3),), preserve=[A.roll.default]),
    case("pixel_shuffle_f32", Fn(lambda x: F.pixel_shuffle(x, 2)), (randn(1, 8, 2, 3),), preserve=[A.pixel_shuffle.default]),
    case("pixel_unshuffle_f32", Fn(lambda x: F.pixel_unshuffle(x, 2)), (randn(2, 2, 4, 6),), preserve=[A.pixel_unshuffle.default]),
    case("clone_f32", Fn(lambda x: A.clone(x)), (randn(2, 3),), skip_dim_order=True),
]
