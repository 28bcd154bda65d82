//! [`DepthwiseMac`] for Helium: one-input-channel layers (DS-CNN's first)
//! as MVE matrix products ([`gemm_x4`]); channel-multiplier-1 layers whose
//! window fits one vector on channel planes ([`planar`]), the others with
//! channels in eights straight from NHWC ([`channel_groups`]); [`Dsp`]'s
//! building blocks for the other depthwise loops.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::common::ConvOperands;
use super::super::common::{runs_mut, take};
use super::super::conv::PACK_IC;
use super::super::isa::mve::{
    div_ceil, dw_plane_channel, dw_plane_in, dw_plane_out, gather_windows, gemm_x4, pack_col,
    plane_weights, GatherOffsets, GroupConsts, PlaneConsts, PlaneLimits, PlaneTaps, PLANE_GROUP,
};
use super::super::isa::{Dsp, Mve};
use super::super::BAD;
use super::{in_bounds, DepthwiseMac, Taps, DEPTHWISE_SCRATCH_WORDS, DW_MAX_TAPS, PATCH_BYTES};
use crate::error::{KernelError, KernelResult};
use core::num::NonZeroUsize;

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
        planar(ops, output, scratch).or_else(|| channel_groups(ops, output, scratch))
    }

    /// The layer kernels above, tried before `depthwise` is entered: its
    /// frame (the generic loops', about 1 KB) then stays off the stack of
    /// the layers they take (DS-CNN's inference stack). Under the same
    /// conditions `depthwise` checks before it calls them (a zero point
    /// inside int8); where they decline, it calls them again and runs its
    /// loops.
    #[inline(always)]
    fn separate_layer(
        ops: &ConvOperands<'_>,
        ch_mult: usize,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        if !(-128..=127).contains(&ops.q.input_offset.wrapping_neg()) {
            None
        } else if ops.g.input.c == 1 {
            single_gemm(ops, output, scratch)
        } else if ch_mult == 1 {
            Self::mult1_layer(ops, output, scratch)
        } else {
            None
        }
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
/// admitted. Out of line (two callers: `separate_layer`, `depthwise`).
#[inline(never)]
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
    // Non-zero by type: the divisions below have no panic path.
    let ow = NonZeroUsize::new(o.w)?;
    if ntaps == 0 || len > PACK_IC || cout % 4 != 0 || cout > 65535 / 7 || o.h == 0 {
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
    let per_block = PATCH_BYTES.checked_div(len)?;
    let pixels = o.h * o.w;
    Some((|| {
        // Set up once: each group writes every lane of its own three.
        let mut c = GroupConsts {
            out_offset: [q.output_offset; 4],
            act_min: [q.act_min; 4],
            act_max: [q.act_max; 4],
            ..GroupConsts::default()
        };
        for b in 0..o.n {
            plane.fill(zp);
            for y in 0..i.h {
                let src = input.get((b * i.h + y) * i.w..).ok_or(BAD)?;
                let dst = plane.get_mut((pt + y) * pw_ + pl..).ok_or(BAD)?;
                // Element by element: `copy_from_slice` keeps a
                // length-mismatch panic.
                let row = dst.get_mut(..i.w).ok_or(BAD)?;
                for (d, &v) in row.iter_mut().zip(src.get(..i.w).ok_or(BAD)?) {
                    *d = v;
                }
            }
            let mut p0 = 0;
            while p0 < pixels {
                let pn = per_block.min(pixels - p0);
                // Windows, one output row's run at a time.
                let mut k = 0;
                while k < pn {
                    let (oy, ox) = ((p0 + k) / ow, (p0 + k) % ow);
                    let run = (o.w - ox).min(pn - k);
                    let dst = patches.get_mut(k * len..).ok_or(BAD)?;
                    gather_windows(plane, oy * sy * pw_ + ox * sx, sx, run, &offs, dst)?;
                    k += run;
                }
                for oc in (0..cout).step_by(4) {
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
/// channel's requantization is admitted. Out of line (two callers).
#[inline(never)]
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
        // Set up once: `plane_weights` and the lines after it write every
        // field the loop reads (a fresh one per channel cost a `memclr`).
        let mut k = PlaneConsts::default();
        for b in 0..o.n {
            for c0 in (0..ch).step_by(PLANE_GROUP) {
                let src = input.get(b * in_px + c0..).ok_or(BAD)?;
                dw_plane_in(src, ch, i.h, i.w, planes, zp, ph * s + pw, s, ps)?;
                for (l, plane) in runs_mut(planes, ps).take(PLANE_GROUP).enumerate() {
                    let c = c0 + l;
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

/// Words (`i32`) of one group's constants in [`channel_groups`]' scratch:
/// `bias + input_offset·Σw` of channels 0, 2, 4, 6 then 1, 3, 5, 7, their
/// multipliers in the same order, then minus their right shifts.
const GROUP_WORDS: usize = 24;

/// Bytes of scratch [`channel_groups`] keeps for the zero-point run of
/// padding taps (the most channels one chunk takes).
const ZP_BYTES: usize = 256;

/// Depthwise with channel multiplier 1 and channels in groups of eight,
/// straight from NHWC (VWW's MobileNet layers, any stride, padding and
/// dilation, up to [`DW_MAX_TAPS`] taps): per output pixel, the tap runs
/// of [`Taps`] (padding taps read a run of input zero points, whose
/// offset-corrected value is 0), then per group of eight channels, per
/// tap, one widening load of the inputs and one of the packed weights,
/// `VMULLB`/`VMULLT.S16` (channels 0,2,4,6 and 1,3,5,7 as 32-bit lanes)
/// added to accumulators that start at CMSIS-NN's kernel sums, then the
/// vector requantization of both halves, interleaved back in order by
/// `VMOVNT` and stored as bytes ([`dw_groups`]). Channels run in chunks
/// whose weights (packed per group and tap) and constants fit the kernel
/// scratch.
///
/// `None` (the other loops run) unless the channels come in eights, the
/// taps fit the table and every channel's requantization is admitted.
/// Out of line: its tap table and offsets stay off the stack of the
/// other depthwise paths (DS-CNN's inference stack).
#[inline(never)]
fn channel_groups(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ch = o.c;
    let ntaps = kh.checked_mul(kw)?;
    // Non-zero by type: the divisions below have no panic path.
    let (kw_nz, sx_nz) = (NonZeroUsize::new(kw)?, NonZeroUsize::new(g.stride.1)?);
    if ch == 0 || ch % 8 != 0 || i.c != ch || ntaps == 0 || ntaps > DW_MAX_TAPS {
        return None;
    }
    for c in 0..ch {
        GroupConsts::neg_right(*ops.mult.get(c)?, *ops.shift.get(c)?)?;
    }
    // Groups per chunk: constants (96 B) and weights (8 per tap) of each.
    let room = 8 * DEPTHWISE_SCRATCH_WORDS - ZP_BYTES;
    let per_chunk = room
        .checked_div(4 * GROUP_WORDS + 8 * ntaps)?
        .min(ZP_BYTES / 8);
    let chunk = (8 * per_chunk).min(ch);
    if chunk == 0 {
        return None;
    }
    let off = q.input_offset;
    let lim = PlaneLimits {
        out_offset: [q.output_offset; 4],
        act_min: [q.act_min; 4],
        act_max: [q.act_max; 4],
    };
    Some((|| {
        let mut scratch = scratch;
        let zp = take::<i8, ZP_BYTES>(&mut scratch)?;
        zp.fill(off.wrapping_neg() as i8);
        let zp = &*zp;
        let (consts, rest) = scratch
            .split_at_mut_checked(GROUP_WORDS / 2 * per_chunk)
            .ok_or(BAD)?;
        let consts: &mut [i32] = bytemuck::cast_slice_mut(consts);
        let wpk: &mut [i8] = bytemuck::cast_slice_mut(rest);
        let wpk = wpk.get_mut(..8 * ntaps * per_chunk).ok_or(BAD)?;
        // Input offset of every tap from the window's first (row-major).
        let mut offs = [0usize; DW_MAX_TAPS];
        for (t, d) in offs.iter_mut().enumerate().take(ntaps) {
            let (ky, kx) = (t / kw_nz, t % kw_nz);
            *d = (ky * g.dilation.0 * i.w + kx * g.dilation.1) * ch;
        }
        let offs = offs.get(..ntaps).ok_or(BAD)?;
        let mut c0 = 0;
        while c0 < ch {
            let cn = chunk.min(ch - c0);
            let groups = cn / 8;
            // Weights per group and tap (8 bytes), constants per group.
            for gi in 0..groups {
                let k = consts
                    .get_mut(GROUP_WORDS * gi..GROUP_WORDS * (gi + 1))
                    .ok_or(BAD)?;
                // Eight channels' weights of a tap at once.
                let mut sums = [0i32; 8];
                let dst = wpk
                    .get_mut(8 * ntaps * gi..8 * ntaps * (gi + 1))
                    .ok_or(BAD)?;
                for (t, d) in dst.as_chunks_mut::<8>().0.iter_mut().enumerate() {
                    let at = t * ch + c0 + 8 * gi;
                    let src: &[i8; 8] = filter
                        .get(at..at + 8)
                        .and_then(|v| v.try_into().ok())
                        .ok_or(BAD)?;
                    *d = *src;
                    for (s, &w) in sums.iter_mut().zip(src) {
                        *s = s.wrapping_add(w as i32);
                    }
                }
                for (l, &sum) in sums.iter().enumerate() {
                    let c = c0 + 8 * gi + l;
                    let (m, sh) = (*ops.mult.get(c).ok_or(BAD)?, *ops.shift.get(c).ok_or(BAD)?);
                    // Lane order: 0, 2, 4, 6 then 1, 3, 5, 7.
                    let lane = (l % 2) * 4 + l / 2;
                    k[lane] = ops
                        .bias
                        .and_then(|b| b.get(c).copied())
                        .unwrap_or(0)
                        .wrapping_add(off.wrapping_mul(sum));
                    k[8 + lane] = m;
                    k[16 + lane] = GroupConsts::neg_right(m, sh).ok_or(BAD)?;
                }
            }
            let mut taps = Taps::new(cn);
            // First positions whose whole window lies inside (wrapping
            // positions of padding are huge, so they fail the test too).
            let (lim_y, lim_x) = (
                i.h.saturating_sub((kh - 1) * g.dilation.0),
                i.w.saturating_sub((kw - 1) * g.dilation.1),
            );
            let full = u32::MAX >> (32 - ntaps);
            // Output columns whose windows are inside along x: [lo, hi).
            let (sx, pl) = (g.stride.1, g.padding.1);
            let x_lo = div_ceil(pl, sx_nz).min(o.w);
            let x_hi = div_ceil(lim_x.saturating_add(pl), sx_nz).clamp(x_lo, o.w);
            for b in 0..o.n {
                for oy in 0..o.h {
                    let y0 = (oy * g.stride.0).wrapping_sub(g.padding.0);
                    let rows = in_bounds(y0, kh, g.dilation.0, i.h);
                    let row_inside = y0 < lim_y;
                    let mut ox = 0;
                    while ox < o.w {
                        let x0 = (ox * sx).wrapping_sub(pl);
                        let base = (b * i.h)
                            .wrapping_add(y0)
                            .wrapping_mul(i.w)
                            .wrapping_add(x0)
                            .wrapping_mul(ch)
                            .wrapping_add(c0);
                        let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                        if row_inside && ox == x_lo && x_hi > x_lo {
                            // The row's interior pixels in one call.
                            let pixels = x_hi - x_lo;
                            let dst = output.get_mut(ob..).ok_or(BAD)?;
                            let runs = Runs::Interior {
                                input,
                                base,
                                offs,
                                pixels,
                                step: sx * ch,
                            };
                            dw_groups(&runs, wpk, consts, &lim, dst, groups, ch)?;
                            ox = x_hi;
                            continue;
                        }
                        let dst = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                        ox += 1;
                        let cols = in_bounds(x0, kw, g.dilation.1, i.w);
                        let mut inside = 0u32;
                        for ky in (0..kh).rev() {
                            let c = if rows >> ky & 1 != 0 { cols } else { 0 };
                            inside = inside.wrapping_shl(kw as u32) | c;
                        }
                        taps.fill(input, zp, base, offs, inside & full)?;
                        dw_groups(&Runs::Taps(&taps), wpk, consts, &lim, dst, groups, cn)?;
                    }
                }
            }
            c0 += cn;
        }
        Ok(())
    })())
}

/// Where the tap runs of the output pixels of one call are: one pixel's
/// [`Taps`] table (border pixels: padding taps read zero points), or, for
/// `pixels` pixels in a row whose windows lie inside,
/// `input[base + p·step + offs[t] ..]` for pixel `p` and tap `t` (no table
/// to fill).
enum Runs<'r, 'a> {
    Taps(&'r Taps<'a>),
    Interior {
        input: &'a [i8],
        base: usize,
        offs: &'r [usize],
        pixels: usize,
        step: usize,
    },
}

/// Output pixels of [`channel_groups`]: for pixel `p` and `g < groups`,
/// channels `8g .. 8g + 8` of `out[p·out_step ..]` from tap run bytes
/// `8g .. 8g + 8`, weights `w[8·n·g ..]` (8 per tap) and constants
/// `k[24g ..]`.
///
/// Errors unless `groups ≥ 1`, `n ≥ 1` runs of at least `8·groups` bytes
/// (every interior run of every pixel inside `input`), at least one pixel,
/// `out_step ≥ 8·groups`, and `w`, `k` and `out` hold what the groups read
/// and write.
#[inline]
fn dw_groups(
    runs: &Runs<'_, '_>,
    w: &[i8],
    k: &[i32],
    lim: &PlaneLimits,
    out: &mut [i8],
    groups: usize,
    out_step: usize,
) -> KernelResult {
    let (n, len, pixels) = match runs {
        Runs::Taps(t) => (t.count(), t.len(), 1),
        Runs::Interior {
            input,
            base,
            offs,
            pixels,
            step,
        } => {
            // The farthest run's end, checked once for the call.
            let last = offs.iter().copied().max().unwrap_or(0);
            if pixels
                .checked_sub(1)
                .and_then(|p| p.checked_mul(*step))
                .and_then(|v| v.checked_add(*base))
                .and_then(|v| v.checked_add(last))
                .and_then(|e| e.checked_add(8 * groups))
                .is_none_or(|e| e > input.len())
            {
                return Err(KernelError::InvalidArgument);
            }
            (offs.len(), 8 * groups, *pixels)
        }
    };
    let out_end = pixels
        .checked_sub(1)
        .and_then(|p| p.checked_mul(out_step))
        .and_then(|v| v.checked_add(8 * groups));
    if groups == 0
        || n == 0
        || len < 8 * groups
        || out_step < 8 * groups
        || w.len() < 8 * n * groups
        || k.len() < GROUP_WORDS * groups
        || out_end.is_none_or(|e| e > out.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    dw_groups_impl(runs, n, w, k, lim, out, groups, out_step);
    Ok(())
}

/// [`dw_groups`] after its checks: one `asm!` loop on Arm with Helium,
/// [`dw_pixel_emulated`] per pixel elsewhere.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn dw_groups_impl(
    runs: &Runs<'_, '_>,
    n: usize,
    w: &[i8],
    k: &[i32],
    lim: &PlaneLimits,
    out: &mut [i8],
    groups: usize,
    out_step: usize,
) {
    #[cfg(all(target_arch = "arm", feature = "mve"))]
    {
        // Run t of group g of pixel p starts at table[t] + start + p·step +
        // 8g: the pointer table of `Taps` from 0, or the interior offsets from
        // the first pixel's address.
        let (table, start, pixels, step) = match runs {
            Runs::Taps(t) => (t.ptrs().as_ptr() as *const usize, 0usize, 1, 0),
            Runs::Interior {
                input,
                base,
                offs,
                pixels,
                step,
            } => (
                offs.as_ptr(),
                input.as_ptr().wrapping_add(*base) as usize,
                *pixels,
                *step,
            ),
        };
        // What the pixel loop reloads: constants, weights, groups, the pixel's
        // start, its step, the output skip after the groups, pixels left, the
        // table.
        let mut ctx: [usize; 8] = [
            k.as_ptr() as usize,
            w.as_ptr() as usize,
            groups,
            start,
            step,
            out_step - 8 * groups,
            pixels,
            table as usize,
        ];
        // SAFETY: `dw_groups` checked `groups ≥ 1`, `pixels ≥ 1`, `n ≥ 1` runs
        // each at least 8·groups bytes long (`Taps`: checked on fill, one
        // pixel; interior runs: base + (pixels − 1)·step + max(offs) +
        // 8·groups ≤ input.len()), `w` ≥ 8·n·groups bytes, `k` ≥ 24·groups
        // words (4-aligned: scratch words) and `out` ≥ (pixels − 1)·out_step +
        // 8·groups bytes with out_step ≥ 8·groups. Group g of pixel p reads
        // bytes 8g .. 8g + 8 of every run (the table holds n words: pointers,
        // or offsets from the pixel's start), w[8·n·g .. 8·n·(g + 1)] and
        // k[24g .. 24g + 24] (both pointers reset per pixel from `ctx`) and
        // writes out[p·out_step + 8g ..][..8]; `lim` is 48 readable bytes and
        // `ctx` 32 bytes read and written (words 3 and 6). No stack; q0–q7,
        // r0–r2, lr and flags are clobbered and declared so.
        unsafe {
            core::arch::asm!(
                "vldrw.u32 q6, [{l}, #16]",
                "vldrw.u32 q7, [{l}, #32]",
                "0:",
                "ldr {k}, [{ctx}]",
                "ldr r2, [{ctx}, #4]",
                "ldr {g}, [{ctx}, #8]",
                "ldr {j}, [{ctx}, #12]",
                "1:",
                "ldr {t}, [{ctx}, #28]",
                "vldrw.u32 q0, [{k}]",
                "vldrw.u32 q1, [{k}, #16]",
                "dls lr, {n}",
                "2:",
                "ldr r0, [{t}], #4",
                "add r0, r0, {j}",
                "vldrb.s16 q2, [r0]",
                "vldrb.s16 q3, [r2], #8",
                "vmullb.s16 q4, q2, q3",
                "vmullt.s16 q5, q2, q3",
                "vadd.i32 q0, q0, q4",
                "vadd.i32 q1, q1, q5",
                "le lr, 2b",
                // arm_requantize_mve on both halves (right shift ≥ 1).
                "vldrw.u32 q2, [{k}, #32]",
                "vldrw.u32 q3, [{k}, #48]",
                "vqrdmulh.s32 q0, q0, q2",
                "vqrdmulh.s32 q1, q1, q3",
                "vshr.s32 q4, q0, #31",
                "vshr.s32 q5, q1, #31",
                "vqadd.s32 q0, q0, q4",
                "vqadd.s32 q1, q1, q5",
                "vldrw.u32 q2, [{k}, #64]",
                "vldrw.u32 q3, [{k}, #80]",
                "vrshl.s32 q0, q0, q2",
                "vrshl.s32 q1, q1, q3",
                "ldr {t}, [{l}]",
                "vadd.i32 q0, q0, {t}",
                "vadd.i32 q1, q1, {t}",
                "vmax.s32 q0, q0, q6",
                "vmax.s32 q1, q1, q6",
                "vmin.s32 q0, q0, q7",
                "vmin.s32 q1, q1, q7",
                // Channels 1, 3, 5, 7 into the top halves: 16-bit lanes in
                // channel order, stored as their low bytes.
                "vmovnt.i32 q0, q1",
                "vstrb.16 q0, [r1], #8",
                "add {k}, {k}, #96",
                "add {j}, {j}, #8",
                "subs {g}, {g}, #1",
                "bne 1b",
                // The next pixel: its start, the output skip, pixels left.
                "ldr {t}, [{ctx}, #16]",
                "ldr {j}, [{ctx}, #12]",
                "add {j}, {j}, {t}",
                "str {j}, [{ctx}, #12]",
                "ldr {t}, [{ctx}, #20]",
                "add r1, r1, {t}",
                "ldr {t}, [{ctx}, #24]",
                "subs {t}, {t}, #1",
                "str {t}, [{ctx}, #24]",
                "bne 0b",
                ctx = in(reg) ctx.as_mut_ptr(),
                t = out(reg) _,
                n = in(reg) n,
                j = out(reg) _,
                k = out(reg) _,
                g = out(reg) _,
                l = in(reg) lim as *const PlaneLimits,
                // Low registers: the widening loads and the narrowing store
                // encode Rn in 3 bits.
                out("r0") _,
                inout("r1") out.as_mut_ptr() => _,
                out("r2") _,
                out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                out("d8") _, out("d9") _, out("d10") _, out("d11") _,
                out("d12") _, out("d13") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }
    #[cfg(not(all(target_arch = "arm", feature = "mve")))]
    {
        let pixels = match runs {
            Runs::Taps(_) => 1,
            Runs::Interior { pixels, .. } => *pixels,
        };
        for p in 0..pixels {
            let out = &mut out[p * out_step..];
            dw_pixel_emulated(runs, p, n, w, k, lim, out, groups);
        }
    }
}

/// One pixel of [`dw_groups_impl`] off target, instruction by instruction.
#[cfg(not(all(target_arch = "arm", feature = "mve")))]
#[allow(clippy::too_many_arguments)]
fn dw_pixel_emulated(
    runs: &Runs<'_, '_>,
    p: usize,
    n: usize,
    w: &[i8],
    k: &[i32],
    lim: &PlaneLimits,
    out: &mut [i8],
    groups: usize,
) {
    use super::super::isa::mve::requantize_vec;
    let run = |t: usize, at: usize| -> i32 {
        match runs {
            Runs::Taps(taps) => taps.runs().nth(t).map_or(0, |r| r[at]) as i32,
            Runs::Interior {
                input,
                base,
                offs,
                step,
                ..
            } => input[base + p * step + offs[t] + at] as i32,
        }
    };
    for gi in 0..groups {
        let kg = &k[GROUP_WORDS * gi..];
        for l in 0..8 {
            let lane = (l % 2) * 4 + l / 2;
            let mut acc = kg[lane];
            for t in 0..n {
                let wv = w[8 * (n * gi + t) + l] as i32;
                // VMULL and VADD: exact products, wrapping sums.
                acc = acc.wrapping_add(run(t, 8 * gi + l) * wv);
            }
            // VMOVNT then the narrowing store keep the low byte.
            out[8 * gi + l] = requantize_vec(
                acc,
                0,
                kg[8 + lane],
                kg[16 + lane],
                lim.out_offset[0],
                lim.act_min[0],
                lim.act_max[0],
            ) as i8;
        }
    }
}

#[cfg(test)]
mod tests;
