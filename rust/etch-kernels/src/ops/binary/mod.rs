//! Element-wise binary `aten::*` kernels (arithmetic, comparisons, logical,
//! where): each a schema line, ExecuTorch's dtype rule for the op (common
//! dtype, output check, compute type) and a scalar function, run with
//! broadcasting by `elementwise::map`, as ExecuTorch's `op_add.cpp`,
//! `op_div.cpp`, `pattern/comparison_op.h`, ... do.

// Kernels whose dtypes are all unselected read their arguments and do nothing.
#![cfg_attr(
    not(feature = "all-dtypes"),
    allow(unused_imports, unused_variables, unused_mut, dead_code)
)]

use etch_runtime::context::required;

use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, TensorView,
};

use super::dtype::{
    can_cast, compute_type, in_range, invalid, is_float, is_integral, max_override, min_override,
    promote, promote_with_scalar, scalar_arg, switch_dtype, Arith, Elem, Num,
};
use super::elementwise::map;
use crate::math::powf::powf;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `binary-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-add-out")]
    ADD_OUT,
    #[cfg(feature = "op-aten-mul-out")]
    MUL_OUT,
    #[cfg(feature = "op-aten-minimum-out")]
    MINIMUM_OUT,
    #[cfg(feature = "op-aten-maximum-out")]
    MAXIMUM_OUT,
    #[cfg(feature = "op-aten-add-Scalar_out")]
    ADD_SCALAR_OUT,
    #[cfg(feature = "op-aten-sub-out")]
    SUB_OUT,
    #[cfg(feature = "op-aten-sub-Scalar_out")]
    SUB_SCALAR_OUT,
    #[cfg(feature = "op-aten-rsub-Scalar_out")]
    RSUB_SCALAR_OUT,
    #[cfg(feature = "op-aten-mul-Scalar_out")]
    MUL_SCALAR_OUT,
    #[cfg(feature = "op-aten-div-out")]
    DIV_OUT,
    #[cfg(feature = "op-aten-div-out_mode")]
    DIV_OUT_MODE,
    #[cfg(feature = "op-aten-div-Scalar_out")]
    DIV_SCALAR_OUT,
    #[cfg(feature = "op-aten-div-Scalar_mode_out")]
    DIV_SCALAR_MODE_OUT,
    #[cfg(feature = "op-aten-pow-Tensor_Tensor_out")]
    POW_TENSOR_TENSOR_OUT,
    #[cfg(feature = "op-aten-pow-Tensor_Scalar_out")]
    POW_TENSOR_SCALAR_OUT,
    #[cfg(feature = "op-aten-pow-Scalar_out")]
    POW_SCALAR_OUT,
    #[cfg(feature = "op-aten-where-self_out")]
    WHERE_SELF_OUT,
    #[cfg(feature = "op-aten-logical_and-out")]
    LOGICAL_AND_OUT,
    #[cfg(feature = "op-aten-logical_or-out")]
    LOGICAL_OR_OUT,
    #[cfg(feature = "op-aten-logical_xor-out")]
    LOGICAL_XOR_OUT,
    #[cfg(feature = "op-aten-remainder-Tensor_out")]
    REMAINDER_TENSOR_OUT,
    #[cfg(feature = "op-aten-remainder-Scalar_out")]
    REMAINDER_SCALAR_OUT,
    #[cfg(feature = "op-aten-fmod-Tensor_out")]
    FMOD_TENSOR_OUT,
    #[cfg(feature = "op-aten-fmod-Scalar_out")]
    FMOD_SCALAR_OUT,
    #[cfg(feature = "op-aten-eq-Tensor_out")]
    EQ_TENSOR_OUT,
    #[cfg(feature = "op-aten-eq-Scalar_out")]
    EQ_SCALAR_OUT,
    #[cfg(feature = "op-aten-ne-Tensor_out")]
    NE_TENSOR_OUT,
    #[cfg(feature = "op-aten-ne-Scalar_out")]
    NE_SCALAR_OUT,
    #[cfg(feature = "op-aten-lt-Tensor_out")]
    LT_TENSOR_OUT,
    #[cfg(feature = "op-aten-lt-Scalar_out")]
    LT_SCALAR_OUT,
    #[cfg(feature = "op-aten-le-Tensor_out")]
    LE_TENSOR_OUT,
    #[cfg(feature = "op-aten-le-Scalar_out")]
    LE_SCALAR_OUT,
    #[cfg(feature = "op-aten-gt-Tensor_out")]
    GT_TENSOR_OUT,
    #[cfg(feature = "op-aten-gt-Scalar_out")]
    GT_SCALAR_OUT,
    #[cfg(feature = "op-aten-ge-Tensor_out")]
    GE_TENSOR_OUT,
    #[cfg(feature = "op-aten-ge-Scalar_out")]
    GE_SCALAR_OUT,
];

/// `extract_scalar<T>`: an integral compute type takes an Int scalar in its
/// range, a floating one an Int or a Double within range (±inf, NaN pass),
/// Bool an Int or a Bool.
fn extract_scalar<T: Arith>(s: Num) -> Result<T> {
    let ok = match s {
        Num::Bool(_) => T::DTYPE == ScalarType::BOOL,
        Num::Int(v) => T::IS_FLOAT || T::DTYPE == ScalarType::BOOL || in_range::<T>(v as f64),
        Num::F32(_) | Num::F64(_) => {
            let d = s.to_f64();
            T::IS_FLOAT && (!d.is_finite() || in_range::<T>(d))
        }
    };
    if ok {
        Ok(T::from_num(s))
    } else {
        Err(invalid("scalar cannot be extracted into the compute type"))
    }
}

/// `check_alpha_type`.
fn alpha_ok(alpha: Num, common: ScalarType) -> bool {
    let t = alpha.scalar_dtype();
    can_cast(t, common) || (common == ScalarType::BOOL && is_integral(t, true))
}

/// The two tensor operands and the output of a `(Tensor self, Tensor other,
/// ..., Tensor(a!) out)` op; `$args`: their positions.
macro_rules! tensors2 {
    ($ctx:expr, $args:expr) => {{
        let [a_arg, b_arg, out_arg]: [usize; 3] = $args;
        $crate::ops::dynamic::resize_broadcast($ctx, out_arg, a_arg, b_arg)?;
        let ([a, b], [out]) = $ctx.io([a_arg, b_arg], [out_arg])?;
        (required(a, a_arg)?, required(b, b_arg)?, out)
    }};
}

fn fail(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// `(Tensor self, Tensor other, *, Tensor(a!) out)` computing in the
/// promoted dtype (`$set`: real or realb), the output castable from it;
/// `$make` gives the per-element function with `$T` bound. Used inside
/// `op!`, whose `SCHEMA` (the kernel's own schema) names the arguments.
macro_rules! promoted2 {
    ($ctx:expr, $set:ident, $T:ident => $make:expr) => {{
        #[allow(unused_mut)]
        let (a, b, mut out) = tensors2!($ctx, arg!(SCHEMA, [self, other, out]));
        let common = promote(a.dtype, b.dtype)?;
        if !can_cast(common, out.dtype) {
            return Err(fail("output dtype cannot hold the promoted dtype"));
        }
        switch_dtype!($set, compute_type(common), $T => {
            let f = $make;
            map::<$T, $T, 2>([&a, &b], &mut out, |[x, y]| f(x, y))
        })
    }};
}

// --- add, sub, rsub, mul ---

/// `add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)`:
/// `a + alpha * b` in the promoted dtype (Bool allowed).
pub const ADD_OUT: Kernel = op!(
    "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let alpha = scalar_arg(ctx, arg!(SCHEMA, alpha))?;
        #[allow(unused_mut)]
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, other, out]));
        let common = promote(a.dtype, b.dtype)?;
        if !can_cast(common, out.dtype) || !alpha_ok(alpha, common) {
            return Err(fail("add dtypes"));
        }
        switch_dtype!(realb, compute_type(common), T => {
            let alpha = extract_scalar::<T>(alpha)?;
            map::<T, T, 2>([&a, &b], &mut out, |[x, y]| x.add(alpha.mul(y)))
        })
    }
);

