//! Any convolution as CMSIS-NN's `arm_convolve_s8` computes it: each output
//! pixel's window gathered into one row of `K = kh·kw·cin` values, then a
//! matrix product of those rows by the `cout` weight rows (OHWI: row `oc`
//! is `K` contiguous values).
//!
//! Taps in the padding are gathered as the input zero point
//! (`-input_offset`), whose offset-corrected value is 0, so every pixel
//! sums over all `K` taps and the offset term is one constant per channel,
//! `bias + input_offset·Σw` (CMSIS-NN's kernel sum), computed once per call
//! into the kernel scratch. Modulo 2^32 that is CMSIS-NN's
//! `Σ (x + input_offset)·w` over the in-bounds taps.

use super::super::common::{row, taps, ConvOperands};
use super::super::requant::Requant;
use super::super::BAD;
use super::ConvMac;
use crate::error::KernelResult;

/// The scratch split [`conv_im2col`] and the Helium variant use: the
/// per-channel constants (`words` 32-bit words per channel), then `rows`
/// gathered windows of `k` values. `None` when they do not fit or the input
/// zero point is not an int8 value.
#[inline(always)]
pub(crate) fn split_scratch<'s>(
    ops: &ConvOperands<'_>,
    scratch: &'s mut [u64],
    words: usize,
    rows: usize,
) -> Option<(&'s mut [i32], &'s mut [i8])> {
    let (g, q) = (&ops.g, &ops.q);
    let k = g.kernel.0.checked_mul(g.kernel.1)?.checked_mul(g.input.c)?;
    let consts = g.output.c.checked_mul(words)?.div_ceil(2);
    let gathered = k.checked_mul(rows)?.div_ceil(8);
    if k == 0
        || !(-127..=128).contains(&q.input_offset)
        || consts.checked_add(gathered)? > scratch.len()
    {
        return None;
    }
    let (head, tail) = scratch.split_at_mut_checked(consts)?;
    let consts: &mut [i32] = bytemuck::cast_slice_mut(head);
    let gathered: &mut [i8] = bytemuck::cast_slice_mut(tail.get_mut(..gathered)?);
    Some((
        consts.get_mut(..g.output.c * words)?,
        gathered.get_mut(..k * rows)?,
    ))
}

/// An output pixel's position (batch, row, column), stepped in NHW order.
#[derive(Clone, Copy)]
pub(crate) struct Pixel {
    pub(crate) b: usize,
    pub(crate) y: usize,
    pub(crate) x: usize,
}

impl Pixel {
    pub(crate) const FIRST: Pixel = Pixel { b: 0, y: 0, x: 0 };

    /// Pixel `p` (NHW order) of an output `h × w`.
    #[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
    #[inline(never)]
    pub(crate) fn of(p: usize, h: usize, w: usize) -> Option<Pixel> {
        let (rest, x) = (p.checked_div(w)?, p.checked_rem(w)?);
        Some(Pixel {
            b: rest.checked_div(h)?,
            y: rest.checked_rem(h)?,
            x,
        })
    }

    /// The next pixel of an output `h × w` (past the last: batch `n`).
    #[inline(always)]
    pub(crate) fn next(self, h: usize, w: usize) -> Pixel {
        if self.x + 1 < w {
            Pixel {
                x: self.x + 1,
                ..self
            }
        } else if self.y + 1 < h {
            Pixel {
                y: self.y + 1,
                x: 0,
                ..self
            }
        } else {
            Pixel {
                b: self.b + 1,
                y: 0,
                x: 0,
            }
        }
    }
}

