//! Depthwise layers with AVX2 (called after [`avx2::detected`]; `None`
//! hands the layer to the SSE2 kernels): depth multiplier 1 ([`mult1`]:
//! per pair of taps, sixteen channels' input bytes interleaved, widened
//! with `VPMOVSXBW` and multiplied by the pair's interleaved weights with
//! `VPMADDWD`) and one input channel ([`single_channel`]: the pointwise
//! layer's [`avx2::dot8`] over gathered windows).

use super::super::super::common::ConvOperands;
use super::super::super::isa::x86::avx2::{self, Rq8};
use super::super::super::isa::x86::MAX_LEN;
use super::super::super::{Window, BAD};
use crate::error::{KernelError, KernelResult};
use core::arch::x86_64::{self as arch, __m256i};

/// Most output channels the kernels here run (as many [`Rq8`] on the
/// stack).
const MAX_CH: usize = 256;

/// Every channel's [`Rq8`], or `None` unless the channels come in whole
/// groups of eight and all requantize in vector form.
fn requants(ops: &ConvOperands<'_>, rqs: &mut [Option<Rq8>; MAX_CH / 8]) -> Option<()> {
    let ch = ops.g.output.c;
    if ch == 0 || !ch.is_multiple_of(8) || ch > MAX_CH {
        return None;
    }
    for (k, rq) in rqs.iter_mut().enumerate().take(ch / 8) {
        let (m, s) = (
            ops.mult.get(8 * k..8 * k + 8)?,
            ops.shift.get(8 * k..8 * k + 8)?,
        );
        *rq = Some(Rq8::new(&ops.q, m.try_into().ok()?, s.try_into().ok()?)?);
    }
    Some(())
}

/// `bias + offset·Σw` of channel `c`, its weights `filter[t·ch + c]`.
fn constant(ops: &ConvOperands<'_>, c: usize) -> i32 {
    let ch = ops.g.output.c;
    let (mut s, mut t) = (0i32, c);
    while let Some(&w) = ops.filter.get(t) {
        s = s.wrapping_add(w as i32);
        t += ch;
    }
    let b = ops.bias.and_then(|b| b.get(c).copied()).unwrap_or(0);
    b.wrapping_add(ops.q.input_offset.wrapping_mul(s))
}

/// Bytes of the zero-point-padded input copy [`single_channel`] gathers
/// from (small: zero-filling the stack buffer is part of every call).
const PADDED_BYTES: usize = 2048;

/// The input (one batch) padded with its zero point into `dst`: `hp × wp`
/// pixels of `c` channels, just enough for every tap of every output, so
/// that tap `(ky, kx)` of output `(oy, ox)` is padded pixel
/// `(oy·sh + ky·dh, ox·sw + kx·dw)`; then `slack` more bytes (reads of
/// whole vectors past the last pixel). Returns the copy and `wp`, or `None`
/// (the kernel gathers tap by tap) for several batches or a copy larger
/// than `dst`.
fn pad_input<'d>(
    g: &Window,
    input: &[i8],
    zp: i8,
    dst: &'d mut [i8],
    slack: usize,
) -> Option<(&'d [i8], usize)> {
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    if i.n != 1 || o.h == 0 || o.w == 0 || kh == 0 || kw == 0 {
        return None;
    }
    let reach = |o: usize, s: usize, k: usize, d: usize| {
        (o - 1)
            .checked_mul(s)?
            .checked_add((k - 1).checked_mul(d)?)?
            .checked_add(1)
    };
    let hp = reach(o.h, g.stride.0, kh, g.dilation.0)?;
    let wp = reach(o.w, g.stride.1, kw, g.dilation.1)?;
    let c = i.c;
    let row = wp.checked_mul(c)?;
    let n = hp.checked_mul(row)?;
    let dst = dst.get_mut(..n.checked_add(slack)?)?;
    let (ph, pw) = g.padding;
    // Padded columns `lo..hi` are input columns `lo − pw..hi − pw`.
    let (lo, hi) = (pw.min(wp), pw.saturating_add(i.w).min(wp));
    for (yp, d) in dst.chunks_exact_mut(row).enumerate().take(hp) {
        match yp.checked_sub(ph).filter(|&y| y < i.h) {
            Some(y) if lo < hi => {
                let at = (y * i.w + (lo - pw)) * c;
                let src = input.get(at..at + (hi - lo) * c)?;
                let (left, rest) = d.split_at_mut(lo * c);
                let (mid, right) = rest.split_at_mut((hi - lo) * c);
                left.fill(zp);
                mid.copy_from_slice(src);
                right.fill(zp);
            }
            _ => d.fill(zp),
        }
    }
    Some((dst, wp))
}

