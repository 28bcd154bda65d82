//! Element-wise unary `aten::*` kernels: each is a schema line and a scalar
//! function over ExecuTorch's dtype rules, run by `elementwise::map`.
//!
//! Upstream patterns (kernels/portable/cpu/pattern/):
//! - [`float_fn`]: `unary_ufunc_realhbbf16_to_floathbf16` (tanh, exp, log,
//!   ...): any real or bool input loaded as f32, the f32 libm function,
//!   stored to a floating output.
//! - [`via_f32`]: `unary_ufunc_realhbf16` (floor, ceil, trunc): output of the
//!   input's dtype, computed as `T(f(float(x)))`.
//! - [`same_type!`]: kernels switching on the input's own dtype (abs, neg,
//!   relu, hardtanh, ...): the scalar function runs in that type.

// Kernels whose dtypes are all unselected read their arguments and do nothing.
#![cfg_attr(
    not(feature = "all-dtypes"),
    allow(unused_imports, unused_variables, unused_mut, dead_code)
)]

use etch_runtime::context::required;

use etch_runtime::{arg, op, Kernel, KernelContext, Result, ScalarType, TensorView, TensorViewMut};

use super::dtype::{
    checked_scalar, in_range, invalid, is_float, max_override, min_override, opt_scalar_arg,
    promote_with_scalar, scalar_arg, switch_dtype, Arith, Elem, Num,
};
use super::elementwise::map;
use crate::math::expf::expf;
use crate::math::fdlibmf::{erff, log1pf};
use crate::math::logf::{log2f, logf};
use crate::math::tanhf::{expm1f, tanhf};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `unary-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-relu-out")]
    RELU_OUT,
    #[cfg(feature = "op-aten-hardtanh-out")]
    HARDTANH_OUT,
    #[cfg(feature = "op-aten-clamp-out")]
    CLAMP_OUT,
    #[cfg(feature = "op-aten-sigmoid-out")]
    SIGMOID_OUT,
    #[cfg(feature = "op-aten-tanh-out")]
    TANH_OUT,
    #[cfg(feature = "op-aten-exp-out")]
    EXP_OUT,
    #[cfg(feature = "op-aten-expm1-out")]
    EXPM1_OUT,
    #[cfg(feature = "op-aten-log-out")]
    LOG_OUT,
    #[cfg(feature = "op-aten-log1p-out")]
    LOG1P_OUT,
    #[cfg(feature = "op-aten-log2-out")]
    LOG2_OUT,
    #[cfg(feature = "op-aten-sqrt-out")]
    SQRT_OUT,
    #[cfg(feature = "op-aten-rsqrt-out")]
    RSQRT_OUT,
    #[cfg(feature = "op-aten-reciprocal-out")]
    RECIPROCAL_OUT,
    #[cfg(feature = "op-aten-erf-out")]
    ERF_OUT,
    #[cfg(feature = "op-aten-sin-out")]
    SIN_OUT,
    #[cfg(feature = "op-aten-cos-out")]
    COS_OUT,
    #[cfg(feature = "op-aten-floor-out")]
    FLOOR_OUT,
    #[cfg(feature = "op-aten-ceil-out")]
    CEIL_OUT,
    #[cfg(feature = "op-aten-trunc-out")]
    TRUNC_OUT,
    #[cfg(feature = "op-aten-round-out")]
    ROUND_OUT,
    #[cfg(feature = "op-aten-sign-out")]
    SIGN_OUT,
    #[cfg(feature = "op-aten-abs-out")]
    ABS_OUT,
    #[cfg(feature = "op-aten-neg-out")]
    NEG_OUT,
    #[cfg(feature = "op-aten-logical_not-out")]
    LOGICAL_NOT_OUT,
    #[cfg(feature = "op-aten-bitwise_not-out")]
    BITWISE_NOT_OUT,
    #[cfg(feature = "op-aten-isnan-out")]
    ISNAN_OUT,
    #[cfg(feature = "op-aten-isinf-out")]
    ISINF_OUT,
    #[cfg(feature = "op-aten-leaky_relu-out")]
    LEAKY_RELU_OUT,
    #[cfg(feature = "op-aten-elu-out")]
    ELU_OUT,
    #[cfg(feature = "op-aten-gelu-out")]
    GELU_OUT,
];

fn same_shape(x: &TensorView<'_>, out: &TensorViewMut<'_>) -> Result<()> {
    if x.shape.sizes() != out.shape.sizes() {
        return Err(invalid("input and output shapes differ"));
    }
    Ok(())
}

fn same_shape_and_dtype(x: &TensorView<'_>, out: &TensorViewMut<'_>) -> Result<()> {
    same_shape(x, out)?;
    if x.dtype != out.dtype {
        return Err(invalid("input and output dtypes differ"));
    }
    Ok(())
}

/// `unary_ufunc_realhbbf16_to_floathbf16`: `out = OUT(f(float(x)))`, the
/// output any floating dtype. (A Double input would run the f64 function;
/// etch has no Double tensors.)
/// `args`: the positions of `self` and `out`.
fn float_fn(ctx: &mut KernelContext<'_, '_>, args: [usize; 2], f: fn(f32) -> f32) -> Result<()> {
    let [x_arg, out_arg] = args;
    let ([x], [mut out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    same_shape(&x, &out)?;
    if !is_float(out.dtype) {
        return Err(invalid("output must be floating"));
    }
    map::<f32, f32, 1>([&x], &mut out, |[v]| f(v))
}

/// `unary_ufunc_realhbf16`: same shape and dtype (not Bool),
/// `out = T(f(float(x)))`.
/// `args`: the positions of `self` and `out`.
fn via_f32(ctx: &mut KernelContext<'_, '_>, args: [usize; 2], f: fn(f32) -> f32) -> Result<()> {
    let [x_arg, out_arg] = args;
    let ([x], [mut out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    same_shape_and_dtype(&x, &out)?;
    if x.dtype == ScalarType::BOOL {
        return Err(invalid("operator does not take Bool"));
    }
    map::<f32, f32, 1>([&x], &mut out, |[v]| f(v))
}

/// Same shape and dtype in and out; `$make` (evaluated once, with `$T` the
/// element type from the dtype set `$set`) gives the per-element function;
/// `$args`: the positions of `self` and `out`.
macro_rules! same_type {
    ($ctx:expr, $args:expr, $set:ident, $T:ident => $make:expr) => {{
        let [x_arg, out_arg]: [usize; 2] = $args;
        $crate::ops::dynamic::resize_like($ctx, out_arg, x_arg)?;
        #[allow(unused_mut)]
        let ([x], [mut out]) = $ctx.io([x_arg], [out_arg])?;
        let x = required(x, x_arg)?;
        same_shape_and_dtype(&x, &out)?;
        switch_dtype!($set, x.dtype, $T => {
            let f = $make;
            map::<$T, $T, 1>([&x], &mut out, |[v]| f(v))
        })
    }};
}

/// `tanh.out`: `tanhf` (glibc's algorithm, `tanhf.rs`).
pub const TANH_OUT: Kernel = op!(
    "aten::tanh.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), tanhf)
);

/// `exp.out`: `expf` (glibc's algorithm, `expf.rs`).
pub const EXP_OUT: Kernel = op!(
    "aten::exp.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), expf)
);

/// `expm1.out`: `expm1f` (glibc's algorithm, `tanhf.rs`).
pub const EXPM1_OUT: Kernel = op!(
    "aten::expm1.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), expm1f)
);

/// `log.out`: `logf` (glibc's algorithm, `logf.rs`).
pub const LOG_OUT: Kernel = op!(
    "aten::log.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), logf)
);

/// `log1p.out`: `log1pf` (glibc's algorithm, `fdlibmf.rs`).
pub const LOG1P_OUT: Kernel = op!(
    "aten::log1p.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), log1pf)
);

/// `log2.out`: `log2f` (glibc's algorithm, `logf.rs`).
pub const LOG2_OUT: Kernel = op!(
    "aten::log2.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), log2f)
);

/// `sqrt.out`: `sqrtf` (correctly rounded everywhere).
pub const SQRT_OUT: Kernel = op!(
    "aten::sqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), libm::sqrtf)
);

/// `rsqrt.out`: `1.0 / std::sqrt(x)` with a double `1.0`:
/// `float(1.0 / double(sqrtf(x)))`.
pub const RSQRT_OUT: Kernel = op!(
    "aten::rsqrt.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(
        ctx,
        arg!(SCHEMA, [self, out]),
        |x| (1.0 / libm::sqrtf(x) as f64) as f32
    )
);

/// `reciprocal.out`: `float(1.0 / double(x))`.
pub const RECIPROCAL_OUT: Kernel = op!(
    "aten::reciprocal.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), |x| (1.0 / x as f64) as f32)
);

/// `erf.out`: `erff` (glibc's algorithm, `fdlibmf.rs`).
pub const ERF_OUT: Kernel = op!(
    "aten::erf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), erff)
);

/// `sin.out`: `sinf`.
pub const SIN_OUT: Kernel = op!(
    "aten::sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), libm::sinf)
);

/// `cos.out`: `cosf`.
pub const COS_OUT: Kernel = op!(
    "aten::cos.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), libm::cosf)
);

/// `floor.out`: `T(floorf(float(x)))`.
pub const FLOOR_OUT: Kernel = op!(
    "aten::floor.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| via_f32(ctx, arg!(SCHEMA, [self, out]), libm::floorf)
);

/// `ceil.out`: `T(ceilf(float(x)))`.
pub const CEIL_OUT: Kernel = op!(
    "aten::ceil.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| via_f32(ctx, arg!(SCHEMA, [self, out]), libm::ceilf)
);

/// `trunc.out`: `T(truncf(float(x)))`.
pub const TRUNC_OUT: Kernel = op!(
    "aten::trunc.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| via_f32(ctx, arg!(SCHEMA, [self, out]), libm::truncf)
);

/// `round.out`: integers unchanged; floats round half to even as
/// `x - floor(x) == 0.5 ? round(x * 0.5) * 2 : round(x)`.
pub const ROUND_OUT: Kernel = op!(
    "aten::round.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| same_type!(ctx, arg!(SCHEMA, [self, out]), real, T => |v: T| {
        if !T::IS_FLOAT {
            return v;
        }
        let x = v.to_num().to_f32();
        let r = if x - libm::floorf(x) == 0.5 {
            libm::round(x as f64 * 0.5) * 2.0
        } else {
            libm::roundf(x) as f64
        };
        T::from_num(Num::F64(r))
    })
);

/// `sign.out`: Bool copied; NaN kept; else `(x > 0) - (x < 0)`.
pub const SIGN_OUT: Kernel = op!(
    "aten::sign.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| same_type!(ctx, arg!(SCHEMA, [self, out]), realb, T => sign::<T>)
);

fn sign<T: Arith>(v: T) -> T {
    if T::DTYPE == ScalarType::BOOL || v.is_nan() {
        v
    } else {
        T::from_num(Num::Int((v > T::zero()) as i64 - (v < T::zero()) as i64))
    }
}

/// `abs.out`: `x < 0 ? -x : x` (keeps -0.0 and the sign of NaN; integer
/// MIN wraps to itself).
pub const ABS_OUT: Kernel = op!(
    "aten::abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| same_type!(ctx, arg!(SCHEMA, [self, out]), real, T => |v: T| if v < T::zero() { v.neg() } else { v })
);

/// `neg.out`: `-x` (integers wrap).
pub const NEG_OUT: Kernel = op!(
    "aten::neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| same_type!(ctx, arg!(SCHEMA, [self, out]), real, T => |v: T| v.neg())
);

/// `relu.out`: `(isnan(x) || x >= 0) ? x : 0` (so -0.0 stays -0.0).
pub const RELU_OUT: Kernel = op!(
    "aten::relu.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| same_type!(ctx, arg!(SCHEMA, [self, out]), real, T => |v: T| {
        if v.is_nan() || v >= T::zero() {
            v
        } else {
            T::zero()
        }
    })
);

/// `logical_not.out`: `OUT(!bool(x))`, any input and output dtype.
pub const LOGICAL_NOT_OUT: Kernel = op!(
    "aten::logical_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        same_shape(&x, &out)?;
        map::<bool, bool, 1>([&x], &mut out, |[v]| !v)
    }
);

/// `bitwise_not.out`: portable `op_bitwise_not.cpp`: `!x` for Bool, `~x`
/// for the integer dtypes (in 64 bits, stored wrapped: the same bits), one
/// dtype and shape in and out; a floating input is InvalidArgument.
pub const BITWISE_NOT_OUT: Kernel = op!(
    "aten::bitwise_not.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let [x_arg, out_arg] = arg!(SCHEMA, [self, out]);
        crate::ops::dynamic::resize_like(ctx, out_arg, x_arg)?;
        let ([x], [mut out]) = ctx.io([x_arg], [out_arg])?;
        let x = required(x, x_arg)?;
        same_shape_and_dtype(&x, &out)?;
        if x.dtype == ScalarType::BOOL {
            map::<bool, bool, 1>([&x], &mut out, |[v]| !v)
        } else if is_float(x.dtype) {
            Err(invalid("bitwise_not takes integer or Bool tensors"))
        } else {
            map::<i64, i64, 1>([&x], &mut out, |[v]| !v)
        }
    }
);

/// `isnan.out` / `isinf.out`: `unary_ufunc_realhbbf16_to_bool`, Bool output.
/// `args`: the positions of `self` and `out`.
fn to_bool(ctx: &mut KernelContext<'_, '_>, args: [usize; 2], f: fn(f32) -> bool) -> Result<()> {
    let [x_arg, out_arg] = args;
    let ([x], [mut out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    same_shape(&x, &out)?;
    if out.dtype != ScalarType::BOOL {
        return Err(invalid("output must be Bool"));
    }
    map::<f32, bool, 1>([&x], &mut out, |[v]| f(v))
}

pub const ISNAN_OUT: Kernel = op!(
    "aten::isnan.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| to_bool(ctx, arg!(SCHEMA, [self, out]), f32::is_nan)
);

pub const ISINF_OUT: Kernel = op!(
    "aten::isinf.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| to_bool(ctx, arg!(SCHEMA, [self, out]), f32::is_infinite)
);

/// `sigmoid.out`: computes in the input's dtype if floating, else f32:
/// `1 / (1 + expf(-x))`; any floating output.
pub const SIGMOID_OUT: Kernel = op!(
    "aten::sigmoid.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| float_fn(ctx, arg!(SCHEMA, [self, out]), |v| 1.0 / (1.0 + expf(-v)))
);

/// `hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *,
/// Tensor(a!) out)`: `min_override(max_override(x, lo), hi)` in the
/// input's dtype, the bounds overflow-checked casts.
pub const HARDTANH_OUT: Kernel = op!(
    "aten::hardtanh.out(Tensor self, Scalar min_val=-1, Scalar max_val=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (lo, hi) = (scalar_arg(ctx, arg!(SCHEMA, min_val))?, scalar_arg(ctx, arg!(SCHEMA, max_val))?);
        same_type!(ctx, arg!(SCHEMA, [self, out]), real, T => {
            let (lo, hi) = (checked_scalar::<T>(lo)?, checked_scalar::<T>(hi)?);
            move |v: T| min_override(max_override(v, lo), hi)
        })
    }
);

