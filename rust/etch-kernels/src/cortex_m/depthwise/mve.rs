//! [`DepthwiseMac`] for Helium: one-input-channel layers (DS-CNN's first)
//! as MVE matrix products ([`gemm_x4`]); channel-multiplier-1 layers whose
//! window fits one vector on channel planes ([`planar`]); [`Dsp`]'s
//! building blocks for the other depthwise loops.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::common::ConvOperands;
use super::super::conv::PACK_IC;
use super::super::isa::mve::{
    dw_plane_channel, dw_plane_in, dw_plane_out, gather_windows, gemm_x4, pack_col, plane_weights,
    GatherOffsets, GroupConsts, PlaneConsts, PlaneLimits, PlaneTaps, PLANE_GROUP,
};
use super::super::isa::{Dsp, Mve};
use super::super::BAD;
use super::{DepthwiseMac, Taps, PATCH_BYTES};
use crate::error::{KernelError, KernelResult};

impl DepthwiseMac for Mve {
    const PACKED_DEPTHWISE: bool = true;

    #[inline(always)]
    fn single_channel_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        single_gemm(ops, output, scratch)
    }

    #[inline(always)]
    fn mult1_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        planar(ops, output, scratch)
    }

    depthwise_blocks_from!(Dsp: dw_block, dw_row, mul4);
}

/// Depthwise with one input channel (DS-CNN's first layer) as MVE matrix
/// products: the input is copied once into a plane framed by the input
/// zero point (whose offset-corrected value is 0) as far as windows reach,
/// so each output pixel's window is one `VLDRB.U8` gather per 16 taps
/// (offsets below 256; lanes past the last tap weigh 0); four output
/// channels' taps, gathered from the IHWO weights with 16-bit offsets
/// ([`pack_col`]), are the packed weight rows of one [`gemm_x4`] loop over
/// a block of gathered windows. Plane, windows and weight rows live in the
/// kernel scratch. `None` (the generic loops run) unless the output
/// channels come in fours, the window fits [`PACK_IC`] and 256 bytes of
/// plane, the plane fits the scratch and every channel's requantization is
/// admitted.
fn single_gemm(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh.checked_mul(kw)?;
    let chunks = ntaps.div_ceil(16);
    let len = 16 * chunks;
    let cout = o.c;
    if ntaps == 0 || len > PACK_IC || cout % 4 != 0 || cout > 65535 / 7 || o.h == 0 || o.w == 0 {
        return None;
    }
    for c in 0..cout {
        GroupConsts::neg_right(*ops.mult.get(c)?, *ops.shift.get(c)?)?;
    }
    let ((sy, sx), (dy, dx), (pt, pl)) = (g.stride, g.dilation, g.padding);
    // Padded columns and rows the windows reach, counted from the first.
    let reach = |o: usize, s: usize, k: usize, d: usize| {
        (o - 1)
            .checked_mul(s)?
            .checked_add((k - 1).checked_mul(d)?)?
            .checked_add(1)
    };
    let pw_ = reach(o.w, sx, kw, dx)?.max(pl.checked_add(i.w)?);
    let ph_ = reach(o.h, sy, kh, dy)?.max(pt.checked_add(i.h)?);
    let plane_bytes = ph_.checked_mul(pw_)?;
    let offs = GatherOffsets::<PACK_IC>::new(
        (0..kh).flat_map(|ky| (0..kw).map(move |kx| ky * dy * pw_ + kx * dx)),
        chunks,
    )?;
    let bytes: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    let (plane, rest) = bytes.split_at_mut_checked(plane_bytes)?;
    let (patches, rest) = rest.split_at_mut_checked(PATCH_BYTES)?;
    let packed = rest.get_mut(..4 * len)?;
    let zp = q.input_offset.wrapping_neg() as i8;
    let per_block = PATCH_BYTES / len;
    let pixels = o.h * o.w;
    Some((|| {
        for b in 0..o.n {
            plane.fill(zp);
            for y in 0..i.h {
                let src = input.get((b * i.h + y) * i.w..).ok_or(BAD)?;
                let dst = plane.get_mut((pt + y) * pw_ + pl..).ok_or(BAD)?;
                dst.get_mut(..i.w)
                    .ok_or(BAD)?
                    .copy_from_slice(src.get(..i.w).ok_or(BAD)?);
            }
            let mut p0 = 0;
            while p0 < pixels {
                let pn = per_block.min(pixels - p0);
                // Windows, one output row's run at a time.
                let mut k = 0;
                while k < pn {
                    let (oy, ox) = ((p0 + k) / o.w, (p0 + k) % o.w);
                    let run = (o.w - ox).min(pn - k);
                    let dst = patches.get_mut(k * len..).ok_or(BAD)?;
                    gather_windows(plane, oy * sy * pw_ + ox * sx, sx, run, &offs, dst)?;
                    k += run;
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
                        let row = packed.get_mut(16 * l..).ok_or(BAD)?;
                        let s = pack_col(filter, ch, cout, ntaps, chunks, row)?;
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
                    let out = output.get_mut((b * pixels + p0) * cout + oc..).ok_or(BAD)?;
                    gemm_x4(rows, chunks, packed, &c, pn, out, cout)?;
                }
                p0 += pn;
            }
        }
        Ok(())
    })())
}

