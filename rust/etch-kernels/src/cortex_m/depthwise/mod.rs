//! `arm_depthwise_conv_s8` (`cortex_m::quantized_depthwise_conv2d`): the
//! operator's loop structures, generic over the building blocks of
//! [`DepthwiseMac`], whose four implementations live beside them:
//! `scalar.rs` (`Scalar`), `dsp.rs` (`Dsp`), `mve/` (`Mve`) and `x86.rs`
//! (`X86`); `tests.rs` checks every path against one reference. Offsets
//! are folded as in the convolution (see `conv`). The loop of packed
//! implementations and its tap table live in `packed.rs` (the `SAFETY`
//! argument of the table's unchecked reads stays in that one file); one
//! input channel (DS-CNN's first layer) runs as a matrix product on the
//! convolution's building blocks ([`ConvMac`]) in `single.rs`.

use super::common::{at4, four, lanes, put, take, taps, ConvOperands};
use super::conv::{ConvMac, PACK_IC};
use super::requant::{finish_into, Requant, Rq};
use super::{Active, ConvQuant, Window, BAD};
use crate::error::{KernelError, KernelResult};

/// `DepthwiseMac` building blocks taken from another implementation (see
/// `conv_blocks_from!`): `depthwise_blocks_from!(Dsp: dw_block, dw_row, mul4)`.
macro_rules! depthwise_blocks_from {
    ($base:ty: $($block:ident),* $(,)?) => {
        $(depthwise_blocks_from!(@ $base, $block);)*
    };
    (@ $b:ty, dw_block) => {
        #[inline(always)]
        fn dw_block(
            taps: &Taps<'_>,
            j: usize,
            w: &[u32],
            init: [i32; 4],
        ) -> Result<[i32; 4], KernelError> {
            <$b>::dw_block(taps, j, w, init)
        }
    };
    (@ $b:ty, dw_row) => {
        #[inline(always)]
        fn dw_row(
            taps: &Taps<'_>,
            w: &[u32],
            init: &[i32],
            out: &mut [i32],
            blocks: usize,
        ) -> Result<(), KernelError> {
            <$b>::dw_row(taps, w, init, out, blocks)
        }
    };
    (@ $b:ty, mul4) => {
        #[inline(always)]
        fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4] {
            <$b>::mul4(acc, x, w)
        }
    };
}

mod columns;
mod dsp;
mod mve;
mod packed;
mod pairs;
mod scalar;
mod single;
#[cfg(test)]
mod tests;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod x86;

pub(crate) use packed::{depthwise_packed, in_bounds, Taps, DW_MAX_TAPS, DW_PACK_WORDS};
pub(crate) use single::{depthwise_single_gemm, PATCH_BYTES};

/// `arm_depthwise_conv_s8`: output channel `oc = ic·ch_mult + m` sees only
/// input channel `ic`; weights `[1, KH, KW, C_out]`.
#[allow(clippy::too_many_arguments)]
pub fn depthwise_conv_s8(
    g: &Window,
    q: &ConvQuant,
    ch_mult: usize,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    let mut scratch = [0u64; DEPTHWISE_SCRATCH_WORDS];
    depthwise_with::<Active>(
        g,
        q,
        ch_mult,
        input,
        filter,
        bias,
        mult,
        shift,
        output,
        &mut scratch,
    )
}

/// Bytes of scratch [`depthwise_conv_s8_in`] needs (the
/// `quantized_depthwise_conv2d` kernels declare it: the method state holds
/// it, not the stack).
pub const DEPTHWISE_SCRATCH_BYTES: u32 = 8 * DEPTHWISE_SCRATCH_WORDS as u32;

