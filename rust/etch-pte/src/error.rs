//! Errors with ExecuTorch's numeric codes.
//!
//! The codes are the values of `executorch::runtime::Error` (`runtime/core/error.h`),
//! so a user who sees `0x23` in a log finds the same meaning in ExecuTorch's docs.
//! Besides the code, an [`Error`] says where (a byte offset into the file, or an
//! index, depending on what failed) and, in builds with the `messages`
//! feature (host tools), what was wrong as a static string.

/// ExecuTorch's `Error` codes (`runtime/core/error.h`). Stored as a `u32`:
/// with `repr(u8)` every `Result` check became a byte compare against the
/// niche value and the core runtime grew by 4 KB on Cortex-M4F.
#[repr(u32)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum ErrorCode {
    Ok = 0x00,
    Internal = 0x01,
    InvalidState = 0x02,
    EndOfMethod = 0x03,
    AlreadyLoaded = 0x04,
    NotSupported = 0x10,
    NotImplemented = 0x11,
    InvalidArgument = 0x12,
    InvalidType = 0x13,
    OperatorMissing = 0x14,
    RegistrationExceedingMaxKernels = 0x15,
    RegistrationAlreadyRegistered = 0x16,
    NotFound = 0x20,
    MemoryAllocationFailed = 0x21,
    AccessFailed = 0x22,
    InvalidProgram = 0x23,
    InvalidExternalData = 0x24,
    OutOfResources = 0x25,
    DelegateInvalidCompatibility = 0x30,
    DelegateMemoryAllocationFailed = 0x31,
    DelegateInvalidHandle = 0x32,
}

impl ErrorCode {
    /// Every code, in numeric order.
    pub const ALL: [ErrorCode; 21] = [
        ErrorCode::Ok,
        ErrorCode::Internal,
        ErrorCode::InvalidState,
        ErrorCode::EndOfMethod,
        ErrorCode::AlreadyLoaded,
        ErrorCode::NotSupported,
        ErrorCode::NotImplemented,
        ErrorCode::InvalidArgument,
        ErrorCode::InvalidType,
        ErrorCode::OperatorMissing,
        ErrorCode::RegistrationExceedingMaxKernels,
        ErrorCode::RegistrationAlreadyRegistered,
        ErrorCode::NotFound,
        ErrorCode::MemoryAllocationFailed,
        ErrorCode::AccessFailed,
        ErrorCode::InvalidProgram,
        ErrorCode::InvalidExternalData,
        ErrorCode::OutOfResources,
        ErrorCode::DelegateInvalidCompatibility,
        ErrorCode::DelegateMemoryAllocationFailed,
        ErrorCode::DelegateInvalidHandle,
    ];

    /// The numeric value ExecuTorch prints ("status 0x23").
    pub const fn as_u32(self) -> u32 {
        self as u32
    }

    /// The code with this numeric value, if there is one.
    pub fn from_u32(value: u32) -> Option<ErrorCode> {
        Self::ALL.iter().copied().find(|c| c.as_u32() == value)
    }

    /// ExecuTorch's name for the code.
    pub const fn name(self) -> &'static str {
        match self {
            ErrorCode::Ok => "Ok",
            ErrorCode::Internal => "Internal",
            ErrorCode::InvalidState => "InvalidState",
            ErrorCode::EndOfMethod => "EndOfMethod",
            ErrorCode::AlreadyLoaded => "AlreadyLoaded",
            ErrorCode::NotSupported => "NotSupported",
            ErrorCode::NotImplemented => "NotImplemented",
            ErrorCode::InvalidArgument => "InvalidArgument",
            ErrorCode::InvalidType => "InvalidType",
            ErrorCode::OperatorMissing => "OperatorMissing",
            ErrorCode::RegistrationExceedingMaxKernels => "RegistrationExceedingMaxKernels",
            ErrorCode::RegistrationAlreadyRegistered => "RegistrationAlreadyRegistered",
            ErrorCode::NotFound => "NotFound",
            ErrorCode::MemoryAllocationFailed => "MemoryAllocationFailed",
            ErrorCode::AccessFailed => "AccessFailed",
            ErrorCode::InvalidProgram => "InvalidProgram",
            ErrorCode::InvalidExternalData => "InvalidExternalData",
            ErrorCode::OutOfResources => "OutOfResources",
            ErrorCode::DelegateInvalidCompatibility => "DelegateInvalidCompatibility",
            ErrorCode::DelegateMemoryAllocationFailed => "DelegateMemoryAllocationFailed",
            ErrorCode::DelegateInvalidHandle => "DelegateInvalidHandle",
        }
    }
}

/// An error: ExecuTorch's code, where (with `at`), and what was wrong (with
/// `messages`).
///
/// One word with neither feature (firmware built without default features,
/// as ExecuTorch reports a bare `Error` code with logging off): every
/// `Result` of a word then comes back in registers on Cortex-M.
/// With `at` (implied by `messages`; the C API always has it) it also says
/// where; with `messages` (host builds: the CLI, tests, the C API with `log`)
/// what, as a static description. Codes are the same either way.
///
/// `at` is a byte offset into the `.pte` file for format errors; other layers
/// use it for the index named in the description (a value, an instruction, a
/// byte count). Read it with [`Error::at`] (0 without the `at` feature).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Error {
    pub code: ErrorCode,
    #[cfg(feature = "at")]
    pub at: u32,
    #[cfg(feature = "messages")]
    pub what: &'static str,
}

impl Error {
    /// Without the `messages` feature `what` is dropped, so none of the
    /// message strings reaches the binary.
    pub const fn new(code: ErrorCode, what: &'static str, at: u32) -> Self {
        #[cfg(not(feature = "messages"))]
        let _ = what;
        #[cfg(not(feature = "at"))]
        let _ = at;
        Error {
            code,
            #[cfg(feature = "at")]
            at,
            #[cfg(feature = "messages")]
            what,
        }
    }

    /// What was wrong; empty without the `messages` feature.
    pub const fn what(&self) -> &'static str {
        #[cfg(feature = "messages")]
        return self.what;
        #[cfg(not(feature = "messages"))]
        ""
    }

    /// Where the error is (see [`Error`]); 0 without the `at` feature.
    pub const fn at(&self) -> u32 {
        #[cfg(feature = "at")]
        return self.at;
        #[cfg(not(feature = "at"))]
        0
    }

    /// The same error at another place (an instruction index, say); the same
    /// error without the `at` feature.
    pub const fn with_at(self, at: u32) -> Self {
        #[cfg(feature = "at")]
        return Error { at, ..self };
        #[cfg(not(feature = "at"))]
        {
            let _ = at;
            self
        }
    }

    /// An `InvalidProgram` error at a byte offset.
    pub(crate) const fn invalid(what: &'static str, at: usize) -> Self {
        Error::new(ErrorCode::InvalidProgram, what, clamp_u32(at))
    }

    pub(crate) const fn not_supported(what: &'static str, at: usize) -> Self {
        Error::new(ErrorCode::NotSupported, what, clamp_u32(at))
    }
}

const fn clamp_u32(v: usize) -> u32 {
    if v > u32::MAX as usize {
        u32::MAX
    } else {
        v as u32
    }
}

pub type Result<T> = core::result::Result<T, Error>;

// Formatting is only linked in when used (host tools); embedded builds never
// call it, so no `core::fmt` code reaches their binaries.
impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{} (0x{:02x}): {} (at {})",
            self.code.name(),
            self.code.as_u32(),
            self.what(),
            self.at()
        )
    }
}

impl core::error::Error for Error {}