/// `clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *,
/// Tensor(a!) out)`: out's dtype must be the input's promoted with both
/// scalars (weak); each bound must fit it; then `max_override` with min,
/// `min_override` with max, in that dtype.
pub const CLAMP_OUT: Kernel = op!(CLAMP, clamp_out);

const CLAMP: &str = "aten::clamp.out(Tensor self, Scalar? min=None, Scalar? max=None, *, Tensor(a!) out) -> Tensor(a!)";

fn clamp_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = CLAMP;
    let (lo, hi) = (
        opt_scalar_arg(ctx, arg!(S, min))?,
        opt_scalar_arg(ctx, arg!(S, max))?,
    );
    if lo.is_none() && hi.is_none() {
        return Err(invalid("clamp needs min or max"));
    }
    let ([x], [mut out]) = ctx.io(arg!(S, [self]), arg!(S, [out]))?;
    let x = required(x, arg!(S, self))?;
    same_shape(&x, &out)?;
    let mut common = x.dtype;
    for s in [lo, hi].into_iter().flatten() {
        common = promote_with_scalar(common, s);
    }
    if common != out.dtype {
        return Err(invalid("clamp output dtype is not the promoted dtype"));
    }
    switch_dtype!(realb, common, T => {
        // check_bounds: integer outputs take the scalar truncated to int64,
        // float outputs a finite double within range.
        for s in [lo, hi].into_iter().flatten() {
            let ok = if T::DTYPE == ScalarType::BOOL {
                true
            } else if T::IS_FLOAT {
                let d = s.to_f64();
                !d.is_finite() || in_range::<T>(d)
            } else {
                in_range::<T>(s.to_i64() as f64)
            };
            if !ok {
                return Err(invalid("clamp bound out of range"));
            }
        }
        let (lo, hi) = (lo.map(T::from_num), hi.map(T::from_num));
        map::<T, T, 1>([&x], &mut out, |[v]| {
            let v = lo.map_or(v, |lo| max_override(v, lo));
            hi.map_or(v, |hi| min_override(v, hi))
        })
    })
}

