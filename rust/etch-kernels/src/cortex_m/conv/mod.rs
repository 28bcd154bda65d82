//! `arm_convolve_s8` (`cortex_m::quantized_conv2d`): the operator's loop
//! structures, generic over the building blocks of [`ConvMac`], whose four
//! implementations live beside them: `scalar.rs` (`Scalar`), `dsp.rs`
//! (`Dsp`), `mve.rs` (`Mve`) and `x86.rs` (`X86`); `tests.rs` checks every
//! path against one reference.
//!
//! Arithmetic: CMSIS-NN sums `(x + input_offset)·w` over in-bounds taps in
//! wrapping 32-bit integers. Modulo 2^32 that equals
//! `Σ x·w + input_offset·Σ w` over the same taps, so the inner loops
//! multiply raw int8 values and the offset term is added once per output
//! (per-channel weight sums computed once per call; border pixels, where
//! some taps fall into the padding, sum only their in-bounds weights).

use super::common::{init, put, row, take, taps, wsum, ConvOperands};
use super::isa::dsp::{smlad, sxtb16, sxtb16_ror8, word};
use super::requant::{fast_words, finish_acc, Requant, Rq};
use super::{Active, ConvQuant, Window, BAD};
use crate::error::KernelResult;

/// `ConvMac` building blocks taken from another implementation: the ISA
/// variants that add layer kernels of their own (`Mve`, `X86`) forward the
/// rest, one name each: `conv_blocks_from!(Dsp: dot_1x2, dot_2x2)`.
macro_rules! conv_blocks_from {
    ($base:ty: $($block:ident),* $(,)?) => {
        $(conv_blocks_from!(@ $base, $block);)*
    };
    (@ $b:ty, dot_1x2) => {
        #[inline(always)]
        fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2] {
            <$b>::dot_1x2(x, w0, w1)
        }
    };
    (@ $b:ty, dot_2x2) => {
        #[inline(always)]
        fn dot_2x2(x0: &[i8], x1: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 4] {
            <$b>::dot_2x2(x0, x1, w0, w1)
        }
    };
    (@ $b:ty, pack4) => {
        #[inline(always)]
        fn pack4(w: [&[i8]; 4], out: &mut [u32]) {
            <$b>::pack4(w, out)
        }
    };
    (@ $b:ty, dot_1x4) => {
        #[inline(always)]
        fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
            <$b>::dot_1x4(x, packed, init)
        }
    };
    (@ $b:ty, dot_1x4_rows) => {
        #[inline(always)]
        fn dot_1x4_rows(
            xs: &[i8],
            n: usize,
            packed: &[u32],
            init: [i32; 4],
            accs: &mut [[i32; 4]],
        ) {
            <$b>::dot_1x4_rows(xs, n, packed, init, accs)
        }
    };
    (@ $b:ty, dot_2x2_rows) => {
        #[inline(always)]
        fn dot_2x2_rows(xs: &[i8], ws: &[i8], n: usize) -> [i32; 4] {
            <$b>::dot_2x2_rows(xs, ws, n)
        }
    };
}

mod dsp;
mod im2col;
mod im2col_dsp;
mod im2col_mve;
mod mve;
mod scalar;
#[cfg(test)]
mod tests;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod x86;

/// `arm_convolve_s8` (all of CMSIS-NN's conv paths compute the same sums):
/// `acc = bias[oc] + Σ_{ky,kx,ic} (x + input_offset)·w[oc,ky,kx,ic]` over
/// in-bounds taps, per-channel requantize. Weights OHWI. Its scratch on the
/// stack: [`conv_s8_in`] takes it from the caller.
#[allow(clippy::too_many_arguments)]
pub fn conv_s8(
    g: &Window,
    q: &ConvQuant,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    let mut scratch = [0u64; CONV_SCRATCH_WORDS];
    conv_with::<Active>(g, q, input, filter, bias, mult, shift, output, &mut scratch)
}

/// Bytes of scratch [`conv_s8_in`] needs (the `quantized_conv2d` kernels
/// declare it: the method state holds it, not the stack).
pub const CONV_SCRATCH_BYTES: u32 = 8 * CONV_SCRATCH_WORDS as u32;

