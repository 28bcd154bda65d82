//! Operator kernels for etch, bit-exact with ExecuTorch.
//!
//! - [`ops`]: the kernels the registry ([`KERNELS`]) holds, one `op!` line
//!   per operator; they read a call's arguments through the runtime's
//!   `KernelContext` and compute with ExecuTorch's portable arithmetic
//!   (`aten::*`, `quantized_decomposed::*`, `dim_order_ops::*`) or call
//!   [`cortex_m`];
//! - [`cortex_m`]: CMSIS-NN's int8 arithmetic as pure functions over NHWC
//!   slices, one module per operator with its scalar and DSP variants.
#![no_std]

pub mod cortex_m;
pub mod error;
pub mod ops;

pub use error::{KernelError, KernelResult};
pub use ops::KERNELS;
