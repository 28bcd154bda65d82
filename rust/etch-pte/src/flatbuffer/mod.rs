//! A minimal FlatBuffers reader over `&[u8]`: tables, vectors, strings, unions.
//!
//! Every read is bounds-checked and little-endian, with no alignment assumptions
//! (the buffer may sit anywhere in flash). Nothing here panics; a bad offset is an
//! `InvalidProgram` error carrying the byte offset where it was found.
//!
//! FlatBuffers rules implemented (see the FlatBuffers "internals" doc):
//! - a table starts with an `i32` soffset to its vtable at `table - soffset`,
//!   which may lie before or after the table and may be shared;
//! - a vtable is `u16 vtable_bytes, u16 object_bytes, u16 field_offset[..]`; a field
//!   whose slot lies past `vtable_bytes` (truncated vtable) or whose offset is 0 is
//!   absent and reads as the schema default;
//! - reference fields and vector elements of tables/strings hold a `u32` offset
//!   relative to the place they are stored;
//! - a vector or string is a `u32` length followed by the elements.

use core::marker::PhantomData;

use crate::error::{Error, Result};

// Size: every reader below is one out-of-line, non-generic function. Left to
// the inliner, each of the ~60 schema accessors carried its own copy of the
// vtable walk, offset checks and error construction (tens of KB on Cortex-M).

// The leaves stay inline (they are a compare and a load); the field, vector
// and string walks built on them are the out-of-line, shared part.
#[inline(always)]
fn bytes_at(buf: &[u8], pos: usize, n: usize) -> Option<&[u8]> {
    buf.get(pos..pos.checked_add(n)?)
}

/// Whether `a` and `b` hold the same bytes: a byte loop, for the short
/// names the runtime compares (methods, operators, backends), so that no
/// `memcmp`/`bcmp` (and its word-at-a-time body) is linked into firmware.
#[inline(never)]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Reads a little-endian `u32` at `pos`.
#[inline]
pub fn read_u32(buf: &[u8], pos: usize) -> Result<u32> {
    match bytes_at(buf, pos, 4) {
        Some(&[a, b, c, d]) => Ok(u32::from_le_bytes([a, b, c, d])),
        _ => Err(Error::invalid("read past end of buffer", pos)),
    }
}

/// Reads a little-endian `u64` at `pos`.
#[inline(never)]
pub fn read_u64(buf: &[u8], pos: usize) -> Result<u64> {
    let lo = read_u32(buf, pos)?;
    match pos.checked_add(4).map(|p| read_u32(buf, p)) {
        Some(Ok(hi)) => Ok(((hi as u64) << 32) | lo as u64),
        _ => Err(Error::invalid("read past end of buffer", pos)),
    }
}

#[inline]
fn read_u16(buf: &[u8], pos: usize) -> Result<u16> {
    match bytes_at(buf, pos, 2) {
        Some(&[a, b]) => Ok(u16::from_le_bytes([a, b])),
        _ => Err(Error::invalid("read past end of buffer", pos)),
    }
}

/// The scalar of `N` bytes at `pos` for [`Follow`]: widened to `u64`.
#[inline]
fn scalar_bits(buf: &[u8], pos: usize, n: usize) -> Result<u64> {
    let Some(b) = bytes_at(buf, pos, n) else {
        return Err(Error::invalid("scalar past end of buffer", pos));
    };
    Ok(match *b {
        [a] => a as u64,
        [a, b] => u16::from_le_bytes([a, b]) as u64,
        [a, b, c, d] => u32::from_le_bytes([a, b, c, d]) as u64,
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
        _ => 0, // no scalar has another width
    })
}

/// A value that can be read from a flatbuffer at a position: scalars, and
/// (through a `u32` offset) tables and strings.
pub trait Follow<'a>: Sized {
    /// Bytes the value takes inline (in a table field or a vector slot).
    const INLINE_SIZE: usize;
    fn follow(buf: &'a [u8], pos: usize) -> Result<Self>;
}

macro_rules! scalar_follow {
    ($($t:ty => $from:expr),*) => {$(
        impl<'a> Follow<'a> for $t {
            const INLINE_SIZE: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
                scalar_bits(buf, pos, Self::INLINE_SIZE).map($from)
            }
        }
    )*};
}
// Truncating casts: `scalar_bits` read exactly `size_of::<T>()` bytes.
scalar_follow!(
    u8 => |v| v as u8, i8 => |v| v as i8, u16 => |v| v as u16, i16 => |v| v as i16,
    u32 => |v| v as u32, i32 => |v| v as i32, u64 => |v| v, i64 => |v| v as i64,
    f64 => f64::from_bits
);

/// A scalar that a table field can hold: read as its bits widened to `u64`.
pub trait Scalar: Copy {
    const SIZE: usize;
    fn from_bits(bits: u64) -> Self;
    fn to_bits(self) -> u64;
}

