//! Depthwise with one input channel (DS-CNN's first layer) as a matrix
//! product on the convolution's building blocks
//! ([`ConvMac`](super::super::conv::ConvMac)).

use super::super::common::{runs, take, taps, ConvOperands};
use super::super::conv::{QuadRows, PACK_IC};
use super::super::requant::{finish_acc, Requant};
use super::super::{Window, BAD};
use super::DepthwiseMac;
use crate::error::KernelResult;

/// Bytes of gathered input windows [`depthwise_single_gemm`] keeps.
pub(crate) const PATCH_BYTES: usize = 1024;

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
    // Weight columns ([ConvMac::pack4]'s input), then with ConvMac::QUAD the
    // quad loop's operands.
    let mid = take::<u64, { PACK_IC / 2 }>(&mut scratch)?;
    let buf = take::<u32, { 2 * PACK_IC }>(&mut scratch)?;
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
            {
                let cols: &mut [[i8; PACK_IC]] =
                    bytemuck::try_cast_slice_mut(&mut mid[..]).map_err(|_| BAD)?;
                for (l, (col, sum)) in cols.iter_mut().zip(init4.iter_mut()).enumerate() {
                    let c = oc + l.min(n - 1);
                    // Taps past the last (up to a multiple of four) weigh 0
                    // (rewritten each pass: the quad loop's operands share
                    // this scratch).
                    for (t, d) in col.iter_mut().enumerate().take(len) {
                        *d = if t < ntaps {
                            *filter.get(t * cout + c).ok_or(BAD)?
                        } else {
                            0
                        };
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
                let geo = QuadRows {
                    pixels: pn,
                    xstep: len,
                    ostep: cout,
                };
                M::pointwise_quad(rows, packed, init4, &req4, out, &geo, ctx)?;
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
