//! `arm_fully_connected_s8` against one reference (plain i64 sums), every
//! implementation, both encodings.

extern crate std;
#[cfg(not(feature = "dsp"))]
use super::super::isa::Dsp;
#[cfg(feature = "dsp")]
use super::super::isa::Scalar;
use super::super::testutil::*;
use super::*;
use crate::error::KernelError;
use std::{vec, vec::Vec};

/// The implementation the build does not select.
#[cfg(feature = "dsp")]
type Other = Scalar;
#[cfg(not(feature = "dsp"))]
type Other = Dsp;

/// The layer through `M` with a whole scratch, checked against the same
/// layer with none (the generic loop).
#[allow(clippy::too_many_arguments)]
fn run<M: ConvMac>(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    x: &[i8],
    w: &[i8],
    outf: usize,
    mult: i32,
    shift: i32,
    out: &mut [i8],
) -> KernelResult {
    let p = FcParams {
        q: *q,
        filter_offset,
        encoding,
        mult,
        shift,
    };
    let mut scratch = vec![0u64; FC_MAX_IN_FEATURES / 4];
    let mut generic = vec![0i8; out.len()];
    let plain = fully_connected_with::<M>(&p, x, w, outf, &mut generic, &mut []);
    let done = fully_connected_with::<M>(&p, x, w, outf, out, &mut scratch);
    assert_eq!(done, plain, "with and without scratch");
    assert_eq!(out, &generic[..], "with and without scratch");
    done
}