/// Runs `$make` (the per-element function, made once with `$T` bound) over
/// the one tensor of a `(Tensor self, Scalar other, ...)` op whose output
/// dtype must equal the input's promoted with the scalar; `$args`: the
/// positions of `self` and `out`.
macro_rules! tensor_scalar_same {
    ($ctx:expr, $args:expr, $other:expr, $set:ident, $T:ident => $make:expr) => {{
        let [a_arg, out_arg]: [usize; 2] = $args;
        $crate::ops::dynamic::resize_like($ctx, out_arg, a_arg)?;
        #[allow(unused_mut)]
        let ([a], [mut out]) = $ctx.io([a_arg], [out_arg])?;
        let a = required(a, a_arg)?;
        let common = promote_with_scalar(a.dtype, $other);
        if common != out.dtype {
            return Err(fail("output dtype is not the promoted dtype"));
        }
        switch_dtype!($set, compute_type(common), $T => {
            let f = $make;
            map::<$T, $T, 1>([&a], &mut out, |[v]| f(v))
        })
    }};
}

/// `add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!)
/// out)`: `k = alpha * b` once, then `a + k`.
pub const ADD_SCALAR_OUT: Kernel = op!(
    "aten::add.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (b, alpha) = (scalar_arg(ctx, arg!(SCHEMA, other))?, scalar_arg(ctx, arg!(SCHEMA, alpha))?);
        if !alpha_ok(alpha, promote_with_scalar(ctx.tensor_info(arg!(SCHEMA, self))?.0, b)) {
            return Err(fail("add alpha dtype"));
        }
        tensor_scalar_same!(ctx, arg!(SCHEMA, [self, out]), b, realb, T => {
            let k = extract_scalar::<T>(alpha)?.mul(T::from_num(b));
            move |x: T| x.add(k)
        })
    }
);

