//! Outputs: `etch_method_output*` read what an execute left in the
//! planned memory (tensor bytes, sizes, scalars).

use core::ffi::c_void;

use etch_runtime::{Error, ErrorCode, Output};

use super::{etch_method_t, method_ref};
use crate::program::index;
use crate::ptr::{self, Region};
use crate::status::{at, code, etch_status_t, invalid_argument};

/// Output `i` after an execute: `*data` points into the method's planned
/// memory (valid until the next execute), `*nbytes` its size. Tensor
/// outputs only (`ETCH_INVALID_TYPE` for scalars). `data` and `nbytes` must
/// not overlap each other or the method's memory (`ETCH_INVALID_ARGUMENT`).
/// Like every call on `m`, `ETCH_INVALID_STATE` while the method runs.
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
    let call = [Region::writes(data, 1, 2), Region::writes(nbytes, 1, 3)];
    // SAFETY: caller's contract.
    let method = match unsafe { method_ref(m, &call) } {
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
                    at(i),
                )),
            }),
    )
}

/// Output `i`'s sizes after an execute: the sizes the kernels computed for a
/// bounded dynamic output (at most its upper bounds), the program's for a
/// static one. Writes the rank to `*dim` and the sizes to `sizes[0..rank]`
/// (`etch_method_output`'s byte count is their element count times the
/// element size). `cap` is the room in `sizes`: fewer entries than the rank
/// give `ETCH_INVALID_ARGUMENT` with `at` = the rank, and nothing is written
/// (`ETCH_MAX_DIMS` entries always suffice). Tensor outputs only
/// (`ETCH_INVALID_TYPE`). `sizes` and `dim` must not overlap each other or
/// the method's memory (`ETCH_INVALID_ARGUMENT`, `at` = 2 or 4); like every
/// call on `m`, `ETCH_INVALID_STATE` while the method runs.
///
/// # Safety
/// `m` NULL or an `etch_method_t`; `sizes` NULL or `cap` writable
/// `int32_t`; `dim` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn etch_method_output_sizes(
    m: *const etch_method_t,
    i: usize,
    sizes: *mut i32,
    cap: usize,
    dim: *mut usize,
) -> etch_status_t {
    let call = [Region::writes(sizes, cap, 2), Region::writes(dim, 1, 4)];
    // SAFETY: caller's contract.
    let method = match unsafe { method_ref(m, &call) } {
        Ok((method, _)) => method,
        Err(status) => return status,
    };
    code(
        &index(i, method.num_outputs().unwrap_or(0))
            .and_then(|()| method.output(i))
            .and_then(|o| match o {
                Output::Tensor(t) => {
                    let rank = t.shape.rank();
                    if cap < rank {
                        return Err(invalid_argument(
                            "sizes has fewer entries than the output's rank (at = rank)",
                            at(rank),
                        ));
                    }
                    if rank != 0 && (sizes.is_null() || !sizes.is_aligned()) {
                        return Err(invalid_argument("null or misaligned sizes", 2));
                    }
                    if dim.is_null() || !dim.is_aligned() {
                        return Err(invalid_argument(
                            "null or misaligned out-pointer (at = argument)",
                            4,
                        ));
                    }
                    for (d, s) in t.shape.sizes().iter().enumerate() {
                        // SAFETY: `d < rank <= cap` entries of a non-null,
                        // aligned array the caller made writable, not the
                        // method's memory (checked).
                        unsafe { sizes.add(d).write(i32::try_from(s).unwrap_or(i32::MAX)) };
                    }
                    // SAFETY: `dim` NULL or writable (caller).
                    unsafe { ptr::put(dim, rank, 4) }
                }
                _ => Err(Error::new(
                    ErrorCode::InvalidType,
                    "output is not a tensor",
                    at(i),
                )),
            }),
    )
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
    let method = match unsafe { method_ref(m, &[Region::writes(out, 1, 2)]) } {
        Ok((method, _)) => method,
        Err(status) => return status,
    };
    code(
        &index(i, method.num_outputs().unwrap_or(0))
            .and_then(|()| method.output(i))
            .and_then(|o| pick(o).ok_or(Error::new(ErrorCode::InvalidType, what, at(i))))
            // SAFETY: `out` NULL or writable (caller).
            .and_then(|v| unsafe { ptr::put(out, v, 2) }),
    )
}
