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

/// A table: its position (its vtable was checked when it was opened).
///
/// Three words: the vtable's position is found again from the table's
/// `soffset` at each field read rather than stored, so every view, vector
/// element and `Result` of one moves a word less (about 600 B of
/// the Cortex-M core).
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// Checks the table at `pos` (its vtable header and object extent) and
/// returns `pos`. Every reader that opens a table returns its position, one
/// word, through here (in registers on Cortex-M), and the caller makes the
/// view: a `Result<Table>` came back through memory.
#[inline(never)]
fn check_table(buf: &[u8], pos: usize) -> Result<usize> {
    let soffset = read_u32(buf, pos)? as i32;
    // vtable = pos - soffset, in native-width arithmetic.
    let vtable = if soffset >= 0 {
        pos.checked_sub(soffset as usize)
    } else {
        pos.checked_add(soffset.unsigned_abs() as usize)
    };
    let vtable = match vtable {
        Some(v) if v < buf.len() => v,
        _ => return Err(Error::invalid("vtable outside buffer", pos)),
    };
    let vtable_len = read_u16(buf, vtable)? as usize;
    let object_len = read_u16(buf, vtable + 2)? as usize;
    if vtable_len < 4 || !vtable_len.is_multiple_of(2) || vtable + vtable_len > buf.len() {
        return Err(Error::invalid("malformed vtable", vtable));
    }
    if object_len < 4 || pos + object_len > buf.len() {
        return Err(Error::invalid("table extends past end of buffer", pos));
    }
    Ok(pos)
}

/// The table an offset at `pos` points to, checked: its position.
#[inline(never)]
fn follow_table(buf: &[u8], pos: usize) -> Result<usize> {
    check_table(buf, indirect(buf, pos)?)
}

impl<'a> Table<'a> {
    /// Opens the table at `pos`, checking its vtable header and object extent.
    #[inline]
    pub fn at(buf: &'a [u8], pos: usize) -> Result<Self> {
        check_table(buf, pos).map(|pos| Table { buf, pos })
    }

    /// The table at `pos` without checking it: for a view made again from
    /// a position an earlier [`Table::at`] checked (views that keep
    /// positions rather than views, to stay small). Still memory-safe for any
    /// `pos`: every read stays bounds-checked and a stray position reads as
    /// absent fields or errors.
    #[inline(always)]
    pub fn at_unchecked(buf: &'a [u8], pos: usize) -> Self {
        Table { buf, pos }
    }

