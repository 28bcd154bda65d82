//! [`DepthwiseMac`] for x86-64 hosts: one-input-channel layers (DS-CNN's
//! first) as SSE2 matrix products ([`single_channel`]: the pointwise
//! layer's [`dot4`] over gathered windows); [`Scalar`]'s building blocks
//! for the other depthwise loops.
#![cfg_attr(feature = "dsp", allow(dead_code))]

mod avx2;

use super::super::common::ConvOperands;
use super::super::isa::x86::avx2 as avx2_isa;
use super::super::isa::x86::{
    add32, dot4, dot8, finish4, madd16, pack16, pack4, pack8, unpackhi8, unpacklo8, widen, zero,
    Rq4, MAX_LEN, PACK_WORDS,
};
use super::super::isa::{Scalar, X86};
use super::super::requant::Requant;
use super::super::{Window, BAD};
use super::{DepthwiseMac, Taps};
use crate::error::{KernelError, KernelResult};
use core::arch::x86_64::__m128i;

impl DepthwiseMac for X86 {
    const PACKED_DEPTHWISE: bool = <Scalar as DepthwiseMac>::PACKED_DEPTHWISE;

    #[inline(always)]
    fn single_channel_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        if avx2_isa::detected() {
            // SAFETY: the CPU runs AVX2 (detected), all
            // `avx2::single_channel` requires.
            if let Some(done) = unsafe { avx2::single_channel(ops, output) } {
                return Some(done);
            }
        }
        single_channel(ops, output)
    }

    #[inline(always)]
    fn mult1_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        if avx2_isa::detected() {
            // SAFETY: the CPU runs AVX2 (detected), all `avx2::mult1`
            // requires.
            if let Some(done) = unsafe { avx2::mult1(ops, output) } {
                return Some(done);
            }
        }
        mult1(ops, output)
    }

    depthwise_blocks_from!(Scalar: dw_block, dw_row, mul4);
}

/// Bytes of gathered windows [`single_channel`] keeps on the stack.
const WINDOW_BYTES: usize = 4096;

/// Output channels `oc..oc + 4` of a one-input-channel layer (a short last
/// group repeats its last channel): their weight columns gathered into
/// `cols` and packed ([`pack4`]); returns their constant terms (`bias +
/// offset·Σw`), multipliers and shifts.
#[allow(clippy::type_complexity)]
fn gather(
    ops: &ConvOperands<'_>,
    cols: &mut [[i8; MAX_LEN]; 4],
    ntaps: usize,
    oc: usize,
    packed: &mut [__m128i],
) -> Result<([i32; 4], [i32; 4], [i32; 4]), KernelError> {
    let cout = ops.g.output.c;
    let n = 4.min(cout.saturating_sub(oc)).max(1);
    let (mut init4, mut mult4, mut shift4) = ([0i32; 4], [0i32; 4], [0i32; 4]);
    for (l, col) in cols.iter_mut().enumerate() {
        let c = oc + l.min(n - 1);
        let mut s = 0i32;
        for (t, d) in col.iter_mut().enumerate().take(ntaps) {
            *d = *ops.filter.get(t * cout + c).ok_or(BAD)?;
            s = s.wrapping_add(*d as i32);
        }
        init4[l] = ops
            .bias
            .and_then(|b| b.get(c).copied())
            .unwrap_or(0)
            .wrapping_add(ops.q.input_offset.wrapping_mul(s));
        mult4[l] = *ops.mult.get(c).ok_or(BAD)?;
        shift4[l] = *ops.shift.get(c).ok_or(BAD)?;
    }
    let [c0, c1, c2, c3] = &*cols;
    let (Some(c0), Some(c1), Some(c2), Some(c3)) = (
        c0.get(..ntaps),
        c1.get(..ntaps),
        c2.get(..ntaps),
        c3.get(..ntaps),
    ) else {
        return Err(BAD);
    };
    pack4([c0, c1, c2, c3], packed);
    Ok((init4, mult4, shift4))
}

