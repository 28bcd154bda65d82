//! Depthwise layers on channel planes: eight channels moved between NHWC
//! and one plane each ([`dw_plane_in`], [`dw_plane_out`]), a channel's
//! window weights gathered into vector lanes ([`plane_weights`]) and one
//! channel computed in place on its plane ([`dw_plane_channel`]).

use crate::error::{KernelError, KernelResult};

/// Channels of one [`dw_plane_in`]/[`dw_plane_out`] pass: one 16-bit lane
/// each (`VLDRB.U16`, gather/scatter with 16-bit offsets).
pub(crate) const PLANE_GROUP: usize = 8;

/// Per-channel constants of [`dw_plane_channel`]: the window's weights in
/// the lanes of its taps' plane offsets for an even output (`w0`) and one
/// lane later for the odd output (`w1`, lane 0 = 0), then `bias +
/// input_offset·Σw`, the multiplier and minus the right shift (see
/// [`GroupConsts::neg_right`]).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct PlaneConsts {
    pub(crate) w0: [i8; 16],
    pub(crate) w1: [i8; 16],
    pub(crate) kernel_sum: i32,
    pub(crate) mult: i32,
    pub(crate) neg_right: i32,
    pub(crate) pad: i32,
}

/// The layer's output offset and activation range, four lanes each.
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct PlaneLimits {
    pub(crate) out_offset: [i32; 4],
    pub(crate) act_min: [i32; 4],
    pub(crate) act_max: [i32; 4],
}

/// The bytes a [`dw_plane_in`]/[`dw_plane_out`] pass reaches: on the NHWC
/// side `(rows·w − 1)·cstride + 8`, in the planes `start + (rows − 1)·s +
/// w + 7·ps`; `None` unless `rows, w ≥ 1`, `w ≤ s` and `7·ps ≤ 65535`.
#[inline]
fn reach(
    rows: usize,
    w: usize,
    cstride: usize,
    start: usize,
    s: usize,
    ps: usize,
) -> Option<(usize, usize)> {
    if rows == 0 || w == 0 || w > s || ps > 65535 / 7 {
        return None;
    }
    let nhwc = rows
        .checked_mul(w)?
        .checked_sub(1)?
        .checked_mul(cstride)?
        .checked_add(PLANE_GROUP)?;
    let plane = rows
        .checked_sub(1)?
        .checked_mul(s)?
        .checked_add(start)?
        .checked_add(w)?
        .checked_add(7 * ps)?;
    Some((nhwc, plane))
}

/// Fills `planes` with `zp`, then writes [`PLANE_GROUP`] channels of `rows`
/// rows of `w` pixels (pixel `p` of the run at `src[p·cstride ..]`, its
/// channels `0..8` contiguous) into eight planes `ps` bytes apart: pixel
/// `(y, x)` of channel `l` goes to `planes[start + y·s + x + l·ps]`.
///
/// Errors unless `rows, w ≥ 1`, `w ≤ s`, `7·ps ≤ 65535`, `planes` holds
/// a multiple of 16 bytes and reaches every written byte, and `src`
/// `(rows·w − 1)·cstride + 8` values.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(crate) fn dw_plane_in(
    src: &[i8],
    cstride: usize,
    rows: usize,
    w: usize,
    planes: &mut [i8],
    zp: i8,
    start: usize,
    s: usize,
    ps: usize,
) -> KernelResult {
    match reach(rows, w, cstride, start, s, ps) {
        Some((nhwc, plane))
            if nhwc <= src.len() && plane <= planes.len() && planes.len().is_multiple_of(16) => {}
        _ => return Err(KernelError::InvalidArgument),
    }
    imp::dw_plane_in(src, cstride, rows, w, planes, zp, start, s, ps);
    Ok(())
}

/// The inverse gather of [`dw_plane_in`] for outputs: `dst[(y·w + x)·cstride
/// + l] = planes[y·s + x + l·ps]` for `y < rows`, `x < w`, `l < 8`.
///
/// Errors unless `rows, w ≥ 1`, `w ≤ s`, `7·ps ≤ 65535`, `planes` reaches
/// `(rows − 1)·s + w − 1 + 7·ps` and `dst` holds `(rows·w − 1)·cstride + 8`.
#[inline]
pub(crate) fn dw_plane_out(
    planes: &[i8],
    s: usize,
    rows: usize,
    w: usize,
    ps: usize,
    dst: &mut [i8],
    cstride: usize,
) -> KernelResult {
    match reach(rows, w, cstride, 0, s, ps) {
        Some((nhwc, plane)) if nhwc <= dst.len() && plane <= planes.len() => {}
        _ => return Err(KernelError::InvalidArgument),
    }
    imp::dw_plane_out(planes, s, rows, w, ps, dst, cstride);
    Ok(())
}