/// `leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!)
/// out)`: floating, `x >= 0 ? x : x * slope` (slope overflow-checked).
pub const LEAKY_RELU_OUT: Kernel = op!(
    "aten::leaky_relu.out(Tensor self, Scalar negative_slope=0.01, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let slope = scalar_arg(ctx, arg!(SCHEMA, negative_slope))?;
        same_type!(ctx, arg!(SCHEMA, [self, out]), float, T => {
            let slope = checked_scalar::<T>(slope)?;
            move |v: T| if v >= 0.0 { v } else { v * slope }
        })
    }
);

/// `elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar
/// input_scale=1, *, Tensor(a!) out)`: floating,
/// `x <= 0 ? expm1f(x * input_scale) * (alpha * scale) : x * scale`.
pub const ELU_OUT: Kernel = op!(
    "aten::elu.out(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (alpha, scale, input_scale) = (
            scalar_arg(ctx, arg!(SCHEMA, alpha))?.to_f32(),
            scalar_arg(ctx, arg!(SCHEMA, scale))?.to_f32(),
            scalar_arg(ctx, arg!(SCHEMA, input_scale))?.to_f32(),
        );
        let negcoef = alpha * scale;
        same_type!(ctx, arg!(SCHEMA, [self, out]), float, T => move |v: T| {
            if v <= 0.0 {
                expm1f(v * input_scale) * negcoef
            } else {
                v * scale
            }
        })
    }
);