/// [`depthwise_conv_s8`] with caller-owned scratch of at least
/// [`DEPTHWISE_SCRATCH_BYTES`] (less is `InvalidArgument`).
#[allow(clippy::too_many_arguments)]
pub fn depthwise_conv_s8_in(
    g: &Window,
    q: &ConvQuant,
    ch_mult: usize,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    depthwise_with::<Active>(
        g, q, ch_mult, input, filter, bias, mult, shift, output, scratch,
    )
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn depthwise_with<M: DepthwiseMac>(
    g: &Window,
    q: &ConvQuant,
    ch_mult: usize,
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
    if ch_mult == 0
        || i.c.checked_mul(ch_mult) != Some(o.c)
        || i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || kh.checked_mul(kw).and_then(|v| v.checked_mul(o.c)) != Some(filter.len())
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
    if let Some(done) = M::separate_layer(&ops, ch_mult, output, scratch) {
        return done;
    }
    depthwise::<M>(&ops, ch_mult, output, scratch)
}

/// The multiply-accumulate building blocks of the depthwise loops (plus the
/// convolution's, for the one-input-channel matrix product).
pub(crate) trait DepthwiseMac: ConvMac {
    /// A one-input-channel layer kernel of this implementation's own for
    /// this call, or `None` for [`depthwise_single_gemm`] (the default).
    #[inline(always)]
    fn single_channel_layer(
        _ops: &ConvOperands<'_>,
        _output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        None
    }
    /// A channel-multiplier-1 layer kernel of this implementation's own for
    /// this call (scratch: the kernel's), or `None` for the loops below.
    #[inline(always)]
    fn mult1_layer(
        _ops: &ConvOperands<'_>,
        _output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        None
    }
    /// A layer kernel of this implementation's own for this call, tried
    /// before [`depthwise`] is entered, so that its stack frame does not
    /// add to the loops' (DSP builds keep [`depthwise`] out of line for
    /// it), or `None` (the default).
    #[inline(always)]
    fn separate_layer(
        _ops: &ConvOperands<'_>,
        _ch_mult: usize,
        _output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        None
    }
    /// Whether one-input-channel layers no layer kernel takes run
    /// [`depthwise_single_gemm`] (else the loops below: implementations
    /// whose own kernel covers the usual shapes leave it out of flash).
    const SINGLE_GEMM: bool = true;
    /// Whether the shapes no layer kernel takes (depth multiplier above 1
    /// with several input channels, more taps than [`Taps`] holds, a zero
    /// point outside int8) run [`depthwise_simple`] (one output at a time,
    /// small) rather than the blocked loop of [`depthwise`].
    const SIMPLE_FALLBACK: bool = false;
    /// Whether the depthwise kernel should use [`DepthwiseMac::dw_block`].
    const PACKED_DEPTHWISE: bool;
    /// `[Σ_t run_t[j + l]·w_t[l]]` for lanes `l < 4` over the taps of
    /// `taps`, with `w` the block's unpacked weights (two words per tap:
    /// lanes 0,2 and 1,3). Errors unless `j + 4 ≤ taps.len()` and `w` has two
    /// words per tap.
    fn dw_block(
        taps: &Taps<'_>,
        j: usize,
        w: &[u32],
        init: [i32; 4],
    ) -> Result<[i32; 4], KernelError> {
        if j + 4 > taps.len() || w.len() < 2 * taps.count() {
            return Err(KernelError::InvalidArgument);
        }
        let lane = |w: u32, h: u32| (w >> (16 * h)) as u16 as i16 as i32;
        let mut a = init;
        for (run, w) in taps.runs().zip(w.as_chunks::<2>().0) {
            let x = run.get(j..j + 4).unwrap_or(&[0; 4]);
            a[0] = a[0].wrapping_add(x[0] as i32 * lane(w[0], 0));
            a[2] = a[2].wrapping_add(x[2] as i32 * lane(w[0], 1));
            a[1] = a[1].wrapping_add(x[1] as i32 * lane(w[1], 0));
            a[3] = a[3].wrapping_add(x[3] as i32 * lane(w[1], 1));
        }
        Ok(a)
    }
    /// [`DepthwiseMac::dw_block`] for blocks `0..blocks` of a pixel: block `b` uses
    /// `w[2·n·b ..]` (n = taps), starts from `init[4b..4b+4]` and ends in
    /// `out[4b..4b+4]`.
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        let per = 2 * taps.count();
        for b in 0..blocks {
            let (Some(wb), Some(ib), Some(ob)) = (
                w.get(per * b..per * (b + 1)),
                init.get(4 * b..4 * b + 4)
                    .and_then(|v| <[i32; 4]>::try_from(v).ok()),
                out.get_mut(4 * b..4 * b + 4),
            ) else {
                return Err(KernelError::InvalidArgument);
            };
            ob.copy_from_slice(&Self::dw_block(taps, 4 * b, wb, ib)?);
        }
        Ok(())
    }
    /// [`depthwise_packed`]'s whole pixel, requantized, where this
    /// implementation has a loop of its own for it: `out[4b + l] =
    /// fast_words(req[4b + l], dw_block(taps, 4b, w_b, full[4b..])[l])` for
    /// the `blocks` blocks (every channel fast, full int8 range, output
    /// offset folded: [`Requant::to_words`]). `Ok(false)`: not handled
    /// (the default), the caller runs [`DepthwiseMac::dw_row`] instead.
    /// `ctx`: scratch for the loop's operands.
    #[inline(always)]
    fn dw_pixel(
        _taps: &Taps<'_>,
        _w: &[u32],
        _full: &[i32],
        _req: &[Rq],
        _out: &mut [i8],
        _blocks: usize,
        _ctx: &mut [i32; CHUNK],
    ) -> Result<bool, KernelError> {
        Ok(false)
    }
    /// Four channels side by side: `acc[j] + x[j]·w[j]`.
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4];
}

