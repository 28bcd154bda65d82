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
//! By concern: the matrix product and requantization shared by every
//! layer kernel here, the depthwise channel planes ([`plane`]) and the
//! window gathers and sums ([`gather`]). Each `asm!` block and its host
//! emulation (the two `imp` modules of each file) are one function written
//! twice, kept in one file so that a change to one is reviewed beside the
//! other.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use crate::error::{KernelError, KernelResult};

pub(crate) mod gather;
mod plane;
pub(crate) mod quant;
#[cfg(test)]
mod tests;

pub(crate) use gather::{gather_windows, pack_col, GatherOffsets};
pub(crate) use plane::{
    dw_plane_channel, dw_plane_in, dw_plane_out, plane_weights, PlaneConsts, PlaneLimits,
    PlaneTaps, PLANE_GROUP,
};

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

/// `Σ x[j]` of int8 values, 16 at a time (`VADDVA.S8`), modulo 2^32.
/// Errors unless `x.len()` is a multiple of 16.
#[inline]
pub(crate) fn sum_s8(x: &[i8]) -> Result<i32, KernelError> {
    if !x.len().is_multiple_of(16) {
        return Err(KernelError::InvalidArgument);
    }
    Ok(imp::sum_s8(x))
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
mod imp {
    use super::GroupConsts;

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

    pub(super) fn sum_s8(x: &[i8]) -> i32 {
        x.chunks_exact(16).fold(0i32, |s, c| {
            c.iter().fold(s, |s, &v| s.wrapping_add(v as i32))
        })
    }
}

/// `VMLADAVA.S8`: `acc + Σ a[i]·b[i]` over 16 lanes, modulo 2^32.
#[cfg_attr(all(target_arch = "arm", feature = "mve"), allow(dead_code))]
pub(super) fn vmladava(acc: i32, a: &[i8], b: &[i8]) -> i32 {
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

/// `a.div_ceil(b)` with no division-by-zero path.
#[inline(always)]
pub(crate) fn div_ceil(a: usize, b: core::num::NonZeroUsize) -> usize {
    (a / b).wrapping_add(usize::from(a % b != 0))
}
