//! Float quantization as ExecuTorch's portable and `cortex_m` scalar paths
//! run it: `nearbyint` without libm and the clamped `quantize` step.

use etch_runtime::{Error, ErrorCode, Result};

/// `quant_min..=quant_max`, checked to fit 32 bits.
#[derive(Clone, Copy)]
pub struct QuantRange {
    pub min: i64,
    pub max: i64,
}

impl QuantRange {
    pub fn new(min: i64, max: i64) -> Result<Self> {
        if min > max || min < i32::MIN as i64 || max > i32::MAX as i64 {
            return Err(Error::new(ErrorCode::InvalidArgument, "quant range", 0));
        }
        Ok(QuantRange { min, max })
    }
}

/// ExecuTorch's scalar quantize (`op_quantize.cpp`, and `cortex_m`'s scalar
/// path): `p = inv_scale * x` in f32, `q = zp + nearbyint(p)` (ties to
/// even; the addition happens in float, then converts to int64), clamped to
/// `quant_min` first, then `quant_max`.
#[inline]
pub fn quantize_f32(x: f32, inv_scale: f32, zp: i32, range: QuantRange) -> i64 {
    let p = inv_scale * x;
    let q = (zp as f32 + round_half_even(p)) as i64; // `as` saturates; NaN -> 0
    q.max(range.min).min(range.max)
}

/// `nearbyint` under the default rounding mode (ties to even), without libm.
#[inline]
pub fn round_half_even(x: f32) -> f32 {
    // Adding and subtracting 2^23 rounds to an integer in the FPU's default
    // mode (ties to even); values at or above 2^23 are integers already.
    const TWO23: f32 = 8_388_608.0;
    if x.is_nan() || x.abs() >= TWO23 {
        return x;
    }
    let r = if x >= 0.0 {
        (x + TWO23) - TWO23
    } else {
        (x - TWO23) + TWO23
    };
    // Keep the sign of zero results (nearbyint(-0.3) == -0.0).
    if r == 0.0 {
        0.0f32.copysign(x)
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_half_even_matches_nearbyint() {
        for (x, r) in [
            (0.5f32, 0.0f32),
            (1.5, 2.0),
            (2.5, 2.0),
            (-0.5, -0.0),
            (-1.5, -2.0),
            (-2.5, -2.0),
            (2.4999998, 2.0),
            (1e10, 1e10),
            (-7.49, -7.0),
        ] {
            assert_eq!(round_half_even(x).to_bits(), r.to_bits(), "{x}");
        }
    }
}
