//! x86-64 building blocks of the [`X86`](super::X86) layer kernels
//! (`conv/x86.rs`, `depthwise/x86.rs`): SSE2, which every x86-64 CPU and
//! every hosted x86-64 target has (the AVX2 ones, for CPUs that report it
//! at run time, are in [`avx2`]). Compiled only with
//! `all(target_arch = "x86_64", target_feature = "sse2")`: `i686`, other
//! architectures and `x86_64-unknown-none` (no SSE: Zephyr's
//! native_sim/native/64 Rust target) take [`Scalar`](super::Scalar).
//!
//! `PMADDWD` (`_mm_madd_epi16`) multiplies eight int16 lanes and adds
//! adjacent products into four int32 lanes; int8 values are sign-extended
//! to int16 with `PCMPGTB` + `PUNPCKLBW`/`PUNPCKHBW`. Each product of two
//! int8 values is at most 2^14 in magnitude and a pair at most 2^15, so every
//! lane holds the exact partial sum and the wrapping int32 additions give
//! the same integers as the scalar loops (addition modulo 2^32 is
//! associative). The intrinsics are called through safe wrappers (one
//! `unsafe` each, `sse2!`); vectors move in and out of memory through
//! `bytemuck` casts.
#![cfg_attr(feature = "dsp", allow(dead_code))]

use core::arch::x86_64::{self as arch, __m128i};

pub(crate) mod avx2;

/// Safe wrappers of the SSE2 intrinsics the kernels use, one `unsafe` each.
macro_rules! sse2 {
    ($($(#[$doc:meta])* $name:ident($($a:ident),*) = $f:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub(crate) fn $name($($a: __m128i),*) -> __m128i {
            // SAFETY: the intrinsic only computes on registers (no memory
            // access) and needs SSE2, which this module is compiled with
            // only (`target_feature = "sse2"`, see the module's cfg).
            unsafe { arch::$f($($a),*) }
        }
    )*};
}

sse2! {
    /// Lane-wise wrapping int32 addition.
    add32(a, b) = _mm_add_epi32;
    /// `PMADDWD`: `[a0·b0 + a1·b1, …]`, int16 lanes into int32 lanes.
    madd16(a, b) = _mm_madd_epi16;
    /// `PCMPGTB`: all-ones bytes where `a > b`.
    cmpgt8(a, b) = _mm_cmpgt_epi8;
    unpacklo8(a, b) = _mm_unpacklo_epi8;
    unpackhi8(a, b) = _mm_unpackhi_epi8;
    unpacklo32(a, b) = _mm_unpacklo_epi32;
    unpackhi32(a, b) = _mm_unpackhi_epi32;
    unpacklo64(a, b) = _mm_unpacklo_epi64;
    unpackhi64(a, b) = _mm_unpackhi_epi64;
    /// A zeroed vector.
    zero() = _mm_setzero_si128;
    /// `PMULUDQ`: unsigned 32×32 → 64-bit products of lanes 0 and 2.
    mul_u32(a, b) = _mm_mul_epu32;
    add64(a, b) = _mm_add_epi64;
    sub64(a, b) = _mm_sub_epi64;
    and(a, b) = _mm_and_si128;
    /// `PSRLQ` by the count in the low 64 bits of `b`.
    srl64(a, b) = _mm_srl_epi64;
    /// int32 → int16 with signed saturation (`a` low, `b` high).
    packs32(a, b) = _mm_packs_epi32;
    /// int16 → int8 with signed saturation (`a` low, `b` high).
    packs16(a, b) = _mm_packs_epi16;
    max16(a, b) = _mm_max_epi16;
    min16(a, b) = _mm_min_epi16;
}

/// `[a[i], a[i], a[j], a[j]]`: lanes `i` and `j` spread over the two
/// 64-bit halves (sign masks of the even or odd lanes).
#[inline(always)]
fn spread<const IMM: i32>(a: __m128i) -> __m128i {
    // SAFETY: as in `sse2!`: a register shuffle (`PSHUFD`), SSE2.
    unsafe { arch::_mm_shuffle_epi32::<IMM>(a) }
}

/// `PSRAD`: every int32 lane shifted right arithmetically by `N`.
#[inline(always)]
fn sra32<const N: i32>(a: __m128i) -> __m128i {
    // SAFETY: as in `sse2!`: a register shift, SSE2.
    unsafe { arch::_mm_srai_epi32::<N>(a) }
}

use crate::cortex_m::requant::Requant;
use crate::cortex_m::ConvQuant;

