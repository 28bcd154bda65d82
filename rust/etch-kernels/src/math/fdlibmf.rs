//! Single-precision `log1p` and `erf`, the algorithms of glibc's
//! `sysdeps/ieee754/flt-32/s_log1pf.c` and `s_erff.c` up to glibc 2.40
//! (fdlibm's float versions). ExecuTorch's portable `log1p` and `erf` call
//! `std::log1p(float)` / `std::erf(float)`, which the reference runs on
//! x86-64 glibc; the `libm` crate's versions are musl's (FreeBSD's) and
//! differ by an ulp on some inputs. Checked equal to the host glibc over
//! every 1000th f32 bit pattern by the host tests below. `erff` calls glibc's
//! `expf` ([`super::expf::expf`]) as glibc's does.
//!
//! Constants are written as C writes them (a double literal converted to
//! float), so they round exactly as glibc's do.
//!
//! ```text
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//!
//! Developed at SunPro, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice
//! is preserved.
//! ```

use super::expf::expf;

/// `(x - x) / (x - x)`, fdlibm's and glibc's invalid-operation result: a NaN
/// input propagates; otherwise the FPU's default NaN (x86: sign bit set, as
/// the reference computes it; Arm: clear).
#[allow(clippy::eq_op)]
pub(crate) fn invalid(x: f32) -> f32 {
    (x - x) / (x - x)
}

const LN2_HI: f32 = 6.9313812256e-01_f64 as f32; // 0x3f317180
const LN2_LO: f32 = 9.0580006145e-06_f64 as f32; // 0x3717f7d1
const LP1: f32 = 6.6666668653e-01_f64 as f32;
const LP2: f32 = 4.0000000596e-01_f64 as f32;
const LP3: f32 = 2.8571429849e-01_f64 as f32;
const LP4: f32 = 2.2222198546e-01_f64 as f32;
const LP5: f32 = 1.8183572590e-01_f64 as f32;
const LP6: f32 = 1.5313838422e-01_f64 as f32;
const LP7: f32 = 1.4798198640e-01_f64 as f32;
#[allow(clippy::excessive_precision)] // C's literal
const TWO_THIRDS: f32 = 0.66666666666666666_f64 as f32;

/// `log1pf` as glibc (≤ 2.40) computes it.
pub fn log1pf(x: f32) -> f32 {
    let hx = x.to_bits() as i32;
    let ax = hx & 0x7fff_ffff;
    let mut k = 1i32;
    let (mut f, mut hu, mut c) = (0.0f32, 0i32, 0.0f32);
    if hx < 0x3ed4_13d7 {
        // x < 0.41422
        if ax >= 0x3f80_0000 {
            // x <= -1.0
            if x == -1.0 {
                return f32::NEG_INFINITY; // log1p(-1) = -inf
            }
            return invalid(x); // log1p(x < -1) = NaN
        }
        if ax < 0x3100_0000 {
            // |x| < 2^-29
            if ax < 0x2480_0000 {
                return x; // |x| < 2^-54
            }
            return x - x * x * 0.5;
        }
        if hx > 0 || hx <= 0xbe95_f61f_u32 as i32 {
            // -0.2929 < x < 0.41422
            k = 0;
            f = x;
            hu = 1;
        }
    }
    if hx >= 0x7f80_0000 {
        return x + x;
    }
    if k != 0 {
        let mut u;
        if hx < 0x5a00_0000 {
            u = 1.0 + x;
            hu = u.to_bits() as i32;
            k = (hu >> 23) - 127;
            // correction term
            c = if k > 0 { 1.0 - (u - x) } else { x - (u - 1.0) };
            c /= u;
        } else {
            u = x;
            hu = u.to_bits() as i32;
            k = (hu >> 23) - 127;
            c = 0.0;
        }
        hu &= 0x007f_ffff;
        if hu < 0x0035_04f7 {
            u = f32::from_bits((hu | 0x3f80_0000) as u32); // normalize u
        } else {
            k += 1;
            u = f32::from_bits((hu | 0x3f00_0000) as u32); // normalize u/2
            hu = (0x0080_0000 - hu) >> 2;
        }
        f = u - 1.0;
    }
    let kf = k as f32;
    let hfsq = 0.5 * f * f;
    if hu == 0 {
        // |f| < 2^-20
        if f == 0.0 {
            if k == 0 {
                return 0.0;
            }
            c += kf * LN2_LO;
            return kf * LN2_HI + c;
        }
        let r = hfsq * (1.0 - TWO_THIRDS * f);
        if k == 0 {
            return f - r;
        }
        return kf * LN2_HI - ((r - (kf * LN2_LO + c)) - f);
    }
    let s = f / (2.0 + f);
    let z = s * s;
    let r = z * (LP1 + z * (LP2 + z * (LP3 + z * (LP4 + z * (LP5 + z * (LP6 + z * LP7))))));
    if k == 0 {
        f - (hfsq - s * (hfsq + r))
    } else {
        kf * LN2_HI - ((hfsq - (s * (hfsq + r) + (kf * LN2_LO + c))) - f)
    }
}

