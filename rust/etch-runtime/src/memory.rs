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
/// this many pieces (12: the arrays sit in every kernel call's frame).
const CAP: usize = MAX_MEMORY_IDS + MAX_OUTPUTS;

struct Piece<'m> {
    memory: usize,
    start: usize,
    data: &'m mut [u8],
}

/// Pieces of the planned buffers still free to hand out.
pub(crate) struct Pieces<'m> {
    items: [Option<Piece<'m>>; CAP],
}

fn overlap() -> Error {
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
            items: [const { None }; CAP],
        }
    }

    /// Fills pieces made with [`Pieces::empty`] in place, one per buffer:
    /// a constructor returning the 192 B array by value copied it with
    /// `memcpy`, which linked memcpy into every firmware (issue 12).
    pub(crate) fn fill(&mut self, planned: &'m mut [&mut [u8]]) {
        for (memory, (slot, buf)) in self.items.iter_mut().zip(planned.iter_mut()).enumerate() {
            *slot = Some(Piece {
                memory,
                start: 0,
                data: buf,
            });
        }
    }

    fn find(&self, memory: usize, offset: usize, end: usize) -> Option<usize> {
        self.items.iter().position(|p| {
            p.as_ref().is_some_and(|p| {
                p.memory == memory && p.start <= offset && end <= p.start + p.data.len()
            })
        })
    }

    /// Takes `len` bytes at `offset` of buffer `memory` for writing.
    pub(crate) fn take(
        &mut self,
        memory: usize,
        offset: usize,
        len: usize,
    ) -> Result<&'m mut [u8]> {
        if len == 0 {
            return Ok(&mut []);
        }
        let end = offset.checked_add(len).ok_or_else(overlap)?;
        let i = self.find(memory, offset, end).ok_or_else(overlap)?;
        let piece = self
            .items
            .get_mut(i)
            .and_then(Option::take)
            .ok_or_else(overlap)?;
        let (before, rest) = piece
            .data
            .split_at_mut_checked(offset - piece.start)
            .ok_or_else(overlap)?;
        let (mid, after) = rest.split_at_mut_checked(len).ok_or_else(overlap)?;
        if !before.is_empty() {
            self.put(Piece {
                memory,
                start: piece.start,
                data: before,
            })?;
        }
        if !after.is_empty() {
            self.put(Piece {
                memory,
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
            .find(|p| p.is_none())
            .ok_or(Error::new(
                ErrorCode::NotSupported,
                "too many writable tensors in one call",
                0,
            ))?;
        *slot = Some(piece);
        Ok(())
    }

    /// Ends the writable phase; what is left can be read.
    pub(crate) fn freeze(self) -> Frozen<'m> {
        Frozen {
            items: self.items.map(|p| p.map(|p| (p.memory, p.start, &*p.data))),
        }
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

/// Read-only pieces left after the writable tensors were taken.
pub(crate) struct Frozen<'m> {
    items: [Option<(usize, usize, &'m [u8])>; CAP],
}

impl<'m> Frozen<'m> {
    /// `len` bytes at `offset` of buffer `memory`, if not taken for writing.
    pub(crate) fn get(&self, memory: usize, offset: usize, len: usize) -> Result<&'m [u8]> {
        if len == 0 {
            return Ok(&[]);
        }
        let end = offset.checked_add(len).ok_or_else(overlap)?;
        self.items
            .iter()
            .flatten()
            .find(|(m, start, data)| *m == memory && *start <= offset && end <= start + data.len())
            .and_then(|(_, start, data)| data.get(offset - start..end - start))
            .ok_or_else(overlap)
    }
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
        let scratch = pieces.take(0, 48, 8).unwrap();
        scratch.fill(9);
        let frozen = pieces.freeze();
        assert!(frozen.get(0, 0, 16).is_ok());
        assert!(frozen.get(0, 8, 16).is_err(), "input overlaps output");
        assert_eq!(frozen.get(0, 32, 16).unwrap().len(), 16);
        assert!(frozen.get(1, 0, 16).is_ok());
        assert!(frozen.get(1, 8, 16).is_err(), "outside buffer");
        assert!(frozen.get(2, 0, 1).is_err(), "no such buffer");
    }
}