/// [`conv_s8`] with caller-owned scratch of at least [`CONV_SCRATCH_BYTES`]
/// (less is `InvalidArgument`).
#[allow(clippy::too_many_arguments)]
pub fn conv_s8_in(
    g: &Window,
    q: &ConvQuant,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    conv_with::<Active>(g, q, input, filter, bias, mult, shift, output, scratch)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn conv_with<M: ConvMac>(
    g: &Window,
    q: &ConvQuant,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    let (i, o) = (g.input, g.output);
    let (kh, kw) = g.kernel;
    let filter_len =
        o.c.checked_mul(kh)
            .and_then(|v| v.checked_mul(kw))
            .and_then(|v| v.checked_mul(i.c));
    if i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || filter_len != Some(filter.len())
        || i.n != o.n
        || mult.len() != o.c
        || shift.len() != o.c
        || bias.is_some_and(|b| b.len() != o.c)
    {
        return Err(BAD);
    }
    if g.check_work(input)? {
        return Ok(());
    }
    let ops = ConvOperands::new(*g, *q, input, filter, bias, mult, shift);
    if g.kernel == (1, 1) && g.padding == (0, 0) && g.stride == (1, 1) && i.h == o.h && i.w == o.w {
        if let Some(done) = M::pointwise_layer(&ops, output, scratch) {
            return done;
        }
        if M::PACKED_POINTWISE {
            pointwise_packed::<M>(&ops, output, scratch)
        } else {
            pointwise::<M>(&ops, output)
        }
    } else {
        if let Some(done) = M::conv_layer(&ops, output, scratch) {
            return done;
        }
        conv::<M>(&ops, output)
    }
}

/// The multiply-accumulate building blocks of the convolution (and fully
/// connected) loops.
pub(crate) trait ConvMac {
    /// A pointwise (1×1, stride 1, unpadded) layer kernel of this
    /// implementation's own for this call, or `None` for the generic loops
    /// below (the default). `scratch`: the kernel's.
    #[inline(always)]
    fn pointwise_layer(
        _ops: &ConvOperands<'_>,
        _output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        None
    }
    /// Any other convolution (not the pointwise case), or `None` for
    /// [`conv`]'s loops: by default gathered windows times weight rows
    /// ([`im2col::conv_im2col`]) where the scratch holds them.
    #[inline(always)]
    fn conv_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult>
    where
        Self: Sized,
    {
        im2col::conv_im2col::<Self>(ops, output, scratch)
    }
    /// A fully connected layer of this implementation's own for this call
    /// (`filter_offset = 0`), or `None` for the generic loop (the default).
    #[inline(always)]
    fn fc_layer(
        _p: &super::FcParams<'_>,
        _input: &[i8],
        _weights: &[i8],
        _in_features: usize,
        _out_features: usize,
        _output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        None
    }
    /// `[Σ x·w0, Σ x·w1]`: one input row against two weight rows.
    fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2];
    /// `[Σ x0·w0, Σ x0·w1, Σ x1·w0, Σ x1·w1]`: two pixels × two channels.
    fn dot_2x2(x0: &[i8], x1: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 4];
    /// Whether [`ConvMac::dot_1x4`] on packed weights beats [`ConvMac::dot_2x2`]
    /// (true where unpacking weights costs instructions: DSP).
    const PACKED_POINTWISE: bool;
    /// Words [`ConvMac::pack4`] writes per input (four rows): 2, or 4 for
    /// sign-extended words (Armv6-M), which then pack half as many inputs.
    const PACK_WORDS: usize = 2;
    /// Packs four weight rows (whole groups of four values) for
    /// [`ConvMac::dot_1x4`]: per group `g` and row `r`, two words at
    /// `8g + 2r`: values `4g, 4g+2` and `4g+1, 4g+3` as int16 lanes.
    fn pack4(w: [&[i8]; 4], out: &mut [u32]) {
        // One zipped pass (no per-row bounds checks); stops at the shortest.
        let [r0, r1, r2, r3] = w.map(|r| r.as_chunks::<4>().0);
        let rows = r0.iter().zip(r1).zip(r2).zip(r3);
        for ((((a, b), c), d), o) in rows.zip(out.as_chunks_mut::<8>().0) {
            let (a, b, c, d) = (word(a), word(b), word(c), word(d));
            *o = [
                sxtb16(a),
                sxtb16_ror8(a),
                sxtb16(b),
                sxtb16_ror8(b),
                sxtb16(c),
                sxtb16_ror8(c),
                sxtb16(d),
                sxtb16_ror8(d),
            ];
        }
    }
    /// `[Σ x·w_r]` for the four rows packed by [`ConvMac::pack4`], over the
    /// whole groups of four in `x`.
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4];
    /// Whether [`ConvMac::dot_1x4_rows`] has a loop of its own (else
    /// `pointwise_packed` calls [`ConvMac::dot_1x4`] per row itself).
    const ROWS: bool = false;
    /// [`ConvMac::dot_1x4`] for consecutive rows of `n` inputs: `accs[p]`
    /// for row `xs[p·n .. (p+1)·n]`, over the whole rows both hold.
    #[inline(always)]
    fn dot_1x4_rows(xs: &[i8], n: usize, packed: &[u32], init: [i32; 4], accs: &mut [[i32; 4]]) {
        for (a, x) in accs.iter_mut().zip(xs.chunks_exact(n.max(1))) {
            *a = Self::dot_1x4(x, packed, init);
        }
    }
    /// Whether [`ConvMac::pointwise_quad`] replaces `pointwise_packed`'s
    /// own loop for its usual case.
    const QUAD: bool = false;
    /// [`pointwise_packed`]'s usual case where [`ConvMac::QUAD`], four output
    /// channels over `rows.pixels` pixels: pixel `p` (the `4·g` values at
    /// `x[p·rows.xstep ..]` for the `g` groups of `packed`) gives
    /// `out[p·rows.ostep + l] = fast_words(req[l], dot_1x4(...)[l])` for
    /// `l < 4` (every channel fast, the output offset folded:
    /// [`Requant::to_words`]). `accs`: scratch for the loop's operands.
    fn pointwise_quad(
        x: &[i8],
        packed: &[u32],
        init: [i32; 4],
        req: &[Rq; 4],
        out: &mut [i8],
        rows: &QuadRows,
        _accs: &mut [[i32; 4]; PB],
    ) -> KernelResult {
        let cin = 4 * (packed.len() / 8);
        if cin == 0 {
            return Err(BAD);
        }
        for p in 0..rows.pixels {
            let (xi, oi) = (p * rows.xstep, p * rows.ostep);
            let acc = Self::dot_1x4(x.get(xi..xi + cin).ok_or(BAD)?, packed, init);
            let d = out.get_mut(oi..oi + 4).ok_or(BAD)?;
            for ((d, &a), r) in d.iter_mut().zip(&acc).zip(req) {
                *d = fast_words(r, a);
            }
        }
        Ok(())
    }
    /// [`ConvMac::dot_2x2`] for two pixels stored back to back (`xs` = rows
    /// `xs[..n]`, `xs[n..2n]`) against two weight rows stored back to back.
    fn dot_2x2_rows(xs: &[i8], ws: &[i8], n: usize) -> [i32; 4] {
        // `split_at_checked`: `split_at` keeps a panic path LLVM cannot
        // always remove, even with the index clamped.
        let (x0, x1) = xs.split_at_checked(n).unwrap_or((xs, &[]));
        let (w0, w1) = ws.split_at_checked(n).unwrap_or((ws, &[]));
        Self::dot_2x2(x0, x1, w0, w1)
    }
}