/// Sub's alpha: not Bool, castable to the common dtype.
fn sub_alpha_ok(alpha: Num, common: ScalarType) -> bool {
    alpha.scalar_dtype() != ScalarType::BOOL && can_cast(alpha.scalar_dtype(), common)
}

/// `sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)`:
/// `a - alpha * b` (no Bool).
pub const SUB_OUT: Kernel = op!(
    "aten::sub.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let alpha = scalar_arg(ctx, arg!(SCHEMA, alpha))?;
        #[allow(unused_mut)]
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, other, out]));
        let common = promote(a.dtype, b.dtype)?;
        if !can_cast(common, out.dtype) || !sub_alpha_ok(alpha, common) {
            return Err(fail("sub dtypes"));
        }
        switch_dtype!(real, compute_type(common), T => {
            let alpha = T::from_num(alpha);
            map::<T, T, 2>([&a, &b], &mut out, |[x, y]| x.sub(alpha.mul(y)))
        })
    }
);

/// `sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!)
/// out)`: `k = alpha * b` once, then `a - k`.
pub const SUB_SCALAR_OUT: Kernel = op!(
    "aten::sub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (b, alpha) = (scalar_arg(ctx, arg!(SCHEMA, other))?, scalar_arg(ctx, arg!(SCHEMA, alpha))?);
        if !sub_alpha_ok(alpha, promote_with_scalar(ctx.tensor_info(arg!(SCHEMA, self))?.0, b)) {
            return Err(fail("sub alpha dtype"));
        }
        tensor_scalar_same!(ctx, arg!(SCHEMA, [self, out]), b, real, T => {
            let k = T::from_num(alpha).mul(T::from_num(b));
            move |x: T| x.sub(k)
        })
    }
);

