//! Zero-copy, bounds-checked views over ExecuTorch `.pte` program files.
//!
//! `etch-pte` knows the file format and nothing else: it reads the flatbuffer
//! written by upstream ExecuTorch (`schema/program.fbs`, file identifier `ET12`,
//! optional `eh00` extended header, segments) in place, without allocating and
//! without trusting the file.
//!
//! ```no_run
//! # fn f(bytes: &[u8]) -> Result<(), etch_pte::Error> {
//! let file = etch_pte::PteFile::new_checked(bytes)?;   // verify once
//! let plan = file.plan("forward")?;
//! for op in plan.operators()?.iter() {
//!     let op = op?;                                     // cannot fail after new_checked
//!     let _ = (op.name()?, op.overload()?);
//! }
//! # Ok(()) }
//! ```
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "builder")]
extern crate alloc;

#[cfg(feature = "builder")]
pub mod builder;
pub mod error;
pub mod file;
pub mod flatbuffer;
pub mod schema;
pub mod tensor;
pub mod types;
pub mod verify;

pub use error::{Error, ErrorCode, Result};
pub use file::{ExtendedHeader, PteFile};
pub use flatbuffer::{Table, Vector};
pub use schema::{InstructionArgs, Value};
pub use types::{InstructionKind, ScalarType, ShapeDynamism, ValueKind};
