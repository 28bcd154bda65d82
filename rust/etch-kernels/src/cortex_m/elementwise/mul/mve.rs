//! [`MulLoop`] for Helium: four elements per pass (`VLDRB.S32`, the
//! offsets and `VMUL` in 32-bit lanes), then CMSIS-NN's vector
//! requantization (`arm_requantize_mve`: `VQRDMULH`, the `VSHR`/`VQADD`
//! fix-up, `VRSHL`), the output offset and the int8 clamp: 14
//! instructions per four elements, the last `len % 4` elements lane by
//! lane. Off target the same steps run in plain Rust ([`requantize_vec`]);
//! the bench checks the `asm!` bit-exact under QEMU's Cortex-M55.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::super::isa::mve::{requantize_vec, GroupConsts};
use super::super::super::isa::{Dsp, Mve};
use super::super::mve::quads_then_lanes;
use super::{MulLoop, MulQuant};

impl MulLoop for Mve {
    #[inline(always)]
    fn mul_loop(q: &MulQuant, a: &[i8], b: &[i8], out: &mut [i8]) -> bool {
        // The vector requantization is exact for a right shift of 1 to 31
        // and a multiplier other than i32::MIN.
        let Some(neg_right) = GroupConsts::neg_right(q.out.1, q.out.2) else {
            return Dsp::mul_loop(q, a, b, out);
        };
        if a.len() != out.len() || b.len() != out.len() {
            return false;
        }
        let k = MulConsts {
            a_zp: q.a_zp,
            b_zp: q.b_zp,
            mult: q.out.1,
            neg_right,
            out_offset: q.out.0,
        };
        quads_then_lanes(
            a,
            b,
            out,
            |aa, ba, oa| mul_loop(&k, aa, ba, oa),
            |x, y| k.lane(x, y),
        )
    }
}

/// The offsets and the output's requantization, as the loop takes them.
struct MulConsts {
    a_zp: i32,
    b_zp: i32,
    mult: i32,
    /// Minus the right shift (`GroupConsts::neg_right`).
    neg_right: i32,
    out_offset: i32,
}

impl MulConsts {
    /// One lane of the loop, instruction by instruction.
    #[inline(always)]
    fn lane(&self, x: i8, y: i8) -> i32 {
        let p = (x as i32)
            .wrapping_sub(self.a_zp)
            .wrapping_mul((y as i32).wrapping_sub(self.b_zp));
        requantize_vec(p, 0, self.mult, self.neg_right, self.out_offset, -128, 127)
    }
}

#[cfg(not(all(target_arch = "arm", feature = "mve")))]
#[inline(always)]
fn mul_loop(k: &MulConsts, a: &[i8], b: &[i8], out: &mut [i8]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = k.lane(x, y) as i8;
    }
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
#[inline(always)]
fn mul_loop(k: &MulConsts, a: &[i8], b: &[i8], out: &mut [i8]) {
    // SAFETY: the caller checked `a`, `b` and `out` of one length, a
    // non-zero multiple of 4: pass i reads a[4i .. 4i + 4] and b[4i .. 4i +
    // 4] (sign-extending byte loads) and writes out[4i .. 4i + 4]. No
    // stack; q0, q1, q6, q7 (d0–d3, d12–d15), lr and flags are clobbered.
    unsafe {
        core::arch::asm!(
            "vmvn.i32 q6, #0x7f",
            "vmov.i32 q7, #0x7f",
            "wls lr, {n}, 3f",
            "2:",
            "vldrb.s32 q0, [r0], #4",
            "vldrb.s32 q1, [r1], #4",
            "vsub.i32 q0, q0, {za}",
            "vsub.i32 q1, q1, {zb}",
            "vmul.i32 q0, q0, q1",
            "vqrdmulh.s32 q0, q0, {m}",
            "vshr.s32 q1, q0, #31",
            "vqadd.s32 q0, q0, q1",
            "vrshl.s32 q0, {nr}",
            "vadd.i32 q0, q0, {oo}",
            "vmax.s32 q0, q0, q6",
            "vmin.s32 q0, q0, q7",
            "vstrb.32 q0, [r2], #4",
            "le lr, 2b",
            "3:",
            // Low registers: the widening loads and the narrowing store
            // encode Rn in 3 bits.
            inout("r0") a.as_ptr() => _,
            inout("r1") b.as_ptr() => _,
            inout("r2") out.as_mut_ptr() => _,
            n = in(reg) out.len() / 4,
            za = in(reg) k.a_zp,
            zb = in(reg) k.b_zp,
            m = in(reg) k.mult,
            nr = in(reg) k.neg_right,
            oo = in(reg) k.out_offset,
            out("lr") _,
            out("d0") _, out("d1") _, out("d2") _, out("d3") _,
            out("d12") _, out("d13") _, out("d14") _, out("d15") _,
            options(nostack),
        );
    }
}
