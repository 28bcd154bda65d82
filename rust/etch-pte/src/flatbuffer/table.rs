//! [`Table`]: a table's fields read through its vtable, each reader one
//! out-of-line function shared by every schema accessor.

use super::*;

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
    pub(super) fn vector_field(&self, key: u32, what: &'static str) -> Result<RawVector<'a>> {
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
    pub(super) fn bytes_field(&self, key: u32, what: &'static str) -> Result<&'a [u8]> {
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
    pub(super) fn bytes_or_none(&self, key: u32) -> Option<&'a [u8]> {
        self.bytes_checked(key, "").ok()
    }

    /// [`Table::bytes_field`] with each error's `at`.
    #[cfg_attr(feature = "at", inline(never))]
    #[cfg_attr(not(feature = "at"), inline(always))]
    pub(super) fn bytes_checked(&self, key: u32, what: &'static str) -> Result<&'a [u8]> {
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

impl<'a> Follow<'a> for Table<'a> {
    const INLINE_SIZE: usize = 4;
    #[inline]
    fn follow(buf: &'a [u8], pos: usize) -> Result<Self> {
        follow_table(buf, pos).map(|pos| Table { buf, pos })
    }
}