/// Most values per row [`pack4`] packs: a pointwise layer's input channels,
/// a one-input-channel depthwise window's taps.
pub(crate) const MAX_LEN: usize = 256;

/// Vectors of four packed rows of up to [`MAX_LEN`] values.
pub(crate) const PACK_WORDS: usize = 4 * MAX_LEN / 8;

/// Sixteen int8 values as two vectors of eight int16 lanes (values 0..8,
/// 8..16).
#[inline(always)]
pub(crate) fn widen(v: __m128i) -> (__m128i, __m128i) {
    let sign = cmpgt8(zero(), v);
    (unpacklo8(v, sign), unpackhi8(v, sign))
}

/// Packs four int8 rows as int16 for [`dot4`]: per chunk `k` of 16 values,
/// eight vectors: row `r`'s values `16k..16k+8` at `8k + 2r`, `16k+8..16k+16`
/// at `8k + 2r + 1`. Values past a row's end are 0, so whatever [`dot4`]
/// multiplies them with adds nothing. Fills whole chunks of `packed`.
pub(crate) fn pack4(rows: [&[i8]; 4], packed: &mut [__m128i]) {
    for (k, out) in packed.as_chunks_mut::<8>().0.iter_mut().enumerate() {
        for (r, row) in rows.iter().enumerate() {
            let mut v = [0i16; 16];
            for (d, &s) in v.iter_mut().zip(row.iter().skip(16 * k)) {
                *d = s as i16;
            }
            let [lo, hi]: [__m128i; 2] = bytemuck::cast(v);
            out[2 * r] = lo;
            out[2 * r + 1] = hi;
        }
    }
}

/// `[Σ x·w_r]` for the four rows [`pack4`] packed, over `x` (whole chunks
/// of 16, then the tail zero-filled); chunks of `x` past `packed` add
/// nothing.
#[inline(always)]
pub(crate) fn dot4(x: &[i8], packed: &[__m128i]) -> __m128i {
    let (mut a0, mut a1, mut a2, mut a3) = (zero(), zero(), zero(), zero());
    let (wb, _) = packed.as_chunks::<8>();
    let (xb, tail) = x.as_chunks::<16>();
    let mut step = |v: [i8; 16], w: &[__m128i; 8]| {
        let (lo, hi) = widen(bytemuck::cast(v));
        a0 = add32(a0, madd16(lo, w[0]));
        a1 = add32(a1, madd16(lo, w[2]));
        a2 = add32(a2, madd16(lo, w[4]));
        a3 = add32(a3, madd16(lo, w[6]));
        a0 = add32(a0, madd16(hi, w[1]));
        a1 = add32(a1, madd16(hi, w[3]));
        a2 = add32(a2, madd16(hi, w[5]));
        a3 = add32(a3, madd16(hi, w[7]));
    };
    for (v, w) in xb.iter().zip(wb) {
        step(*v, w);
    }
    if !tail.is_empty() {
        if let Some(w) = wb.get(xb.len()) {
            let mut v = [0i8; 16];
            for (d, &s) in v.iter_mut().zip(tail) {
                *d = s;
            }
            step(v, w);
        }
    }
    hsum4(a0, a1, a2, a3)
}

/// [`dot4`] for eight rows at once (`p0`: rows 0..4, `p1`: rows 4..8, each
/// packed by [`pack4`]): every chunk of `x` widened once for eight rows.
#[inline(always)]
pub(crate) fn dot8(x: &[i8], p0: &[__m128i], p1: &[__m128i]) -> (__m128i, __m128i) {
    let mut a = [zero(); 8];
    let (xb, tail) = x.as_chunks::<16>();
    let mut step = |v: [i8; 16], w0: &[__m128i; 8], w1: &[__m128i; 8]| {
        let (lo, hi) = widen(bytemuck::cast(v));
        for r in 0..4 {
            a[r] = add32(a[r], madd16(lo, w0[2 * r]));
            a[r + 4] = add32(a[r + 4], madd16(lo, w1[2 * r]));
        }
        for r in 0..4 {
            a[r] = add32(a[r], madd16(hi, w0[2 * r + 1]));
            a[r + 4] = add32(a[r + 4], madd16(hi, w1[2 * r + 1]));
        }
    };
    let (w0, w1) = (p0.as_chunks::<8>().0, p1.as_chunks::<8>().0);
    for ((v, w0), w1) in xb.iter().zip(w0).zip(w1) {
        step(*v, w0, w1);
    }
    if !tail.is_empty() {
        if let (Some(w0), Some(w1)) = (w0.get(xb.len()), w1.get(xb.len())) {
            let mut v = [0i8; 16];
            for (d, &s) in v.iter_mut().zip(tail) {
                *d = s;
            }
            step(v, w0, w1);
        }
    }
    (hsum4(a[0], a[1], a[2], a[3]), hsum4(a[4], a[5], a[6], a[7]))
}

