//! AVX2 building blocks of the x86-64 layer kernels, for CPUs that run it
//! ([`detected`], once per process: CPUID and XCR0, as the C runtime's
//! `__builtin_cpu_supports` reads them). Every function here is
//! `target_feature(enable = "avx2")`; the layer kernels call into this code
//! only after [`detected`], and the SSE2 kernels stay the baseline.
//!
//! `VPMOVSXBW` widens sixteen int8 values to int16 in one instruction and
//! `VPMADDWD` adds sixteen products into eight int32 lanes (exact as in
//! [`super`]); `VPHADDD` sums the lanes of eight accumulators into one
//! vector ([`hsum8`]), and `VPSRLVQ` shifts every 64-bit lane by its own
//! count, so the requantization of eight channels ([`Rq8`]) is fifteen
//! instructions.

use super::MAX_LEN;
use crate::cortex_m::ConvQuant;
use core::arch::x86_64::{self as arch, __m128i, __m256i};
use core::sync::atomic::{AtomicU8, Ordering};

/// Whether this CPU and its operating system run AVX2: CPUID leaf 1 (AVX,
/// OSXSAVE), XCR0 (the OS saves the YMM registers), CPUID leaf 7 (AVX2).
/// Detected on the first call, then cached.
pub(crate) fn detected() -> bool {
    static STATE: AtomicU8 = AtomicU8::new(0);
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let yes = detect();
            STATE.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
    }
}

fn detect() -> bool {
    if arch::__cpuid(0).eax < 7 {
        return false;
    }
    let ecx = arch::__cpuid(1).ecx;
    let (osxsave, avx) = (ecx & (1 << 27) != 0, ecx & (1 << 28) != 0);
    if !(osxsave && avx) {
        return false;
    }
    // SAFETY: `XGETBV` needs XSAVE enabled by the operating system, which
    // CPUID's OSXSAVE bit (checked above) reports.
    let xcr0 = unsafe { xgetbv0() };
    xcr0 & 0b110 == 0b110 && arch::__cpuid_count(7, 0).ebx & (1 << 5) != 0
}

#[target_feature(enable = "xsave")]
fn xgetbv0() -> u64 {
    // SAFETY: see `detect`, the only caller.
    unsafe { arch::_xgetbv(0) }
}

/// Sixteen int8 values widened to int16 lanes (`VPMOVSXBW`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn widen16(v: &[i8; 16]) -> __m256i {
    arch::_mm256_cvtepi8_epi16(bytemuck::cast(*v))
}

/// `[Σ a0, …, Σ a7]`, each over its eight lanes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn hsum8(a: &[__m256i; 8]) -> __m256i {
    use arch::{_mm256_add_epi32 as add, _mm256_hadd_epi32 as hadd};
    // [a0 lanes 0..4 summed, a1, a2, a3 | the same of lanes 4..8].
    let lo = hadd(hadd(a[0], a[1]), hadd(a[2], a[3]));
    let hi = hadd(hadd(a[4], a[5]), hadd(a[6], a[7]));
    add(
        arch::_mm256_permute2x128_si256::<0x20>(lo, hi),
        arch::_mm256_permute2x128_si256::<0x31>(lo, hi),
    )
}

/// Packs eight int8 rows as int16 for [`dot8`]: chunk `k` of 16 values of
/// row `r` at `[k][r]`; values past a row's end are 0. Fills `packed`.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn pack8(rows: [&[i8]; 8], packed: &mut [[__m256i; 8]]) {
    for (k, out) in packed.iter_mut().enumerate() {
        for (d, row) in out.iter_mut().zip(rows) {
            let mut v = [0i8; 16];
            for (d, &s) in v.iter_mut().zip(row.iter().skip(16 * k)) {
                *d = s;
            }
            *d = widen16(&v);
        }
    }
}

/// `[Σ x·w_r]` for the eight rows [`pack8`] packed, over `x` (whole chunks
/// of 16, then the tail zero-filled); chunks past `packed` add nothing.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn dot8(x: &[i8], packed: &[[__m256i; 8]]) -> __m256i {
    use arch::{_mm256_add_epi32 as add, _mm256_madd_epi16 as madd};
    let mut a = [arch::_mm256_setzero_si256(); 8];
    let (xb, tail) = x.as_chunks::<16>();
    for (v, w) in xb.iter().zip(packed) {
        let v = widen16(v);
        for r in 0..8 {
            a[r] = add(a[r], madd(v, w[r]));
        }
    }
    if let (false, Some(w)) = (tail.is_empty(), packed.get(xb.len())) {
        let mut v = [0i8; 16];
        for (d, &s) in v.iter_mut().zip(tail) {
            *d = s;
        }
        let v = widen16(&v);
        for r in 0..8 {
            a[r] = add(a[r], madd(v, w[r]));
        }
    }
    hsum8(&a)
}

