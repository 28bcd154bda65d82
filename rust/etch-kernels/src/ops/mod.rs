//! Adapters: one `Kernel` per operator, reading the instruction's arguments
//! from the runtime and calling the compute functions.
//!
//! `KERNELS` lists every kernel this build selected (cargo features
//! `op-<namespace>-<name>-<overload>`): a `const` slice in flash, exactly as
//! long as the selection. Pass it to `Method::load`.

use etch_runtime::Kernel;

mod prim;

/// Every selected kernel.
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-executorch_prim-et_view-default")]
    prim::ET_VIEW,
    #[cfg(feature = "op-aten-sym_size-int")]
    prim::SYM_SIZE_INT,
];

/// Number of selected kernels: the registry's exact capacity.
pub const KERNEL_COUNT: usize = KERNELS.len();
