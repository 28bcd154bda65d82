//! Handing out disjoint pieces of the planned buffers to one kernel call.
//!
//! A kernel reads some tensors and writes others, all possibly in the same
//! planned buffer. Instead of raw pointers, each call splits the buffers with
//! `split_at_mut`: writable tensors are carved out first (they must not overlap
//! each other), the rest becomes read-only, and every input must lie wholly in
//! what is left. An input overlapping an output is an error rather than
//! aliasing: ExecuTorch's planner never places an operator's input and output
//! on the same bytes (lifetimes are closed intervals), except for views, which
//! carry no instruction.
//!
//! Slices are split and copied only through checked operations here and in
//! [`copy_slice`]: the length checks inside `copy_from_slice` and
//! `split_at_mut` live in outlined core functions that would link panic code
//! into every firmware, even where the lengths are known to match.

use crate::{Error, ErrorCode, Result, MAX_MEMORY_IDS};

/// Most writable tensors one call can take (out + scratch, with room to spare).
pub const MAX_OUTPUTS: usize = 4;
/// Each take removes one piece and puts back at most two (before and after
/// it), so `MAX_OUTPUTS` takes from `MAX_MEMORY_IDS` buffers leave at most
/// this many pieces (12 of 16 bytes on 32-bit targets: the array sits in
/// every kernel call's frame).
const CAP: usize = MAX_MEMORY_IDS + MAX_OUTPUTS;

/// One piece of a planned buffer: `len` bytes from `start` of buffer
/// `memory`, still free to take for writing or already read-only. One array
/// of these serves both phases of a call (the inputs turn a free piece
/// read-only in place), so the call's frame holds 12 pieces, not a writable
/// and a read-only copy of them (a smaller frame). The buffer index is a byte
/// (`fill` numbers at most `CAP` buffers), so tag, index and start share
/// two words with the slice.
enum Piece<'m> {
    Free {
        memory: u8,
        start: usize,
        data: &'m mut [u8],
    },
    Read {
        memory: u8,
        start: usize,
        data: &'m [u8],
    },
    Empty,
}

impl Piece<'_> {
    /// Whether this piece of buffer `memory` holds bytes `offset..end`.
    fn holds(&self, memory: usize, offset: usize, end: usize) -> bool {
        let (m, start, len) = match self {
            Piece::Empty => return false,
            Piece::Free {
                memory,
                start,
                data,
            } => (*memory, *start, data.len()),
            Piece::Read {
                memory,
                start,
                data,
            } => (*memory, *start, data.len()),
        };
        usize::from(m) == memory && start <= offset && end <= start + len
    }
}

/// Pieces of the planned buffers: free ones are handed out for writing
/// ([`Pieces::take`]), then what is left is read ([`Pieces::get`]).
pub(crate) struct Pieces<'m> {
    items: [Piece<'m>; CAP],
}

/// A tensor of a kernel call outside its buffer or over another one.
pub(crate) fn overlap() -> Error {
    Error::new(
        ErrorCode::InvalidProgram,
        "kernel tensors overlap in planned memory",
        0,
    )
}

impl<'m> Pieces<'m> {
    /// No pieces yet; [`Pieces::fill`] hands out the buffers.
    pub(crate) const fn empty() -> Self {
        Pieces {
            items: [const { Piece::Empty }; CAP],
        }
    }

    /// Fills pieces made with [`Pieces::empty`] in place, one per buffer:
    /// a constructor returning the array by value copied it with `memcpy`,
    /// which linked memcpy into every firmware.
    pub(crate) fn fill(&mut self, planned: &'m mut [&mut [u8]]) {
        for (memory, (slot, buf)) in self.items.iter_mut().zip(planned.iter_mut()).enumerate() {
            *slot = Piece::Free {
                // At most CAP (12) slots: the index fits a byte.
                memory: memory as u8,
                start: 0,
                data: buf,
            };
        }
    }

    fn find(&self, memory: usize, offset: usize, end: usize) -> Option<usize> {
        self.items.iter().position(|p| p.holds(memory, offset, end))
    }

