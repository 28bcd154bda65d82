//! The pointwise layer with AVX2 (called after [`avx2::detected`]): per
//! group of eight output channels their weight rows widened once
//! ([`avx2::pack8`], 4 KiB of stack), then every pixel's row against them
//! ([`avx2::dot8`]: `VPMOVSXBW` once per sixteen inputs, eight `VPMADDWD`)
//! and one vector requantization per eight outputs ([`Rq8`]).

use super::super::super::common::{init, row, ConvOperands};
use super::super::super::isa::x86::avx2::{self, Rq8, PACK8_CHUNKS};
use super::super::super::isa::x86::MAX_LEN;
use super::super::super::BAD;
use crate::error::{KernelError, KernelResult};
use core::arch::x86_64::{__m256i, _mm256_add_epi32, _mm256_setzero_si256};

/// `None` (the SSE2 kernel runs) unless the output channels come in whole
/// groups of eight, every channel requantizes in vector form ([`Rq8`]) and
/// rows are at most [`MAX_LEN`] long.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(crate) fn pointwise(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (cin, cout) = (g.input.c, g.output.c);
    if cin == 0 || cin > MAX_LEN || cout == 0 || !cout.is_multiple_of(8) {
        return None;
    }
    let mut rqs = [None; MAX_LEN / 8];
    for (k, rq) in rqs.iter_mut().enumerate().take(cout / 8) {
        let (mult, shift) = (
            ops.mult.get(8 * k..8 * k + 8)?,
            ops.shift.get(8 * k..8 * k + 8)?,
        );
        *rq = Some(Rq8::new(q, mult.try_into().ok()?, shift.try_into().ok()?)?);
    }
    if cout > MAX_LEN {
        return None;
    }
    // Rows of one to four whole chunks run unrolled (and zero-fill only
    // the packed chunks they use).
    let z = _mm256_setzero_si256();
    Some(match (cin % 16, cin / 16) {
        (0, 1) => layer::<1>(ops, output, &rqs, &mut [[z; 8]; 1]),
        (0, 2) => layer::<2>(ops, output, &rqs, &mut [[z; 8]; 2]),
        (0, 3) => layer::<3>(ops, output, &rqs, &mut [[z; 8]; 3]),
        (0, 4) => layer::<4>(ops, output, &rqs, &mut [[z; 8]; 4]),
        _ => layer::<0>(ops, output, &rqs, &mut [[z; 8]; PACK8_CHUNKS]),
    })
}

