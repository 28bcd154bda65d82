//! [`Vector`]: a vector's place and length checked once ([`RawVector`]),
//! its elements read on demand.

use super::*;

/// A vector's place, whatever its element type: every check on vectors is
/// done once, here, for all element types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawVector<'a> {
    pub(super) buf: &'a [u8],
    pub(super) start: usize,
    pub(super) len: usize,
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