/// 1×1 convolution, stride 1, no padding: a matrix product of pixels ×
/// input channels by output channels × input channels, in blocks of two
/// pixels × two output channels (four accumulators in registers).
pub(crate) fn pointwise<M: ConvMac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    let off = q.input_offset;
    let mut oc = 0;
    while oc < cout {
        // An odd last channel runs as a pair with itself; its twin is dropped.
        let oc1 = if oc + 1 < cout { oc + 1 } else { oc };
        let (w0, w1) = (row(filter, oc * cin, cin)?, row(filter, oc1 * cin, cin)?);
        let (b0, b1) = (init(bias, oc, off, w0), init(bias, oc1, off, w1));
        let r0 = Requant::new(*mult.get(oc).ok_or(BAD)?, *shift.get(oc).ok_or(BAD)?);
        let r1 = Requant::new(*mult.get(oc1).ok_or(BAD)?, *shift.get(oc1).ok_or(BAD)?);
        // Two real channels, exact fast requantization, full int8 range.
        let fast =
            oc1 != oc && r0.is_fast() && r1.is_fast() && q.act_min == -128 && q.act_max == 127;
        let mut p = 0;
        while p + 1 < pixels {
            let [a, b, c, d] = if oc1 != oc {
                // Both pixels and both channels are adjacent rows.
                let xs = row(input, p * cin, 2 * cin)?;
                let ws = row(filter, oc * cin, 2 * cin)?;
                M::dot_2x2_rows(xs, ws, cin)
            } else {
                let x0 = row(input, p * cin, cin)?;
                let x1 = row(input, (p + 1) * cin, cin)?;
                M::dot_2x2(x0, x1, w0, w1)
            };
            let o = p * cout + oc;
            if fast {
                let f = |a: i32, r: &Requant| {
                    r.apply_fast(a)
                        .wrapping_add(q.output_offset)
                        .clamp(-128, 127) as i8
                };
                let top = output.get_mut(o..o + 2).ok_or(BAD)?;
                top.copy_from_slice(&[f(b0.wrapping_add(a), &r0), f(b1.wrapping_add(b), &r1)]);
                let bottom = output.get_mut(o + cout..o + cout + 2).ok_or(BAD)?;
                bottom.copy_from_slice(&[f(b0.wrapping_add(c), &r0), f(b1.wrapping_add(d), &r1)]);
            } else {
                put(output, o, q.out(b0.wrapping_add(a), &r0))?;
                put(output, o + cout, q.out(b0.wrapping_add(c), &r0))?;
                if oc1 != oc {
                    put(output, o + 1, q.out(b1.wrapping_add(b), &r1))?;
                    put(output, o + cout + 1, q.out(b1.wrapping_add(d), &r1))?;
                }
            }
            p += 2;
        }
        if p < pixels {
            let [a, b] = M::dot_1x2(row(input, p * cin, cin)?, w0, w1);
            let o = p * cout + oc;
            put(output, o, q.out(b0.wrapping_add(a), &r0))?;
            if oc1 != oc {
                put(output, o + 1, q.out(b1.wrapping_add(b), &r1))?;
            }
        }
        oc += 2;
    }
    Ok(())
}

