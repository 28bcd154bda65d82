//! Tensors put together: `cat`, `stack`.

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, KernelContext, Result};

use crate::ops::bad;
use crate::ops::copy::{
    strided as copy,
    walk::{copy_walk, elem_size, norm_dim, signed_strides, Side, MAX_WALK},
};

/// `cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)`: inputs placed
/// one after another along `dim`; empty 1-D inputs are skipped as upstream.
pub const CAT_OUT: Kernel = op!(CAT, cat_out);

const CAT: &str = "aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)";

fn cat_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = CAT;
    let n = ctx.tensor_list_len(arg!(S, tensors))?;
    let dim = ctx.int(arg!(S, dim))?;
    let out_value = ctx.value_index(arg!(S, out))?;
    if ctx.has_dynamic_shapes() {
        cat_resize(ctx, n, dim)?;
    }
    let mut offset = 0usize; // position along `dim`
    for k in 0..n {
        let v = ctx.tensor_list_item(arg!(S, tensors), k)?;
        let ([x], [out]) = ctx.io_values([Some(v)], [out_value])?;
        let x = required(x, arg!(S, tensors))?;
        if x.numel() == 0 {
            continue;
        }
        let rank = out.shape.rank() as i64;
        let d = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&d) || x.shape.rank() != out.shape.rank() || x.dtype != out.dtype {
            return Err(bad("cat shapes"));
        }
        let d = d as usize;
        let os = out.shape.strides();
        let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
        let start = offset * os.get(d).copied().unwrap_or(0) * elem;
        let dst = out.data.get_mut(start..).ok_or(bad("cat offset"))?;
        copy::strided_copy(x.data, &x.shape.strides(), dst, &os, x.shape.sizes(), elem)?;
        offset += x.shape.size(d as isize);
    }
    Ok(())
}

/// Resizes `cat`'s output to its inputs' current sizes: the first
/// non-empty input's, with `dim` the sum of theirs (upstream's
/// `get_cat_out_target_size`; mismatches are refused by `cat_out`).
fn cat_resize(ctx: &mut KernelContext<'_, '_>, n: usize, dim: i64) -> Result<()> {
    const S: &str = CAT;
    let mut sizes = crate::ops::dynamic::Sizes::new();
    let mut total = 0i64;
    let mut d = 0usize;
    for k in 0..n {
        let v = ctx.tensor_list_item(arg!(S, tensors), k)?;
        let ([x], []) = ctx.io_values([Some(v)], [])?;
        let x = required(x, arg!(S, tensors))?;
        if x.numel() == 0 {
            continue;
        }
        let rank = x.shape.rank() as i64;
        if sizes.as_slice().is_empty() {
            d = usize::try_from(if dim < 0 { dim + rank } else { dim })
                .map_err(|_| bad("cat shapes"))?;
            for s in x.shape.sizes().iter() {
                sizes.push(s as i64)?;
            }
        }
        total = total.saturating_add(x.shape.size(d as isize) as i64);
    }
    if sizes.as_slice().is_empty() {
        return Ok(());
    }
    sizes.set(d, total);
    crate::ops::dynamic::resize(ctx, arg!(S, out), &sizes)
}

/// `stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)`: inputs of
/// one shape placed along a new dimension `dim ∈ [-(rank+1), rank]`.
pub const STACK_OUT: Kernel = op!(
    "aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (n, dim) = (
            ctx.tensor_list_len(arg!(SCHEMA, tensors))?,
            ctx.int(arg!(SCHEMA, dim))?,
        );
        let out_value = ctx.value_index(arg!(SCHEMA, out))?;
        if n == 0 {
            return Err(bad("stack of no tensors"));
        }
        for k in 0..n {
            let v = ctx.tensor_list_item(arg!(SCHEMA, tensors), k)?;
            let ([x], [mut out]) = ctx.io_values([Some(v)], [out_value])?;
            stack_one(&required(x, arg!(SCHEMA, tensors))?, k, n, dim, &mut out)?;
        }
        Ok(())
    }
);

/// Places input `k` of `n` at index `k` of the new dimension `dim` of `out`.
pub(super) fn stack_one(
    x: &TensorView<'_>,
    k: usize,
    n: usize,
    dim: i64,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let dim = norm_dim(dim, rank + 1)?;
    if out.shape.rank() != rank + 1 || out.shape.size(dim as isize) != n || x.dtype != out.dtype {
        return Err(bad("stack output shape"));
    }
    let os = signed_strides(&out.shape);
    let (mut dst_strides, mut sizes) = ([0isize; MAX_WALK], [0usize; MAX_WALK]);
    for d in 0..rank {
        let od = if d < dim { d } else { d + 1 };
        let size = x.shape.size(d as isize);
        if out.shape.size(od as isize) != size {
            return Err(bad("stack input shapes"));
        }
        if let (Some(st), Some(sz)) = (dst_strides.get_mut(d), sizes.get_mut(d)) {
            *st = os.get(od).copied().unwrap_or(0);
            *sz = size;
        }
    }
    let elem = elem_size(x.dtype)?;
    let base = k * out.shape.strides().get(dim).copied().unwrap_or(0);
    copy_walk(
        sizes.get(..rank).unwrap_or(&[]),
        x.data,
        Side::new(0, &signed_strides(&x.shape)),
        out.data,
        Side::new(base, &dst_strides),
        elem,
    )
}
