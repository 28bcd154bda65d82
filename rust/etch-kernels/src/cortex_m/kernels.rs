//! Fast loop structures of the CMSIS-NN functions, generic over the
//! multiply-accumulate implementation ([`Mac`]): `Scalar` or `Dsp`. The
//! public functions in `super` validate the geometry and pick the
//! implementation the build selects; tests run both against the reference.
//!
//! Arithmetic: CMSIS-NN sums `(x + input_offset)·w` over in-bounds taps in
//! wrapping 32-bit integers. Modulo 2^32 that equals
//! `Σ x·w + input_offset·Σ w` over the same taps, so the inner loops
//! multiply raw int8 values and the offset term is added once per output
//! (per-channel weight sums computed once per call; border pixels, where
//! some taps fall into the padding, sum only their in-bounds weights).

use super::mac::Mac;
use super::{ConvQuant, FcEncoding, Window, BAD};
use crate::error::KernelResult;
use crate::ops::arith::requantize;

/// The read-only operands of one convolution kernel call: geometry,
/// quantization, tensors and per-channel requantization (the output is
/// passed separately, mutably).
///
/// `g` and `q` are held by value on purpose: behind the kernels' `ops: &ConvOperands`
/// (a `noalias` read-only argument) LLVM may keep their fields in registers
/// across stores to the output; as `&Window`/`&ConvQuant` loaded from the
/// struct they would be reloaded after every store (+1.2 % Cortex-M4
/// instructions on DS-CNN, measured with `bench/run.sh --ci`).
#[derive(Clone, Copy)]
pub(crate) struct ConvOperands<'a> {
    pub(crate) g: Window,
    pub(crate) q: ConvQuant,
    pub(crate) input: &'a [i8],
    pub(crate) filter: &'a [i8],
    pub(crate) bias: Option<&'a [i32]>,
    pub(crate) mult: &'a [i32],
    pub(crate) shift: &'a [i32],
}

impl<'a> ConvOperands<'a> {
    /// Bundles one call's operands.
    pub(crate) fn new(
        g: Window,
        q: ConvQuant,
        input: &'a [i8],
        filter: &'a [i8],
        bias: Option<&'a [i32]>,
        mult: &'a [i32],
        shift: &'a [i32],
    ) -> Self {
        Self {
            g,
            q,
            input,
            filter,
            bias,
            mult,
            shift,
        }
    }
}

/// `arm_nn_requantize` for one channel with the shift decoded once:
/// `x = acc << left; h = (x·mult + 2^30) >> 31`, then a rounding shift
/// right by `r` with ties away from zero.
///
/// For `r ≥ 1` the two roundings collapse into one 64-bit step (nested
/// floor divisions): `floor((P + 2^(30+r) − [h<0]·2^31) / 2^(31+r))` with
/// `P = x·mult + 2^30` and `[h<0] = [P<0]`, i.e. the high word of that sum
/// shifted right by `r − 1`. With `mult ≥ 0`, `[x<0]` may stand in for
/// `[P<0]`: they differ only when `0 ≤ P ≤ 2^30`, where both give 0. So the
/// step is two multiply-accumulates and a shift. Negative multipliers take
/// the reference path.
#[derive(Clone, Copy)]
pub(crate) struct Requant {
    mult: i32,
    /// `r − 1`.
    rm1: u32,
    /// `2^30 + 2^(30+r)`.
    k: i64,
    /// Not the fast case (`r = 0`, or a negative multiplier): the shift to
    /// hand to the reference.
    other: Option<i32>,
}

impl Requant {
    #[inline]
    pub(crate) fn new(mult: i32, shift: i32) -> Self {
        let right = if shift > 0 {
            0
        } else {
            (shift.wrapping_neg() as u32).min(31)
        };
        Requant {
            mult,
            rm1: right.saturating_sub(1),
            k: (1i64 << 30) + (1i64 << (30 + right)),
            other: (right == 0 || mult < 0).then_some(shift),
        }
    }

    /// Whether [`Requant::apply_fast`] is exact for this channel.
    #[inline(always)]
    pub(crate) fn is_fast(&self) -> bool {
        self.other.is_none()
    }

    /// [`Requant::apply`] for [`Requant::is_fast`] channels.
    #[inline(always)]
    pub(crate) fn apply_fast(&self, acc: i32) -> i32 {
        let neg = (acc as u32 >> 31) as i64;
        let p = (acc as i64) * (self.mult as i64) + self.k + neg * (i32::MIN as i64);
        ((p >> 32) as i32) >> self.rm1
    }

