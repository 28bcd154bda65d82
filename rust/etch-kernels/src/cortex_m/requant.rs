//! Requantization as the kernels run it: `arm_nn_requantize` with the
//! shift decoded once per channel ([`Requant`]), and the out-of-line loops
//! that turn rows of accumulators into int8 outputs.

use super::ConvQuant;
use crate::ops::arith::requantize;

/// `arm_nn_requantize` for one channel with the shift decoded once:
/// `x = acc << left; h = (x·mult + 2^30) >> 31`, then a rounding shift
/// right by `r` with ties away from zero.
///
/// For `r ≥ 1` the two roundings collapse into one 64-bit step (nested
/// floor divisions): `floor((P + 2^(30+r) − [h<0]·2^31) / 2^(31+r))` with
/// `P = x·mult + 2^30` and `[h<0] = [P<0]`, i.e. the high word of that sum
/// shifted right by `r − 1`. With `mult ≥ 0`, `[x<0]` may stand in for
/// `[P<0]`: they differ only when `0 ≤ P ≤ 2^30`, where both give 0. So the
/// step is two multiply-accumulates and a shift. Negative multipliers take
/// the reference path.
#[derive(Clone, Copy)]
pub(crate) struct Requant {
    mult: i32,
    /// `r − 1`.
    rm1: u32,
    /// `2^30 + 2^(30+r)`.
    k: i64,
    /// Not the fast case (`r = 0`, or a negative multiplier): the shift to
    /// hand to the reference.
    other: Option<i32>,
}

impl Requant {
    #[inline]
    pub(crate) fn new(mult: i32, shift: i32) -> Self {
        let right = if shift > 0 {
            0
        } else {
            (shift.wrapping_neg() as u32).min(31)
        };
        Requant {
            mult,
            rm1: right.saturating_sub(1),
            k: (1i64 << 30) + (1i64 << (30 + right)),
            other: (right == 0 || mult < 0).then_some(shift),
        }
    }

    /// Whether [`Requant::apply_fast`] is exact for this channel.
    #[inline(always)]
    pub(crate) fn is_fast(&self) -> bool {
        self.other.is_none()
    }

    /// [`Requant::apply`] for [`Requant::is_fast`] channels.
    #[inline(always)]
    pub(crate) fn apply_fast(&self, acc: i32) -> i32 {
        let neg = (acc as u32 >> 31) as i64;
        let p = (acc as i64) * (self.mult as i64) + self.k + neg * (i32::MIN as i64);
        ((p >> 32) as i32) >> self.rm1
    }

    /// The two words it is kept as in kernel scratch ([`Rq`]): `mult` and
    /// `r − 1` (or the shift, when not fast), then `k`; a negative `k`
    /// (never a fast one) marks the reference path.
    #[inline(always)]
    pub(crate) fn to_words(self) -> Rq {
        match self.other {
            None => [
                self.mult as u32 as u64 | (self.rm1 as u64) << 32,
                self.k as u64,
            ],
            Some(shift) => [
                self.mult as u32 as u64 | (shift as u32 as u64) << 32,
                u64::MAX,
            ],
        }
    }

    /// [`Requant::to_words`] back.
    #[inline(always)]
    pub(crate) fn from_words(w: &Rq) -> Self {
        let k = w[1] as i64;
        let rm1 = (w[0] >> 32) as u32;
        Requant {
            mult: w[0] as u32 as i32,
            rm1,
            k,
            other: (k < 0).then_some(rm1 as i32),
        }
    }

    #[inline(always)]
    pub(crate) fn apply(&self, acc: i32) -> i32 {
        if let Some(shift) = self.other {
            return requantize_cold(acc, self.mult, shift);
        }
        // r ≥ 1 here, so the left shift is 0.
        let neg = (acc as u32 >> 31) as i64;
        let p = (acc as i64) * (self.mult as i64) + self.k + neg * (i32::MIN as i64);
        ((p >> 32) as i32).wrapping_shr(self.rm1)
    }
}

/// A [`Requant`] as kept in kernel scratch ([`Requant::to_words`]).
pub(crate) type Rq = [u64; 2];

#[cold]
#[inline(never)]
fn requantize_cold(acc: i32, mult: i32, shift: i32) -> i32 {
    requantize(acc, mult, shift)
}