/// `[Σ a0, Σ a1, Σ a2, Σ a3]` (each over its four lanes).
#[inline(always)]
pub(crate) fn hsum4(a0: __m128i, a1: __m128i, a2: __m128i, a3: __m128i) -> __m128i {
    // [a0.0+a0.2, a1.0+a1.2, a0.1+a0.3, a1.1+a1.3], likewise for a2, a3.
    let s01 = add32(unpacklo32(a0, a1), unpackhi32(a0, a1));
    let s23 = add32(unpacklo32(a2, a3), unpackhi32(a2, a3));
    add32(unpacklo64(s01, s23), unpackhi64(s01, s23))
}

/// The requantization of four output channels in vector form: `acc` →
/// `clamp(requantize(acc) + output_offset, act_min, act_max)` on four
/// lanes at once, equal to [`ConvQuant::finish`] for channels with a
/// non-negative multiplier and a right shift `r ≥ 1` (a wider range than
/// [`Requant::is_fast`]'s).
///
/// For those, `arm_nn_requantize` is `P >> (31 + r)` with
/// `P = acc·mult + k − [acc<0]·2^31`, `k = 2^30 + 2^(30+r)` (nested
/// floors; see [`Requant`]).
/// SSE2 has only unsigned 32×32-bit products (`PMULUDQ`, lanes 0 and 2),
/// so with `acc_u = acc mod 2^32` (`acc_u·mult − [acc<0]·mult·2^32` is
/// the signed product): `P = acc_u·mult + k − [acc<0]·(mult·2^32 + 2^31)`,
/// and `2^63` is added (to `k`, modulo 2^64) so that the logical shift
/// (`PSRLQ`, one count per instruction: one shift per lane) is the
/// arithmetic one plus `2^(63−s)`, `s = 31 + r`, which `bias` takes back
/// together with adding the output offset, in wrapping 32-bit lanes as
/// the scalar code. The clamp: saturating packs to int16 (exact for the
/// int32 value's clamp to any int8 range), `PMAXSW`/`PMINSW`, a saturating
/// pack to int8.
#[derive(Clone, Copy)]
pub(crate) struct Rq4 {
    /// `[m0, m1, m2, m3]` and `[m1, 0, m3, 0]`.
    mult: __m128i,
    mult_odd: __m128i,
    /// `k + 2^63` of lanes 0, 2 and of lanes 1, 3 (64-bit).
    k_even: __m128i,
    k_odd: __m128i,
    /// `mult·2^32 + 2^31` of lanes 0, 2 and of lanes 1, 3 (64-bit).
    neg_even: __m128i,
    neg_odd: __m128i,
    /// Shift counts `31 + r` of lanes 0..4.
    shift: [__m128i; 4],
    /// `output_offset − 2^(63−s)` per lane.
    bias: __m128i,
    act_min: __m128i,
    act_max: __m128i,
}

impl Rq4 {
    /// The vector form of four channels' `(mult, shift)`, or `None` unless
    /// every one has a non-negative multiplier and a right shift, and the
    /// activation bounds are int8
    /// values (others make the scalar code's final `as i8` wrap).
    #[inline]
    pub(crate) fn new(q: &ConvQuant, mult: [i32; 4], shift: [i32; 4]) -> Option<Self> {
        let int8 = -128..=127;
        if !int8.contains(&q.act_min) || !int8.contains(&q.act_max) {
            return None;
        }
        let mut s = [0u64; 4];
        let (mut k, mut neg, mut bias) = ([0u64; 4], [0u64; 4], [0i32; 4]);
        for l in 0..4 {
            let right = if shift[l] > 0 {
                0
            } else {
                (shift[l].wrapping_neg() as u32).min(31)
            };
            if right == 0 || mult[l] < 0 {
                return None;
            }
            s[l] = 31 + right as u64;
            k[l] = ((1u64 << 30) + (1u64 << (30 + right))).wrapping_add(1 << 63);
            neg[l] = ((mult[l] as u64) << 32) + (1 << 31);
            bias[l] = q.output_offset.wrapping_sub(1 << (63 - s[l]));
        }
        let m = mult.map(|m| m as u32 as u64);
        let i16s = |v: i32| bytemuck::cast([v as i16; 8]);
        Some(Rq4 {
            mult: bytemuck::cast(mult),
            mult_odd: bytemuck::cast([m[1], m[3]]),
            k_even: bytemuck::cast([k[0], k[2]]),
            k_odd: bytemuck::cast([k[1], k[3]]),
            neg_even: bytemuck::cast([neg[0], neg[2]]),
            neg_odd: bytemuck::cast([neg[1], neg[3]]),
            shift: s.map(|s| bytemuck::cast([s, 0])),
            bias: bytemuck::cast(bias),
            act_min: i16s(q.act_min),
            act_max: i16s(q.act_max),
        })
    }

