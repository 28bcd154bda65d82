//! Float quantization at a program's edges on Helium (MVE with floating
//! point, Cortex-M55/M85): `quantize_per_tensor` from f32 to int8 and
//! `dequantize_per_tensor` from int8 to f32, four lanes per pass in a
//! tail-predicated loop, with ExecuTorch's portable arithmetic
//! ([`quantize_f32`](crate::math::quantize::quantize_f32): `zp +
//! nearbyint(x·inv_scale)` in f32, truncated, clamped; dequantize: `(q −
//! zp) as f32 · scale`), about 110 instructions per element in the scalar
//! loop before.
//!
//! The vector instructions may flush subnormal operands and results to zero
//! where the scalar FPU (FPSCR.FZ = 0) does not. Both functions admit only
//! scales for which that cannot change a result (see their `None` cases);
//! the caller's scalar loop runs otherwise.

/// Largest `|inv_scale|` [`quantize_s8`] admits: a subnormal input times
/// anything below 2^100 rounds to ±0 whether it was flushed or not.
const MAX_INV_SCALE: f32 = 1.2676506e30; // 2^100

/// `out[i] = clamp(trunc(zp + nearbyint(x[i]·inv_scale)), min, max) as i8`
/// (the low byte, as the scalar `as i8`), for every element. `None` (nothing
/// written) unless the lengths agree and `inv_scale` is a normal float
/// below 2^100 in magnitude.
#[inline]
pub(crate) fn quantize_s8(
    x: &[f32],
    inv_scale: f32,
    zp: i32,
    min: i32,
    max: i32,
    out: &mut [i8],
) -> Option<()> {
    if x.len() != out.len() || !inv_scale.is_normal() || inv_scale.abs() >= MAX_INV_SCALE {
        return None;
    }
    imp::quantize_s8(x, inv_scale, zp as f32, min, max, out);
    Some(())
}

/// `out[i] = (x[i] − zp) as f32 · scale` (wrapping `i32` subtraction) for
/// every element. `None` (nothing written) unless the lengths agree and
/// `scale` is a normal float: a non-zero integer times it is then normal or
/// infinite, never subnormal.
#[inline]
pub(crate) fn dequantize_s8(x: &[i8], scale: f32, zp: i32, out: &mut [f32]) -> Option<()> {
    if x.len() != out.len() || !scale.is_normal() {
        return None;
    }
    imp::dequantize_s8(x, scale, zp, out);
    Some(())
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
mod imp {
    #[inline(always)]
    pub(super) fn quantize_s8(x: &[f32], inv: f32, zpf: f32, min: i32, max: i32, out: &mut [i8]) {
        // SAFETY: `quantize_s8` checked x.len() == out.len(); the loop is
        // tail-predicated over n = x.len() lanes of 32 bits: it reads
        // x[..n] (4 bytes each) and writes out[..n] (one byte each, the
        // narrowing store). No stack; q0-q2, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "vdup.32 q1, {min}",
                "vdup.32 q2, {max}",
                "dlstp.32 lr, {n}",
                "2:",
                "vldrw.u32 q0, [{x}], #16",
                "vmul.f32 q0, q0, {inv}",
                "vrintn.f32 q0, q0",
                "vadd.f32 q0, q0, {zpf}",
                "vcvt.s32.f32 q0, q0",
                "vmax.s32 q0, q0, q1",
                "vmin.s32 q0, q0, q2",
                "vstrb.32 q0, [r1], #4",
                "letp lr, 2b",
                x = inout(reg) x.as_ptr() => _,
                // A low register: the narrowing store encodes Rn in 3 bits.
                inout("r1") out.as_mut_ptr() => _,
                n = in(reg) x.len(),
                inv = in(reg) inv.to_bits(),
                zpf = in(reg) zpf.to_bits(),
                min = in(reg) min,
                max = in(reg) max,
                out("lr") _,
                out("q0") _, out("q1") _, out("q2") _,
                options(nostack),
            );
        }
    }

    #[inline(always)]
    pub(super) fn dequantize_s8(x: &[i8], scale: f32, zp: i32, out: &mut [f32]) {
        // SAFETY: `dequantize_s8` checked x.len() == out.len(); the loop is
        // tail-predicated over n = x.len() lanes of 32 bits: it reads
        // x[..n] (one byte each, the widening load) and writes out[..n]
        // (4 bytes each). No stack; q0, lr and flags are clobbered.
        unsafe {
            core::arch::asm!(
                "dlstp.32 lr, {n}",
                "2:",
                "vldrb.s32 q0, [r0], #4",
                "vsub.i32 q0, q0, {zp}",
                "vcvt.f32.s32 q0, q0",
                "vmul.f32 q0, q0, {scale}",
                "vstrw.32 q0, [{o}], #16",
                "letp lr, 2b",
                // A low register: the widening load encodes Rn in 3 bits.
                inout("r0") x.as_ptr() => _,
                o = inout(reg) out.as_mut_ptr() => _,
                n = in(reg) x.len(),
                zp = in(reg) zp,
                scale = in(reg) scale.to_bits(),
                out("lr") _,
                out("q0") _,
                options(nostack),
            );
        }
    }
}

