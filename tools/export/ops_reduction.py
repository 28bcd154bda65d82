"""Single-operator programs for the reduction family (sum, mean, amax/amin,
argmax/argmin, max/min.dim, var, cumsum, softmax/log_softmax, normalization,
pooling). See ops.py for the driver and the rule format."""

import numpy as np
import torch

from ops import Fn, case

torch.manual_seed(11)


def randn(*shape):
    return torch.randn(*shape)


def with_edges(t):
    """`t` with NaN, ±inf and ±0 planted at fixed flat positions."""
    t = t.clone()
    flat = t.view(-1)
    for i, v in zip((3, 7, 8, 12, 13), (float("nan"), float("inf"), -float("inf"), 0.0, -0.0)):
        if i < flat.numel():
            flat[i] = v
    return t


def ties(*shape):
    """Small integers as floats: many ties, plus a ±0 pair."""
    t = torch.randint(-3, 4, shape).float()
    flat = t.view(-1)
    flat[0], flat[1] = -0.0, 0.0
    return t


X = randn(2, 3, 4, 5)
SUM_WHY = (
    "the pip runtime registers kernels/optimized sum.IntList (vectorized partial sums, measured 18 ulp "
    "from the sequential sum over 1000-element rows); etch follows the portable sequential order "
    "(equal bit for bit to a sequential f32 model)"
)
LOG_SOFTMAX_WHY = (
    "the pip runtime registers kernels/optimized _log_softmax (ATen's vectorized kernel: 8-lane partial exp sums, "
    "then x - (max + log(sum)) where portable computes (x - max) - log(sum); the association costs up to an ulp of "
    "max + log(sum), which is many ulp of an output near 0: measured 62); etch follows the portable order "
    "(equal bit for bit to a model calling glibc expf/logf)"
)

