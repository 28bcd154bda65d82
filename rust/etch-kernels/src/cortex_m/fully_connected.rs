//! `arm_fully_connected_s8` (`cortex_m::quantized_linear`): a matrix-vector
//! product on the convolution's building blocks ([`ConvMac::dot_1x2`]), in
//! both encodings of its constant term.

use super::common::{init, put, row, runs, runs_mut, wsum};
use super::conv::ConvMac;
#[allow(unused_imports)]
use super::isa::dsp::{pack16, smlad, sxtab16, sxtab16_ror8, sxtb16, sxtb16_ror8, word};
use super::requant::{Requant, Rq};
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

/// `arm_fully_connected_s8`'s parameters besides its tensors: offsets and
/// activation range, the weights' offset, the constant term and the
/// per-tensor requantization.
#[derive(Clone, Copy, Debug)]
pub struct FcParams<'a> {
    pub q: ConvQuant,
    pub filter_offset: i32,
    pub encoding: FcEncoding<'a>,
    pub mult: i32,
    pub shift: i32,
}

/// Most input features whose `x + input_offset` row fits the kernel scratch
/// as int16 lanes ([`FC_SCRATCH_BYTES`]); wider rows take the generic loop.
pub const FC_MAX_IN_FEATURES: usize = 640;

/// Kernel scratch of [`fully_connected_s8`]: one input row as int16 lanes
/// for the DSP loop. None elsewhere: Helium programs carry kernel sums (a
/// bias-encoded program there takes the generic loop), and the scalar and
/// x86 builds have no loop of their own.
pub const FC_SCRATCH_BYTES: u32 = if cfg!(all(feature = "dsp", not(feature = "mve"))) {
    2 * FC_MAX_IN_FEATURES as u32
} else {
    0
};

/// `arm_fully_connected_s8`, per-tensor quantization: `input [batches, in]`,
/// `weights [out, in]`, `output [batches, out]`, with caller-owned scratch
/// ([`FC_SCRATCH_BYTES`] for the fast DSP loop; less takes the generic one).
pub fn fully_connected_s8(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    output: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    fully_connected_with::<Active>(p, input, weights, out_features, output, scratch)
}

