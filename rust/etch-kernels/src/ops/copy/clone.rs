//! `clone`, `alias_copy`: the same elements into another tensor.

use etch_runtime::context::required;
use etch_runtime::{op, Kernel};

use super::strided as copy;
use crate::ops::shape::view::transpose;

/// `clone.out(Tensor self, *, MemoryFormat? memory_format, Tensor(a!) out)`.
pub const CLONE_OUT: Kernel = op!(
    "aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        crate::ops::dynamic::resize_like(ctx, 2, 0)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        copy::copy_tensor(&required(x, 0)?, &mut out)
    }
);

/// `alias_copy.out(Tensor self, *, Tensor(a!) out)`: a copy.
pub const ALIAS_COPY_OUT: Kernel = op!(
    "aten::alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io([0], [1])?;
        let x = required(x, 0)?;
        transpose(&x, 0, 0, &mut out)
    }
);