macro_rules! scalar_field {
    ($($t:ty => $from:expr, $to:expr);*) => {$(
        impl Scalar for $t {
            const SIZE: usize = core::mem::size_of::<$t>();
            #[inline]
            fn from_bits(bits: u64) -> Self {
                $from(bits)
            }
            #[inline]
            fn to_bits(self) -> u64 {
                $to(self)
            }
        }
    )*};
}
// Truncating casts: the reader read exactly `SIZE` bytes; sign bits of a
// default are cut off again by `from_bits`.
scalar_field!(
    u8 => |v| v as u8, |v| v as u64; i8 => |v| v as i8, |v: i8| v as u8 as u64;
    u16 => |v| v as u16, |v| v as u64; i16 => |v| v as i16, |v: i16| v as u16 as u64;
    u32 => |v| v as u32, |v| v as u64; i32 => |v| v as i32, |v: i32| v as u32 as u64;
    u64 => |v| v, |v| v; i64 => |v| v as i64, |v| v as u64;
    f64 => f64::from_bits, f64::to_bits;
    bool => |v| v != 0, |v| v as u64
);

impl<'a> Follow<'a> for bool {
    const INLINE_SIZE: usize = 1;
    #[inline]
    fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
        u8::follow(buf, pos).map(|b| b != 0)
    }
}

/// Follows the `u32` offset stored at `pos` (relative to `pos`).
#[inline(always)]
fn indirect(buf: &[u8], pos: usize) -> Result<usize> {
    let off = read_u32(buf, pos)? as usize;
    let target = pos
        .checked_add(off)
        .ok_or(Error::invalid("offset overflows", pos))?;
    if target >= buf.len() {
        return Err(Error::invalid("offset points past end of buffer", pos));
    }
    Ok(target)
}

/// The position of `part` (a slice of `buf`) in `buf`.
#[inline(always)]
pub(crate) fn offset_in(buf: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize).wrapping_sub(buf.as_ptr() as usize)
}

/// What a field read takes, packed into one argument below 128: the slot
/// (below 16), log2 of the element or scalar size (1, 2, 4 or 8 bytes) and
/// whether the field must be present. A constant at every call site of
/// [`Table::bytes_field`], [`Table::vector_field`] and
/// [`Table::scalar_word`], set by one 2-byte move on Cortex-M instead of
/// three arguments, one of them passed on the stack (-178 B of
/// the core without verification for the vector reader alone).
#[inline(always)]
pub(crate) const fn key(slot: u16, elem: usize, required: bool) -> u32 {
    debug_assert!(slot < 16 && elem.is_power_of_two() && elem <= 8);
    (slot as u32 & 15) | elem.trailing_zeros() << 4 | (required as u32) << 6
}

/// The slot, element size and required flag of a [`key`].
#[inline(always)]
fn unkey(key: u32) -> (u16, usize, bool) {
    ((key & 15) as u16, 1 << ((key >> 4) & 3), key & 64 != 0)
}

mod table;
mod vector;

pub use table::Table;
pub(crate) use vector::RawVector;
pub use vector::{Vector, VectorIter};

/// The `len * elem` bytes after the `u32` length `len` at `pos`: a string
/// (`elem` 1, the NUL after them not included) or a scalar vector's elements.
#[inline(always)]
fn bytes_at_len(buf: &[u8], pos: usize, elem: usize) -> Result<&[u8]> {
    let len = read_u32(buf, pos)? as usize;
    let start = pos + 4;
    len.checked_mul(elem)
        .and_then(|n| start.checked_add(n))
        .and_then(|end| buf.get(start..end))
        .ok_or(Error::invalid(
            if elem == 1 {
                "string or byte vector past end of buffer"
            } else {
                "vector past end of buffer"
            },
            pos,
        ))
}

/// A string reached through an offset (element of a vector of strings).
#[derive(Clone, Copy, Debug)]
pub struct Str<'a>(pub &'a [u8]);