    /// The table's byte offset in the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The buffer the table lives in.
    pub fn buffer(&self) -> &'a [u8] {
        self.buf
    }

    /// Position of field `slot` if present; checks that `size` bytes of it lie
    /// inside the buffer. (Not inside `object_len`: the Python builder EXIR uses
    /// records an object size that can end before an 8-byte field padded to
    /// alignment, and ExecuTorch's verifier only checks buffer bounds too.)
    #[inline]
    pub fn field(&self, slot: u16, size: usize) -> Result<Option<usize>> {
        self.field_pos(slot, size)
            .map(|p| if p == 0 { None } else { Some(p) })
    }

    /// [`Table::field`] with 0 for an absent field (no field lies at byte 0:
    /// the first bytes of a table are its vtable offset): a smaller `Result`.
    // Inlined into its two callers (`scalar_word`, `reference`): out of
    // line it cost 0.4 % more instructions per DS-CNN inference.
    #[inline]
    fn field_pos(&self, slot: u16, size: usize) -> Result<usize> {
        let entry = 4 + 2 * slot as usize;
        // The vtable's place and size are re-read rather than stored: a
        // smaller `Table` is cheaper to pass around than two more loads.
        // `Table::at` checked that the soffset and the whole vtable lie in
        // the buffer, so these reads cannot miss; a miss would read as an
        // absent field, never out of bounds.
        let u16_at = |p: usize| match self.buf.get(p..p.wrapping_add(2)) {
            Some(&[a, b]) => u16::from_le_bytes([a, b]) as usize,
            _ => 0,
        };
        let soffset = match self.buf.get(self.pos..self.pos.wrapping_add(4)) {
            Some(&[a, b, c, d]) => i32::from_le_bytes([a, b, c, d]),
            _ => 0,
        };
        let vtable = self.pos.wrapping_sub(soffset as isize as usize);
        if entry + 2 > u16_at(vtable) {
            return Ok(0); // truncated vtable: schema default
        }
        let off = u16_at(vtable.wrapping_add(entry));
        if off == 0 {
            return Ok(0);
        }
        if self.pos + off + size > self.buf.len() {
            return Err(Error::invalid("field outside the buffer", self.pos));
        }
        Ok(self.pos + off)
    }

    /// A scalar field, or `default` when absent.
    #[inline(always)]
    pub fn scalar<T: Scalar>(&self, slot: u16, default: T) -> Result<T> {
        self.scalar_bits(slot, T::SIZE, default.to_bits())
            .map(T::from_bits)
    }

    /// The one reader behind [`Table::scalar`] for every scalar type: the
    /// field's `size` bytes widened to `u64`, or `default`. Fields of at
    /// most 4 bytes are read by [`Table::scalar_word`], whose `Result`
    /// comes back in registers on Cortex-M (a `Result<u64>` comes back
    /// through memory); 8-byte fields are found by it and read here.
    #[inline(always)]
    pub(crate) fn scalar_bits(&self, slot: u16, size: usize, default: u64) -> Result<u64> {
        if size <= 4 {
            return self
                .scalar_word(key(slot, size, false), default as usize)
                .map(|w| w as u64);
        }
        self.scalar_wide(slot, size, default)
    }

    /// [`Table::scalar_bits`] for fields of more than 4 bytes, out of line.
    #[inline(never)]
    fn scalar_wide(&self, slot: u16, size: usize, default: u64) -> Result<u64> {
        // `size` > 4: `scalar_word` gives the field's position.
        match self.scalar_word(key(slot, size, false), 0)? {
            0 => Ok(default),
            p => scalar_bits(self.buf, p, size),
        }
    }

    /// A field of `size` bytes: its value widened to `usize` (`size` at
    /// most 4), its position (`size` above 4; no field lies at 0) or, when
    /// absent, `default`. The one out-of-line scalar field reader.
    #[inline(never)]
    pub(crate) fn scalar_word(&self, key: u32, default: usize) -> Result<usize> {
        let (slot, size, _) = unkey(key);
        match self.field_pos(slot, size)? {
            0 => Ok(default),
            p if size > 4 => Ok(p),
            // `field_pos` checked that the `size` bytes lie in the buffer:
            // read in place (a miss, which cannot happen, would read 0).
            p => Ok(match bytes_at(self.buf, p, size) {
                Some(&[a]) => a as usize,
                Some(&[a, b]) => u16::from_le_bytes([a, b]) as usize,
                Some(&[a, b, c, d]) => u32::from_le_bytes([a, b, c, d]) as usize,
                _ => 0,
            }),
        }
    }

    /// A reference field (table, vector, string), as the position it points to.
    #[inline(always)]
    fn reference(&self, slot: u16) -> Result<Option<usize>> {
        match self.field_pos(slot, 4)? {
            0 => Ok(None),
            p => indirect(self.buf, p).map(Some),
        }
    }

    /// A child table field.
    #[inline(always)]
    pub fn table(&self, slot: u16) -> Result<Option<Table<'a>>> {
        Ok(match self.table_pos(slot)? {
            0 => None,
            pos => Some(Table { buf: self.buf, pos }),
        })
    }

    /// The position of a child table field, checked; 0 when absent (no
    /// table lies at byte 0: the file starts with the root offset).
    #[inline(never)]
    fn table_pos(&self, slot: u16) -> Result<usize> {
        match self.field_pos(slot, 4)? {
            0 => Ok(0),
            p => follow_table(self.buf, p),
        }
    }

    /// A vector field.
    pub fn vector<T: Follow<'a>>(&self, slot: u16) -> Result<Option<Vector<'a, T>>> {
        if self.field_pos(slot, 4)? == 0 {
            return Ok(None);
        }
        self.vector_or_empty(slot).map(Some)
    }

    /// A vector field that must be present: `InvalidProgram` with `what` at
    /// the table's position when absent.
    #[inline(always)]
    pub fn required_vector<T: Follow<'a>>(
        &self,
        slot: u16,
        what: &'static str,
    ) -> Result<Vector<'a, T>> {
        self.vector_field(key(slot, T::INLINE_SIZE, true), what)
            .map(Vector::from_raw)
    }

    /// A vector field, empty when absent.
    #[inline(always)]
    pub fn vector_or_empty<T: Follow<'a>>(&self, slot: u16) -> Result<Vector<'a, T>> {
        self.vector_field(key(slot, T::INLINE_SIZE, false), "")
            .map(Vector::from_raw)
    }

    /// The bytes of a scalar vector field of `elem`-byte elements, empty
    /// (at position 0) when absent: `vector_or_empty(slot)?` as one slice.
    #[inline(always)]
    pub fn bytes_or_empty(&self, slot: u16, elem: usize) -> Result<&'a [u8]> {
        self.bytes_field(key(slot, elem, false), "")
    }

    /// A vector field of `elem`-byte elements, empty when absent.
    #[inline(always)]
    pub(crate) fn raw_vector_or_empty(&self, slot: u16, elem: usize) -> Result<RawVector<'a>> {
        self.vector_field(key(slot, elem, false), "")
    }

    /// The one reader behind every vector accessor: the vector field of
    /// `elem`-byte elements ([`key`]), checked; when absent, empty or
    /// (`required`) `InvalidProgram` with `what`. Its elements' bytes come
    /// from [`Table::bytes_field`], one reader for vectors and strings.
    /// (Three stacked readers, each returning its view through memory,
    /// cost about 100 B on Cortex-M.)
    #[inline(never)]
    fn vector_field(&self, key: u32, what: &'static str) -> Result<RawVector<'a>> {
        let bytes = self.bytes_field(key, what)?;
        Ok(RawVector {
            buf: self.buf,
            start: offset_in(self.buf, bytes),
            // `elem` is a power of two: `len * elem` bytes, `len` items.
            len: bytes.len() >> ((key >> 4) & 3),
        })
    }

    /// A string field that must be present (`what` when absent).
    #[inline(always)]
    pub fn required_string(&self, slot: u16, what: &'static str) -> Result<&'a [u8]> {
        self.bytes_field(key(slot, 1, true), what)
    }

    /// A string field, empty when absent.
    #[inline(always)]
    pub fn string_or_empty(&self, slot: u16) -> Result<&'a [u8]> {
        self.bytes_field(key(slot, 1, false), "")
    }

    /// The bytes of a scalar vector field of `elem`-byte elements that must
    /// be present (`what` when absent): `required_vector(slot, what)?` as
    /// one slice, for vectors read in place (sizes, dim orders).
    #[inline(always)]
    pub fn required_bytes(&self, slot: u16, elem: usize, what: &'static str) -> Result<&'a [u8]> {
        self.bytes_field(key(slot, elem, true), what)
    }

    /// The one reader of vectors and strings: the field's `len * elem` bytes
    /// after its length word (a string, without its NUL, or a `[ubyte]` is
    /// `elem` 1), checked; when absent, empty (at position 0) or
    /// (`required`) `InvalidProgram` with `what`. String accessors and
    /// scalar vectors read in place take the bytes (a slice is two words, a
    /// vector's view four); [`Table::vector_field`] makes a view of them.
    ///
    /// Without `at` an `Error` is its code alone, and every error of this
    /// reader is `InvalidProgram`: the out-of-line part returns an `Option`
    /// of the slice, which comes back in registers on Cortex-M (a `Result`
    /// of a slice comes back through memory: -112 B of the core
    /// without verification), and `None` becomes that code here.
    #[inline(always)]
    fn bytes_field(&self, key: u32, what: &'static str) -> Result<&'a [u8]> {
        #[cfg(not(feature = "at"))]
        return self
            .bytes_or_none(key)
            .ok_or(Error::invalid(what, self.pos));
        #[cfg(feature = "at")]
        self.bytes_checked(key, what)
    }

    /// [`Table::bytes_field`] without `at`: `None` for any error.
    #[cfg(any(test, not(feature = "at")))]
    #[inline(never)]
    fn bytes_or_none(&self, key: u32) -> Option<&'a [u8]> {
        self.bytes_checked(key, "").ok()
    }

    /// [`Table::bytes_field`] with each error's `at`.
    #[cfg_attr(feature = "at", inline(never))]
    #[cfg_attr(not(feature = "at"), inline(always))]
    fn bytes_checked(&self, key: u32, what: &'static str) -> Result<&'a [u8]> {
        let (slot, elem, required) = unkey(key);
        match self.reference(slot)? {
            Some(p) => bytes_at_len(self.buf, p, elem),
            None if required => Err(Error::invalid(what, self.pos)),
            // Empty at the buffer's start: as a vector, position 0.
            None => Ok(&self.buf[..0]),
        }
    }

    /// A table field that must be present (`what` when absent).
    #[inline(always)]
    pub fn required_table(&self, slot: u16, what: &'static str) -> Result<Table<'a>> {
        match self.table_pos(slot)? {
            0 => Err(Error::invalid(what, self.pos)),
            pos => Ok(Table { buf: self.buf, pos }),
        }
    }

    /// A string field (raw bytes, without the NUL terminator).
    pub fn string(&self, slot: u16) -> Result<Option<&'a [u8]>> {
        if self.field_pos(slot, 4)? == 0 {
            return Ok(None);
        }
        self.string_or_empty(slot).map(Some)
    }
}

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

impl<'a> Follow<'a> for Table<'a> {
    const INLINE_SIZE: usize = 4;
    #[inline]
    fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
        follow_table(buf, pos).map(|pos| Table { buf, pos })
    }
}

