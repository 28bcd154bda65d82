//! `etch_program_t`: a `.pte` read in place, and what its methods need.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of, MaybeUninit};

use etch_runtime::tensor::Shape;
use etch_runtime::{Error, ErrorCode, MethodMeta, Program, TensorInfo, Verification};

use crate::ptr::{self, disjoint, Held, Region, Span};
use crate::registry::kernels;
use crate::status::{at, code, etch_error_t, etch_status_t, invalid_argument, ErrorSlot};
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_STATE};

/// Most dimensions a tensor can have (`etch_tensor_info_t.sizes`).
pub const ETCH_MAX_DIMS: usize = 16;
/// Alignment `etch_program_load` requires of the program bytes.
pub const ETCH_PROGRAM_ALIGNMENT: usize = 16;

const _: () = assert!(ETCH_PROGRAM_ALIGNMENT == etch_runtime::program::PROGRAM_ALIGNMENT);

/// Size of `etch_program_t` in 8-byte words (per pointer width).
#[cfg(target_pointer_width = "32")]
pub const ETCH_PROGRAM_WORDS: usize = 14;
#[cfg(target_pointer_width = "64")]
pub const ETCH_PROGRAM_WORDS: usize = 20;

/// A loaded program. Caller-allocated (static, stack or embedded in a
/// struct); its contents are private. It refers to the program bytes, which
/// must stay in place and unchanged while it (or a method of it) is in use;
/// it may be copied or moved freely.
#[repr(C)]
pub struct etch_program_t {
    pub _opaque: [u64; ETCH_PROGRAM_WORDS],
}

const LOADED: u32 = 0x6574_5050; // "etPP"
const FAILED: u32 = 0x6574_5046; // "etPF": only `error` is valid

struct Inner {
    magic: u32,
    error: ErrorSlot,
    program: MaybeUninit<Program<'static>>,
}

const _: () = assert!(size_of::<Inner>() <= size_of::<etch_program_t>());
const _: () = assert!(align_of::<Inner>() <= align_of::<etch_program_t>());

/// The program behind `p`, if `p` holds a loaded one.
///
/// # Safety
/// `p` must be NULL or point to an `etch_program_t` (any contents).
pub(crate) unsafe fn program<'a>(p: *const etch_program_t) -> Result<Program<'a>, Error> {
    let p = p.cast::<Inner>();
    if p.is_null() || !p.is_aligned() {
        return Err(invalid_argument("null or misaligned etch_program_t", 0));
    }
    // SAFETY: `p` points to a readable etch_program_t (caller), large and
    // aligned enough for `Inner` (const asserts); `magic` is a plain u32.
    // `program` is only read when `magic` says etch_program_load wrote it.
    unsafe {
        if (*p).magic != LOADED {
            return Err(Error::new(ErrorCode::InvalidState, "program not loaded", 0));
        }
        Ok((*p).program.assume_init())
    }
}

/// The program behind `p`, after checking `call` (the out-pointers a call
/// writes, the names it reads) against the handle and the program bytes.
///
/// # Safety
/// As `program`.
pub(crate) unsafe fn program_for<'a>(
    p: *const etch_program_t,
    call: &[Region],
) -> Result<Program<'a>, Error> {
    // SAFETY: the caller's contract.
    let program = unsafe { program(p) }?;
    let reads = [Span::of_raw(p, 1), Span::of(program.file().data())];
    disjoint(
        Held {
            reads: &reads,
            writes: &[],
        },
        call,
    )?;
    Ok(program)
}

/// Reads `len` bytes at `data` (16-byte aligned) as a `.pte` in place into
/// `*p`. `verify` checks the whole file once (with the library's `verify`
/// feature; without it only the headers are checked). Every later read is
/// bounds-checked either way. On failure `etch_program_error()` has the
/// detail and `*p` stays unusable.
///
/// # Safety
/// `p` must be NULL or valid for writing an `etch_program_t`; `data` must be
/// NULL or `len` readable bytes that stay in place, unchanged, while the
/// program or any method loaded from it is in use.
#[no_mangle]
pub unsafe extern "C" fn etch_program_load(
    p: *mut etch_program_t,
    data: *const c_void,
    len: usize,
    verify: bool,
) -> etch_status_t {
    crate::log::init();
    let inner = p.cast::<Inner>();
    if inner.is_null() || !inner.is_aligned() {
        return ETCH_INVALID_ARGUMENT;
    }
    // The handle is written, the bytes read: they must not overlap.
    if disjoint(
        Held::NONE,
        &[
            Region::writes(p, 1, 0),
            Region::reads(data.cast::<u8>(), len, 2),
        ],
    )
    .is_err()
    {
        return ETCH_INVALID_ARGUMENT;
    }
    let verification = if verify {
        Verification::InternalConsistency
    } else {
        Verification::Minimal
    };
    // SAFETY: `data`/`len` as the caller promised above.
    let r = unsafe { ptr::bytes(data, len, 2) }
        .and_then(|bytes| Program::from_bytes(bytes, verification));
    let (magic, error, program) = match r {
        Ok(program) => (LOADED, ErrorSlot::NONE, MaybeUninit::new(program)),
        Err(e) => (FAILED, ErrorSlot::of(&e), MaybeUninit::uninit()),
    };
    let status = error.code;
    // SAFETY: `inner` is non-null, aligned and valid for writes (caller);
    // `write` does not read the old, maybe uninitialised, contents.
    unsafe {
        inner.write(Inner {
            magic,
            error,
            program,
        })
    };
    status
}

