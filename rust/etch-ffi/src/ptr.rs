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
    pub(crate) const EMPTY: Span = Span { start: 0, len: 0 };

    pub(crate) fn of(bytes: &[u8]) -> Span {
        Span {
            start: bytes.as_ptr() as usize,
            len: bytes.len(),
        }
    }

    /// `n` values of `T` at `p`; NULL is empty, a length that overflows
    /// saturates (the range is refused later, by `bytes`/`bytes_mut`).
    pub(crate) fn of_raw<T>(p: *const T, n: usize) -> Span {
        Span {
            start: p as usize,
            len: if p.is_null() {
                0
            } else {
                n.saturating_mul(core::mem::size_of::<T>())
            },
        }
    }

    /// Whether the ranges share a byte (empty ranges share none).
    pub(crate) fn overlaps(self, other: Span) -> bool {
        self.len != 0
            && other.len != 0
            && self.start < other.start.saturating_add(other.len)
            && other.start < self.start.saturating_add(self.len)
    }
}

/// One memory region a C call is handed: its range, whether the call writes
/// it, and the argument it came from (the `at` of the refusal).
#[derive(Clone, Copy)]
pub(crate) struct Region {
    span: Span,
    writes: bool,
    arg: u32,
}

impl Region {
    /// `n` values of `T` at `p` that the call only reads.
    pub(crate) fn reads<T>(p: *const T, n: usize, arg: u32) -> Region {
        Region {
            span: Span::of_raw(p, n),
            writes: false,
            arg,
        }
    }

    /// `n` values of `T` at `p` that the call writes (an out-pointer: n = 1).
    pub(crate) fn writes<T>(p: *mut T, n: usize, arg: u32) -> Region {
        Region {
            span: Span::of_raw(p.cast_const(), n),
            writes: true,
            arg,
        }
    }

    pub(crate) fn of(span: Span, writes: bool, arg: u32) -> Region {
        Region { span, writes, arg }
    }
}

/// What a handle holds while a call runs: memory it only reads (the program
/// bytes, or the whole handle for calls that do not change it) and memory it
/// writes (a method's handle, state and planned buffers).
#[derive(Clone, Copy)]
pub(crate) struct Held<'a> {
    pub reads: &'a [Span],
    pub writes: &'a [Span],
}

impl Held<'_> {
    pub(crate) const NONE: Held<'static> = Held {
        reads: &[],
        writes: &[],
    };
}

/// The C API's one overlap check, which every entry point runs on every
/// pointer it is handed before it dereferences any: `InvalidArgument`
/// (`at` = the argument) when a region of `call` shares a byte with memory
/// the handle writes, with memory it reads if the region is written, or with
/// an earlier region of `call` if either of the two is written. Regions that
/// are only read may overlap each other and the read-only memory (the same
/// constant bytes passed twice).
pub(crate) fn disjoint(held: Held<'_>, call: &[Region]) -> Result<(), Error> {
    for (k, r) in call.iter().enumerate() {
        let s = r.span;
        let clash = held.writes.iter().any(|h| h.overlaps(s))
            || r.writes && held.reads.iter().any(|h| h.overlaps(s))
            || call
                .iter()
                .take(k)
                .any(|o| (o.writes || r.writes) && o.span.overlaps(s));
        if clash {
            return Err(invalid_argument(
                "buffer overlaps memory the call uses (at = argument)",
                r.arg,
            ));
        }
    }
    Ok(())
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
        len = len.saturating_add(1);
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