CASES = [
    # ---- sum
    # The pip runtime's sum.IntList is kernels/optimized; on short rows its
    # result equals the portable sequential sum (measured), on long rows not.
    case("sum_f32_lastdim", Fn(lambda x: x.sum(-1)), (X,)),
    case("sum_f32_long_rows", Fn(lambda x: x.sum(-1)), (randn(4, 1000),), rule={"ulp": 24}, why=SUM_WHY),
    case("sum_f32_dims_keepdim", Fn(lambda x: x.sum((0, 2), keepdim=True)), (X,)),
    case("sum_f32_all", Fn(lambda x: x.sum()), (X,)),
    case("sum_f32_dim1", Fn(lambda x: x.sum(1)), (X,)),
    case("sum_i8_to_i64", Fn(lambda x: x.sum(1)), (torch.randint(-128, 128, (3, 50, 2), dtype=torch.int8),)),
    case("sum_i32_all", Fn(lambda x: x.sum()), (torch.randint(-(2**31), 2**31 - 1, (4, 6), dtype=torch.int32),)),
    # ---- mean
    case("mean_f32_hw_keepdim", Fn(lambda x: x.mean((-1, -2), keepdim=True)), (X,)),
    case("mean_f32_dim1", Fn(lambda x: x.mean(1)), (X,)),
    case("mean_f32_lastdim", Fn(lambda x: x.mean(-1)), (X,)),
    case("mean_f32_all", Fn(lambda x: x.mean()), (X,)),
    case("mean_f32_edges", Fn(lambda x: x.mean(0)), (with_edges(randn(2, 8)),)),
    # ---- amax / amin
    case("amax_f32_dims", Fn(lambda x: torch.amax(x, (1, 3))), (with_edges(X),)),
    case("amax_f32_lastdim_keepdim", Fn(lambda x: torch.amax(x, -1, keepdim=True)), (with_edges(randn(4, 5)),)),
    case("amin_f32_dim0", Fn(lambda x: torch.amin(x, 0)), (with_edges(randn(4, 5)),)),
    case("amax_f32_ties", Fn(lambda x: torch.amax(x, 1)), (ties(3, 6),)),
    case("amin_f32_ties", Fn(lambda x: torch.amin(x, 1)), (ties(3, 6),)),
    case("amax_i32", Fn(lambda x: torch.amax(x, 1)), (torch.randint(-100, 100, (3, 7), dtype=torch.int32),)),
    # ---- argmax / argmin
    case("argmax_f32_all", Fn(lambda x: torch.argmax(x)), (X,)),
    case("argmax_f32_dim_keepdim", Fn(lambda x: torch.argmax(x, -1, keepdim=True)), (with_edges(randn(4, 5)),)),
    case("argmin_f32_dim1", Fn(lambda x: torch.argmin(x, 1)), (with_edges(X),)),
    case("argmax_f32_ties", Fn(lambda x: torch.argmax(x, 1)), (ties(4, 6),)),
    case("argmin_f32_ties", Fn(lambda x: torch.argmin(x, 0)), (ties(4, 6),)),
    case("argmax_i64", Fn(lambda x: torch.argmax(x, 0)), (torch.randint(-5, 5, (6, 3), dtype=torch.int64),)),
    # ---- max.dim / min.dim
    case("max_dim_f32", Fn(lambda x: tuple(torch.max(x, 1))), (with_edges(randn(3, 5, 2)),)),
    case("min_dim_f32_keepdim", Fn(lambda x: tuple(torch.min(x, -1, keepdim=True))), (ties(4, 6),)),
    case("max_dim_i8", Fn(lambda x: tuple(torch.max(x, 0))), (torch.randint(-128, 128, (5, 4), dtype=torch.int8),)),
    # ---- var
    case("var_f32_dim", Fn(lambda x: x.var(1)), (X,)),
    case("var_f32_all_biased", Fn(lambda x: x.var(unbiased=False)), (X,)),
    case("var_f32_dims_keepdim", Fn(lambda x: torch.var(x, (2, 3), correction=0, keepdim=True)), (X,)),
    # ---- cumsum
    case("cumsum_f32_dim1", Fn(lambda x: torch.cumsum(x, 1)), (X,)),
    case("cumsum_f32_lastdim", Fn(lambda x: torch.cumsum(x, -1)), (with_edges(randn(3, 6)),)),
    case("cumsum_i32_to_i64", Fn(lambda x: torch.cumsum(x, 0)), (torch.randint(-(2**31), 2**31 - 1, (5, 3), dtype=torch.int32),)),
    # ---- softmax / log_softmax
    case("softmax_f32_dim1", Fn(lambda x: torch.softmax(x, 1)), (X,)),
    case("softmax_f32_lastdim", Fn(lambda x: torch.softmax(x, -1)), (randn(3, 10) * 8,)),
    case("softmax_f32_inf", Fn(lambda x: torch.softmax(x, 0)), (torch.tensor([[0.0, -float("inf"), 1.0], [-float("inf"), -float("inf"), 2.0]]),)),
    # kernels/optimized _log_softmax in the pip runtime (see LOG_SOFTMAX_WHY).
    case("log_softmax_f32_lastdim", Fn(lambda x: torch.log_softmax(x, -1)), (randn(3, 10) * 8,), rule={"ulp": 64}, why=LOG_SOFTMAX_WHY),
    case("log_softmax_f32_long_rows", Fn(lambda x: torch.log_softmax(x, -1)), (randn(2, 1000) * 4,), rule={"ulp": 64}, why=LOG_SOFTMAX_WHY),
    case("log_softmax_f32_dim1", Fn(lambda x: torch.log_softmax(x, 1)), (X,), rule={"ulp": 64}, why=LOG_SOFTMAX_WHY),
]

# ---- normalization (eval mode)


def bn(channels, affine=True, dims=2):
    m = (torch.nn.BatchNorm2d if dims == 2 else torch.nn.BatchNorm1d)(channels, affine=affine)
    with torch.no_grad():
        m.running_mean.copy_(torch.randn(channels))
        m.running_var.copy_(torch.rand(channels) + 0.1)
        if affine:
            m.weight.copy_(torch.randn(channels))
            m.bias.copy_(torch.randn(channels))
    return m