impl<'a> Follow<'a> for Str<'a> {
    const INLINE_SIZE: usize = 4;
    fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
        bytes_at_len(buf, indirect(buf, pos)?, 1).map(Str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    #[test]
    fn reads_are_little_endian_and_unaligned() {
        let buf = [0u8, 0x78, 0x56, 0x34, 0x12, 0xff];
        assert_eq!(read_u32(&buf, 1).unwrap(), 0x1234_5678);
        assert!(read_u32(&buf, 3).is_err());
        assert!(read_u32(&buf, usize::MAX - 1).is_err());
    }

    #[test]
    fn vector_length_overflow_is_an_error() {
        let mut buf = [0u8; 16];
        buf[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Vector::<u64>::at(&buf, 0).is_err());
        buf[0..4].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(Vector::<u32>::at(&buf, 0).unwrap().len(), 3);
        assert!(Vector::<u32>::at(&buf, 0).unwrap().get(3).is_err());
    }

    /// vtable at 0: len 6 (one slot), object 8; slot0 at +4.
    /// table at 8: soffset 8 -> vtable at 0; field0 (u32) = 7.
    fn one_field_table() -> [u8; 16] {
        let mut buf = [0u8; 16];
        buf[0..2].copy_from_slice(&6u16.to_le_bytes());
        buf[2..4].copy_from_slice(&8u16.to_le_bytes());
        buf[4..6].copy_from_slice(&4u16.to_le_bytes());
        buf[8..12].copy_from_slice(&8i32.to_le_bytes());
        buf[12..16].copy_from_slice(&7u32.to_le_bytes());
        buf
    }

    #[test]
    fn table_with_truncated_vtable_gives_defaults() {
        let buf = one_field_table();
        let t = Table::at(&buf, 8).unwrap();
        assert_eq!(t.scalar::<u32>(0, 0).unwrap(), 7);
        assert_eq!(t.scalar::<u32>(1, 42).unwrap(), 42);
        let e = t.scalar::<u64>(0, 0).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidProgram);
        // Descriptions exist with `messages` (host builds) only.
        #[cfg(feature = "messages")]
        assert_eq!(e.what(), "field outside the buffer");
    }

    #[test]
    fn unchecked_table_reads_stay_in_bounds() {
        // The table of `one_field_table`, opened again from its position; any
        // other position reads as absent fields (schema defaults).
        let buf = one_field_table();
        assert_eq!(Table::at_unchecked(&buf, 8).scalar::<u32>(0, 0).unwrap(), 7);
        for pos in [0, 3, 13, 15, 16, 1 << 20, usize::MAX - 3, usize::MAX] {
            let t = Table::at_unchecked(&buf, pos);
            assert_eq!(t.position(), pos);
            assert_eq!(t.scalar::<u32>(0, 42).unwrap_or(42), 42, "pos {pos}");
            assert!(t.field(0, 4).map_or(true, |f| f.is_none()), "pos {pos}");
        }
    }

    /// vtable at 0 (three slots, the third absent), table at 12: slot 0 a
    /// string "abc" at 24, slot 1 a vector of two `u32`s (7, 9) at 32.
    fn string_and_vector_table() -> [u8; 44] {
        let mut buf = [0u8; 44];
        for (pos, v) in [(0, 10u16), (2, 12), (4, 4), (6, 8)] {
            buf[pos..pos + 2].copy_from_slice(&v.to_le_bytes());
        }
        for (pos, v) in [
            (12, 12u32),
            (16, 8),
            (20, 12),
            (24, 3),
            (32, 2),
            (36, 7),
            (40, 9),
        ] {
            buf[pos..pos + 4].copy_from_slice(&v.to_le_bytes());
        }
        buf[28..31].copy_from_slice(b"abc");
        buf
    }

    #[test]
    fn strings_and_vectors_through_one_reader() {
        let buf = string_and_vector_table();
        let t = Table::at(&buf, 12).unwrap();
        assert_eq!(t.required_string(0, "s").unwrap(), b"abc");
        assert_eq!(t.string_or_empty(2).unwrap(), b"");
        assert_eq!(
            t.required_string(2, "s").unwrap_err().code,
            ErrorCode::InvalidProgram
        );
        assert_eq!(t.required_bytes(1, 4, "v").unwrap(), &buf[36..44]);
        let v = t.vector_or_empty::<u32>(1).unwrap();
        assert_eq!((v.len(), v.position(), v.get(1).unwrap()), (2, 36, 9));
        let empty = t.vector_or_empty::<u32>(2).unwrap();
        assert_eq!((empty.len(), empty.position()), (0, 0));
        // Every byte set to each of three values: the reader either reads
        // what lies in the buffer or fails with `InvalidProgram`; the
        // `Option` form used without `at` agrees with the `Result` form,
        // and a vector's view is its bytes.
        for pos in 0..buf.len() {
            for b in [0x00, 0x7f, 0xff] {
                let mut bad = buf;
                bad[pos] = b;
                let Ok(t) = Table::at(&bad, 12) else { continue };
                for slot in 0..3 {
                    for (elem, required) in
                        [(1, false), (1, true), (4, false), (4, true), (8, true)]
                    {
                        let k = key(slot, elem, required);
                        let r = t.bytes_field(k, "x");
                        assert_eq!(r.ok(), t.bytes_or_none(k), "{pos} {b} {slot}");
                        assert_eq!(r.ok(), t.bytes_checked(k, "x").ok());
                        match r {
                            Ok(bytes) => assert_eq!(bytes.len() % elem, 0),
                            Err(e) => assert_eq!(e.code, ErrorCode::InvalidProgram),
                        }
                        if let Ok(v) = t.vector_field(k, "x") {
                            assert_eq!(v.len * elem, r.unwrap().len());
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn vtable_after_table_is_accepted() {
        // table at 0 with soffset -8 -> vtable at 8.
        let mut buf = [0u8; 16];
        buf[0..4].copy_from_slice(&(-8i32).to_le_bytes());
        buf[4] = 9;
        buf[8..10].copy_from_slice(&6u16.to_le_bytes());
        buf[10..12].copy_from_slice(&5u16.to_le_bytes());
        buf[12..14].copy_from_slice(&4u16.to_le_bytes());
        let t = Table::at(&buf, 0).unwrap();
        assert_eq!(t.scalar::<u8>(0, 0).unwrap(), 9);
    }
}
