//! `arm_depthwise_conv_s8` (`cortex_m::quantized_depthwise_conv2d`): the
//! operator's loop structures, generic over the building blocks of
//! [`DepthwiseMac`], whose four implementations live beside them:
//! `scalar.rs` (`Scalar`), `dsp.rs` (`Dsp`), `mve.rs` (`Mve`) and `x86.rs`
//! (`X86`); `tests.rs` checks every path against one reference. Offsets
//! are folded as in the convolution (see `conv`). One input channel
//! (DS-CNN's first layer) runs as a matrix product on the convolution's
//! building blocks ([`ConvMac`]).
//!
//! Over 800 lines on purpose: every loop structure here reads its windows
//! through [`Taps`], whose unchecked reads are sound only under the
//! invariants established in this file (run lengths checked on push and
//! fill); keeping the table and all its readers together keeps that
//! `SAFETY` argument in one place.

use super::common::{at4, four, lanes, put, runs, take, taps, ConvOperands};
use super::conv::{ConvMac, PACK_IC};
use super::requant::{finish_acc, finish_into, Requant, Rq};
use super::{Active, ConvQuant, Window, BAD};
use crate::error::{KernelError, KernelResult};
use core::marker::PhantomData;

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

mod dsp;
mod mve;
mod scalar;
#[cfg(test)]
mod tests;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod x86;

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