    #[inline(always)]
    pub(crate) fn apply(&self, acc: i32) -> i32 {
        if let Some(shift) = self.other {
            return requantize_cold(acc, self.mult, shift);
        }
        // r ≥ 1 here, so the left shift is 0.
        let neg = (acc as u32 >> 31) as i64;
        let p = (acc as i64) * (self.mult as i64) + self.k + neg * (i32::MIN as i64);
        ((p >> 32) as i32).wrapping_shr(self.rm1)
    }
}

#[cold]
#[inline(never)]
fn requantize_cold(acc: i32, mult: i32, shift: i32) -> i32 {
    requantize(acc, mult, shift)
}

impl ConvQuant {
    /// [`ConvQuant::finish`] with a decoded [`Requant`].
    #[inline(always)]
    fn out(&self, acc: i32, r: &Requant) -> i8 {
        let v = r.apply(acc).wrapping_add(self.output_offset);
        v.max(self.act_min).min(self.act_max) as i8
    }
}

/// Requantizes a row of accumulators: `out[j] = finish(full[j] + acc[j])`
/// (lengths: the shortest). Out of line on purpose: inside the big kernel
/// bodies its constants were spilled (30+ instructions per output, against
/// about 20 here).
#[inline(never)]
fn finish_into(q: &ConvQuant, acc: &[i32], full: &[i32], req: &[Requant], out: &mut [i8]) {
    let rows = out.iter_mut().zip(acc).zip(full).zip(req);
    if q.act_min == -128 && q.act_max == 127 {
        // The usual case: a constant clamp (one `ssat`).
        for (((d, &a), &f), r) in rows {
            *d = r
                .apply(f.wrapping_add(a))
                .wrapping_add(q.output_offset)
                .clamp(-128, 127) as i8;
        }
    } else {
        for (((d, &a), &f), r) in rows {
            *d = q.out(f.wrapping_add(a), r);
        }
    }
}

/// Requantizes finished accumulators (bias and offset term included):
/// `fast` = every channel [`Requant::is_fast`]. Out of line like
/// [`finish_into`].
#[inline(never)]
fn finish_acc(q: &ConvQuant, acc: &[i32], req: &[Requant], fast: bool, out: &mut [i8]) {
    let rows = out.iter_mut().zip(acc).zip(req);
    if fast && q.act_min == -128 && q.act_max == 127 {
        for ((d, &a), r) in rows {
            *d = r
                .apply_fast(a)
                .wrapping_add(q.output_offset)
                .clamp(-128, 127) as i8;
        }
    } else {
        for ((d, &a), r) in rows {
            *d = q.out(a, r);
        }
    }
}

#[inline(always)]
fn wsum(w: &[i8]) -> i32 {
    w.iter().fold(0i32, |a, &v| a.wrapping_add(v as i32))
}

#[inline(always)]
fn put(output: &mut [i8], i: usize, v: i8) -> KernelResult {
    *output.get_mut(i).ok_or(BAD)? = v;
    Ok(())
}

#[inline(always)]
fn row(s: &[i8], i: usize, len: usize) -> Result<&[i8], crate::error::KernelError> {
    s.get(i..i.wrapping_add(len)).ok_or(BAD)
}

#[inline(always)]
fn four(s: &[i8], i: usize) -> Result<&[i8; 4], crate::error::KernelError> {
    s.get(i..i.wrapping_add(4))
        .and_then(|v| v.try_into().ok())
        .ok_or(BAD)
}

/// Four int8 values at `p`, any alignment.
///
/// # Safety
/// `p .. p + 4` must lie inside one live `[i8]` borrowed for `'a`.
#[inline(always)]
unsafe fn at4<'a>(p: *const i8) -> &'a [i8; 4] {
    // SAFETY: the caller guarantees the four bytes are in bounds of a live
    // slice; `[i8; 4]` has alignment 1.
    unsafe { &*(p as *const [i8; 4]) }
}

/// Bias (or 0) plus `offset·Σw` for one output channel.
#[inline(always)]
fn init(bias: Option<&[i32]>, c: usize, offset: i32, w: &[i8]) -> i32 {
    bias.and_then(|b| b.get(c).copied())
        .unwrap_or(0)
        .wrapping_add(offset.wrapping_mul(wsum(w)))
}

