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

mod scalar;
pub(crate) use scalar::dot_1x2_off;

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

/// `[Σ (x + off)·w0, Σ (x + off)·w1]` for `(x, off, w0, w1)`.
pub(crate) type OffsetDot = fn(&[i8], i32, &[i8], &[i8]) -> [i32; 2];

/// The bias encoding with `filter_offset = 0` where there is no widened-input
/// loop (Cortex-M0/M3): `acc = bias + Σ (x + input_offset)·w`, CMSIS-NN's
/// own sum, two output rows per pass by `dot` (`[Σ (x + off)·w0, Σ (x +
/// off)·w1]`; an odd last row paired with itself), no weight sums; any
/// requantization and activation range. `None` for the kernel-sum encoding.
pub(crate) fn fc_offset_pairs(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    k: usize,
    n: usize,
    output: &mut [i8],
    dot: OffsetDot,
) -> Option<KernelResult> {
    let FcEncoding::Bias(bias) = p.encoding else {
        return None;
    };
    let (q, off) = (&p.q, p.q.input_offset);
    let r = Requant::new(p.mult, p.shift);
    let b = |o: usize| bias.and_then(|b| b.get(o).copied()).unwrap_or(0);
    Some((|| {
        for (x, out) in runs(input, k).zip(runs_mut(output, n)) {
            for o in (0..n).step_by(2) {
                let o1 = (o + 1).min(n - 1);
                let [a0, a1] = dot(x, off, row(weights, o * k, k)?, row(weights, o1 * k, k)?);
                *out.get_mut(o1).ok_or(BAD)? = q.out(b(o1).wrapping_add(a1), &r);
                *out.get_mut(o).ok_or(BAD)? = q.out(b(o).wrapping_add(a0), &r);
            }
        }
        Ok(())
    })())
}

/// The bias encoding with `filter_offset = 0`, the usual case: the input
/// offset fits an int16 lane (within ±32,640), `in_features` a multiple of
/// 4 whose row fits the scratch, a per-tensor requantization
/// [`fast_words`](super::requant::fast_words) computes, the full int8
/// range. `acc = bias + Σ (x + input_offset)·w`, CMSIS-NN's own sum, with no
/// weight sums: per batch row the inputs widened once into the scratch
/// (`x + input_offset` as int16 lanes, [`widen`]), then four output rows
/// per pass ([`fc_rows_fast`]) and the last `out_features % 4` (ResNet-8's
/// 10-way and MobileNet's 2-way heads) one at a time ([`fc_rows_tail`]).
/// `None` otherwise (the generic loop).
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
        || out_features == 0
        || bias.len() != out_features
        || !r.is_fast()
        || (q.act_min, q.act_max) != (-128, 127)
        || !(-128..=127).contains(&q.output_offset)
    {
        return None;
    }
    let req = r.to_words(q.output_offset);
    let xs = scratch.get_mut(..k / 4)?;
    // The whole quads of rows, then the rest.
    let quads = out_features - out_features % 4;
    let (w4, wt) = weights.split_at_checked(quads.checked_mul(k)?)?;
    let (b4, bt) = bias.split_at_checked(quads)?;
    Some((|| {
        for (x, out) in runs(input, k).zip(runs_mut(output, out_features)) {
            widen(x, off, xs);
            let (o4, ot) = out.split_at_mut_checked(quads).ok_or(BAD)?;
            if quads > 0 {
                fc_rows_fast(xs, w4, b4, &req, o4).ok_or(BAD)?;
            }
            if !ot.is_empty() {
                fc_rows_tail(xs, wt, bt, &req, ot).ok_or(BAD)?;
            }
        }
        Ok(())
    })())
}

/// [`fc_rows_fast`]'s arithmetic for any number of rows `out.len() ≥ 1`
/// (its callers: the 1 to 3 rows past the last whole quad), one row at a
/// time ([`fc_row`]); `None` unless `k = 4·xs.len() ≥ 4` and `w`, `bias`
/// hold `out.len()` rows.
#[inline(never)] // one copy, off the quad loop's path
fn fc_rows_tail(xs: &[u64], w: &[i8], bias: &[i32], req: &Rq, out: &mut [i8]) -> Option<()> {
    let k = xs.len().checked_mul(4)?;
    if k == 0 || w.len() < out.len().checked_mul(k)? || bias.len() < out.len() {
        return None;
    }
    for ((d, &b), row) in out.iter_mut().zip(bias).zip(runs(w, k)) {
        *d = super::requant::fast_words(req, fc_row(xs, row, b));
    }
    Some(())
}

/// `acc + Σ xs·w` over the `xs.len()` groups (`w`: at least `4·xs.len()`
/// weights, else `acc`): per group one widened input pair, one weight word,
/// two `SXTB16` and two `SMLAD`. The portable spelling.
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn fc_row(xs: &[u64], w: &[i8], acc: i32) -> i32 {
    let mut a = acc;
    for (&x, g) in xs.iter().zip(w.as_chunks::<4>().0) {
        let v = word(g);
        a = smlad(x as u32, sxtb16(v), a);
        a = smlad((x >> 32) as u32, sxtb16_ror8(v), a);
    }
    a
}

/// [`fc_row`] on Arm with DSP: eight instructions per group.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn fc_row(xs: &[u64], w: &[i8], acc: i32) -> i32 {
    let n = xs.len();
    if n == 0 || w.len() < 4 * n {
        return acc;
    }
    let mut a = acc;
    // SAFETY: `n ≥ 1` passes, each reading one `u64` of `xs` at `xp`
    // (8-aligned: `ldrd`) and one word of `w` at `wp` (advanced by 8 and
    // 4): `n` word pairs and `4n ≤ w.len()` bytes (checked). Registers
    // only otherwise; flags (and the sticky Q bit) are clobbered.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldrd {xe}, {xo}, [{xp}], #8",
            "ldr {v}, [{wp}], #4",
            "sxtb16 {t}, {v}",
            "sxtb16 {v}, {v}, ror #8",
            "smlad {a}, {xe}, {t}, {a}",
            "smlad {a}, {xo}, {v}, {a}",
            "subs {n}, {n}, #1",
            "bne 2b",
            xp = inout(reg) xs.as_ptr() => _,
            wp = inout(reg) w.as_ptr() => _,
            n = inout(reg) n => _,
            a = inout(reg) a,
            xe = out(reg) _,
            xo = out(reg) _,
            v = out(reg) _,
            t = out(reg) _,
            options(nostack, readonly),
        );
    }
    a
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
mod tests;