/// The same steps in plain Rust, one lane at a time, from the instructions'
/// definitions: `VMUL.F32`, `VRINTN` (ties to even), `VADD.F32`,
/// `VCVT.S32.F32` (toward zero, saturating, NaN to 0), `VMAX`/`VMIN.S32`,
/// the narrowing `VSTRB.32`; `VLDRB.S32`, `VSUB.I32`, `VCVT.F32.S32`
/// (nearest).
#[cfg(not(all(target_arch = "arm", feature = "mve")))]
mod imp {
    use crate::math::quantize::round_half_even;

    pub(super) fn quantize_s8(x: &[f32], inv: f32, zpf: f32, min: i32, max: i32, out: &mut [i8]) {
        for (o, &v) in out.iter_mut().zip(x) {
            let t = (round_half_even(v * inv) + zpf) as i32;
            *o = t.max(min).min(max) as i8;
        }
    }

    pub(super) fn dequantize_s8(x: &[i8], scale: f32, zp: i32, out: &mut [f32]) {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = (v as i32).wrapping_sub(zp) as f32 * scale;
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::math::quantize::{quantize_f32, QuantRange};
    use std::{vec, vec::Vec};

    /// Values where the lane steps could part from the scalar reference:
    /// ties, signed zeros, NaN, infinities, values past `i32`, subnormals.
    fn edge_values() -> Vec<f32> {
        let mut v = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            -2.5,
            127.49,
            127.5,
            128.5,
            -128.5,
            -129.5,
            1e10,
            -1e10,
            3e9,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1e-40,
            -1e-40,
            8_388_607.5,
            16_777_217.0,
        ];
        // A seeded spread over the int8 range and a little past it.
        let mut s = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            v.push(((s >> 40) as i32 - (1 << 23)) as f32 / 16384.0);
        }
        v
    }

    #[test]
    fn quantize_s8_matches_portable_quantize() {
        let x = edge_values();
        for (scale, zp, min, max) in [
            (0.0039215689f64, -128i64, -128i64, 127i64),
            (0.1, 3, -128, 127),
            (0.02, 0, -100, 100),
            (1.0 / 3.0, 7, -300, 300), // wraps in the `as i8`, both sides
            (1e-3, -5, i32::MIN as i64, i32::MAX as i64),
            (7.0, 127, -128, 127),
        ] {
            let inv = 1.0f32 / (scale as f32);
            let range = QuantRange::new(min, max).unwrap();
            let want: Vec<i8> = x
                .iter()
                .map(|&v| quantize_f32(v, inv, zp as i32, range) as i8)
                .collect();
            for n in [0, 1, 3, 4, 5, x.len()] {
                let mut got = vec![0x55i8; n];
                quantize_s8(&x[..n], inv, zp as i32, min as i32, max as i32, &mut got).unwrap();
                assert_eq!(got, want[..n], "scale {scale} zp {zp} n {n}");
            }
        }
    }

    #[test]
    fn quantize_s8_refuses_what_it_cannot_reproduce() {
        let mut o = [0x55i8; 4];
        let x = [1.0f32; 4];
        // Subnormal, zero, infinite and too large inverse scales; lengths.
        for inv in [1e-40f32, 0.0, f32::INFINITY, f32::NAN, 2e30] {
            assert!(
                quantize_s8(&x, inv, 0, -128, 127, &mut o).is_none(),
                "{inv}"
            );
        }
        assert!(quantize_s8(&x[..3], 1.0, 0, -128, 127, &mut o).is_none());
        assert_eq!(o, [0x55; 4], "nothing written");
        assert!(quantize_s8(&x, 1e29, 0, -128, 127, &mut o).is_some());
        assert_eq!(o, [127; 4]);
    }

    #[test]
    fn dequantize_s8_matches_portable_dequantize() {
        let x: Vec<i8> = (-128..=127).chain([0, 5, -7]).collect();
        for (scale, zp) in [
            (0.0039215689f64, -128i32),
            (0.1, 3),
            (1e-30, 0),
            (3e38, i32::MIN),
            (-0.5, i32::MAX),
        ] {
            let s = scale as f32;
            let want: Vec<u32> = x
                .iter()
                .map(|&v| ((v as i32).wrapping_sub(zp) as f32 * s).to_bits())
                .collect();
            for n in [0, 1, 4, 7, x.len()] {
                let mut got = vec![0f32; n];
                dequantize_s8(&x[..n], s, zp, &mut got).unwrap();
                let got: Vec<u32> = got.iter().map(|v| v.to_bits()).collect();
                assert_eq!(got, want[..n], "scale {scale} zp {zp} n {n}");
            }
        }
        let mut o = [0f32; 2];
        for s in [1e-40f32, 0.0, f32::INFINITY, f32::NAN] {
            assert!(dequantize_s8(&[1, 2], s, 0, &mut o).is_none(), "{s}");
        }
        assert!(dequantize_s8(&[1], 1.0, 0, &mut o).is_none());
        assert_eq!(o, [0.0; 2], "nothing written");
    }
}
