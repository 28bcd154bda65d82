//! The Helium (M-Profile Vector Extension) building block of the `mve`
//! feature: a matrix product of int8 rows by four int8 weight rows with
//! CMSIS-NN's vector requantization (`arm_requantize_mve`), as one stable
//! `asm!` loop on Armv8.1-M with MVE (Cortex-M55/M85, built with
//! `-C target-cpu=cortex-m55`). LLVM emits no MVE code for these loops by
//! itself, and stable Rust has no MVE intrinsics.
//!
//! Everywhere else (host tests) the same function is written in plain Rust
//! from the Arm ARM's definitions of the instructions it uses
//! (`VMLADAV`, `VQRDMULH`, `VQADD`, `VRSHL`), so the loop structures above
//! it run and are tested on the host bit for bit. The `asm!` itself cannot
//! run on the host: the bench firmware checks it bit-exact under QEMU's
//! Cortex-M55 (`bench/run.sh`, target `cortex-m55`, in CI's `--ci` run).
//!
//! Over 800 lines on purpose: each `asm!` block and its host emulation (the
//! two `imp` modules) are one function written twice, kept in one file so
//! that a change to one is reviewed beside the other.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use crate::error::{KernelError, KernelResult};

/// Per-group constants, in the order the loop loads them (six vectors of
/// four 32-bit lanes, one lane per output channel of the group).
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
pub(crate) struct GroupConsts {
    /// `bias + input_offset·Σw` per channel (CMSIS-NN's kernel sum).
    pub(crate) kernel_sum: [i32; 4],
    pub(crate) mult: [i32; 4],
    /// Minus the right shift, `-31..=-1` (what `VRSHL` takes).
    pub(crate) neg_right: [i32; 4],
    pub(crate) out_offset: [i32; 4],
    pub(crate) act_min: [i32; 4],
    pub(crate) act_max: [i32; 4],
}

impl GroupConsts {
    /// Requantization of one channel that this loop reproduces exactly
    /// (`arm_nn_requantize`): a right shift of 1 to 31 and no left shift,
    /// and a multiplier other than `i32::MIN` (where `VQRDMULH` saturates
    /// and CMSIS-NN's scalar multiply wraps). Returns `-right`.
    #[inline]
    pub(crate) fn neg_right(mult: i32, shift: i32) -> Option<i32> {
        ((-31..=-1).contains(&shift) && mult != i32::MIN).then_some(shift)
    }
}

