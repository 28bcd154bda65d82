//! Reductions (`sum`, `mean`, `amax`/`amin`, `argmax`/`argmin`,
//! `max.dim`/`min.dim`, `var`, `cumsum`) and softmax, following ExecuTorch's
//! `kernels/portable/cpu/util/reduce_util.h`:
//!
//! - output element `out_ix` runs row-major over the kept dimensions; its
//!   reduced elements are visited with the innermost reduced dimension
//!   fastest, through the input's real strides (any dim order);
//! - an absent or empty dim list reduces everything, in flat memory order;
//! - accumulation is one sequential accumulator seeded with the first
//!   (mapped) element, then `acc = reduce(map(x), acc)`: no pairwise sums.
//!
//! [`ReducePlan`] and [`for_each_slice`] are the two walks; the kernels
//! below are the upstream lambdas on top of them.

// Generic helpers that only unselected element types (`dtype-*` features)
// reach are unused in such builds.
#![cfg_attr(not(feature = "all-dtypes"), allow(dead_code))]

use etch_runtime::context::required;
use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, Shape, TensorView,
};

use super::dtype::real::{self as num, Real};

mod plan;
pub(crate) use plan::{for_each_slice, normalize_dim, ReducePlan};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `reduce-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-mean-out")]
    MEAN_OUT,
    #[cfg(feature = "op-aten-mean-dtype_out")]
    MEAN_DTYPE_OUT,
    #[cfg(feature = "op-aten-sum-IntList_out")]
    SUM_INTLIST_OUT,
    #[cfg(feature = "op-aten-amax-out")]
    AMAX_OUT,
    #[cfg(feature = "op-aten-amin-out")]
    AMIN_OUT,
    #[cfg(feature = "op-aten-argmax-out")]
    ARGMAX_OUT,
    #[cfg(feature = "op-aten-argmin-out")]
    ARGMIN_OUT,
    #[cfg(feature = "op-aten-max-dim_max")]
    MAX_DIM_MAX,
    #[cfg(feature = "op-aten-min-dim_min")]
    MIN_DIM_MIN,
    #[cfg(feature = "op-aten-var-correction_out")]
    VAR_CORRECTION_OUT,
    #[cfg(feature = "op-aten-cumsum-out")]
    CUMSUM_OUT,
    #[cfg(feature = "op-aten-any-out")]
    ANY_OUT,
    #[cfg(feature = "op-aten-any-dims_out")]
    ANY_DIMS_OUT,
    #[cfg(feature = "op-aten-any-all_out")]
    ANY_ALL_OUT,
];

const MAX_RANK: usize = 16;

use crate::ops::bad;

pub(crate) fn bad_dtype(what: &'static str, dtype: ScalarType) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, dtype.0 as u32)
}

/// `dim`, `int[1]? dim` and `int[] dim` arguments: `None` when Null.
fn opt_dims(
    ctx: &KernelContext<'_, '_>,
    i: usize,
) -> Result<Option<etch_runtime::context::IntList>> {
    Ok(if ctx.is_null(i)? {
        None
    } else {
        Some(ctx.int_list(i)?)
    })
}

fn opt_scalar_type(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Option<ScalarType>> {
    Ok(if ctx.is_null(i)? {
        None
    } else {
        Some(ctx.scalar_type(i)?)
    })
}

fn is_float(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::FLOAT | ScalarType::DOUBLE | ScalarType::HALF | ScalarType::BFLOAT16
    )
}

// ---------------------------------------------------------------- sum, mean

/// Sum (and mean) of one output element in accumulator type `A` (= the
/// output dtype): `op_sum.cpp`'s fast path (`seed_zero`: one innermost dim,
/// in dtype == out dtype: `acc = 0; acc += x`) or general path
/// (`acc = (A)first; acc = acc + (A)x`). They differ only for an all −0.0
/// slice (+0.0 vs −0.0). Empty → 0.
fn sum_into<A: Real>(
    plan: &ReducePlan,
    x: &TensorView<'_>,
    out: &mut [u8],
    seed_zero: bool,
    finish: impl Fn(A) -> A,
) -> Result<()> {
    let load = num::loader::<A>(x.dtype)?;
    let out = num::slice_mut::<A>(out)?;
    if out.len() != plan.out_numel {
        return Err(bad("reduction output size"));
    }
    for (out_ix, o) in out.iter_mut().enumerate() {
        let mut acc: Option<A> = seed_zero.then_some(A::ZERO);
        plan.visit(out_ix, |i, _| {
            let v = load(x.data, i).ok_or(bad("reduction index"))?;
            acc = Some(match acc {
                None => v,
                Some(a) => a.add(v),
            });
            Ok(())
        })?;
        *o = finish(acc.unwrap_or(A::ZERO));
    }
    Ok(())
}

/// Upstream's sum/mean checks and plan: `dtype` (if given) equals out's,
/// dims valid, input in the default dim order, output shape by `keepdim`.
fn sum_plan(
    x: &TensorView<'_>,
    out: &Shape,
    dims: Option<&[i64]>,
    keepdim: bool,
    dtype: Option<ScalarType>,
    out_dtype: ScalarType,
) -> Result<(ReducePlan, bool)> {
    if dtype.is_some_and(|d| d != out_dtype) {
        return Err(bad("dtype differs from the output's"));
    }
    let plan = ReducePlan::new(&x.shape, dims)?;
    if !x.shape.is_contiguous() {
        return Err(bad("reduction input must be contiguous"));
    }
    plan.check_out(out, keepdim)?;
    let rank = x.shape.rank();
    let fast = x.numel() > 0
        && x.dtype == out_dtype
        && matches!(dims, Some([d]) if rank > 0 && normalize_dim(*d, rank).ok() == Some(rank - 1));
    Ok((plan, fast))
}

/// `sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *,
/// ScalarType? dtype=None, Tensor(a!) out)`: portable `op_sum.cpp`, the
/// accumulator is the output dtype (i8 in → i64 out accumulates in i64).
/// Not in the pip runtime's portable set (it registers the optimized
/// `sum`), so references from it are checked against this order.
pub const SUM_INTLIST_OUT: Kernel = op!(
    "aten::sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = opt_dims(ctx, arg!(SCHEMA, dim))?;
        let keepdim = ctx.bool(arg!(SCHEMA, keepdim))?;
        let dtype = opt_scalar_type(ctx, arg!(SCHEMA, dtype))?;
        let ([x], [out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let (plan, fast) = sum_plan(
            &x,
            &out.shape,
            dims.as_ref().map(|d| d.as_slice()),
            keepdim,
            dtype,
            out.dtype,
        )?;
        let _ = (&plan, fast, &x);
        crate::for_real_dtypes!(out.dtype, A => sum_into::<A>(&plan, &x, out.data, fast, |s| s),
            _ => Err(bad_dtype("sum output dtype", out.dtype)))
    }
);

/// `mean.out(Tensor self, int[1]? dim, bool keepdim=False, *,
/// ScalarType? dtype=None, Tensor(a!) out)`: portable `op_mean.cpp`, the sum
/// as `sum` (accumulator = the float output dtype), then `sum / (float)num`
/// (division; empty → NaN).
pub const MEAN_OUT: Kernel = op!(
    "aten::mean.out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = opt_dims(ctx, arg!(SCHEMA, dim))?;
        let keepdim = ctx.bool(arg!(SCHEMA, keepdim))?;
        let dims = dims.as_ref().map(|d| d.as_slice());
        mean(ctx, dims, keepdim, arg!(SCHEMA, [self, dtype, out]))
    }
);

