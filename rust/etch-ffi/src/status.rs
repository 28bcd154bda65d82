//! Status codes (ExecuTorch's numeric `Error` values) and error detail.

use core::ffi::c_char;

use etch_runtime::{Error, ErrorCode};

/// Result of every fallible call: ExecuTorch's numeric error code
/// (`ETCH_OK` = 0). A plain integer rather than a C enum, so a value C
/// passes in (`etch_status_str`) can never be an invalid Rust enum.
pub type etch_status_t = u32;

pub const ETCH_OK: etch_status_t = 0x00;
pub const ETCH_INTERNAL: etch_status_t = 0x01;
pub const ETCH_INVALID_STATE: etch_status_t = 0x02;
pub const ETCH_END_OF_METHOD: etch_status_t = 0x03;
pub const ETCH_ALREADY_LOADED: etch_status_t = 0x04;
pub const ETCH_NOT_SUPPORTED: etch_status_t = 0x10;
pub const ETCH_NOT_IMPLEMENTED: etch_status_t = 0x11;
pub const ETCH_INVALID_ARGUMENT: etch_status_t = 0x12;
pub const ETCH_INVALID_TYPE: etch_status_t = 0x13;
pub const ETCH_OPERATOR_MISSING: etch_status_t = 0x14;
pub const ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS: etch_status_t = 0x15;
pub const ETCH_REGISTRATION_ALREADY_REGISTERED: etch_status_t = 0x16;
pub const ETCH_NOT_FOUND: etch_status_t = 0x20;
pub const ETCH_MEMORY_ALLOCATION_FAILED: etch_status_t = 0x21;
pub const ETCH_ACCESS_FAILED: etch_status_t = 0x22;
pub const ETCH_INVALID_PROGRAM: etch_status_t = 0x23;
pub const ETCH_INVALID_EXTERNAL_DATA: etch_status_t = 0x24;
pub const ETCH_OUT_OF_RESOURCES: etch_status_t = 0x25;
pub const ETCH_DELEGATE_INVALID_COMPATIBILITY: etch_status_t = 0x30;
pub const ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED: etch_status_t = 0x31;
pub const ETCH_DELEGATE_INVALID_HANDLE: etch_status_t = 0x32;

// The C names must keep the runtime's (= ExecuTorch's) numbers.
const _: () = {
    use ErrorCode as E;
    let pairs = [
        (ETCH_OK, E::Ok),
        (ETCH_INTERNAL, E::Internal),
        (ETCH_INVALID_STATE, E::InvalidState),
        (ETCH_END_OF_METHOD, E::EndOfMethod),
        (ETCH_ALREADY_LOADED, E::AlreadyLoaded),
        (ETCH_NOT_SUPPORTED, E::NotSupported),
        (ETCH_NOT_IMPLEMENTED, E::NotImplemented),
        (ETCH_INVALID_ARGUMENT, E::InvalidArgument),
        (ETCH_INVALID_TYPE, E::InvalidType),
        (ETCH_OPERATOR_MISSING, E::OperatorMissing),
        (
            ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS,
            E::RegistrationExceedingMaxKernels,
        ),
        (
            ETCH_REGISTRATION_ALREADY_REGISTERED,
            E::RegistrationAlreadyRegistered,
        ),
        (ETCH_NOT_FOUND, E::NotFound),
        (ETCH_MEMORY_ALLOCATION_FAILED, E::MemoryAllocationFailed),
        (ETCH_ACCESS_FAILED, E::AccessFailed),
        (ETCH_INVALID_PROGRAM, E::InvalidProgram),
        (ETCH_INVALID_EXTERNAL_DATA, E::InvalidExternalData),
        (ETCH_OUT_OF_RESOURCES, E::OutOfResources),
        (
            ETCH_DELEGATE_INVALID_COMPATIBILITY,
            E::DelegateInvalidCompatibility,
        ),
        (
            ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED,
            E::DelegateMemoryAllocationFailed,
        ),
        (ETCH_DELEGATE_INVALID_HANDLE, E::DelegateInvalidHandle),
    ];
    assert!(pairs.len() == ErrorCode::ALL.len());
    let mut i = 0;
    while i < pairs.len() {
        assert!(pairs[i].0 == pairs[i].1.as_u32());
        assert!(pairs[i].1.as_u32() == ErrorCode::ALL[i].as_u32());
        i += 1;
    }
};

