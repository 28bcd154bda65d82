"""Element-wise kernels (unary, binary, comparisons, logical, where): single-
operator programs for tools/export/ops.py.

Inputs carry the edge values each op's ExecuTorch arithmetic cares about
(NaN, ±0, ±inf, halves, negative divisors, integer wrap), broadcasting, a
channels-last dim order, and the integer and bool dtypes. Rules: "exact"
unless the case says why not (a libm function whose musl port differs from
glibc's, measured over every f32 by the kernels' libm test).
"""

import ctypes
import math

import numpy as np
import torch

from ops import Fn, case

torch.manual_seed(11)

aten = torch.ops.aten

F32_EDGES = [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 3.0, 1e-30, -1e30]


def f32(*shape, scale=3.0, edges=True):
    """Seeded f32 values with the edge values in front."""
    x = torch.randn(*shape) * scale
    if edges:
        flat = x.view(-1)
        n = min(len(F32_EDGES), flat.numel())
        flat[:n] = torch.tensor(F32_EDGES[:n])
    return x


def ints(*shape, dtype=torch.int32, lo=-20, hi=20):
    return torch.randint(lo, hi, shape, dtype=dtype)


# Python models of the portable kernels the pip runtime replaces with
# kernels/optimized ones (shared/reference/executorch-portable-kernels.md §0).
_glibc = ctypes.CDLL("libm.so.6")
_glibc.tanhf.restype = ctypes.c_float
_glibc.tanhf.argtypes = [ctypes.c_float]
OPTIMIZED = "the pip runtime runs kernels/optimized "


def gelu_model(x, tanh=False):
    """op_gelu.cpp: f64 erf (none), or f32 inner + glibc tanhf + f64 product (tanh)."""
    beta, kappa = np.float32(math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5), np.float32(0.044715)
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        if v == -np.inf:
            out[i] = 0.0
        elif v == np.inf:
            out[i] = np.inf
        elif tanh:
            inner = beta * (v + kappa * (v * v * v))
            out[i] = np.float32(0.5 * float(v) * (1.0 + float(_glibc.tanhf(float(inner)))))
        else:
            out[i] = np.float32(0.5 * float(v) * (1 + math.erf(float(v) * 0.7071067811865476)))
    return [out]


def relu6_of_x_plus_3(x):
    """add(x, 3), clamp(min=0), clamp(max=6) in f32 (NaN propagates)."""
    return np.minimum(np.maximum(x + np.float32(3), np.float32(0)), np.float32(6))


def hardsigmoid_model(x):
    """... then true division by 6."""
    return relu6_of_x_plus_3(x) / np.float32(6)


def hardswish_model(x):
    """mul(x, ...) then true division by 6."""
    with np.errstate(invalid="ignore"):
        return (x * relu6_of_x_plus_3(x)) / np.float32(6)


def positive(*shape):
    return torch.rand(*shape) * 10 + 1e-3


# libm functions whose Rust `libm` (musl) results differ from glibc's for
# some f32 inputs; the bound is the largest difference over all f32 inputs.
# (tanhf, expm1f, logf, log2f, log1pf, erff, expf and powf are glibc's own algorithms in
# etch-kernels, equal to glibc for every f32: exact.)
ULP = {
    "sin": 1,
    "cos": 1,
}


def libm_rule(name):
    if name in ULP:
        return {"ulp": ULP[name]}, f"{name}f: Rust libm (musl port) vs glibc differ by up to {ULP[name]} ulp"
    return "exact", ""


def unary_case(name, fn, x, fname=None):
    rule, why = libm_rule(fname or "")
    return case(name, Fn(fn), (x,), rule=rule, why=why)