/// A vector's place, whatever its element type: every check on vectors is
/// done once, here, for all element types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawVector<'a> {
    buf: &'a [u8],
    start: usize,
    len: usize,
}

impl<'a> RawVector<'a> {
    #[inline(always)]
    fn at(buf: &'a [u8], pos: usize, elem: usize) -> Result<Self> {
        let len = read_u32(buf, pos)? as usize;
        let start = pos + 4;
        let end = len.checked_mul(elem).and_then(|n| n.checked_add(start));
        match end {
            Some(end) if end <= buf.len() => Ok(RawVector { buf, start, len }),
            _ => Err(Error::invalid("vector past end of buffer", pos)),
        }
    }

    /// Position of element `i`, checked against the length.
    #[inline]
    fn element(&self, i: usize, elem: usize) -> Result<usize> {
        if i >= self.len {
            return Err(Error::invalid("vector index out of range", self.start));
        }
        Ok(self.start + i * elem)
    }
}

/// A vector of `T`: `u32` length followed by `len` inline elements.
#[derive(Debug)]
pub struct Vector<'a, T> {
    buf: &'a [u8],
    start: usize,
    len: usize,
    _t: PhantomData<T>,
}

impl<T> Clone for Vector<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Vector<'_, T> {}

/// Iterator over a [`Vector`]'s elements.
pub struct VectorIter<'a, T> {
    vector: Vector<'a, T>,
    next: usize,
}

