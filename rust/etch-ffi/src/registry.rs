//! The kernel registry: exactly the kernels this build selected (cargo
//! features, from `etch select`), in flash.
//!
//! `ETCH_KERNEL_REGISTRY_SIZE` (build time) sets its capacity: 0 = exactly
//! the selection; more leaves empty slots, which cost flash (one entry each)
//! and are never searched. They exist so a fixed Kconfig value keeps working
//! while the model's selection shrinks or grows up to it; a value below the
//! selection fails the build (build.rs names the number needed).

use core::ffi::c_char;

use etch_kernels::ops::{KERNELS, KERNEL_COUNT};
use etch_runtime::{Kernel, Registry};

use crate::status::{etch_status_t, ETCH_INVALID_ARGUMENT, ETCH_OK};

mod config {
    include!(concat!(env!("OUT_DIR"), "/config.rs"));
}

const CAPACITY: usize = if config::REGISTRY_SIZE == 0 {
    KERNEL_COUNT
} else {
    config::REGISTRY_SIZE
};

// build.rs counts operator features; both views of the selection must agree.
const _: () = assert!(
    config::SELECTED_OPS == KERNEL_COUNT,
    "etch-ffi: operator features and etch-kernels' KERNELS disagree"
);

static REGISTRY: Registry<CAPACITY> = match Registry::from_slice(KERNELS) {
    Some(r) => r,
    None => panic!("ETCH_KERNEL_REGISTRY_SIZE is smaller than the selected kernels"),
};

/// The kernels methods are loaded with.
pub(crate) fn kernels() -> &'static [Kernel] {
    if config::REGISTRY_SIZE == 0 {
        KERNELS
    } else {
        REGISTRY.kernels()
    }
}

/// Number of kernels compiled into this library.
#[no_mangle]
pub extern "C" fn etch_kernel_count() -> usize {
    KERNEL_COUNT
}

/// Capacity of the kernel registry: `ETCH_KERNEL_REGISTRY_SIZE` at build
/// time, or the kernel count when that was 0 (the default: exactly the
/// selection). Slots past `etch_kernel_count()` are empty reserve (one
/// table entry of flash each) that is never searched; they let a fixed
/// `CONFIG_ETCH_KERNEL_REGISTRY_SIZE` keep building while the model's
/// selection changes. A size below the selection fails the build with the
/// number needed.
#[no_mangle]
pub extern "C" fn etch_kernel_registry_capacity() -> usize {
    CAPACITY
}

/// Name of compiled-in kernel `i` (`"cortex_m::quantized_conv2d.out"`), not
/// NUL-terminated: `*name` gets its first byte, `*len` its length.
///
/// # Safety
/// `name` and `len` must be NULL or valid for writing.
#[no_mangle]
pub unsafe extern "C" fn etch_kernel_name(
    i: usize,
    name: *mut *const c_char,
    len: *mut usize,
) -> etch_status_t {
    let Some(k) = kernels().get(i) else {
        return ETCH_INVALID_ARGUMENT;
    };
    if name.is_null() || len.is_null() || !name.is_aligned() || !len.is_aligned() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: both checked non-null and aligned; validity is the caller's
    // contract above.
    unsafe {
        name.write(k.name.as_ptr().cast());
        len.write(k.name.len());
    }
    ETCH_OK
}