/// `rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *,
/// Tensor(a!) out)`: `b - alpha * a`.
pub const RSUB_SCALAR_OUT: Kernel = op!(
    "aten::rsub.Scalar_out(Tensor self, Scalar other, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (b, alpha) = (scalar_arg(ctx, arg!(SCHEMA, other))?, scalar_arg(ctx, arg!(SCHEMA, alpha))?);
        if !sub_alpha_ok(alpha, promote_with_scalar(ctx.tensor_info(arg!(SCHEMA, self))?.0, b)) {
            return Err(fail("rsub alpha dtype"));
        }
        tensor_scalar_same!(ctx, arg!(SCHEMA, [self, out]), b, real, T => {
            let (b, alpha) = (T::from_num(b), T::from_num(alpha));
            move |x: T| b.sub(alpha.mul(x))
        })
    }
);

/// `mul.out(Tensor self, Tensor other, *, Tensor(a!) out)`: `a * b` in the
/// promoted dtype (Bool allowed).
pub const MUL_OUT: Kernel = op!(
    "aten::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| promoted2!(ctx, realb, T => |x: T, y: T| x.mul(y))
);

/// `mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)`.
pub const MUL_SCALAR_OUT: Kernel = op!(
    "aten::mul.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let b = scalar_arg(ctx, arg!(SCHEMA, other))?;
        tensor_scalar_same!(ctx, arg!(SCHEMA, [self, out]), b, realb, T => {
            let b = T::from_num(b);
            move |x: T| x.mul(b)
        })
    }
);

// --- div ---

/// `div.out`'s common dtype: promoted when both are floating, else the
/// floating one, else Float.
fn div_common(a: ScalarType, b: ScalarType) -> Result<ScalarType> {
    Ok(match (is_float(a), is_float(b)) {
        (true, true) => promote(a, b)?,
        (true, false) => a,
        (false, true) => b,
        (false, false) => ScalarType::FLOAT,
    })
}

/// `div.out(Tensor self, Tensor other, *, Tensor(a!) out)`: true division
/// `a / b` in f32 (IEEE: x/0 = ±inf, 0/0 = NaN); output floating.
pub const DIV_OUT: Kernel = op!(
    "aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| div_true(ctx, arg!(SCHEMA, [self, other, out]))
);

/// `args`: the positions of `self`, `other` and `out`.
fn div_true(ctx: &mut KernelContext<'_, '_>, args: [usize; 3]) -> Result<()> {
    #[allow(unused_mut)]
    let (a, b, mut out) = tensors2!(ctx, args);
    let common = compute_type(div_common(a.dtype, b.dtype)?);
    if !is_float(out.dtype) {
        return Err(fail("div output must be floating"));
    }
    switch_dtype!(float, common, T => map::<T, T, 2>([&a, &b], &mut out, |[x, y]| x / y))
}

