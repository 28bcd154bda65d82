//! Single-precision natural `log`, the algorithm of glibc ≥ 2.28 and musl
//! (Arm optimized-routines `logf`, MIT). ExecuTorch's portable float kernels
//! call `std::log(float)` (log_softmax, log): the `libm` crate's `logf` is
//! the older FreeBSD code and differs by an ulp on some inputs, this one is
//! checked equal to glibc's `logf` over every 7th f32 bit pattern by
//! `logf_matches_glibc_everywhere` (host test).
//!
//! log(x) = k·ln2 + log(c) + log1p(z/c − 1) with `x = 2^k·z`, z in
//! [0x1.66p-1, 0x1.66p0); c and log(c) from a 16-entry table, log1p by a
//! cubic, all in f64.
//!
//! [`log2f`] (`log2.out`) is glibc's `log2f` from the same family: the same
//! `1/c`, `log2(c)`, a quartic; equal to glibc's over every 1000th pattern
//! (`log2f_matches_glibc`) and, by a scratch scan, over all 2^32.

/// `(1/c, log(c))` for the 16 subintervals of z.
pub(crate) const TAB: [(u64, u64); 16] = [
    (0x3ff661ec79f8f3be, 0xbfd57bf7808caade),
    (0x3ff571ed4aaf883d, 0xbfd2bef0a7c06ddb),
    (0x3ff49539f0f010b0, 0xbfd01eae7f513a67),
    (0x3ff3c995b0b80385, 0xbfcb31d8a68224e9),
    (0x3ff30d190c8864a5, 0xbfc6574f0ac07758),
    (0x3ff25e227b0b8ea0, 0xbfc1aa2bc79c8100),
    (0x3ff1bb4a4a1a343f, 0xbfba4e76ce8c0e5e),
    (0x3ff12358f08ae5ba, 0xbfb1973c5a611ccc),
    (0x3ff0953f419900a7, 0xbfa252f438e10c1e),
    (0x3ff0000000000000, 0x0000000000000000),
    (0x3fee608cfd9a47ac, 0x3faaa5aa5df25984),
    (0x3feca4b31f026aa0, 0x3fbc5e53aa362eb4),
    (0x3feb2036576afce6, 0x3fc526e57720db08),
    (0x3fe9c2d163a1aa2d, 0x3fcbc2860d224770),
    (0x3fe886e6037841ed, 0x3fd1058bc8a07ee1),
    (0x3fe767dcf5534862, 0x3fd4043057b6ee09),
];
const LN2: f64 = f64::from_bits(0x3fe62e42fefa39ef); // 0x1.62e42fefa39efp-1
const A0: f64 = f64::from_bits(0xbfd00ea348b88334); // -0x1.00ea348b88334p-2
const A1: f64 = f64::from_bits(0x3fd5575b0be00b6a); // 0x1.5575b0be00b6ap-2
const A2: f64 = f64::from_bits(0xbfdffffef20a4123); // -0x1.ffffef20a4123p-2
/// Start of the z range, as f32 bits (0x1.66p-1).
pub(crate) const OFF: u32 = 0x3f330000;

/// `logf` as glibc computes it.
pub fn logf(x: f32) -> f32 {
    let mut ix = x.to_bits();
    if ix == 0x3f800000 {
        return 0.0; // log(1) = +0 in every rounding mode
    }
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        // Subnormal, zero, negative, inf or NaN.
        if ix.wrapping_mul(2) == 0 {
            return f32::NEG_INFINITY;
        }
        if ix == 0x7f80_0000 {
            return x;
        }
        if ix & 0x8000_0000 != 0 || ix.wrapping_mul(2) >= 0xff00_0000 {
            // Negative or NaN: glibc's `__math_invalidf`, `(x - x) / (x - x)`.
            return super::fdlibmf::invalid(x);
        }
        // Subnormal: normalize.
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits(); // x · 2^23
        ix = ix.wrapping_sub(23 << 23);
    }
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let k = (tmp as i32) >> 23; // arithmetic shift
    let iz = ix.wrapping_sub(tmp & (0x1ff << 23));
    let (invc, logc) = match TAB.get(i) {
        Some(&(a, b)) => (f64::from_bits(a), f64::from_bits(b)),
        None => (1.0, 0.0), // unreachable: i < 16
    };
    let z = f32::from_bits(iz) as f64;
    let r = z * invc - 1.0;
    let y0 = logc + k as f64 * LN2;
    let r2 = r * r;
    let y = A1 * r + A2;
    let y = A0 * r2 + y;
    let y = y * r2 + (y0 + r);
    y as f32
}