/// One channel of a depthwise layer on its plane, in place: output `q <
/// 4·groups` is `clamp(requant(Σ_j plane[2⌊q/2⌋ + j]·w_{q mod 2}[j] +
/// kernel_sum) + out_offset)` (`VMLADAV` over 16 lanes, one vector load per
/// two outputs), stored to `plane[q]` once outputs `q..q+4` are computed
/// (later outputs read only bytes from `q + 4` on).
///
/// Errors unless `groups ≥ 1` and `plane` holds `4·groups + 14` bytes.
#[inline]
pub(crate) fn dw_plane_channel(
    plane: &mut [i8],
    groups: usize,
    c: &PlaneConsts,
    lim: &PlaneLimits,
) -> KernelResult {
    if groups == 0
        || groups
            .checked_mul(4)
            .and_then(|n| n.checked_add(14))
            .is_none_or(|n| n > plane.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    imp::dw_plane_channel(plane, groups, c, lim);
    Ok(())
}

/// Where [`plane_weights`] finds a channel's taps: lane `j < 16` of the
/// window vector holds the weight at `filter[c + offs[j]]` when bit `2j`
/// of `masks` (as `VPR.P0` predicates of 16-bit lanes, eight lanes per
/// word) is set, else 0.
#[derive(Default)]
#[repr(C, align(16))]
pub(crate) struct PlaneTaps {
    offs: [u16; 16],
    masks: [u32; 2],
    max: usize,
}

impl PlaneTaps {
    /// Taps as `(lane, filter offset)`; `None` if a lane is past 15 or
    /// taken twice, or an offset exceeds 65535.
    pub(crate) fn new(taps: impl Iterator<Item = (usize, usize)>) -> Option<Self> {
        let mut t = PlaneTaps::default();
        for (lane, off) in taps {
            let word = t.masks.get_mut(lane / 8)?;
            let bits = 3u32 << (2 * (lane % 8));
            if *word & bits != 0 {
                return None;
            }
            *word |= bits;
            *t.offs.get_mut(lane)? = u16::try_from(off).ok()?;
            t.max = t.max.max(off);
        }
        Some(t)
    }
}

/// Gathers channel `c`'s window weights into `k.w0` (lanes as `taps`
/// says) and `k.w1` (the same one lane later, lane 0 = 0) and returns their
/// sum (predicated `VLDRB.S16` gathers, `VADDVA`). Overwrites the first
/// byte of `k.kernel_sum` (the caller sets it after).
///
/// Errors unless `filter` reaches `c + ` the largest tap offset.
#[inline]
pub(crate) fn plane_weights(
    taps: &PlaneTaps,
    filter: &[i8],
    c: usize,
    k: &mut PlaneConsts,
) -> Result<i32, KernelError> {
    if c.checked_add(taps.max).is_none_or(|l| l >= filter.len()) {
        return Err(KernelError::InvalidArgument);
    }
    Ok(imp::plane_weights(taps, filter, c, k))
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
mod imp {
    use super::{PlaneConsts, PlaneLimits, PlaneTaps};

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn dw_plane_in(
        src: &[i8],
        cstride: usize,
        rows: usize,
        w: usize,
        planes: &mut [i8],
        zp: i8,
        start: usize,
        s: usize,
        ps: usize,
    ) {
        let offs: [u16; 8] = core::array::from_fn(|l| (l * ps) as u16);
        // SAFETY: `dw_plane_in` checked `rows, w ≥ 1`, `w ≤ s`, `planes.len()`
        // a multiple of 16 reaching `start + (rows − 1)·s + w + 7·ps` and
        // `src.len() ≥ (rows·w − 1)·cstride + 8`. The fill writes
        // planes[0 .. len] in 16-byte steps; pixel p = y·w + x reads
        // src[p·cstride .. p·cstride + 8] (8 widening byte loads) and
        // writes planes[start + y·s + x + l·ps] for lanes l < 8 (offsets
        // ≤ 7·ps < 2^16, the 16-bit scatter's range). `offs` is 16 readable
        // bytes. No stack; q0, q1, q7, r1, r2, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vdup.8 q1, {zp}",
                "mov r2, {pl}",
                "wls lr, {fill}, 5f",
                "4:",
                "vstrb.8 q1, [r2], #16",
                "le lr, 4b",
                "5:",
                "add {pl}, {pl}, {start}",
                "vldrh.u16 q7, [{o}]",
                "1:",
                "wls lr, {w}, 3f",
                "2:",
                "vldrb.u16 q0, [r1]",
                "add r1, r1, {cs}",
                "vstrb.16 q0, [{pl}, q7]",
                "add {pl}, {pl}, #1",
                "le lr, 2b",
                "3:",
                "add {pl}, {pl}, {skip}",
                "subs {rows}, {rows}, #1",
                "bne 1b",
                zp = in(reg) zp as i32,
                pl = inout(reg) planes.as_mut_ptr() => _,
                fill = in(reg) planes.len() / 16,
                start = in(reg) start,
                o = in(reg) offs.as_ptr(),
                w = in(reg) w,
                cs = in(reg) cstride,
                skip = in(reg) s - w,
                rows = inout(reg) rows => _,
                inout("r1") src.as_ptr() => _,
                out("r2") _, out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub(super) fn dw_plane_out(
        planes: &[i8],
        s: usize,
        rows: usize,
        w: usize,
        ps: usize,
        dst: &mut [i8],
        cstride: usize,
    ) {
        let offs: [u16; 8] = core::array::from_fn(|l| (l * ps) as u16);
        // SAFETY: `dw_plane_out` checked `rows, w ≥ 1`, `w ≤ s`, `planes`
        // reaching `(rows − 1)·s + w + 7·ps` and `dst.len() ≥ (rows·w −
        // 1)·cstride + 8`. Output pixel p = y·w + x gathers planes[y·s + x +
        // l·ps] (l < 8, 16-bit offsets ≤ 7·ps) and writes dst[p·cstride ..
        // p·cstride + 8]. `offs` is 16 readable bytes. No stack; q0, q7,
        // r1, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vldrh.u16 q7, [{o}]",
                "1:",
                "wls lr, {w}, 3f",
                "2:",
                "vldrb.u16 q0, [{pl}, q7]",
                "add {pl}, {pl}, #1",
                "vstrb.16 q0, [r1]",
                "add r1, r1, {cs}",
                "le lr, 2b",
                "3:",
                "add {pl}, {pl}, {skip}",
                "subs {rows}, {rows}, #1",
                "bne 1b",
                pl = inout(reg) planes.as_ptr() => _,
                o = in(reg) offs.as_ptr(),
                w = in(reg) w,
                cs = in(reg) cstride,
                skip = in(reg) s - w,
                rows = inout(reg) rows => _,
                inout("r1") dst.as_mut_ptr() => _,
                out("lr") _,
                out("d0") _, out("d1") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub(super) fn dw_plane_channel(
        plane: &mut [i8],
        groups: usize,
        c: &PlaneConsts,
        lim: &PlaneLimits,
    ) {
        let p = plane.as_mut_ptr();
        // SAFETY: `dw_plane_channel` checked `groups ≥ 1` and `plane.len() ≥
        // 4·groups + 14`. Iteration g loads plane[4g .. 4g + 16] and
        // plane[4g + 2 .. 4g + 18] (the last ends at 4·groups + 14), then
        // stores plane[4g .. 4g + 4], which no later load reads. `c` is 48
        // and `lim` 48 readable bytes. No stack; q0–q7, r0, r2, r4, r8 (even:
        // VMLADAV's destinations), r1, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vldrw.u32 q6, [{c}]",
                "vldrw.u32 q7, [{c}, #16]",
                "ldr {t}, [{c}, #32]",
                "vdup.32 q3, {t}",
                "ldr {t}, [{c}, #36]",
                "ldr {c}, [{c}, #40]",
                "vldrw.u32 q2, [{l}]",
                "vldrw.u32 q4, [{l}, #16]",
                "vldrw.u32 q5, [{l}, #32]",
                "wls lr, {n}, 3f",
                "2:",
                "vldrb.u8 q0, [{p}], #2",
                "vmladav.s8 r0, q0, q6",
                "vmladav.s8 r2, q0, q7",
                "vldrb.u8 q0, [{p}], #2",
                "vmladav.s8 r4, q0, q6",
                "vmladav.s8 r8, q0, q7",
                // Lanes 0..3 = outputs q..q+3 (`VMOV Qd[2], Qd[0], Rt, Rt2`
                // puts Rt in lane 0, Rt2 in lane 2), then arm_requantize_mve.
                "vmov q1[2], q1[0], r0, r4",
                "vmov q1[3], q1[1], r2, r8",
                "vadd.i32 q1, q1, q3",
                "vqrdmulh.s32 q1, q1, {t}",
                "vshr.s32 q0, q1, #31",
                "vqadd.s32 q1, q1, q0",
                "vrshl.s32 q1, {c}",
                "vadd.i32 q1, q1, q2",
                "vmax.s32 q1, q1, q4",
                "vmin.s32 q1, q1, q5",
                "vstrb.32 q1, [r1], #4",
                "le lr, 2b",
                "3:",
                c = inout(reg) c as *const PlaneConsts => _,
                l = in(reg) lim as *const PlaneLimits,
                t = out(reg) _,
                n = in(reg) groups,
                p = inout(reg) p => _,
                // A low register: the narrowing VSTRB.32 encodes Rn in 3 bits.
                inout("r1") p => _,
                out("r0") _, out("r2") _, out("r4") _, out("r8") _, out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                out("d8") _, out("d9") _, out("d10") _, out("d11") _,
                out("d12") _, out("d13") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub(super) fn plane_weights(
        taps: &PlaneTaps,
        filter: &[i8],
        c: usize,
        k: &mut PlaneConsts,
    ) -> i32 {
        let sum: i32;
        // SAFETY: `plane_weights` checked c + max offset < filter.len(), and
        // `PlaneTaps::new` records the largest offset of every lane it
        // enables: a predicated-off lane reads nothing (and loads 0). The
        // stores write bytes 0..33 of `k` (48 bytes: w0, w1, the first
        // byte of kernel_sum). `taps` is 40 readable bytes, 16-aligned. No
        // stack; q0, q7, VPR, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "movs r0, #0",
                "vldrh.u16 q7, [{t}]",
                "ldr {m}, [{t}, #32]",
                "vmsr p0, {m}",
                "vpst",
                "vldrbt.s16 q0, [{f}, q7]",
                "vaddva.s16 r0, q0",
                "vstrb.16 q0, [r1]",
                "vstrb.16 q0, [r1, #17]",
                "vldrh.u16 q7, [{t}, #16]",
                "ldr {m}, [{t}, #36]",
                "vmsr p0, {m}",
                "vpst",
                "vldrbt.s16 q0, [{f}, q7]",
                "vaddva.s16 r0, q0",
                "vstrb.16 q0, [r1, #8]",
                "vstrb.16 q0, [r1, #25]",
                "movs {m}, #0",
                "strb {m}, [r1, #16]",
                t = in(reg) taps as *const PlaneTaps,
                m = out(reg) _,
                f = in(reg) filter.as_ptr().add(c),
                // A low register: the narrowing VSTRB.16 encodes Rn in 3 bits.
                in("r1") k as *mut PlaneConsts,
                // An even register: VADDVA's destination.
                out("r0") sum,
                out("d0") _, out("d1") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
        sum
    }
}

#[cfg(not(all(target_arch = "arm", feature = "mve")))]
mod imp {
    use super::super::{requantize_vec, vmladava};
    use super::*;

    #[allow(clippy::too_many_arguments)]
    pub(super) fn dw_plane_in(
        src: &[i8],
        cstride: usize,
        rows: usize,
        w: usize,
        planes: &mut [i8],
        zp: i8,
        start: usize,
        s: usize,
        ps: usize,
    ) {
        planes.fill(zp);
        for y in 0..rows {
            for x in 0..w {
                let p = (y * w + x) * cstride;
                for l in 0..PLANE_GROUP {
                    planes[start + y * s + x + l * ps] = src[p + l];
                }
            }
        }
    }

    pub(super) fn dw_plane_out(
        planes: &[i8],
        s: usize,
        rows: usize,
        w: usize,
        ps: usize,
        dst: &mut [i8],
        cstride: usize,
    ) {
        for y in 0..rows {
            for x in 0..w {
                let p = (y * w + x) * cstride;
                for l in 0..PLANE_GROUP {
                    dst[p + l] = planes[y * s + x + l * ps];
                }
            }
        }
    }

    pub(super) fn plane_weights(
        taps: &PlaneTaps,
        filter: &[i8],
        c: usize,
        k: &mut PlaneConsts,
    ) -> i32 {
        let mut sum = 0i32;
        for j in 0..16 {
            let on = taps.masks[j / 8] >> (2 * (j % 8)) & 1 != 0;
            let v = if on {
                filter[c + taps.offs[j] as usize]
            } else {
                0
            };
            k.w0[j] = v;
            if j < 15 {
                k.w1[j + 1] = v;
            }
            sum = sum.wrapping_add(v as i32);
        }
        k.w1[0] = 0;
        sum
    }

    pub(super) fn dw_plane_channel(
        plane: &mut [i8],
        groups: usize,
        c: &PlaneConsts,
        lim: &PlaneLimits,
    ) {
        for g in 0..groups {
            let mut out = [0i8; 4];
            for (k, d) in out.iter_mut().enumerate() {
                let base = 4 * g + (k & !1);
                let w = if k % 2 == 0 { &c.w0 } else { &c.w1 };
                let acc = vmladava(0, &plane[base..base + 16], w);
                *d = requantize_vec(
                    acc,
                    c.kernel_sum,
                    c.mult,
                    c.neg_right,
                    lim.out_offset[k],
                    lim.act_min[k],
                    lim.act_max[k],
                ) as i8;
            }
            plane[4 * g..4 * g + 4].copy_from_slice(&out);
        }
    }
}