/// The bounds both `asm!` versions of [`DepthwiseMac::dw_row`] rely on, checked once
/// per row: `n ≥ 1` tap runs of at least `4·blocks` bytes, `2n·blocks`
/// weight words and `4·blocks` accumulators in and out. Returns `n`.
#[cfg_attr(not(all(target_arch = "arm", feature = "dsp")), allow(dead_code))]
#[inline(always)]
pub(crate) fn dw_row_bounds(
    taps: &Taps<'_>,
    w: &[u32],
    init: &[i32],
    out: &[i32],
    blocks: usize,
) -> Result<usize, KernelError> {
    let n = taps.count();
    if n == 0
        || 4 * blocks > taps.len()
        || w.len() < 2 * n * blocks
        || init.len() < 4 * blocks
        || out.len() < 4 * blocks
    {
        return Err(KernelError::InvalidArgument);
    }
    Ok(n)
}

/// Output channels handled per pass of the depthwise kernels (their weight
/// sums and requantization parameters live in the kernel scratch).
pub(crate) const CHUNK: usize = 64;

/// Per-chunk constants of output channels `c0 .. c0 + cn`: `bias +
/// input_offset·Σ_taps w` and the decoded requantization.
pub(super) fn chunk_consts(
    ops: &ConvOperands<'_>,
    c0: usize,
    cn: usize,
    full: &mut [i32],
    req: &mut [Rq],
) -> KernelResult {
    let (cout, off, out_off) = (ops.g.output.c, ops.q.input_offset, ops.q.output_offset);
    let (filter, bias, mult, shift) = (ops.filter, ops.bias, ops.mult, ops.shift);
    for j in 0..cn {
        let c = c0 + j;
        // Σ over taps of w[tap, c] (IHWO: stride C_out).
        let (mut s, mut k) = (0i32, c);
        while let Some(&v) = filter.get(k) {
            s = s.wrapping_add(v as i32);
            k += cout.max(1);
        }
        let (Some(f), Some(r)) = (full.get_mut(j), req.get_mut(j)) else {
            return Err(BAD);
        };
        *f = bias
            .and_then(|b| b.get(c).copied())
            .unwrap_or(0)
            .wrapping_add(off.wrapping_mul(s));
        *r = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?).to_words(out_off);
    }
    Ok(())
}