/// Detail of the last `etch_program_load` into `p` (status `ETCH_OK` if it
/// succeeded). Returns `ETCH_INVALID_STATE` if `p` was never loaded.
///
/// # Safety
/// `p` must be NULL or point to an `etch_program_t`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_program_error(
    p: *const etch_program_t,
    out: *mut etch_error_t,
) -> etch_status_t {
    let inner = p.cast::<Inner>();
    if inner.is_null() || !inner.is_aligned() {
        return ETCH_INVALID_ARGUMENT;
    }
    // SAFETY: readable and aligned (caller, const asserts); `error` is only
    // read when `magic` says etch_program_load wrote it.
    let error = unsafe {
        match (*inner).magic {
            LOADED | FAILED => (*inner).error,
            _ => return ETCH_INVALID_STATE,
        }
    };
    let handle = [Span::of_raw(p, 1)];
    let held = Held {
        reads: &handle,
        writes: &[],
    };
    // SAFETY: `out` NULL or writable (caller), not the handle (checked).
    code(
        &disjoint(held, &[Region::writes(out, 1, 1)])
            .and_then(|()| unsafe { ptr::put(out, error.to_c(), 1) }),
    )
}

/// Number of methods in the program.
///
/// # Safety
/// `p` must be NULL or point to an `etch_program_t`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_program_num_methods(
    p: *const etch_program_t,
    out: *mut usize,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { program_for(p, &[Region::writes(out, 1, 1)]) }.and_then(|p| {
            let n = p.num_methods()?;
            // SAFETY: as above.
            unsafe { ptr::put(out, n, 1) }
        }),
    )
}

/// Name of method `i` as a NUL-terminated string inside the program bytes
/// (the terminator is checked: a file without it gives
/// `ETCH_INVALID_PROGRAM`).
///
/// # Safety
/// `p` must be NULL or point to an `etch_program_t`; `name` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_program_method_name(
    p: *const etch_program_t,
    i: usize,
    name: *mut *const c_char,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { program_for(p, &[Region::writes(name, 1, 2)]) }.and_then(|p| {
            if i >= p.num_methods()? {
                return Err(invalid_argument("no such method (at = index)", at(i)));
            }
            let s = p.method_name(i)?;
            let data = p.file().data();
            // The string is a sub-slice of `data`; its flatbuffer NUL must be the
            // next byte, still inside the file.
            let end = (s.as_ptr() as usize)
                .checked_sub(data.as_ptr() as usize)
                .and_then(|start| start.checked_add(s.len()))
                .unwrap_or(usize::MAX);
            if data.get(end) != Some(&0) {
                return Err(Error::new(
                    ErrorCode::InvalidProgram,
                    "method name not NUL-terminated",
                    at(end),
                ));
            }
            // SAFETY: as above.
            unsafe { ptr::put(name, s.as_ptr().cast(), 2) }
        }),
    )
}

/// What a method needs before it is loaded.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etch_method_meta_t {
    pub num_inputs: usize,
    pub num_outputs: usize,
    /// Instructions over all chains (the length `etch_method_execute_profiled`
    /// fills).
    pub num_instructions: usize,
    /// Planned buffers (memory ids) `etch_method_load` takes, each sized by
    /// `etch_method_planned_buffer_size`.
    pub num_planned_buffers: usize,
    /// Exact bytes of the `state` buffer `etch_method_load` takes (any
    /// alignment).
    pub method_state_bytes: usize,
}

/// Method `name`'s meta, `out` (the call's out-pointer, argument `arg`)
/// checked against the handle, the program bytes and the name.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string.
unsafe fn meta<'a>(
    p: *const etch_program_t,
    name: *const c_char,
    out: Region,
) -> Result<MethodMeta<'a>, Error> {
    // SAFETY: as the callers document.
    let program = unsafe { program(p) }?;
    // SAFETY: as the callers document.
    let name = unsafe { ptr::name(name, 1) }?;
    let call = [
        Region::reads(name.as_ptr(), name.len().saturating_add(1), 1),
        out,
    ];
    let reads = [Span::of_raw(p, 1), Span::of(program.file().data())];
    disjoint(
        Held {
            reads: &reads,
            writes: &[],
        },
        &call,
    )?;
    program.method_meta(name).map_err(|e| match e.code {
        // etch-pte says NotFound; ExecuTorch's Program::method_meta
        // answers an unknown name with InvalidArgument.
        ErrorCode::NotFound => invalid_argument("no method with that name", 1),
        _ => e,
    })
}

