//! The error type of the compute functions.
//!
//! Compute functions validate their slices and parameters up front and return
//! one of these instead of panicking; the adapters turn it into the runtime's
//! `Error` with ExecuTorch's code.

/// Why a compute function refused its arguments.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum KernelError {
    /// Shapes, lengths or parameters are inconsistent (ExecuTorch
    /// `InvalidArgument`, 0x12).
    InvalidArgument,
    /// A valid configuration etch does not implement (`NotSupported`, 0x10).
    NotSupported,
    /// An element type the kernel (or this build's dtype selection) lacks
    /// (`InvalidType`, 0x13).
    InvalidType,
}

impl KernelError {
    pub const fn code(self) -> etch_runtime::ErrorCode {
        match self {
            KernelError::InvalidArgument => etch_runtime::ErrorCode::InvalidArgument,
            KernelError::NotSupported => etch_runtime::ErrorCode::NotSupported,
            KernelError::InvalidType => etch_runtime::ErrorCode::InvalidType,
        }
    }
}

impl From<KernelError> for etch_runtime::Error {
    fn from(e: KernelError) -> Self {
        let what = match e {
            KernelError::InvalidArgument => "kernel arguments inconsistent",
            KernelError::NotSupported => "kernel configuration not supported",
            KernelError::InvalidType => "kernel dtype not supported",
        };
        etch_runtime::Error::new(e.code(), what, 0)
    }
}

pub type KernelResult<T = ()> = core::result::Result<T, KernelError>;