/// ExecuTorch's name for `status` ("InvalidProgram"), as a static
/// NUL-terminated string; "Unknown" for a value that is not a status code.
#[no_mangle]
pub extern "C" fn etch_status_str(status: etch_status_t) -> *const c_char {
    let s: &'static core::ffi::CStr = match status {
        ETCH_OK => c"Ok",
        ETCH_INTERNAL => c"Internal",
        ETCH_INVALID_STATE => c"InvalidState",
        ETCH_END_OF_METHOD => c"EndOfMethod",
        ETCH_ALREADY_LOADED => c"AlreadyLoaded",
        ETCH_NOT_SUPPORTED => c"NotSupported",
        ETCH_NOT_IMPLEMENTED => c"NotImplemented",
        ETCH_INVALID_ARGUMENT => c"InvalidArgument",
        ETCH_INVALID_TYPE => c"InvalidType",
        ETCH_OPERATOR_MISSING => c"OperatorMissing",
        ETCH_REGISTRATION_EXCEEDING_MAX_KERNELS => c"RegistrationExceedingMaxKernels",
        ETCH_REGISTRATION_ALREADY_REGISTERED => c"RegistrationAlreadyRegistered",
        ETCH_NOT_FOUND => c"NotFound",
        ETCH_MEMORY_ALLOCATION_FAILED => c"MemoryAllocationFailed",
        ETCH_ACCESS_FAILED => c"AccessFailed",
        ETCH_INVALID_PROGRAM => c"InvalidProgram",
        ETCH_INVALID_EXTERNAL_DATA => c"InvalidExternalData",
        ETCH_OUT_OF_RESOURCES => c"OutOfResources",
        ETCH_DELEGATE_INVALID_COMPATIBILITY => c"DelegateInvalidCompatibility",
        ETCH_DELEGATE_MEMORY_ALLOCATION_FAILED => c"DelegateMemoryAllocationFailed",
        ETCH_DELEGATE_INVALID_HANDLE => c"DelegateInvalidHandle",
        _ => c"Unknown",
    };
    s.as_ptr()
}

/// Detail of the last failed call on a handle.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etch_error_t {
    /// The status that call returned.
    pub status: etch_status_t,
    /// Where: a byte offset into the `.pte` for format errors, otherwise the
    /// index or count the error names (the failing instruction for
    /// `etch_method_execute`, the shortfall in bytes for
    /// `ETCH_MEMORY_ALLOCATION_FAILED`, the number of missing operators for
    /// `ETCH_OPERATOR_MISSING`).
    pub at: u32,
    /// What was wrong, not NUL-terminated (print with `"%.*s"`); NULL with
    /// length 0 unless the library was built with logging (`log` feature),
    /// so that builds without it carry no message strings.
    pub what: *const c_char,
    pub what_len: usize,
}

/// The error as stored in a handle: only plain integers and a `'static`
/// message, so storing it costs nothing when the message is compiled out.
#[derive(Clone, Copy)]
pub(crate) struct ErrorSlot {
    pub code: u32,
    pub at: u32,
    #[cfg(feature = "log")]
    pub what: &'static str,
}

impl ErrorSlot {
    pub(crate) const NONE: ErrorSlot = ErrorSlot {
        code: ETCH_OK,
        at: 0,
        #[cfg(feature = "log")]
        what: "",
    };

    pub(crate) fn of(e: &Error) -> ErrorSlot {
        ErrorSlot {
            code: e.code.as_u32(),
            at: e.at,
            #[cfg(feature = "log")]
            what: e.what(),
        }
    }

    pub(crate) fn to_c(self) -> etch_error_t {
        #[cfg(feature = "log")]
        let (what, what_len) = (self.what.as_ptr().cast::<c_char>(), self.what.len());
        #[cfg(not(feature = "log"))]
        let (what, what_len) = (core::ptr::null(), 0);
        etch_error_t {
            status: self.code,
            at: self.at,
            what,
            what_len,
        }
    }
}

/// An index or count as an error's `at`: saturated at `u32::MAX` rather
/// than truncated (a 64-bit index must not read as a small one).
pub(crate) fn at(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// An FFI-level argument error (null pointer, short length).
pub(crate) const fn invalid_argument(what: &'static str, at: u32) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, at)
}

/// `Ok(())` → `ETCH_OK`, `Err(e)` → its code.
pub(crate) fn code(r: &Result<(), Error>) -> etch_status_t {
    match r {
        Ok(()) => ETCH_OK,
        Err(e) => e.code.as_u32(),
    }
}
