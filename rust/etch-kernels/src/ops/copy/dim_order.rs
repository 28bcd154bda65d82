//! `dim_order_ops::*`: copies that change (or keep) the memory layout.

use etch_runtime::context::{required, IntList};
use etch_runtime::{arg, op, Error, ErrorCode, Kernel, KernelContext, Result, Shape};

use super::strided as copy;

/// Reads the `dim_order` argument (if given) to check against the output's
/// own dim order once `io` has resolved the output (each tensor is resolved
/// once): the export writes both; they must agree. `args`: the positions
/// of `non_blocking` and `dim_order`.
fn dim_order_arg(ctx: &KernelContext<'_, '_>, args: [usize; 2]) -> Result<Option<IntList>> {
    let [non_blocking, order] = args;
    // check__to_dim_order_copy_args / check__clone_dim_order_args:
    // `non_blocking` must be false.
    if ctx.bool(non_blocking)? {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "non_blocking must be false",
            0,
        ));
    }
    if ctx.is_null(order)? {
        return Ok(None);
    }
    ctx.int_list(order).map(Some)
}

/// Fails unless `order` (the `dim_order` argument, if given) lays bytes out
/// as `shape` does.
fn check_dim_order(order: Option<IntList>, shape: &Shape) -> Result<()> {
    let Some(order) = order else {
        return Ok(());
    };
    let same = order.len() == shape.rank()
        && order
            .as_slice()
            .iter()
            .zip(shape.dim_order())
            .all(|(&a, &b)| a == b as i64);
    if !same && !shape.memory_order_matches(&order_bytes(order.as_slice())) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "dim_order argument differs from output",
            0,
        ));
    }
    Ok(())
}

fn order_bytes(order: &[i64]) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (slot, &o) in b.iter_mut().zip(order) {
        *slot = o as u8;
    }
    b
}

/// `_clone_dim_order.out(Tensor self, *, bool non_blocking=False,
/// int[]? dim_order=None, Tensor(a!) out)`.
pub const CLONE_DIM_ORDER_OUT: Kernel = op!(
    "dim_order_ops::_clone_dim_order.out(Tensor self, *, bool non_blocking=False, int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let order = dim_order_arg(ctx, arg!(SCHEMA, [non_blocking, dim_order]))?;
        crate::ops::dynamic::resize_like(ctx, arg!(SCHEMA, out), arg!(SCHEMA, self))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        check_dim_order(order, &out.shape)?;
        copy::copy_tensor(&required(x, arg!(SCHEMA, self))?, &mut out)
    }
);

/// `_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False,
/// int[]? dim_order=None, Tensor(a!) out)`: a copy, or with a dtype change
/// a `static_cast` per element (`elementwise::convert`).
pub const TO_DIM_ORDER_COPY_OUT: Kernel = op!(
    "dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let order = dim_order_arg(ctx, arg!(SCHEMA, [non_blocking, dim_order]))?;
        crate::ops::dynamic::resize_like(ctx, arg!(SCHEMA, out), arg!(SCHEMA, self))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        check_dim_order(order, &out.shape)?;
        let x = required(x, arg!(SCHEMA, self))?;
        if x.dtype != out.dtype {
            return crate::ops::elementwise::convert(&x, &mut out);
        }
        copy::copy_tensor(&x, &mut out)
    }
);
