//! The kernel registry: the kernels this build selected (cargo features,
//! from `etch select`), then the application's own, registered at run time
//! through `etch_register_kernel` (kernel.rs).
//!
//! `ETCH_KERNEL_REGISTRY_SIZE` (build time) sets its capacity: 0 = exactly
//! the selection, kept in flash, and no registration (every attempt is
//! `RegistrationExceedingMaxKernels`, as ExecuTorch's full registry). More
//! leaves free slots for registered kernels; the registry then lives in RAM
//! (one `Kernel` entry per slot, plus `ETCH_MAX_KERNEL_ARGS` bytes and a
//! function pointer per free slot). A value below the selection fails the
//! build (build.rs names the number needed).
//!
//! This is the library's only global mutable state: slots past the
//! published length are written by one registration at a time (the
//! `etch_register_kernel` contract), then published with a release store;
//! readers see only published, never again written, slots.

use core::cell::UnsafeCell;
use core::ffi::c_char;
use core::sync::atomic::{AtomicUsize, Ordering};

use etch_kernels::ops::{KERNELS, KERNEL_COUNT};
use etch_runtime::{signature, ArgKind, Error, ErrorCode, Kernel, KernelContext, Result};

use crate::kernel::{etch_kernel_context_t, run_c_kernel, ETCH_MAX_KERNEL_ARGS};
use crate::status::{at, etch_status_t, ETCH_INVALID_ARGUMENT, ETCH_OK};

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

/// Free slots for registered kernels.
const EXTRA: usize = CAPACITY - KERNEL_COUNT;

type CFn = unsafe extern "C" fn(*mut etch_kernel_context_t) -> etch_status_t;

fn empty_slot(_: &mut KernelContext<'_, '_>) -> Result<()> {
    Err(Error::new(
        ErrorCode::OperatorMissing,
        "empty registry slot",
        0,
    ))
}

struct Slots {
    kernels: [UnsafeCell<Kernel>; CAPACITY],
    kinds: [UnsafeCell<[ArgKind; ETCH_MAX_KERNEL_ARGS]>; EXTRA],
    functions: [UnsafeCell<Option<CFn>>; EXTRA],
    /// Published entries of `kernels`.
    len: AtomicUsize,
}

// SAFETY: slots below `len` are never written after their release-store
// publication; slots at or past it are written only by `register_c`, whose
// callers guarantee one registration at a time (etch_register_kernel's
// contract), and read by no one before publication.
unsafe impl Sync for Slots {}

impl Slots {
    const fn new() -> Slots {
        const EMPTY: Kernel = Kernel {
            name: "",
            args: &[],
            run: empty_slot,
            schema: "",
            scratch: 0,
        };
        let mut kernels = [const { UnsafeCell::new(EMPTY) }; CAPACITY];
        let mut i = 0;
        while i < KERNEL_COUNT {
            kernels[i] = UnsafeCell::new(KERNELS[i]);
            i = i.saturating_add(1);
        }
        Slots {
            kernels,
            kinds: [const { UnsafeCell::new([ArgKind::Tensor; ETCH_MAX_KERNEL_ARGS]) }; EXTRA],
            functions: [const { UnsafeCell::new(None) }; EXTRA],
            len: AtomicUsize::new(KERNEL_COUNT),
        }
    }
}

static SLOTS: Slots = Slots::new();

/// The kernels methods are loaded with: the selection, then the registered.
pub(crate) fn kernels() -> &'static [Kernel] {
    if EXTRA == 0 {
        return KERNELS;
    }
    let len = SLOTS.len.load(Ordering::Acquire).min(CAPACITY);
    // SAFETY: `UnsafeCell<Kernel>` has `Kernel`'s layout; the first `len`
    // slots are initialised and never written again (see `Slots`).
    unsafe { core::slice::from_raw_parts(SLOTS.kernels.as_ptr().cast::<Kernel>(), len) }
}

/// The C function of registry slot `index`, if it holds a C kernel.
pub(crate) fn c_function(index: usize) -> Option<CFn> {
    let j = index.checked_sub(KERNEL_COUNT)?;
    if index >= SLOTS.len.load(Ordering::Acquire) {
        return None;
    }
    // SAFETY: a published slot, never written again.
    SLOTS.functions.get(j).and_then(|f| unsafe { *f.get() })
}

/// Registers a C kernel for `schema` (ExecuTorch's codes as
/// `Registry::register`: capacity first, then duplicates).
///
/// # Safety
/// No other registration runs at the same time.
pub(crate) unsafe fn register_c(schema: &'static str, run: CFn) -> Result<()> {
    let full = Error::new(
        ErrorCode::RegistrationExceedingMaxKernels,
        "kernel registry full (ETCH_KERNEL_REGISTRY_SIZE)",
        at(CAPACITY),
    );
    if EXTRA == 0 {
        return Err(full);
    }
    let len = SLOTS.len.load(Ordering::Acquire);
    let j = len.checked_sub(KERNEL_COUNT).ok_or(full)?;
    let (Some(slot), Some(kinds), Some(function)) = (
        SLOTS.kernels.get(len),
        SLOTS.kinds.get(j),
        SLOTS.functions.get(j),
    ) else {
        return Err(full);
    };
    // SAFETY: unpublished slot `j`: no reader sees it, and the caller
    // guarantees no concurrent registration.
    let kinds: &'static mut [ArgKind; ETCH_MAX_KERNEL_ARGS] = unsafe { &mut *kinds.get() };
    let parsed = signature::parse(schema, kinds)?;
    if let Some(i) = kernels().iter().position(|k| k.name == parsed.name) {
        return Err(Error::new(
            ErrorCode::RegistrationAlreadyRegistered,
            "operator already registered",
            at(i),
        ));
    }
    let kernel = Kernel {
        name: parsed.name,
        args: kinds.get(..parsed.args).unwrap_or(&[]),
        run: run_c_kernel,
        schema,
        scratch: 0,
    };
    // SAFETY: as above; then the release store publishes the slot.
    unsafe {
        *function.get() = Some(run);
        *slot.get() = kernel;
    }
    // `len < CAPACITY` (the slot exists), so this cannot overflow.
    SLOTS.len.store(len.saturating_add(1), Ordering::Release);
    Ok(())
}

/// Number of kernels compiled into this library.
#[no_mangle]
pub extern "C" fn etch_kernel_count() -> usize {
    KERNEL_COUNT
}

/// Capacity of the kernel registry: `ETCH_KERNEL_REGISTRY_SIZE` at build
/// time, or the kernel count when that was 0 (the default: exactly the
/// selection). Slots past `etch_kernel_count()` take kernels registered with
/// `etch_register_kernel`. A size below the selection fails the build with
/// the number needed.
#[no_mangle]
pub extern "C" fn etch_kernel_registry_capacity() -> usize {
    CAPACITY
}

/// Name of kernel `i` (`"cortex_m::quantized_conv2d.out"`; the compiled-in
/// ones first, then the registered ones), not NUL-terminated: `*name` gets
/// its first byte, `*len` its length.
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
