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
fn requantize_lane(acc: i32, c: &GroupConsts, l: usize) -> i32 {
    let v = acc.wrapping_add(c.kernel_sum[l]);
    let v = vqrdmulh(v, c.mult[l]);
    let v = v.saturating_add(v >> 31);
    let v = vrshl_right(v, c.neg_right[l].unsigned_abs());
    v.wrapping_add(c.out_offset[l])
        .max(c.act_min[l])
        .min(c.act_max[l])
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::cortex_m::testutil::Rng;
    use crate::ops::arith::requantize;

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
