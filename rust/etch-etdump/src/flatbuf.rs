//! A flatbuffer builder in one caller-owned buffer, no heap.
//!
//! Data grows back to front from the end of the buffer, as flatbuffers are
//! built (a reference must point to a higher address, so children are
//! written first). The front of the same buffer is a stack of 32-bit
//! references to objects whose parent vector is not written yet (the events
//! of the run in progress, then the finished runs). When the two ends meet,
//! every call fails with `MemoryAllocationFailed`.

use etch_runtime::{Error, ErrorCode, Result};

/// An object's position: its distance from the end of the buffer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Off(pub u32);

/// Most fields one table has (ProfileEvent: 8).
const MAX_FIELDS: usize = 8;
/// Vtables remembered for sharing between tables of the same shape.
const VTABLE_CACHE: usize = 16;

pub fn too_small(needed: usize) -> Error {
    Error::new(
        ErrorCode::MemoryAllocationFailed,
        "ETDump buffer too small (at = bytes short)",
        needed as u32,
    )
}

pub struct Builder<'b> {
    buf: &'b mut [u8],
    /// Bytes of the front stack.
    head: usize,
    /// Start of the data built so far (it runs to the end of `buf`).
    tail: usize,
    /// Fields of the table being built: (slot, position).
    fields: [(u16, u32); MAX_FIELDS],
    nfields: usize,
    table_end: u32,
    vtables: [u32; VTABLE_CACHE],
    nvtables: usize,
    max_align: usize,
}

impl<'b> Builder<'b> {
    pub fn new(buf: &'b mut [u8]) -> Self {
        let tail = buf.len();
        Builder {
            buf,
            head: 0,
            tail,
            fields: [(0, 0); MAX_FIELDS],
            nfields: 0,
            table_end: 0,
            vtables: [0; VTABLE_CACHE],
            nvtables: 0,
            max_align: 4,
        }
    }

    /// Bytes built so far.
    pub fn size(&self) -> u32 {
        (self.buf.len() - self.tail) as u32
    }

    /// Bytes in use (stack and data).
    pub fn used(&self) -> usize {
        self.head + self.buf.len() - self.tail
    }

    fn reserve(&mut self, n: usize) -> Result<usize> {
        if self.tail - self.head < n {
            return Err(too_small(n - (self.tail - self.head)));
        }
        self.tail -= n;
        Ok(self.tail)
    }

    fn push(&mut self, bytes: &[u8]) -> Result<()> {
        let at = self.reserve(bytes.len())?;
        if let Some(dst) = self.buf.get_mut(at..) {
            copy(dst, bytes);
        }
        Ok(())
    }

    /// Pads so that after `len` more bytes the size is a multiple of `align`.
    pub fn align(&mut self, len: usize, align: usize) -> Result<()> {
        self.max_align = self.max_align.max(align);
        // `align` is a power of two; masks, not `%`, so no division by a
        // possibly-zero divisor (and its panic) reaches the firmware.
        let align = align.max(1);
        let mask = align - 1;
        let pad = (align - ((self.size() as usize).wrapping_add(len) & mask)) & mask;
        let at = self.reserve(pad)?;
        for b in self.buf.iter_mut().skip(at).take(pad) {
            *b = 0;
        }
        Ok(())
    }

    fn scalar<const N: usize>(&mut self, le: [u8; N]) -> Result<u32> {
        self.align(N, N)?;
        self.push(&le)?;
        Ok(self.size())
    }

    fn uoffset(&mut self, target: Off) -> Result<u32> {
        self.align(4, 4)?;
        let value = self.size() + 4 - target.0;
        self.push(&value.to_le_bytes())?;
        Ok(self.size())
    }