CASES = [
    # --- unary, float math (unary_ufunc_realhbbf16_to_floathbf16) ---
    unary_case("tanh_f32", torch.tanh, f32(4, 8)),
    unary_case("tanh_i32", torch.tanh, ints(2, 5)),
    unary_case("exp_f32", torch.exp, f32(4, 8)),
    unary_case("log_f32", torch.log, f32(4, 8)),
    unary_case("log2_f32", torch.log2, positive(4, 8)),
    unary_case("log1p_f32", torch.log1p, f32(4, 8, scale=0.5)),
    unary_case("expm1_f32", torch.expm1, f32(4, 8, scale=0.5)),
    unary_case("sqrt_f32", torch.sqrt, f32(4, 8)),
    unary_case("sqrt_i64", torch.sqrt, ints(3, 4, dtype=torch.int64, lo=0, hi=1000)),
    unary_case("rsqrt_f32", torch.rsqrt, f32(4, 8)),
    unary_case("reciprocal_f32", torch.reciprocal, f32(4, 8)),
    unary_case("erf_f32", torch.erf, f32(4, 8)),
    unary_case("sin_f32", torch.sin, f32(4, 8), "sin"),
    unary_case("cos_f32", torch.cos, f32(4, 8), "cos"),
    unary_case("sigmoid_i64", torch.sigmoid, ints(2, 6, dtype=torch.int64)),
    unary_case("isnan_f32", torch.isnan, f32(2, 6)),
    unary_case("isinf_f32", torch.isinf, f32(2, 6)),
    # --- unary, same dtype ---
    unary_case("abs_f32", torch.abs, f32(3, 5)),
    unary_case("abs_i8", torch.abs, torch.tensor([-128, -5, 0, 7, 127], dtype=torch.int8)),
    unary_case("neg_f32", torch.neg, f32(3, 5)),
    unary_case("neg_i64", torch.neg, ints(3, 5, dtype=torch.int64)),
    unary_case("sign_f32", torch.sign, f32(3, 5)),
    unary_case("sign_i32", torch.sign, ints(3, 5)),
    unary_case("floor_f32", torch.floor, f32(3, 5)),
    unary_case("ceil_f32", torch.ceil, f32(3, 5)),
    unary_case("trunc_f32", torch.trunc, f32(3, 5)),
    unary_case("round_f32", torch.round, torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 2.6, -7.5, 1e8 + 1, float("nan"), float("inf"), -0.0])),
    unary_case("relu_f32", torch.relu, f32(3, 5)),
    unary_case("relu_i32", torch.relu, ints(3, 5)),
    unary_case("relu6_f32", torch.nn.functional.relu6, f32(3, 5, scale=5.0)),
    unary_case("hardtanh_i64", lambda x: torch.nn.functional.hardtanh(x, -3, 4), ints(3, 5, dtype=torch.int64)),
    unary_case("clamp_f32", lambda x: torch.clamp(x, -1.25, 2), f32(3, 5)),
    unary_case("clamp_min_i32", lambda x: torch.clamp(x, min=-2), ints(3, 5)),
    unary_case("clamp_i8_to_f32", lambda x: torch.clamp(x, max=2.5), ints(3, 5, dtype=torch.int8)),
    unary_case("leaky_relu_f32", lambda x: torch.nn.functional.leaky_relu(x, 0.2), f32(3, 5)),
    unary_case("elu_f32", lambda x: torch.nn.functional.elu(x, 0.7), f32(3, 5)),
    case("gelu_f32", Fn(torch.nn.functional.gelu), (f32(4, 8),), reference=(gelu_model, OPTIMIZED + "gelu (f32 vectorized erf; NaN at -inf)")),
    case("gelu_tanh_f32", Fn(lambda x: torch.nn.functional.gelu(x, approximate="tanh")), (f32(4, 8),),
         reference=(lambda x: gelu_model(x, tanh=True), OPTIMIZED + "gelu (vectorized tanh)")),
    case("hardswish_f32", Fn(torch.nn.functional.hardswish), (f32(4, 8),),
         reference=(lambda x: [hardswish_model(x)], OPTIMIZED + "div.Tensor by a one-element tensor as a multiplication by its reciprocal")),
    case("hardsigmoid_f32", Fn(torch.nn.functional.hardsigmoid), (f32(4, 8),),
         reference=(lambda x: [hardsigmoid_model(x)], OPTIMIZED + "div.Tensor by a one-element tensor as a multiplication by its reciprocal")),
    unary_case("silu_f32", torch.nn.functional.silu, f32(4, 8)),
    unary_case("logical_not_f32", torch.logical_not, f32(2, 6)),
    unary_case("logical_not_bool", torch.logical_not, torch.rand(2, 6) > 0.5),
    # bitwise_not: `~x` of integers, `~mask` of Bool (fixed values: no seeded draws).
    unary_case("bitwise_not_i32", torch.bitwise_not, torch.tensor([[0, -1, 1, 2**31 - 1], [-2**31, 12345, -256, 255]], dtype=torch.int32)),
    unary_case("bitwise_not_u8", torch.bitwise_not, torch.tensor([0, 1, 127, 128, 254, 255], dtype=torch.uint8)),
    unary_case("bitwise_not_i64", torch.bitwise_not, torch.tensor([0, -1, -2**63, 2**63 - 1, 42], dtype=torch.int64)),
    unary_case("bitwise_not_bool", lambda m: ~m, torch.tensor([[True, False, True], [False, False, True]])),
    unary_case("tanh_channels_last", torch.tanh, f32(1, 3, 2, 4).to(memory_format=torch.channels_last)),
    # --- binary arithmetic ---
    case("add_f32_broadcast", Fn(lambda a, b: a + b), (f32(2, 3, 4), f32(3, 1, edges=False))),
    case("add_i32_alpha", Fn(lambda a, b: torch.add(a, b, alpha=3)), (ints(2, 5), ints(1, 5))),
    case("add_u8_i8", Fn(lambda a, b: a + b), (ints(2, 4, dtype=torch.uint8, lo=0, hi=255), ints(2, 4, dtype=torch.int8, lo=-128, hi=127))),
    case("add_i32_f32", Fn(lambda a, b: a + b), (ints(2, 4), f32(2, 4))),
    case("add_bool", Fn(lambda a, b: a + b), (torch.rand(2, 4) > 0.5, torch.rand(2, 4) > 0.5)),
    case("add_scalar_i64", Fn(lambda a: aten.add.Scalar(a, 5, 2)), (ints(2, 4, dtype=torch.int64),)),
    case("add_channels_last", Fn(lambda a, b: a + b), (f32(1, 3, 2, 2).to(memory_format=torch.channels_last), f32(1, 3, 2, 2, edges=False).to(memory_format=torch.channels_last))),
    case("sub_f32_alpha", Fn(lambda a, b: torch.sub(a, b, alpha=0.5)), (f32(3, 4), f32(3, 4, edges=False))),
    case("sub_i64", Fn(lambda a, b: a - b), (ints(3, 4, dtype=torch.int64), ints(4, dtype=torch.int64))),
    case("rsub_f32", Fn(lambda a: 1.0 - a), (f32(3, 4),)),
    case("rsub_scalar_i32", Fn(lambda a: aten.rsub.Scalar(a, 7, 2)), (ints(3, 4),)),
    case("sub_scalar_f32", Fn(lambda a: aten.sub.Scalar(a, 0.25)), (f32(3, 4),)),
    case("mul_f32", Fn(lambda a, b: a * b), (f32(3, 4), f32(3, 4, edges=False))),
    case("mul_i8_wrap", Fn(lambda a, b: a * b), (ints(3, 4, dtype=torch.int8, lo=-128, hi=127), ints(3, 4, dtype=torch.int8, lo=-128, hi=127))),
    case("mul_bool", Fn(lambda a, b: a * b), (torch.rand(3, 4) > 0.5, torch.rand(3, 4) > 0.5)),
    case("mul_scalar_i64_f32", Fn(lambda a: aten.mul.Scalar(a, 0.5)), (ints(3, 4, dtype=torch.int64),)),
    case("div_f32", Fn(lambda a, b: a / b), (f32(3, 4), torch.cat([torch.tensor([0.0, -0.0, 3.0]), f32(9, edges=False)]).view(3, 4))),
    case("div_i32", Fn(lambda a, b: a / b), (ints(3, 4), ints(3, 4, lo=1, hi=9))),
    case("div_trunc_f32", Fn(lambda a, b: torch.div(a, b, rounding_mode="trunc")), (f32(3, 4), f32(3, 4, edges=False))),
    case("div_floor_f32", Fn(lambda a, b: torch.div(a, b, rounding_mode="floor")), (f32(3, 4), torch.cat([torch.tensor([0.0, -0.0, 0.0, -3.0]), f32(8, edges=False)]).view(3, 4))),
    case("div_floor_i32", Fn(lambda a, b: torch.div(a, b, rounding_mode="floor")), (ints(3, 4), ints(4, lo=1, hi=5) * torch.tensor([1, -1, 1, -1], dtype=torch.int32))),
    case("div_trunc_i64", Fn(lambda a, b: torch.div(a, b, rounding_mode="trunc")), (ints(3, 4, dtype=torch.int64), ints(4, dtype=torch.int64, lo=1, hi=5) * -1)),
    case("div_scalar_f32", Fn(lambda a: aten.div.Scalar(a, 3.0)), (f32(3, 4),),
         reference=(lambda a: [a / np.float32(3.0)], OPTIMIZED + "div.Scalar as a multiplication by 1/b")),
    case("div_scalar_floor_i32", Fn(lambda a: aten.div.Scalar_mode(a, -3, rounding_mode="floor")), (ints(3, 4),)),
    case("minimum_f32", Fn(torch.minimum), (f32(3, 4), f32(3, 4, edges=False).flip(0))),
    case("maximum_i32_f32", Fn(torch.maximum), (ints(3, 4), f32(4, edges=False))),
    case("pow_f32", Fn(torch.pow), (positive(3, 4), f32(3, 4, scale=2.0, edges=False))),
    case("pow_f32_square", Fn(lambda a: a**2), (f32(3, 4),)),
    case("pow_i32_scalar", Fn(lambda a: a**3), (ints(3, 4),)),
    case("pow_scalar_base", Fn(lambda b: torch.pow(2.0, b)), (f32(3, 4, edges=False),)),
    case("remainder_f32", Fn(torch.remainder), (f32(3, 4), torch.tensor([2.0, -2.0, 1.5, -1.5]))),
    case("remainder_i32", Fn(torch.remainder), (ints(3, 4), torch.tensor([3, -3, 5, -7], dtype=torch.int32))),
    case("remainder_scalar_f32", Fn(lambda a: aten.remainder.Scalar(a, -1.5)), (f32(3, 4),)),
    case("fmod_f32", Fn(torch.fmod), (f32(3, 4), torch.tensor([2.0, -2.0, 1.5, -1.5]))),
    case("fmod_i64", Fn(torch.fmod), (ints(3, 4, dtype=torch.int64), torch.tensor([3, -3, 5, -7]))),
    # --- where ---
    case("where_f32", Fn(torch.where), (torch.rand(3, 4) > 0.5, f32(3, 4), f32(4, edges=False))),
    case("where_i64_scalar", Fn(lambda c, a: torch.where(c, a, 0)), (torch.rand(3, 1) > 0.5, ints(3, 4, dtype=torch.int64))),
    # --- comparisons ---
    case("eq_f32", Fn(torch.eq), (f32(3, 4), f32(3, 4).flip(1))),
    case("ne_f32", Fn(torch.ne), (f32(3, 4), f32(3, 4).flip(1))),
    case("lt_f32_broadcast", Fn(torch.lt), (f32(3, 4), f32(4, edges=False))),
    case("le_i32", Fn(torch.le), (ints(3, 4), ints(3, 4))),
    case("gt_i64_f32", Fn(torch.gt), (ints(3, 4, dtype=torch.int64), f32(3, 4))),
    case("ge_u8", Fn(torch.ge), (ints(3, 4, dtype=torch.uint8, lo=0, hi=9), ints(3, 4, dtype=torch.uint8, lo=0, hi=9))),
    case("lt_scalar_i64_float", Fn(lambda a: a < 0.5), (ints(3, 4, dtype=torch.int64, lo=-2, hi=3),)),
    case("eq_scalar_f32", Fn(lambda a: a == 0.5), (f32(3, 4),)),
    case("gt_scalar_i32", Fn(lambda a: a > 3), (ints(3, 4),)),
    case("ne_scalar_bool", Fn(lambda a: a != 1), (torch.rand(3, 4) > 0.5,)),
    # --- logical ---
    case("logical_and_bool", Fn(torch.logical_and), (torch.rand(3, 4) > 0.5, torch.rand(3, 4) > 0.5)),
    case("logical_or_f32_i32", Fn(torch.logical_or), (f32(3, 4), ints(3, 4, lo=-1, hi=2))),
    case("logical_xor_bool", Fn(torch.logical_xor), (torch.rand(3, 4) > 0.5, torch.rand(4) > 0.5)),
    # --- _to_dim_order_copy: static_cast between dtypes (in-range float -> int: truncation toward zero) ---
    case("to_f32_i32", Fn(lambda a: a.to(torch.int32)), (torch.tensor([0.0, -0.0, 0.5, -0.5, 2.9, -2.9, 1e9, -1e9]) + f32(8, scale=100.0, edges=False),)),
    case("to_f32_i64", Fn(lambda a: a.to(torch.int64)), (f32(3, 4, scale=1e12, edges=False),)),
    case("to_f32_i8", Fn(lambda a: a.to(torch.int8)), (f32(3, 4, scale=40.0, edges=False).clamp(-128.9, 127.9),)),
    case("to_f32_u8", Fn(lambda a: a.to(torch.uint8)), ((f32(3, 4, scale=80.0, edges=False).abs() + 0.25).clamp(0, 255.9),)),
    case("to_f32_bool", Fn(lambda a: a.to(torch.bool)), (f32(3, 4),)),
    case("to_i32_f32", Fn(lambda a: a.to(torch.float32)), (torch.tensor([16777217, -16777217, 2147483647, -2147483648, 0, 1, -1, 33554435], dtype=torch.int32),)),
    case("to_i64_f32", Fn(lambda a: a.to(torch.float32)), (torch.tensor([2**53 + 1, -(2**62), 2**24 + 1, 0, -3, 9007199254740993, 12345678901, -1], dtype=torch.int64),)),
    case("to_i8_f32", Fn(lambda a: a.to(torch.float32)), (ints(3, 4, dtype=torch.int8, lo=-128, hi=128),)),
    case("to_u8_f32", Fn(lambda a: a.to(torch.float32)), (ints(3, 4, dtype=torch.uint8, lo=0, hi=256),)),
    case("to_bool_f32", Fn(lambda a: a.to(torch.float32)), (torch.rand(3, 4) > 0.5,)),
    case("to_bool_i32", Fn(lambda a: a.to(torch.int32)), (torch.rand(3, 4) > 0.5,)),
    case("to_i64_i8_wrap", Fn(lambda a: a.to(torch.int8)), (torch.tensor([127, 128, 255, 256, -129, -1, 1000, -70000], dtype=torch.int64),)),
    case("to_i32_u8_wrap", Fn(lambda a: a.to(torch.uint8)), (torch.tensor([-1, 255, 256, 511, -256, 7, 100000, -3], dtype=torch.int32),)),
    case("to_i32_bool", Fn(lambda a: a.to(torch.bool)), (ints(3, 4, lo=-2, hi=3),)),
    case("to_u8_i64", Fn(lambda a: a.to(torch.int64)), (ints(3, 4, dtype=torch.uint8, lo=0, hi=256),)),
    case("to_f32_i32_cl", Fn(lambda a: a.to(torch.int32)), (f32(1, 3, 2, 2, scale=50.0, edges=False).contiguous(memory_format=torch.channels_last),)),
    case("to_f32_i8_to_cl", Fn(lambda a: a.to(dtype=torch.int8, memory_format=torch.channels_last)), (f32(1, 3, 2, 2, scale=30.0, edges=False),)),
]

