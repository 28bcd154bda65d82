//! Single-precision `tanh` and `expm1`, the algorithms of glibc's
//! `sysdeps/ieee754/flt-32/s_tanhf.c` and `s_expm1f.c` up to glibc 2.40
//! (fdlibm's float versions; glibc 2.41 replaced `tanhf` by CORE-MATH's
//! correctly rounded one). ExecuTorch's portable `tanh`, `gelu(tanh)` and
//! `elu` call `std::tanh(float)` / `std::expm1(float)`; the reference runs
//! them on x86-64 glibc. The `libm` crate's `tanhf` is musl's, which
//! computes differently (up to 2 ulp apart, 32 ulp after a LeNet), and its
//! `expm1f` uses musl's shorter polynomial. Checked equal to the host
//! glibc's `tanhf` and `expm1f` over every 1000th f32 bit pattern by the
//! host tests below.
//!
//! ```text
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//!
//! Developed at SunPro, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice
//! is preserved.
//! ```

const O_THRESHOLD: f32 = 8.872_168e1; // 0x42b17180
const LN2_HI: f32 = f32::from_bits(0x3f31_7180);
const LN2_LO: f32 = f32::from_bits(0x3717_f7d1);
const INVLN2: f32 = f32::from_bits(0x3fb8_aa3b);
/// Scaled coefficients of the rational approximation of expm1.
const Q1: f32 = f32::from_bits(0xbd08_8889);
const Q2: f32 = f32::from_bits(0x3ad0_0d01);
const Q3: f32 = f32::from_bits(0xb8a6_70cd);
const Q4: f32 = f32::from_bits(0x3686_7e54);
const Q5: f32 = f32::from_bits(0xb457_edbb);

/// Adds `k` to the exponent of `y` (fdlibm's `SET_FLOAT_WORD(y, i + (k << 23))`).
fn scale(y: f32, k: i32) -> f32 {
    f32::from_bits((y.to_bits() as i32).wrapping_add(k << 23) as u32)
}

/// `expm1f` as glibc (≤ 2.40) computes it.
pub fn expm1f(x: f32) -> f32 {
    let bits = x.to_bits();
    let negative = bits & 0x8000_0000 != 0;
    let hx = bits & 0x7fff_ffff;

    // Huge and non-finite arguments.
    if hx >= 0x4195_b844 {
        // |x| >= 27·ln2
        if hx >= 0x42b1_7218 {
            // |x| >= 88.721...
            if hx > 0x7f80_0000 {
                return x + x; // NaN
            }
            if hx == 0x7f80_0000 {
                return if negative { -1.0 } else { x };
            }
            if x > O_THRESHOLD {
                return f32::INFINITY; // overflow
            }
        }
        if negative {
            return 1.0e-30 - 1.0; // -1
        }
    }

    // Argument reduction: x = k·ln2 + (hi − lo), c the rounding error.
    let (x, c, k) = if hx > 0x3eb1_7218 {
        // |x| > 0.5·ln2
        let (hi, lo, k) = if hx < 0x3f85_1592 {
            // and |x| < 1.5·ln2
            if negative {
                (x + LN2_HI, -LN2_LO, -1)
            } else {
                (x - LN2_HI, LN2_LO, 1)
            }
        } else {
            let k = (INVLN2 * x + if negative { -0.5 } else { 0.5 }) as i32;
            let t = k as f32;
            (x - t * LN2_HI, t * LN2_LO, k) // t·ln2_hi is exact here
        };
        let r = hi - lo;
        (r, (hi - r) - lo, k)
    } else if hx < 0x3300_0000 {
        return x; // |x| < 2^-25
    } else {
        (x, 0.0, 0)
    };

    // x is now in the primary range.
    let hfx = 0.5 * x;
    let hxs = x * hfx;
    let r1 = 1.0 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
    let t = 3.0 - r1 * hfx;
    let e = hxs * ((r1 - t) / (6.0 - x * t));
    if k == 0 {
        return x - (x * e - hxs); // c is 0
    }
    let e = (x * (e - c) - c) - hxs;
    if k == -1 {
        return 0.5 * (x - e) - 0.5;
    }
    if k == 1 {
        return if x < -0.25 {
            -2.0 * (e - (x + 0.5))
        } else {
            1.0 + 2.0 * (x - e)
        };
    }
    if k <= -2 || k > 56 {
        // Suffices to return exp(x) − 1.
        return scale(1.0 - (e - x), k) - 1.0;
    }
    if k < 23 {
        let t = f32::from_bits(0x3f80_0000 - (0x0100_0000 >> k)); // 1 − 2^-k
        scale(t - (e - x), k)
    } else {
        let t = f32::from_bits(((0x7f - k) << 23) as u32); // 2^-k
        scale(x - (e + t) + 1.0, k)
    }
}

/// `tanhf` as glibc (≤ 2.40) computes it.
pub fn tanhf(x: f32) -> f32 {
    let jx = x.to_bits();
    let ix = jx & 0x7fff_ffff;
    let negative = jx & 0x8000_0000 != 0;

    if ix >= 0x7f80_0000 {
        // tanh(±inf) = ±1, tanh(NaN) = NaN
        return if negative {
            1.0 / x - 1.0
        } else {
            1.0 / x + 1.0
        };
    }
    let z = if ix < 0x41b0_0000 {
        // |x| < 22
        if ix == 0 {
            return x; // ±0
        }
        if ix < 0x2400_0000 {
            // |x| < 2^-55: tanh(small) = small
            return x * (1.0 + x);
        }
        if ix >= 0x3f80_0000 {
            // |x| >= 1
            let t = expm1f(2.0 * f32::from_bits(ix));
            1.0 - 2.0 / (t + 2.0)
        } else {
            let t = expm1f(-2.0 * f32::from_bits(ix));
            -t / (t + 2.0)
        }
    } else {
        1.0 - 1.0e-30 // |x| >= 22: 1 (inexact)
    };
    if negative {
        -z
    } else {
        z
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        #[link_name = "tanhf"]
        fn glibc_tanhf(x: f32) -> f32;
        #[link_name = "expm1f"]
        fn glibc_expm1f(x: f32) -> f32;
    }

    /// Every 1000th bit pattern (all exponents, both signs), and specials.
    fn check(name: &str, ours: fn(f32) -> f32, theirs: unsafe extern "C" fn(f32) -> f32) {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            22.0,
            -22.0,
            88.72168,
            89.0,
            -89.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            f32::MIN_POSITIVE,
            1e-45,
            f32::MAX,
        ];
        let checked = super::super::glibc_check::matches_glibc(name, ours, theirs, 1000, &specials);
        assert!(checked > 4_000_000);
    }

    #[test]
    fn tanhf_matches_glibc() {
        check("tanhf", tanhf, glibc_tanhf);
    }

    #[test]
    fn expm1f_matches_glibc() {
        check("expm1f", expm1f, glibc_expm1f);
    }

    #[test]
    fn tanhf_differs_from_musl() {
        // The reason this module exists: an input where the `libm` crate
        // (musl) and glibc disagree. Found by scanning; keeps the test honest.
        let mut bits = 0x3c00_0000u32;
        let mut differ = 0;
        while bits < 0x4180_0000 {
            let x = f32::from_bits(bits);
            if libm::tanhf(x).to_bits() != tanhf(x).to_bits() {
                differ += 1;
            }
            bits += 997;
        }
        assert!(differ > 0);
    }
}
