//! `etch_method_t`: a method loaded into caller-owned memory.
//!
//! The runtime's `Method` borrows a list of planned-buffer slices; that list
//! lives inside the same `etch_method_t`, so a loaded method must stay where
//! it was loaded. Every call checks the handle's address against the one
//! recorded at load and refuses a moved or copied handle with
//! `ETCH_INVALID_STATE` instead of following a stale pointer.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{addr_of, addr_of_mut};

use etch_runtime::{
    Error, ErrorCode, ExecutionObserver, Method, MethodMeta, Output, MAX_MEMORY_IDS,
};

use crate::program::{etch_program_t, index, program};
use crate::ptr::{self, Span};
use crate::registry::kernels;
use crate::status::{code, etch_error_t, etch_status_t, invalid_argument, ErrorSlot};
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_STATE};

/// Most planned buffers (memory ids) one method may take.
pub const ETCH_MAX_PLANNED_BUFFERS: usize = 8;
/// Alignment every planned buffer must have.
pub const ETCH_PLANNED_BUFFER_ALIGNMENT: usize = 16;

const _: () = assert!(ETCH_MAX_PLANNED_BUFFERS == MAX_MEMORY_IDS);
const _: () = assert!(ETCH_PLANNED_BUFFER_ALIGNMENT == etch_runtime::PLANNED_BUFFER_ALIGNMENT);

/// Size of `etch_method_t` in 8-byte words (per pointer width).
#[cfg(target_pointer_width = "32")]
pub const ETCH_METHOD_WORDS: usize = 46;
#[cfg(target_pointer_width = "64")]
pub const ETCH_METHOD_WORDS: usize = 82;

/// A loaded method. Caller-allocated; its contents are private. Once
/// loaded it must not be moved or copied (calls on a copy return
/// `ETCH_INVALID_STATE`); it refers to the program bytes, the state buffer
/// and the planned buffers, which must stay valid and untouched by anything
/// else while it is in use. The `etch_program_t` it came from may go away.
#[repr(C)]
pub struct etch_method_t {
    pub _opaque: [u64; ETCH_METHOD_WORDS],
}

const LOADED: u32 = 0x6574_4d4c; // "etML"
const FAILED: u32 = 0x6574_4d46; // "etMF": only `error` is valid

type Planned = [&'static mut [u8]; MAX_MEMORY_IDS];

struct Inner {
    magic: u32,
    error: ErrorSlot,
    /// Address of the handle at load (moved handles are refused).
    this: usize,
    method: MaybeUninit<Method<'static, 'static>>,
    /// Borrowed by `method`; only ever accessed through that borrow.
    planned: MaybeUninit<Planned>,
    /// Address ranges of the state and planned buffers `method` holds.
    held: [Span; HELD],
}

pub(crate) const HELD: usize = MAX_MEMORY_IDS + 1;

const _: () = assert!(size_of::<Inner>() <= size_of::<etch_method_t>());
const _: () = assert!(align_of::<Inner>() <= align_of::<etch_method_t>());

/// `m` as `Inner`, null and alignment checked.
fn inner_ptr(m: *const etch_method_t) -> Option<*mut Inner> {
    let inner = m.cast::<Inner>().cast_mut();
    (!inner.is_null() && inner.is_aligned()).then_some(inner)
}

/// Whether `inner` holds a method loaded at this very address.
///
/// # Safety
/// `inner` must point to a readable `etch_method_t` (any contents).
unsafe fn is_loaded(inner: *const Inner) -> bool {
    // SAFETY: `magic` is a u32 (any bits valid); `this` is only read once
    // `magic` says etch_method_load wrote it.
    unsafe { (*inner).magic == LOADED && (*inner).this == inner as usize }
}

/// # Safety
/// `inner` from `inner_ptr` of a pointer to a writable `etch_method_t`.
unsafe fn record(inner: *mut Inner, r: Result<(), Error>) -> etch_status_t {
    let slot = match &r {
        Ok(()) => ErrorSlot::NONE,
        Err(e) => ErrorSlot::of(e),
    };
    // SAFETY: `error` is a disjoint field of a writable handle; no reference
    // to it is live (the method's borrows cover `planned` only).
    unsafe { addr_of_mut!((*inner).error).write(slot) };
    code(&r)
}

/// Runs `f` on the loaded method behind `m` and records the outcome.
///
/// # Safety
/// `m` must be NULL or point to a writable `etch_method_t`.
pub(crate) unsafe fn with_method(
    m: *mut etch_method_t,
    f: impl FnOnce(&mut Method<'static, 'static>, &[Span; HELD]) -> Result<(), Error>,
) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: `inner` points to a writable handle (caller).
    if !unsafe { is_loaded(inner) } {
        return ETCH_INVALID_STATE;
    }
    // SAFETY: loaded at this address, so `method` is initialised and its
    // borrows (of `planned`, the state and the planned buffers) are live; the
    // reference covers the `method` field only.
    let method = unsafe { (*addr_of_mut!((*inner).method)).assume_init_mut() };
    // SAFETY: as above; `held` is plain data written at load.
    let held = unsafe { &*addr_of!((*inner).held) };
    let r = f(method, held);
    // SAFETY: as above; `method`'s borrow has ended.
    unsafe { record(inner, r) }
}