impl<'a, T: Follow<'a>> Iterator for VectorIter<'a, T> {
    type Item = Result<T>;
    #[inline(always)]
    fn next(&mut self) -> Option<Result<T>> {
        if self.next >= self.vector.len {
            return None;
        }
        self.next += 1;
        Some(self.vector.get(self.next - 1))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.vector.len - self.next;
        (n, Some(n))
    }
}

impl<'a, T: Follow<'a>> Vector<'a, T> {
    /// Opens the vector at `pos`, checking that all its elements lie in the buffer.
    pub fn at(buf: &'a [u8], pos: usize) -> Result<Self> {
        RawVector::at(buf, pos, T::INLINE_SIZE).map(Self::from_raw)
    }

    #[inline]
    pub(crate) fn from_raw(raw: RawVector<'a>) -> Self {
        Vector {
            buf: raw.buf,
            start: raw.start,
            len: raw.len,
            _t: PhantomData,
        }
    }

    #[inline]
    fn raw(&self) -> RawVector<'a> {
        RawVector {
            buf: self.buf,
            start: self.start,
            len: self.len,
        }
    }

    /// An empty vector, for absent optional vectors.
    pub fn empty() -> Self {
        Vector {
            buf: &[],
            start: 0,
            len: 0,
            _t: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Element `i`, or an error if out of range or malformed.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Result<T> {
        T::follow(self.buf, self.raw().element(i, T::INLINE_SIZE)?)
    }

    /// The elements in order; each item is a `Result` because elements reached
    /// through offsets may be malformed.
    pub fn iter(&self) -> VectorIter<'a, T> {
        VectorIter {
            vector: *self,
            next: 0,
        }
    }

    /// Byte offset of the first element.
    pub fn position(&self) -> usize {
        self.start
    }
}

impl<'a> Vector<'a, u8> {
    /// The raw bytes of a `[ubyte]` vector.
    pub fn bytes(&self) -> &'a [u8] {
        // In range: checked in `at`.
        self.buf
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }
}

impl<'a> Vector<'a, i8> {
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
            .get(self.start..self.start + self.len)
            .unwrap_or(&[])
    }
}

impl<'a> Vector<'a, i32> {
    /// The raw bytes of an `[int]` vector: `4 * len()`, little-endian words
    /// (for shapes read in place).
    pub fn bytes(&self) -> &'a [u8] {
        self.buf
            .get(self.start..self.start + 4 * self.len)
            .unwrap_or(&[])
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