/// `rounding_mode`: None, "trunc" or "floor".
fn rounding_mode(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Option<bool>> {
    match ctx.opt_str(i)? {
        None => Ok(None),
        Some(b"trunc") => Ok(Some(true)),
        Some(b"floor") => Ok(Some(false)),
        Some(_) => Err(fail("rounding_mode must be 'trunc' or 'floor'")),
    }
}

/// `utils::floor_divide`. Integers: C quotient, minus one when the signs
/// differ and there is a remainder. Floats: `b == 0` gives ±inf by the sign
/// of `a`; else `m = fmod(a, b); d = (a - m) / b`, minus one when `m != 0`
/// and its sign differs from `b`'s (no floor fix-up, no signed-zero care).
fn floor_divide<T: Arith>(a: T, b: T) -> T {
    if T::IS_FLOAT {
        if b == T::zero() {
            return T::inf(a.signbit());
        }
        let m = a.rem(b);
        let d = a.sub(m).div(b);
        if m != T::zero() && b.signbit() != m.signbit() {
            d.sub(T::one())
        } else {
            d
        }
    } else {
        let q = a.div(b);
        if (a < T::zero()) == (b < T::zero()) {
            return q;
        }
        if a.rem(b) != T::zero() {
            q.sub(T::one())
        } else {
            q
        }
    }
}

/// `a / b` then trunc, or `floor_divide`, in compute type `T`.
fn div_mode<T: Arith>(a: T, b: T, trunc: bool) -> T {
    if trunc {
        a.div(b).trunc()
    } else {
        floor_divide(a, b)
    }
}

/// `div.out_mode(Tensor self, Tensor other, *, str? rounding_mode,
/// Tensor(a!) out)`: no mode is `div.out`; else in the promoted dtype (not
/// Bool): trunc `trunc(a / b)` or floor [`floor_divide`]. An integer
/// division by zero writes 0 and fails the call after the loop.
pub const DIV_OUT_MODE: Kernel = op!(
    "aten::div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let Some(trunc) = rounding_mode(ctx, arg!(SCHEMA, rounding_mode))? else {
            return div_true(ctx, arg!(SCHEMA, [self, other, out]));
        };
        #[allow(unused_mut)]
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, other, out]));
        let common = promote(a.dtype, b.dtype)?;
        if !can_cast(common, out.dtype) || common == ScalarType::BOOL {
            return Err(fail("div dtypes"));
        }
        let mut by_zero = false;
        switch_dtype!(real, compute_type(common), T => {
            map::<T, T, 2>([&a, &b], &mut out, |[x, y]| {
                if !T::IS_FLOAT && y == T::zero() {
                    by_zero = true;
                    return T::zero();
                }
                div_mode(x, y, trunc)
            })
        })?;
        if by_zero {
            return Err(fail("integer division by zero"));
        }
        Ok(())
    }
);

/// `div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)`: the
/// input's dtype if floating, else Float, must be out's; `a / T(b)`.
pub const DIV_SCALAR_OUT: Kernel = op!(
    "aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| div_scalar(ctx, arg!(SCHEMA, [self, other, out]))
);

/// `args`: the positions of `self`, `other` and `out`.
fn div_scalar(ctx: &mut KernelContext<'_, '_>, args: [usize; 3]) -> Result<()> {
    let [a_arg, b_arg, out_arg] = args;
    let b = scalar_arg(ctx, b_arg)?;
    #[allow(unused_mut)]
    let ([a], [mut out]) = ctx.io([a_arg], [out_arg])?;
    let a = required(a, a_arg)?;
    let common = if is_float(a.dtype) {
        a.dtype
    } else {
        ScalarType::FLOAT
    };
    if common != out.dtype {
        return Err(fail("div output dtype"));
    }
    switch_dtype!(float, compute_type(common), T => {
        let b = T::from_num(b);
        map::<T, T, 1>([&a], &mut out, |[x]| x / b)
    })
}

/// `div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode,
/// Tensor(a!) out)`: an integral common dtype with `b == 0` fails before
/// any work.
pub const DIV_SCALAR_MODE_OUT: Kernel = op!(
    "aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let Some(trunc) = rounding_mode(ctx, arg!(SCHEMA, rounding_mode))? else {
            return div_scalar(ctx, arg!(SCHEMA, [self, other, out]));
        };
        let b = scalar_arg(ctx, arg!(SCHEMA, other))?;
        #[allow(unused_mut)]
        let ([a], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let a = required(a, arg!(SCHEMA, self))?;
        let common = promote_with_scalar(a.dtype, b);
        if !can_cast(common, out.dtype) || common == ScalarType::BOOL {
            return Err(fail("div dtypes"));
        }
        if is_integral(common, true) && b.to_f64() == 0.0 {
            return Err(fail("integer division by zero"));
        }
        switch_dtype!(real, compute_type(common), T => {
            let b = T::from_num(b);
            map::<T, T, 1>([&a], &mut out, |[x]| div_mode(x, b, trunc))
        })
    }
);

// --- minimum, maximum ---

/// `minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)`:
/// `min_override` (the first NaN wins) in the promoted dtype.
pub const MINIMUM_OUT: Kernel = op!(
    "aten::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| promoted2!(ctx, realb, T => min_override::<T>)
);

