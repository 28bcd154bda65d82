//! `arm_fully_connected_s8` (`cortex_m::quantized_linear`): a matrix-vector
//! product on the convolution's building blocks ([`ConvMac::dot_1x2`]), in
//! both encodings of its constant term.

use super::common::{init, put, row, runs, runs_mut, wsum};
use super::conv::ConvMac;
#[allow(unused_imports)]
use super::isa::dsp::{pack16, smlad, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word};
use super::requant::Requant;
use super::{Active, ConvQuant, BAD};
use crate::error::KernelResult;

/// How `arm_fully_connected_s8` gets its per-output constant term: the
/// DSP/scalar builds read `bias` and add `input_offset` to every input; the
/// MVE build reads a precomputed `kernel_sum = input_offset·Σw + bias` and
/// multiplies raw inputs. Both give the same integers.
#[derive(Clone, Copy, Debug)]
pub enum FcEncoding<'a> {
    Bias(Option<&'a [i32]>),
    KernelSum(&'a [i32]),
}

/// `arm_fully_connected_s8`, per-tensor quantization: `input [batches, in]`,
/// `weights [out, in]`, `output [batches, out]`.
#[allow(clippy::too_many_arguments)]
pub fn fully_connected_s8(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> KernelResult {
    fully_connected_with::<Active>(
        q,
        filter_offset,
        encoding,
        input,
        weights,
        out_features,
        mult,
        shift,
        output,
    )
}

#[allow(clippy::too_many_arguments)]
fn fully_connected_with<M: ConvMac>(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> KernelResult {
    let in_features = weights.len().checked_div(out_features).unwrap_or(0);
    let batches = input.len().checked_div(in_features).unwrap_or(0);
    let const_len = match encoding {
        FcEncoding::Bias(Some(b)) => b.len(),
        FcEncoding::Bias(None) => out_features,
        FcEncoding::KernelSum(k) => k.len(),
    };
    if in_features == 0
        || in_features * out_features != weights.len()
        || batches * in_features != input.len()
        || output.len() != batches * out_features
        || const_len != out_features
    {
        return Err(BAD);
    }
    fully_connected::<M>(
        q,
        filter_offset,
        encoding,
        input,
        weights,
        in_features,
        out_features,
        mult,
        shift,
        output,
    )
}

/// `arm_fully_connected_s8` with `filter_offset = 0` (what the exporter
/// writes: symmetric weights): two outputs per pass. Any other
/// `filter_offset` adds `filter_offset·Σ(x + input_offset)` per batch row
/// (`filter_offset·Σx` with `kernel_sum`): equal modulo 2^32 to summing
/// `(x + input_offset)·(w + filter_offset)`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fully_connected<M: ConvMac>(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    in_features: usize,
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> KernelResult {
    let batches = input.len().checked_div(in_features).unwrap_or(0);
    if filter_offset == 0 {
        if let Some(done) = M::fc_layer(
            q,
            encoding,
            input,
            weights,
            in_features,
            out_features,
            mult,
            shift,
            output,
        ) {
            return done;
        }
    }
    let r = Requant::new(mult, shift);
    let constant = |o: usize, w: &[i8]| match encoding {
        FcEncoding::KernelSum(k) => k.get(o).copied().unwrap_or(0),
        FcEncoding::Bias(b) => init(b, o, q.input_offset, w),
    };
    let mut o = 0;
    while o < out_features {
        let o1 = if o + 1 < out_features { o + 1 } else { o };
        let (w0, w1) = (
            row(weights, o * in_features, in_features)?,
            row(weights, o1 * in_features, in_features)?,
        );
        let (k0, k1) = (constant(o, w0), constant(o1, w1));
        for b in 0..batches {
            let x = row(input, b * in_features, in_features)?;
            let [a0, a1] = M::dot_1x2(x, w0, w1);
            let (a0, a1) = if filter_offset == 0 {
                (a0, a1)
            } else {
                let sx = match encoding {
                    FcEncoding::KernelSum(_) => wsum(x),
                    FcEncoding::Bias(_) => {
                        wsum(x).wrapping_add(q.input_offset.wrapping_mul(in_features as i32))
                    }
                };
                let e = filter_offset.wrapping_mul(sx);
                (a0.wrapping_add(e), a1.wrapping_add(e))
            };
            put(output, b * out_features + o, q.out(k0.wrapping_add(a0), &r))?;
            if o1 != o {
                put(
                    output,
                    b * out_features + o1,
                    q.out(k1.wrapping_add(a1), &r),
                )?;
            }
        }
        o += 2;
    }
    Ok(())
}

/// The bias encoding with `filter_offset = 0` where the input offset can
/// ride in the multiply-accumulate loop ([`dot_1x2_offset`]: `x + offset`
/// as int16 lanes, `offset` within ±32,640): `acc = bias + Σ (x +
/// input_offset)·w`, CMSIS-NN's own sum, with no weight sums. `None`
/// otherwise.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn fc_input_offset(
    q: &ConvQuant,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    in_features: usize,
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> Option<KernelResult> {
    let FcEncoding::Bias(bias) = encoding else {
        return None;
    };
    if !(-32_640..=32_640).contains(&q.input_offset) {
        return None;
    }
    let off = q.input_offset;
    let r = Requant::new(mult, shift);
    if in_features == 0 || out_features == 0 || bias.is_some_and(|b| b.len() != out_features) {
        return None;
    }
    let finish = |acc: i32| {
        let v = r.apply(acc).wrapping_add(q.output_offset);
        v.max(q.act_min).min(q.act_max) as i8
    };
    let bias_at = |o: usize| bias.and_then(|b| b.get(o).copied()).unwrap_or(0);
    // Rows in pairs, the pair's outputs written through zipped slices (no
    // index checks per output); an odd last row paired with itself.
    // The input and output rows through `runs`: a zip of two `chunks_exact`
    // calls an out-of-line `Zip::size` that divides by a length the compiler
    // cannot prove non-zero (it linked `panic_const_div_by_zero`).
    let pair_len = in_features.checked_mul(2)?;
    let pairs = weights.chunks_exact(pair_len);
    let last = pairs.remainder();
    Some((|| {
        for (x, out) in runs(input, in_features).zip(runs_mut(output, out_features)) {
            let (outs, out_last) = out.as_chunks_mut::<2>();
            // With Helium, by reference: not the `Zip::size` specialisation,
            // which divides by the chunk length out of line and linked
            // `panic_const_div_by_zero` at opt-level z on Cortex-M55. Elsewhere
            // the specialisation stays: by reference cost the M4 autoencoder
            // 26,702 instructions per inference (592,705 -> 619,407).
            #[cfg(feature = "mve")]
            let mut each = pairs.clone();
            #[cfg(feature = "mve")]
            let rows = (&mut each).zip(outs.iter_mut());
            #[cfg(not(feature = "mve"))]
            let rows = pairs.clone().zip(outs.iter_mut());
            for (o, (w, d)) in rows.enumerate() {
                let (w0, w1) = w.split_at_checked(in_features).ok_or(BAD)?;
                let [a0, a1] = dot_1x2_offset(x, w0, w1, off);
                *d = [
                    finish(bias_at(2 * o).wrapping_add(a0)),
                    finish(bias_at(2 * o + 1).wrapping_add(a1)),
                ];
            }
            if let Some(d) = out_last.first_mut() {
                let [a, _] = dot_1x2_offset(x, last, last, off);
                *d = finish(bias_at(out_features - 1).wrapping_add(a));
            }
        }
        Ok(())
    })())
}

/// `[Σ (x + off)·w0, Σ (x + off)·w1]` over the common length, `off`
/// within ±32,640 (so that `x + off` is an int16 lane): per four inputs one
/// word, two `SXTAB16` (the offset added to the sign-extended bytes), and
/// per weight row one word, two `SXTB16` and two `SMLAD`.
#[inline(always)]
pub(crate) fn dot_1x2_offset(x: &[i8], w0: &[i8], w1: &[i8], off: i32) -> [i32; 2] {
    let n = x.len().min(w0.len()).min(w1.len());
    let groups = n / 4;
    let offs = pack16(off, off);
    let [mut a, mut b] = dot_1x2_offset_groups(x, w0, w1, offs, groups);
    for k in 4 * groups..n {
        let (Some(&xv), Some(&v0), Some(&v1)) = (x.get(k), w0.get(k), w1.get(k)) else {
            break;
        };
        let xv = (xv as i32).wrapping_add(off);
        a = a.wrapping_add(xv.wrapping_mul(v0 as i32));
        b = b.wrapping_add(xv.wrapping_mul(v1 as i32));
    }
    [a, b]
}

/// [`dot_1x2_offset`]'s whole groups of four: the portable spelling (host
/// tests; the DSP instructions emulated).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn dot_1x2_offset_groups(x: &[i8], w0: &[i8], w1: &[i8], offs: u32, groups: usize) -> [i32; 2] {
    let (mut a, mut b) = (0i32, 0i32);
    let ((xc, _), (w0c, _), (w1c, _)) =
        (x.as_chunks::<4>(), w0.as_chunks::<4>(), w1.as_chunks::<4>());
    for ((xw, w0w), w1w) in xc.iter().zip(w0c).zip(w1c).take(groups) {
        let xw = word(xw);
        let (xo, xe) = (sxtab16_ror8(offs, xw), sxtab16(offs, xw));
        let w = word(w0w);
        a = smlad(xe, sxtb16(w), a);
        a = smlad(xo, sxtb16_ror8(w), a);
        let w = word(w1w);
        b = smlad(xe, sxtb16(w), b);
        b = smlad(xo, sxtb16_ror8(w), b);
    }
    [a, b]
}

/// [`dot_1x2_offset`]'s whole groups of four on Arm with DSP: one `asm!`
/// loop, two groups per pass (28 instructions per 16 MACs).
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(never)]
fn dot_1x2_offset_groups(x: &[i8], w0: &[i8], w1: &[i8], offs: u32, groups: usize) -> [i32; 2] {
    let (mut a, mut b) = (0i32, 0i32);
    if groups == 0 || groups.saturating_mul(4) > x.len().min(w0.len()).min(w1.len()) {
        return [a, b];
    }
    // SAFETY: `groups ≥ 1` group bodies run in all (one, then pairs); each
    // reads one word at each of `xp`, `w0p`, `w1p` (each advanced by 4);
    // `4·groups` is at most every slice's length (checked above), so every
    // read is inside `x`, `w0` and `w1`. Unaligned `ldr` is allowed on
    // Armv7E-M and Armv8-M Mainline. Registers only otherwise; flags (and the sticky Q bit
    // SMLAD may set) are clobbered, which `asm!` assumes without
    // `preserves_flags`.
    unsafe {
        core::arch::asm!(
            // One group when the count is odd, then two per pass.
            "tst {n}, #1",
            "beq 2f",
            "ldr {xw}, [{xp}], #4",
            "sxtab16 {xo}, {offs}, {xw}, ror #8",
            "sxtab16 {xw}, {offs}, {xw}",
            "ldr {w}, [{w0p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {a}, {xw}, {t}, {a}",
            "smlad {a}, {xo}, {w}, {a}",
            "ldr {w}, [{w1p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {b}, {xw}, {t}, {b}",
            "smlad {b}, {xo}, {w}, {b}",
            "2:",
            "lsrs {n}, {n}, #1",
            "beq 4f",
            "3:",
            "ldr {xw}, [{xp}], #4",
            "sxtab16 {xo}, {offs}, {xw}, ror #8",
            "sxtab16 {xw}, {offs}, {xw}",
            "ldr {w}, [{w0p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {a}, {xw}, {t}, {a}",
            "smlad {a}, {xo}, {w}, {a}",
            "ldr {w}, [{w1p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {b}, {xw}, {t}, {b}",
            "smlad {b}, {xo}, {w}, {b}",
            "ldr {xw}, [{xp}], #4",
            "sxtab16 {xo}, {offs}, {xw}, ror #8",
            "sxtab16 {xw}, {offs}, {xw}",
            "ldr {w}, [{w0p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {a}, {xw}, {t}, {a}",
            "smlad {a}, {xo}, {w}, {a}",
            "ldr {w}, [{w1p}], #4",
            "sxtb16 {t}, {w}",
            "sxtb16 {w}, {w}, ror #8",
            "smlad {b}, {xw}, {t}, {b}",
            "smlad {b}, {xo}, {w}, {b}",
            "subs {n}, {n}, #1",
            "bne 3b",
            "4:",
            xp = inout(reg) x.as_ptr() => _,
            w0p = inout(reg) w0.as_ptr() => _,
            w1p = inout(reg) w1.as_ptr() => _,
            n = inout(reg) groups => _,
            offs = in(reg) offs,
            a = inout(reg) a,
            b = inout(reg) b,
            xw = out(reg) _,
            xo = out(reg) _,
            w = out(reg) _,
            t = out(reg) _,
            options(nostack, readonly),
        );
    }
    [a, b]
}

#[cfg(test)]
mod tests {
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
            fully_connected_s8(
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
            fully_connected_s8(
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
            fully_connected_with::<Other>(
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
                                (x[b * inf + j] as i64 + q.input_offset as i64)
                                    * w[o * inf + j] as i64
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
        use super::super::isa::{Dsp, Mve};
        let mut r = Rng(0xfc4);
        for (batches, inf, outf) in [
            (1, 640, 128),
            (1, 128, 8),
            (1, 8, 128),
            (2, 37, 12),
            (1, 5, 4),
            (3, 16, 6),
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
                    fully_connected_with::<Mve>(&q, 0, enc, &x, &w, outf, mult, shift, &mut got)
                        .unwrap();
                    assert_eq!(got, want, "mve {batches}x{inf}->{outf} round {round}");
                    fully_connected_with::<Dsp>(&q, 0, enc, &x, &w, outf, mult, shift, &mut got)
                        .unwrap();
                    assert_eq!(got, want, "dsp {batches}x{inf}->{outf} round {round}");
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
        let e = fully_connected_s8(
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
                                    (x[b * inf + j] as i64 + io)
                                        * (w[o * inf + j] as i64 + fo as i64)
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
                fully_connected_with::<Active>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got)
                    .unwrap();
                assert_eq!(got, want, "fo {fo}");
                fully_connected_with::<Other>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got)
                    .unwrap();
                assert_eq!(got, want, "other fo {fo}");
            }
        }
    }
}