#[test]
fn fully_connected_encodings_agree_with_reference() {
    let mut r = Rng(0xfc);
    for _ in 0..CASES {
        let (batches, inf, outf) = (
            r.range(1, 3) as usize,
            r.range(1, 40) as usize,
            r.range(1, 12) as usize,
        );
        let zp_in = [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32;
        let q = ConvQuant {
            input_offset: -zp_in,
            output_offset: r.range(-128, 127) as i32,
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(batches * inf);
        let w = r.i8s(outf * inf);
        let (mult, shift) = (
            r.range(1 << 30, i32::MAX as i64) as i32,
            r.range(-12, 1) as i32,
        );
        let bias: Vec<i32> = (0..outf).map(|_| r.range(-40_000, 40_000) as i32).collect();
        // The MVE export's precomputed term.
        let kernel_sum: Vec<i32> = (0..outf)
            .map(|o| {
                bias[o]
                    + q.input_offset
                        * w[o * inf..(o + 1) * inf]
                            .iter()
                            .map(|&v| v as i32)
                            .sum::<i32>()
            })
            .collect();
        let mut dsp = vec![0i8; batches * outf];
        let mut mve = vec![0i8; batches * outf];
        run::<Active>(
            &q,
            0,
            FcEncoding::Bias(Some(&bias)),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut dsp,
        )
        .unwrap();
        run::<Active>(
            &q,
            0,
            FcEncoding::KernelSum(&kernel_sum),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut mve,
        )
        .unwrap();
        assert_eq!(dsp, mve, "both encodings give the same result");
        let mut other = vec![0i8; batches * outf];
        run::<Other>(
            &q,
            0,
            FcEncoding::Bias(Some(&bias)),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut other,
        )
        .unwrap();
        assert_eq!(dsp, other, "scalar and dsp fully connected agree");
        for b in 0..batches {
            for o in 0..outf {
                let acc: i64 = bias[o] as i64
                    + (0..inf)
                        .map(|j| {
                            (x[b * inf + j] as i64 + q.input_offset as i64) * w[o * inf + j] as i64
                        })
                        .sum::<i64>();
                let want = clamp8(
                    ref_requantize(acc as i32, mult, shift) + q.output_offset as i64,
                    -128,
                    127,
                );
                assert_eq!(dsp[b * outf + o], want);
            }
        }
    }
}

/// Helium's kernel-sum passes and the DSP input-offset loop (the
/// autoencoder's shapes among others) against plain i64 sums.
#[test]
fn fc_layers_match_reference() {
    use super::super::isa::{Dsp, Mve, Scalar};
    let mut r = Rng(0xfc4);
    for (batches, inf, outf) in [
        (1, 640, 128),
        (1, 644, 5),
        (2, 13, 7),
        (1, 128, 8),
        (1, 8, 128),
        (2, 37, 12),
        (1, 5, 4),
        (3, 16, 6),
        (3, 16, 8),
        // Classifier heads: ResNet-8's 64->10, MobileNet's 256->2,
        // and one to three rows past the quads.
        (1, 64, 10),
        (1, 256, 2),
        (2, 4, 1),
        (1, 640, 3),
        (2, 12, 9),
    ] {
        for round in 0..6 {
            let q = ConvQuant {
                input_offset: [128, -127, 0, r.range(-127, 128) as i32, 300, -32_640][round],
                output_offset: r.range(-128, 127) as i32,
                act_min: [-128, -7][round % 2],
                act_max: 127,
            };
            let x = r.i8s(batches * inf);
            let w = r.i8s(outf * inf);
            let (mult, shift) = (
                r.range(1 << 30, i32::MAX as i64) as i32,
                [-9, 0, -1, 1, -31, -20][round],
            );
            let bias: Vec<i32> = (0..outf).map(|_| r.range(-40_000, 40_000) as i32).collect();
            let ks: Vec<i32> = (0..outf)
                .map(|o| {
                    bias[o].wrapping_add(
                        q.input_offset.wrapping_mul(
                            w[o * inf..(o + 1) * inf]
                                .iter()
                                .map(|&v| v as i32)
                                .sum::<i32>(),
                        ),
                    )
                })
                .collect();
            let mut want = vec![0i8; batches * outf];
            for b in 0..batches {
                for o in 0..outf {
                    let acc: i64 = bias[o] as i64
                        + (0..inf)
                            .map(|j| {
                                (x[b * inf + j] as i64 + q.input_offset as i64)
                                    * w[o * inf + j] as i64
                            })
                            .sum::<i64>();
                    want[b * outf + o] = clamp8(
                        ref_requantize(acc as i32, mult, shift) + q.output_offset as i64,
                        q.act_min,
                        q.act_max,
                    );
                }
            }
            for enc in [FcEncoding::Bias(Some(&bias)), FcEncoding::KernelSum(&ks)] {
                let mut got = vec![0i8; batches * outf];
                run::<Mve>(&q, 0, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
                assert_eq!(got, want, "mve {batches}x{inf}->{outf} round {round}");
                run::<Dsp>(&q, 0, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
                assert_eq!(got, want, "dsp {batches}x{inf}->{outf} round {round}");
                run::<Scalar>(&q, 0, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
                assert_eq!(got, want, "scalar {batches}x{inf}->{outf} round {round}");
            }
        }
    }
}

#[test]
fn mismatched_fc_lengths_are_errors_not_panics() {
    let q = ConvQuant {
        input_offset: 0,
        output_offset: 0,
        act_min: -128,
        act_max: 127,
    };
    let e = run::<Active>(
        &q,
        0,
        FcEncoding::Bias(None),
        &[0; 10],
        &[0; 7],
        3,
        1,
        0,
        &mut [0; 3],
    );
    assert_eq!(e, Err(KernelError::InvalidArgument));
}

/// A non-zero `filter_offset` (the fast loop plus `filter_offset·Σ(x +
/// input_offset)` per row) against plain i64 sums of both encodings'
/// definitions, on both multiply-accumulate implementations.
#[test]
fn filter_offset_matches_reference() {
    let mut r = Rng(0xf0);
    for _ in 0..CASES {
        let (batches, inf, outf) = (
            r.range(1, 3) as usize,
            r.range(1, 40) as usize,
            r.range(1, 12) as usize,
        );
        let fo = [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32;
        let q = ConvQuant {
            input_offset: -(r.range(-128, 127) as i32),
            output_offset: r.range(-128, 127) as i32,
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(batches * inf);
        let w = r.i8s(outf * inf);
        let (mult, shift) = (
            r.range(1 << 30, i32::MAX as i64) as i32,
            r.range(-12, 1) as i32,
        );
        let k: Vec<i32> = (0..outf).map(|_| r.range(-40_000, 40_000) as i32).collect();
        for (enc, io) in [
            (FcEncoding::Bias(Some(&k)), q.input_offset as i64),
            (FcEncoding::KernelSum(&k), 0),
        ] {
            let mut want = vec![0i8; batches * outf];
            for b in 0..batches {
                for o in 0..outf {
                    let acc: i64 = k[o] as i64
                        + (0..inf)
                            .map(|j| {
                                (x[b * inf + j] as i64 + io) * (w[o * inf + j] as i64 + fo as i64)
                            })
                            .sum::<i64>();
                    want[b * outf + o] = clamp8(
                        ref_requantize(acc as i32, mult, shift) + q.output_offset as i64,
                        -128,
                        127,
                    );
                }
            }
            let mut got = vec![0i8; batches * outf];
            run::<Active>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
            assert_eq!(got, want, "fo {fo}");
            run::<Other>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
            assert_eq!(got, want, "other fo {fo}");
        }
    }
}