    /// Four requantized, offset and clamped outputs (int8 lanes 0..4, as
    /// the low 32 bits, little-endian).
    #[inline(always)]
    pub(crate) fn apply(&self, acc: __m128i) -> u32 {
        let v = self.clamp16(self.offset(acc));
        let v: [u32; 4] = bytemuck::cast(packs16(v, v));
        v[0]
    }

    /// Requantized and offset, before the clamp: four int32 lanes.
    #[inline(always)]
    pub(crate) fn offset(&self, acc: __m128i) -> __m128i {
        let neg = sra32::<31>(acc);
        let even = mul_u32(acc, self.mult);
        let even = add64(even, self.k_even);
        let even = sub64(even, and(spread::<0b10_10_00_00>(neg), self.neg_even));
        let odd = mul_u32(spread::<0b11_11_01_01>(acc), self.mult_odd);
        let odd = add64(odd, self.k_odd);
        let odd = sub64(odd, and(spread::<0b11_11_01_01>(neg), self.neg_odd));
        // Lane l's result is the low 32 bits of its 64-bit half shifted.
        let l0 = srl64(even, self.shift[0]);
        let l2 = srl64(even, self.shift[2]);
        let l1 = srl64(odd, self.shift[1]);
        let l3 = srl64(odd, self.shift[3]);
        let v = unpacklo64(unpacklo32(l0, l1), unpackhi32(l2, l3));
        add32(v, self.bias)
    }

    /// [`Rq4::offset`] lanes of two groups (`a`: lanes 0..4, `b`: 4..8)
    /// saturated to int16 and clamped to the activation range (the same
    /// for every group of a layer).
    #[inline(always)]
    pub(crate) fn clamp16_2(&self, a: __m128i, b: __m128i) -> __m128i {
        min16(max16(packs32(a, b), self.act_min), self.act_max)
    }

    #[inline(always)]
    fn clamp16(&self, a: __m128i) -> __m128i {
        self.clamp16_2(a, a)
    }

    /// [`Rq4::apply`] into `dst` (its first up to four bytes).
    #[inline(always)]
    pub(crate) fn store(&self, acc: __m128i, dst: &mut [i8]) {
        let v = self.apply(acc).to_le_bytes();
        if let Ok(d) = <&mut [i8; 4]>::try_from(&mut *dst) {
            *d = v.map(|b| b as i8);
        } else {
            for (d, &b) in dst.iter_mut().zip(&v) {
                *d = b as i8;
            }
        }
    }
}

/// Eight clamped outputs ([`Rq4::clamp16_2`] of two groups) as int8.
#[inline(always)]
pub(crate) fn pack8(v: __m128i) -> [i8; 8] {
    let [lo, _]: [[i8; 8]; 2] = bytemuck::cast(packs16(v, v));
    lo
}

/// Sixteen clamped outputs ([`Rq4::clamp16_2`] of four groups) as int8.
#[inline(always)]
pub(crate) fn pack16(lo: __m128i, hi: __m128i) -> [i8; 16] {
    bytemuck::cast(packs16(lo, hi))
}

