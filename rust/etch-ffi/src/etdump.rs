//! ExecuTorch ETDump from C (feature `etdump`): one execute recorded by
//! etch-etdump's observer into caller buffers, ready to store or send to a
//! host where ExecuTorch's Inspector reads it.

use core::ffi::c_void;

use etch_etdump::EtDumpObserver;

use crate::method::{etch_method_t, with_method};
use crate::ptr::{self, Region};
use crate::status::{etch_status_t, invalid_argument};

/// Runs the method once, recording ExecuTorch's ETDump (`.etdp`: the
/// size-prefixed `ED00` flatbuffer ExecuTorch's `ETDumpGen` writes) into
/// `etdump`: one `Execute` run block with a `native_call_<op>.<overload>`
/// profile event per kernel call and `Method::execute` around the run, each
/// timed by two `clock()` readings (any monotonic tick: cycles, ns; tell
/// the Inspector which). The file starts at `etdump[0]`; `*written` gets its
/// length.
///
/// A buffer too small fails with `ETCH_MEMORY_ALLOCATION_FAILED`, `at` = the
/// bytes missing at the step that failed (a lower bound: retry with at least
/// `etdump_len + at`). The DS-CNN fixture needs 1,056 bytes.
/// `ETCH_INVALID_ARGUMENT` for a NULL clock or `written`, or an `etdump`
/// buffer or `written` overlapping each other, `*m`, the program bytes, the
/// state or a planned buffer (`at` = the argument; nothing runs).
/// Re-entry: the clock is called while the method runs, and any call it
/// makes on `m` returns `ETCH_INVALID_STATE`. `*written` is set, and the outputs are
/// valid, only on success; set the inputs before every call, as for
/// `etch_method_execute`.
///
/// Needs the library built with the `etdump` feature (Zephyr:
/// `CONFIG_ETCH_ETDUMP`; `ETCH_FEATURE_ETDUMP` in `etch_build_features()`).
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `etdump` NULL or `etdump_len`
/// writable bytes; `written` NULL or writable; `clock` NULL or a function
/// safe to call from here (calls it makes on `m` return
/// `ETCH_INVALID_STATE`).
#[no_mangle]
pub unsafe extern "C" fn etch_method_execute_etdump(
    m: *mut etch_method_t,
    clock: Option<extern "C" fn() -> u64>,
    etdump: *mut c_void,
    etdump_len: usize,
    written: *mut usize,
) -> etch_status_t {
    // SAFETY: the caller's contracts, passed on; no debug buffer.
    unsafe {
        execute_etdump(
            m,
            clock,
            etdump,
            etdump_len,
            written,
            core::ptr::null_mut(),
            0,
            core::ptr::null_mut(),
        )
    }
}

/// `etch_method_execute_etdump` that also records every kernel call's
/// output tensor (ExecuTorch's debug mode): the tensors go into `debug`
/// (16-byte aligned offsets, logical order; the Inspector's
/// `debug_buffer_path`), a debug event per tensor into the ETDump, and the
/// program outputs after the run. `*debug_written` gets the debug buffer's
/// length. The DS-CNN needs 3,408 bytes of ETDump and 96,092 of debug
/// buffer.
///
/// # Safety
/// As `etch_method_execute_etdump`; `debug` NULL or `debug_len` writable
/// bytes; `debug_written` NULL or writable. `debug` and `debug_written` are
/// checked like `etdump` and `written` (against those too).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn etch_method_execute_etdump_debug(
    m: *mut etch_method_t,
    clock: Option<extern "C" fn() -> u64>,
    etdump: *mut c_void,
    etdump_len: usize,
    written: *mut usize,
    debug: *mut c_void,
    debug_len: usize,
    debug_written: *mut usize,
) -> etch_status_t {
    if debug_written.is_null() {
        // Checked here: the shared path treats a NULL `debug_written` as
        // "no debug buffer".
        // SAFETY: `m` NULL or a writable handle (caller).
        return unsafe {
            with_method(m, &[], |_| {
                Err(invalid_argument("null debug_written (at = argument)", 8))
            })
        };
    }
    // SAFETY: the caller's contracts, passed on.
    unsafe {
        execute_etdump(
            m,
            clock,
            etdump,
            etdump_len,
            written,
            debug,
            debug_len,
            debug_written,
        )
    }
}

/// One instantiation of the observed instruction loop for both entry points.
///
/// # Safety
/// As `etch_method_execute_etdump_debug`; `debug_written` NULL means no
/// debug buffer.
#[allow(clippy::too_many_arguments)]
unsafe fn execute_etdump(
    m: *mut etch_method_t,
    clock: Option<extern "C" fn() -> u64>,
    etdump: *mut c_void,
    etdump_len: usize,
    written: *mut usize,
    debug: *mut c_void,
    debug_len: usize,
    debug_written: *mut usize,
) -> etch_status_t {
    // Written between kernel calls: none may be the method's memory (its
    // handle, program bytes, state, planned buffers), nor another.
    let with_debug = !debug_written.is_null();
    let call = [
        Region::writes(etdump.cast::<u8>(), etdump_len, 2),
        Region::writes(written, 1, 4),
        Region::writes(
            debug.cast::<u8>(),
            if with_debug { debug_len } else { 0 },
            5,
        ),
        Region::writes(debug_written, 1, 7),
    ];
    // SAFETY: `m` NULL or a writable handle (caller).
    unsafe {
        with_method(m, &call, |method| {
            let clock = clock.ok_or(invalid_argument("null clock (at = argument)", 1))?;
            if written.is_null() || !written.is_aligned() {
                return Err(invalid_argument("null written (at = argument)", 4));
            }
            // SAFETY: NULL or `etdump_len` writable bytes (caller).
            let etdump = ptr::bytes_mut(etdump, etdump_len, 2)?;
            let debug = if with_debug {
                if !debug_written.is_aligned() {
                    return Err(invalid_argument("misaligned debug_written", 7));
                }
                // SAFETY: NULL or `debug_len` writable bytes (caller).
                ptr::bytes_mut(debug, debug_len, 5)?
            } else {
                &mut []
            };
            let meta = method.meta();
            let mut obs: EtDumpObserver<'_, '_, '_, _> =
                EtDumpObserver::new(etdump, &meta, || clock());
            if with_debug {
                obs = obs.with_intermediate_outputs(debug);
            }
            obs.execute(method)?;
            let (file, dbg) = obs.finish()?;
            // SAFETY: `written` non-null and aligned (checked), writable
            // (caller); `debug_written` likewise when present.
            ptr::put(written, file.len(), 4)?;
            if with_debug {
                ptr::put(debug_written, dbg.len(), 7)?;
            }
            Ok(())
        })
    }
}