/// Output pixel `px`'s window into `dst` (`K` values, taps in the padding
/// as `zp`).
// Inlined into Helium's one caller; one copy for the generic path's two.
#[cfg_attr(feature = "mve", inline(always))]
#[cfg_attr(not(feature = "mve"), inline(never))]
pub(crate) fn gather(ops: &ConvOperands<'_>, px: Pixel, zp: i8, dst: &mut [i8]) -> KernelResult {
    let g = &ops.g;
    let (i, (kh, kw)) = (g.input, g.kernel);
    let cin = i.c;
    let Pixel { b, y: oy, x: ox } = px;
    let (ky0, ky1) = span(oy, kh, g.stride.0, g.padding.0, g.dilation.0, i.h);
    let (kx0, kx1) = span(ox, kw, g.stride.1, g.padding.1, g.dilation.1, i.w);
    let run = kw * cin;
    let (head_len, mid_len) = (kx0 * cin, (kx1 - kx0) * cin);
    for (ky, d) in super::super::common::runs_mut(dst, run).enumerate() {
        if ky < ky0 || ky >= ky1 || mid_len == 0 {
            fill(d, zp);
            continue;
        }
        let y = oy * g.stride.0 + ky * g.dilation.0 - g.padding.0;
        let (head, rest) = d.split_at_mut_checked(head_len).ok_or(BAD)?;
        let (mid, tail) = rest.split_at_mut_checked(mid_len).ok_or(BAD)?;
        fill(head, zp);
        fill(tail, zp);
        let at = |kx: usize| {
            ((b * i.h + y) * i.w + ox * g.stride.1 + kx * g.dilation.1 - g.padding.1) * cin
        };
        if g.dilation.1 == 1 {
            copy(mid, row(ops.input, at(kx0), mid_len)?);
        } else {
            for (r, m) in super::super::common::runs_mut(mid, cin).enumerate() {
                copy(m, row(ops.input, at(kx0 + r), cin)?);
            }
        }
    }
    Ok(())
}

/// The in-bounds tap range `[lo, hi)` of output `o` along one axis:
/// [`taps`], in closed form when undilated.
#[inline(always)]
fn span(o: usize, k: usize, stride: usize, pad: usize, dil: usize, size: usize) -> (usize, usize) {
    if dil != 1 {
        return taps(o, k, stride, pad, dil, size);
    }
    // Tap t is at o·stride + t − pad (no overflow: `Window::positions_fit`).
    let start = o * stride;
    let lo = pad.saturating_sub(start).min(k);
    let hi = size
        .saturating_add(pad)
        .saturating_sub(start)
        .min(k)
        .max(lo);
    (lo, hi)
}

/// `dst.fill(v)`; on Helium a tail-predicated vector loop (no call).
#[inline(always)]
fn fill(dst: &mut [i8], v: i8) {
    if dst.is_empty() {
        return;
    }
    #[cfg(all(target_arch = "arm", feature = "mve"))]
    // SAFETY: the tail-predicated loop stores exactly dst.len() bytes
    // from dst's start (lanes past the count are predicated off); q0,
    // lr and flags are clobbered and declared.
    unsafe {
        core::arch::asm!(
            "vdup.8 q0, {v}",
            "dlstp.8 lr, lr",
            "2:",
            "vstrb.8 q0, [{d}], #16",
            "letp lr, 2b",
            v = in(reg) v as i32,
            d = inout(reg) dst.as_mut_ptr() => _,
            inout("lr") dst.len() => _,
            out("d0") _, out("d1") _,
            options(nostack),
        );
    }
    #[cfg(not(all(target_arch = "arm", feature = "mve")))]
    dst.fill(v);
}

/// `dst.copy_from_slice(src)` over the common length; on Helium a
/// tail-predicated vector loop (no call).
#[inline(always)]
fn copy(dst: &mut [i8], src: &[i8]) {
    let n = dst.len().min(src.len());
    if n == 0 {
        return;
    }
    #[cfg(all(target_arch = "arm", feature = "mve"))]
    // SAFETY: the tail-predicated loop reads src[0..n] and writes
    // dst[0..n], n the common length (lanes past it are predicated off);
    // q0, lr and flags are clobbered and declared.
    unsafe {
        core::arch::asm!(
            "dlstp.8 lr, lr",
            "2:",
            "vldrb.u8 q0, [{s}], #16",
            "vstrb.8 q0, [{d}], #16",
            "letp lr, 2b",
            s = inout(reg) src.as_ptr() => _,
            d = inout(reg) dst.as_mut_ptr() => _,
            inout("lr") n => _,
            out("d0") _, out("d1") _,
            options(nostack),
        );
    }
    // A zip, not `copy_from_slice`: its out-of-line length check would
    // link the panic machinery into embedded builds.
    #[cfg(not(all(target_arch = "arm", feature = "mve")))]
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
    }
}