/// The loaded method behind a const handle.
///
/// # Safety
/// `m` must be NULL or point to a readable `etch_method_t`.
unsafe fn method_ref<'a>(
    m: *const etch_method_t,
) -> Result<(&'a Method<'static, 'static>, MethodMeta<'static>), etch_status_t> {
    let inner = inner_ptr(m).ok_or(ETCH_INVALID_ARGUMENT)?;
    // SAFETY: readable handle (caller).
    if !unsafe { is_loaded(inner) } {
        return Err(ETCH_INVALID_STATE);
    }
    // SAFETY: loaded at this address: `method` is initialised.
    let method = unsafe { (*addr_of!((*inner).method)).assume_init_ref() };
    Ok((method, method.meta()))
}

/// Loads method `name` of `program` into `*m`, with caller memory:
/// - `state`: at least `method_state_bytes` (any alignment);
/// - `planned[i]` / `planned_lens[i]`, `i < num_planned`: one buffer per
///   planned buffer, each at least `etch_method_planned_buffer_size` bytes
///   and `ETCH_PLANNED_BUFFER_ALIGNMENT` aligned (more buffers than the
///   method uses are ignored, at most `ETCH_MAX_PLANNED_BUFFERS`).
///
/// Buffers must not overlap each other, the program bytes or `*m`
/// (checked: `ETCH_INVALID_ARGUMENT`). Short buffers fail with
/// `ETCH_MEMORY_ALLOCATION_FAILED` (`at` = the shortfall in bytes) before
/// anything is written to them; an operator this build lacks fails with
/// `ETCH_OPERATOR_MISSING` (`at` = how many are missing). On failure
/// `etch_method_error()` has the detail and `*m` is unusable.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `program` NULL or an
/// `etch_program_t`; `name` NULL or NUL-terminated; `state` NULL or
/// `state_len` writable bytes; `planned` and `planned_lens` NULL or arrays of
/// `num_planned` entries, each buffer NULL or that many writable bytes. All
/// buffers must stay valid, and be touched by nothing else, while `*m` is
/// in use.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn etch_method_load(
    m: *mut etch_method_t,
    program: *const etch_program_t,
    name: *const c_char,
    state: *mut c_void,
    state_len: usize,
    planned: *const *mut c_void,
    planned_lens: *const usize,
    num_planned: usize,
) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: writable handle (caller); `magic` first, so a failure below
    // leaves it unloaded whatever it held.
    unsafe { addr_of_mut!((*inner).magic).write(FAILED) };
    // SAFETY: the caller's contracts above, passed on.
    let r = unsafe {
        load(
            inner,
            program,
            name,
            state,
            state_len,
            planned,
            planned_lens,
            num_planned,
        )
    };
    if r.is_ok() {
        // SAFETY: as above; `load` initialised `method`, `planned`, `held`.
        unsafe {
            addr_of_mut!((*inner).this).write(inner as usize);
            addr_of_mut!((*inner).magic).write(LOADED);
        }
    }
    // SAFETY: as above.
    unsafe { record(inner, r) }
}

