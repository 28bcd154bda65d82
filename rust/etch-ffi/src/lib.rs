//! The C ABI of etch (`include/etch.h`, generated from this crate by
//! cbindgen).
//!
//! Rules every function follows:
//! - no global or static mutable state but the kernel registry (kernels
//!   registered with `etch_register_kernel` at start-up): everything else
//!   lives in caller-allocated handles (`etch_program_t`, `etch_method_t`, sized in the header so C can
//!   declare them statically) and caller-owned buffers;
//! - NULL pointers, misaligned handles, short or wrapping lengths,
//!   unterminated names and overlapping buffers give status codes
//!   (ExecuTorch's numbers), never undefined behaviour or a panic;
//! - error detail (`at`, and the message in logging builds) is kept in the
//!   handle: `etch_program_error`, `etch_method_error`.
//!
//! One module per API area; later areas (the audio front end) add theirs.
#![cfg_attr(not(test), no_std)]
#![allow(non_camel_case_types)]
#![deny(clippy::undocumented_unsafe_blocks, clippy::missing_safety_doc)]
// Every number C passes in (lengths, counts, indices, zero points) or a file
// supplies is used with checked, saturating or widened arithmetic, and no
// index or count is truncated into an error's `at`: the lints
// make that the crate's rule rather than a review finding.
#![cfg_attr(
    not(test),
    deny(clippy::arithmetic_side_effects, clippy::cast_possible_truncation)
)]

#[cfg(feature = "etdump")]
mod etdump;
#[cfg(feature = "frontend")]
mod frontend;
mod image;
mod kernel;
#[cfg(feature = "frontend")]
mod kws;
mod log;
mod method;
mod program;
mod ptr;
mod registry;
mod status;
#[cfg(test)]
mod tests;

#[cfg(feature = "etdump")]
pub use etdump::*;
#[cfg(feature = "frontend")]
pub use frontend::*;
pub use image::*;
pub use kernel::*;
#[cfg(feature = "frontend")]
pub use kws::*;
pub use log::*;
pub use method::*;
pub use program::*;
pub use ptr::ETCH_MAX_NAME_LEN;
pub use registry::*;
pub use status::*;

/// The unwind tables of some of compiler_builtins' math objects (fmodf and
/// friends, which float kernels can call on hosted Linux targets) name the
/// personality routine. This library is built with panic=abort and never
/// unwinds, so nothing ever calls it; defining it lets C programs on x86_64
/// and i686 Linux (native_sim, the C harness) link the static library.
#[cfg(all(not(test), target_os = "linux"))]
#[no_mangle]
extern "C" fn rust_eh_personality() {}

/// Version of this C API; bumped when a signature or handle layout changes.
pub const ETCH_API_VERSION: u32 = 1;

/// Bits of `etch_build_features()`: how this library was built.
pub const ETCH_FEATURE_VERIFY: u32 = 1 << 0;
pub const ETCH_FEATURE_LOG: u32 = 1 << 1;
pub const ETCH_FEATURE_DSP: u32 = 1 << 2;
pub const ETCH_FEATURE_FRONTEND: u32 = 1 << 3;
pub const ETCH_FEATURE_ETDUMP: u32 = 1 << 4;
/// Bounded dynamic shapes: `etch_method_set_input_sized` resizes inputs,
/// kernels resize their outputs (`etch_method_output_sizes`).
pub const ETCH_FEATURE_DYNAMIC: u32 = 1 << 5;

/// Which compile-time options this library has (`ETCH_FEATURE_*` bits):
/// whole-program verification, logging through `etch_log_write`, the
/// SMLAD/SXTB16 kernels, the front end, ETDump recording, bounded dynamic
/// shapes. Lets firmware and tests check that the library they linked
/// matches their configuration.
#[no_mangle]
pub extern "C" fn etch_build_features() -> u32 {
    let mut f = 0;
    if cfg!(feature = "verify") {
        f |= ETCH_FEATURE_VERIFY;
    }
    if cfg!(feature = "log") {
        f |= ETCH_FEATURE_LOG;
    }
    if cfg!(feature = "dsp") {
        f |= ETCH_FEATURE_DSP;
    }
    if cfg!(feature = "frontend") {
        f |= ETCH_FEATURE_FRONTEND;
    }
    if cfg!(feature = "etdump") {
        f |= ETCH_FEATURE_ETDUMP;
    }
    if cfg!(feature = "dynamic") {
        f |= ETCH_FEATURE_DYNAMIC;
    }
    f
}

/// ExecuTorch `ScalarType` codes for `etch_tensor_info_t.dtype`.
pub const ETCH_DTYPE_BYTE: i32 = 0; // uint8
pub const ETCH_DTYPE_CHAR: i32 = 1; // int8
pub const ETCH_DTYPE_SHORT: i32 = 2;
pub const ETCH_DTYPE_INT: i32 = 3;
pub const ETCH_DTYPE_LONG: i32 = 4;
pub const ETCH_DTYPE_HALF: i32 = 5;
pub const ETCH_DTYPE_FLOAT: i32 = 6;
pub const ETCH_DTYPE_DOUBLE: i32 = 7;
pub const ETCH_DTYPE_BOOL: i32 = 11;

/// Bare metal: a panic cannot happen on any path the symbol check allows
/// (CI links the library and rejects panic machinery), but the language
/// needs a handler. Loop rather than pull in an abort routine.
#[cfg(all(target_os = "none", not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    loop {}
}

/// Hosted targets (native_sim, host tests): a `no_std` staticlib still needs
/// a handler; end the process as C's `abort` does.
#[cfg(all(not(target_os = "none"), not(test)))]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    extern "C" {
        fn abort() -> !;
    }
    // SAFETY: libc's abort takes no arguments and never returns.
    unsafe { abort() }
}
