//! Single-precision `pow`, the algorithm of glibc ≥ 2.28 (Arm
//! optimized-routines `powf`, MIT; x86-64 and Arm M-profile build it without
//! the "toint" intrinsics): x^y = 2^(y·log2(x)), log2 from `logf.rs`'s table
//! of `1/c`, `log2(c)` and a quintic, exp2 from `expf.rs`'s table of
//! 2^(i/32) and a cubic, all in f64. ExecuTorch's portable `pow` calls
//! `std::pow(float, float)`; the `libm` crate's `powf` is FreeBSD's and
//! differed from glibc's on 2% of a test grid. Checked equal to the host
//! glibc's `powf` on a grid of bases × exponents by `powf_matches_glibc`.

use super::expf::TAB as EXP2_TAB;
use super::logf::{LOG2C, OFF, TAB as LOG_TAB};

/// log1p(r)/ln2 ≈ A0·r⁵ + A1·r⁴ + A2·r³ + A3·r² + A4·r.
const A: [u64; 5] = [
    0x3fd27616c9496e0b, // 0x1.27616c9496e0bp-2
    0xbfd71969a075c67a, // -0x1.71969a075c67ap-2
    0x3fdec70a6ca7badd, // 0x1.ec70a6ca7baddp-2
    0xbfe7154748bef6c8, // -0x1.7154748bef6c8p-1
    0x3ff71547652ab82b, // 0x1.71547652ab82bp0
];
/// 2^r ≈ C0·r³ + C1·r² + C2·r + 1.
const C: [u64; 3] = [
    0x3fac6af84b912394, // 0x1.c6af84b912394p-5
    0x3fcebfce50fac4f3, // 0x1.ebfce50fac4f3p-3
    0x3fe62e42ff0c52d6, // 0x1.62e42ff0c52d6p-1
];
const SHIFT_SCALED: f64 = f64::from_bits(0x42e8_0000_0000_0000); // 0x1.8p52 / 32
const SIGN_BIAS: u64 = 1 << (5 + 11);

/// log2 of the (normalized, positive) bit pattern `ix`, in f64.
fn log2_inline(ix: u32) -> f64 {
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (top as i32) >> 23; // arithmetic shift
    let (invc, logc) = match (LOG_TAB.get(i), LOG2C.get(i)) {
        (Some(&(a, _)), Some(&b)) => (f64::from_bits(a), f64::from_bits(b)),
        _ => (1.0, 0.0), // unreachable: i < 16
    };
    let [a0, a1, a2, a3, a4] = A.map(f64::from_bits);
    let z = f32::from_bits(iz) as f64;
    let r = z * invc - 1.0;
    let y0 = logc + k as f64;
    let r2 = r * r;
    let y = a0 * r + a1;
    let p = a2 * r + a3;
    let r4 = r2 * r2;
    let q = a4 * r + y0;
    let q = p * r2 + q;
    y * r4 + q
}

/// 2^xd (|xd| < 150), negated when `sign_bias` is set.
fn exp2_inline(xd: f64, sign_bias: u64) -> f64 {
    let kd = xd + SHIFT_SCALED; // k/32 rounded, k in the low bits
    let ki = kd.to_bits();
    let kd = kd - SHIFT_SCALED;
    let r = xd - kd;
    let t = EXP2_TAB[(ki % 32) as usize];
    let ski = ki.wrapping_add(sign_bias);
    let s = f64::from_bits(t.wrapping_add(ski << 47));
    let [c0, c1, c2] = C.map(f64::from_bits);
    let z = c0 * r + c1;
    let r2 = r * r;
    let y = c2 * r + 1.0;
    let y = z * r2 + y;
    y * s
}

/// 0 if `iy` (a non-zero finite float's bits) is not an integer, 1 if odd,
/// 2 if even.
fn checkint(iy: u32) -> u32 {
    let e = (iy >> 23) & 0xff;
    if e < 0x7f {
        return 0;
    }
    if e > 0x7f + 23 {
        return 2;
    }
    let bit = 1u32 << (0x7f + 23 - e);
    if iy & (bit - 1) != 0 {
        0
    } else if iy & bit != 0 {
        1
    } else {
        2
    }
}