/// # Safety
/// As `etch_method_load`.
#[allow(clippy::too_many_arguments)]
unsafe fn load(
    inner: *mut Inner,
    program_ptr: *const etch_program_t,
    name: *const c_char,
    state: *mut c_void,
    state_len: usize,
    planned: *const *mut c_void,
    planned_lens: *const usize,
    num_planned: usize,
) -> Result<(), Error> {
    // SAFETY: caller's contracts.
    let program = unsafe { program(program_ptr) }?;
    // SAFETY: caller's contracts.
    let meta = program.method_meta(unsafe { ptr::name(name, 2) }?)?;
    if num_planned > MAX_MEMORY_IDS {
        return Err(invalid_argument(
            "more than ETCH_MAX_PLANNED_BUFFERS planned buffers (at = count)",
            num_planned as u32,
        ));
    }
    if num_planned > 0 && (planned.is_null() || planned_lens.is_null())
        || !planned.is_aligned()
        || !planned_lens.is_aligned()
    {
        return Err(invalid_argument(
            "null or misaligned planned-buffer arrays (at = argument)",
            5,
        ));
    }

    // Everything the method will hold a reference to: no two may overlap.
    let mut spans = [Span::of(&[]); MAX_MEMORY_IDS + 3];
    spans[0] = Span::of(program.file().data());
    spans[1] = Span::of_raw(inner.cast_const());
    let mut buffers: Planned = Default::default();
    for (i, slot) in buffers.iter_mut().enumerate().take(num_planned) {
        // SAFETY: `i < num_planned` entries are readable (caller).
        let (p, len) = unsafe { (*planned.add(i), *planned_lens.add(i)) };
        // SAFETY: each entry is NULL or `len` writable bytes (caller).
        *slot = unsafe { ptr::bytes_mut(p, len, 5) }?;
    }
    // SAFETY: NULL or `state_len` writable bytes (caller).
    let state = unsafe { ptr::bytes_mut(state, state_len, 3) }?;
    spans[2] = Span::of(state);
    for (span, buf) in spans.iter_mut().skip(3).zip(buffers.iter()) {
        *span = Span::of(buf);
    }
    for (i, a) in spans.iter().enumerate() {
        if spans.iter().skip(i + 1).any(|b| a.overlaps(*b)) {
            return Err(invalid_argument(
                "buffers overlap (each other, the program or the handle)",
                i as u32,
            ));
        }
    }

    // SAFETY: `planned` is a field of the writable handle, written once here
    // and afterwards reached only through the borrow handed to `Method`.
    let list: &'static mut Planned = unsafe {
        let field = addr_of_mut!((*inner).planned);
        field.write(MaybeUninit::new(buffers));
        (*field).assume_init_mut()
    };
    let list = list.get_mut(..num_planned).unwrap_or(&mut []);
    let method = Method::load(&meta, state, list, kernels(), &[])?;
    let mut held = [Span::of(&[]); HELD];
    for (h, s) in held.iter_mut().zip(spans.iter().skip(2)) {
        *h = *s;
    }
    // SAFETY: disjoint fields of the writable handle, no live references.
    unsafe {
        addr_of_mut!((*inner).held).write(held);
        addr_of_mut!((*inner).method).write(MaybeUninit::new(method));
    }
    Ok(())
}