/// Most taps [`mult1`] runs (a 5×5 kernel).
const TAPS: usize = 25;

/// Depth multiplier 1, channels in whole blocks of sixteen: per output
/// pixel a table of its taps' input runs (a run of zero points for padding
/// taps, whose offset-corrected value is 0, so `bias + offset·Σw` over all
/// taps is every pixel's constant term), then per pair of taps and block
/// of sixteen channels one `VPMADDWD` for each half. Channels run in
/// passes of 64 (eight accumulators), then of 16. The caller has checked
/// that the input zero point is an int8 value.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(crate) fn mult1(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (kh, kw) = ops.g.kernel;
    let ntaps = kh.checked_mul(kw)?;
    if ntaps == 0 || ntaps > TAPS || !ops.g.output.c.is_multiple_of(16) {
        return None;
    }
    let mut rqs = [None; MAX_CH / 8];
    requants(ops, &mut rqs)?;
    let ch = ops.g.output.c;
    let mut c0 = 0;
    while c0 < ch {
        let done = if ch - c0 >= 64 {
            pass::<4>(ops, output, &rqs, c0)
        } else {
            pass::<1>(ops, output, &rqs, c0)
        };
        if done.is_err() {
            return Some(done);
        }
        c0 += if ch - c0 >= 64 { 64 } else { 16 };
    }
    Some(Ok(()))
}

