//! Turning what C passes into Rust references, with every check that can be
//! made at the boundary: null pointers, lengths that wrap the address space,
//! unterminated names and overlapping buffers become error codes.

use core::ffi::{c_char, c_void};

use etch_runtime::Error;

use crate::status::invalid_argument;

/// Longest name (method, operator) a C string may have, NUL excluded.
pub const ETCH_MAX_NAME_LEN: usize = 255;

/// An address range `[start, start + len)`.
#[derive(Clone, Copy)]
pub(crate) struct Span {
    start: usize,
    len: usize,
}

impl Span {
    pub(crate) fn of(bytes: &[u8]) -> Span {
        Span {
            start: bytes.as_ptr() as usize,
            len: bytes.len(),
        }
    }

    pub(crate) fn of_raw<T>(p: *const T) -> Span {
        Span {
            start: p as usize,
            len: core::mem::size_of::<T>(),
        }
    }

    /// Whether the ranges share a byte (empty ranges share none).
    pub(crate) fn overlaps(self, other: Span) -> bool {
        self.len != 0
            && other.len != 0
            && self.start < other.start.wrapping_add(other.len)
            && other.start < self.start.wrapping_add(self.len)
    }
}

fn range_ok(p: usize, len: usize) -> bool {
    len <= isize::MAX as usize && p.checked_add(len).is_some()
}

/// `len` readable bytes at `p`; null is only accepted for `len == 0`.
///
/// # Safety
/// If `p` is not null, it must point to `len` readable bytes that stay valid
/// and unmodified for `'a` (the C caller's contract, stated in etch.h).
pub(crate) unsafe fn bytes<'a>(p: *const c_void, len: usize, arg: u32) -> Result<&'a [u8], Error> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() || !range_ok(p as usize, len) {
        return Err(invalid_argument(
            "null or wrapping buffer (at = argument)",
            arg,
        ));
    }
    // SAFETY: non-null, the range does not wrap and is at most isize::MAX
    // bytes; validity for 'a is the caller's contract above.
    Ok(unsafe { core::slice::from_raw_parts(p.cast::<u8>(), len) })
}

/// `len` writable bytes at `p`; null is only accepted for `len == 0`.
///
/// # Safety
/// If `p` is not null, it must point to `len` writable bytes that nothing
/// else reads or writes for `'a`.
pub(crate) unsafe fn bytes_mut<'a>(
    p: *mut c_void,
    len: usize,
    arg: u32,
) -> Result<&'a mut [u8], Error> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() || !range_ok(p as usize, len) {
        return Err(invalid_argument(
            "null or wrapping buffer (at = argument)",
            arg,
        ));
    }
    // SAFETY: non-null, the range does not wrap and is at most isize::MAX
    // bytes; exclusive validity for 'a is the caller's contract above.
    Ok(unsafe { core::slice::from_raw_parts_mut(p.cast::<u8>(), len) })
}

/// A NUL-terminated UTF-8 name of at most `ETCH_MAX_NAME_LEN` bytes; reads
/// stop at the NUL or after that many bytes, never further.
///
/// # Safety
/// If `p` is not null, the bytes up to its NUL (or the first
/// `ETCH_MAX_NAME_LEN + 1`) must be readable for `'a`.
pub(crate) unsafe fn name<'a>(p: *const c_char, arg: u32) -> Result<&'a str, Error> {
    if p.is_null() {
        return Err(invalid_argument("null name (at = argument)", arg));
    }
    let mut len = 0;
    // SAFETY: reads stay within the terminated string the caller promised,
    // one byte at a time, stopping at its NUL.
    while unsafe { *p.add(len) } != 0 {
        len += 1;
        if len > ETCH_MAX_NAME_LEN {
            return Err(invalid_argument(
                "name too long or not terminated (at = argument)",
                arg,
            ));
        }
    }
    // SAFETY: the `len` bytes before the NUL were just read.
    let bytes = unsafe { core::slice::from_raw_parts(p.cast::<u8>(), len) };
    core::str::from_utf8(bytes)
        .map_err(|_| invalid_argument("name is not UTF-8 (at = argument)", arg))
}

/// Writes `value` to an out-pointer, `InvalidArgument` if it is null.
///
/// # Safety
/// If `p` is not null, it must be valid for writing one `T`.
pub(crate) unsafe fn put<T>(p: *mut T, value: T, arg: u32) -> Result<(), Error> {
    if p.is_null() || !p.is_aligned() {
        return Err(invalid_argument(
            "null or misaligned out-pointer (at = argument)",
            arg,
        ));
    }
    // SAFETY: non-null; validity (and alignment) for one T is the caller's
    // contract. `write` does not read or drop the old, maybe uninitialised, T.
    unsafe { p.write(value) };
    Ok(())
}