/// Detail of the last call on `m` that takes it mutably (status `ETCH_OK`
/// if that call succeeded). `ETCH_INVALID_STATE` if `m` was never loaded.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_error(
    m: *const etch_method_t,
    out: *mut etch_error_t,
) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: readable handle (caller); `error` is only read once `magic`
    // says etch_method_load wrote it (it writes `error` on every outcome).
    let error = unsafe {
        match (*inner).magic {
            LOADED | FAILED => (*inner).error,
            _ => return ETCH_INVALID_STATE,
        }
    };
    // SAFETY: `out` NULL or writable (caller).
    code(&unsafe { ptr::put(out, error.to_c(), 1) })
}

/// Copies `len` bytes (exactly the input's `nbytes`, in its dtype and dim
/// order) into input `i`'s planned memory. `data` must not overlap the
/// method's buffers.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `data` NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn etch_method_set_input(
    m: *mut etch_method_t,
    i: usize,
    data: *const c_void,
    len: usize,
) -> etch_status_t {
    // SAFETY: caller's contracts.
    unsafe {
        with_method(m, |method, held| {
            let bytes = ptr::bytes(data, len, 2)?;
            // The copy goes into the method's memory: a source inside it
            // would alias the destination.
            if held.iter().any(|b| b.overlaps(Span::of(bytes))) {
                return Err(invalid_argument("input overlaps the method's buffers", 2));
            }
            index(i, method.num_inputs()?)?;
            method.set_input_bytes(i, bytes)
        })
    }
}

/// `etch_method_set_input` for callers that know their data's type:
/// `dtype` (an `ETCH_DTYPE_*` code) must be input `i`'s dtype, else
/// `ETCH_INVALID_TYPE` (as Rust's `Method::set_input`) with `at` = the
/// input's dtype code, and nothing is copied. float bytes of the right length no longer pass as an int8
/// input; prefer this call to the untyped one.
///
/// # Safety
/// As `etch_method_set_input`.
#[no_mangle]
pub unsafe extern "C" fn etch_method_set_input_typed(
    m: *mut etch_method_t,
    i: usize,
    dtype: i32,
    data: *const c_void,
    len: usize,
) -> etch_status_t {
    // SAFETY: caller's contracts.
    unsafe {
        with_method(m, |method, held| {
            let bytes = ptr::bytes(data, len, 3)?;
            if held.iter().any(|b| b.overlaps(Span::of(bytes))) {
                return Err(invalid_argument("input overlaps the method's buffers", 3));
            }
            index(i, method.num_inputs()?)?;
            let want = method.input_meta(i)?.dtype.0 as i32;
            if dtype != want {
                return Err(Error::new(
                    ErrorCode::InvalidType,
                    "input dtype differs (at = the input's dtype code)",
                    want as u32,
                ));
            }
            method.set_input_bytes(i, bytes)
        })
    }
}

/// Marks `*m` unloaded: every later call on it returns `ETCH_INVALID_STATE`
/// until it is loaded again. Call it before the handle's storage or any of
/// its buffers go away (end of scope, `free`, reuse): only then can a later
/// handle that happens to occupy the same bytes be told from a live one
/// (see "What the handle checks detect" in the header). `ETCH_OK` for any
/// writable handle, loaded or not.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t` that no call is using.
#[no_mangle]
pub unsafe extern "C" fn etch_method_unload(m: *mut etch_method_t) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: writable handle (caller); the method holds no destructor-owned
    // resources (no heap), so forgetting it is all unloading takes. `magic`
    // first, then `this`: neither is borrowed by the method.
    unsafe {
        addr_of_mut!((*inner).magic).write(0);
        addr_of_mut!((*inner).this).write(0);
    }
    crate::ETCH_OK
}

/// Runs the method once; on failure `etch_method_error()` gives the failing
/// instruction in `at`.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`.
#[no_mangle]
pub unsafe extern "C" fn etch_method_execute(m: *mut etch_method_t) -> etch_status_t {
    // SAFETY: caller's contract.
    unsafe {
        with_method(m, |method, _| {
            method.execute_observed(&mut Profiler::none())
        })
    }
}

