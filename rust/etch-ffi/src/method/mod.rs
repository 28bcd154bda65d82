//! `etch_method_t`: a method loaded into caller-owned memory.
//!
//! The runtime's `Method` borrows a list of planned-buffer slices; that list
//! lives inside the same `etch_method_t`, so a loaded method must stay where
//! it was loaded. Every call checks the handle's address against the one
//! recorded at load and refuses a moved or copied handle with
//! `ETCH_INVALID_STATE` instead of following a stale pointer.
//!
//! Here: the handle, its checks (`with_method`, `method_ref`), load, unload
//! and the recorded error. Declared in the order of a method's life (the
//! order of `include/etch.h`): `input.rs`, `execute.rs` (plain, profiled,
//! reset, instruction limit), `output.rs`.

use core::ffi::{c_char, c_void};
use core::mem::{align_of, size_of, MaybeUninit};
use core::ptr::{addr_of, addr_of_mut};

use etch_runtime::{Error, Method, MethodMeta, MAX_MEMORY_IDS};

use crate::program::{etch_program_t, program};
use crate::ptr::{self, disjoint, Held, Region, Span};
use crate::registry::kernels;
use crate::status::{at, code, etch_error_t, etch_status_t, invalid_argument, ErrorSlot};
use crate::{ETCH_INVALID_ARGUMENT, ETCH_INVALID_STATE};

// In the order of a method's life, which is include/etch.h's order.
mod input;

mod execute;

mod output;

pub use execute::*;
pub use input::*;
pub use output::*;

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
/// Loaded and inside a call that runs it (execute, set_input, ...): every
/// call on the handle until that one returns (from a C kernel, a clock or
/// cycle callback) is refused with `ETCH_INVALID_STATE` and changes nothing.
const RUNNING: u32 = 0x6574_4d52; // "etMR"