    /// Takes `len` bytes at `offset` of buffer `memory` for writing: only
    /// from a free piece (never from bytes an input has read).
    pub(crate) fn take(
        &mut self,
        memory: usize,
        offset: usize,
        len: usize,
    ) -> Result<&'m mut [u8]> {
        if len == 0 {
            // Empty but 16-byte aligned (a `&mut []` of bytes is at address
            // 1): a kernel casts it to its element type, and an empty
            // tensor (a run-time size 0) is valid.
            return Ok(bytemuck::cast_slice_mut::<u128, u8>(&mut []));
        }
        let end = offset.checked_add(len).ok_or_else(overlap)?;
        let i = self.find(memory, offset, end).ok_or_else(overlap)?;
        let slot = self.items.get_mut(i).ok_or_else(overlap)?;
        let Piece::Free {
            memory: m,
            start,
            data,
        } = core::mem::replace(slot, Piece::Empty)
        else {
            return Err(overlap());
        };
        let (before, rest) = data
            .split_at_mut_checked(offset - start)
            .ok_or_else(overlap)?;
        let (mid, after) = rest.split_at_mut_checked(len).ok_or_else(overlap)?;
        if !before.is_empty() {
            self.put(Piece::Free {
                memory: m,
                start,
                data: before,
            })?;
        }
        if !after.is_empty() {
            self.put(Piece::Free {
                memory: m,
                start: end,
                data: after,
            })?;
        }
        Ok(mid)
    }

    fn put(&mut self, piece: Piece<'m>) -> Result<()> {
        let slot = self
            .items
            .iter_mut()
            .find(|p| matches!(p, Piece::Empty))
            .ok_or(Error::new(
                ErrorCode::NotSupported,
                "too many writable tensors in one call",
                0,
            ))?;
        *slot = piece;
        Ok(())
    }

    /// `len` bytes at `offset` of buffer `memory`, read-only, if not taken
    /// for writing. The piece holding them becomes read-only for good: a
    /// later [`Pieces::take`] of its bytes fails, so take every output
    /// before the first input.
    pub(crate) fn get(&mut self, memory: usize, offset: usize, len: usize) -> Result<&'m [u8]> {
        if len == 0 {
            return Ok(bytemuck::cast_slice::<u128, u8>(&[]));
        }
        let end = offset.checked_add(len).ok_or_else(overlap)?;
        let i = self.find(memory, offset, end).ok_or_else(overlap)?;
        let slot = self.items.get_mut(i).ok_or_else(overlap)?;
        *slot = match core::mem::replace(slot, Piece::Empty) {
            Piece::Free {
                memory: m,
                start,
                data,
            } => Piece::Read {
                memory: m,
                start,
                data,
            },
            other => other,
        };
        let Piece::Read { start, data, .. } = *slot else {
            return Err(overlap());
        };
        data.get(offset - start..end - start).ok_or_else(overlap)
    }
}

/// Copies `src` into `dst`; `false` (nothing copied) if their lengths differ.
/// Compiles to `memcpy` with no panic path.
pub fn copy_slice<T: Copy>(dst: &mut [T], src: &[T]) -> bool {
    if dst.len() != src.len() {
        return false;
    }
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_are_disjoint_and_inputs_must_avoid_them() {
        let mut a = [0u8; 64];
        let mut b = [0u8; 16];
        let mut planned: [&mut [u8]; 2] = [&mut a, &mut b];
        let mut pieces = Pieces::empty();
        pieces.fill(&mut planned);
        let out = pieces.take(0, 16, 16).unwrap();
        out.fill(7);
        assert!(pieces.take(0, 24, 4).is_err(), "overlapping outputs");
        assert!(pieces.take(0, 60, 8).is_err(), "output past the buffer");
        let scratch = pieces.take(0, 48, 8).unwrap();
        scratch.fill(9);
        assert_eq!(pieces.get(0, 0, 16).unwrap(), &[0u8; 16]);
        assert!(pieces.get(0, 8, 16).is_err(), "input overlaps output");
        assert_eq!(pieces.get(0, 32, 16).unwrap(), &[0u8; 16]);
        assert_eq!(pieces.get(0, 36, 4).unwrap().len(), 4, "read twice");
        assert_eq!(pieces.get(0, 56, 8).unwrap().len(), 8);
        assert!(pieces.get(0, 40, 16).is_err(), "input overlaps scratch");
        assert!(pieces.get(1, 0, 16).is_ok());
        assert!(pieces.get(1, 8, 16).is_err(), "outside buffer");
        assert!(pieces.get(2, 0, 1).is_err(), "no such buffer");
        assert!(pieces.take(0, 0, 4).is_err(), "output over read bytes");
        assert!(pieces.take(1, 0, 4).is_err(), "output over read buffer");
        assert_eq!(pieces.get(0, 0, 0).unwrap().len(), 0);
        assert_eq!(out, &[7u8; 16]);
        assert_eq!(scratch, &[9u8; 8]);
    }

    #[test]
    fn a_piece_is_two_words_and_a_slice() {
        // Tag, buffer index and start in two words, then the slice: the
        // call's 12 pieces are 192 B on 32-bit targets, 384 B on 64-bit.
        assert_eq!(
            core::mem::size_of::<Piece<'_>>(),
            2 * core::mem::size_of::<usize>() + core::mem::size_of::<&[u8]>()
        );
    }

    #[test]
    fn too_many_pieces_is_an_error() {
        let mut a = [0u8; 64];
        let mut planned: [&mut [u8]; 1] = [&mut a];
        let mut pieces = Pieces::empty();
        pieces.fill(&mut planned);
        // Each take from the middle leaves two pieces: 1 + 11 of 12 slots.
        for k in 0..11 {
            assert_eq!(pieces.take(0, 62 - 4 * k, 1).unwrap().len(), 1, "take {k}");
        }
        assert!(pieces.take(0, 10, 1).is_err(), "13th piece");
    }
}
