//! Copies: the kernels that copy a tensor whole (`clone`, `alias_copy`,
//! `copy_` in place,
//! `dim_order_ops::_clone_dim_order`, `dim_order_ops::_to_dim_order_copy`)
//! and the copy engines every data-movement kernel runs on: [`walk`]
//! (strided walks over any dim order, dtype conversions), [`strided`]
//! (layout-changing copies) and [`bytes`] (bulk byte copies).

use etch_runtime::Kernel;

pub(crate) mod bytes;
pub mod clone;
pub mod dim_order;
pub(crate) mod strided;
pub(crate) mod walk;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `copy-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-clone-out")]
    clone::CLONE_OUT,
    #[cfg(feature = "op-dim_order_ops-_clone_dim_order-out")]
    dim_order::CLONE_DIM_ORDER_OUT,
    #[cfg(feature = "op-dim_order_ops-_to_dim_order_copy-out")]
    dim_order::TO_DIM_ORDER_COPY_OUT,
    #[cfg(feature = "op-aten-alias_copy-out")]
    clone::ALIAS_COPY_OUT,
    #[cfg(feature = "op-aten-copy_-")]
    clone::COPY_,
];