fn fully_connected_with<M: ConvMac>(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    output: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    let in_features = weights.len().checked_div(out_features).unwrap_or(0);
    let batches = input.len().checked_div(in_features).unwrap_or(0);
    let const_len = match p.encoding {
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
    if p.filter_offset == 0 {
        if let Some(done) = M::fc_layer(
            p,
            input,
            weights,
            in_features,
            out_features,
            output,
            scratch,
        ) {
            return done;
        }
    }
    fully_connected::<M>(p, input, weights, in_features, out_features, output)
}

/// `arm_fully_connected_s8`, two outputs per pass: for any `filter_offset`
/// (what the exporter writes is 0: symmetric weights), which adds
/// `filter_offset·Σ(x + input_offset)` per batch row (`filter_offset·Σx`
/// with `kernel_sum`): equal modulo 2^32 to summing `(x + input_offset)·(w
/// + filter_offset)`.
pub(crate) fn fully_connected<M: ConvMac>(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    in_features: usize,
    out_features: usize,
    output: &mut [i8],
) -> KernelResult {
    let (q, filter_offset, encoding) = (&p.q, p.filter_offset, p.encoding);
    let batches = input.len().checked_div(in_features).unwrap_or(0);
    let r = Requant::new(p.mult, p.shift);
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

/// The bias encoding with `filter_offset = 0`, the usual case: the input
/// offset fits an int16 lane (within ±32,640), `in_features` a multiple of
/// 4 whose row fits the scratch, `out_features` a multiple of 4 (the
/// autoencoder's and DS-CNN's layers; not ResNet-8's 10-way or MobileNet's
/// 2-way head), a per-tensor requantization
/// [`fast_words`](super::requant::fast_words) computes, the full int8
/// range. `acc = bias + Σ (x + input_offset)·w`, CMSIS-NN's own sum, with no
/// weight sums: per batch row the inputs widened once into the scratch
/// (`x + input_offset` as int16 lanes, [`widen`]), then four output rows
/// per pass ([`fc_rows_fast`]). `None` otherwise (the generic loop).
#[inline(always)]
pub(crate) fn fc_input_offset(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    in_features: usize,
    out_features: usize,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let FcEncoding::Bias(Some(bias)) = p.encoding else {
        return None;
    };
    let (q, off, k) = (p.q, p.q.input_offset, in_features);
    let r = Requant::new(p.mult, p.shift);
    if !(-32_640..=32_640).contains(&off)
        || k == 0
        || !k.is_multiple_of(4)
        || !out_features.is_multiple_of(4)
        || bias.len() != out_features
        || !r.is_fast()
        || (q.act_min, q.act_max) != (-128, 127)
        || !(-128..=127).contains(&q.output_offset)
    {
        return None;
    }
    let req = r.to_words(q.output_offset);
    let xs = scratch.get_mut(..k / 4)?;
    Some((|| {
        for (x, out) in runs(input, k).zip(runs_mut(output, out_features)) {
            widen(x, off, xs);
            fc_rows_fast(xs, weights, bias, &req, out).ok_or(BAD)?;
        }
        Ok(())
    })())
}

/// `x + off` in `xs` as int16 lanes, per group of four inputs one word
/// pair: inputs 0 and 2 in the low word, 1 and 3 in the high word (the
/// lanes `SXTB16` and `SXTB16 ROR #8` make of a weight word). Whole groups
/// only, as many as both hold.
#[inline(always)]
fn widen(x: &[i8], off: i32, xs: &mut [u64]) {
    let offs = pack16(off, off);
    for (g, d) in x.as_chunks::<4>().0.iter().zip(xs.iter_mut()) {
        let w = word(g);
        *d = sxtab16(offs, w) as u64 | (sxtab16_ror8(offs, w) as u64) << 32;
    }
}

/// One group of four widened inputs against four weight rows: rows 1 and 0
/// at `{wp0} + {k}` and `{wp0}`, rows 3 and 2 at `{wp2} + {k}` and `{wp2}`;
/// 21 instructions per 16 multiply-accumulates.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
macro_rules! fc_group {
    () => {
        concat!(
            "ldrd {xe}, {xo}, [{xp}], #8\n",
            "ldr {w}, [{wp0}, {k}]\n",
            "sxtb16 {t}, {w}\n",
            "sxtb16 {w}, {w}, ror #8\n",
            "smlad {a1}, {xe}, {t}, {a1}\n",
            "smlad {a1}, {xo}, {w}, {a1}\n",
            "ldr {w}, [{wp0}], #4\n",
            "sxtb16 {t}, {w}\n",
            "sxtb16 {w}, {w}, ror #8\n",
            "smlad {a0}, {xe}, {t}, {a0}\n",
            "smlad {a0}, {xo}, {w}, {a0}\n",
            "ldr {w}, [{wp2}, {k}]\n",
            "sxtb16 {t}, {w}\n",
            "sxtb16 {w}, {w}, ror #8\n",
            "smlad {a3}, {xe}, {t}, {a3}\n",
            "smlad {a3}, {xo}, {w}, {a3}\n",
            "ldr {w}, [{wp2}], #4\n",
            "sxtb16 {t}, {w}\n",
            "sxtb16 {w}, {w}, ror #8\n",
            "smlad {a2}, {xe}, {t}, {a2}\n",
            "smlad {a2}, {xo}, {w}, {a2}\n",
        )
    };
}

/// One batch row of [`fc_input_offset`]'s usual case: every output
/// `fast_words(req, bias[o] + Σ xs·w[o])` (fast requantization, full int8
/// range, the output offset folded into `req`), four rows per pass, for
/// `out.len() = 4·n ≥ 4` rows of `k = 4·xs.len() ≥ 4` weights (`w` and
/// `bias` at least that long): `None` otherwise. The portable spelling.
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
fn fc_rows_fast(xs: &[u64], w: &[i8], bias: &[i32], req: &Rq, out: &mut [i8]) -> Option<()> {
    let k = xs.len().checked_mul(4)?;
    if k == 0 || out.is_empty() || !out.len().is_multiple_of(4) {
        return None;
    }
    let (quads, bias) = (w.chunks_exact(4 * k), bias.as_chunks::<4>().0);
    let outs = out.as_chunks_mut::<4>().0;
    if quads.len() < outs.len() || bias.len() < outs.len() {
        return None;
    }
    for ((w, b), d) in quads.zip(bias).zip(outs) {
        for ((d, &a), row) in d.iter_mut().zip(b).zip(w.chunks_exact(k)) {
            let mut a = a;
            for (&x, g) in xs.iter().zip(row.as_chunks::<4>().0) {
                let v = word(g);
                a = smlad(x as u32, sxtb16(v), a);
                a = smlad((x >> 32) as u32, sxtb16_ror8(v), a);
            }
            *d = super::requant::fast_words(req, a);
        }
    }
    Some(())
}

/// One output of [`fc_rows_fast`]'s `asm!`: [`fast_words`] from `{aN}`
/// with the multiplier in `{xe}`, the folded high word in `{xo}` and
/// `r − 1` in `{wp2}`, stored at `{w}` (advanced); `{t}` and `{k}` are
/// free there.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
macro_rules! fc_requant {
    ($a:literal) => {
        concat!(
            "and {t}, ",
            $a,
            ", #0x80000000\n",
            "orr {t}, {t}, #0x40000000\n",
            "add {k}, {xo}, ",
            $a,
            ", asr #31\n",
            "smlal {t}, {k}, ",
            $a,
            ", {xe}\n",
            "asr {k}, {k}, {wp2}\n",
            "ssat {k}, #8, {k}\n",
            "strb {k}, [{w}], #1\n",
        )
    };
}

/// [`fc_rows_fast`] on Arm with DSP: one `asm!` for the whole row. Per
/// four output rows: their biases, the groups ([`fc_group`], two per pass:
/// 45 instructions per 32 multiply-accumulates), the
/// four requantizations (7 instructions each, as
/// [`finish_acc`](super::requant::finish_acc)'s loop); the
/// loop state (end pointers, biases and outputs, the requantization words,
/// `k`) in a 40-byte frame on the stack: twelve registers are in use.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
fn fc_rows_fast(xs: &[u64], w: &[i8], bias: &[i32], req: &Rq, out: &mut [i8]) -> Option<()> {
    let k = xs.len().checked_mul(4)?;
    let n = out.len();
    if k == 0 || n == 0 || !n.is_multiple_of(4) || w.len() < n.checked_mul(k)? || bias.len() < n {
        return None;
    }
    let (mult, hi, rm1) = (req[0] as u32, (req[0] >> 32) as u32, req[1] as u32);
    // SAFETY: `n/4 ≥ 1` blocks; block `b` reads the four biases at
    // `bias[4b..4b + 4]` (`bias.len() ≥ n`) and the weight rows `4b .. 4b + 4`
    // (rows of `k` values at `wp0`, `wp0 + k`, `wp0 + 2k`, `wp0 + 3k`, each
    // read `k = 4·xs.len()` bytes in words, inside `w` as `w.len() ≥ n·k`),
    // the `xs.len() ≥ 1` word pairs of
    // `xs` (8-aligned `u64`s: `ldrd`; an odd count enters the two-group
    // loop at its second group), and writes `out[4b..4b + 4]`; then
    // `wp0` is the next block's (`+4k`) and `xp` back at `xs`. It stops
    // when `wp0` reaches `w + n·k`. The 40-byte frame is pushed and popped
    // inside (8-byte aligned). Unaligned `ldr` is allowed on Armv7E-M and
    // Armv8-M Mainline. Flags (and the sticky Q bit) are clobbered.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #40",
            "strd {t}, {wp2}, [sp]",
            "strd {a0}, {a1}, [sp, #8]",
            "strd {a2}, {a3}, [sp, #16]",
            "strd {xe}, {k}, [sp, #24]",
            "5:",
            "ldr {t}, [sp, #4]",
            "ldrd {a0}, {a1}, [{t}], #8",
            "ldrd {a2}, {a3}, [{t}], #8",
            "str {t}, [sp, #4]",
            "add {wp2}, {wp0}, {k}, lsl #1",
            "ldr {t}, [sp]",
            "subs {t}, {t}, {xp}",
            "tst {t}, #8",
            "bne 2f",
            "3:",
            fc_group!(),
            "2:",
            fc_group!(),
            "ldr {t}, [sp]",
            "cmp {xp}, {t}",
            "bne 3b",
            "add {wp0}, {wp2}, {k}",
            "sub {xp}, {xp}, {k}, lsl #1",
            "strd {wp0}, {xp}, [sp, #32]",
            "ldrd {xe}, {xo}, [sp, #16]",
            "ldr {wp2}, [sp, #24]",
            "ldr {w}, [sp, #8]",
            fc_requant!("{a0}"),
            fc_requant!("{a1}"),
            fc_requant!("{a2}"),
            fc_requant!("{a3}"),
            "str {w}, [sp, #8]",
            "ldrd {wp0}, {xp}, [sp, #32]",
            "ldr {k}, [sp, #28]",
            "ldr {t}, [sp, #12]",
            "cmp {wp0}, {t}",
            "bne 5b",
            "add sp, sp, #40",
            // Entry values; in the loop the names' roles ([`fc_group`]).
            xp = inout(reg) xs.as_ptr() => _,
            t = inout(reg) xs.as_ptr().add(xs.len()) => _,
            wp0 = inout(reg) w.as_ptr() => _,
            k = inout(reg) k => _,
            wp2 = inout(reg) bias.as_ptr() => _,
            a0 = inout(reg) out.as_mut_ptr() => _,
            a1 = inout(reg) w.as_ptr().add(n * k) => _,
            a2 = inout(reg) mult => _,
            a3 = inout(reg) hi => _,
            xe = inout(reg) rm1 => _,
            xo = out(reg) _,
            w = out(reg) _,
        );
    }
    Some(())
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
            (1, 644, 5),
            (2, 13, 7),
            (1, 128, 8),
            (1, 8, 128),
            (2, 37, 12),
            (1, 5, 4),
            (3, 16, 6),
            (3, 16, 8),
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
                run::<Active>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
                assert_eq!(got, want, "fo {fo}");
                run::<Other>(&q, fo, enc, &x, &w, outf, mult, shift, &mut got).unwrap();
                assert_eq!(got, want, "other fo {fo}");
            }
        }
    }
}
