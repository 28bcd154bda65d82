//! The override slots of the method state: values written at run time
//! (value index, payload, kind), 13 bytes each, sorted by value index once
//! at load and found by binary search.
//!
//! The kind byte is ExecuTorch's EValue tag (`ValueKind`'s), or 0: the
//! kind the program declares (what load writes). Whoever writes a slot at
//! run time sets it, as ExecuTorch's kernels assign a whole `EValue`: a
//! value the program declares as an Int may so hold a Double
//! (`executorch_prim::truediv.Scalar` on sizes: the emitter declares its
//! result as an Int), and its readers see the Double.

use crate::{Error, ErrorCode, Result};
use etch_pte::{Value, ValueKind};

/// Bytes of one slot: value index (4), payload (8), kind (1).
pub(crate) const OVERRIDE_BYTES: usize = 13;
/// Payload of a tensor alias that has not been set yet.
pub(crate) const UNSET: u64 = u64::MAX;

/// The value index of slot `k` (`u32::MAX` past the end: no value has it,
/// the verifier caps value indices below it). Out of line: six callers.
#[inline(never)]
pub(crate) fn slot_value(buf: &[u8], k: usize) -> u32 {
    match buf
        .get(k * OVERRIDE_BYTES..)
        .and_then(|b| b.first_chunk::<4>())
    {
        Some(b) => u32::from_le_bytes(*b),
        None => u32::MAX,
    }
}

/// Sorts the slots by value index in place (heapsort: no allocation,
/// O(s log s)), once at load, so that [`slot_of`] is a binary search. A
/// linear scan per read and write made every execute O(instructions x
/// slots): 1.25 s per execute for a 1 MB program of moves
/// (docs/robustness.md). Slots of the same value (spare ones, when the walk's
/// look-back budget ran out) hold the same initial payload, so which of them
/// [`slot_of`] finds does not matter, as long as it is always the same one.
pub(crate) fn sort_slots(buf: &mut [u8]) {
    let n = buf.len() / OVERRIDE_BYTES;
    let mut k = n / 2;
    while k > 0 {
        k -= 1;
        sift(buf, k, n);
    }
    let mut end = n;
    while end > 1 {
        end -= 1;
        swap_slots(buf, 0, end);
        sift(buf, 0, end);
    }
}

/// Sifts slot `root` down the heap of the first `end` slots.
#[inline(never)]
fn sift(buf: &mut [u8], mut root: usize, end: usize) {
    loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && slot_value(buf, child) < slot_value(buf, child + 1) {
            child += 1;
        }
        if slot_value(buf, root) >= slot_value(buf, child) {
            return;
        }
        swap_slots(buf, root, child);
        root = child;
    }
}

/// Swaps slots `lo` < `hi` in place (no 13-byte temporary: that became a
/// `memcpy` call).
fn swap_slots(buf: &mut [u8], lo: usize, hi: usize) {
    let Some((head, tail)) = buf.split_at_mut_checked(hi * OVERRIDE_BYTES) else {
        return;
    };
    let (Some(x), Some(y)) = (
        head.get_mut(lo * OVERRIDE_BYTES..)
            .and_then(|b| b.first_chunk_mut::<OVERRIDE_BYTES>()),
        tail.first_chunk_mut::<OVERRIDE_BYTES>(),
    ) else {
        return;
    };
    x.swap_with_slice(y);
}

/// The byte offset of value `v`'s slot in `buf` (sorted by [`sort_slots`]):
/// the first slot of `v`, by binary search.
pub(crate) fn slot_of(buf: &[u8], v: usize) -> Option<usize> {
    let (mut lo, mut hi) = (0, buf.len() / OVERRIDE_BYTES);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if (slot_value(buf, mid) as usize) < v {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let n = buf.len() / OVERRIDE_BYTES;
    (lo < n && slot_value(buf, lo) as usize == v).then_some(lo * OVERRIDE_BYTES)
}

/// Read access to run-time written values.
#[derive(Clone, Copy)]
pub(crate) struct Overrides<'s>(pub(super) &'s [u8]);