type Planned = [&'static mut [u8]; MAX_MEMORY_IDS];

struct Inner {
    magic: u32,
    error: ErrorSlot,
    /// Address of the handle at load (moved handles are refused).
    this: usize,
    method: MaybeUninit<Method<'static, 'static>>,
    /// Borrowed by `method`; only ever accessed through that borrow.
    planned: MaybeUninit<Planned>,
    /// Address ranges of what the method uses: the program bytes (read),
    /// then the handle itself, the state and the planned buffers (written).
    held: [Span; HELD],
}

const HELD: usize = MAX_MEMORY_IDS + 3;
const _: () = assert!(HELD == 11); // `load` names their arguments

const _: () = assert!(size_of::<Inner>() <= size_of::<etch_method_t>());
const _: () = assert!(align_of::<Inner>() <= align_of::<etch_method_t>());

/// `m` as `Inner`, null and alignment checked.
fn inner_ptr(m: *const etch_method_t) -> Option<*mut Inner> {
    let inner = m.cast::<Inner>().cast_mut();
    (!inner.is_null() && inner.is_aligned()).then_some(inner)
}

/// Whether `inner` holds a method loaded at this very address (`LOADED`),
/// one running a call (`RUNNING`), or neither (0).
///
/// # Safety
/// `inner` must point to a readable `etch_method_t` (any contents).
unsafe fn state_of(inner: *const Inner) -> u32 {
    // SAFETY: `magic` is a u32 (any bits valid); `this` is only read once
    // `magic` says etch_method_load wrote it.
    unsafe {
        match (*inner).magic {
            m @ (LOADED | RUNNING) if (*inner).this == inner as usize => m,
            _ => 0,
        }
    }
}

/// The handle's memory as a region (the one `held[1]` records at load).
fn handle_span(m: *const etch_method_t) -> Span {
    Span::of_raw(m, 1)
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

/// Runs `f` on the loaded method behind `m` and records the outcome: the
/// one way a call changes a method. `call` lists every region the call is
/// handed besides the handle (its buffers and out-pointers), checked
/// against the method's memory (handle, program bytes, state, planned
/// buffers) and each other by `ptr::disjoint` before `f` runs. While `f`
/// runs the method is busy: a call on it from a kernel or a callback gets
/// `ETCH_INVALID_STATE` and changes nothing (not even the recorded error).
///
/// # Safety
/// `m` must be NULL or point to a writable `etch_method_t`; each region of
/// `call` that `f` dereferences must be valid as the entry point documents.
pub(crate) unsafe fn with_method(
    m: *mut etch_method_t,
    call: &[Region],
    f: impl FnOnce(&mut Method<'static, 'static>) -> Result<(), Error>,
) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: `inner` points to a writable handle (caller).
    if unsafe { state_of(inner) } != LOADED {
        return ETCH_INVALID_STATE;
    }
    // SAFETY: loaded at this address: `held` is plain data written at load,
    // not borrowed by the method.
    let held = unsafe { &*addr_of!((*inner).held) };
    let (reads, writes) = held.split_at(1);
    if let Err(e) = disjoint(Held { reads, writes }, call) {
        // SAFETY: as above.
        return unsafe { record(inner, Err(e)) };
    }
    // SAFETY: as above; `magic` is not borrowed by the method. Set back
    // below: nothing between unwinds (panic = abort) or returns early.
    unsafe { addr_of_mut!((*inner).magic).write(RUNNING) };
    // SAFETY: loaded at this address, so `method` is initialised and its
    // borrows (of `planned`, the state and the planned buffers) are live; the
    // reference covers the `method` field only, which no other call touches
    // while `magic` says RUNNING.
    let method = unsafe { (*addr_of_mut!((*inner).method)).assume_init_mut() };
    let r = f(method);
    // SAFETY: as above; `method`'s borrow has ended.
    unsafe {
        addr_of_mut!((*inner).magic).write(LOADED);
        record(inner, r)
    }
}

/// The loaded method behind a const handle, after checking `call` (the
/// out-pointers the call writes) against everything the method holds.
///
/// # Safety
/// `m` must be NULL or point to a readable `etch_method_t`.
unsafe fn method_ref<'a>(
    m: *const etch_method_t,
    call: &[Region],
) -> Result<(&'a Method<'static, 'static>, MethodMeta<'static>), etch_status_t> {
    let inner = inner_ptr(m).ok_or(ETCH_INVALID_ARGUMENT)?;
    // SAFETY: readable handle (caller).
    if unsafe { state_of(inner) } != LOADED {
        return Err(ETCH_INVALID_STATE);
    }
    // SAFETY: loaded: `held` is plain data written at load.
    let held = unsafe { &*addr_of!((*inner).held) };
    disjoint(
        Held {
            reads: held,
            writes: &[],
        },
        call,
    )
    .map_err(|e| e.code.as_u32())?;
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
/// Buffers (and `*m`, `*program`, `name`, the two arrays) must not overlap
/// each other or the program bytes, except that what is only read (program
/// bytes, `*program`, `name`, the arrays) may overlap what else is only
/// read: checked, `ETCH_INVALID_ARGUMENT` with `at` = the argument. When
/// `*m` overlaps `*program`, `name` or the arrays, nothing is written
/// (`*m` keeps what it held). A handle whose method is running (a kernel or
/// callback calling back) gives `ETCH_INVALID_STATE` and is left as it
/// is. Short buffers fail with
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
    // SAFETY: writable handle (caller).
    if unsafe { state_of(inner) } == RUNNING {
        return ETCH_INVALID_STATE;
    }
    // What is read before the handle is first written must not be the
    // handle. (Each array's length is checked in `load`; here a count above
    // the maximum checks none of it.)
    let n = if num_planned <= MAX_MEMORY_IDS {
        num_planned
    } else {
        0
    };
    // SAFETY: `name` NULL or NUL-terminated (caller); read once, here.
    let name_str = unsafe { ptr::name(name, 2) };
    let name_len = name_str.map_or(0, |s| s.len().saturating_add(1));
    if let Err(e) = disjoint(
        Held::NONE,
        &[
            Region::writes(m, 1, 0),
            Region::reads(program, 1, 1),
            Region::reads(name, name_len, 2),
            Region::reads(planned, n, 5),
            Region::reads(planned_lens, n, 6),
        ],
    ) {
        return e.code.as_u32();
    }
    // SAFETY: writable handle (caller); `magic` first, so a failure below
    // leaves it unloaded whatever it held.
    // `held` says nothing is known yet (etch_method_error reads it).
    unsafe {
        addr_of_mut!((*inner).magic).write(FAILED);
        addr_of_mut!((*inner).held).write([Span::EMPTY; HELD]);
    }
    // SAFETY: the caller's contracts above, passed on.
    let r = unsafe {
        load(
            inner,
            program,
            name_str,
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
    name: Result<&str, Error>,
    state: *mut c_void,
    state_len: usize,
    planned: *const *mut c_void,
    planned_lens: *const usize,
    num_planned: usize,
) -> Result<(), Error> {
    // SAFETY: caller's contracts.
    let program = unsafe { program(program_ptr) }?;
    // Recorded at once, so that etch_method_error keeps its out-pointer
    // off the program bytes even when the load fails.
    // SAFETY: a disjoint field of the writable handle, no live references.
    unsafe { addr_of_mut!((*inner).held[0]).write(Span::of(program.file().data())) };
    let meta = program.method_meta(name?)?;
    if num_planned > MAX_MEMORY_IDS {
        return Err(invalid_argument(
            "more than ETCH_MAX_PLANNED_BUFFERS planned buffers (at = count)",
            at(num_planned),
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

    // Everything the method will hold a reference to: no two may overlap
    // (the program bytes are only read, as are the arrays).
    let mut buffers: Planned = Default::default();
    for (i, slot) in buffers.iter_mut().enumerate().take(num_planned) {
        // SAFETY: `i < num_planned` entries are readable (caller).
        let (p, len) = unsafe { (*planned.add(i), *planned_lens.add(i)) };
        // SAFETY: each entry is NULL or `len` writable bytes (caller).
        *slot = unsafe { ptr::bytes_mut(p, len, 5) }?;
    }
    // SAFETY: NULL or `state_len` writable bytes (caller).
    let state = unsafe { ptr::bytes_mut(state, state_len, 3) }?;
    let mut held = [Span::EMPTY; HELD];
    held[0] = Span::of(program.file().data());
    held[1] = handle_span(inner.cast());
    held[2] = Span::of(state);
    for (h, buf) in held.iter_mut().skip(3).zip(buffers.iter()) {
        *h = Span::of(buf);
    }
    let mut regions = [Region::reads(planned, num_planned, 5); HELD + 2];
    regions[1] = Region::reads(planned_lens, num_planned, 6);
    let args = [1, 0, 3, 5, 5, 5, 5, 5, 5, 5, 5];
    for (i, (r, (h, arg))) in regions
        .iter_mut()
        .skip(2)
        .zip(held.iter().zip(args))
        .enumerate()
    {
        // Only the program bytes (held[0]) are read-only.
        *r = Region::of(*h, i != 0, arg);
    }
    disjoint(Held::NONE, &regions)?;

    // SAFETY: `planned` is a field of the writable handle, written once here
    // and afterwards reached only through the borrow handed to `Method`.
    let list: &'static mut Planned = unsafe {
        let field = addr_of_mut!((*inner).planned);
        field.write(MaybeUninit::new(buffers));
        (*field).assume_init_mut()
    };
    let list = list.get_mut(..num_planned).unwrap_or(&mut []);
    let method = Method::load(&meta, state, list, kernels(), &[])?;
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
    // SAFETY: readable handle (caller); `error` and `held` are only read
    // once `magic` says etch_method_load wrote them (it writes `held` first,
    // all empty, then fills it, and `error` on every outcome), and not
    // while a call runs the method.
    let (magic, error, held) = unsafe {
        match (*inner).magic {
            m @ (LOADED | FAILED) => (m, (*inner).error, *addr_of!((*inner).held)),
            _ => return ETCH_INVALID_STATE,
        }
    };
    // A loaded method: everything it holds; a failed load: the handle and
    // the program bytes (if the program was known); a moved handle: itself.
    let failed = [handle_span(m), held[0]];
    // SAFETY: readable handle (caller).
    let reads = match (magic, unsafe { state_of(inner) }) {
        (_, LOADED) => &held[..],
        (FAILED, _) => &failed[..],
        _ => &failed[..1],
    };
    let held = Held { reads, writes: &[] };
    // SAFETY: `out` NULL or writable (caller), not the method's memory
    // (checked).
    code(
        &disjoint(held, &[Region::writes(out, 1, 1)])
            .and_then(|()| unsafe { ptr::put(out, error.to_c(), 1) }),
    )
}

/// Marks `*m` unloaded: every later call on it returns `ETCH_INVALID_STATE`
/// until it is loaded again. Call it before the handle's storage or any of
/// its buffers go away (end of scope, `free`, reuse): only then can a later
/// handle that happens to occupy the same bytes be told from a live one
/// (see "What the handle checks detect" in the header). `ETCH_OK` for any
/// writable handle, loaded or not, except one whose method is running (a
/// kernel or callback unloading it): `ETCH_INVALID_STATE`, still loaded.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t` that no call is using.
#[no_mangle]
pub unsafe extern "C" fn etch_method_unload(m: *mut etch_method_t) -> etch_status_t {
    let Some(inner) = inner_ptr(m) else {
        return ETCH_INVALID_ARGUMENT;
    };
    // SAFETY: writable handle (caller).
    if unsafe { state_of(inner) } == RUNNING {
        return ETCH_INVALID_STATE;
    }
    // SAFETY: writable handle (caller); the method holds no destructor-owned
    // resources (no heap), so forgetting it is all unloading takes. `magic`
    // first, then `this`: neither is borrowed by the method.
    unsafe {
        addr_of_mut!((*inner).magic).write(0);
        addr_of_mut!((*inner).this).write(0);
    }
    crate::ETCH_OK
}