/// Where [`ConvMac::pointwise_quad`]'s pixels lie: `pixels` of them, the
/// inputs of pixel `p` from byte `p·xstep`, its outputs from byte `p·ostep`.
pub(crate) struct QuadRows {
    pub(crate) pixels: usize,
    pub(crate) xstep: usize,
    pub(crate) ostep: usize,
}

/// Most input channels [`depthwise_single_gemm`](super::depthwise) gathers
/// per window.
pub(crate) const PACK_IC: usize = 128;

/// Most input channels [`pointwise_packed`] packs (2 words each for four
/// output channels, in scratch: 2 KiB); wider layers take [`conv`].
const PW_MAX_IC: usize = 256;

/// Pixels per block of [`pointwise_packed`]'s fast path.
pub(crate) const PB: usize = 32;

/// Scratch words (8 bytes) of the convolution kernels: [`pointwise_packed`]'s
/// packed weights and block accumulators.
pub(crate) const CONV_SCRATCH_WORDS: usize = (2 * PW_MAX_IC + 4 * PB) / 2;

/// 1×1 convolution, stride 1, no padding, for [`ConvMac::PACKED_POINTWISE`]
/// implementations: four output channels per pass with their weights
/// unpacked to int16 lanes once ([`ConvMac::pack4`]), then one pixel at a time
/// against them (one input word, two unpacks and eight `SMLAD` per four
/// input channels). Wider inputs take [`pointwise`].
pub(crate) fn pointwise_packed<M: ConvMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (cin, cout) = (g.input.c, g.output.c);
    if cin == 0 || cout == 0 || cin * M::PACK_WORDS > 2 * PW_MAX_IC {
        // Sign-extended words pack fewer inputs: the unpacked loop then.
        return if M::PACK_WORDS > 2 {
            pointwise::<M>(ops, output)
        } else {
            conv::<M>(ops, output)
        };
    }
    let pixels = g.output.n * g.output.h * g.output.w;
    let off = q.input_offset;
    let body = cin - cin % 4;
    let buf = take::<u32, { 2 * PW_MAX_IC }>(&mut scratch)?;
    let accs = take::<[i32; 4], PB>(&mut scratch)?;
    let packed = buf.get_mut(..M::PACK_WORDS * body).ok_or(BAD)?;
    let mut oc = 0;
    while oc < cout {
        let n = 4.min(cout - oc);
        // Rows past the last channel repeat it; their results are dropped.
        let ch = |l: usize| oc + l.min(n - 1);
        let rows = [
            row(filter, ch(0) * cin, cin)?,
            row(filter, ch(1) * cin, cin)?,
            row(filter, ch(2) * cin, cin)?,
            row(filter, ch(3) * cin, cin)?,
        ];
        M::pack4(rows, packed);
        // With QUAD (the default packing) and no input tail, each row's
        // weight sum is read off the packed words: two `SMLAD` a group
        // instead of a byte loop over the row.
        let sums = (M::QUAD && body == cin).then(|| pack4_sums(packed));
        let mut init4 = [0i32; 4];
        let mut req4 = [Requant::new(0, 0); 4];
        for l in 0..4 {
            let c = ch(l);
            init4[l] = match sums {
                Some(s) => bias
                    .and_then(|b| b.get(c).copied())
                    .unwrap_or(0)
                    .wrapping_add(off.wrapping_mul(s[l])),
                None => init(bias, c, off, rows[l]),
            };
            req4[l] = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?);
        }
        let fast4 = req4.iter().all(Requant::is_fast);
        let full_range = q.act_min == -128 && q.act_max == 127;
        if M::QUAD
            && n == 4
            && body == cin
            && fast4
            && full_range
            && (-128..=127).contains(&q.output_offset)
        {
            // The common case: whole channel quad, no input tail, full-range
            // clamp, output offset folded into the requantization words.
            let req4 = req4.map(|r| r.to_words(q.output_offset));
            let x = input.get(..pixels * cin).ok_or(BAD)?;
            let out = output.get_mut(oc..).ok_or(BAD)?;
            let rows = QuadRows {
                pixels,
                xstep: cin,
                ostep: cout,
            };
            M::pointwise_quad(x, packed, init4, &req4, out, &rows, accs)?;
        } else if !M::QUAD && n == 4 && body == cin && fast4 && full_range {
            // The common case, inline: whole channel quad, no input tail,
            // full-range clamp.
            // Blocks of pixels: accumulate, then requantize the block (two
            // tight loops instead of one loop with everything live).
            let rows_in = input.get(..pixels * cin).ok_or(BAD)?;
            let rows_out = output.get_mut(..pixels * cout).ok_or(BAD)?;
            let (step_in, step_out) = (PB.wrapping_mul(cin), PB.wrapping_mul(cout));
            if step_in == 0 || step_out == 0 {
                return Err(BAD);
            }
            for (xb, ob) in rows_in.chunks(step_in).zip(rows_out.chunks_mut(step_out)) {
                if M::ROWS {
                    M::dot_1x4_rows(xb, cin, packed, init4, accs);
                } else {
                    // Zipped by reference: a zip of two slice iterators
                    // calls an out-of-line `Zip::size` that divides by `cin`
                    // (it linked `panic_const_div_by_zero` on Cortex-M55).
                    for (a, x) in accs.iter_mut().zip(&mut xb.chunks_exact(cin)) {
                        *a = M::dot_1x4(x, packed, init4);
                    }
                }
                for (a, o) in accs.iter().zip(ob.chunks_exact_mut(cout)) {
                    let Some(d) = o.get_mut(oc..oc + 4) else {
                        return Err(BAD);
                    };
                    // Unrolled: no lane loop around the requantization.
                    let f = |a: i32, r: &Requant| {
                        r.apply_fast(a)
                            .wrapping_add(q.output_offset)
                            .clamp(-128, 127) as i8
                    };
                    let [d0, d1, d2, d3] = d else {
                        return Err(BAD);
                    };
                    *d0 = f(a[0], &req4[0]);
                    *d1 = f(a[1], &req4[1]);
                    *d2 = f(a[2], &req4[2]);
                    *d3 = f(a[3], &req4[3]);
                }
            }
        } else {
            let req4 = req4.map(|r| r.to_words(q.output_offset));
            for p in 0..pixels {
                let x = row(input, p * cin, cin)?;
                let mut acc = M::dot_1x4(x, packed, init4);
                for (k, &xv) in x.iter().enumerate().skip(body) {
                    for (a, r) in acc.iter_mut().zip(&rows) {
                        *a = a.wrapping_add(xv as i32 * *r.get(k).ok_or(BAD)? as i32);
                    }
                }
                let o = p * cout + oc;
                let dst = output.get_mut(o..o + n).ok_or(BAD)?;
                finish_acc(q, &acc, &req4, fast4, dst);
            }
        }
        oc += 4;
    }
    Ok(())
}