impl Overrides<'_> {
    /// No value written at run time (tests).
    #[cfg(all(test, feature = "decoded-calls"))]
    pub(crate) fn none() -> Overrides<'static> {
        Overrides(&[])
    }

    /// The payload for value `v`, if it has an override slot.
    pub(crate) fn get(&self, v: usize) -> Option<u64> {
        self.slot(v).map(|(_, p)| p)
    }

    /// Value `v`'s slot, if it has one: the kind its last writer gave it
    /// (a `ValueKind` tag) and its payload.
    pub(crate) fn slot(&self, v: usize) -> Option<(u8, u64)> {
        let at = slot_of(self.0, v)?;
        let b = self.0.get(at + 4..)?.first_chunk::<9>()?;
        let (payload, kind) = b.split_at(8);
        Some((kind[0], u64::from_le_bytes(payload.try_into().ok()?)))
    }

    /// Value `v` as the method holds it now: `declared` (the program's
    /// value), unless it is a scalar that a run-time write gave a payload
    /// and kind of its own.
    pub(crate) fn current<'a>(&self, v: usize, declared: Value<'a>) -> Value<'a> {
        if matches!(declared, Value::Tensor(_)) {
            return declared;
        }
        scalar(declared, self.slot(v))
    }

    /// The kind of value `v` now: `declared`, unless it is a scalar a
    /// run-time write gave another scalar kind.
    pub(crate) fn kind(&self, v: usize, declared: ValueKind) -> ValueKind {
        if !matches!(
            declared,
            ValueKind::Int | ValueKind::Double | ValueKind::Bool
        ) {
            return declared;
        }
        match self.slot(v) {
            Some((k @ (INT | DOUBLE | BOOL), _)) => ValueKind::from_tag(k).unwrap_or(declared),
            _ => declared,
        }
    }
}

/// A slot's kind byte: the kind the program declares (load's value).
pub(crate) const AS_DECLARED: u8 = 0;
const INT: u8 = ValueKind::Int as u8;
const DOUBLE: u8 = ValueKind::Double as u8;
const BOOL: u8 = ValueKind::Bool as u8;

/// A scalar `declared` as its slot (kind, payload) holds it now; `declared`
/// itself without a slot or when it is not a scalar and the slot's kind
/// is none of Int, Double or Bool.
pub(crate) fn scalar<'a>(declared: Value<'a>, slot: Option<(u8, u64)>) -> Value<'a> {
    let Some((kind, p)) = slot else {
        return declared;
    };
    // The declared kind's tag is `Value`'s discriminant.
    let kind = match (kind, declared) {
        (AS_DECLARED, Value::Int(_)) => INT,
        (AS_DECLARED, Value::Double(_)) => DOUBLE,
        (AS_DECLARED, Value::Bool(_)) => BOOL,
        (kind, _) => kind,
    };
    match kind {
        INT => Value::Int(p as i64),
        DOUBLE => Value::Double(f64::from_bits(p)),
        BOOL => Value::Bool(p != 0),
        _ => declared,
    }
}

/// Write access to run-time written values.
pub(crate) struct OverridesMut<'s>(pub(super) &'s mut [u8]);

impl OverridesMut<'_> {
    pub(crate) fn as_ref(&self) -> Overrides<'_> {
        Overrides(self.0)
    }

    /// Sets the kind (a `ValueKind` tag) and payload of value `v`'s slot;
    /// `InvalidState` if it has none.
    pub(crate) fn set(&mut self, v: usize, kind: ValueKind, payload: u64) -> Result<()> {
        let slot = slot_of(self.0, v).ok_or(Error::new(
            ErrorCode::InvalidState,
            "value is not writable at run time",
            v as u32,
        ))?;
        self.write(slot, v as u32, kind as u8, payload);
        Ok(())
    }

    /// Sets the kind and payload of value `v`'s slot; nothing if it has
    /// none. For a Move target: the walk at load gave every one a slot.
    pub(crate) fn put(&mut self, v: usize, kind: u8, payload: u64) {
        if let Some(slot) = slot_of(self.0, v) {
            self.write(slot, v as u32, kind, payload);
        }
    }

    /// Writes the slot at byte offset `at`.
    #[inline(always)]
    pub(crate) fn write(&mut self, at: usize, value: u32, kind: u8, payload: u64) {
        let b = self
            .0
            .get_mut(at..)
            .and_then(|b| b.first_chunk_mut::<OVERRIDE_BYTES>());
        if let Some(b) = b {
            let mut bytes = [0u8; OVERRIDE_BYTES];
            bytes[..4].copy_from_slice(&value.to_le_bytes());
            bytes[4..12].copy_from_slice(&payload.to_le_bytes());
            bytes[12] = kind;
            *b = bytes;
        }
    }
}