/// [`dot8`] over exactly `N ≥ 1` whole chunks, unrolled: the first chunk's
/// products start the sums.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn dot8_n<const N: usize>(x: &[[i8; 16]; N], packed: &[[__m256i; 8]; N]) -> __m256i {
    use arch::{_mm256_add_epi32 as add, _mm256_madd_epi16 as madd};
    let mut a = [arch::_mm256_setzero_si256(); 8];
    for (k, (v, w)) in x.iter().zip(packed).enumerate() {
        let v = widen16(v);
        for r in 0..8 {
            a[r] = if k == 0 {
                madd(v, w[r])
            } else {
                add(a[r], madd(v, w[r]))
            };
        }
    }
    hsum8(&a)
}

/// Eight sums of `x` against the eight rows packed in `packed`: over
/// exactly `N` chunks ([`dot8_n`]; `None` for another length of `x`) for
/// `N ≥ 1`, else any length ([`dot8`]).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) fn sums<const N: usize>(x: &[i8], packed: &[[__m256i; 8]]) -> Option<__m256i> {
    if N == 0 {
        return Some(dot8(x, packed));
    }
    if x.len() != 16 * N {
        return None;
    }
    let xs = <&[[i8; 16]; N]>::try_from(x.as_chunks::<16>().0).ok()?;
    let ps = <&[[__m256i; 8]; N]>::try_from(packed.get(..N)?).ok()?;
    Some(dot8_n(xs, ps))
}

/// Most chunks of 16 values [`pack8`] packs per row.
pub(crate) const PACK8_CHUNKS: usize = MAX_LEN / 16;

/// The requantization of eight output channels in vector form, the same
/// arithmetic as [`super::Rq4`] (non-negative multipliers, right shifts
/// `r ≥ 1`, int8 activation bounds): `P = acc·mult + k − [acc<0]·2^31`
/// with `k = 2^30 + 2^(30+r) + 2^63` (signed products, `VPMULDQ`), then a
/// logical shift by `s = 31 + r` per lane (`VPSRLVQ`) whose excess
/// `2^(63−s)` the bias takes back with the output offset. Odd lanes shift
/// by `s − 32` instead, which leaves their result in the high half of
/// their 64-bit lane, where a blend picks it.
#[derive(Clone, Copy)]
pub(crate) struct Rq8 {
    /// Multipliers of lanes 0, 2, 4, 6 and of 1, 3, 5, 7 (low halves of
    /// 64-bit lanes).
    mult_even: __m256i,
    mult_odd: __m256i,
    k_even: __m256i,
    k_odd: __m256i,
    shift_even: __m256i,
    shift_odd: __m256i,
    /// `output_offset − 2^(63−s)` per lane.
    bias: __m256i,
    act_min: __m256i,
    act_max: __m256i,
}

impl Rq8 {
    /// The vector form of eight channels' `(mult, shift)`, or `None` unless
    /// every one has a non-negative multiplier and a right shift and the
    /// activation bounds are int8 values.
    #[inline]
    pub(crate) fn new(q: &ConvQuant, mult: [i32; 8], shift: [i32; 8]) -> Option<Self> {
        let int8 = -128..=127;
        if !int8.contains(&q.act_min) || !int8.contains(&q.act_max) {
            return None;
        }
        let (mut k, mut s, mut bias) = ([0u64; 8], [0u64; 8], [0i32; 8]);
        for l in 0..8 {
            let right = if shift[l] > 0 {
                0
            } else {
                (shift[l].wrapping_neg() as u32).min(31)
            };
            if right == 0 || mult[l] < 0 {
                return None;
            }
            let sl = 31 + right as u64;
            s[l] = if l.is_multiple_of(2) { sl } else { sl - 32 };
            k[l] = ((1u64 << 30) + (1u64 << (30 + right))).wrapping_add(1 << 63);
            bias[l] = q.output_offset.wrapping_sub(1 << (63 - sl));
        }
        let m = mult.map(|m| m as u32 as u64);
        let even = |v: [u64; 8]| bytemuck::cast([v[0], v[2], v[4], v[6]]);
        let odd = |v: [u64; 8]| bytemuck::cast([v[1], v[3], v[5], v[7]]);
        let i16s = |v: i32| bytemuck::cast([v as i16; 16]);
        Some(Rq8 {
            mult_even: even(m),
            mult_odd: odd(m),
            k_even: even(k),
            k_odd: odd(k),
            shift_even: even(s),
            shift_odd: odd(s),
            bias: bytemuck::cast(bias),
            act_min: i16s(q.act_min),
            act_max: i16s(q.act_max),
        })
    }

