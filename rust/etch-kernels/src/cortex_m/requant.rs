//! Requantization as the kernels run it: `arm_nn_requantize` with the
//! shift decoded once per channel ([`Requant`]), and the out-of-line loops
//! that turn rows of accumulators into int8 outputs.

use super::ConvQuant;
use crate::cortex_m::arith::requantize;

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
    /// Largest `r − 1` of the fast case: the folded output offset
    /// ([`Requant::to_words`]) keeps the high word inside `i32` up to here.
    const MAX_RM1: u32 = 22;

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
            // Fast: 2 ≤ r ≤ 23, multiplier ≥ 0 (r = 1 and very large
            // shifts take the reference path: no DS-CNN layer has them).
            other: (!(2..=Self::MAX_RM1 + 1).contains(&right) || mult < 0).then_some(shift),
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

    /// The two words it is kept as in kernel scratch ([`Rq`]), for outputs
    /// offset by `out_off`. Fast channels: `mult`, then the high word of `k`
    /// plus `out_off·2^(r−1)` (so that the final shift adds the output
    /// offset: [`fast_words`]; `out_off` outside `-128..=127` is not folded
    /// and those outputs never take [`fast_words`]), then `r − 1`, then 0.
    /// Others: `mult`, the shift, then `u64::MAX` (marks the reference
    /// path).
    #[inline(never)]
    pub(crate) fn to_words(self, out_off: i32) -> Rq {
        match self.other {
            None => {
                let off = if (-128..=127).contains(&out_off) {
                    out_off
                } else {
                    0
                };
                let hi = ((self.k >> 32) as i32).wrapping_add(off << self.rm1);
                [
                    self.mult as u32 as u64 | (hi as u32 as u64) << 32,
                    self.rm1 as u64,
                ]
            }
            Some(shift) => [
                self.mult as u32 as u64 | (shift as u32 as u64) << 32,
                u64::MAX,
            ],
        }
    }

    /// [`Requant::to_words`] back (the folded offset is dropped).
    #[inline(always)]
    pub(crate) fn from_words(w: &Rq) -> Self {
        let mult = w[0] as u32 as i32;
        if (w[1] as i64) < 0 {
            let shift = (w[0] >> 32) as u32 as i32;
            return Requant::new(mult, shift);
        }
        let rm1 = (w[1] as u32).min(30);
        Requant {
            mult,
            rm1,
            k: (1i64 << 30) + (1i64 << (31 + rm1)),
            other: None,
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
    if fast && q.act_min == -128 && q.act_max == 127 && (-128..=127).contains(&q.output_offset) {
        finish_fast(acc, req, out);
        return;
    }
    for ((d, &a), r) in out.iter_mut().zip(acc).zip(req) {
        *d = q.out(a, &Requant::from_words(r));
    }
}

/// One output of [`finish_fast`], as its `asm!` loop computes it from the
/// words of a fast channel ([`Requant::to_words`] with the output offset
/// folded into the high word): `(hi:lo) = (hi_w + sign(acc) : 2^30 | sign
/// bit of acc) + acc·mult` (`SMLAL`), then `hi >> (r − 1)` (the output
/// offset comes with it) and `SSAT #8`. The same integer as
/// `clamp(apply_fast(acc) + out_off)`: the sign terms are `k − [acc<0]·2^31`
/// for `r ≥ 2`, and adding `out_off·2^(r−1)` before the shift adds `out_off`
/// after it while the high word stays inside `i32` (`r − 1 ≤ 22`).
#[cfg_attr(all(target_arch = "arm", feature = "dsp", not(test)), allow(dead_code))]
#[inline(always)]
pub(crate) fn fast_words(w: &Rq, acc: i32) -> i8 {
    let (mult, hi_w, rm1) = (w[0] as u32 as i32, (w[0] >> 32) as u32 as i32, w[1] as u32);
    // (hi:lo) before the multiply-accumulate: hi_w·2^32 + 2^30 − [acc<0]·2^31.
    let neg = (acc as u32 >> 31) as i64;
    let k = ((hi_w as i64) << 32) + (1 << 30) + neg * (i32::MIN as i64);
    let p = (acc as i64) * (mult as i64) + k;
    (((p >> 32) as i32) >> (rm1 & 31)).clamp(-128, 127) as i8
}

/// [`finish_acc`]'s usual case: every channel fast, full int8 range, the
/// output offset folded (lengths: the shortest).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn finish_fast(acc: &[i32], req: &[Rq], out: &mut [i8]) {
    for ((d, &a), r) in out.iter_mut().zip(acc).zip(req) {
        *d = fast_words(r, a);
    }
}

/// [`finish_acc`]'s usual case on Arm with DSP: [`fast_words`] as one
/// `asm!` loop (12 instructions per output against 15 for LLVM's, which
/// masks the shift count and keeps the low constant in a register).
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn finish_fast(acc: &[i32], req: &[Rq], out: &mut [i8]) {
    let n = out.len().min(acc.len()).min(req.len());
    if n == 0 {
        return;
    }
    // SAFETY: `n ≥ 1` passes; pass i reads `acc[i]`, the four words of
    // `req[i]` at offsets 0, 4 and 8, and writes `out[i]`, all inside the
    // slices (n is the shortest length). `req` is 8-aligned for `ldrd`.
    // Registers only otherwise; flags clobbered.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldr {a}, [{ap}], #4",
            "ldr {s}, [{rp}, #8]",
            "ldrd {m}, {h}, [{rp}], #16",
            "and {t}, {a}, #0x80000000",
            "orr {t}, {t}, #0x40000000",
            "add {h}, {h}, {a}, asr #31",
            "smlal {t}, {h}, {a}, {m}",
            "asr {h}, {h}, {s}",
            "ssat {h}, #8, {h}",
            "strb {h}, [{op}], #1",
            "subs {n}, {n}, #1",
            "bne 2b",
            ap = inout(reg) acc.as_ptr() => _,
            rp = inout(reg) req.as_ptr() => _,
            op = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) n => _,
            a = out(reg) _,
            s = out(reg) _,
            m = out(reg) _,
            h = out(reg) _,
            t = out(reg) _,
            options(nostack),
        );
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
                    crate::cortex_m::arith::requantize(val, mult, shift) as i64,
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
                    let want = crate::cortex_m::arith::requantize(acc, m, shift);
                    assert_eq!(q.apply(acc), want, "acc {acc} mult {m} shift {shift}");
                    for off in [-128, -5, 0, 1, 127] {
                        let w = q.to_words(off);
                        let r = Requant::from_words(&w);
                        assert_eq!(
                            r.apply(acc),
                            want,
                            "words: acc {acc} mult {m} shift {shift}"
                        );
                        if (w[1] as i64) >= 0 {
                            assert!(q.is_fast());
                            let clamped = want.wrapping_add(off).clamp(-128, 127) as i8;
                            assert_eq!(
                                fast_words(&w, acc),
                                clamped,
                                "fast: acc {acc} mult {m} shift {shift} off {off}"
                            );
                        }
                    }
                }
            }
        }
    }
}