/// `log2(c)` for the 16 subintervals of z (`1/c` is [`TAB`]'s).
pub(crate) const LOG2C: [u64; 16] = [
    0xbfdefec65b963019,
    0xbfdb0b6832d4fca4,
    0xbfd7418b0a1fb77b,
    0xbfd39de91a6dcf7b,
    0xbfd01d9bf3f2b631,
    0xbfc97c1d1b3b7af0,
    0xbfc2f9e393af3c9f,
    0xbfb960cbbf788d5c,
    0xbfaa6f9db6475fce,
    0x0000000000000000,
    0x3fb338ca9f24f53d,
    0x3fc476a9543891ba,
    0x3fce840b4ac4e4d2,
    0x3fd40645f0c6651c,
    0x3fd88e9c2c1b9ff8,
    0x3fdce0a44eb17bcc,
];
/// log1p(r)/ln2 ≈ B0·r⁴ + B1·r³ + B2·r² + B3·r (-0x1.712b6f70a7e4dp-2,
/// 0x1.ecabf496832ep-2, -0x1.715479ffae3dep-1, 0x1.715475f35c8b8p0).
const B: [u64; 4] = [
    0xbfd712b6f70a7e4d,
    0x3fdecabf496832e0,
    0xbfe715479ffae3de,
    0x3ff715475f35c8b8,
];

/// `log2f` as glibc computes it (the same table of `1/c`, `log2(c)` and a
/// quartic): log2(x) = k + log2(c) + log1p(z/c − 1)/ln2.
pub fn log2f(x: f32) -> f32 {
    let mut ix = x.to_bits();
    if ix == 0x3f800000 {
        return 0.0;
    }
    if ix.wrapping_sub(0x0080_0000) >= 0x7f80_0000 - 0x0080_0000 {
        if ix.wrapping_mul(2) == 0 {
            return f32::NEG_INFINITY;
        }
        if ix == 0x7f80_0000 {
            return x;
        }
        if ix & 0x8000_0000 != 0 || ix.wrapping_mul(2) >= 0xff00_0000 {
            return super::fdlibmf::invalid(x);
        }
        ix = (x * f32::from_bits(0x4b00_0000)).to_bits(); // x · 2^23
        ix = ix.wrapping_sub(23 << 23);
    }
    let tmp = ix.wrapping_sub(OFF);
    let i = ((tmp >> 19) % 16) as usize;
    let top = tmp & 0xff80_0000;
    let iz = ix.wrapping_sub(top);
    let k = (tmp as i32) >> 23; // arithmetic shift
    let (invc, logc) = match (TAB.get(i), LOG2C.get(i)) {
        (Some(&(a, _)), Some(&b)) => (f64::from_bits(a), f64::from_bits(b)),
        _ => (1.0, 0.0), // unreachable: i < 16
    };
    let [a0, a1, a2, a3] = B.map(f64::from_bits);
    let z = f32::from_bits(iz) as f64;
    let r = z * invc - 1.0;
    let y0 = logc + k as f64;
    let r2 = r * r;
    let y = a1 * r + a2;
    let y = a0 * r2 + y;
    let p = a3 * r + y0;
    let y = y * r2 + p;
    y as f32
}

#[cfg(test)]
mod tests {
    use super::super::glibc_check::matches_glibc;
    use super::*;

    extern "C" {
        #[link_name = "logf"]
        fn glibc_logf(x: f32) -> f32;
        #[link_name = "log2f"]
        fn glibc_log2f(x: f32) -> f32;
    }

    #[test]
    fn logf_matches_glibc_everywhere() {
        // Every 7th bit pattern (all exponents, dense mantissas), plus specials.
        let specials = [1.0f32, 0.0, -0.0, f32::INFINITY, f32::MIN_POSITIVE, 1e-45];
        let checked = matches_glibc("logf", logf, glibc_logf, 7, &specials);
        assert!(checked > 600_000_000);
    }

    #[test]
    fn log2f_matches_glibc() {
        // Every 1000th bit pattern (all exponents, both signs), plus specials.
        let specials = [
            1.0f32,
            2.0,
            0.5,
            0.0,
            -0.0,
            -1.0,
            f32::INFINITY,
            f32::NAN,
            1e-45,
        ];
        let checked = matches_glibc("log2f", log2f, glibc_log2f, 1000, &specials);
        assert!(checked > 4_000_000);
    }
}
