//! Primitive ops the exporter emits for views and symbolic sizes.

use etch_runtime::{op, Error, ErrorCode, Kernel, KernelContext, Result};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `prim-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-executorch_prim-et_view-default")]
    ET_VIEW,
    #[cfg(feature = "op-aten-sym_size-int")]
    SYM_SIZE_INT,
];

/// `executorch_prim::et_view.default(Tensor self, int[] size) -> Tensor`:
/// emitted with exactly 3 arguments `[self, size, out]`; the output shares
/// the input's data (`kernels/prim_ops/et_view.cpp`).
#[allow(dead_code)]
pub const ET_VIEW: Kernel = op!(
    "executorch_prim::et_view.default(Tensor self, int[] size) -> Tensor",
    et_view
);

fn et_view(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let (in_dtype, in_shape) = ctx.tensor_info(0)?;
    let (out_dtype, out_shape) = ctx.tensor_info(2)?;
    if in_dtype != out_dtype || in_shape.numel() != out_shape.numel() || !in_shape.is_contiguous() {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "et_view shapes differ",
            0,
        ));
    }
    ctx.alias(2, 0)
}

/// `aten::sym_size.int(Tensor self, int dim) -> SymInt`.
#[allow(dead_code)]
pub const SYM_SIZE_INT: Kernel = op!(
    "aten::sym_size.int(Tensor self, int dim) -> SymInt",
    sym_size_int
);

fn sym_size_int(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let (_, shape) = ctx.tensor_info(0)?;
    let dim = ctx.int(1)?;
    let rank = shape.rank() as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&d) {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "sym_size dim out of range",
            1,
        ));
    }
    ctx.set_int(2, shape.size(d as isize) as i64)
}
