//! Operator kernels for etch.
//!
//! Two layers:
//! - pure compute functions over typed slices, one module per operator family
//!   (`cortex_m`, `portable`, `quantized`), each documenting the upstream
//!   arithmetic it reproduces bit for bit;
//! - thin adapters that read a kernel call's arguments from the runtime and
//!   call the compute functions (added with the runtime's kernel interface).
#![no_std]

pub mod cortex_m;
pub mod error;
pub mod ops;
pub mod portable;
pub mod quantized;

pub use error::{KernelError, KernelResult};
pub use ops::KERNELS;