/// Depthwise with channel multiplier 1 on channel planes (DS-CNN's 3×3
/// layers): per group of [`PLANE_GROUP`] channels, each channel's input is
/// gathered into a plane of rows `s = W + pad_w` bytes apart, framed by the
/// input zero point (whose offset-corrected value is 0: the left padding
/// of row `r + 1` is the right padding of row `r`). Output `(y, x)`'s
/// window then starts at plane byte `q = y·s + x` and its taps lie at fixed
/// offsets `ky·dil_h·s + kx·dil_w`; when they fit 15 lanes, one 16-byte
/// load serves outputs `q` and `q + 1` (two weight vectors, one `VMLADAV`
/// each), four outputs are requantized as one vector and written back in
/// place, and the group's outputs are scattered to NHWC. Positions `x ≥
/// W_out` of each row are computed and dropped. The planes live in the
/// kernel scratch.
///
/// `None` (the other loops run) unless stride is 1, the channels come in
/// groups of eight, the window fits, the planes fit the scratch and every
/// channel's requantization is admitted.
fn planar(ops: &ConvOperands<'_>, output: &mut [i8], scratch: &mut [u64]) -> Option<KernelResult> {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ch = o.c;
    let ((dy, dx), (ph, pw)) = (g.dilation, g.padding);
    if g.stride != (1, 1)
        || ch == 0
        || !ch.is_multiple_of(PLANE_GROUP)
        || i.c != ch
        || o.h == 0
        || o.w == 0
    {
        return None;
    }
    let s = i.w.checked_add(pw)?;
    // Padded columns (and rows) a window reaches, counted from the first.
    let reach_w = (o.w - 1).checked_add(kw.checked_sub(1)?.checked_mul(dx)?)? + 1;
    let reach_h = (o.h - 1).checked_add(kh.checked_sub(1)?.checked_mul(dy)?)? + 1;
    // Taps of the odd output at most lane 15.
    let span = (kh - 1)
        .checked_mul(dy)?
        .checked_mul(s)?
        .checked_add((kw - 1).checked_mul(dx)?)?;
    if o.w > s || reach_w > s.checked_add(pw)? || span > 14 {
        return None;
    }
    // One row more than windows reach: the last row's right padding is the
    // next row's left padding.
    let rows = reach_h.max(ph.checked_add(i.h)?).checked_add(1)?;
    let groups = o.h.checked_mul(s)?.div_ceil(4);
    let ps = rows.checked_mul(s)?.max(4 * groups + 14);
    let bytes = (PLANE_GROUP * ps).div_ceil(16) * 16;
    let planes: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    let planes = planes.get_mut(..bytes)?;
    if ps > 65535 / 7 {
        return None;
    }
    for c in 0..ch {
        GroupConsts::neg_right(*ops.mult.get(c)?, *ops.shift.get(c)?)?;
    }
    let lim = PlaneLimits {
        out_offset: [q.output_offset; 4],
        act_min: [q.act_min; 4],
        act_max: [q.act_max; 4],
    };
    let zp = q.input_offset.wrapping_neg() as i8;
    let (in_px, out_px) = (i.h * i.w * ch, o.h * o.w * ch);
    // Tap (ky, kx): lane ky·dil_h·s + kx·dil_w, weight (ky·kw + kx)·C + c.
    let taps = PlaneTaps::new(
        (0..kh).flat_map(|ky| (0..kw).map(move |kx| (ky * dy * s + kx * dx, (ky * kw + kx) * ch))),
    )?;
    Some((|| {
        for b in 0..o.n {
            for c0 in (0..ch).step_by(PLANE_GROUP) {
                let src = input.get(b * in_px + c0..).ok_or(BAD)?;
                dw_plane_in(src, ch, i.h, i.w, planes, zp, ph * s + pw, s, ps)?;
                for (l, plane) in planes.chunks_exact_mut(ps).take(PLANE_GROUP).enumerate() {
                    let c = c0 + l;
                    let mut k = PlaneConsts::default();
                    let sum = plane_weights(&taps, filter, c, &mut k)?;
                    let (m, sh) = (*ops.mult.get(c).ok_or(BAD)?, *ops.shift.get(c).ok_or(BAD)?);
                    k.mult = m;
                    k.neg_right = GroupConsts::neg_right(m, sh).ok_or(BAD)?;
                    k.kernel_sum = ops
                        .bias
                        .and_then(|b| b.get(c).copied())
                        .unwrap_or(0)
                        .wrapping_add(q.input_offset.wrapping_mul(sum));
                    dw_plane_channel(plane, groups, &k, &lim)?;
                }
                let dst = output.get_mut(b * out_px + c0..).ok_or(BAD)?;
                dw_plane_out(planes, s, o.h, o.w, ps, dst, ch)?;
            }
        }
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::{vec, vec::Vec};

    use super::super::super::testutil::*;
    use super::super::DEPTHWISE_SCRATCH_WORDS;
    use super::*;
    use crate::cortex_m::ConvQuant;

    /// The plane kernel (host: its instructions emulated, see
    /// `cortex_m::mve`) against the reference: DS-CNN's 3×3 layers and
    /// random windows that fit; shapes it refuses fall back with the same
    /// result and leave the output untouched.
    #[test]
    fn mve_planar_matches_reference() {
        let mut r = Rng(0x3a55);
        let mut shapes = vec![
            geometry((25, 5, 64), 64, (3, 3), (1, 1), (1, 1)),
            geometry((25, 5, 8), 8, (3, 3), (1, 1), (1, 1)),
            geometry((4, 4, 16), 16, (3, 3), (1, 1), (0, 0)),
        ];
        for _ in 0..if cfg!(miri) { 2 } else { 40 } {
            let k = (r.range(1, 3) as usize, r.range(1, 4) as usize);
            let p = (
                r.range(0, k.0 as i64 - 1) as usize,
                r.range(0, k.1 as i64 - 1) as usize,
            );
            let c = 8 * r.range(1, 3) as usize;
            let stride = if r.range(0, 9) == 0 { 2 } else { 1 };
            let mut g = geometry(
                (
                    r.range(k.0 as i64, 9) as usize,
                    r.range(k.1 as i64, 7) as usize,
                    c,
                ),
                c,
                k,
                (stride, 1),
                p,
            );
            if r.range(0, 4) == 0 {
                g.dilation = (1, 2);
                g.output.w = out_size(g.input.w, k.1, 1, p.1, 2);
                if g.output.w == 0 || g.input.w + 2 * p.1 < 2 * (k.1 - 1) + 1 {
                    continue;
                }
            }
            if r.range(0, 5) == 0 {
                g.input.n = 2;
                g.output.n = 2;
            }
            shapes.push(g);
        }
        let mut taken = 0;
        for (case, g) in shapes.iter().enumerate() {
            let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
            let zp_in = [-128, 127, 0, r.range(-128, 127)][r.range(0, 3) as usize] as i32;
            let q = ConvQuant {
                input_offset: -zp_in,
                output_offset: [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32,
                act_min: [-128, -20][r.range(0, 1) as usize],
                act_max: [127, 100][r.range(0, 1) as usize],
            };
            let x = r.i8s(i.elements().unwrap());
            let w = r.i8s(kh * kw * o.c);
            let mult: Vec<i32> = (0..o.c)
                .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
                .collect();
            let refuse = case % 9 == 8;
            let shift: Vec<i32> = (0..o.c)
                .map(|c| {
                    if refuse && c == 3 {
                        1
                    } else {
                        r.range(-31, -1) as i32
                    }
                })
                .collect();
            let bias: Vec<i32> = (0..o.c)
                .map(|_| r.range(-1 << 20, 1 << 20) as i32)
                .collect();
            let want = ref_conv(g, &q, Some(1), &x, &w, &bias, &mult, &shift);
            let mut got = vec![0i8; o.elements().unwrap()];
            let mut scratch = vec![0xa5a5_a5a5_a5a5_a5a5u64; DEPTHWISE_SCRATCH_WORDS];
            super::super::depthwise_with::<Mve>(
                g,
                &q,
                1,
                &x,
                &w,
                Some(&bias),
                &mult,
                &shift,
                &mut got,
                &mut scratch,
            )
            .unwrap();
            assert_eq!(got, want, "{g:?} case {case}");
            let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &shift);
            let mut direct = vec![0x55i8; o.elements().unwrap()];
            match planar(&ops, &mut direct, &mut scratch) {
                None => assert!(direct.iter().all(|&v| v == 0x55), "output untouched"),
                Some(res) => {
                    assert!(!refuse, "{g:?}: a refused requantization");
                    res.unwrap();
                    assert_eq!(direct, want, "{g:?} case {case} (plane loop)");
                    taken += 1;
                }
            }
        }
        assert!(taken >= 20, "the plane loop ran {taken} shapes");
        // DS-CNN's layer is one the plane loop takes.
        let g = &shapes[0];
        let x = r.i8s(g.input.elements().unwrap());
        let w = r.i8s(9 * 64);
        let (mult, shift) = (vec![1 << 30; 64], vec![-7; 64]);
        let q = ConvQuant {
            input_offset: 3,
            output_offset: -1,
            act_min: -128,
            act_max: 127,
        };
        let ops = ConvOperands::new(*g, q, &x, &w, None, &mult, &shift);
        let mut out = vec![0i8; g.output.elements().unwrap()];
        let mut scratch = vec![0u64; DEPTHWISE_SCRATCH_WORDS];
        assert!(planar(&ops, &mut out, &mut scratch).is_some());
    }

    #[test]
    fn plane_blocks_check_their_bounds() {
        let k = PlaneConsts {
            neg_right: -1,
            ..PlaneConsts::default()
        };
        let lim = PlaneLimits::default();
        let mut p = [0i8; 32];
        assert!(dw_plane_channel(&mut p, 4, &k, &lim).is_ok()); // 4·4 + 14 = 30
        assert!(dw_plane_channel(&mut p, 5, &k, &lim).is_err());
        assert!(dw_plane_channel(&mut p, 0, &k, &lim).is_err());
        let src = [1i8; 64];
        let mut planes = [0i8; 64];
        // 2 rows of 3 pixels, 8 bytes apart: reads up to (6 − 1)·8 + 8 = 48.
        assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 0, 4, 7).is_ok());
        assert!(dw_plane_in(&src, 12, 2, 3, &mut planes, 0, 0, 4, 7).is_err());
        assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 0, 2, 7).is_err()); // w > s
        assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 9, 4, 7).is_err()); // past the planes
        assert!(dw_plane_in(&src, 8, 2, 3, &mut planes[..63], 0, 0, 4, 7).is_err());
        // Window weights: lanes 0, 1 and 7 from offsets 0, 2 and 9.
        let taps = PlaneTaps::new([(0, 0), (1, 2), (7, 9)].into_iter()).unwrap();
        let f: Vec<i8> = (1..=12).collect();
        let mut k = PlaneConsts::default();
        assert_eq!(plane_weights(&taps, &f, 2, &mut k).unwrap(), 3 + 5 + 12);
        let mut w0 = [0i8; 16];
        (w0[0], w0[1], w0[7]) = (3, 5, 12);
        assert_eq!(k.w0, w0);
        assert_eq!(k.w1[..], [&[0][..], &w0[..15]].concat()[..]);
        assert!(plane_weights(&taps, &f, 3, &mut k).is_err()); // 3 + 9 = 12
        assert!(PlaneTaps::new([(0, 0), (0, 2)].into_iter()).is_none());
        assert!(PlaneTaps::new([(16, 0)].into_iter()).is_none());
        assert!(PlaneTaps::new([(1, 65536)].into_iter()).is_none());
        let mut dst = [0i8; 48];
        assert!(dw_plane_out(&planes, 4, 2, 3, 7, &mut dst, 8).is_ok());
        assert!(dw_plane_out(&planes, 4, 2, 3, 7, &mut dst[..47], 8).is_err());
        assert!(dw_plane_out(&planes[..55], 4, 2, 3, 7, &mut dst, 8).is_err());
        assert!(dw_plane_out(&planes, 4, 0, 3, 7, &mut dst, 8).is_err());
    }
}