/// Requantizes four finished accumulators into `dst` (its first up to four
/// bytes): `fast` = every channel [`Requant::is_fast`].
#[inline(always)]
pub(crate) fn finish4(q: &ConvQuant, acc: __m128i, req: &[Requant; 4], fast: bool, dst: &mut [i8]) {
    let a: [i32; 4] = bytemuck::cast(acc);
    if fast && q.act_min == -128 && q.act_max == 127 {
        for ((d, &a), r) in dst.iter_mut().zip(&a).zip(req) {
            *d = r
                .apply_fast(a)
                .wrapping_add(q.output_offset)
                .clamp(-128, 127) as i8;
        }
    } else {
        for ((d, &a), r) in dst.iter_mut().zip(&a).zip(req) {
            *d = q.out(a, r);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cortex_m::testutil::Rng;
    use std::{vec, vec::Vec};

    #[test]
    fn dot4_equals_plain_sums_for_every_length_and_extreme_values() {
        let mut r = Rng(0x86);
        let mut packed = [zero(); PACK_WORDS];
        for len in 0..=MAX_LEN {
            for fill in [None, Some(-128i8), Some(127)] {
                let row = |r: &mut Rng| -> Vec<i8> {
                    (0..len)
                        .map(|_| fill.unwrap_or_else(|| r.next() as i8))
                        .collect()
                };
                let x = row(&mut r);
                let w: [Vec<i8>; 4] = [row(&mut r), row(&mut r), row(&mut r), {
                    // One row of the other extreme: -128·-128 and -128·127.
                    (0..len).map(|_| -128).collect()
                }];
                pack4(
                    [&w[0], &w[1], &w[2], &w[3]],
                    &mut packed[..8 * len.div_ceil(16)],
                );
                let got: [i32; 4] = bytemuck::cast(dot4(&x, &packed[..8 * len.div_ceil(16)]));
                let want = w.each_ref().map(|w| {
                    x.iter()
                        .zip(w)
                        .map(|(&a, &b)| a as i32 * b as i32)
                        .sum::<i32>()
                });
                assert_eq!(got, want, "len {len} fill {fill:?}");
            }
        }
    }

    /// [`Rq4`] against [`ConvQuant::finish`] (the scalar requantization):
    /// every right shift, multipliers at their extremes, accumulators at
    /// theirs and at the rounding ties, output offsets and activation
    /// ranges at the int8 extremes; it refuses exactly the channels with a
    /// negative multiplier or no right shift.
    #[test]
    fn rq4_equals_scalar_requantization() {
        let mut r = Rng(0x4e94);
        let special = [
            i32::MIN,
            i32::MIN + 1,
            -(1 << 30),
            -70_000,
            -1,
            0,
            1,
            70_000,
            1 << 30,
            i32::MAX,
        ];
        let mut shifts: Vec<i32> = (-31..=2).collect();
        shifts.extend([i32::MIN, -32, -40, 31, i32::MAX]);
        for &shift in &shifts {
            let mut mults = vec![0, 1, i32::MAX, 1 << 30, -1, i32::MIN];
            mults.extend((0..6).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
            mults.extend((0..2).map(|_| r.next() as i32));
            for m4 in mults.chunks(4).filter(|c| c.len() == 4) {
                let mult: [i32; 4] = m4.try_into().unwrap();
                for (out, lo, hi) in [
                    (0, -128, 127),
                    (-128, -128, 127),
                    (127, -5, 127),
                    (3, -128, 0),
                    (-7, 9, 9),
                    (0, 5, -5),
                ] {
                    let q = ConvQuant {
                        input_offset: 0,
                        output_offset: out,
                        act_min: lo,
                        act_max: hi,
                    };
                    let shift4 = [shift, shift, shift.saturating_add(1).clamp(-31, 0), -1];
                    let fast = (0..4).all(|l| mult[l] >= 0 && shift4[l] < 0);
                    let Some(rq) = Rq4::new(&q, mult, shift4) else {
                        assert!(!fast, "mult {mult:?} shift {shift4:?} refused");
                        continue;
                    };
                    assert!(fast, "mult {mult:?} shift {shift4:?} admitted");
                    let mut accs: Vec<i32> = special.to_vec();
                    accs.extend((0..40).map(|_| r.next() as i32));
                    accs.extend((0..40).map(|_| r.range(-100_000, 100_000) as i32));
                    let rsh = (-(shift as i64)).clamp(0, 31) as u32;
                    if rsh > 0 {
                        for k in -3i64..3 {
                            let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                            accs.push((tie / mult[0].max(1) as i64) as i32);
                        }
                    }
                    for a4 in accs.chunks(4).filter(|c| c.len() == 4) {
                        let acc: [i32; 4] = a4.try_into().unwrap();
                        let want: [i8; 4] =
                            core::array::from_fn(|l| q.finish(acc[l], mult[l], shift4[l]));
                        let got = rq.apply(bytemuck::cast(acc)).to_le_bytes().map(|b| b as i8);
                        assert_eq!(
                            got, want,
                            "acc {acc:?} mult {mult:?} shift {shift4:?} q {q:?}"
                        );
                    }
                }
            }
        }
        // Activation bounds outside int8 wrap in the scalar code: refused.
        let q = ConvQuant {
            input_offset: 0,
            output_offset: 0,
            act_min: -129,
            act_max: 127,
        };
        assert!(Rq4::new(&q, [1 << 30; 4], [-3; 4]).is_none());
    }
}