# Operators `to_edge` decomposes unless told to keep them (preserve_ops), and
# Scalar overloads no other case calls. le.Scalar: the pip runtime registers
# kernels/optimized le.Scalar, so its reference is numpy's comparison.
CASES += [
    case("le_scalar_f32", Fn(lambda a: a <= 0.5), (f32(3, 4),),
         reference=(lambda a: [a <= np.float32(0.5)], OPTIMIZED + "le.Scalar")),
    case("ge_scalar_i32", Fn(lambda a: a >= 3), (ints(3, 4),)),
    case("fmod_scalar_f32", Fn(lambda a: torch.fmod(a, 1.5)), (f32(3, 4),)),
    case("fmod_scalar_i32_neg", Fn(lambda a: torch.fmod(a, -3)), (ints(3, 4),)),
    case("rsub_kept_f32", Fn(lambda a: aten.rsub.Scalar(a, 2.0, 3)), (f32(3, 4),), preserve=[aten.rsub.Scalar]),
    case("rsub_kept_i32", Fn(lambda a: aten.rsub.Scalar(a, 7, 2)), (ints(3, 4, lo=-2**30, hi=2**30),), preserve=[aten.rsub.Scalar]),
    case("masked_fill_f32", Fn(lambda a, m: a.masked_fill(m, -1.5)), (f32(3, 4), torch.rand(3, 4) > 0.5), preserve=[aten.masked_fill.Scalar]),
    case("masked_fill_i32_broadcast", Fn(lambda a, m: a.masked_fill(m, 9)), (ints(2, 3, 4), torch.rand(3, 1) > 0.5), preserve=[aten.masked_fill.Scalar]),
]

