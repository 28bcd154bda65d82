//! Copies that keep the elements and change the view: `view_copy`,
//! `permute_copy`, `squeeze_copy`, `unsqueeze_copy`, `expand_copy`,
//! `transpose_copy`, `t_copy`.

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Error, ErrorCode, Kernel, KernelContext, Result};

use super::slice::move_into;
use crate::ops::bad;
use crate::ops::copy::{
    strided as copy,
    walk::{norm_dim, signed_strides, sizes_of, MAX_WALK},
};
use crate::ops::dynamic::{self, Sizes};

/// `permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)`.
pub const PERMUTE_COPY_OUT: Kernel = op!(
    "aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = ctx.int_list(arg!(SCHEMA, dims))?;
        if ctx.has_dynamic_shapes() {
            // out.size(i) = self.size(dims[i]).
            let (x, mut sizes) = (Sizes::of(ctx, arg!(SCHEMA, self))?, Sizes::new());
            let rank = x.as_slice().len() as i64;
            for &d in dims.as_slice() {
                let d = if d < 0 { d + rank } else { d };
                let s = usize::try_from(d).ok().and_then(|d| x.as_slice().get(d));
                sizes.push(*s.ok_or(bad("permute dims"))?)?;
            }
            dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        copy::permute(&required(x, arg!(SCHEMA, self))?, dims.as_slice(), &mut out)
    }
);

/// `view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)`: same
/// elements in logical order, new sizes.
pub const VIEW_COPY_OUT: Kernel = op!(
    "aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        if ctx.has_dynamic_shapes() {
            let numel = ctx.tensor_info(arg!(SCHEMA, self))?.1.numel();
            let sizes = dynamic::view_sizes(ctx, arg!(SCHEMA, size), numel)?;
            dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([x], [out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        if x.dtype != out.dtype || x.numel() != out.numel() {
            return Err(bad("view_copy size or dtype"));
        }
        if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "view_copy of a non-contiguous tensor",
                0,
            ));
        }
        etch_runtime::memory::copy_slice(out.data, x.data);
        Ok(())
    }
);

/// Copy ops whose output has the input's elements in logical order under
/// new sizes (`unsqueeze_copy`, `squeeze_copy`): contiguous only. `args`:
/// the positions of `self` and `out`.
fn reshape_copy(ctx: &mut KernelContext<'_, '_>, args: [usize; 2]) -> Result<()> {
    let [x_arg, out_arg] = args;
    let ([x], [out]) = ctx.io([x_arg], [out_arg])?;
    let x = required(x, x_arg)?;
    if x.dtype != out.dtype
        || x.numel() != out.numel()
        || !x.shape.is_contiguous()
        || !out.shape.is_contiguous()
    {
        return Err(bad("reshape copy shapes"));
    }
    etch_runtime::memory::copy_slice(out.data, x.data);
    Ok(())
}

/// `unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out)`.
pub const UNSQUEEZE_COPY_OUT: Kernel = op!(
    "aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| reshape_copy(ctx, arg!(SCHEMA, [self, out]))
);

/// `squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)`.
pub const SQUEEZE_COPY_DIMS_OUT: Kernel = op!(
    "aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| reshape_copy(ctx, arg!(SCHEMA, [self, out]))
);

/// `expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False,
/// Tensor(a!) out)`: broadcast copy (stride 0 along expanded dimensions).
pub const EXPAND_COPY_OUT: Kernel = op!(
    "aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        if ctx.has_dynamic_shapes() {
            // `size`, -1 keeping self's size (aligned from the end).
            let (x, list) = (Sizes::of(ctx, arg!(SCHEMA, self))?, ctx.int_list(arg!(SCHEMA, size))?);
            let (x, list) = (x.as_slice(), list.as_slice());
            let mut sizes = Sizes::new();
            for (d, &s) in list.iter().enumerate() {
                let own = (d + x.len()).checked_sub(list.len()).and_then(|k| x.get(k));
                sizes.push(match (s, own) {
                    (-1, Some(&o)) => o,
                    (s, _) if s >= 0 => s,
                    _ => return Err(bad("expand size")),
                })?;
            }
            dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([x], [out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let strides = crate::ops::elementwise::broadcast_strides(&x.shape, &out.shape)?;
        let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
        let (os, sizes) = (out.shape.strides(), out.shape);
        copy::strided_copy(x.data, &strides, out.data, &os, sizes.sizes(), elem)
    }
);

/// `out` = `x` with dimensions `d0` and `d1` swapped.
pub fn transpose(
    x: &TensorView<'_>,
    d0: usize,
    d1: usize,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let mut strides = signed_strides(&x.shape);
    if out.shape.rank() != rank {
        return Err(bad("transpose output rank"));
    }
    strides.swap(d0.min(MAX_WALK - 1), d1.min(MAX_WALK - 1));
    for d in 0..rank {
        let src = if d == d0 {
            d1
        } else if d == d1 {
            d0
        } else {
            d
        };
        if out.shape.size(d as isize) != x.shape.size(src as isize) {
            return Err(bad("transpose output shape"));
        }
    }
    let sizes = sizes_of(&out.shape);
    move_into(x, 0, &strides, out, sizes.get(..rank).unwrap_or(&[]))
}

/// `transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!)
/// out)` (a 0-dim tensor accepts dims 0 and −1).
pub const TRANSPOSE_COPY_INT_OUT: Kernel = op!(
    "aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (d0, d1) = (ctx.int(arg!(SCHEMA, dim0))?, ctx.int(arg!(SCHEMA, dim1))?);
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let r = x.shape.rank().max(1);
        let (d0, d1) = (norm_dim(d0, r)?, norm_dim(d1, r)?);
        transpose(&x, d0, d1, &mut out)
    }
);

/// `t_copy.out(Tensor self, *, Tensor(a!) out)`: rank ≤ 2; a copy below
/// rank 2.
pub const T_COPY_OUT: Kernel = op!(
    "aten::t_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        match x.shape.rank() {
            0 | 1 => transpose(&x, 0, 0, &mut out),
            2 => transpose(&x, 0, 1, &mut out),
            _ => Err(bad("t_copy of a tensor of rank > 2")),
        }
    }
);