/// Valid tap range `[lo, hi)` of output `o` along one axis (taps are
/// contiguous: position `o·stride + k·dil − pad` increases with `k`).
#[inline(always)]
fn taps(o: usize, k: usize, stride: usize, pad: usize, dil: usize, size: usize) -> (usize, usize) {
    let mut lo = 0;
    while lo < k && Window::tap(o, lo, stride, pad, dil, size).is_none() {
        lo += 1;
    }
    let mut hi = lo;
    while hi < k && Window::tap(o, hi, stride, pad, dil, size).is_some() {
        hi += 1;
    }
    (lo, hi)
}

/// 1×1 convolution, stride 1, no padding: a matrix product of pixels ×
/// input channels by output channels × input channels, in blocks of two
/// pixels × two output channels (four accumulators in registers).
pub(crate) fn pointwise<M: Mac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
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

/// Most input channels [`pointwise_packed`] packs on the stack (2 words each
/// for four output channels: 1 KiB).
const PACK_IC: usize = 128;

/// 1×1 convolution, stride 1, no padding, for [`Mac::PACKED_POINTWISE`]
/// implementations: four output channels per pass with their weights
/// unpacked to int16 lanes once ([`Mac::pack4`]), then one pixel at a time
/// against them (one input word, two unpacks and eight `SMLAD` per four
/// input channels). Wider inputs take [`pointwise`].
pub(crate) fn pointwise_packed<M: Mac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (cin, cout) = (g.input.c, g.output.c);
    if cin == 0 || cout == 0 {
        return pointwise::<M>(ops, output);
    }
    if cin > PACK_IC {
        return pointwise::<M>(ops, output);
    }
    let pixels = g.output.n * g.output.h * g.output.w;
    let off = q.input_offset;
    let body = cin - cin % 4;
    let mut buf = [0u32; 2 * PACK_IC];
    let packed = buf.get_mut(..2 * body).ok_or(BAD)?;
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
        let mut init4 = [0i32; 4];
        let mut req4 = [Requant::new(0, 0); 4];
        for l in 0..4 {
            let c = ch(l);
            init4[l] = init(bias, c, off, rows[l]);
            req4[l] = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?);
        }
        let fast4 = req4.iter().all(Requant::is_fast);
        if n == 4 && body == cin && fast4 && q.act_min == -128 && q.act_max == 127 {
            // The common case, inline: whole channel quad, no input tail,
            // full-range clamp.
            // Blocks of pixels: accumulate, then requantize the block (two
            // tight loops instead of one loop with everything live).
            const PB: usize = 32;
            let mut accs = [[0i32; 4]; PB];
            let rows_in = input.get(..pixels * cin).ok_or(BAD)?;
            let rows_out = output.get_mut(..pixels * cout).ok_or(BAD)?;
            let (step_in, step_out) = (PB.wrapping_mul(cin), PB.wrapping_mul(cout));
            if step_in == 0 || step_out == 0 {
                return Err(BAD);
            }
            for (xb, ob) in rows_in.chunks(step_in).zip(rows_out.chunks_mut(step_out)) {
                for (a, x) in accs.iter_mut().zip(xb.chunks_exact(cin)) {
                    *a = M::dot_1x4(x, packed, init4);
                }
                for (a, o) in accs.iter().zip(ob.chunks_exact_mut(cout)) {
                    let Some(d) = o.get_mut(oc..oc + 4) else {
                        return Err(BAD);
                    };
                    for ((d, &a), r) in d.iter_mut().zip(a).zip(&req4) {
                        *d = r
                            .apply_fast(a)
                            .wrapping_add(q.output_offset)
                            .clamp(-128, 127) as i8;
                    }
                }
            }
        } else {
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

/// Any convolution: two output channels per pass; per output pixel and
/// in-bounds kernel row, one dot product over the contiguous run of
/// in-bounds taps × input channels (the same run in OHWI weights), or per
/// tap when dilated.
pub(crate) fn conv<M: Mac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
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

/// Output channels handled per pass of the depthwise kernels (their weight
/// sums and requantization parameters live on the stack).
const CHUNK: usize = 64;

/// Per-chunk constants: `bias + offset·Σ_taps w` and decoded requantization.
#[allow(clippy::too_many_arguments)]
fn chunk_consts(
    c0: usize,
    cn: usize,
    cout: usize,
    off: i32,
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    full: &mut [i32; CHUNK],
    req: &mut [Requant; CHUNK],
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
        *r = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?);
    }
    Ok(())
}