/// `InvalidArgument` unless `i < n` (ExecuTorch checks indices the same way).
pub(crate) fn index(i: usize, n: usize) -> Result<(), Error> {
    if i < n {
        Ok(())
    } else {
        Err(invalid_argument("index out of range (at = index)", at(i)))
    }
}

/// Facts about method `name` (NUL-terminated).
///
/// # Safety
/// `p` must be NULL or point to an `etch_program_t`; `name` NULL or a
/// NUL-terminated string; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_meta(
    p: *const etch_program_t,
    name: *const c_char,
    out: *mut etch_method_meta_t,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { meta(p, name, Region::writes(out, 1, 2)) }.and_then(|m| {
            let value = etch_method_meta_t {
                num_inputs: m.num_inputs()?,
                num_outputs: m.num_outputs()?,
                num_instructions: m.num_instructions()?,
                num_planned_buffers: m.num_memory_planned_buffers()?,
                method_state_bytes: m.method_state_bytes(kernels())?,
            };
            // SAFETY: as above.
            unsafe { ptr::put(out, value, 2) }
        }),
    )
}

/// Bytes of planned buffer `mem_index` (0-based; memory id `mem_index + 1`)
/// of method `name`. Each buffer must be `ETCH_PLANNED_BUFFER_ALIGNMENT`
/// aligned.
///
/// # Safety
/// As `etch_method_meta`; `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_planned_buffer_size(
    p: *const etch_program_t,
    name: *const c_char,
    mem_index: usize,
    bytes: *mut usize,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { meta(p, name, Region::writes(bytes, 1, 3)) }.and_then(|m| {
            if mem_index >= m.num_memory_planned_buffers()? {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "no such planned buffer",
                    at(mem_index),
                ));
            }
            let size = m.memory_planned_buffer_size(mem_index)?;
            // SAFETY: as above.
            unsafe { ptr::put(bytes, size, 3) }
        }),
    )
}

/// An input or output tensor.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct etch_tensor_info_t {
    /// ExecuTorch `ScalarType` code (`ETCH_DTYPE_CHAR` = int8, ...).
    pub dtype: i32,
    /// Number of dimensions; `sizes` and `dim_order` entries past it are 0.
    pub dim: usize,
    pub sizes: [i32; ETCH_MAX_DIMS],
    /// Memory order of the dimensions (`0, 1, 2, 3` contiguous, `0, 2, 3, 1`
    /// channels-last).
    pub dim_order: [u8; ETCH_MAX_DIMS],
    /// Bytes `etch_method_set_input` expects / `etch_method_output` returns.
    pub nbytes: usize,
    /// Whether the exporter planned its memory (inputs must be, to be set).
    pub is_memory_planned: bool,
}

impl etch_tensor_info_t {
    pub(crate) fn of(info: &TensorInfo) -> Self {
        etch_tensor_info_t {
            is_memory_planned: info.is_memory_planned,
            ..Self::of_view(info.dtype, &info.shape, info.nbytes)
        }
    }

    /// A tensor a kernel sees (`is_memory_planned` false).
    pub(crate) fn of_view(dtype: etch_runtime::ScalarType, shape: &Shape, nbytes: usize) -> Self {
        let mut sizes = [0i32; ETCH_MAX_DIMS];
        let mut dim_order = [0u8; ETCH_MAX_DIMS];
        for (d, s) in sizes.iter_mut().zip(shape.sizes()) {
            *d = s as i32;
        }
        for (d, s) in dim_order.iter_mut().zip(shape.dim_order()) {
            *d = *s;
        }
        etch_tensor_info_t {
            dtype: dtype.0 as i32,
            dim: shape.rank(),
            sizes,
            dim_order,
            nbytes,
            is_memory_planned: false,
        }
    }
}

/// Input `i` of method `name`.
///
/// # Safety
/// As `etch_method_meta`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_input_info(
    p: *const etch_program_t,
    name: *const c_char,
    i: usize,
    out: *mut etch_tensor_info_t,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { meta(p, name, Region::writes(out, 1, 3)) }.and_then(|m| {
            index(i, m.num_inputs()?)?;
            let info = etch_tensor_info_t::of(&m.input_tensor_meta(i)?);
            // SAFETY: as above.
            unsafe { ptr::put(out, info, 3) }
        }),
    )
}

/// Output `i` of method `name`.
///
/// # Safety
/// As `etch_method_meta`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_output_info(
    p: *const etch_program_t,
    name: *const c_char,
    i: usize,
    out: *mut etch_tensor_info_t,
) -> etch_status_t {
    // SAFETY: pointer contracts as documented above.
    code(
        &unsafe { meta(p, name, Region::writes(out, 1, 3)) }.and_then(|m| {
            index(i, m.num_outputs()?)?;
            let info = etch_tensor_info_t::of(&m.output_tensor_meta(i)?);
            // SAFETY: as above.
            unsafe { ptr::put(out, info, 3) }
        }),
    )
}