impl ConvQuant {
    /// [`ConvQuant::finish`] with a decoded [`Requant`].
    #[inline(always)]
    pub(crate) fn out(&self, acc: i32, r: &Requant) -> i8 {
        let v = r.apply(acc).wrapping_add(self.output_offset);
        v.max(self.act_min).min(self.act_max) as i8
    }
}

/// Requantizes a row of accumulators: `out[j] = finish(full[j] + acc[j])`
/// (lengths: the shortest). Out of line on purpose: inside the big kernel
/// bodies its constants were spilled (30+ instructions per output, against
/// about 20 here).
#[inline(never)]
pub(crate) fn finish_into(q: &ConvQuant, acc: &[i32], full: &[i32], req: &[Rq], out: &mut [i8]) {
    let rows = out.iter_mut().zip(acc).zip(full).zip(req);
    if q.act_min == -128 && q.act_max == 127 {
        // The usual case: a constant clamp (one `ssat`).
        for (((d, &a), &f), r) in rows {
            *d = Requant::from_words(r)
                .apply(f.wrapping_add(a))
                .wrapping_add(q.output_offset)
                .clamp(-128, 127) as i8;
        }
    } else {
        for (((d, &a), &f), r) in rows {
            *d = q.out(f.wrapping_add(a), &Requant::from_words(r));
        }
    }
}

/// Requantizes finished accumulators (bias and offset term included):
/// `fast` = every channel [`Requant::is_fast`]. Out of line like
/// [`finish_into`].
#[inline(never)]
pub(crate) fn finish_acc(q: &ConvQuant, acc: &[i32], req: &[Rq], fast: bool, out: &mut [i8]) {
    let rows = out.iter_mut().zip(acc).zip(req);
    if fast && q.act_min == -128 && q.act_max == 127 {
        for ((d, &a), r) in rows {
            *d = Requant::from_words(r)
                .apply_fast(a)
                .wrapping_add(q.output_offset)
                .clamp(-128, 127) as i8;
        }
    } else {
        for ((d, &a), r) in rows {
            *d = q.out(a, &Requant::from_words(r));
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::testutil::*;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn requantize_matches_reference_over_shifts_and_signs() {
        let mut r = Rng(7);
        for shift in -31..=30 {
            for _ in 0..200 {
                let mult = r.range(1 << 30, i32::MAX as i64) as i32;
                // Keep `val << left` inside i32 as CMSIS-NN assumes.
                let bound = (i32::MAX >> shift.max(0)) as i64;
                let val = r.range(-bound, bound) as i32;
                assert_eq!(
                    crate::ops::arith::requantize(val, mult, shift) as i64,
                    ref_requantize(val, mult, shift),
                    "val {val} mult {mult} shift {shift}"
                );
            }
        }
    }

    #[test]
    fn fast_requantize_equals_reference_everywhere() {
        let mut r = Rng(0x4e9);
        let mut shifts: Vec<i32> = (-31..=30).collect();
        shifts.extend([i32::MIN, -32, -40, 31, 32, 40, i32::MAX]);
        let special = [
            i32::MIN,
            i32::MIN + 1,
            -1,
            0,
            1,
            i32::MAX,
            1 << 30,
            -(1 << 30),
        ];
        for &shift in &shifts {
            let mut mults: Vec<i32> = special.to_vec();
            mults.extend((0..8).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
            mults.extend((0..4).map(|_| r.next() as i32));
            for &m in &mults {
                let q = Requant::new(m, shift);
                let mut accs: Vec<i32> = special.to_vec();
                accs.extend((0..60).map(|_| r.next() as i32));
                accs.extend((0..60).map(|_| r.range(-70_000, 70_000) as i32));
                // Rounding ties of the final shift: (2k + 1)·2^(r-1) for small k.
                let rsh = (-(shift as i64)).clamp(0, 31) as u32;
                if rsh > 0 {
                    for k in -3i64..3 {
                        let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                        accs.push((tie / m.max(1) as i64) as i32);
                    }
                }
                for &acc in &accs {
                    assert_eq!(
                        q.apply(acc),
                        crate::ops::arith::requantize(acc, m, shift),
                        "acc {acc} mult {m} shift {shift}"
                    );
                }
            }
        }
    }
}