    /// A string made of `parts`, NUL-terminated.
    pub fn string(&mut self, parts: &[&str]) -> Result<Off> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.align(len + 1, 4)?;
        self.push(&[0])?;
        for p in parts.iter().rev() {
            self.push(p.as_bytes())?;
        }
        self.push(&(len as u32).to_le_bytes())?;
        Ok(Off(self.size()))
    }

    /// A vector of 64-bit integers.
    pub fn i64_vec(
        &mut self,
        items: impl DoubleEndedIterator<Item = i64> + ExactSizeIterator,
    ) -> Result<Off> {
        let n = items.len();
        self.align(n * 8, 8)?;
        for x in items.rev() {
            self.push(&x.to_le_bytes())?;
        }
        self.align(4, 4)?;
        self.push(&(n as u32).to_le_bytes())?;
        Ok(Off(self.size()))
    }

    /// Pushes a reference on the front stack; returns its stack index.
    pub fn stack_push(&mut self, r: Off) -> Result<usize> {
        if self.tail - self.head < 4 {
            return Err(too_small(4));
        }
        if let Some(dst) = self.buf.get_mut(self.head..) {
            copy(dst, &r.0.to_le_bytes());
        }
        self.head += 4;
        Ok(self.head / 4 - 1)
    }

    pub fn stack_len(&self) -> usize {
        self.head / 4
    }

    /// Writes the references from stack index `from` on as a vector and
    /// pops them.
    pub fn stack_vec(&mut self, from: usize) -> Result<Off> {
        let n = self.stack_len().saturating_sub(from);
        self.align(4 * n + 4, 4)?;
        for i in (from..from + n).rev() {
            self.uoffset(Off(read_u32(self.buf, 4 * i)))?;
        }
        self.push(&(n as u32).to_le_bytes())?;
        self.head = 4 * from;
        Ok(Off(self.size()))
    }

    pub fn start_table(&mut self) {
        self.nfields = 0;
        self.table_end = self.size();
    }

    fn field(&mut self, slot: u16, at: u32) {
        if let Some(f) = self.fields.get_mut(self.nfields) {
            *f = (slot, at);
            self.nfields += 1;
        }
    }

    pub fn add_u8(&mut self, slot: u16, v: u8) -> Result<()> {
        let at = self.scalar(v.to_le_bytes())?;
        self.field(slot, at);
        Ok(())
    }
    pub fn add_i32(&mut self, slot: u16, v: i32) -> Result<()> {
        let at = self.scalar(v.to_le_bytes())?;
        self.field(slot, at);
        Ok(())
    }
    pub fn add_u64(&mut self, slot: u16, v: u64) -> Result<()> {
        let at = self.scalar(v.to_le_bytes())?;
        self.field(slot, at);
        Ok(())
    }
    pub fn add_i64(&mut self, slot: u16, v: i64) -> Result<()> {
        let at = self.scalar(v.to_le_bytes())?;
        self.field(slot, at);
        Ok(())
    }
    pub fn add_offset(&mut self, slot: u16, target: Off) -> Result<()> {
        let at = self.uoffset(target)?;
        self.field(slot, at);
        Ok(())
    }

    /// Ends the table: its soffset, then its vtable (or an identical one
    /// written before).
    pub fn end_table(&mut self) -> Result<Off> {
        self.align(4, 4)?;
        self.push(&[0; 4])?;
        let table = self.size();
        let fields = self.fields.get(..self.nfields).unwrap_or(&[]);
        let slots = fields
            .iter()
            .map(|&(s, _)| s as usize + 1)
            .max()
            .unwrap_or(0);
        let mut vt = [0u16; 2 + MAX_FIELDS];
        vt[0] = (4 + 2 * slots) as u16;
        vt[1] = (table - self.table_end) as u16;
        for &(slot, at) in fields {
            if let Some(v) = vt.get_mut(2 + slot as usize) {
                *v = (table - at) as u16;
            }
        }
        let vt = vt.get(..2 + slots).unwrap_or(&[]);
        let len = self.buf.len();
        let same = |buf: &[u8], off: u32| -> bool {
            let start = len - off as usize;
            vt.iter().enumerate().all(|(i, v)| {
                let at = start + 2 * i;
                buf.get(at..at + 2) == Some(&v.to_le_bytes()[..])
            })
        };
        let cached = self
            .vtables
            .get(..self.nvtables)
            .unwrap_or(&[])
            .iter()
            .copied()
            .find(|&off| same(self.buf, off));
        let vtable = match cached {
            Some(off) => off,
            None => {
                for v in vt.iter().rev() {
                    self.push(&v.to_le_bytes())?;
                }
                let off = self.size();
                if let Some(v) = self.vtables.get_mut(self.nvtables) {
                    *v = off;
                    self.nvtables += 1;
                }
                off
            }
        };
        let soffset = vtable as i32 - table as i32;
        if let Some(dst) = self.buf.get_mut(len - table as usize..) {
            copy(dst, &soffset.to_le_bytes());
        }
        Ok(Off(table))
    }

    /// Finishes a size-prefixed buffer with file identifier `id` and moves
    /// it to the start of the caller's buffer; returns its length.
    pub fn finish(&mut self, root: Off, id: &[u8; 4]) -> Result<usize> {
        let align = self.max_align;
        self.align(12, align)?;
        self.push(id)?;
        self.uoffset(root)?;
        let rest = self.size();
        self.push(&rest.to_le_bytes())?;
        let n = self.size() as usize;
        for i in 0..n {
            let b = self.buf.get(self.tail + i).copied().unwrap_or(0);
            if let Some(d) = self.buf.get_mut(i) {
                *d = b;
            }
        }
        self.head = 0;
        self.tail = self.buf.len();
        Ok(n)
    }

    pub fn into_bytes(self, n: usize) -> &'b [u8] {
        let buf: &'b [u8] = self.buf;
        buf.get(..n).unwrap_or(&[])
    }
}

/// Copies `src` to the start of `dst` (as much as fits), with no panic path.
pub fn copy(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

fn read_u32(buf: &[u8], at: usize) -> u32 {
    let mut r = [0u8; 4];
    copy(&mut r, buf.get(at..).unwrap_or(&[]));
    u32::from_le_bytes(r)
}
