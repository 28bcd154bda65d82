//! `clone`, `alias_copy`: the same elements into another tensor; `copy_`:
//! into a tensor in place (a mutable buffer's write).

use etch_runtime::context::required;
use etch_runtime::{arg, op, Kernel};

use crate::ops::bad;

use super::strided as copy;
use crate::ops::shape::view::transpose;

/// `clone.out(Tensor self, *, MemoryFormat? memory_format, Tensor(a!) out)`.
pub const CLONE_OUT: Kernel = op!(
    "aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        crate::ops::dynamic::resize_like(ctx, arg!(SCHEMA, out), arg!(SCHEMA, self))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        copy::copy_tensor(&required(x, arg!(SCHEMA, self))?, &mut out)
    }
);

/// `alias_copy.out(Tensor self, *, Tensor(a!) out)`: a copy.
pub const ALIAS_COPY_OUT: Kernel = op!(
    "aten::alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        transpose(&x, 0, 0, &mut out)
    }
);

/// `copy_(Tensor(a!) self, Tensor src, bool non_blocking=False)`: `src`
/// broadcast into `self`, in place: what the exporter emits to write a
/// mutable buffer (`buf.copy_(x)`, and `buf.add_(x)` as `add.out` then
/// `copy_`). Portable `op_copy.cpp`: `non_blocking` must be false, same
/// dtype, `src` broadcastable to `self`, any dtype (a byte copy).
pub const COPY_: Kernel = op!(
    "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)",
    |ctx| {
        if ctx.bool(arg!(SCHEMA, non_blocking))? {
            return Err(bad("copy_: non_blocking"));
        }
        let ([src], [out]) = ctx.io(arg!(SCHEMA, [src]), arg!(SCHEMA, [self]))?;
        let src = required(src, arg!(SCHEMA, src))?;
        if src.dtype != out.dtype {
            return Err(bad("copy_: dtypes differ"));
        }
        let strides = crate::ops::elementwise::broadcast_strides(&src.shape, &out.shape)?;
        let elem = src.dtype.element_size().ok_or(bad("unsized dtype"))?;
        let (os, sizes) = (out.shape.strides(), out.shape);
        copy::strided_copy(src.data, &strides, out.data, &os, sizes.sizes(), elem)
    }
);