/// Caps the instructions one execute may run (default 10 000 000), against
/// malformed jump loops: the limit reached fails with `ETCH_INVALID_STATE`.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`.
#[no_mangle]
pub unsafe extern "C" fn etch_method_set_instruction_limit(
    m: *mut etch_method_t,
    limit: u32,
) -> etch_status_t {
    // SAFETY: caller's contract.
    unsafe {
        with_method(m, |method, _| {
            method.set_instruction_limit(limit);
            Ok(())
        })
    }
}

/// The one observer both execute entry points use, so the instruction loop
/// is instantiated once (about 1 KB of flash) rather than once per entry.
struct Profiler<'a> {
    cycles: Option<extern "C" fn() -> u32>,
    out: &'a mut [u32],
    start: u32,
}

impl Profiler<'_> {
    fn none() -> Profiler<'static> {
        Profiler {
            cycles: None,
            out: &mut [],
            start: 0,
        }
    }
}

impl ExecutionObserver for Profiler<'_> {
    fn before(&mut self, _index: u32, _op: Option<u32>) {
        if let Some(cycles) = self.cycles {
            self.start = cycles();
        }
    }

    fn after(&mut self, index: u32) {
        if let Some(cycles) = self.cycles {
            let end = cycles();
            if let Some(slot) = self.out.get_mut(index as usize) {
                *slot = end.wrapping_sub(self.start);
            }
        }
    }
}

/// `etch_method_execute`, timing each instruction with `cycles` (e.g.
/// Zephyr's `k_cycle_get_32`): `cycles_per_instruction[i]` gets instruction
/// `i`'s count (0 for moves and jumps, which run no kernel). `n` must be at
/// least `num_instructions` (else `ETCH_INVALID_ARGUMENT`, `at` = the count
/// needed, and nothing runs). Name the operators with
/// `etch_method_instruction_operator`.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `cycles_per_instruction` NULL or
/// `n` writable `uint32_t`; `cycles` NULL or a function safe to call from
/// here (it must not call etch functions on `m`).
#[no_mangle]
pub unsafe extern "C" fn etch_method_execute_profiled(
    m: *mut etch_method_t,
    cycles: Option<extern "C" fn() -> u32>,
    cycles_per_instruction: *mut u32,
    n: usize,
) -> etch_status_t {
    // SAFETY: caller's contracts.
    unsafe {
        with_method(m, |method, held| {
            let needed = method.meta().num_instructions()?;
            let cycles = cycles.ok_or(invalid_argument("null cycle counter", 1))?;
            let short = invalid_argument(
                "profile array null, misaligned or shorter than num_instructions (at = count needed)",
                needed as u32,
            );
            if n < needed || !cycles_per_instruction.is_aligned() {
                return Err(short);
            }
            let bytes = n.checked_mul(size_of::<u32>()).ok_or(short)?;
            // SAFETY: `n` writable, aligned u32 (caller); `bytes_mut` checks
            // null and wrapping.
            let out = ptr::bytes_mut(cycles_per_instruction.cast(), bytes, 2).map_err(|_| short)?;
            // Written between kernel calls: it must not be the method's memory.
            if held.iter().any(|h| h.overlaps(Span::of(out))) {
                return Err(invalid_argument(
                    "profile array overlaps the method's buffers",
                    2,
                ));
            }
            // SAFETY: the same `n` aligned u32 just checked, now as u32.
            let out = core::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u32>(), n);
            out.fill(0);
            method.execute_observed(&mut Profiler {
                cycles: Some(cycles),
                out,
                start: 0,
            })
        })
    }
}

