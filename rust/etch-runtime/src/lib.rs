//! The etch executor: ExecuTorch's `Program` / `MethodMeta` / `Method` model
//! without a heap, without static initializers and without aborts.
//!
//! ```text
//! Program::load(loader, verification)         the .pte, read in place (flash)
//!   └─ method_meta("forward")                 I/O, planned buffer sizes, exact state bytes
//!        └─ Method::load(meta, state, planned, kernels, backends)
//!             ├─ set_input(i, bytes)          copy into the planned input
//!             ├─ execute()                    instruction loop → kernels / delegates
//!             └─ output(i)                    typed view into the planned output
//! ```
//!
//! Memory: the caller owns every byte. `MethodMeta::method_state_bytes(kernels)` is the
//! exact size of the `state` buffer `Method::load` takes (per-instruction kernel
//! indices, delegate handles, runtime-written values, input flags, each kernel
//! call's arguments decoded at load, kernel scratch): tensor sizes, dim orders
//! and constants stay in place in the program. Planned buffers (one per memory id) hold activations,
//! inputs and outputs as the exporter's memory plan placed them.
#![no_std]
#![forbid(unsafe_code)]

#[macro_use]
mod log;

pub mod backend;
mod calls;
pub mod context;
mod dims;
pub mod loader;
pub mod memory;
pub mod meta;
pub mod method;
mod overrides;
pub mod program;
pub mod registry;
pub mod signature;
mod state;
pub mod tensor;
mod values;

pub use backend::{Backend, DelegateHandle};
pub use context::KernelContext;
pub use etch_pte::{Error, ErrorCode, Result, ScalarType, ValueKind};
pub use loader::{BufferDataLoader, DataLoader, SegmentInfo};
pub use meta::{MethodMeta, TensorInfo};
pub use method::{ExecutionObserver, InstructionValues, Method, Output};
pub use program::{Program, Verification};
pub use registry::{ArgKind, Kernel, KernelFn, Registry};
pub use tensor::{Shape, Sizes, TensorView, TensorViewMut};

/// Alignment `Method::load` requires of every planned buffer: the exporter's
/// memory planner aligns offsets to 16, and CMSIS-NN-style kernels load
/// 32-bit words from them.
pub const PLANNED_BUFFER_ALIGNMENT: usize = 16;

/// Most memory ids (planned buffers) one method may use.
pub const MAX_MEMORY_IDS: usize = 8;

/// Default cap on instructions per `execute`, against malformed jump loops
/// (ExecuTorch's `ET_MAX_INSTRUCTIONS`).
pub const DEFAULT_INSTRUCTION_LIMIT: u32 = 10_000_000;