    /// Requantized and offset, before the clamp: eight int32 lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn offset(&self, acc: __m256i) -> __m256i {
        use arch::{_mm256_add_epi64 as add64, _mm256_and_si256 as and};
        use arch::{_mm256_mul_epi32 as mul, _mm256_sub_epi64 as sub64};
        let half = arch::_mm256_set1_epi64x(1 << 31);
        let neg = arch::_mm256_srai_epi32::<31>(acc);
        let even = add64(mul(acc, self.mult_even), self.k_even);
        let even = sub64(even, and(neg, half));
        let even = arch::_mm256_srlv_epi64(even, self.shift_even);
        let odd = arch::_mm256_srli_epi64::<32>(acc);
        let odd = add64(mul(odd, self.mult_odd), self.k_odd);
        let odd = sub64(odd, and(arch::_mm256_srli_epi64::<32>(neg), half));
        let odd = arch::_mm256_srlv_epi64(odd, self.shift_odd);
        let v = arch::_mm256_blend_epi32::<0b1010_1010>(even, odd);
        arch::_mm256_add_epi32(v, self.bias)
    }

    /// Eight outputs: [`Rq8::offset`] saturated to int16, clamped to the
    /// activation range and saturated to int8.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn out8(&self, acc: __m256i) -> [i8; 8] {
        let v = self.offset(acc);
        let (lo, hi) = (
            arch::_mm256_castsi256_si128(v),
            arch::_mm256_extracti128_si256::<1>(v),
        );
        let v = arch::_mm_packs_epi32(lo, hi);
        let v = arch::_mm_max_epi16(v, arch::_mm256_castsi256_si128(self.act_min));
        let v = arch::_mm_min_epi16(v, arch::_mm256_castsi256_si128(self.act_max));
        let [lo, _]: [[i8; 8]; 2] = bytemuck::cast(arch::_mm_packs_epi16(v, v));
        lo
    }

    /// Sixteen outputs: channels 0..8 requantized by `self`, 8..16 by `hi`
    /// (the same activation range).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) fn out16(&self, hi: &Rq8, a: __m256i, b: __m256i) -> [i8; 16] {
        let (a, b) = (self.offset(a), hi.offset(b));
        // [a 0..4, b 0..4 | a 4..8, b 4..8] as int16, quads reordered.
        let v = arch::_mm256_packs_epi32(a, b);
        let v = arch::_mm256_permute4x64_epi64::<0b11_01_10_00>(v);
        let v = arch::_mm256_max_epi16(v, self.act_min);
        let v = arch::_mm256_min_epi16(v, self.act_max);
        let lo: __m128i = arch::_mm256_castsi256_si128(v);
        let hi: __m128i = arch::_mm256_extracti128_si256::<1>(v);
        bytemuck::cast(arch::_mm_packs_epi16(lo, hi))
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cortex_m::testutil::Rng;
    use std::vec::Vec;

    #[test]
    fn detection_agrees_with_std() {
        assert_eq!(detected(), std::is_x86_feature_detected!("avx2"));
        // Cached: the same answer again.
        assert_eq!(detected(), std::is_x86_feature_detected!("avx2"));
    }

    /// [`dot8`] and [`dot8_n`] (after [`pack8`]) equal plain sums for every row length up
    /// to [`MAX_LEN`], at the int8 extremes too.
    #[test]
    fn avx2_dot8_equals_plain_sums() {
        if !detected() {
            return;
        }
        let mut r = Rng(0xa2);
        let mut packed: [[__m256i; 8]; PACK8_CHUNKS] = bytemuck::Zeroable::zeroed();
        for len in 0..=MAX_LEN {
            for fill in [None, Some(-128i8), Some(127)] {
                let row = |r: &mut Rng| -> Vec<i8> {
                    (0..len)
                        .map(|_| fill.unwrap_or_else(|| r.next() as i8))
                        .collect()
                };
                let x = row(&mut r);
                let w: [Vec<i8>; 8] = core::array::from_fn(|k| match k {
                    7 => (0..len).map(|_| -128).collect(),
                    _ => row(&mut r),
                });
                let p = &mut packed[..len.div_ceil(16)];
                // SAFETY: AVX2 detected above.
                let got: [i32; 8] = unsafe {
                    pack8(w.each_ref().map(|w| &w[..]), p);
                    bytemuck::cast(dot8(&x, p))
                };
                let want = w.each_ref().map(|w| {
                    x.iter()
                        .zip(w)
                        .map(|(&a, &b)| a as i32 * b as i32)
                        .sum::<i32>()
                });
                assert_eq!(got, want, "len {len} fill {fill:?}");
                if len.is_multiple_of(16) && (1..=4).contains(&(len / 16)) {
                    let xs = x.as_chunks::<16>().0;
                    // SAFETY: AVX2 detected above.
                    let unrolled: [i32; 8] = unsafe {
                        bytemuck::cast(match len / 16 {
                            1 => dot8_n::<1>(xs.try_into().unwrap(), (&*p).try_into().unwrap()),
                            2 => dot8_n::<2>(xs.try_into().unwrap(), (&*p).try_into().unwrap()),
                            3 => dot8_n::<3>(xs.try_into().unwrap(), (&*p).try_into().unwrap()),
                            _ => dot8_n::<4>(xs.try_into().unwrap(), (&*p).try_into().unwrap()),
                        })
                    };
                    assert_eq!(unrolled, want, "len {len} fill {fill:?} unrolled");
                }
            }
        }
    }

    /// [`Rq8`] against [`ConvQuant::finish`], as `rq4_equals_scalar_requantization`
    /// checks [`super::super::Rq4`]: every right shift, extreme multipliers,
    /// accumulators, offsets and activation ranges; refused exactly where
    /// a multiplier is negative or a shift is not a right shift.
    #[test]
    fn rq8_equals_scalar_requantization() {
        if !detected() {
            return;
        }
        let mut r = Rng(0x8a8);
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
            let mut mults = std::vec![0, 1, i32::MAX, 1 << 30, -1, i32::MIN, 5, 1 << 20];
            mults.extend((0..12).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
            mults.extend((0..4).map(|_| r.next() as i32));
            for m8 in mults.chunks_exact(8) {
                let mult: [i32; 8] = m8.try_into().unwrap();
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
                    let s2 = shift.saturating_add(1).clamp(-31, 0);
                    let shift8 = [shift, -1, s2, shift, -31, shift, s2, -2];
                    let ok = (0..8).all(|l| mult[l] >= 0 && shift8[l] < 0);
                    let Some(rq) = Rq8::new(&q, mult, shift8) else {
                        assert!(!ok, "mult {mult:?} shift {shift8:?} refused");
                        continue;
                    };
                    assert!(ok, "mult {mult:?} shift {shift8:?} admitted");
                    let mut accs: Vec<i32> = special.to_vec();
                    accs.extend((0..80).map(|_| r.next() as i32));
                    accs.extend((0..80).map(|_| r.range(-100_000, 100_000) as i32));
                    let rsh = (-(shift as i64)).clamp(0, 31) as u32;
                    if rsh > 0 {
                        for k in -3i64..3 {
                            let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                            accs.push((tie / mult[0].max(1) as i64) as i32);
                        }
                    }
                    accs.rotate_left(3);
                    for a16 in accs.chunks_exact(16) {
                        let acc: [i32; 16] = a16.try_into().unwrap();
                        let want: [i8; 16] =
                            core::array::from_fn(|l| q.finish(acc[l], mult[l % 8], shift8[l % 8]));
                        let (a, b): ([i32; 8], [i32; 8]) =
                            (acc[..8].try_into().unwrap(), acc[8..].try_into().unwrap());
                        // SAFETY: AVX2 detected above.
                        let (got8, got16) = unsafe {
                            (
                                rq.out8(bytemuck::cast(a)),
                                rq.out16(&rq, bytemuck::cast(a), bytemuck::cast(b)),
                            )
                        };
                        assert_eq!(
                            got8[..],
                            want[..8],
                            "acc {acc:?} mult {mult:?} shift {shift8:?} q {q:?}"
                        );
                        assert_eq!(
                            got16, want,
                            "acc {acc:?} mult {mult:?} shift {shift8:?} q {q:?}"
                        );
                    }
                }
            }
        }
        let q = ConvQuant {
            input_offset: 0,
            output_offset: 0,
            act_min: -129,
            act_max: 127,
        };
        assert!(Rq8::new(&q, [1 << 30; 8], [-3; 8]).is_none());
    }
}