/// Each row's sum of the weights [`ConvMac::pack4`]'s default packing holds
/// (per group and row, two words of int16 lanes): `SMLAD` by ones.
#[inline(always)]
pub(crate) fn pack4_sums(packed: &[u32]) -> [i32; 4] {
    const ONES: u32 = 0x0001_0001;
    let mut s = [0i32; 4];
    for g in packed.as_chunks::<8>().0 {
        s[0] = smlad(g[1], ONES, smlad(g[0], ONES, s[0]));
        s[1] = smlad(g[3], ONES, smlad(g[2], ONES, s[1]));
        s[2] = smlad(g[5], ONES, smlad(g[4], ONES, s[2]));
        s[3] = smlad(g[7], ONES, smlad(g[6], ONES, s[3]));
    }
    s
}

/// Any convolution: two output channels per pass; per output pixel and
/// in-bounds kernel row, one dot product over the contiguous run of
/// in-bounds taps × input channels (the same run in OHWI weights), or per
/// tap when dilated.
pub(crate) fn conv<M: ConvMac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let (cin, cout) = (i.c, o.c);
    let wlen = kh * kw * cin;
    let off = q.input_offset;
    let mut oc = 0;
    while oc < cout {
        let oc1 = if oc + 1 < cout { oc + 1 } else { oc };
        let (w0, w1) = (
            row(filter, oc * wlen, wlen)?,
            row(filter, oc1 * wlen, wlen)?,
        );
        let bias0 = bias.and_then(|b| b.get(oc).copied()).unwrap_or(0);
        let bias1 = bias.and_then(|b| b.get(oc1).copied()).unwrap_or(0);
        let (full0, full1) = (wsum(w0), wsum(w1));
        let r0 = Requant::new(*mult.get(oc).ok_or(BAD)?, *shift.get(oc).ok_or(BAD)?);
        let r1 = Requant::new(*mult.get(oc1).ok_or(BAD)?, *shift.get(oc1).ok_or(BAD)?);
        for b in 0..o.n {
            for oy in 0..o.h {
                let (ky0, ky1) = taps(oy, kh, g.stride.0, g.padding.0, g.dilation.0, i.h);
                for ox in 0..o.w {
                    let (kx0, kx1) = taps(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w);
                    let border = ky0 != 0 || ky1 != kh || kx0 != 0 || kx1 != kw;
                    let (mut a0, mut a1, mut s0, mut s1) = (0i32, 0i32, 0i32, 0i32);
                    for ky in ky0..ky1 {
                        let y = oy * g.stride.0 + ky * g.dilation.0 - g.padding.0;
                        let x_at = |kx: usize| {
                            let xx = ox * g.stride.1 + kx * g.dilation.1 - g.padding.1;
                            ((b * i.h + y) * i.w + xx) * cin
                        };
                        // One run of contiguous taps, or one tap at a time.
                        let (runs, run_len) = if g.dilation.1 == 1 {
                            (usize::from(kx1 > kx0), (kx1 - kx0) * cin)
                        } else {
                            (kx1 - kx0, cin)
                        };
                        for r in 0..runs {
                            let kx = kx0 + r;
                            let xs = row(input, x_at(kx), run_len)?;
                            let wi = (ky * kw + kx) * cin;
                            let (ws0, ws1) = (row(w0, wi, run_len)?, row(w1, wi, run_len)?);
                            let [d0, d1] = M::dot_1x2(xs, ws0, ws1);
                            a0 = a0.wrapping_add(d0);
                            a1 = a1.wrapping_add(d1);
                            if border {
                                s0 = s0.wrapping_add(wsum(ws0));
                                s1 = s1.wrapping_add(wsum(ws1));
                            }
                        }
                    }
                    if !border {
                        (s0, s1) = (full0, full1);
                    }
                    let a0 = bias0.wrapping_add(off.wrapping_mul(s0)).wrapping_add(a0);
                    let a1 = bias1.wrapping_add(off.wrapping_mul(s1)).wrapping_add(a1);
                    let oi = ((b * o.h + oy) * o.w + ox) * cout + oc;
                    put(output, oi, q.out(a0, &r0))?;
                    if oc1 != oc {
                        put(output, oi + 1, q.out(a1, &r1))?;
                    }
                }
            }
        }
        oc += 2;
    }
    Ok(())
}