const TINY: f32 = 1e-30_f64 as f32;
const ERX: f32 = 8.4506291151e-01_f64 as f32;
// erf on [0, 0.84375]
const EFX: f32 = 1.2837916613e-01_f64 as f32;
const PP0: f32 = 1.2837916613e-01_f64 as f32;
const PP1: f32 = -3.2504209876e-01_f64 as f32;
const PP2: f32 = -2.8481749818e-02_f64 as f32;
const PP3: f32 = -5.7702702470e-03_f64 as f32;
const PP4: f32 = -2.3763017452e-05_f64 as f32;
const QQ1: f32 = 3.9791721106e-01_f64 as f32;
const QQ2: f32 = 6.5022252500e-02_f64 as f32;
const QQ3: f32 = 5.0813062117e-03_f64 as f32;
const QQ4: f32 = 1.3249473704e-04_f64 as f32;
const QQ5: f32 = -3.9602282413e-06_f64 as f32;
// erf in [0.84375, 1.25]
const PA0: f32 = -2.3621185683e-03_f64 as f32;
const PA1: f32 = 4.1485610604e-01_f64 as f32;
const PA2: f32 = -3.7220788002e-01_f64 as f32;
const PA3: f32 = 3.1834661961e-01_f64 as f32;
const PA4: f32 = -1.1089469492e-01_f64 as f32;
const PA5: f32 = 3.5478305072e-02_f64 as f32;
const PA6: f32 = -2.1663755178e-03_f64 as f32;
const QA1: f32 = 1.0642088205e-01_f64 as f32;
const QA2: f32 = 5.4039794207e-01_f64 as f32;
const QA3: f32 = 7.1828655899e-02_f64 as f32;
const QA4: f32 = 1.2617121637e-01_f64 as f32;
const QA5: f32 = 1.3637083583e-02_f64 as f32;
const QA6: f32 = 1.1984500103e-02_f64 as f32;
// erfc in [1.25, 1/0.35]
const RA0: f32 = -9.8649440333e-03_f64 as f32;
const RA1: f32 = -6.9385856390e-01_f64 as f32;
const RA2: f32 = -1.0558626175e+01_f64 as f32;
const RA3: f32 = -6.2375331879e+01_f64 as f32;
const RA4: f32 = -1.6239666748e+02_f64 as f32;
const RA5: f32 = -1.8460508728e+02_f64 as f32;
const RA6: f32 = -8.1287437439e+01_f64 as f32;
const RA7: f32 = -9.8143291473e+00_f64 as f32;
const SA1: f32 = 1.9651271820e+01_f64 as f32;
const SA2: f32 = 1.3765776062e+02_f64 as f32;
const SA3: f32 = 4.3456588745e+02_f64 as f32;
const SA4: f32 = 6.4538726807e+02_f64 as f32;
const SA5: f32 = 4.2900814819e+02_f64 as f32;
const SA6: f32 = 1.0863500214e+02_f64 as f32;
const SA7: f32 = 6.5702495575e+00_f64 as f32;
const SA8: f32 = -6.0424413532e-02_f64 as f32;
// erfc in [1/0.35, 28]
const RB0: f32 = -9.8649431020e-03_f64 as f32;
const RB1: f32 = -7.9928326607e-01_f64 as f32;
const RB2: f32 = -1.7757955551e+01_f64 as f32;
const RB3: f32 = -1.6063638306e+02_f64 as f32;
const RB4: f32 = -6.3756646729e+02_f64 as f32;
const RB5: f32 = -1.0250950928e+03_f64 as f32;
const RB6: f32 = -4.8351919556e+02_f64 as f32;
const SB1: f32 = 3.0338060379e+01_f64 as f32;
const SB2: f32 = 3.2579251099e+02_f64 as f32;
const SB3: f32 = 1.5367296143e+03_f64 as f32;
const SB4: f32 = 3.1998581543e+03_f64 as f32;
const SB5: f32 = 2.5530502930e+03_f64 as f32;
const SB6: f32 = 4.7452853394e+02_f64 as f32;
const SB7: f32 = -2.2440952301e+01_f64 as f32;