/// Zero, infinity or NaN.
fn zeroinfnan(i: u32) -> bool {
    (i << 1).wrapping_sub(1) >= 2 * 0x7f80_0000 - 1
}

/// A signaling NaN (quiet bit clear).
fn is_signaling(x: f32) -> bool {
    (x.to_bits() ^ 0x0040_0000) << 1 > 2 * 0x7fc0_0000
}

/// `powf` as glibc computes it.
pub fn powf(x: f32, y: f32) -> f32 {
    let mut sign_bias = 0u64;
    let mut ix = x.to_bits();
    let iy = y.to_bits();
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 || zeroinfnan(iy) {
        // Either (x < 0x1p-126 or inf or nan) or (y is 0 or inf or nan).
        if zeroinfnan(iy) {
            if iy << 1 == 0 {
                return if is_signaling(x) { x + y } else { 1.0 };
            }
            if ix == 0x3f80_0000 {
                return if is_signaling(y) { x + y } else { 1.0 };
            }
            if ix << 1 > 2 * 0x7f80_0000 || iy << 1 > 2 * 0x7f80_0000 {
                return x + y;
            }
            if ix << 1 == 2 * 0x3f80_0000 {
                return 1.0;
            }
            if (ix << 1 < 2 * 0x3f80_0000) == (iy & 0x8000_0000 == 0) {
                return 0.0; // |x| < 1 && y == inf or |x| > 1 && y == -inf
            }
            return y * y;
        }
        if zeroinfnan(ix) {
            let mut x2 = x * x;
            if ix & 0x8000_0000 != 0 && checkint(iy) == 1 {
                x2 = -x2;
            }
            return if iy & 0x8000_0000 != 0 { 1.0 / x2 } else { x2 };
        }
        // x and y are non-zero finite.
        if ix & 0x8000_0000 != 0 {
            // Finite x < 0.
            match checkint(iy) {
                0 => return super::fdlibmf::invalid(x),
                1 => sign_bias = SIGN_BIAS,
                _ => {}
            }
            ix &= 0x7fff_ffff;
        }
        if ix < 0x0080_0000 {
            // Normalize subnormal x so the exponent becomes negative.
            ix = (x * f32::from_bits(0x4b00_0000)).to_bits(); // x · 2^23
            ix &= 0x7fff_ffff;
            ix = ix.wrapping_sub(23 << 23);
        }
    }
    let logx = log2_inline(ix);
    let ylogx = y as f64 * logx; // cannot overflow: y is single precision
    if (ylogx.to_bits() >> 47 & 0xffff) >= 126.0f64.to_bits() >> 47 {
        // |y·log(x)| >= 126
        let signed = |v: f32| if sign_bias != 0 { -v } else { v };
        if ylogx > f64::from_bits(0x405f_ffff_ffd1_d571) {
            return signed(f32::INFINITY); // |x^y| > 0x1.ffffffp127
        }
        if ylogx <= -150.0 {
            return signed(0.0); // underflow
        }
        if ylogx < -149.0 {
            // glibc's __math_may_uflowf: (0x1.4p-75)², the least subnormal.
            return signed(f32::from_bits(1));
        }
    }
    exp2_inline(ylogx, sign_bias) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        #[link_name = "powf"]
        fn glibc_powf(x: f32, y: f32) -> f32;
    }

    #[test]
    fn powf_matches_glibc() {
        let ys = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            2.0,
            3.0,
            -3.0,
            0.3333,
            1.5,
            7.25,
            -2.75,
            100.5,
            1e-3,
            1e7,
            -1e7,
            149.5,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let mut bits = 0u32;
        let xs = core::iter::from_fn(|| {
            let b = bits;
            bits = bits.checked_add(4999)?;
            Some(f32::from_bits(b))
        });
        let mut checked = 0;
        for x in xs.chain([
            0.0,
            -0.0,
            1.0,
            -1.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ]) {
            for y in ys {
                // SAFETY: calling the C library's pure `powf` with plain f32s
                // (black_box: no compiler folding of powf(x, 0) into 1).
                let want =
                    unsafe { glibc_powf(core::hint::black_box(x), core::hint::black_box(y)) };
                let got = powf(x, y);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "powf({x:e}, {y:e}) = {got:e}, glibc {want:e}"
                );
                checked += 1;
            }
        }
        assert!(checked > 10_000_000);
    }
}