/// `maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)`:
/// `max_override`.
pub const MAXIMUM_OUT: Kernel = op!(
    "aten::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| promoted2!(ctx, realb, T => max_override::<T>)
);

// --- pow ---

/// `pow`'s common dtype check (castable to out, not Bool) and compute type:
/// `powf` when the common dtype computes in Float, else `pow` in f64 (all
/// integer cases, truncated on store).
fn pow_check(common: ScalarType, out: ScalarType) -> Result<bool> {
    if !can_cast(common, out) || common == ScalarType::BOOL {
        return Err(fail("pow dtypes"));
    }
    Ok(compute_type(common) == ScalarType::FLOAT)
}

/// `pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out)`.
pub const POW_TENSOR_TENSOR_OUT: Kernel = op!(
    "aten::pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, exponent, out]));
        if pow_check(promote(a.dtype, b.dtype)?, out.dtype)? {
            map::<f32, f32, 2>([&a, &b], &mut out, |[x, y]| powf(x, y))
        } else {
            map::<f64, f64, 2>([&a, &b], &mut out, |[x, y]| libm::pow(x, y))
        }
    }
);

/// `pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out)`.
pub const POW_TENSOR_SCALAR_OUT: Kernel = op!(
    "aten::pow.Tensor_Scalar_out(Tensor self, Scalar exponent, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let e = scalar_arg(ctx, arg!(SCHEMA, exponent))?;
        let ([a], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let a = required(a, arg!(SCHEMA, self))?;
        if pow_check(promote_with_scalar(a.dtype, e), out.dtype)? {
            let e = e.to_f32();
            map::<f32, f32, 1>([&a], &mut out, |[x]| powf(x, e))
        } else {
            let e = e.to_f64();
            map::<f64, f64, 1>([&a], &mut out, |[x]| libm::pow(x, e))
        }
    }
);

/// `pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out)`.
pub const POW_SCALAR_OUT: Kernel = op!(
    "aten::pow.Scalar_out(Scalar self, Tensor exponent, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let base = scalar_arg(ctx, arg!(SCHEMA, self))?;
        let ([e], [mut out]) = ctx.io(arg!(SCHEMA, [exponent]), arg!(SCHEMA, [out]))?;
        let e = required(e, arg!(SCHEMA, exponent))?;
        if pow_check(promote_with_scalar(e.dtype, base), out.dtype)? {
            let base = base.to_f32();
            map::<f32, f32, 1>([&e], &mut out, |[y]| powf(base, y))
        } else {
            let base = base.to_f64();
            map::<f64, f64, 1>([&e], &mut out, |[y]| libm::pow(base, y))
        }
    }
);

// --- where ---

/// `where.self_out(Tensor condition, Tensor self, Tensor other, *,
/// Tensor(a!) out)`: out's dtype is the promoted one; condition Bool or
/// Byte (nonzero is true); three-way broadcast.
pub const WHERE_SELF_OUT: Kernel = op!(
    "aten::where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        #[allow(unused_mut)]
        let ([c, a, b], [mut out]) = ctx.io(arg!(SCHEMA, [condition, self, other]), arg!(SCHEMA, [out]))?;
        let (c, a, b) = (required(c, arg!(SCHEMA, condition))?, required(a, arg!(SCHEMA, self))?, required(b, arg!(SCHEMA, other))?);
        let common = promote(a.dtype, b.dtype)?;
        if common != out.dtype || !matches!(c.dtype, ScalarType::BOOL | ScalarType::BYTE) {
            return Err(fail("where dtypes"));
        }
        switch_dtype!(realb, compute_type(common), T => {
            map::<T, T, 3>([&a, &b, &c], &mut out, |[x, y, c]| if c != T::zero() { x } else { y })
        })
    }
);

// --- comparisons (pattern/comparison_op.h) ---