/// `arm_depthwise_conv_s8`: per output pixel, blocks of four channels in
/// registers over the in-bounds taps (channel-contiguous NHWC inputs and
/// IHWO weights).
#[cfg_attr(all(feature = "dsp", not(feature = "mve")), inline(never))]
pub(crate) fn depthwise<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    ch_mult: usize,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let bias = ops.bias;
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let zp = q.input_offset.wrapping_neg();
    if M::SINGLE_GEMM
        && i.c == 1
        && kh * kw * M::PACK_WORDS <= 2 * PACK_IC
        && (-128..=127).contains(&zp)
    {
        if let Some(done) = M::single_channel_layer(ops, output, scratch) {
            return done;
        }
        return depthwise_single_gemm::<M>(ops, output, scratch);
    }
    if ch_mult == 1 && (-128..=127).contains(&zp) {
        if let Some(done) = M::mult1_layer(ops, output, scratch) {
            return done;
        }
        if M::PACKED_DEPTHWISE && kh * kw <= DW_MAX_TAPS {
            return depthwise_packed::<M>(ops, output, scratch);
        }
        // DSP builds run the rare kernels of more taps in the loop below
        // (one depthwise body less in flash).
        if !M::PACKED_POINTWISE {
            return depthwise_mult1::<M>(ops, output, scratch);
        }
    }
    if M::SIMPLE_FALLBACK {
        return depthwise_simple(ops, ch_mult, output);
    }
    let (cin, cout) = (i.c, o.c);
    let off = q.input_offset;
    let full = take::<i32, CHUNK>(&mut scratch)?;
    let req = take::<Rq, CHUNK>(&mut scratch)?;
    let mut c0 = 0;
    while c0 < cout {
        let cn = CHUNK.min(cout - c0);
        chunk_consts(ops, c0, cn, full, req)?;
        for b in 0..o.n {
            for oy in 0..o.h {
                let (ky0, ky1) = taps(oy, kh, g.stride.0, g.padding.0, g.dilation.0, i.h);
                for ox in 0..o.w {
                    let (kx0, kx1) = taps(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w);
                    let border = ky0 != 0 || ky1 != kh || kx0 != 0 || kx1 != kw;
                    let out_base = ((b * o.h + oy) * o.w + ox) * cout;
                    let mut j = 0;
                    while j < cn {
                        let n = 4.min(cn - j);
                        let c = c0 + j;
                        let mut acc = [0i32; 4];
                        let mut ws = [0i32; 4];
                        for ky in ky0..ky1 {
                            let y = oy * g.stride.0 + ky * g.dilation.0 - g.padding.0;
                            let mut xx =
                                (ox * g.stride.1 + kx0 * g.dilation.1).wrapping_sub(g.padding.1);
                            let mut wi = (ky * kw + kx0) * cout + c;
                            for _ in kx0..kx1 {
                                let xi = ((b * i.h + y) * i.w + xx) * cin;
                                let w4 = lanes(filter, wi, n)?;
                                let x4 = if ch_mult == 1 {
                                    lanes(input, xi + c, n)?
                                } else {
                                    let mut v = [0i8; 4];
                                    for (l, d) in v.iter_mut().enumerate().take(n) {
                                        let ic = (c + l).checked_div(ch_mult).ok_or(BAD)?;
                                        *d = *input.get(xi + ic).ok_or(BAD)?;
                                    }
                                    v
                                };
                                acc = M::mul4(acc, &x4, &w4);
                                if border {
                                    for (s, &w) in ws.iter_mut().zip(&w4) {
                                        *s = s.wrapping_add(w as i32);
                                    }
                                }
                                xx += g.dilation.1;
                                wi += cout;
                            }
                        }
                        for l in 0..n {
                            let (Some(&f), Some(r)) = (full.get(j + l), req.get(j + l)) else {
                                return Err(BAD);
                            };
                            let r = &Requant::from_words(r);
                            // Border pixels: bias + offset·(in-bounds weights only).
                            let base = if border {
                                bias.and_then(|b| b.get(c + l).copied())
                                    .unwrap_or(0)
                                    .wrapping_add(off.wrapping_mul(ws[l]))
                            } else {
                                f
                            };
                            put(
                                output,
                                out_base + c + l,
                                q.out(base.wrapping_add(acc[l]), r),
                            )?;
                        }
                        j += 4;
                    }
                }
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// Any depthwise convolution, one output at a time: `bias + Σ (x +
/// input_offset)·w` over the in-bounds taps in wrapping `i32` (CMSIS-NN's
/// sum), then [`ConvQuant::finish`]'s requantization. The fallback of
/// implementations whose layer kernels cover the usual shapes
/// ([`DepthwiseMac::SIMPLE_FALLBACK`]): small in flash, slow.
pub(crate) fn depthwise_simple(
    ops: &ConvOperands<'_>,
    ch_mult: usize,
    output: &mut [i8],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let mut oi = 0;
    for b in 0..o.n {
        for oy in 0..o.h {
            for ox in 0..o.w {
                for c in 0..o.c {
                    let ic = c.checked_div(ch_mult).ok_or(BAD)?;
                    let mut acc = ops.bias.and_then(|b| b.get(c).copied()).unwrap_or(0);
                    for ky in 0..kh {
                        let Some(y) =
                            Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h)
                        else {
                            continue;
                        };
                        for kx in 0..kw {
                            let Some(x) =
                                Window::tap(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w)
                            else {
                                continue;
                            };
                            let xv = *input.get(((b * i.h + y) * i.w + x) * i.c + ic).ok_or(BAD)?;
                            let wv = *filter.get((ky * kw + kx) * o.c + c).ok_or(BAD)?;
                            acc = acc.wrapping_add(
                                (xv as i32)
                                    .wrapping_add(q.input_offset)
                                    .wrapping_mul(wv as i32),
                            );
                        }
                    }
                    let r =
                        Requant::new(*ops.mult.get(c).ok_or(BAD)?, *ops.shift.get(c).ok_or(BAD)?);
                    put(output, oi, q.out(acc, &r))?;
                    oi += 1;
                }
            }
        }
    }
    Ok(())
}

/// Depthwise with depth multiplier 1: output channel `c` reads input
/// channel `c`, so four adjacent channels are one word of the input and one
/// word of the weights per tap. Padding taps read the input zero point
/// (offset-corrected 0), so every pixel runs the same full tap loop.
pub(crate) fn depthwise_mult1<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ch = o.c;
    let off = q.input_offset;
    let zp = off.wrapping_neg() as i8;
    let zpw = [zp; 4];
    // Wrapping: the steps are used only for interior pixels, where every
    // tap is inside the input and so every step product is below its length.
    let (xstep, ystep) = (
        g.dilation.1.wrapping_mul(ch),
        g.dilation.0.wrapping_mul(i.w).wrapping_mul(ch),
    );
    let full = take::<i32, CHUNK>(&mut scratch)?;
    let req = take::<Rq, CHUNK>(&mut scratch)?;
    let accs = take::<i32, CHUNK>(&mut scratch)?;
    let mut c0 = 0;
    while c0 < ch {
        let cn = CHUNK.min(ch - c0);
        chunk_consts(ops, c0, cn, full, req)?;
        for b in 0..o.n {
            for oy in 0..o.h {
                let (ky0, ky1) = taps(oy, kh, g.stride.0, g.padding.0, g.dilation.0, i.h);
                for ox in 0..o.w {
                    let (kx0, kx1) = taps(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w);
                    let interior = ky0 == 0 && ky1 == kh && kx0 == 0 && kx1 == kw;
                    // First tap's position (meaningful when interior).
                    let y0 = (oy * g.stride.0).wrapping_sub(g.padding.0);
                    let x0 = (ox * g.stride.1).wrapping_sub(g.padding.1);
                    let out_base = ((b * o.h + oy) * o.w + ox) * ch + c0;
                    let mut j = 0;
                    while j < cn {
                        let n = 4.min(cn - j);
                        let c = c0 + j;
                        let mut acc = [0i32; 4];
                        if n == 4 && interior {
                            // Every tap is inside: the input index of tap
                            // (ky, kx) is at most ((b·H + H−1)·W + W−1)·C + c,
                            // and c + 4 ≤ C, so `x0 + …` stays inside
                            // `input` (length N·H·W·C, checked by the caller);
                            // likewise weight index (kh·kw − 1)·C + c + 4 ≤
                            // kh·kw·C = filter.len().
                            let x0 = ((b * i.h + y0) * i.w + x0) * ch + c;
                            let (xp, wp) = (input.as_ptr(), filter.as_ptr());
                            let mut wi = c;
                            for ky in 0..kh {
                                let mut xi = x0 + ky * ystep;
                                for _ in 0..kw {
                                    // SAFETY: in bounds as shown above.
                                    let (x4, w4) = unsafe { (at4(xp.add(xi)), at4(wp.add(wi))) };
                                    acc = M::mul4(acc, x4, w4);
                                    xi = xi.wrapping_add(xstep);
                                    wi += ch;
                                }
                            }
                        } else {
                            let mut wi = c;
                            for ky in 0..kh {
                                let y =
                                    (oy * g.stride.0 + ky * g.dilation.0).wrapping_sub(g.padding.0);
                                let row_base = (b * i.h).wrapping_add(y).wrapping_mul(i.w);
                                for kx in 0..kw {
                                    let xx = (ox * g.stride.1 + kx * g.dilation.1)
                                        .wrapping_sub(g.padding.1);
                                    let inside = y < i.h && xx < i.w;
                                    let xi =
                                        row_base.wrapping_add(xx).wrapping_mul(ch).wrapping_add(c);
                                    if n == 4 {
                                        let x4 = if inside { four(input, xi)? } else { &zpw };
                                        acc = M::mul4(acc, x4, four(filter, wi)?);
                                    } else {
                                        let x4 = if inside { lanes(input, xi, n)? } else { zpw };
                                        acc = M::mul4(acc, &x4, &lanes(filter, wi, n)?);
                                    }
                                    wi += ch;
                                }
                            }
                        }
                        for (d, a) in accs.iter_mut().skip(j).zip(acc).take(n) {
                            *d = a;
                        }
                        j += 4;
                    }
                    let dst = output.get_mut(out_base..out_base + cn).ok_or(BAD)?;
                    finish_into(q, accs, full, req, dst);
                }
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// Scratch words (8 bytes) of the depthwise kernels: the most any variant
/// takes ([`depthwise_packed`]: per-chunk constants, accumulators and
/// unpacked weights, 2,688 B; [`depthwise_single_gemm`]: windows, weight
/// columns and their packed form, 2,560 B).
pub(crate) const DEPTHWISE_SCRATCH_WORDS: usize = {
    let packed = (CHUNK + 4 * CHUNK + CHUNK + DW_PACK_WORDS) / 2;
    let gemm = (PATCH_BYTES / 4 + PACK_IC + 2 * PACK_IC) / 2;
    if packed > gemm {
        packed
    } else {
        gemm
    }
};