/// The window of output pixel `p` (batch, row and column of `ops.g.output`
/// in that order) of a one-input-channel layer, row by row into `win`,
/// taps outside the input as the zero point `zp`. `xs` holds at least
/// `kw` column positions (computed once per window, not once per row).
/// Shared by the SSE2 and AVX2 first-layer kernels.
#[inline]
pub(super) fn gather_window(
    ops: &ConvOperands<'_>,
    p: usize,
    xs: &mut [Option<usize>],
    win: &mut [i8],
    zp: i8,
) -> KernelResult {
    let (g, input) = (&ops.g, ops.input);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let (b, oy, ox) = (
        p / (o.h * o.w).max(1),
        (p / o.w.max(1)) % o.h.max(1),
        p % o.w.max(1),
    );
    for (kx, d) in xs.iter_mut().enumerate().take(kw) {
        *d = Window::tap(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w);
    }
    let mut t = 0;
    for ky in 0..kh {
        let y = Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h);
        for &x in xs.iter().take(kw) {
            let v = match (y, x) {
                (Some(y), Some(x)) => *input.get((b * i.h + y) * i.w + x).ok_or(BAD)?,
                _ => zp,
            };
            *win.get_mut(t).ok_or(BAD)? = v;
            t += 1;
        }
    }
    Ok(())
}

/// Depthwise with one input channel as a matrix product: each output
/// pixel's window (padding taps = the input zero point, whose
/// offset-corrected value is 0) is one row, zero-filled to whole chunks of
/// 16; four output channels' taps are the packed rows of [`dot4`], run over
/// a block of gathered windows. `None` (the generic loops run) for windows
/// of more than [`MAX_LEN`] taps. The caller has checked that the input
/// zero point is an int8 value.
#[inline(never)]
pub(crate) fn single_channel(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (o, (kh, kw)) = (g.output, g.kernel);
    let ntaps = kh.checked_mul(kw)?;
    let len = ntaps.div_ceil(16) * 16;
    let cout = o.c;
    if ntaps == 0 || len > MAX_LEN || cout == 0 {
        return None;
    }
    let zp = q.input_offset.wrapping_neg() as i8;
    let per_block = WINDOW_BYTES / len;
    let pixels = o.n * o.h * o.w;
    let mut windows = [0i8; WINDOW_BYTES];
    let (mut packed, mut packed_hi) = ([zero(); PACK_WORDS], [zero(); PACK_WORDS]);
    let mut cols = [[0i8; MAX_LEN]; 4];
    let mut xs = [None; MAX_LEN];
    Some((|| {
        let packed = packed.get_mut(..8 * (len / 16)).ok_or(BAD)?;
        let packed_hi = packed_hi.get_mut(..8 * (len / 16)).ok_or(BAD)?;
        let mut p0 = 0;
        while p0 < pixels {
            let pn = per_block.min(pixels - p0);
            for (k, win) in windows.chunks_exact_mut(len).take(pn).enumerate() {
                gather_window(ops, p0 + k, &mut xs, win, zp)?;
            }
            let mut oc = 0;
            while oc < cout {
                let n = 4.min(cout - oc);
                let (init4, mult4, shift4) = gather(ops, &mut cols, ntaps, oc, packed)?;
                let rq = Rq4::new(q, mult4, shift4);
                if let (Some(rq), true) = (&rq, cout - oc >= 8) {
                    // Eight channels per pass when the next four requantize
                    // in vector form too.
                    let (init_b, mult_b, shift_b) =
                        gather(ops, &mut cols, ntaps, oc + 4, packed_hi)?;
                    if let Some(rq_b) = Rq4::new(q, mult_b, shift_b) {
                        let (i0, i1) = (bytemuck::cast(init4), bytemuck::cast(init_b));
                        for (k, win) in windows.chunks_exact(len).take(pn).enumerate() {
                            let (a0, a1) = dot8(win, packed, packed_hi);
                            let v =
                                rq.clamp16_2(rq.offset(add32(a0, i0)), rq_b.offset(add32(a1, i1)));
                            let ob = (p0 + k) * cout + oc;
                            let dst = output.get_mut(ob..ob + 8).ok_or(BAD)?;
                            *<&mut [i8; 8]>::try_from(dst).map_err(|_| BAD)? = pack8(v);
                        }
                        oc += 8;
                        continue;
                    }
                }
                let req4: [Requant; 4] =
                    core::array::from_fn(|l| Requant::new(mult4[l], shift4[l]));
                let fast = req4.iter().all(Requant::is_fast);
                let init4 = bytemuck::cast(init4);
                for (k, win) in windows.chunks_exact(len).take(pn).enumerate() {
                    // Window bytes past `ntaps` stay 0 (never written) and
                    // their packed weights are 0 too.
                    let acc = add32(dot4(win, packed), init4);
                    let ob = (p0 + k) * cout + oc;
                    let dst = output.get_mut(ob..ob + n).ok_or(BAD)?;
                    match &rq {
                        Some(rq) => rq.store(acc, dst),
                        None => finish4(q, acc, &req4, fast, dst),
                    }
                }
                oc += 4;
            }
            p0 += pn;
        }
        Ok(())
    })())
}