/// Channels `c0..c0 + 16·B` of [`mult1`].
#[target_feature(enable = "avx2")]
#[inline]
fn pass<const B: usize>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    rqs: &[Option<Rq8>; MAX_CH / 8],
    c0: usize,
) -> KernelResult {
    use arch::{_mm256_add_epi32 as add, _mm256_cvtepi8_epi16 as widen};
    use arch::{_mm256_madd_epi16 as madd, _mm_unpackhi_epi8 as hi8, _mm_unpacklo_epi8 as lo8};
    let (g, input, filter) = (&ops.g, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let (ch, ntaps) = (o.c, kh * kw);
    let cn = 16 * B;
    // Weights: pair `p`, block `j`, half `h` (channels 8h..8h+8) at
    // `[p][2j + h]`, lanes (tap 2p, tap 2p+1) per channel; a missing second
    // tap weighs 0.
    let mut wv = [[arch::_mm256_setzero_si256(); 8]; TAPS.div_ceil(2)];
    for (p, wp) in wv.iter_mut().enumerate().take(ntaps.div_ceil(2)) {
        for (k, v) in wp.iter_mut().enumerate().take(2 * B) {
            let mut lanes = [0i16; 16];
            for (l, d) in lanes.iter_mut().enumerate() {
                let (c, t) = (c0 + 8 * k + l / 2, 2 * p + l % 2);
                if t < ntaps {
                    *d = *filter.get(t * ch + c).ok_or(BAD)? as i16;
                }
            }
            *v = bytemuck::cast(lanes);
        }
    }
    let mut init = [[0i32; 8]; 8];
    for (k, v) in init.iter_mut().enumerate().take(2 * B) {
        for (l, d) in v.iter_mut().enumerate() {
            *d = constant(ops, c0 + 8 * k + l);
        }
    }
    let init: [__m256i; 8] = bytemuck::cast(init);
    let mut rq = [None; 8];
    for (k, r) in rq.iter_mut().enumerate().take(2 * B) {
        *r = *rqs.get(c0 / 8 + k).ok_or(BAD)?;
    }
    let zps = [[ops.q.input_offset.wrapping_neg() as i8; 16]; B];
    let zeros = [[0i8; 16]; B];
    let mut runs: [&[[i8; 16]; B]; TAPS + 1] = [&zeros; TAPS + 1];
    let mut xs = [None; TAPS];
    let mut ys = [None; TAPS];
    // Outputs whose taps are all in bounds (a rectangle: tap positions
    // grow with the output position) find them at fixed offsets from the
    // first; the others tap by tap.
    let mut toff = [0usize; TAPS];
    for (t, d) in toff.iter_mut().enumerate().take(ntaps) {
        let (dy, dx) = (
            (t / kw).wrapping_mul(g.dilation.0),
            (t % kw).wrapping_mul(g.dilation.1),
        );
        *d = dy.wrapping_mul(i.w).wrapping_add(dx).wrapping_mul(ch);
    }
    let inside = |o: usize, k: usize, s: usize, p: usize, d: usize, n: usize| {
        Window::tap(o, 0, s, p, d, n).is_some() && Window::tap(o, k - 1, s, p, d, n).is_some()
    };
    let mut cols = 0..0;
    for ox in 0..o.w {
        if inside(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w) {
            cols = if cols.is_empty() {
                ox..ox + 1
            } else {
                cols.start..ox + 1
            };
        }
    }
    for b in 0..o.n {
        for oy in 0..o.h {
            for (ky, d) in ys.iter_mut().enumerate().take(kh) {
                *d = Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h);
            }
            let row_inside = inside(oy, kh, g.stride.0, g.padding.0, g.dilation.0, i.h);
            for ox in 0..o.w {
                if let (true, true, Some(y0)) = (row_inside, cols.contains(&ox), ys[0]) {
                    let x0 = ox * g.stride.1 - g.padding.1;
                    let base = ((b * i.h + y0) * i.w + x0) * ch + c0;
                    for (r, &off) in runs.iter_mut().zip(&toff).take(ntaps) {
                        let at = base.wrapping_add(off);
                        let run = input.get(at..at.wrapping_add(cn)).ok_or(BAD)?;
                        *r =
                            <&[[i8; 16]; B]>::try_from(run.as_chunks::<16>().0).map_err(|_| BAD)?;
                    }
                } else {
                    for (kx, d) in xs.iter_mut().enumerate().take(kw) {
                        *d = Window::tap(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w);
                    }
                    let taps = ys
                        .iter()
                        .take(kh)
                        .flat_map(|&y| xs.iter().take(kw).map(move |&x| (y, x)));
                    for (r, (y, x)) in runs.iter_mut().zip(taps) {
                        *r = match (y, x) {
                            (Some(y), Some(x)) => {
                                let at = ((b * i.h + y) * i.w + x) * ch + c0;
                                let run = input.get(at..at + cn).ok_or(BAD)?;
                                <&[[i8; 16]; B]>::try_from(run.as_chunks::<16>().0)
                                    .map_err(|_| BAD)?
                            }
                            _ => &zps,
                        };
                    }
                }
                // An odd last tap pairs with zeros.
                *runs.get_mut(ntaps).ok_or(BAD)? = &zeros;
                let mut acc = init;
                for (pr, w) in runs
                    .as_chunks::<2>()
                    .0
                    .iter()
                    .zip(&wv)
                    .take(ntaps.div_ceil(2))
                {
                    for j in 0..B {
                        let (xa, xb) = (bytemuck::cast(pr[0][j]), bytemuck::cast(pr[1][j]));
                        acc[2 * j] = add(acc[2 * j], madd(widen(lo8(xa, xb)), w[2 * j]));
                        acc[2 * j + 1] =
                            add(acc[2 * j + 1], madd(widen(hi8(xa, xb)), w[2 * j + 1]));
                    }
                }
                let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                let out = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                for (j, d) in out.as_chunks_mut::<16>().0.iter_mut().enumerate().take(B) {
                    let (Some(r0), Some(r1)) = (&rq[2 * j], &rq[2 * j + 1]) else {
                        return Err(BAD);
                    };
                    *d = r0.out16(r1, acc[2 * j], acc[2 * j + 1]);
                }
            }
        }
    }
    Ok(())
}

/// Bytes of gathered windows [`single_channel`] keeps on the stack.
const WINDOW_BYTES: usize = 4096;

/// Most packed chunks of [`single_channel`]'s weights: groups of eight
/// channels × chunks of 16 taps.
const SC_CHUNKS: usize = 32;