/// `mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!)
/// out)`: `mean.out` over all dimensions (what `x.mean()` exports to).
pub const MEAN_DTYPE_OUT: Kernel = op!(
    "aten::mean.dtype_out(Tensor self, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| mean(ctx, None, false, arg!(SCHEMA, [self, dtype, out]))
);

/// `args`: the positions of `self`, `dtype` and `out`.
fn mean(
    ctx: &mut KernelContext<'_, '_>,
    dims: Option<&[i64]>,
    keepdim: bool,
    args: [usize; 3],
) -> Result<()> {
    let [x_arg, dtype_arg, out_arg] = args;
    let dtype = opt_scalar_type(ctx, dtype_arg)?;
    if ctx.has_dynamic_shapes() {
        let sizes = crate::ops::dynamic::reduced_sizes(ctx, x_arg, dims, keepdim)?;
        crate::ops::dynamic::resize(ctx, out_arg, &sizes)?;
    }
    let ([x], [out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    // `check_mean_dim_args`: a float dtype, or float input and output.
    let floats = match dtype {
        Some(d) => is_float(d),
        None => is_float(x.dtype) && is_float(out.dtype),
    };
    if !floats {
        return Err(bad("mean needs a floating dtype"));
    }
    let (plan, fast) = sum_plan(&x, &out.shape, dims, keepdim, dtype, out.dtype)?;
    let num = plan.reduced as f32;
    match out.dtype {
        #[cfg(feature = "dtype-f32")]
        ScalarType::FLOAT => sum_into::<f32>(&plan, &x, out.data, fast, |s| s / num),
        _ => {
            let _ = (plan, fast, num);
            Err(bad_dtype("mean output dtype", out.dtype))
        }
    }
}

// ------------------------------------------------------------- amax, amin

/// `acc = (isnan(v) || v > acc) ? v : acc` (amin: `<`): NaN wins, ties keep
/// the earlier element.
fn amax_amin<T: Real>(plan: &ReducePlan, x: &[T], out: &mut [T], max: bool) -> Result<()> {
    if out.len() != plan.out_numel {
        return Err(bad("reduction output size"));
    }
    for (out_ix, o) in out.iter_mut().enumerate() {
        let r = plan.map_reduce(
            x,
            out_ix,
            |v| v,
            |v, acc| {
                let wins = if max { v > acc } else { v < acc };
                if v.is_nan() || wins {
                    v
                } else {
                    acc
                }
            },
        )?;
        *o = r.ok_or(bad("amax/amin of an empty tensor"))?;
    }
    Ok(())
}

/// `args`: the positions of `self`, `dim`, `keepdim` and `out`.
fn amax_amin_out(ctx: &mut KernelContext<'_, '_>, args: [usize; 4], max: bool) -> Result<()> {
    let [x_arg, dim_arg, keepdim_arg, out_arg] = args;
    let dims = ctx.int_list(dim_arg)?;
    let keepdim = ctx.bool(keepdim_arg)?;
    let ([x], [out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    if x.dtype != out.dtype {
        return Err(bad("amax/amin output dtype"));
    }
    let plan = ReducePlan::new(&x.shape, Some(dims.as_slice()))?;
    plan.check_out(&out.shape, keepdim)?;
    if x.numel() == 0 {
        // Upstream aborts (ET_CHECK "Input tensor must be nonempty").
        return Err(bad("amax/amin of an empty tensor"));
    }
    let _ = (&plan, max);
    crate::for_real_dtypes!(x.dtype, T => amax_amin::<T>(&plan, num::slice(x.data)?, num::slice_mut(out.data)?, max),
        _ => Err(bad_dtype("amax/amin dtype", x.dtype)))
}

/// `amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *,
/// Tensor(a!) out)`: portable `op_amax.cpp`.
pub const AMAX_OUT: Kernel = op!(
    "aten::amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| amax_amin_out(ctx, arg!(SCHEMA, [self, dim, keepdim, out]), true)
);

/// `amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *,
/// Tensor(a!) out)`: portable `op_amin.cpp`.
pub const AMIN_OUT: Kernel = op!(
    "aten::amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| amax_amin_out(ctx, arg!(SCHEMA, [self, dim, keepdim, out]), false)
);

// ------------------------------------- argmax, argmin, max.dim, min.dim

/// `(value, index)` of each output: seed `(x0, 0)`, then take `(v, k)` when
/// `!isnan(acc) && (isnan(v) || v > acc)` (`<` for min): the first extreme
/// and the first NaN win. `k` counts along `dim`, or flat in memory order
/// when there is no dim.
fn arg_extreme<T: Real>(
    plan: &ReducePlan,
    x: &[T],
    max: bool,
    mut write: impl FnMut(usize, T, i64) -> Result<()>,
) -> Result<()> {
    for out_ix in 0..plan.out_numel {
        let mut acc: Option<(T, i64)> = None;
        plan.visit(out_ix, |i, k| {
            let v = *x.get(i).ok_or(bad("reduction index"))?;
            acc = Some(match acc {
                None => (v, 0),
                Some((a, ai)) => {
                    let wins = if max { v > a } else { v < a };
                    if !a.is_nan() && (v.is_nan() || wins) {
                        (v, k as i64)
                    } else {
                        (a, ai)
                    }
                }
            });
            Ok(())
        })?;
        let (v, k) = acc.ok_or(bad("arg reduction of an empty tensor"))?;
        write(out_ix, v, k)?;
    }
    Ok(())
}

/// `args`: the positions of `self`, `dim`, `keepdim` and `out`.
fn argmax_argmin_out(ctx: &mut KernelContext<'_, '_>, args: [usize; 4], max: bool) -> Result<()> {
    let [x_arg, dim_arg, keepdim_arg, out_arg] = args;
    let dim = ctx.opt_int(dim_arg)?;
    let keepdim = ctx.bool(keepdim_arg)?;
    let ([x], [out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    if out.dtype != ScalarType::LONG {
        return Err(bad("argmax/argmin output must be Long"));
    }
    let plan = ReducePlan::single(&x.shape, dim)?;
    plan.check_out(&out.shape, keepdim)?;
    // With a dim the reduced dim must be non-empty; without one upstream
    // aborts on an empty input.
    if x.numel() == 0 {
        return Err(bad("argmax/argmin of an empty tensor"));
    }
    let od = num::slice_mut::<i64>(out.data)?;
    if od.len() != plan.out_numel {
        return Err(bad("reduction output size"));
    }
    let _ = (&plan, max, &mut *od);
    crate::for_real_dtypes!(x.dtype, T => arg_extreme::<T>(&plan, num::slice(x.data)?, max, |o, _, k| {
            *od.get_mut(o).ok_or(bad("reduction output size"))? = k;
            Ok(())
        }),
        _ => Err(bad_dtype("argmax/argmin dtype", x.dtype)))
}

/// `argmax.out(Tensor self, int? dim=None, bool keepdim=False, *,
/// Tensor(a!) out)`: portable `op_argmax.cpp`, Long indices.
pub const ARGMAX_OUT: Kernel = op!(
    "aten::argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| argmax_argmin_out(ctx, arg!(SCHEMA, [self, dim, keepdim, out]), true)
);

/// `argmin.out(Tensor self, int? dim=None, bool keepdim=False, *,
/// Tensor(a!) out)`: portable `op_argmin.cpp`, Long indices.
pub const ARGMIN_OUT: Kernel = op!(
    "aten::argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| argmax_argmin_out(ctx, arg!(SCHEMA, [self, dim, keepdim, out]), false)
);

/// `args`: the positions of `self`, `dim`, `keepdim` and the two outputs
/// (`max`, `max_values` or `min`, `min_indices`).
fn max_min_dim_out(ctx: &mut KernelContext<'_, '_>, args: [usize; 5], max: bool) -> Result<()> {
    let [x_arg, dim_arg, keepdim_arg, values_arg, indices_arg] = args;
    let dim = ctx.int(dim_arg)?;
    let keepdim = ctx.bool(keepdim_arg)?;
    let ([x], [values, indices]) = ctx.io([x_arg], [values_arg, indices_arg])?;
    let x = required(x, x_arg)?;
    if values.dtype != x.dtype || indices.dtype != ScalarType::LONG {
        return Err(bad("max/min.dim output dtypes"));
    }
    if values.shape.sizes() != indices.shape.sizes() {
        return Err(bad("max/min.dim values and indices differ in shape"));
    }
    let plan = ReducePlan::single(&x.shape, Some(dim))?;
    plan.check_out(&values.shape, keepdim)?;
    plan.check_out(&indices.shape, keepdim)?;
    if x.numel() == 0 {
        return Err(bad("max/min.dim of an empty dim"));
    }
    let id = num::slice_mut::<i64>(indices.data)?;
    if id.len() != plan.out_numel {
        return Err(bad("reduction output size"));
    }
    let _ = (&plan, max, &mut *id, &values.data);
    crate::for_real_dtypes!(x.dtype, T => {
            let vd = num::slice_mut::<T>(values.data)?;
            arg_extreme::<T>(&plan, num::slice(x.data)?, max, |o, v, k| {
                *vd.get_mut(o).ok_or(bad("reduction output size"))? = v;
                *id.get_mut(o).ok_or(bad("reduction output size"))? = k;
                Ok(())
            })
        },
        _ => Err(bad_dtype("max/min.dim dtype", x.dtype)))
}

/// `max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max,
/// Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)`:
/// portable `op_max.cpp`.
pub const MAX_DIM_MAX: Kernel = op!(
    "aten::max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    |ctx| max_min_dim_out(ctx, arg!(SCHEMA, [self, dim, keepdim, max, max_values]), true)
);

/// `min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min,
/// Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)`:
/// portable `op_min.cpp`.
pub const MIN_DIM_MIN: Kernel = op!(
    "aten::min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)",
    |ctx| max_min_dim_out(ctx, arg!(SCHEMA, [self, dim, keepdim, min, min_indices]), false)
);

// -------------------------------------------------------------------- var

/// `var.correction_out(Tensor self, int[1]? dim=None, *, Scalar?
/// correction=None, bool keepdim=False, Tensor(a!) out)`, f32: portable
/// `op_var.cpp` `compute_variance`: `sum` (seeded, f32), `mean = sum /
/// (float)num`, `sum2 = Σ (x − mean)·(x − mean)` (seeded, f32), then
/// `sum2 / denominator` in **f64** (`denominator = num − correction` is a
/// double), rounded to f32; NaN when `num == 0` or `denominator <= 0`.
pub const VAR_CORRECTION_OUT: Kernel = op!(
    "aten::var.correction_out(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = opt_dims(ctx, arg!(SCHEMA, dim))?;
        let correction = if ctx.is_null(arg!(SCHEMA, correction))? {
            1.0
        } else {
            ctx.scalar_f64(arg!(SCHEMA, correction))?
        };
        let keepdim = ctx.bool(arg!(SCHEMA, keepdim))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let plan = ReducePlan::new(&x.shape, dims.as_ref().map(|d| d.as_slice()))?;
        plan.check_out(&out.shape, keepdim)?;
        if x.dtype != ScalarType::FLOAT || out.dtype != ScalarType::FLOAT {
            return Err(bad_dtype("var dtype", x.dtype));
        }
        let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
        if od.len() != plan.out_numel {
            return Err(bad("reduction output size"));
        }
        let num = plan.reduced;
        let denominator = num as f64 - correction;
        for (out_ix, o) in od.iter_mut().enumerate() {
            if num == 0 || denominator <= 0.0 {
                *o = f32::NAN;
                continue;
            }
            let Some(sum) = plan.map_reduce(xd, out_ix, |v| v, |v, a| a + v)? else {
                continue; // empty input: upstream leaves the output as is
            };
            let mean = sum / num as f32;
            let sum2 = plan
                .map_reduce(xd, out_ix, |v| (v - mean) * (v - mean), |v, a| a + v)?
                .unwrap_or(0.0);
            *o = (sum2 as f64 / denominator) as f32;
        }
        Ok(())
    }
);

// ----------------------------------------------------------------- cumsum

/// `cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None,
/// Tensor(a!) out)`: portable `op_cumsum.cpp`, in the output dtype:
/// `out[0] = (OUT)x[0]`, `out[j] = (OUT)x[j] + out[j−1]` along `dim`.
pub const CUMSUM_OUT: Kernel = op!(
    "aten::cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dim = ctx.int(arg!(SCHEMA, dim))?;
        let dtype = opt_scalar_type(ctx, arg!(SCHEMA, dtype))?;
        let ([x], [out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        if dtype.is_some_and(|d| d != out.dtype) {
            return Err(bad("dtype differs from the output's"));
        }
        if x.shape.sizes() != out.shape.sizes() || !x.shape.memory_order_matches(out.shape.dim_order()) {
            return Err(bad("cumsum output shape or dim order"));
        }
        let dim = normalize_dim(dim, x.shape.rank())?;
        let _ = dim;
        crate::for_real_dtypes!(out.dtype, A => {
                let load = num::loader::<A>(x.dtype)?;
                let od = num::slice_mut::<A>(out.data)?;
                for_each_slice(&x.shape, dim, |base, stride, size| {
                    let mut prev: Option<A> = None;
                    for j in 0..size {
                        let at = base + j * stride;
                        let v = load(x.data, at).ok_or(bad("cumsum index"))?;
                        let s = match prev {
                            None => v,
                            Some(p) => v.add(p),
                        };
                        *od.get_mut(at).ok_or(bad("cumsum index"))? = s;
                        prev = Some(s);
                    }
                    Ok(())
                })
            },
            _ => Err(bad_dtype("cumsum output dtype", out.dtype)))
    }
);

// ------------------------------------------------------- softmax family

// -------------------------------------------------------------------- any

/// `static_cast<bool>(x)` of element `i` (NaN is true), for Bool and the
/// real dtypes this build selected.
fn truth(t: &TensorView<'_>) -> Result<num::Load<bool>> {
    fn load<T: Real>(data: &[u8], i: usize) -> Option<bool> {
        let size = core::mem::size_of::<T>();
        let bytes = data.get(i.checked_mul(size)?..)?.get(..size)?;
        let v = bytemuck::pod_read_unaligned::<T>(bytes);
        Some(v.is_nan() || v != T::ZERO)
    }
    if t.dtype == ScalarType::BOOL {
        return Ok(load::<u8>);
    }
    crate::for_real_dtypes!(t.dtype, T => Ok(load::<T> as num::Load<bool>),
        _ => Err(bad_dtype("any input dtype", t.dtype)))
}

/// Portable `op_any.cpp`: `out = acc || bool(x)` over the reduced elements
/// (false when there are none), Bool or Byte output. `args`: the positions
/// of `self` and `out`.
fn any_out(
    ctx: &mut KernelContext<'_, '_>,
    dims: Option<&[i64]>,
    keepdim: bool,
    args: [usize; 2],
) -> Result<()> {
    let [x_arg, out_arg] = args;
    let ([x], [out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    if out.dtype != ScalarType::BOOL && out.dtype != ScalarType::BYTE {
        return Err(bad_dtype("any output dtype", out.dtype));
    }
    let plan = ReducePlan::new(&x.shape, dims)?;
    plan.check_out(&out.shape, keepdim)?;
    let load = truth(&x)?;
    if out.data.len() != plan.out_numel {
        return Err(bad("reduction output size"));
    }
    for (out_ix, o) in out.data.iter_mut().enumerate() {
        let mut any = false;
        plan.visit(out_ix, |i, _| {
            any = any || load(x.data, i).ok_or(bad("reduction index"))?;
            Ok(())
        })?;
        *o = u8::from(any);
    }
    Ok(())
}

/// `any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out)`.
pub const ANY_OUT: Kernel = op!(
    "aten::any.out(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dim = [ctx.int(arg!(SCHEMA, dim))?];
        let keepdim = ctx.bool(arg!(SCHEMA, keepdim))?;
        any_out(ctx, Some(&dim), keepdim, arg!(SCHEMA, [self, out]))
    }
);

/// `any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *,
/// Tensor(a!) out)`.
pub const ANY_DIMS_OUT: Kernel = op!(
    "aten::any.dims_out(Tensor self, int[]? dim=None, bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = opt_dims(ctx, arg!(SCHEMA, dim))?;
        let keepdim = ctx.bool(arg!(SCHEMA, keepdim))?;
        any_out(ctx, dims.as_ref().map(|d| d.as_slice()), keepdim, arg!(SCHEMA, [self, out]))
    }
);

/// `any.all_out(Tensor self, *, Tensor(a!) out)`.
pub const ANY_ALL_OUT: Kernel = op!(
    "aten::any.all_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| any_out(ctx, None, false, arg!(SCHEMA, [self, out]))
);

// ------------------------------------------------------------- pooling