/// `out[p·stride + c] = clamp(requant(Σ_j x[p·16k + j]·w_c[j] + ks[c]) +
/// out_offset)` for `p < pixels`, `c < 4`, where `x` holds `pixels` rows of
/// `16k` int8 values back to back and `packed` the four weight rows in
/// chunks of 16 (chunk `j` of rows 0..4 at `64j`, `64j + 16`, …).
///
/// Errors unless `k ≥ 1`, `pixels ≥ 1`, `x` holds `pixels·16k` values,
/// `packed` `64k`, and `out` reaches `(pixels − 1)·stride + 4`.
#[inline]
pub(crate) fn gemm_x4(
    x: &[i8],
    k: usize,
    packed: &[i8],
    c: &GroupConsts,
    pixels: usize,
    out: &mut [i8],
    stride: usize,
) -> KernelResult {
    let last = pixels
        .checked_sub(1)
        .and_then(|p| p.checked_mul(stride))
        .and_then(|v| v.checked_add(4));
    if k == 0
        || pixels.checked_mul(16 * k).is_none_or(|n| n > x.len())
        || packed.len() < 64 * k
        || last.is_none_or(|l| l > out.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    imp::gemm_x4(x, k, packed, c, pixels, out, stride);
    Ok(())
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
mod imp {
    use super::{GroupConsts, PlaneConsts, PlaneLimits, PlaneTaps};

    #[inline(always)]
    pub(super) fn gemm_x4(
        x: &[i8],
        k: usize,
        packed: &[i8],
        c: &GroupConsts,
        pixels: usize,
        out: &mut [i8],
        stride: usize,
    ) {
        // SAFETY: `gemm_x4` checked `k ≥ 1`, `pixels ≥ 1`, `x.len() ≥
        // pixels·16k`, `packed.len() ≥ 64k` and `out.len() ≥ (pixels −
        // 1)·stride + 4`. Pass p reads x[16k·p .. 16k·(p+1)] (the pointer
        // only advances, by 16 per load), packed[0 .. 64k] (the pointer is
        // reset from the saved base every pass) and writes out[p·stride ..
        // p·stride + 4]; `c` is 96 readable bytes (six `vldrw` at 0..80).
        // No stack; q0–q7 (d0–d15), r0/r2/r4/r8 (even: VMLADAV's
        // destination), lr (the low-overhead loop counter) and flags are
        // clobbered and declared so.
        unsafe {
            core::arch::asm!(
                "vldrw.u32 q3, [{c}]",
                "vldrw.u32 q4, [{c}, #16]",
                "vldrw.u32 q5, [{c}, #32]",
                "vldrw.u32 q2, [{c}, #48]",
                "vldrw.u32 q6, [{c}, #64]",
                "vldrw.u32 q7, [{c}, #80]",
                "mov {c}, {w}",
                "1:",
                "mov {w}, {c}",
                // First chunk of 16: the non-accumulating forms start the sums.
                "vldrb.u8 q0, [{x}], #16",
                "vldrb.u8 q1, [{w}], #16",
                "vmladav.s8 r0, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladav.s8 r2, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladav.s8 r4, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladav.s8 r8, q0, q1",
                "wls lr, {km1}, 3f",
                "2:",
                "vldrb.u8 q0, [{x}], #16",
                "vldrb.u8 q1, [{w}], #16",
                "vmladava.s8 r0, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladava.s8 r2, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladava.s8 r4, q0, q1",
                "vldrb.u8 q1, [{w}], #16",
                "vmladava.s8 r8, q0, q1",
                "le lr, 2b",
                "3:",
                // Lanes 0..3 = channels 0..3, then arm_requantize_mve with
                // per-lane constants (right shift ≥ 1: the fix-up subtracts
                // 1 from negative values so VRSHL rounds half away from 0).
                // (`VMOV Qd[2], Qd[0], Rt, Rt2` puts Rt in lane 0, Rt2 in
                // lane 2, as QEMU and the assembler read it.)
                "vmov q1[2], q1[0], r0, r4",
                "vmov q1[3], q1[1], r2, r8",
                "vadd.i32 q1, q1, q3",
                "vqrdmulh.s32 q1, q1, q4",
                "vshr.s32 q0, q1, #31",
                "vqadd.s32 q1, q1, q0",
                "vrshl.s32 q1, q1, q5",
                "vadd.i32 q1, q1, q2",
                "vmax.s32 q1, q1, q6",
                "vmin.s32 q1, q1, q7",
                "vstrb.32 q1, [r1]",
                "add r1, r1, {stride}",
                "subs {n}, {n}, #1",
                "bne 1b",
                c = inout(reg) c as *const GroupConsts => _,
                w = inout(reg) packed.as_ptr() => _,
                x = inout(reg) x.as_ptr() => _,
                // A low register: the narrowing VSTRB.32 encodes Rn in 3 bits.
                inout("r1") out.as_mut_ptr() => _,
                stride = in(reg) stride,
                n = inout(reg) pixels => _,
                km1 = in(reg) k - 1,
                out("r0") _, out("r2") _, out("r4") _, out("r8") _, out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                out("d8") _, out("d9") _, out("d10") _, out("d11") _,
                out("d12") _, out("d13") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }

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
    pub(super) fn gather_windows(
        plane: &[i8],
        base: usize,
        step: usize,
        count: usize,
        offs: &[u8],
        chunks: usize,
        dst: &mut [i8],
    ) {
        // SAFETY: `gather_windows` checked `count ≥ 1`, every gathered
        // byte base + k·step + offs[j] (k < count, offs[j] ≤ the maximum
        // it checked) inside `plane`, and `dst.len() ≥ 16·chunks·count`:
        // window k writes dst[16·chunks·k .. 16·chunks·(k + 1)]. `offs`
        // holds 16·chunks bytes (`GatherOffsets::new`). No stack; q0, q1,
        // lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "1:",
                "mov {t}, {o}",
                "wls lr, {chunks}, 3f",
                "2:",
                "vldrb.u8 q1, [{t}], #16",
                "vldrb.u8 q0, [{src}, q1]",
                "vstrb.8 q0, [{d}], #16",
                "le lr, 2b",
                "3:",
                "add {src}, {src}, {step}",
                "subs {n}, {n}, #1",
                "bne 1b",
                src = inout(reg) plane.as_ptr().add(base) => _,
                o = in(reg) offs.as_ptr(),
                t = out(reg) _,
                chunks = in(reg) chunks,
                d = inout(reg) dst.as_mut_ptr() => _,
                step = in(reg) step,
                n = inout(reg) count => _,
                out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub(super) fn pack_col(
        filter: &[i8],
        start: usize,
        cout: usize,
        ntaps: usize,
        chunks: usize,
        dst: &mut [i8],
    ) -> i32 {
        let offs: [u16; 8] = core::array::from_fn(|l| (l * cout) as u16);
        let sum: i32;
        // SAFETY: `pack_col` checked `1 ≤ ntaps ≤ 16·chunks`, `7·cout <
        // 2^16` (the gather's offsets), filter[start + (ntaps − 1)·cout]
        // inside `filter` and `dst.len() ≥ 64·(chunks − 1) + 16`. Half h
        // (taps 8h ..) gathers filter[start + (8h + n)·cout] only for the
        // lanes n with 8h + n < ntaps (VCTP; predicated-off lanes read
        // nothing and load 0) and stores dst[64⌊h/2⌋ + 8(h mod 2) ..] (8
        // bytes). `offs` is 16 readable bytes. No stack; q0, q7, lr and
        // flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vldrh.u16 q7, [{o}]",
                "movs r0, #0",
                "wls lr, {chunks}, 3f",
                "2:",
                "vctp.16 {rem}",
                "vpst",
                "vldrbt.s16 q0, [{src}, q7]",
                "vstrb.16 q0, [r1]",
                "vaddva.s16 r0, q0",
                "add {src}, {src}, {step}",
                "subs {rem}, {rem}, #8",
                "it mi",
                "movmi {rem}, #0",
                "vctp.16 {rem}",
                "vpst",
                "vldrbt.s16 q0, [{src}, q7]",
                "vstrb.16 q0, [r1, #8]",
                "vaddva.s16 r0, q0",
                "add {src}, {src}, {step}",
                "subs {rem}, {rem}, #8",
                "it mi",
                "movmi {rem}, #0",
                "add r1, r1, #64",
                "le lr, 2b",
                "3:",
                o = in(reg) offs.as_ptr(),
                // An even register: VADDVA's destination.
                out("r0") sum,
                chunks = in(reg) chunks,
                rem = inout(reg) ntaps => _,
                src = inout(reg) filter.as_ptr().add(start) => _,
                step = in(reg) 8 * cout,
                // A low register: the narrowing VSTRB.16 encodes Rn in 3 bits.
                inout("r1") dst.as_mut_ptr() => _,
                out("lr") _,
                out("d0") _, out("d1") _, out("d14") _, out("d15") _,
                options(nostack),
            );
        }
        sum
    }

    #[inline(always)]
    pub(super) fn sum_s8(x: &[i8]) -> i32 {
        let sum: i32;
        // SAFETY: `sum_s8` checked `x.len()` a multiple of 16: pass k reads
        // x[16k .. 16k + 16] for k < len/16. No stack; q0, lr and flags
        // are clobbered.
        unsafe {
            core::arch::asm!(
                "movs r0, #0",
                "wls lr, {n}, 3f",
                "2:",
                "vldrb.u8 q0, [{p}], #16",
                "vaddva.s8 r0, q0",
                "le lr, 2b",
                "3:",
                // An even register: VADDVA's destination.
                out("r0") sum,
                n = in(reg) x.len() / 16,
                p = inout(reg) x.as_ptr() => _,
                out("lr") _, out("d0") _, out("d1") _,
                options(nostack, readonly),
            );
        }
        sum
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn window_sum16(
        input: &[i8],
        start: usize,
        rows: usize,
        cols: usize,
        row_step: usize,
        px_step: usize,
        out: &mut [i32; 16],
    ) {
        // SAFETY: `window_sum16` checked `rows, cols ≥ 1` and start + (rows
        // − 1)·row_step + (cols − 1)·px_step + 16 ≤ input.len(): pixel (y,
        // x) reads input[start + y·row_step + x·px_step ..][..16] (four
        // widening loads of 4). `out` is 64 writable bytes, 4-aligned.
        // No stack; q0, q4–q7, r1, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vmov.i32 q4, #0",
                "vmov.i32 q5, #0",
                "vmov.i32 q6, #0",
                "vmov.i32 q7, #0",
                "1:",
                "mov r1, {p}",
                "wls lr, {cols}, 3f",
                "2:",
                "vldrb.s32 q0, [r1]",
                "vadd.i32 q4, q4, q0",
                "vldrb.s32 q0, [r1, #4]",
                "vadd.i32 q5, q5, q0",
                "vldrb.s32 q0, [r1, #8]",
                "vadd.i32 q6, q6, q0",
                "vldrb.s32 q0, [r1, #12]",
                "vadd.i32 q7, q7, q0",
                "add r1, r1, {px}",
                "le lr, 2b",
                "3:",
                "add {p}, {p}, {row}",
                "subs {rows}, {rows}, #1",
                "bne 1b",
                "vstrw.32 q4, [{o}]",
                "vstrw.32 q5, [{o}, #16]",
                "vstrw.32 q6, [{o}, #32]",
                "vstrw.32 q7, [{o}, #48]",
                p = inout(reg) input.as_ptr().add(start) => _,
                cols = in(reg) cols,
                px = in(reg) px_step,
                row = in(reg) row_step,
                rows = inout(reg) rows => _,
                o = in(reg) out.as_mut_ptr(),
                out("r1") _, out("lr") _,
                out("d0") _, out("d1") _,
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
    use super::*;

    pub(super) fn gemm_x4(
        x: &[i8],
        k: usize,
        packed: &[i8],
        c: &GroupConsts,
        pixels: usize,
        out: &mut [i8],
        stride: usize,
    ) {
        for p in 0..pixels {
            let row = &x[16 * k * p..16 * k * (p + 1)];
            let mut acc = [0i32; 4];
            for (j, chunk) in row.chunks_exact(16).enumerate() {
                for (l, a) in acc.iter_mut().enumerate() {
                    let w = &packed[64 * j + 16 * l..64 * j + 16 * l + 16];
                    *a = vmladava(*a, chunk, w);
                }
            }
            for (l, a) in acc.iter().enumerate() {
                out[p * stride + l] = requantize_lane(*a, c, l) as i8;
            }
        }
    }

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

    pub(super) fn gather_windows(
        plane: &[i8],
        base: usize,
        step: usize,
        count: usize,
        offs: &[u8],
        chunks: usize,
        dst: &mut [i8],
    ) {
        let n = 16 * chunks;
        for k in 0..count {
            for (j, &o) in offs.iter().take(n).enumerate() {
                dst[n * k + j] = plane[base + k * step + o as usize];
            }
        }
    }

    pub(super) fn pack_col(
        filter: &[i8],
        start: usize,
        cout: usize,
        ntaps: usize,
        chunks: usize,
        dst: &mut [i8],
    ) -> i32 {
        let mut sum = 0i32;
        for t in 0..16 * chunks {
            let v = if t < ntaps {
                filter[start + t * cout]
            } else {
                0
            };
            dst[64 * (t / 16) + t % 16] = v;
            sum = sum.wrapping_add(v as i32);
        }
        sum
    }

    pub(super) fn sum_s8(x: &[i8]) -> i32 {
        x.chunks_exact(16).fold(0i32, |s, c| {
            c.iter().fold(s, |s, &v| s.wrapping_add(v as i32))
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn window_sum16(
        input: &[i8],
        start: usize,
        rows: usize,
        cols: usize,
        row_step: usize,
        px_step: usize,
        out: &mut [i32; 16],
    ) {
        for y in 0..rows {
            for x in 0..cols {
                let p = start + y * row_step + x * px_step;
                for (l, o) in out.iter_mut().enumerate() {
                    *o = o.wrapping_add(input[p + l] as i32);
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
    let last_src = rows
        .checked_mul(w)
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| n.checked_mul(cstride))
        .and_then(|n| n.checked_add(PLANE_GROUP));
    let last_dst = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(s))
        .and_then(|v| v.checked_add(start))
        .and_then(|v| v.checked_add(w))
        .and_then(|v| v.checked_add(7 * ps));
    if rows == 0
        || w == 0
        || w > s
        || ps > 65535 / 7
        || !planes.len().is_multiple_of(16)
        || last_src.is_none_or(|n| n > src.len())
        || last_dst.is_none_or(|n| n > planes.len())
    {
        return Err(KernelError::InvalidArgument);
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
    let last_dst = rows
        .checked_mul(w)
        .and_then(|n| n.checked_sub(1))
        .and_then(|n| n.checked_mul(cstride))
        .and_then(|n| n.checked_add(PLANE_GROUP));
    let last_src = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(s))
        .and_then(|v| v.checked_add(w))
        .and_then(|v| v.checked_add(7 * ps));
    if rows == 0
        || w == 0
        || w > s
        || ps > 65535 / 7
        || last_src.is_none_or(|n| n > planes.len())
        || last_dst.is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
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

/// Byte offsets of a window's taps in a plane (`VLDRB.U8` gather offsets),
/// in whole vectors of 16, with their maximum.
pub(crate) struct GatherOffsets<const N: usize> {
    offs: [u8; N],
    chunks: usize,
    max: usize,
}

impl<const N: usize> GatherOffsets<N> {
    /// The taps' offsets in order (lanes past the last gather offset 0),
    /// `16·chunks ≤ N` lanes; `None` if an offset exceeds 255 or the taps
    /// exceed the lanes.
    pub(crate) fn new(taps: impl Iterator<Item = usize>, chunks: usize) -> Option<Self> {
        let mut g = GatherOffsets {
            offs: [0; N],
            chunks,
            max: 0,
        };
        if chunks == 0 || 16 * chunks > N {
            return None;
        }
        let mut n = 0;
        for t in taps {
            *g.offs.get_mut(n)? = u8::try_from(t).ok()?;
            g.max = g.max.max(t);
            n += 1;
        }
        (n <= 16 * chunks).then_some(g)
    }
}

/// `dst[16·chunks·k + j] = plane[base + k·step + offs[j]]` for `k < count`,
/// `j < 16·chunks`: `count` windows gathered one vector at a time.
///
/// Errors unless `count ≥ 1`, `plane` reaches `base + (count − 1)·step +
/// max offset` and `dst` holds `16·chunks·count` bytes.
#[inline]
pub(crate) fn gather_windows<const N: usize>(
    plane: &[i8],
    base: usize,
    step: usize,
    count: usize,
    offs: &GatherOffsets<N>,
    dst: &mut [i8],
) -> KernelResult {
    let last = count
        .checked_sub(1)
        .and_then(|k| k.checked_mul(step))
        .and_then(|v| v.checked_add(base))
        .and_then(|v| v.checked_add(offs.max));
    if last.is_none_or(|l| l >= plane.len())
        || (16 * offs.chunks)
            .checked_mul(count)
            .is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    imp::gather_windows(plane, base, step, count, &offs.offs, offs.chunks, dst);
    Ok(())
}

/// One weight row of [`gemm_x4`]'s packed layout from IHWO weights:
/// `dst[64j + n] = filter[start + (16j + n)·cout]` for taps `16j + n <
/// ntaps`, 0 for the lanes past them (`j < chunks`); returns the row's sum
/// (16-bit gathers of eight lanes, predicated by the taps left).
///
/// Errors unless `1 ≤ ntaps ≤ 16·chunks`, `7·cout ≤ 65535`, `filter`
/// reaches `start + (ntaps − 1)·cout` and `dst` holds `64·(chunks − 1) +
/// 16` bytes.
#[inline]
pub(crate) fn pack_col(
    filter: &[i8],
    start: usize,
    cout: usize,
    ntaps: usize,
    chunks: usize,
    dst: &mut [i8],
) -> Result<i32, KernelError> {
    let last = ntaps
        .checked_sub(1)
        .and_then(|t| t.checked_mul(cout))
        .and_then(|v| v.checked_add(start));
    if ntaps == 0
        || chunks.checked_mul(16).is_none_or(|n| n < ntaps)
        || cout > 65535 / 7
        || last.is_none_or(|l| l >= filter.len())
        || chunks
            .checked_sub(1)
            .and_then(|c| c.checked_mul(64))
            .and_then(|n| n.checked_add(16))
            .is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    Ok(imp::pack_col(filter, start, cout, ntaps, chunks, dst))
}

/// `Σ x[j]` of int8 values, 16 at a time (`VADDVA.S8`), modulo 2^32.
/// Errors unless `x.len()` is a multiple of 16.
#[inline]
pub(crate) fn sum_s8(x: &[i8]) -> Result<i32, KernelError> {
    if !x.len().is_multiple_of(16) {
        return Err(KernelError::InvalidArgument);
    }
    Ok(imp::sum_s8(x))
}

/// Sums of 16 adjacent channels over a window of `rows × cols` pixels:
/// lane `l` is `Σ input[start + y·row_step + x·px_step + l]` over `y <
/// rows`, `x < cols` (four vectors of 32-bit lanes, `VLDRB.S32` + `VADD`).
///
/// Errors unless `rows, cols ≥ 1` and `input` reaches the last pixel's 16
/// values.
#[inline]
pub(crate) fn window_sum16(
    input: &[i8],
    start: usize,
    rows: usize,
    cols: usize,
    row_step: usize,
    px_step: usize,
) -> Result<[i32; 16], KernelError> {
    let last = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(row_step))
        .zip(cols.checked_sub(1).and_then(|c| c.checked_mul(px_step)))
        .and_then(|(a, b)| a.checked_add(b))
        .and_then(|v| v.checked_add(start))
        .and_then(|v| v.checked_add(16));
    if last.is_none_or(|l| l > input.len()) {
        return Err(KernelError::InvalidArgument);
    }
    let mut out = [0i32; 16];
    imp::window_sum16(input, start, rows, cols, row_step, px_step, &mut out);
    Ok(out)
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

/// `VMLADAVA.S8`: `acc + Σ a[i]·b[i]` over 16 lanes, modulo 2^32.
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
fn vmladava(acc: i32, a: &[i8], b: &[i8]) -> i32 {
    a.iter()
        .zip(b)
        .fold(acc, |s, (&x, &y)| s.wrapping_add(x as i32 * y as i32))
}

/// `VQRDMULH.S32`: `sat((2·a·b + 2^31) >> 32)`.
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
fn vqrdmulh(a: i32, b: i32) -> i32 {
    let v = (2 * a as i64 * b as i64 + (1i64 << 31)) >> 32;
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// `VRSHL.S32` by a negative amount `-r` (`1 ≤ r ≤ 31`): `(a + 2^(r−1)) >> r`.
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
fn vrshl_right(a: i32, r: u32) -> i32 {
    ((a as i64 + (1i64 << (r - 1))) >> r) as i32
}

/// Lane `l` of the loop's requantization, instruction by instruction.
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
pub(crate) fn requantize_lane(acc: i32, c: &GroupConsts, l: usize) -> i32 {
    requantize_vec(
        acc,
        c.kernel_sum[l],
        c.mult[l],
        c.neg_right[l],
        c.out_offset[l],
        c.act_min[l],
        c.act_max[l],
    )
}

/// One lane of the vector requantization (`VADD`, `VQRDMULH`, the
/// `VSHR`/`VQADD` fix-up, `VRSHL`, `VADD`, `VMAX`, `VMIN`).
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
pub(crate) fn requantize_vec(
    acc: i32,
    ks: i32,
    mult: i32,
    neg_right: i32,
    oo: i32,
    lo: i32,
    hi: i32,
) -> i32 {
    let v = acc.wrapping_add(ks);
    let v = vqrdmulh(v, mult);
    let v = v.saturating_add(v >> 31);
    let v = vrshl_right(v, neg_right.unsigned_abs());
    v.wrapping_add(oo).max(lo).min(hi)
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cortex_m::arith::requantize;
    use crate::cortex_m::testutil::Rng;

    /// The vector requantization equals `arm_nn_requantize` wherever
    /// [`GroupConsts::neg_right`] admits a channel, ties and extremes
    /// included.
    #[test]
    fn vector_requantization_equals_arm_nn_requantize() {
        let mut r = Rng(0x55);
        let special = [
            i32::MIN,
            i32::MIN + 1,
            -1,
            0,
            1,
            i32::MAX,
            1 << 30,
            -(1 << 30),
        ];
        for shift in -40..=3 {
            let mut mults: std::vec::Vec<i32> = special.to_vec();
            mults.extend((0..8).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
            mults.extend((0..4).map(|_| r.next() as i32));
            for &m in &mults {
                let Some(nr) = GroupConsts::neg_right(m, shift) else {
                    assert!(!(-31..=-1).contains(&shift) || m == i32::MIN);
                    continue;
                };
                let c = GroupConsts {
                    kernel_sum: [0; 4],
                    mult: [m; 4],
                    neg_right: [nr; 4],
                    out_offset: [0; 4],
                    act_min: [i32::MIN; 4],
                    act_max: [i32::MAX; 4],
                };
                let mut accs: std::vec::Vec<i32> = special.to_vec();
                accs.extend((0..200).map(|_| r.next() as i32));
                let rsh = (-shift) as u32;
                for k in -3i64..3 {
                    let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                    accs.push((tie / (m as i64).max(1)) as i32);
                }
                for &acc in &accs {
                    assert_eq!(
                        requantize_lane(acc, &c, 0),
                        requantize(acc, m, shift),
                        "acc {acc} mult {m} shift {shift}"
                    );
                }
            }
        }
    }

    /// `avg_pool_s8` (16-channel sums here with `mve`) against a plain
    /// reference: DS-CNN's global pool and random windows of 16 to 40
    /// channels (tails of fewer than 16 take the eight-channel SXTAB16 loop,
    /// then one channel at a time).
    #[test]
    fn avg_pool_matches_reference_on_wide_channels() {
        use crate::cortex_m::pool::avg_pool_s8;
        use crate::cortex_m::testutil::{geometry, ref_pos};
        let mut r = Rng(0xa7a7);
        let mut cases = std::vec![(
            geometry((25, 5, 64), 64, (25, 5), (1, 1), (0, 0)),
            (-128, 127)
        )];
        for _ in 0..40 {
            let c = r.range(16, 40) as usize;
            let k = (r.range(1, 4) as usize, r.range(1, 4) as usize);
            let p = (
                r.range(0, k.0 as i64 - 1) as usize,
                r.range(0, k.1 as i64 - 1) as usize,
            );
            let s = (r.range(1, 2) as usize, r.range(1, 2) as usize);
            let g = geometry(
                (
                    r.range(k.0 as i64, 7) as usize,
                    r.range(k.1 as i64, 7) as usize,
                    c,
                ),
                c,
                k,
                s,
                p,
            );
            cases.push((g, (r.range(-128, 0) as i32, r.range(0, 127) as i32)));
        }
        for (g, act) in cases {
            let (i, o) = (g.input, g.output);
            let x = r.i8s(i.elements().unwrap());
            let mut got = std::vec![0i8; o.elements().unwrap()];
            avg_pool_s8(&g, act, &x, &mut got).unwrap();
            let mut want = std::vec![];
            for oy in 0..o.h {
                for ox in 0..o.w {
                    for ch in 0..o.c {
                        let (mut sum, mut n) = (0i64, 0i64);
                        for ky in 0..g.kernel.0 {
                            for kx in 0..g.kernel.1 {
                                if let (Some(y), Some(xx)) = (
                                    ref_pos(oy, ky, g.stride.0, g.padding.0, 1, i.h),
                                    ref_pos(ox, kx, g.stride.1, g.padding.1, 1, i.w),
                                ) {
                                    sum += x[(y * i.w + xx) * i.c + ch] as i64;
                                    n += 1;
                                }
                            }
                        }
                        let m = if sum > 0 {
                            (sum + n / 2) / n
                        } else {
                            (sum - n / 2) / n
                        };
                        want.push(m.clamp(act.0 as i64, act.1 as i64) as i8);
                    }
                }
            }
            assert_eq!(got, want, "{g:?}");
        }
        // Bounds of the vector sum.
        let x = [1i8; 64];
        assert_eq!(window_sum16(&x, 0, 2, 3, 24, 8).unwrap(), [6; 16]); // last 24 + 16 + 16 = 56
        assert!(window_sum16(&x, 9, 2, 3, 24, 8).is_err());
        assert!(window_sum16(&x, 0, 0, 3, 24, 8).is_err());
        assert_eq!(sum_s8(&x[..32]).unwrap(), 32);
        assert!(sum_s8(&x[..33]).is_err());
    }

    #[test]
    fn gathers_check_their_bounds_and_pack_rows() {
        let plane = [3i8; 40];
        let offs = GatherOffsets::<32>::new([0, 1, 9, 20].into_iter(), 1).unwrap();
        let mut dst = [0i8; 48];
        // Windows at 0, 4, 8: the last reads 8 + 20 = 28.
        assert!(gather_windows(&plane, 0, 4, 3, &offs, &mut dst).is_ok());
        assert_eq!(dst[32..36], [3; 4]);
        assert!(gather_windows(&plane, 12, 4, 3, &offs, &mut dst).is_err()); // 40 > 39
        assert!(gather_windows(&plane, 0, 4, 4, &offs, &mut dst).is_err()); // dst short
        assert!(gather_windows(&plane, 0, 4, 0, &offs, &mut dst).is_err());
        assert!(GatherOffsets::<32>::new([0, 256].into_iter(), 1).is_none());
        assert!(GatherOffsets::<32>::new(0..17, 1).is_none());
        assert!(GatherOffsets::<32>::new(0..3, 3).is_none()); // 48 lanes > 32
                                                              // Taps 0..20 of column 1 of a [20, 3] weight tensor.
        let w: std::vec::Vec<i8> = (0..60).map(|v| v as i8 - 30).collect();
        let mut packed = [0x55i8; 128];
        let sum = pack_col(&w, 1, 3, 20, 2, &mut packed).unwrap();
        for t in 0..32 {
            let want = if t < 20 { w[1 + 3 * t] } else { 0 };
            assert_eq!(packed[64 * (t / 16) + t % 16], want, "tap {t}");
        }
        assert_eq!(sum, (0..20).map(|t| w[1 + 3 * t] as i32).sum::<i32>());
        assert!(pack_col(&w, 3, 3, 20, 2, &mut packed).is_err()); // 3 + 57 = 60
        assert!(pack_col(&w, 1, 3, 20, 1, &mut packed).is_err()); // 20 > 16
        assert!(pack_col(&w, 1, 3, 20, 2, &mut packed[..79]).is_err());
        assert!(pack_col(&w, 1, 3, 0, 2, &mut packed).is_err());
    }

    #[test]
    fn gemm_x4_checks_its_bounds() {
        let c = GroupConsts {
            neg_right: [-1; 4],
            ..GroupConsts::default()
        };
        let mut out = [0i8; 8];
        let (x, w) = ([0i8; 32], [0i8; 64]);
        assert!(gemm_x4(&x, 1, &w, &c, 2, &mut out, 4).is_ok());
        assert!(gemm_x4(&x, 1, &w, &c, 2, &mut out, 5).is_err()); // out too short
        assert!(gemm_x4(&x, 1, &w, &c, 3, &mut out, 2).is_err()); // x too short
        assert!(gemm_x4(&x, 2, &w, &c, 1, &mut out, 4).is_err()); // packed too short
        assert!(gemm_x4(&x, 0, &w, &c, 1, &mut out, 4).is_err());
        assert!(gemm_x4(&x, 1, &w, &c, 0, &mut out, 4).is_err());
    }
}