/// `gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out)`,
/// floating. `none`: `float(0.5 * x * (1 + erf(x * M_SQRT1_2)))` in f64
/// with the f64 `erf`. `tanh`: `inner = kBeta * (x + kKappa * (x * x * x))`
/// in f32, then `float(0.5 * x * (1.0 + tanhf(inner)))` in f64. ±inf give
/// 0 and +inf.
pub const GELU_OUT: Kernel = op!(
    "aten::gelu.out(Tensor self, *, str approximate='none', Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let tanh = match ctx.opt_str(arg!(SCHEMA, approximate))? {
            Some(b"none") | None => false,
            Some(b"tanh") => true,
            Some(_) => return Err(invalid("gelu approximate must be 'none' or 'tanh'")),
        };
        same_type!(ctx, arg!(SCHEMA, [self, out]), float, T => move |x: T| gelu(x, tanh))
    }
);

fn gelu(x: f32, tanh: bool) -> f32 {
    if x == f32::NEG_INFINITY {
        return 0.0;
    }
    if x == f32::INFINITY {
        return x;
    }
    if tanh {
        const K_BETA: f32 =
            (core::f64::consts::SQRT_2 * core::f64::consts::FRAC_2_SQRT_PI * 0.5) as f32;
        const K_KAPPA: f32 = 0.044715;
        let inner = K_BETA * (x + K_KAPPA * (x * x * x));
        (0.5 * x as f64 * (1.0 + tanhf(inner) as f64)) as f32
    } else {
        (0.5 * x as f64 * (1.0 + libm::erf(x as f64 * core::f64::consts::FRAC_1_SQRT_2))) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_constants() {
        // op_gelu.cpp's constants, as ExecuTorch computes them.
        assert_eq!(
            ((core::f64::consts::SQRT_2 * core::f64::consts::FRAC_2_SQRT_PI * 0.5) as f32)
                .to_bits(),
            0x3F4C_422A
        );
        assert_eq!(0.044715f32.to_bits(), 0x3D37_2713);
        assert_eq!(gelu(f32::NEG_INFINITY, true), 0.0);
        assert_eq!(gelu(f32::INFINITY, false), f32::INFINITY);
    }
}