/// Output `i` after an execute: `*data` points into the method's planned
/// memory (valid until the next execute), `*nbytes` its size. Tensor
/// outputs only (`ETCH_INVALID_TYPE` for scalars).
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `data`, `nbytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_output(
    m: *const etch_method_t,
    i: usize,
    data: *mut *const c_void,
    nbytes: *mut usize,
) -> etch_status_t {
    // SAFETY: caller's contract.
    let method = match unsafe { method_ref(m) } {
        Ok((method, _)) => method,
        Err(status) => return status,
    };
    code(
        &index(i, method.num_outputs().unwrap_or(0))
            .and_then(|()| method.output(i))
            .and_then(|o| match o {
                Output::Tensor(t) => {
                    // SAFETY: out-pointers NULL or writable (caller).
                    unsafe {
                        ptr::put(data, t.data.as_ptr().cast::<c_void>(), 2)?;
                        ptr::put(nbytes, t.data.len(), 3)
                    }
                }
                _ => Err(Error::new(
                    ErrorCode::InvalidType,
                    "output is not a tensor",
                    i as u32,
                )),
            }),
    )
}

/// The kernel instruction `i` calls (numbered across chains, as in
/// `etch_method_execute_profiled`), e.g. `"cortex_m::quantized_conv2d.out"`;
/// not NUL-terminated (print with `"%.*s"`). `ETCH_NOT_FOUND` for
/// instructions that call no kernel.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `name`, `len` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_instruction_operator(
    m: *const etch_method_t,
    i: usize,
    name: *mut *const c_char,
    len: *mut usize,
) -> etch_status_t {
    // SAFETY: caller's contract.
    let meta = match unsafe { method_ref(m) } {
        Ok((_, meta)) => meta,
        Err(status) => return status,
    };
    let op = index(i, meta.num_instructions().unwrap_or(0))
        .and_then(|()| meta.operator_of_instruction(i));
    code(&op.and_then(|(op, overload)| {
        let k = etch_runtime::registry::find(kernels(), op, overload)
            .and_then(|k| kernels().get(k))
            .ok_or(Error::new(
                ErrorCode::OperatorMissing,
                "operator not registered",
                i as u32,
            ))?;
        // SAFETY: out-pointers NULL or writable (caller).
        unsafe {
            ptr::put(name, k.name.as_ptr().cast::<c_char>(), 2)?;
            ptr::put(len, k.name.len(), 3)
        }
    }))
}

/// Scalar output `i` as an integer: Int and Bool outputs (the int8-I/O
/// exports' `input0_zp`, `input0_dtype`, ... config methods).
/// `ETCH_INVALID_TYPE` for tensors and doubles.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_output_int(
    m: *const etch_method_t,
    i: usize,
    out: *mut i64,
) -> etch_status_t {
    // SAFETY: caller's contract, passed on.
    unsafe {
        scalar_output(m, i, out, "output is not an int", |o| match o {
            Output::Int(v) => Some(v),
            Output::Bool(b) => Some(b as i64),
            _ => None,
        })
    }
}

/// Scalar output `i` as a double: Double outputs (`input0_scale`, ...).
/// `ETCH_INVALID_TYPE` for other kinds.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_output_double(
    m: *const etch_method_t,
    i: usize,
    out: *mut f64,
) -> etch_status_t {
    // SAFETY: caller's contract, passed on.
    unsafe {
        scalar_output(m, i, out, "output is not a double", |o| match o {
            Output::Double(v) => Some(v),
            _ => None,
        })
    }
}

/// Scalar output `i` of `m` through `pick`, written to `out`;
/// `ETCH_INVALID_TYPE` (with `what`) when `pick` refuses its kind.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `out` NULL or writable.
unsafe fn scalar_output<T>(
    m: *const etch_method_t,
    i: usize,
    out: *mut T,
    what: &'static str,
    pick: impl FnOnce(Output<'_>) -> Option<T>,
) -> etch_status_t {
    // SAFETY: caller's contract.
    let method = match unsafe { method_ref(m) } {
        Ok((method, _)) => method,
        Err(status) => return status,
    };
    code(
        &index(i, method.num_outputs().unwrap_or(0))
            .and_then(|()| method.output(i))
            .and_then(|o| pick(o).ok_or(Error::new(ErrorCode::InvalidType, what, i as u32)))
            // SAFETY: `out` NULL or writable (caller).
            .and_then(|v| unsafe { ptr::put(out, v, 2) }),
    )
}