/// `.Tensor_out`: in the promoted dtype, but in Float when that is
/// floating and the operands' dtypes differ; out any dtype (1/0). `args`:
/// the positions of `self`, `other` and `out`.
fn compare_tensors(ctx: &mut KernelContext<'_, '_>, args: [usize; 3], cmp: Cmp) -> Result<()> {
    #[allow(unused_mut)]
    let (a, b, mut out) = tensors2!(ctx, args);
    let mut common = promote(a.dtype, b.dtype)?;
    if is_float(common) && a.dtype != b.dtype {
        common = ScalarType::FLOAT;
    }
    switch_dtype!(realb, compute_type(common), T => {
        map::<T, bool, 2>([&a, &b], &mut out, |[x, y]| cmp.apply(x, y))
    })
}

/// `.Scalar_out`: in the input's dtype promoted with the (weak) scalar,
/// the scalar cast to it once. `args`: the positions of `self`, `other`
/// and `out`.
fn compare_scalar(ctx: &mut KernelContext<'_, '_>, args: [usize; 3], cmp: Cmp) -> Result<()> {
    let [a_arg, s_arg, out_arg] = args;
    let s = scalar_arg(ctx, s_arg)?;
    #[allow(unused_mut)]
    let ([a], [mut out]) = ctx.io([a_arg], [out_arg])?;
    let a = required(a, a_arg)?;
    switch_dtype!(realb, compute_type(promote_with_scalar(a.dtype, s)), T => {
        let s = T::from_num(s);
        map::<T, bool, 1>([&a], &mut out, |[x]| cmp.apply(x, s))
    })
}

#[derive(Clone, Copy)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    #[inline]
    fn apply<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
        }
    }
}

macro_rules! comparison {
    ($tensor:ident, $scalar:ident, $cmp:ident, $t_schema:literal, $s_schema:literal) => {
        pub const $tensor: Kernel = op!($t_schema, |ctx| {
            compare_tensors(ctx, arg!(SCHEMA, [self, other, out]), Cmp::$cmp)
        });
        pub const $scalar: Kernel = op!($s_schema, |ctx| {
            compare_scalar(ctx, arg!(SCHEMA, [self, other, out]), Cmp::$cmp)
        });
    };
}