/// Four lanes of `s` from `i`, zero-filled past `n` lanes (block tails).
#[inline(always)]
fn lanes(s: &[i8], i: usize, n: usize) -> Result<[i8; 4], crate::error::KernelError> {
    if n >= 4 {
        return four(s, i).copied();
    }
    let mut v = [0i8; 4];
    for (j, d) in v.iter_mut().enumerate().take(n) {
        *d = *s.get(i + j).ok_or(BAD)?;
    }
    Ok(v)
}

/// `arm_depthwise_conv_s8`: per output pixel, blocks of four channels in
/// registers over the in-bounds taps (channel-contiguous NHWC inputs and
/// IHWO weights).
pub(crate) fn depthwise<M: Mac>(
    ops: &ConvOperands<'_>,
    ch_mult: usize,
    output: &mut [i8],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let zp = q.input_offset.wrapping_neg();
    if i.c == 1 && kh * kw <= PACK_IC && (-128..=127).contains(&zp) {
        return depthwise_single_gemm::<M>(ops, output);
    }
    if ch_mult == 1 && (-128..=127).contains(&zp) {
        if M::PACKED_DEPTHWISE && kh * kw <= DW_MAX_TAPS {
            return depthwise_packed::<M>(ops, output);
        }
        return depthwise_mult1::<M>(ops, output);
    }
    let (cin, cout) = (i.c, o.c);
    let off = q.input_offset;
    let mut full = [0i32; CHUNK];
    let mut req = [Requant::new(0, 0); CHUNK];
    let mut c0 = 0;
    while c0 < cout {
        let cn = CHUNK.min(cout - c0);
        chunk_consts(
            c0, cn, cout, off, filter, bias, mult, shift, &mut full, &mut req,
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

/// Depthwise with depth multiplier 1: output channel `c` reads input
/// channel `c`, so four adjacent channels are one word of the input and one
/// word of the weights per tap. Padding taps read the input zero point
/// (offset-corrected 0), so every pixel runs the same full tap loop.
pub(crate) fn depthwise_mult1<M: Mac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
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
    let mut full = [0i32; CHUNK];
    let mut req = [Requant::new(0, 0); CHUNK];
    let mut accs = [0i32; CHUNK];
    let mut c0 = 0;
    while c0 < ch {
        let cn = CHUNK.min(ch - c0);
        chunk_consts(
            c0, cn, ch, off, filter, bias, mult, shift, &mut full, &mut req,
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
                    finish_into(q, &accs, &full, &req, dst);
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

/// Depthwise multiplier 1 for [`Mac::PACKED_DEPTHWISE`] implementations:
/// per channel chunk the weights are unpacked once into int16 lanes
/// (per four-channel block and tap: channels 0,2 and 1,3); per output pixel
/// a table holds every tap's input run (or a run of zero points for padding
/// taps), so border and interior pixels run the same loop
/// ([`Mac::dw_block`]: one input word, two unpacks, four `SMLAxy` per tap).
pub(crate) fn depthwise_packed<M: Mac>(ops: &ConvOperands<'_>, output: &mut [i8]) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (bias, mult, shift) = (ops.bias, ops.mult, ops.shift);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh * kw;
    if ntaps > DW_MAX_TAPS {
        return depthwise_mult1::<M>(ops, output);
    }
    let ch = o.c;
    let off = q.input_offset;
    let zpbuf = [off.wrapping_neg() as i8; CHUNK];
    // Channels per chunk: whole blocks of four whose unpacked weights fit.
    let chunk = CHUNK.min(4 * (DW_PACK_WORDS / (2 * ntaps.max(1))));
    if chunk == 0 {
        return Err(BAD);
    }
    let mut full = [0i32; CHUNK];
    let mut req = [Requant::new(0, 0); CHUNK];
    let mut accs = [0i32; CHUNK];
    let mut wq = [0u32; DW_PACK_WORDS];
    let mut c0 = 0;
    while c0 < ch {
        let cn = chunk.min(ch - c0);
        chunk_consts(
            c0, cn, ch, off, filter, bias, mult, shift, &mut full, &mut req,
        )?;
        let blocks = cn / 4;
        let fast = req.iter().take(cn).all(Requant::is_fast);
        let mut taps = Taps::new(cn);
        for (blk, dst) in wq
            .chunks_exact_mut(2 * ntaps.max(1))
            .take(blocks)
            .enumerate()
        {
            for (t, d) in dst.as_chunks_mut::<2>().0.iter_mut().enumerate() {
                let w = super::dsp::word(four(filter, t * ch + c0 + 4 * blk)?);
                *d = [super::dsp::sxtb16(w), super::dsp::sxtb16_ror8(w)];
            }
        }
        for b in 0..o.n {
            for oy in 0..o.h {
                for ox in 0..o.w {
                    taps.clear();
                    for ky in 0..kh {
                        let y = (oy * g.stride.0 + ky * g.dilation.0).wrapping_sub(g.padding.0);
                        for kx in 0..kw {
                            let xx =
                                (ox * g.stride.1 + kx * g.dilation.1).wrapping_sub(g.padding.1);
                            let run = if y < i.h && xx < i.w {
                                row(input, ((b * i.h + y) * i.w + xx) * ch + c0, cn)?
                            } else {
                                zpbuf.get(..cn).ok_or(BAD)?
                            };
                            taps.push(run)?;
                        }
                    }
                    M::dw_row(&taps, &wq, &full, &mut accs, blocks)?;
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
                    let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                    let dst = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                    finish_acc(q, &accs, &req, fast, dst);
                }
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// The input runs of one output pixel's taps: every run has at least `len`
/// values (checked on push), which is what lets [`Mac::dw_block`] read four
/// values at any block offset below `len` without bounds checks.
/// Most taps a [`Taps`] table holds (what [`DW_PACK_WORDS`] admits).
const DW_MAX_TAPS: usize = DW_PACK_WORDS / 8;

pub(crate) struct Taps<'a> {
    runs: [&'a [i8]; DW_MAX_TAPS],
    /// `runs[t].as_ptr()`, for the DSP loop.
    #[cfg_attr(not(all(target_arch = "arm", feature = "dsp")), allow(dead_code))]
    ptrs: [*const i8; DW_MAX_TAPS],
    n: usize,
    len: usize,
}

impl<'a> Taps<'a> {
    #[inline(always)]
    pub(crate) fn new(len: usize) -> Self {
        Taps {
            runs: [&[]; DW_MAX_TAPS],
            ptrs: [core::ptr::null(); DW_MAX_TAPS],
            n: 0,
            len,
        }
    }

    /// Drops every run (keeps the buffers: no re-initialisation per pixel).
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.n = 0;
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, run: &'a [i8]) -> KernelResult {
        if run.len() < self.len {
            return Err(BAD);
        }
        let (Some(r), Some(p)) = (self.runs.get_mut(self.n), self.ptrs.get_mut(self.n)) else {
            return Err(BAD);
        };
        (*r, *p) = (run, run.as_ptr());
        self.n += 1;
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn runs(&self) -> impl Iterator<Item = &'a [i8]> + '_ {
        self.runs.iter().take(self.n).copied()
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.n
    }

    /// Start pointers of the runs (each run at least [`Taps::len`] long).
    #[cfg_attr(not(all(target_arch = "arm", feature = "dsp")), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn ptrs(&self) -> &[*const i8] {
        self.ptrs.get(..self.n).unwrap_or(&[])
    }
}

/// Bytes of gathered input windows [`depthwise_single_gemm`] keeps.
const PATCH_BYTES: usize = 1024;

/// Depthwise with one input channel as a matrix product, for
/// [`Mac::PACKED_POINTWISE`] implementations: each output pixel's window
/// (padding taps = the input zero point, whose offset-corrected value is 0;
/// length rounded up to whole groups of four with zeros) is one row, each
/// output channel's taps one column, and the pointwise machinery
/// ([`Mac::pack4`], [`Mac::dot_1x4`]) runs four channels against a block of
/// gathered windows at a time.
pub(crate) fn depthwise_single_gemm<M: Mac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
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
    let mut patches = [0i8; PATCH_BYTES];
    let mut cols = [[0i8; PACK_IC]; 4];
    let mut buf = [0u32; 2 * PACK_IC];
    let packed = buf.get_mut(..2 * len).ok_or(BAD)?;
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
            patch.fill(0);
            let mut t = 0;
            for ky in 0..kh {
                let y = Window::tap(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h);
                for kx in 0..kw {
                    let x = Window::tap(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w);
                    let v = match (y, x) {
                        (Some(y), Some(x)) => *input.get((b * i.h + y) * i.w + x).ok_or(BAD)?,
                        _ => zp,
                    };
                    *patch.get_mut(t).ok_or(BAD)? = v;
                    t += 1;
                }
            }
        }
        let mut oc = 0;
        while oc < cout {
            let n = 4.min(cout - oc);
            let mut init4 = [0i32; 4];
            let mut req4 = [Requant::new(0, 0); 4];
            for (l, col) in cols.iter_mut().enumerate() {
                let c = oc + l.min(n - 1);
                let mut s = 0i32;
                for (t, d) in col.iter_mut().enumerate().take(ntaps) {
                    *d = *filter.get(t * cout + c).ok_or(BAD)?;
                    s = s.wrapping_add(*d as i32);
                }
                init4[l] = bias
                    .and_then(|b| b.get(c).copied())
                    .unwrap_or(0)
                    .wrapping_add(off.wrapping_mul(s));
                req4[l] = Requant::new(*mult.get(c).ok_or(BAD)?, *shift.get(c).ok_or(BAD)?);
            }
            let fast4 = req4.iter().all(Requant::is_fast);
            let [c0, c1, c2, c3] = &cols;
            let (Some(c0), Some(c1), Some(c2), Some(c3)) =
                (c0.get(..len), c1.get(..len), c2.get(..len), c3.get(..len))
            else {
                return Err(BAD);
            };
            M::pack4([c0, c1, c2, c3], packed);
            for (k, patch) in patches.chunks_exact(len.max(1)).take(pn).enumerate() {
                let acc = M::dot_1x4(patch, packed, init4);
                let ob = (p0 + k) * cout + oc;
                let dst = output.get_mut(ob..ob + n).ok_or(BAD)?;
                finish_acc(q, &acc, &req4, fast4, dst);
            }
            oc += 4;
        }
        p0 += pn;
    }
    Ok(())
}

/// `arm_fully_connected_s8` with `filter_offset = 0` (what the exporter
/// writes: symmetric weights): two outputs per pass.
#[allow(clippy::too_many_arguments)]
pub(crate) fn fully_connected<M: Mac>(
    q: &ConvQuant,
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
            let [a0, a1] = M::dot_1x2(row(input, b * in_features, in_features)?, w0, w1);
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

/// In-bounds input rows `[lo, hi)` of a dilation-1 window: CMSIS-NN's
/// `k_start = MAX(0, -base)`, `k_end = MIN(kernel, size - base)` with
/// `base = o·stride − pad`, in positions rather than taps. O(1) and bounded
/// by `size` whatever kernel, stride and padding the file holds.
#[inline(always)]
fn clip(o: usize, kernel: usize, stride: usize, pad: usize, size: usize) -> (usize, usize) {
    let start = o.saturating_mul(stride);
    let (lo, hi) = match start.checked_sub(pad) {
        Some(base) => (base, base.saturating_add(kernel)),
        None => (0, kernel.saturating_sub(pad - start)),
    };
    let hi = hi.min(size);
    (lo.min(hi), hi)
}

/// `arm_avgpool_s8`: four channels at a time summed over the in-bounds
/// window, mean rounded half away from zero, clamped. An empty window is an
/// error (CMSIS-NN divides by its zero count).
pub(crate) fn avg_pool(
    g: &Window,
    act: (i32, i32),
    input: &[i8],
    output: &mut [i8],
) -> KernelResult {
    let (i, o) = (g.input, g.output);
    let c = i.c;
    for b in 0..o.n {
        for oy in 0..o.h {
            let (y0, y1) = clip(oy, g.kernel.0, g.stride.0, g.padding.0, i.h);
            for ox in 0..o.w {
                let (x0, x1) = clip(ox, g.kernel.1, g.stride.1, g.padding.1, i.w);
                let count = ((y1 - y0) * (x1 - x0)) as i32;
                if count == 0 {
                    return Err(BAD);
                }
                let out_base = ((b * o.h + oy) * o.w + ox) * c;
                let mut j = 0;
                while j < c {
                    let n = 4.min(c - j);
                    let mut s = [0i32; 4];
                    for y in y0..y1 {
                        let mut at = ((b * i.h + y) * i.w + x0) * c + j;
                        for _ in x0..x1 {
                            let v = lanes(input, at, n)?;
                            at += c;
                            for (s, v) in s.iter_mut().zip(v) {
                                *s = s.wrapping_add(v as i32);
                            }
                        }
                    }
                    for (l, &sum) in s.iter().enumerate().take(n) {
                        let rounded = if sum > 0 {
                            sum.wrapping_add(count / 2)
                        } else {
                            sum.wrapping_sub(count / 2)
                        };
                        let m = rounded.checked_div(count).ok_or(BAD)?;
                        put(output, out_base + j + l, m.max(act.0).min(act.1) as i8)?;
                    }
                    j += 4;
                }
            }
        }
    }
    Ok(())
}
