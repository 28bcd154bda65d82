//! `_softmax`, `_log_softmax` (f32): the softmax family normalizes along
//! one dimension with the reduction walk of [`crate::ops::reduce`].

use etch_runtime::context::required;
use etch_runtime::{arg, op, Kernel, KernelContext, Result, ScalarType};

use crate::ops::bad;
use crate::ops::reduce::{bad_dtype, for_each_slice, normalize_dim};

/// Softmax over one slice, f32 (`op_softmax.cpp` / `op_log_softmax.cpp`):
/// `m = x0; m = std::max(x_i, m)` (i.e. `x_i` only if `m < x_i`),
/// `s = exp(x0 − m); s = s + exp(x_i − m)` sequentially, then softmax
/// `exp(x_i − m) / s` (exp recomputed, divided) or log-softmax
/// `(x_i − m) − logf(s)`.
fn softmax_slice(
    x: &[f32],
    out: &mut [f32],
    base: usize,
    stride: usize,
    size: usize,
    log: bool,
) -> Result<()> {
    let at = |j: usize| base + j * stride;
    let get = |j: usize| x.get(at(j)).copied().ok_or(bad("softmax index"));
    let mut m = get(0)?;
    for j in 1..size {
        let v = get(j)?;
        m = if m < v { v } else { m };
    }
    let mut s = crate::math::expf::expf(get(0)? - m);
    for j in 1..size {
        s += crate::math::expf::expf(get(j)? - m);
    }
    let ls = if log { crate::math::logf::logf(s) } else { 0.0 };
    for j in 0..size {
        let v = get(j)?;
        *out.get_mut(at(j)).ok_or(bad("softmax index"))? = if log {
            (v - m) - ls
        } else {
            crate::math::expf::expf(v - m) / s
        };
    }
    Ok(())
}

/// `args`: the positions of `self`, `dim`, `half_to_float` and `out`.
fn softmax_out(ctx: &mut KernelContext<'_, '_>, args: [usize; 4], log: bool) -> Result<()> {
    let [x_arg, dim_arg, half_arg, out_arg] = args;
    let dim = ctx.int(dim_arg)?;
    if ctx.bool(half_arg)? {
        return Err(bad("softmax half_to_float"));
    }
    if ctx.has_dynamic_shapes() {
        crate::ops::dynamic::resize_like(ctx, out_arg, x_arg)?;
    }
    let ([x], [mut out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    if x.dtype != out.dtype
        || x.shape.sizes() != out.shape.sizes()
        || !x.shape.memory_order_matches(out.shape.dim_order())
    {
        return Err(bad("softmax output dtype, shape or dim order"));
    }
    let dim = normalize_dim(dim, x.shape.rank())?;
    if x.dtype != ScalarType::FLOAT {
        return Err(bad_dtype("softmax dtype", x.dtype));
    }
    let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
    for_each_slice(&x.shape, dim, |base, stride, size| {
        if size == 0 {
            return Ok(());
        }
        softmax_slice(xd, od, base, stride, size, log)
    })
}

/// `_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!)
/// out)`, f32, any dim and dim order: portable `op_softmax.cpp`.
pub const SOFTMAX_OUT: Kernel = op!(
    "aten::_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| softmax_out(ctx, arg!(SCHEMA, [self, dim, half_to_float, out]), false)
);

/// `_log_softmax.out(Tensor self, int dim, bool half_to_float, *,
/// Tensor(a!) out)`, f32: portable `op_log_softmax.cpp`. The pip runtime
/// registers the optimized `_log_softmax` instead (vectorized sums).
pub const LOG_SOFTMAX_OUT: Kernel = op!(
    "aten::_log_softmax.out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| softmax_out(ctx, arg!(SCHEMA, [self, dim, half_to_float, out]), true)
);