/// One input channel as a matrix product: each output pixel's window
/// (padding taps = the input zero point) is one row, zero-filled to whole
/// chunks of 16, against every group of eight channels' taps packed once.
/// The caller has checked that the input zero point is an int8 value.
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(crate) fn single_channel(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (kh, kw) = ops.g.kernel;
    let ntaps = kh.checked_mul(kw)?;
    let len = ntaps.div_ceil(16) * 16;
    let groups = ops.g.output.c / 8;
    if ntaps == 0 || len > MAX_LEN || groups * (len / 16) > SC_CHUNKS {
        return None;
    }
    let mut rqs = [None; MAX_CH / 8];
    requants(ops, &mut rqs)?;
    let mut packed = [[arch::_mm256_setzero_si256(); 8]; SC_CHUNKS];
    let mut cols = [[0i8; MAX_LEN]; 8];
    let mut init = [arch::_mm256_setzero_si256(); SC_CHUNKS];
    let cout = ops.g.output.c;
    for (k, (p, iv)) in packed
        .chunks_exact_mut(len / 16)
        .zip(init.iter_mut())
        .enumerate()
        .take(groups)
    {
        let mut i8s = [0i32; 8];
        for (l, col) in cols.iter_mut().enumerate() {
            let c = 8 * k + l;
            for (t, d) in col.iter_mut().enumerate().take(ntaps) {
                *d = *ops.filter.get(t * cout + c)?;
            }
            i8s[l] = constant(ops, c);
        }
        *iv = bytemuck::cast(i8s);
        let [c0, c1, c2, c3, c4, c5, c6, c7] = &cols;
        avx2::pack8([c0, c1, c2, c3, c4, c5, c6, c7].map(|c| &c[..ntaps]), p);
    }
    let a = (&rqs, &packed, &init);
    // Windows of one to four whole chunks run unrolled.
    Some(match len / 16 {
        1 => windows::<1>(ops, output, a, len),
        2 => windows::<2>(ops, output, a, len),
        3 => windows::<3>(ops, output, a, len),
        4 => windows::<4>(ops, output, a, len),
        _ => windows::<0>(ops, output, a, len),
    })
}

type Consts<'a> = (
    &'a [Option<Rq8>; MAX_CH / 8],
    &'a [[__m256i; 8]; SC_CHUNKS],
    &'a [__m256i; SC_CHUNKS],
);

