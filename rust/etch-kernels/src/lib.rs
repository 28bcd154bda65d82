//! Operator kernels for etch, bit-exact with ExecuTorch.
//!
//! - [`ops`]: the kernels the registry ([`KERNELS`]) holds, one folder per
//!   operator family, one `op!` line per operator; they read a call's
//!   arguments through the runtime's `KernelContext` and compute with
//!   ExecuTorch's portable arithmetic (`aten::*`, `quantized_decomposed::*`,
//!   `dim_order_ops::*`) or call [`cortex_m`];
//! - [`cortex_m`]: CMSIS-NN's int8 arithmetic as pure functions over NHWC
//!   slices, one module per operator with its ISA variants (scalar, DSP,
//!   Helium, x86-64 SSE2) side by side;
//! - [`math`]: the libm ports and geometry helpers the float kernels share.
#![no_std]

pub mod cortex_m;
pub mod error;
pub(crate) mod math;
pub mod ops;

pub use error::{KernelError, KernelResult};
pub use ops::KERNELS;
