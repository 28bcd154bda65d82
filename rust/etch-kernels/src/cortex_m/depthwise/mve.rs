//! [`DepthwiseMac`] for Helium: one-input-channel layers (DS-CNN's first)
//! as MVE matrix products ([`gemm_x4`]); [`Dsp`]'s building blocks for the
//! other depthwise loops.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::common::ConvOperands;
use super::super::conv::PACK_IC;
use super::super::mac::{Dsp, Mve};
use super::super::mve::{gemm_x4, GroupConsts};
use super::super::{Window, BAD};
use super::{DepthwiseMac, Taps, PATCH_BYTES};
use crate::error::{KernelError, KernelResult};

impl DepthwiseMac for Mve {
    const PACKED_DEPTHWISE: bool = true;

    #[inline(always)]
    fn single_channel_layer(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
        single_gemm(ops, output)
    }

    #[inline(always)]
    fn dw_block(
        taps: &Taps<'_>,
        j: usize,
        w: &[u32],
        init: [i32; 4],
    ) -> Result<[i32; 4], KernelError> {
        Dsp::dw_block(taps, j, w, init)
    }

    #[inline(always)]
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        Dsp::dw_row(taps, w, init, out, blocks)
    }

    #[inline(always)]
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4] {
        Dsp::mul4(acc, x, w)
    }
}

/// Depthwise with one input channel (DS-CNN's first layer) as MVE matrix
/// products: each output pixel's window (padding taps = the input zero
/// point, whose offset-corrected value is 0; zero-filled to whole chunks of
/// 16) is one row, four output channels' taps are the packed weight rows
/// of one [`gemm_x4`] loop over a block of gathered windows (1.5 KiB of
/// stack, not kernel scratch). `None` (the
/// generic loops run) unless the output channels come in fours, the
/// window fits [`PACK_IC`] and every channel's requantization is admitted.
fn single_gemm(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh.checked_mul(kw)?;
    let len = ntaps.div_ceil(16) * 16;
    let cout = o.c;
    if ntaps == 0 || len > PACK_IC || cout % 4 != 0 {
        return None;
    }
    for c in 0..cout {
        GroupConsts::neg_right(*ops.mult.get(c)?, *ops.shift.get(c)?)?;
    }
    let zp = q.input_offset.wrapping_neg() as i8;
    let per_block = PATCH_BYTES / len;
    let pixels = o.n * o.h * o.w;
    let mut patches = [0i8; PATCH_BYTES];
    let mut packed = [0i8; 4 * PACK_IC];
    Some((|| {
        let packed = packed.get_mut(..4 * len).ok_or(BAD)?;
        let mut p0 = 0;
        while p0 < pixels {
            let pn = per_block.min(pixels - p0);
            for (k, patch) in patches.chunks_exact_mut(len).take(pn).enumerate() {
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
            for oc in (0..cout).step_by(4) {
                let mut c = GroupConsts {
                    out_offset: [q.output_offset; 4],
                    act_min: [q.act_min; 4],
                    act_max: [q.act_max; 4],
                    ..GroupConsts::default()
                };
                for l in 0..4 {
                    let ch = oc + l;
                    let mut s = 0i32;
                    for (j, chunk) in packed.chunks_exact_mut(64).enumerate() {
                        for (n, d) in chunk.iter_mut().skip(16 * l).take(16).enumerate() {
                            let t = 16 * j + n;
                            *d = if t < ntaps {
                                *filter.get(t * cout + ch).ok_or(BAD)?
                            } else {
                                0
                            };
                            s = s.wrapping_add(*d as i32);
                        }
                    }
                    let (m, sh) = (
                        *ops.mult.get(ch).ok_or(BAD)?,
                        *ops.shift.get(ch).ok_or(BAD)?,
                    );
                    c.neg_right[l] = GroupConsts::neg_right(m, sh).ok_or(BAD)?;
                    c.mult[l] = m;
                    c.kernel_sum[l] = ops
                        .bias
                        .and_then(|b| b.get(ch).copied())
                        .unwrap_or(0)
                        .wrapping_add(q.input_offset.wrapping_mul(s));
                }
                let rows = patches.get(..pn * len).ok_or(BAD)?;
                let out = output.get_mut(p0 * cout + oc..).ok_or(BAD)?;
                gemm_x4(rows, len / 16, packed, &c, pn, out, cout)?;
            }
            p0 += pn;
        }
        Ok(())
    })())
}
