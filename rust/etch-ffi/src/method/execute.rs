//! Running a loaded method: `etch_method_execute` (plain or timing each
//! instruction), `etch_method_reset`, the instruction limit, and the
//! operator each instruction calls (to name a profile's rows).

use core::ffi::c_char;
use core::mem::size_of;

use etch_runtime::{Error, ErrorCode, ExecutionObserver};

use super::{etch_method_t, method_ref, with_method};
use crate::program::index;
use crate::ptr::{self, Region};
use crate::registry::kernels;
use crate::status::{at, code, etch_status_t, invalid_argument};

/// Runs the method once; on failure `etch_method_error()` gives the failing
/// instruction in `at`. While it runs the method is busy: a call on `m`
/// from a kernel or callback returns `ETCH_INVALID_STATE`, and so does this
/// one when `m` is already running.
///
/// Set every input again before each execution: as in ExecuTorch, the
/// memory plan may place later tensors over an input's bytes, so after a
/// run an input need not hold what was set (state kept across executions
/// lives in the program's mutable buffers, never in its inputs).
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`.
#[no_mangle]
pub unsafe extern "C" fn etch_method_execute(m: *mut etch_method_t) -> etch_status_t {
    // SAFETY: caller's contract.
    unsafe {
        with_method(m, &[], |method| {
            method.execute_observed(&mut Profiler::none())
        })
    }
}

/// Puts the method's mutable state back to the program's initial values,
/// as unloading and loading it again would, without either: the mutable
/// buffers (planned tensors with an initial value, what the exporter makes
/// of a `register_buffer` the model updates in place; `etch inspect` lists
/// them and their bytes) are copied again from the program. Nothing else
/// changes: inputs stay set, the other planned bytes are untouched. A
/// streaming application calls it where a stream starts over. The state
/// lives in the planned buffers the caller gave `etch_method_load`; a
/// method without mutable buffers has nothing to reset (`ETCH_OK`). A
/// call from a kernel or callback of the running method is refused
/// (`ETCH_INVALID_STATE`, busy) like every other call on it.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`.
#[no_mangle]
pub unsafe extern "C" fn etch_method_reset(m: *mut etch_method_t) -> etch_status_t {
    // SAFETY: caller's contract.
    unsafe { with_method(m, &[], |method| method.reset_state()) }
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
        with_method(m, &[], |method| {
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
/// needed, and nothing runs); the array must not overlap `*m`, the program
/// bytes, the state or a planned buffer (`ETCH_INVALID_ARGUMENT`, `at` = 2).
/// `cycles` runs while the method is busy: a call it makes on `m` returns
/// `ETCH_INVALID_STATE`. Name the operators with
/// `etch_method_instruction_operator`.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `cycles_per_instruction` NULL or
/// `n` writable `uint32_t`; `cycles` NULL or a function safe to call from
/// here (calls it makes on `m` return `ETCH_INVALID_STATE`).
#[no_mangle]
pub unsafe extern "C" fn etch_method_execute_profiled(
    m: *mut etch_method_t,
    cycles: Option<extern "C" fn() -> u32>,
    cycles_per_instruction: *mut u32,
    n: usize,
) -> etch_status_t {
    // SAFETY: caller's contracts.
    unsafe {
        let table = Region::writes(cycles_per_instruction, n, 2);
        with_method(m, &[table], |method| {
            let needed = method.meta().num_instructions()?;
            let cycles = cycles.ok_or(invalid_argument("null cycle counter", 1))?;
            let short = invalid_argument(
                "profile array null, misaligned or shorter than num_instructions (at = count needed)",
                at(needed),
            );
            if n < needed || !cycles_per_instruction.is_aligned() {
                return Err(short);
            }
            let bytes = n.checked_mul(size_of::<u32>()).ok_or(short)?;
            // SAFETY: `n` writable, aligned u32 (caller), not the method's
            // memory (checked: it is written between kernel calls);
            // `bytes_mut` checks null and wrapping.
            let out = ptr::bytes_mut(cycles_per_instruction.cast(), bytes, 2).map_err(|_| short)?;
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
    let call = [Region::writes(name, 1, 2), Region::writes(len, 1, 3)];
    // SAFETY: caller's contract.
    let meta = match unsafe { method_ref(m, &call) } {
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
                at(i),
            ))?;
        // SAFETY: out-pointers NULL or writable (caller).
        unsafe {
            ptr::put(name, k.name.as_ptr().cast::<c_char>(), 2)?;
            ptr::put(len, k.name.len(), 3)
        }
    }))
}