def ln(shape, affine=True):
    m = torch.nn.LayerNorm(shape, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            m.weight.copy_(torch.randn(shape))
            m.bias.copy_(torch.randn(shape))
    return m


def gn(groups, channels, affine=True):
    m = torch.nn.GroupNorm(groups, channels, affine=affine)
    if affine:
        with torch.no_grad():
            m.weight.copy_(torch.randn(channels))
            m.bias.copy_(torch.randn(channels))
    return m


# The pip runtime registers kernels/optimized native_layer_norm: rows of fewer
# than 256 normalized elements go to the portable layer_norm_scalar (exact).
LAYER_NORM_WHY = (
    "rows of >= 256 elements: the pip runtime's kernels/optimized native_layer_norm computes ATen RowwiseMoments "
    "(vectorized Welford) and y = x*(rstd*w) + (b - mean*rstd*w); etch follows the portable layer_norm_scalar "
    "(E[x^2]-E[x]^2, (x-mean)/std*w+b; equal bit for bit to a sequential f32 model); outputs near 0 after +b "
    "make the ulp distance large: measured 768"
)

CASES += [
    case("batch_norm_f32", bn(3), (with_edges(randn(2, 3, 4, 5)),)),
    case("batch_norm_f32_no_affine", bn(4, affine=False), (randn(2, 4, 3, 3),)),
    case("batch_norm1d_f32", bn(5, dims=1), (randn(3, 5, 7),)),
    case("batch_norm1d_f32_2d_input", bn(6, dims=1), (randn(4, 6),)),
    case("layer_norm_f32", ln(8), (randn(3, 5, 8),)),
    case("layer_norm_f32_2d_shape", ln((4, 6)), (randn(2, 4, 6) * 3 + 1,)),
    case("layer_norm_f32_no_affine", ln(16, affine=False), (randn(4, 16),)),
    case("layer_norm_f32_long_rows", ln(256), (randn(3, 256),), rule={"ulp": 1024}, why=LAYER_NORM_WHY),
    case("group_norm_f32", gn(2, 6), (randn(2, 6, 3, 4),)),
    case("group_norm_f32_no_affine", gn(3, 6, affine=False), (randn(2, 6, 5),)),
    case("group_norm_f32_one_group", gn(1, 4), (randn(1, 4, 2, 2) * 5,)),
]

# ---- any (Bool output)
CASES += [
    case("any_f32_dim", Fn(lambda x: torch.any(x, 1)), (with_edges(torch.zeros(3, 5)),)),
    case("any_bool_dims_keepdim", Fn(lambda x: torch.any(x, (0, 2), keepdim=True)), (torch.rand(3, 4, 2) > 0.8,)),
    case("any_i32_all", Fn(lambda x: torch.any(x)), (torch.tensor([[0, 0], [0, 3]], dtype=torch.int32),)),
    case("any_bool_all_false", Fn(lambda x: torch.any(x, -1)), (torch.zeros(2, 3, dtype=torch.bool),)),
]

# ---- pooling
CASES += [
    case("adaptive_avg_pool2d_f32_7to3", torch.nn.AdaptiveAvgPool2d((3, 3)), (randn(1, 2, 7, 7),)),
    case("adaptive_avg_pool2d_f32_5x6to2x4", torch.nn.AdaptiveAvgPool2d((2, 4)), (randn(2, 3, 5, 6),)),
    case("adaptive_avg_pool2d_f32_3d", torch.nn.AdaptiveAvgPool2d((4, 3)), (randn(3, 9, 5),)),
]

# ---- mm: the pip runtime registers kernels/optimized mm (a BLAS sgemm), so the
# reference is a model of portable's op_mm.cpp (vec_matmul): per output one f32
# accumulator from 0, k ascending, product rounded to f32 before each add.


def mm_model(a, b):
    out = np.zeros((a.shape[0], b.shape[1]), dtype=np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = np.float32(0)
            for k in range(a.shape[1]):
                acc = np.float32(acc + np.float32(a[i, k] * b[k, j]))
            out[i, j] = acc
    return [out]


CASES += [
    case("mm_f32", Fn(lambda a, b: torch.mm(a, b)), (randn(3, 5), randn(5, 4)),
         reference=(mm_model, "the pip runtime runs kernels/optimized mm (sgemm)")),
]