comparison!(
    EQ_TENSOR_OUT,
    EQ_SCALAR_OUT,
    Eq,
    "aten::eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);
comparison!(
    NE_TENSOR_OUT,
    NE_SCALAR_OUT,
    Ne,
    "aten::ne.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::ne.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);
comparison!(
    LT_TENSOR_OUT,
    LT_SCALAR_OUT,
    Lt,
    "aten::lt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::lt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);
comparison!(
    LE_TENSOR_OUT,
    LE_SCALAR_OUT,
    Le,
    "aten::le.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::le.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);
comparison!(
    GT_TENSOR_OUT,
    GT_SCALAR_OUT,
    Gt,
    "aten::gt.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::gt.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);
comparison!(
    GE_TENSOR_OUT,
    GE_SCALAR_OUT,
    Ge,
    "aten::ge.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    "aten::ge.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"
);

// --- logical (pattern/logical_op.h) ---

/// Both inputs loaded as `bool`, any output dtype. `args`: the positions
/// of `self`, `other` and `out`.
fn logical(
    ctx: &mut KernelContext<'_, '_>,
    args: [usize; 3],
    f: fn(bool, bool) -> bool,
) -> Result<()> {
    let (a, b, mut out) = tensors2!(ctx, args);
    map::<bool, bool, 2>([&a, &b], &mut out, |[x, y]| f(x, y))
}

pub const LOGICAL_AND_OUT: Kernel = op!(
    "aten::logical_and.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| logical(ctx, arg!(SCHEMA, [self, other, out]), |a, b| a && b)
);
pub const LOGICAL_OR_OUT: Kernel = op!(
    "aten::logical_or.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| logical(ctx, arg!(SCHEMA, [self, other, out]), |a, b| a || b)
);
pub const LOGICAL_XOR_OUT: Kernel = op!(
    "aten::logical_xor.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| logical(ctx, arg!(SCHEMA, [self, other, out]), |a, b| a != b)
);

// --- remainder, fmod ---

/// `utils::remainder_override`: floats `r = fmod(a, b)`, plus `b` when the
/// signs of `a` and `b` differ and `r != 0`; integers C's `a % b`
/// (truncated, unlike PyTorch's).
fn remainder<T: Arith>(a: T, b: T) -> T {
    let r = a.rem(b);
    if T::IS_FLOAT && ((a < T::zero()) != (b < T::zero())) && r != T::zero() {
        r.add(b)
    } else {
        r
    }
}

/// `remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)`:
/// in the promoted dtype (not Bool); an integer zero divisor writes 0 and
/// fails the call after the loop.
pub const REMAINDER_TENSOR_OUT: Kernel = op!(
    "aten::remainder.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        #[allow(unused_mut)]
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, other, out]));
        let common = promote(a.dtype, b.dtype)?;
        if !can_cast(common, out.dtype) || common == ScalarType::BOOL {
            return Err(fail("remainder dtypes"));
        }
        let mut by_zero = false;
        switch_dtype!(real, compute_type(common), T => {
            map::<T, T, 2>([&a, &b], &mut out, |[x, y]| {
                if !T::IS_FLOAT && y == T::zero() {
                    by_zero = true;
                    return T::zero();
                }
                remainder(x, y)
            })
        })?;
        if by_zero {
            return Err(fail("integer remainder by zero"));
        }
        Ok(())
    }
);

/// Checks a `(Tensor self, Scalar other, *, Tensor(a!) out)` op whose
/// common dtype is the weak promotion, castable to out, not Bool, and not
/// integral with a zero scalar (remainder, fmod).
fn scalar_divisor_check(a: &TensorView<'_>, b: Num, out: ScalarType) -> Result<ScalarType> {
    let common = promote_with_scalar(a.dtype, b);
    if !can_cast(common, out) || common == ScalarType::BOOL {
        return Err(fail("dtypes"));
    }
    if is_integral(common, true) && b.to_f64() == 0.0 {
        return Err(fail("integer division by zero"));
    }
    Ok(common)
}

/// `remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)`.
pub const REMAINDER_SCALAR_OUT: Kernel = op!(
    "aten::remainder.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let b = scalar_arg(ctx, arg!(SCHEMA, other))?;
        #[allow(unused_mut)]
        let ([a], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let a = required(a, arg!(SCHEMA, self))?;
        let common = scalar_divisor_check(&a, b, out.dtype)?;
        switch_dtype!(real, compute_type(common), T => {
            let b = T::from_num(b);
            map::<T, T, 1>([&a], &mut out, |[x]| remainder(x, b))
        })
    }
);

/// `fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)`:
/// `fmodf` when the common dtype computes in Float, else `fmod` in f64
/// (integers too: a zero divisor gives NaN, stored as an integer cast).
pub const FMOD_TENSOR_OUT: Kernel = op!(
    "aten::fmod.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (a, b, mut out) = tensors2!(ctx, arg!(SCHEMA, [self, other, out]));
        if pow_check(promote(a.dtype, b.dtype)?, out.dtype)? {
            map::<f32, f32, 2>([&a, &b], &mut out, |[x, y]| x % y)
        } else {
            map::<f64, f64, 2>([&a, &b], &mut out, |[x, y]| x % y)
        }
    }
);

/// `fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)`.
pub const FMOD_SCALAR_OUT: Kernel = op!(
    "aten::fmod.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let b = scalar_arg(ctx, arg!(SCHEMA, other))?;
        let ([a], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let a = required(a, arg!(SCHEMA, self))?;
        if compute_type(scalar_divisor_check(&a, b, out.dtype)?) == ScalarType::FLOAT {
            let b = b.to_f32();
            map::<f32, f32, 1>([&a], &mut out, |[x]| x % b)
        } else {
            let b = b.to_f64();
            map::<f64, f64, 1>([&a], &mut out, |[x]| x % b)
        }
    }
);