#[target_feature(enable = "avx2")]
#[inline]
fn windows<const N: usize>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    (rqs, packed, init): Consts<'_>,
    len: usize,
) -> KernelResult {
    let (g, input) = (&ops.g, ops.input);
    let (o, (kh, kw)) = (g.output, g.kernel);
    let cout = o.c;
    let zp = ops.q.input_offset.wrapping_neg() as i8;
    let per_block = WINDOW_BYTES / len;
    let pixels = o.n * o.h * o.w;
    // Sixteen bytes of slack: whole-vector row copies (below) spill past a
    // window's end into the next one's start, which is written later.
    let mut windows = [0i8; WINDOW_BYTES + 16];
    let mut xs = [None; MAX_LEN];
    let mut pad = [0i8; PADDED_BYTES];
    // Rows of at most sixteen contiguous taps: each window row one
    // sixteen-byte copy from the padded input.
    let padded = match (kw <= 16, g.dilation.1) {
        (true, 1) => pad_input(g, input, zp, &mut pad, 16),
        _ => None,
    };
    let ntaps = kh * kw;
    let mut p0 = 0;
    while p0 < pixels {
        let pn = per_block.min(pixels - p0);
        if let Some((pad, wp)) = padded {
            for k in 0..pn {
                let (p, base) = (p0 + k, k * len);
                let (oy, ox) = ((p / o.w) % o.h, p % o.w);
                for ky in 0..kh {
                    let src = (oy * g.stride.0 + ky * g.dilation.0) * wp + ox * g.stride.1;
                    let s: &[i8; 16] = pad
                        .get(src..src + 16)
                        .and_then(|s| s.try_into().ok())
                        .ok_or(BAD)?;
                    let at = base + ky * kw;
                    let d: &mut [i8; 16] = windows
                        .get_mut(at..at + 16)
                        .and_then(|d| d.try_into().ok())
                        .ok_or(BAD)?;
                    *d = *s;
                }
                let at = base + ntaps;
                let d: &mut [i8; 16] = windows
                    .get_mut(at..at + 16)
                    .and_then(|d| d.try_into().ok())
                    .ok_or(BAD)?;
                *d = [0; 16];
            }
        }
        let gathered = windows.get_mut(..WINDOW_BYTES).ok_or(BAD)?;
        for (k, win) in gathered.chunks_exact_mut(len).take(pn).enumerate() {
            if padded.is_some() {
                break;
            }
            super::gather_window(ops, p0 + k, &mut xs, win, zp)?;
        }
        let groups = packed
            .chunks_exact(len / 16)
            .zip(init)
            .zip(rqs)
            .take(cout / 8);
        for (gi, ((p, &iv), rq)) in groups.enumerate() {
            let rq = rq.as_ref().ok_or(BAD)?;
            for (k, win) in windows.chunks_exact(len).take(pn).enumerate() {
                let acc = arch::_mm256_add_epi32(avx2::sums::<N>(win, p).ok_or(BAD)?, iv);
                let ob = (p0 + k) * cout + 8 * gi;
                let dst: &mut [i8; 8] = output
                    .get_mut(ob..ob + 8)
                    .and_then(|d| d.try_into().ok())
                    .ok_or(BAD)?;
                *dst = rq.out8(acc);
            }
        }
        p0 += pn;
    }
    Ok::<(), KernelError>(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::super::super::testutil::*;
    use super::super::super::super::ConvQuant;
    use super::super::super::{depthwise_with, DEPTHWISE_SCRATCH_WORDS};
    use super::*;
    use crate::cortex_m::isa::Scalar;
    use std::{vec, vec::Vec};

    type Params = (Vec<i32>, Vec<i32>, Vec<i32>);

    fn scalar(
        g: &Window,
        q: &ConvQuant,
        ch_mult: usize,
        x: &[i8],
        w: &[i8],
        p: &Params,
    ) -> Vec<i8> {
        let mut out = vec![0i8; g.output.elements().unwrap()];
        let mut s = vec![0u64; DEPTHWISE_SCRATCH_WORDS];
        let (mult, shift, bias) = p;
        depthwise_with::<Scalar>(
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

    /// Quantization parameters the AVX2 kernels take (right shifts only),
    /// but for `refuse`: one channel without a right shift, or with a
    /// negative multiplier.
    fn params(r: &mut Rng, ch: usize, refuse: u64) -> Params {
        let (mut mult, mut shift, bias) = quant_params(r, ch);
        for s in shift.iter_mut() {
            *s = -(s.abs() + 1);
        }
        match refuse {
            1 => shift[ch - 1] = 0,
            2 => mult[0] = -mult[0],
            _ => {}
        }
        (mult, shift, bias)
    }

    fn values(r: &mut Rng, n: usize) -> Vec<i8> {
        match r.next() % 4 {
            0 => vec![-128; n],
            1 => vec![127; n],
            _ => r.i8s(n),
        }
    }

    fn quant(r: &mut Rng, case: usize) -> ConvQuant {
        let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][case % 4];
        let zp_out = [-128, 127, r.range(-128, 127) as i32][r.range(0, 2) as usize];
        ConvQuant {
            input_offset: -zp_in,
            output_offset: zp_out,
            act_min: if case == 1 { zp_out.min(90) } else { -128 },
            act_max: if case == 2 { zp_out.max(-90) } else { 127 },
        }
    }

    /// The AVX2 depth-multiplier-1 layer and the scalar loops: channel
    /// counts in and out of whole blocks of 16 (one and several passes of
    /// 64, and of 16), kernels up to 5×5 and beyond (refused), strides,
    /// padding, dilation, batches, extreme zero points and values, narrow
    /// activation ranges; it refuses exactly what it cannot run.
    #[test]
    fn avx2_mult1_equals_scalar() {
        if !avx2::detected() {
            return;
        }
        let mut r = Rng(0xa2d1);
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
        let (mut ran, mut refused) = (0, 0);
        for ch in [16, 32, 48, 64, 80, 128, 144, 8, 24, 17, 256, 272] {
            for (n, &(kh, kw)) in kernels.iter().enumerate() {
                for case in 0..4 {
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
                    if n == 0 && case == 3 {
                        g.dilation = (2, 2);
                        g.input.h += kh;
                        g.input.w += kw;
                    }
                    g.input.n = 1 + case % 2;
                    g.output.n = g.input.n;
                    let q = quant(&mut r, case);
                    let x = values(&mut r, g.input.elements().unwrap());
                    let w = values(&mut r, kh * kw * ch);
                    let refuse = if case == 3 {
                        1 + r.range(0, 1) as u64
                    } else {
                        0
                    };
                    let p = params(&mut r, ch, refuse);
                    let want = scalar(&g, &q, 1, &x, &w, &p);
                    let ops = ConvOperands::new(g, q, &x, &w, Some(&p.2), &p.0, &p.1);
                    let mut got = vec![0i8; want.len()];
                    let eligible =
                        kh * kw <= TAPS && ch.is_multiple_of(16) && ch <= MAX_CH && refuse == 0;
                    // SAFETY: AVX2 detected above.
                    match unsafe { mult1(&ops, &mut got) } {
                        Some(done) => {
                            done.unwrap();
                            assert!(eligible, "{g:?} case {case} ran");
                            assert_eq!(got, want, "{g:?} case {case}");
                            ran += 1;
                        }
                        None => {
                            assert!(!eligible, "{g:?} case {case} refused");
                            refused += 1;
                        }
                    }
                }
            }
        }
        assert!(ran > 150 && refused > 50, "ran {ran} refused {refused}");
    }

    /// The AVX2 one-input-channel layer and the scalar loops: window sizes
    /// up to three chunks of taps and beyond, strides, padding, channel
    /// counts in and out of groups of eight, extreme zero points and
    /// values, narrow activation ranges; it refuses exactly what it cannot
    /// run.
    #[test]
    fn avx2_single_channel_equals_scalar() {
        if !avx2::detected() {
            return;
        }
        let mut r = Rng(0xa2c1);
        let kernels = (1..=7)
            .flat_map(|kh| (1..=7).map(move |kw| (kh, kw)))
            .chain([(10, 4), (16, 16), (17, 16)]);
        let (mut ran, mut refused) = (0, 0);
        for (kh, kw) in kernels {
            for case in 0..4 {
                let cout = [8, 16, 64, 4, 9, 128][r.range(0, 5) as usize];
                let s = (r.range(1, 2) as usize, r.range(1, 2) as usize);
                let p = (
                    r.range(0, kh as i64 / 2) as usize,
                    r.range(0, kw as i64 / 2) as usize,
                );
                let ih = (kh + r.range(0, 12) as usize).max(2 * p.0 + 1);
                let iw = (kw + r.range(0, 6) as usize).max(2 * p.1 + 1);
                let mut g = geometry((ih, iw, 1), cout, (kh, kw), s, p);
                if case == 2 {
                    // Two batches: windows gathered tap by tap.
                    g.input.n = 2;
                    g.output.n = 2;
                }
                let q = quant(&mut r, case);
                let x = values(&mut r, g.input.elements().unwrap());
                let w = values(&mut r, kh * kw * cout);
                let refuse = if case == 3 {
                    1 + r.range(0, 1) as u64
                } else {
                    0
                };
                let prm = params(&mut r, cout, refuse);
                let want = scalar(&g, &q, cout, &x, &w, &prm);
                let ops = ConvOperands::new(g, q, &x, &w, Some(&prm.2), &prm.0, &prm.1);
                let mut got = vec![0i8; want.len()];
                let chunks = (kh * kw).div_ceil(16);
                let eligible = 16 * chunks <= MAX_LEN
                    && cout.is_multiple_of(8)
                    && cout / 8 * chunks <= SC_CHUNKS
                    && refuse == 0;
                // SAFETY: AVX2 detected above.
                match unsafe { single_channel(&ops, &mut got) } {
                    Some(done) => {
                        done.unwrap();
                        assert!(eligible, "kernel {kh}x{kw} cout {cout} case {case} ran");
                        assert_eq!(got, want, "kernel {kh}x{kw} cout {cout} case {case}");
                        ran += 1;
                    }
                    None => {
                        assert!(
                            !eligible,
                            "kernel {kh}x{kw} cout {cout} case {case} refused"
                        );
                        refused += 1;
                    }
                }
            }
        }
        assert!(ran > 60 && refused > 30, "ran {ran} refused {refused}");
    }
}