/// `erff` as glibc (≤ 2.40) computes it.
pub fn erff(x: f32) -> f32 {
    let hx = x.to_bits() as i32;
    let ix = hx & 0x7fff_ffff;
    if ix >= 0x7f80_0000 {
        // erf(NaN) = NaN, erf(±inf) = ±1
        let i = (((hx as u32) >> 31) << 1) as i32;
        return (1 - i) as f32 + 1.0 / x;
    }
    if ix < 0x3f58_0000 {
        // |x| < 0.84375
        if ix < 0x3180_0000 {
            // |x| < 2^-28
            if ix < 0x0400_0000 {
                return 0.0625 * (16.0 * x + (16.0 * EFX) * x);
            }
            return x + EFX * x;
        }
        let z = x * x;
        let r = PP0 + z * (PP1 + z * (PP2 + z * (PP3 + z * PP4)));
        let s = 1.0 + z * (QQ1 + z * (QQ2 + z * (QQ3 + z * (QQ4 + z * QQ5))));
        let y = r / s;
        return x + x * y;
    }
    if ix < 0x3fa0_0000 {
        // 0.84375 <= |x| < 1.25
        let s = x.abs() - 1.0;
        let p = PA0 + s * (PA1 + s * (PA2 + s * (PA3 + s * (PA4 + s * (PA5 + s * PA6)))));
        let q = 1.0 + s * (QA1 + s * (QA2 + s * (QA3 + s * (QA4 + s * (QA5 + s * QA6)))));
        return if hx >= 0 { ERX + p / q } else { -ERX - p / q };
    }
    if ix >= 0x40c0_0000 {
        // inf > |x| >= 6
        return if hx >= 0 { 1.0 - TINY } else { TINY - 1.0 };
    }
    let x = x.abs();
    let s = 1.0 / (x * x);
    let (r, ss) = if ix < 0x4036_db6e {
        // |x| < 1/0.35
        (
            RA0 + s * (RA1 + s * (RA2 + s * (RA3 + s * (RA4 + s * (RA5 + s * (RA6 + s * RA7)))))),
            1.0 + s
                * (SA1
                    + s * (SA2
                        + s * (SA3 + s * (SA4 + s * (SA5 + s * (SA6 + s * (SA7 + s * SA8))))))),
        )
    } else {
        // |x| >= 1/0.35
        (
            RB0 + s * (RB1 + s * (RB2 + s * (RB3 + s * (RB4 + s * (RB5 + s * RB6))))),
            1.0 + s * (SB1 + s * (SB2 + s * (SB3 + s * (SB4 + s * (SB5 + s * (SB6 + s * SB7)))))),
        )
    };
    let z = f32::from_bits(x.to_bits() & 0xffff_f000);
    let r = expf(-z * z - 0.5625) * expf((z - x) * (z + x) + r / ss);
    if hx >= 0 {
        1.0 - r / x
    } else {
        r / x - 1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        #[link_name = "log1pf"]
        fn glibc_log1pf(x: f32) -> f32;
        #[link_name = "erff"]
        fn glibc_erff(x: f32) -> f32;
    }

    /// Every 1000th bit pattern (all exponents, both signs), and specials.
    fn check(name: &str, ours: fn(f32) -> f32, theirs: unsafe extern "C" fn(f32) -> f32) {
        let specials = [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            -0.5,
            6.0,
            -6.0,
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
    fn log1pf_matches_glibc() {
        check("log1pf", log1pf, glibc_log1pf);
    }

    #[test]
    fn erff_matches_glibc() {
        check("erff", erff, glibc_erff);
    }

    #[test]
    fn both_differ_from_musl() {
        // Why this module exists: inputs where the `libm` crate (musl) and
        // glibc disagree (found by scanning every 7th pattern).
        let differ = |ours: fn(f32) -> f32, musl: fn(f32) -> f32| {
            (0x3b00_0000u32..0x4100_0000)
                .step_by(101)
                .filter(|&b| ours(f32::from_bits(b)).to_bits() != musl(f32::from_bits(b)).to_bits())
                .count()
        };
        assert!(differ(log1pf, libm::log1pf) > 0);
        assert!(differ(erff, libm::erff) > 0);
    }
}