/// Most taps [`mult1`] runs (a 5×5 kernel); more take the generic loops.
const MULT1_TAPS: usize = 25;

/// Channels per pass of [`mult1`]: four blocks of sixteen.
const MULT1_CHUNK: usize = 64;

/// Vectors of [`mult1`]'s widened weights: per block of 16 channels and
/// pair of taps, four.
const MULT1_WORDS: usize = (MULT1_CHUNK / 16) * MULT1_TAPS.div_ceil(2) * 4;

/// Sixteen values of `run` from `j` (zero-filled past its end).
#[inline(always)]
fn load16(run: &[i8], j: usize) -> __m128i {
    match run
        .get(j..j + 16)
        .and_then(|v| <[i8; 16]>::try_from(v).ok())
    {
        Some(v) => bytemuck::cast(v),
        None => {
            let mut v = [0i8; 16];
            for (d, &s) in v.iter_mut().zip(run.iter().skip(j)) {
                *d = s;
            }
            bytemuck::cast(v)
        }
    }
}

/// Depthwise with depth multiplier 1: per output pixel a table of its taps'
/// input runs (a run of zero points for padding taps, whose
/// offset-corrected value is 0, so `bias + offset·Σw` over all taps is
/// every pixel's constant term), then per block of 16 channels and pair of
/// taps the two runs' bytes interleaved and widened to int16, so that one
/// `PMADDWD` against the pair's interleaved weights (widened once per
/// chunk of 64 channels) adds both taps' products for four channels.
/// `None` (the generic loops run) for kernels of more than [`MULT1_TAPS`]
/// taps. The caller has checked that the input zero point is an int8 value.
#[inline(never)]
pub(crate) fn mult1(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh.checked_mul(kw)?;
    if ntaps == 0 || ntaps > MULT1_TAPS {
        return None;
    }
    let ch = o.c;
    let pairs = ntaps.div_ceil(2);
    let zpbuf = [q.input_offset.wrapping_neg() as i8; MULT1_CHUNK];
    let mut wv = [zero(); MULT1_WORDS];
    let mut full = [0i32; MULT1_CHUNK];
    let mut req = [Requant::new(0, 0); MULT1_CHUNK];
    let mut rqs: [Option<Rq4>; MULT1_CHUNK / 4] = [None; MULT1_CHUNK / 4];
    Some((|| {
        let mut c0 = 0;
        while c0 < ch {
            let cn = MULT1_CHUNK.min(ch - c0);
            let blocks = cn.div_ceil(16);
            // Weights: block `j`, pair `p`, quarter `h` (channels 4h..4h+4)
            // at `(j·pairs + p)·4 + h`, lanes (tap 2p, tap 2p+1) per
            // channel; a missing second tap and channels past `cn` weigh 0.
            for (k, v) in wv.iter_mut().take(blocks * pairs * 4).enumerate() {
                let (j, p, h) = (k / (4 * pairs), (k / 4) % pairs, k % 4);
                let mut lanes = [0i16; 8];
                for (l, d) in lanes.iter_mut().enumerate() {
                    let (c, t) = (16 * j + 4 * h + l / 2, 2 * p + l % 2);
                    if c < cn && t < ntaps {
                        *d = *filter.get(t * ch + c0 + c).ok_or(BAD)? as i16;
                    }
                }
                *v = bytemuck::cast(lanes);
            }
            for c in 0..cn {
                let (mut s, mut t) = (0i32, c0 + c);
                while let Some(&w) = filter.get(t) {
                    s = s.wrapping_add(w as i32);
                    t += ch;
                }
                full[c] = ops
                    .bias
                    .and_then(|b| b.get(c0 + c).copied())
                    .unwrap_or(0)
                    .wrapping_add(q.input_offset.wrapping_mul(s));
                req[c] = Requant::new(
                    *ops.mult.get(c0 + c).ok_or(BAD)?,
                    *ops.shift.get(c0 + c).ok_or(BAD)?,
                );
            }
            let fast = req.iter().take(cn).all(Requant::is_fast);
            for (k, rq) in rqs.iter_mut().enumerate().take(cn.div_ceil(4)) {
                // Channels past `cn` repeat the last one (their results are
                // dropped).
                let c = |l: usize| c0 + (4 * k + l).min(cn - 1);
                let (mut m, mut sh) = ([0i32; 4], [0i32; 4]);
                for l in 0..4 {
                    m[l] = *ops.mult.get(c(l)).ok_or(BAD)?;
                    sh[l] = *ops.shift.get(c(l)).ok_or(BAD)?;
                }
                *rq = Rq4::new(q, m, sh);
            }
            let zps = zpbuf.get(..cn).ok_or(BAD)?;
            let mut runs: [&[i8]; MULT1_TAPS + 1] = [&[]; MULT1_TAPS + 1];
            let mut xs = [None; MULT1_TAPS];
            for b in 0..o.n {
                for oy in 0..o.h {
                    for ox in 0..o.w {
                        for (kx, d) in xs.iter_mut().enumerate().take(kw) {
                            *d = Window::tap(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w);
                        }
                        let mut t = 0;
                        for ky in 0..kh {
                            let y = Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h);
                            for &x in xs.iter().take(kw) {
                                let run = match (y, x) {
                                    (Some(y), Some(x)) => {
                                        let at = ((b * i.h + y) * i.w + x) * ch + c0;
                                        input.get(at..at + cn).ok_or(BAD)?
                                    }
                                    _ => zps,
                                };
                                *runs.get_mut(t).ok_or(BAD)? = run;
                                t += 1;
                            }
                        }
                        // An odd last tap pairs with an empty run (zeros).
                        if let Some(r) = runs.get_mut(ntaps) {
                            *r = &[];
                        }
                        let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                        let out = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                        let wb = wv.get(..blocks * pairs * 4).ok_or(BAD)?;
                        let consts = full
                            .as_chunks::<16>()
                            .0
                            .iter()
                            .zip(req.as_chunks::<16>().0)
                            .zip(rqs.as_chunks::<4>().0);
                        for (j, ((wj, dst), ((f, r), rq))) in wb
                            .chunks_exact(pairs * 4)
                            .zip(out.chunks_mut(16))
                            .zip(consts)
                            .enumerate()
                        {
                            let [f0, f1, f2, f3]: [__m128i; 4] = bytemuck::cast(*f);
                            let (mut a0, mut a1, mut a2, mut a3) = (f0, f1, f2, f3);
                            for (pr, w) in runs.as_chunks::<2>().0.iter().zip(wj.as_chunks::<4>().0)
                            {
                                let (xa, xb) = (load16(pr[0], 16 * j), load16(pr[1], 16 * j));
                                let (l0, l1) = widen(unpacklo8(xa, xb));
                                let (h0, h1) = widen(unpackhi8(xa, xb));
                                a0 = add32(a0, madd16(l0, w[0]));
                                a1 = add32(a1, madd16(l1, w[1]));
                                a2 = add32(a2, madd16(h0, w[2]));
                                a3 = add32(a3, madd16(h1, w[3]));
                            }
                            if let ([Some(r0), Some(r1), Some(r2), Some(r3)], Ok(d)) =
                                (rq, <&mut [i8; 16]>::try_from(&mut *dst))
                            {
                                // A whole block, all four groups in vector form.
                                let lo = r0.clamp16_2(r0.offset(a0), r1.offset(a1));
                                let hi = r0.clamp16_2(r2.offset(a2), r3.offset(a3));
                                *d = pack16(lo, hi);
                                continue;
                            }
                            let quarters = [a0, a1, a2, a3].into_iter().zip(r.as_chunks::<4>().0);
                            for (((acc, r), rq), d) in quarters.zip(rq).zip(dst.chunks_mut(4)) {
                                match rq {
                                    Some(rq) => rq.store(acc, d),
                                    None => finish4(q, acc, r, fast, d),
                                }
                            }
                        }
                    }
                }
            }
            c0 += cn;
        }
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::super::testutil::*;
    use super::super::super::ConvQuant;
    use super::super::{depthwise_with, DEPTHWISE_SCRATCH_WORDS};
    use super::*;
    use std::{vec, vec::Vec};

    /// `depthwise_with` on `M` with kernel scratch as an earlier call may
    /// leave it.
    #[allow(clippy::too_many_arguments)]
    fn run<M: DepthwiseMac>(
        g: &Window,
        q: &ConvQuant,
        ch_mult: usize,
        x: &[i8],
        w: &[i8],
        p: &(Vec<i32>, Vec<i32>, Vec<i32>),
    ) -> Vec<i8> {
        let mut out = vec![0i8; g.output.elements().unwrap()];
        let mut s = vec![0xa5a5_a5a5_a5a5_a5a5u64; DEPTHWISE_SCRATCH_WORDS];
        let (mult, shift, bias) = p;
        depthwise_with::<M>(
            g,
            q,
            ch_mult,
            x,
            w,
            Some(bias),
            mult,
            shift,
            &mut out,
            &mut s,
        )
        .unwrap();
        out
    }

    /// The SSE2 one-input-channel layer and the scalar loops on the same
    /// operands: every window size up to three vectors of taps (every
    /// remainder of 16 and 8), beyond [`MAX_LEN`] (refused: the generic
    /// loops), strides, padding, odd channel counts, extreme zero points
    /// and values, slow requantization and narrow activation ranges.
    #[test]
    fn sse2_single_channel_equals_scalar() {
        let mut r = Rng(0xd86);
        let kernels = (1..=7)
            .flat_map(|kh| (1..=7).map(move |kw| (kh, kw)))
            .chain([(10, 4), (16, 16), (17, 16)]);
        for (kh, kw) in kernels {
            for case in 0..4u64 {
                let cout = [1, 3, 4, 5, 8, 9, 64][r.range(0, 6) as usize];
                let (s, p) = (
                    (r.range(1, 2) as usize, r.range(1, 2) as usize),
                    (
                        r.range(0, kh as i64 / 2) as usize,
                        r.range(0, kw as i64 / 2) as usize,
                    ),
                );
                let ih = (kh + r.range(0, 12) as usize).max(2 * p.0 + 1);
                let iw = (kw + r.range(0, 6) as usize).max(2 * p.1 + 1);
                let g = geometry((ih, iw, 1), cout, (kh, kw), s, p);
                let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][case as usize];
                let zp_out = [-128, 127, r.range(-128, 127) as i32][r.range(0, 2) as usize];
                let q = ConvQuant {
                    input_offset: -zp_in,
                    output_offset: zp_out,
                    act_min: if case == 1 { zp_out.min(90) } else { -128 },
                    act_max: if case == 2 { zp_out.max(-90) } else { 127 },
                };
                let extreme = |r: &mut Rng, n: usize, k: u64| match k % 3 {
                    0 => vec![-128i8; n],
                    1 => vec![127i8; n],
                    _ => r.i8s(n),
                };
                let k = r.next();
                let x = extreme(&mut r, ih * iw, k);
                let k = r.next();
                let w = extreme(&mut r, kh * kw * cout, k);
                let mut params = quant_params(&mut r, cout);
                if case == 3 {
                    params.1[0] = 0;
                    params.0[cout - 1] = -params.0[cout - 1];
                }
                let want = run::<Scalar>(&g, &q, cout, &x, &w, &params);
                let got = run::<X86>(&g, &q, cout, &x, &w, &params);
                assert_eq!(got, want, "kernel {kh}x{kw} cout {cout} case {case}");
                let (mult, shift, bias) = &params;
                let ops = ConvOperands::new(g, q, &x, &w, Some(bias), mult, shift);
                let mut direct = vec![0i8; want.len()];
                match single_channel(&ops, &mut direct) {
                    Some(done) => {
                        done.unwrap();
                        assert_eq!(direct, want, "kernel {kh}x{kw} direct");
                    }
                    None => assert!(kh * kw > MAX_LEN, "kernel {kh}x{kw} refused"),
                }
            }
        }
    }

    /// The SSE2 depth-multiplier-1 layer and the scalar loops on the same
    /// operands: every channel count up to 70 (every remainder of 16 and of
    /// 4, more than one chunk of 64), kernels up to 5×5 and beyond
    /// [`MULT1_TAPS`] (refused), strides, padding, dilation, extreme zero
    /// points and values, slow requantization and narrow activation ranges.
    #[test]
    fn sse2_mult1_equals_scalar() {
        let mut r = Rng(0x3d86);
        let kernels = [
            (3, 3),
            (1, 1),
            (1, 2),
            (2, 3),
            (3, 1),
            (5, 5),
            (4, 5),
            (6, 5),
        ];
        for ch in 1..=70 {
            for (n, &(kh, kw)) in kernels.iter().enumerate() {
                if n > 1 && ch % 5 != 0 && ch != 64 {
                    continue;
                }
                let case = r.range(0, 3) as usize;
                let mut g = geometry(
                    (kh + r.range(0, 5) as usize, kw + r.range(0, 4) as usize, ch),
                    ch,
                    (kh, kw),
                    (r.range(1, 2) as usize, r.range(1, 2) as usize),
                    (
                        r.range(0, 1) as usize * (kh / 2),
                        r.range(0, 1) as usize * (kw / 2),
                    ),
                );
                if n == 0 && ch % 7 == 0 {
                    // Dilated: the output shrinks by the extra reach.
                    g.dilation = (2, 2);
                    g.input.h += kh;
                    g.input.w += kw;
                }
                g.input.n = 1 + (ch % 2);
                g.output.n = g.input.n;
                let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][case];
                let zp_out = [-128, 127, r.range(-128, 127) as i32][r.range(0, 2) as usize];
                let q = ConvQuant {
                    input_offset: -zp_in,
                    output_offset: zp_out,
                    act_min: if case == 1 { zp_out.min(90) } else { -128 },
                    act_max: if case == 2 { zp_out.max(-90) } else { 127 },
                };
                let extreme = |r: &mut Rng, n: usize, k: u64| match k % 4 {
                    0 => vec![-128i8; n],
                    1 => vec![127i8; n],
                    _ => r.i8s(n),
                };
                let k = r.next();
                let x = extreme(&mut r, g.input.elements().unwrap(), k);
                let k = r.next();
                let w = extreme(&mut r, kh * kw * ch, k);
                let mut params = quant_params(&mut r, ch);
                if case == 3 {
                    params.1[0] = 0;
                    params.0[ch - 1] = -params.0[ch - 1];
                }
                let want = run::<Scalar>(&g, &q, 1, &x, &w, &params);
                let got = run::<X86>(&g, &q, 1, &x, &w, &params);
                assert_eq!(got, want, "{g:?} case {case}");
                let (mult, shift, bias) = &params;
                let ops = ConvOperands::new(g, q, &x, &w, Some(bias), mult, shift);
                let mut direct = vec![0i8; want.len()];
                match mult1(&ops, &mut direct) {
                    Some(done) => {
                        done.unwrap();
                        assert_eq!(direct, want, "{g:?} direct");
                    }
                    None => assert!(kh * kw > MULT1_TAPS, "{g:?} refused"),
                }
            }
        }
    }
}
