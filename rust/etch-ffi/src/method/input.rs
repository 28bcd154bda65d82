//! Inputs: `etch_method_set_input*` copy into the planned memory (typed,
//! or resizing a bounded dynamic input first).

use core::ffi::c_void;

use etch_runtime::{Error, ErrorCode};

use super::{etch_method_t, with_method};
use crate::program::{index, ETCH_MAX_DIMS};
use crate::ptr::{self, Region};
use crate::status::{etch_status_t, invalid_argument};

/// Copies `len` bytes (exactly the input's `nbytes`, in its dtype and dim
/// order) into input `i`'s planned memory. `data` must not overlap `*m`, the
/// state or the planned buffers (`ETCH_INVALID_ARGUMENT`, `at` = 2); it may
/// be inside the program bytes.
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
    // SAFETY: caller's contracts. The copy goes into the method's memory:
    // a source inside it would alias the destination (checked).
    unsafe {
        with_method(m, &[Region::reads(data.cast::<u8>(), len, 2)], |method| {
            let bytes = ptr::bytes(data, len, 2)?;
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
    // SAFETY: caller's contracts; `data` checked as in `etch_method_set_input`.
    unsafe {
        with_method(m, &[Region::reads(data.cast::<u8>(), len, 3)], |method| {
            let bytes = ptr::bytes(data, len, 3)?;
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

/// Sets input `i` with its sizes, for a bounded dynamic input
/// (`DYNAMIC_BOUND`: exported with e.g. `Dim("T", max=32)`): as
/// ExecuTorch's `Method::set_input`, the input is first resized to
/// `sizes[0..dim]` (same rank; at most its planned number of elements, the
/// upper bounds `etch_method_input_info` reports), then `len` bytes are
/// copied (exactly the element count of `sizes` times the element size).
/// The kernels then resize what they compute from it, and
/// `etch_method_output_sizes` gives each output's sizes after the execute.
/// A static input takes only its own sizes.
///
/// Failures change nothing (the input keeps its sizes and bytes):
/// `ETCH_INVALID_ARGUMENT` for a rank above `ETCH_MAX_DIMS` (`at` = 3), a
/// negative size (`at` = 2), `len` not matching `sizes` (`at` = the bytes
/// `sizes` needs), and a resize ExecuTorch refuses (`at` = `i`): another
/// rank, sizes above the bound's element count, other sizes for a static
/// input. `sizes` and `data` must not overlap `*m`, the state or the planned
/// buffers (`ETCH_INVALID_ARGUMENT`, `at` = 2 or 4). Without the library's
/// `dynamic` feature (`ETCH_FEATURE_DYNAMIC`) every input keeps the sizes
/// the program gives it, bounded ones their upper bounds.
///
/// # Safety
/// `m` NULL or a writable `etch_method_t`; `sizes` NULL or `dim` readable
/// `int32_t`; `data` NULL or `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn etch_method_set_input_sized(
    m: *mut etch_method_t,
    i: usize,
    sizes: *const i32,
    dim: usize,
    data: *const c_void,
    len: usize,
) -> etch_status_t {
    let call = [
        Region::reads(sizes, dim, 2),
        Region::reads(data.cast::<u8>(), len, 4),
    ];
    // SAFETY: caller's contracts; neither buffer is the method's memory
    // (checked by `with_method` before the closure runs).
    unsafe {
        with_method(m, &call, |method| {
            if dim > ETCH_MAX_DIMS {
                return Err(invalid_argument("more dimensions than ETCH_MAX_DIMS", 3));
            }
            let raw = ptr::bytes(sizes.cast(), dim.saturating_mul(4), 2)?;
            let mut new = [0u32; ETCH_MAX_DIMS];
            let mut numel: u64 = 1;
            for (slot, s) in new.iter_mut().zip(raw.chunks_exact(4)) {
                let s = i32::from_ne_bytes(s.first_chunk().copied().unwrap_or_default());
                *slot = u32::try_from(s).map_err(|_| invalid_argument("negative size", 2))?;
                numel = numel.saturating_mul(u64::from(*slot));
            }
            let bytes = ptr::bytes(data, len, 4)?;
            index(i, method.num_inputs()?)?;
            let elem = method.input_meta(i)?.dtype.element_size().unwrap_or(0);
            let need = numel.saturating_mul(elem as u64);
            if need != len as u64 {
                return Err(invalid_argument(
                    "input bytes differ from its sizes (at = bytes needed)",
                    u32::try_from(need).unwrap_or(u32::MAX),
                ));
            }
            let new = new.get(..dim).unwrap_or(&[]);
            method.resize_input(i, etch_runtime::Sizes::new(new))?;
            method.set_input_bytes(i, bytes)
        })
    }
}