/// Per-chunk constants: `bias + offset·Σ_taps w` and decoded requantization.
#[allow(clippy::too_many_arguments)]
fn chunk_consts(
    c0: usize,
    cn: usize,
    cout: usize,
    (off, out_off): (i32, i32),
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    full: &mut [i32; CHUNK],
    req: &mut [Rq; CHUNK],
) -> KernelResult {
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
pub(crate) fn depthwise<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    ch_mult: usize,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let zp = q.input_offset.wrapping_neg();
    if i.c == 1 && kh * kw * M::PACK_WORDS <= 2 * PACK_IC && (-128..=127).contains(&zp) {
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
        chunk_consts(
            c0,
            cn,
            cout,
            (off, q.output_offset),
            filter,
            bias,
            mult,
            shift,
            full,
            req,
        )?;
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
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
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
        chunk_consts(
            c0,
            cn,
            ch,
            (off, q.output_offset),
            filter,
            bias,
            mult,
            shift,
            full,
            req,
        )?;
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

/// Words of unpacked depthwise weights on the stack (1152 B: a 3×3 kernel
/// over 64 channels).
const DW_PACK_WORDS: usize = 288;

/// Depthwise multiplier 1 for [`DepthwiseMac::PACKED_DEPTHWISE`] implementations:
/// per channel chunk the weights are unpacked once into int16 lanes
/// (per four-channel block and tap: channels 0,2 and 1,3); per output pixel
/// a table holds every tap's input run (or a run of zero points for padding
/// taps), so border and interior pixels run the same loop
/// ([`DepthwiseMac::dw_block`]: one input word, two unpacks, four `SMLAxy` per tap).
pub(crate) fn depthwise_packed<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh * kw;
    if ntaps > DW_MAX_TAPS {
        // More taps than the table holds: the dispatch's other loops.
        return depthwise::<M>(ops, 1, output, scratch);
    }
    let ch = o.c;
    let off = q.input_offset;
    let zpbuf = [off.wrapping_neg() as i8; CHUNK];
    // Channels per chunk: whole blocks of four whose unpacked weights fit.
    let chunk = CHUNK.min(4 * (DW_PACK_WORDS / (2 * ntaps.max(1))));
    if chunk == 0 {
        return Err(BAD);
    }
    let full = take::<i32, CHUNK>(&mut scratch)?;
    let req = take::<Rq, CHUNK>(&mut scratch)?;
    let accs = take::<i32, CHUNK>(&mut scratch)?;
    let wq = take::<u32, DW_PACK_WORDS>(&mut scratch)?;
    let mut c0 = 0;
    while c0 < ch {
        let cn = chunk.min(ch - c0);
        chunk_consts(
            c0,
            cn,
            ch,
            (off, q.output_offset),
            filter,
            bias,
            mult,
            shift,
            full,
            req,
        )?;
        let blocks = cn / 4;
        let fast = req
            .iter()
            .take(cn)
            .all(|r| Requant::from_words(r).is_fast());
        // Whole blocks, fast channels, the usual clamp and output offset.
        let quick = fast
            && cn == 4 * blocks
            && q.act_min == -128
            && q.act_max == 127
            && (-128..=127).contains(&q.output_offset);
        let mut taps = Taps::new(cn);
        // Input offset of every tap from the kernel's first tap (row-major).
        let mut offs = [0usize; DW_MAX_TAPS];
        let mut slots = offs.iter_mut();
        for ky in 0..kh {
            for kx in 0..kw {
                let d = slots.next().ok_or(BAD)?;
                *d = (ky * g.dilation.0 * i.w + kx * g.dilation.1) * ch;
            }
        }
        let offs = offs.get(..ntaps).ok_or(BAD)?;
        for (blk, dst) in wq
            .chunks_exact_mut(2 * ntaps.max(1))
            .take(blocks)
            .enumerate()
        {
            for (t, d) in dst.as_chunks_mut::<2>().0.iter_mut().enumerate() {
                let w = super::isa::dsp::word(four(filter, t * ch + c0 + 4 * blk)?);
                *d = [super::isa::dsp::sxtb16(w), super::isa::dsp::sxtb16_ror8(w)];
            }
        }
        for b in 0..o.n {
            for oy in 0..o.h {
                let y0 = (oy * g.stride.0).wrapping_sub(g.padding.0);
                let rows = in_bounds(y0, kh, g.dilation.0, i.h);
                for ox in 0..o.w {
                    let x0 = (ox * g.stride.1).wrapping_sub(g.padding.1);
                    let cols = in_bounds(x0, kw, g.dilation.1, i.w);
                    // Which taps are inside: bit t for tap t (row-major).
                    let mut inside = 0u32;
                    for ky in (0..kh).rev() {
                        let c = if rows >> ky & 1 != 0 { cols } else { 0 };
                        inside = inside.wrapping_shl(kw as u32) | c;
                    }
                    // Index of the first tap (wrapping: it may be padding;
                    // then only the inside taps' sums are meaningful).
                    let base = (b * i.h)
                        .wrapping_add(y0)
                        .wrapping_mul(i.w)
                        .wrapping_add(x0)
                        .wrapping_mul(ch)
                        .wrapping_add(c0);
                    taps.fill(input, &zpbuf, base, offs, inside)?;
                    let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                    let dst = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                    if quick && M::dw_pixel(&taps, wq, full, req, dst, blocks, accs)? {
                        continue;
                    }
                    M::dw_row(&taps, wq, full, accs, blocks)?;
                    // Channel tail (C % 4): plain loop.
                    for l in 4 * blocks..cn {
                        let mut a = *full.get(l).ok_or(BAD)?;
                        for (t, run) in taps.runs().enumerate() {
                            let x = *run.get(l).ok_or(BAD)? as i32;
                            let w = *filter.get(t * ch + c0 + l).ok_or(BAD)? as i32;
                            a = a.wrapping_add(x * w);
                        }
                        *accs.get_mut(l).ok_or(BAD)? = a;
                    }
                    finish_acc(q, accs, req, fast, dst);
                }
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// Most taps a [`Taps`] table holds: 5x5 kernels (25 taps) and smaller, and
/// no more than [`DW_PACK_WORDS`] admits (36) or the 32 bits of the inside
/// masks of [`Taps::fill`]. The table lives on the stack under every
/// depthwise call (a pointer a tap, plus the tap offsets), so
/// it is sized for the kernels models use, not for 32: 25 keeps a DS-CNN
/// inference below its 2 KiB stack target on Cortex-M4; larger kernels
/// take [`depthwise`]'s other loops.
const DW_MAX_TAPS: usize = if DW_PACK_WORDS / 8 < 25 {
    DW_PACK_WORDS / 8
} else {
    25
};

/// The input runs of one output pixel's taps: every run has at least `len`
/// values (checked on push and fill), which is what lets
/// [`DepthwiseMac::dw_block`] read four values at any block offset below
/// `len` without bounds checks. Only the runs' start pointers are kept (the
/// runs are `len` long from there): a second table of slices took 200 B
/// more of every depthwise call's stack.
pub(crate) struct Taps<'a> {
    /// Start of run `t` for `t < n`, borrowed from an `&'a [i8]` of at
    /// least `len` values; one slot more than the runs: the slot after the
    /// last run is null (the end marker of the DSP pixel loop).
    ptrs: [*const i8; DW_MAX_TAPS + 1],
    n: usize,
    len: usize,
    _runs: PhantomData<&'a [i8]>,
}

impl<'a> Taps<'a> {
    #[inline(always)]
    pub(crate) fn new(len: usize) -> Self {
        Taps {
            ptrs: [core::ptr::null(); DW_MAX_TAPS + 1],
            n: 0,
            len,
            _runs: PhantomData,
        }
    }

    /// Appends one run (the tests build tables with it; the kernel uses
    /// [`Taps::fill`]).
    #[cfg(test)]
    pub(crate) fn push(&mut self, run: &'a [i8]) -> KernelResult {
        if run.len() < self.len {
            return Err(BAD);
        }
        // The last slot is the end marker: at most DW_MAX_TAPS runs.
        if self.n >= DW_MAX_TAPS {
            return Err(BAD);
        }
        let Some(p) = self.ptrs.get_mut(self.n) else {
            return Err(BAD);
        };
        *p = run.as_ptr();
        self.n += 1;
        if let Some(end) = self.ptrs.get_mut(self.n) {
            *end = core::ptr::null();
        }
        Ok(())
    }

    /// The runs, `len` values each.
    #[inline(always)]
    pub(crate) fn runs(&self) -> impl Iterator<Item = &'a [i8]> + '_ {
        let len = self.len;
        self.ptrs.iter().take(self.n).map(move |&p| {
            // SAFETY: `ptrs[..n]` were set only by `push` and `fill`, each
            // from `run.as_ptr()` of a `run: &'a [i8]` they checked holds at
            // least `len` values (`len` never changes after `new`), so `len`
            // values from `p` are initialised, in one allocation, and shared-
            // borrowed (not mutated) for `'a`. Tested by
            // `taps_fill_picks_input_runs_and_padding` and `taps_push_keeps_len_values_of_each_run`.
            unsafe { core::slice::from_raw_parts(p, len) }
        })
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.n
    }

    /// Replaces the runs by one per offset of `offs`: where bit `t` of
    /// `inside` is set, `input[base + offs[t] ..]` (wrapping index; a run
    /// outside `input` is an error), else `zp` (padding). One out-of-line
    /// loop instead of a window walk per tap in the kernel body (about 50
    /// instructions per tap there on Cortex-M4).
    #[inline(never)]
    pub(crate) fn fill(
        &mut self,
        input: &'a [i8],
        zp: &'a [i8],
        base: usize,
        offs: &[usize],
        mut inside: u32,
    ) -> KernelResult {
        let len = self.len;
        if zp.len() < len {
            return Err(BAD);
        }
        let mut n = 0;
        // The last slot stays for the end marker.
        for (p, &o) in self.ptrs.iter_mut().take(DW_MAX_TAPS).zip(offs) {
            let run = if inside & 1 != 0 {
                let at = base.wrapping_add(o);
                input.get(at..at.wrapping_add(len)).ok_or(BAD)?
            } else {
                zp
            };
            inside >>= 1;
            *p = run.as_ptr();
            n += 1;
        }
        self.n = n;
        if let Some(end) = self.ptrs.get_mut(n) {
            *end = core::ptr::null();
        }
        Ok(())
    }

    /// Start pointers of the runs (each run at least [`Taps::len`] long),
    /// followed in memory by a null pointer.
    #[cfg_attr(not(all(target_arch = "arm", feature = "dsp")), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn ptrs(&self) -> &[*const i8] {
        self.ptrs.get(..self.n).unwrap_or(&[])
    }
}

/// Bit `k` set where tap `k` of `k_n` (first at `first`, wrapping, then
/// every `dil`) lands inside `0..size` (`k_n ≤ 32`).
#[inline(always)]
fn in_bounds(first: usize, k_n: usize, dil: usize, size: usize) -> u32 {
    let mut m = 0u32;
    for k in (0..k_n).rev() {
        m = (m << 1) | u32::from(first.wrapping_add(k * dil) < size);
    }
    m
}

/// Bytes of gathered input windows [`depthwise_single_gemm`] keeps.
pub(crate) const PATCH_BYTES: usize = 1024;

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

/// Depthwise with one input channel as a matrix product, for
/// [`DepthwiseMac::PACKED_POINTWISE`] implementations: each output pixel's window
/// (padding taps = the input zero point, whose offset-corrected value is 0;
/// length rounded up to whole groups of four with zeros) is one row, each
/// output channel's taps one column, and the pointwise machinery
/// ([`DepthwiseMac::pack4`], [`DepthwiseMac::dot_1x4`]) runs four channels against a block of
/// gathered windows at a time.
pub(crate) fn depthwise_single_gemm<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh * kw;
    let len = ntaps.div_ceil(4) * 4;
    let cout = o.c;
    let off = q.input_offset;
    let zp = off.wrapping_neg() as i8;
    let per_block = (PATCH_BYTES / len.max(1)).max(1);
    let pixels = o.n * o.h * o.w;
    let patches = take::<i8, PATCH_BYTES>(&mut scratch)?;
    // Weight columns ([ConvMac::pack4]'s input), or with ConvMac::QUAD the
    // quad loop's operands (the weights are packed straight from `filter`).
    let mid = take::<u64, { PACK_IC / 2 }>(&mut scratch)?;
    let buf = take::<u32, { 2 * PACK_IC }>(&mut scratch)?;
    if !M::QUAD {
        // Taps past the last (up to a multiple of four) weigh 0.
        mid.fill(0);
    }
    let packed = buf.get_mut(..M::PACK_WORDS * len).ok_or(BAD)?;
    let mut p0 = 0;
    while p0 < pixels {
        let pn = per_block.min(pixels - p0);
        for (k, patch) in patches.chunks_exact_mut(len.max(1)).take(pn).enumerate() {
            let p = p0 + k;
            let (b, oy, ox) = (
                p / (o.h * o.w).max(1),
                (p / o.w.max(1)) % o.h.max(1),
                p % o.w.max(1),
            );
            // Padding taps hold the zero point, taps past the last 0.
            let (taps_in, tail) = patch.split_at_mut_checked(ntaps).ok_or(BAD)?;
            taps_in.fill(zp);
            tail.fill(0);
            // The in-bounds taps of each kernel row are one run of the
            // input row (copied at once when undilated).
            let (kx0, kx1) = taps(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w);
            for ky in 0..kh {
                let Some(y) = Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h)
                else {
                    continue;
                };
                if kx1 <= kx0 {
                    continue;
                }
                let row0 = (b * i.h + y) * i.w;
                if g.dilation.1 == 1 {
                    let x0 = (ox * g.stride.1 + kx0).wrapping_sub(g.padding.1);
                    let src = input.get(row0 + x0..row0 + x0 + (kx1 - kx0)).ok_or(BAD)?;
                    let dst = taps_in.get_mut(ky * kw + kx0..ky * kw + kx1).ok_or(BAD)?;
                    // A byte loop: runs are a few taps long (a memcpy call
                    // cost more than the copy).
                    for (d, &v) in dst.iter_mut().zip(src) {
                        *d = v;
                    }
                } else {
                    for kx in kx0..kx1 {
                        let x = ox * g.stride.1 + kx * g.dilation.1 - g.padding.1;
                        *taps_in.get_mut(ky * kw + kx).ok_or(BAD)? =
                            *input.get(row0 + x).ok_or(BAD)?;
                    }
                }
            }
        }
        let mut oc = 0;
        while oc < cout {
            let n = 4.min(cout - oc);
            let mut init4 = [0i32; 4];
            let mut req4 = [Requant::new(0, 0); 4];
            if M::QUAD {
                // Pack the four channels' taps straight from the IHWO weights
                // (ConvMac::pack4's layout: per group of four taps and channel,
                // taps 0,2 and 1,3 as int16 lanes; taps past the last weigh 0).
                for (gi, o) in packed.as_chunks_mut::<8>().0.iter_mut().enumerate() {
                    let t0 = 4 * gi;
                    if n == 4 && t0 + 4 <= ntaps {
                        // The quad's weights of four taps (one word each),
                        // transposed into each channel's int16 pairs (taps
                        // 0,2 and 1,3).
                        let s = filter.get(t0 * cout + oc..).ok_or(BAD)?;
                        let (wa, wb) = (
                            super::isa::dsp::word(four(s, 0)?),
                            super::isa::dsp::word(four(s, cout)?),
                        );
                        let (wc, wd) = (
                            super::isa::dsp::word(four(s, 2 * cout)?),
                            super::isa::dsp::word(four(s, 3 * cout)?),
                        );
                        let (ae, ao) = (
                            super::isa::dsp::sxtb16(wa),
                            super::isa::dsp::sxtb16_ror8(wa),
                        );
                        let (be, bo) = (
                            super::isa::dsp::sxtb16(wb),
                            super::isa::dsp::sxtb16_ror8(wb),
                        );
                        let (ce, co) = (
                            super::isa::dsp::sxtb16(wc),
                            super::isa::dsp::sxtb16_ror8(wc),
                        );
                        let (de, dd) = (
                            super::isa::dsp::sxtb16(wd),
                            super::isa::dsp::sxtb16_ror8(wd),
                        );
                        let lo = |x: u32, y: u32| (x & 0xffff) | (y << 16);
                        let hi = |x: u32, y: u32| (x >> 16) | (y & 0xffff_0000);
                        *o = [
                            lo(ae, ce),
                            lo(be, de),
                            lo(ao, co),
                            lo(bo, dd),
                            hi(ae, ce),
                            hi(be, de),
                            hi(ao, co),
                            hi(bo, dd),
                        ];
                        for (l, pair) in o.as_chunks::<2>().0.iter().enumerate() {
                            let one = 0x0001_0001;
                            let s = super::isa::dsp::smlad(pair[0], one, 0);
                            init4[l] =
                                init4[l].wrapping_add(super::isa::dsp::smlad(pair[1], one, s));
                        }
                        continue;
                    }
                    // A channel tail or the last, partial group: per weight.
                    for l in 0..4 {
                        let c = oc + l.min(n - 1);
                        let mut v = [0i32; 4];
                        for (k, d) in v.iter_mut().enumerate().take(ntaps - t0) {
                            *d = *filter.get((t0 + k) * cout + c).ok_or(BAD)? as i32;
                        }
                        init4[l] = init4[l].wrapping_add(v[0] + v[1] + v[2] + v[3]);
                        o[2 * l] = super::isa::dsp::pack16(v[0], v[2]);
                        o[2 * l + 1] = super::isa::dsp::pack16(v[1], v[3]);
                    }
                }
            } else {
                let cols: &mut [[i8; PACK_IC]] =
                    bytemuck::try_cast_slice_mut(&mut mid[..]).map_err(|_| BAD)?;
                for (l, (col, sum)) in cols.iter_mut().zip(init4.iter_mut()).enumerate() {
                    let c = oc + l.min(n - 1);
                    for (t, d) in col.iter_mut().enumerate().take(ntaps) {
                        *d = *filter.get(t * cout + c).ok_or(BAD)?;
                        *sum = sum.wrapping_add(*d as i32);
                    }
                }
                let [c0, c1, c2, c3, ..] = cols else {
                    return Err(BAD);
                };
                let (Some(c0), Some(c1), Some(c2), Some(c3)) =
                    (c0.get(..len), c1.get(..len), c2.get(..len), c3.get(..len))
                else {
                    return Err(BAD);
                };
                M::pack4([c0, c1, c2, c3], packed);
            }
            for l in 0..4 {
                let c = oc + l.min(n - 1);
                init4[l] = bias
                    .and_then(|b| b.get(c).copied())
                    .unwrap_or(0)
                    .wrapping_add(off.wrapping_mul(init4[l]));
                req4[l] = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?);
            }
            let fast4 = req4.iter().all(Requant::is_fast);
            let req4 = req4.map(|r| r.to_words(q.output_offset));
            let rows = patches.get(..pn * len).ok_or(BAD)?;
            if M::QUAD
                && n == 4
                && fast4
                && q.act_min == -128
                && q.act_max == 127
                && (-128..=127).contains(&q.output_offset)
            {
                let out = output.get_mut(p0 * cout + oc..).ok_or(BAD)?;
                let ctx: &mut [[i32; 4]] =
                    bytemuck::try_cast_slice_mut(&mut mid[..]).map_err(|_| BAD)?;
                let ctx = ctx.try_into().map_err(|_| BAD)?;
                M::pointwise_quad(rows, packed, init4, &req4, out, cout, ctx)?;
            } else {
                for (k, patch) in runs(rows, len).enumerate() {
                    let acc = M::dot_1x4(patch, packed, init4);
                    let ob = (p0 + k) * cout + oc;
                    let dst = output.get_mut(ob..ob + n).ok_or(BAD)?;
                    finish_acc(q, &acc, &req4, fast4, dst);
                }
            }
            oc += 4;
        }
        p0 += pn;
    }
    Ok(())
}