#[target_feature(enable = "avx2")]
#[inline]
fn layer<const N: usize>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    rqs: &[Option<Rq8>],
    packed: &mut [[__m256i; 8]],
) -> KernelResult {
    let (g, q, filter) = (&ops.g, &ops.q, ops.filter);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    let input = ops.input.get(..pixels * cin).ok_or(BAD)?;
    let output = output.get_mut(..pixels * cout).ok_or(BAD)?;
    let packed = packed.get_mut(..cin.div_ceil(16)).ok_or(BAD)?;
    for (k, rq) in rqs.iter().enumerate().take(cout / 8) {
        let (oc, rq) = (8 * k, rq.as_ref().ok_or(BAD)?);
        let mut rows: [&[i8]; 8] = [&[]; 8];
        let mut init8 = [0i32; 8];
        for l in 0..8 {
            rows[l] = row(filter, (oc + l) * cin, cin)?;
            init8[l] = init(ops.bias, oc + l, q.input_offset, rows[l]);
        }
        avx2::pack8(rows, packed);
        let init8: __m256i = bytemuck::cast(init8);
        for (x, o) in input.chunks_exact(cin).zip(output.chunks_exact_mut(cout)) {
            let acc = _mm256_add_epi32(avx2::sums::<N>(x, packed).ok_or(BAD)?, init8);
            let dst: &mut [i8; 8] = o
                .get_mut(oc..oc + 8)
                .and_then(|d| d.try_into().ok())
                .ok_or(BAD)?;
            *dst = rq.out8(acc);
        }
    }
    Ok::<(), KernelError>(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::super::super::testutil::*;
    use super::super::super::super::ConvQuant;
    use super::super::super::{conv_with, CONV_SCRATCH_WORDS};
    use super::*;
    use crate::cortex_m::isa::Scalar;
    use std::{vec, vec::Vec};

    /// The AVX2 pointwise layer and the scalar loops on the same operands:
    /// every input width up to three vectors and beyond, channel counts
    /// in and out of whole groups of eight, extreme zero points and values,
    /// narrow activation ranges; it refuses exactly the layers it cannot
    /// run (channels not in groups of eight, a channel without a right
    /// shift or with a negative multiplier, bounds outside int8).
    #[test]
    fn avx2_pointwise_equals_scalar() {
        if !avx2::detected() {
            return;
        }
        let mut r = Rng(0xa286);
        let widths = (1..=49).chain([63, 64, 65, 127, 128, 200, 255, 256, 257]);
        let (mut ran, mut refused) = (0, 0);
        for cin in widths {
            for case in 0..7u64 {
                let cout = [8, 16, 64, 4, 9, 24, 8, 256][r.range(0, 7) as usize];
                let g = geometry(
                    (r.range(1, 5) as usize, r.range(1, 4) as usize, cin),
                    cout,
                    (1, 1),
                    (1, 1),
                    (0, 0),
                );
                let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][case as usize % 4];
                let zp_out = [-128, 127, r.range(-128, 127) as i32][r.range(0, 2) as usize];
                let q = ConvQuant {
                    input_offset: -zp_in,
                    output_offset: zp_out,
                    act_min: if case == 5 { zp_out.min(100) } else { -128 },
                    act_max: if case == 4 { zp_out.max(-100) } else { 127 },
                };
                let kind = r.next() % 4;
                let x = match kind {
                    0 => vec![-128; g.input.elements().unwrap()],
                    1 => vec![127; g.input.elements().unwrap()],
                    _ => r.i8s(g.input.elements().unwrap()),
                };
                let w = match (case + r.range(0, 1) as u64) % 4 {
                    0 => vec![-128; cout * cin],
                    1 => vec![127; cout * cin],
                    _ => r.i8s(cout * cin),
                };
                let (mut mult, mut shift, bias) = quant_params(&mut r, cout);
                for s in shift.iter_mut() {
                    *s = -(s.abs() + 1);
                }
                if case == 3 {
                    shift[cout - 1] = 0;
                } else if case == 6 {
                    mult[0] = -mult[0];
                }
                let eligible = cout.is_multiple_of(8) && cin <= MAX_LEN && case != 3 && case != 6;
                let ops = ConvOperands::new(g, q, &x, &w, Some(&bias), &mult, &shift);
                let mut want = vec![0i8; g.output.elements().unwrap()];
                let mut s = vec![0u64; CONV_SCRATCH_WORDS];
                conv_with::<Scalar>(
                    &g,
                    &q,
                    &x,
                    &w,
                    Some(&bias),
                    &mult,
                    &shift,
                    &mut want,
                    &mut s,
                )
                .unwrap();
                let mut got = vec![0i8; want.len()];
                // SAFETY: AVX2 detected above.
                match unsafe { pointwise(&ops, &mut got) } {
                    Some(done) => {
                        done.unwrap();
                        assert!(eligible, "cin {cin} cout {cout} case {case} ran");
                        assert_eq!(got, want, "cin {cin} cout {cout} case {case}");
                        ran += 1;
                    }
                    None => {
                        assert!(!eligible, "cin {cin} cout {cout} case {case} refused");
                        refused += 1;
                    }
                }
            }
        }
        assert!(ran > 100 && refused > 50, "ran {ran} refused {refused}");
    }

    /// A short output is an error, not a panic.
    #[test]
    fn avx2_pointwise_short_output_is_an_error() {
        if !avx2::detected() {
            return;
        }
        let mut r = Rng(8);
        let g = geometry((2, 2, 16), 8, (1, 1), (1, 1), (0, 0));
        let q = ConvQuant {
            input_offset: 0,
            output_offset: 0,
            act_min: -128,
            act_max: 127,
        };
        let (x, w) = (r.i8s(64), r.i8s(128));
        let (mult, _, bias): (Vec<i32>, _, _) = quant_params(&mut r, 8);
        let shift = vec![-3; 8];
        let ops = ConvOperands::new(g, q, &x, &w, Some(&bias), &mult, &shift);
        // SAFETY: AVX2 detected above.
        assert_eq!(unsafe { pointwise(&ops, &mut [0; 31]) }, Some(Err(BAD)));
    }
}