/// `bias + input_offset·Σw` of every output channel into `ks`.
#[inline(always)]
pub(crate) fn kernel_sums(
    ops: &ConvOperands<'_>,
    k: usize,
    ks: &mut [i32],
    stride: usize,
) -> KernelResult {
    for (oc, s) in ks.iter_mut().step_by(stride.max(1)).enumerate() {
        let w = row(ops.filter, oc * k, k)?;
        *s = super::super::common::init(ops.bias, oc, ops.q.input_offset, w);
    }
    Ok(())
}

/// [`super::conv`]'s geometry as gathered rows times weight rows: two
/// pixels × two output channels per [`ConvMac::dot_2x2_rows`] (an odd last
/// pixel or channel runs paired with itself). `None` (the caller's loops
/// run) unless the kernel sums and two gathered rows fit `scratch`.
pub(crate) fn conv_im2col<M: ConvMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (ks, rows) = split_scratch(ops, scratch, 1, 2)?;
    Some(im2col_pairs::<M>(ops, output, ks, rows))
}

fn im2col_pairs<M: ConvMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    ks: &mut [i32],
    rows: &mut [i8],
) -> KernelResult {
    let (g, q) = (&ops.g, &ops.q);
    let k = rows.len() / 2;
    let cout = g.output.c;
    let pixels = g.output.n * g.output.h * g.output.w;
    let zp = q.input_offset.wrapping_neg() as i8;
    kernel_sums(ops, k, ks, 1)?;
    let (oh, ow) = (g.output.h, g.output.w);
    let mut px = Pixel::FIRST;
    let mut p = 0;
    while p < pixels {
        let p1 = if p + 1 < pixels { p + 1 } else { p };
        let px1 = px.next(oh, ow);
        let (r0, r1) = rows.split_at_mut_checked(k).ok_or(BAD)?;
        gather(ops, px, zp, r0)?;
        gather(ops, if p1 != p { px1 } else { px }, zp, r1)?;
        px = px1.next(oh, ow);
        let mut oc = 0;
        while oc < cout {
            let oc1 = if oc + 1 < cout { oc + 1 } else { oc };
            let [a, b, c, d] = if oc1 != oc {
                M::dot_2x2_rows(rows, row(ops.filter, oc * k, 2 * k)?, k)
            } else {
                let w = row(ops.filter, oc * k, k)?;
                let (x0, x1) = rows.split_at_checked(k).ok_or(BAD)?;
                M::dot_2x2(x0, x1, w, w)
            };
            let (k0, k1) = (*ks.get(oc).ok_or(BAD)?, *ks.get(oc1).ok_or(BAD)?);
            let r0 = Requant::new(
                *ops.mult.get(oc).ok_or(BAD)?,
                *ops.shift.get(oc).ok_or(BAD)?,
            );
            let r1 = Requant::new(
                *ops.mult.get(oc1).ok_or(BAD)?,
                *ops.shift.get(oc1).ok_or(BAD)?,
            );
            let (o0, o1) = (p * cout + oc, p1 * cout + oc);
            put2(
                output,
                o0,
                oc1 != oc,
                q.out(k0.wrapping_add(a), &r0),
                q.out(k1.wrapping_add(b), &r1),
            )?;
            if p1 != p {
                put2(
                    output,
                    o1,
                    oc1 != oc,
                    q.out(k0.wrapping_add(c), &r0),
                    q.out(k1.wrapping_add(d), &r1),
                )?;
            }
            oc += 2;
        }
        p += 2;
    }
    Ok(())
}

#[inline(always)]
fn put2(output: &mut [i8], at: usize, two: bool, a: i8, b: i8) -> KernelResult {
    if two {
        output
            .get_mut(at..at + 2)
            .ok_or(BAD)?
            .copy_from_slice(&[a, b]);
    } else {
        *output.get_mut(at).ok_or(BAD)? = a;
    }
    Ok(())
}
