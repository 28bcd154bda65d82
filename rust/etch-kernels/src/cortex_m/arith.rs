//! CMSIS-NN's scalar integer arithmetic (`arm_nnsupportfunctions.h`), each
//! function matching the upstream expression it names bit for bit:
//! requantization, the rounding shifts and the fixed-point exp and
//! reciprocal of `arm_softmax_s8`.

/// CMSIS-NN `arm_nn_requantize` (double rounding, the default build):
/// `x << max(shift, 0)`, then `(x·m + 2^30) >> 31` in 64 bits, then a
/// rounding right shift by `max(-shift, 0)` with ties away from zero.
#[inline]
pub fn requantize(val: i32, multiplier: i32, shift: i32) -> i32 {
    let left = if shift > 0 { shift } else { 0 };
    let right = if shift > 0 { 0 } else { shift.wrapping_neg() };
    let x = val.wrapping_mul(1i32.wrapping_shl(left as u32));
    let high = (((x as i64) * (multiplier as i64) + (1i64 << 30)) >> 31) as i32;
    divide_by_power_of_two(high, right)
}

/// CMSIS-NN `arm_nn_divide_by_power_of_two`: rounding arithmetic shift right,
/// ties away from zero.
#[inline]
pub fn divide_by_power_of_two(dividend: i32, exponent: i32) -> i32 {
    let exponent = (exponent as u32).min(31);
    let mask = ((1i64 << exponent) - 1) as i32;
    let remainder = mask & dividend;
    let mut result = dividend >> exponent;
    let mut threshold = mask >> 1;
    if result < 0 {
        threshold += 1;
    }
    if remainder > threshold {
        result += 1;
    }
    result
}

/// CMSIS-NN `arm_nn_doubling_high_mult` (`MUL_SAT`): rounding doubling high
/// multiply, saturating only for `MIN * MIN`; the division truncates toward
/// zero as in C.
#[inline]
pub fn mul_sat(m1: i32, m2: i32) -> i32 {
    let mut mult: i64 = 1 << 30;
    if (m1 < 0) ^ (m2 < 0) {
        mult = 1 - mult;
    }
    mult += m1 as i64 * m2 as i64;
    if m1 == m2 && m1 == i32::MIN {
        return i32::MAX;
    }
    (mult / (1i64 << 31)) as i32
}

/// CMSIS-NN `arm_nn_mult_by_power_of_two` (`MUL_POW2`): saturating shift left.
#[inline]
pub fn mul_pow2(val: i32, exp: i32) -> i32 {
    let exp = exp.clamp(0, 31);
    let thresh = ((1i64 << (31 - exp)) - 1) as i32;
    if val > thresh {
        i32::MAX
    } else if val < thresh.wrapping_neg() {
        i32::MIN
    } else {
        val.wrapping_shl(exp as u32)
    }
}

/// CMSIS-NN `arm_nn_exp_on_negative_values` (5 integer bits).
pub fn exp_on_negative_values(val: i32) -> i32 {
    const SHIFT_START: u32 = 24;
    let val_mod_minus_quarter = (val & ((1 << SHIFT_START) - 1)).wrapping_sub(1 << SHIFT_START);
    let remainder = val_mod_minus_quarter.wrapping_sub(val);
    let x = (val_mod_minus_quarter.wrapping_shl(5)).wrapping_add(1 << 28);
    let x2 = mul_sat(x, x);
    let inner = divide_by_power_of_two(mul_sat(x2, x2), 2).wrapping_add(mul_sat(x2, x));
    let inner = divide_by_power_of_two(mul_sat(inner, 715_827_883).wrapping_add(x2), 1);
    let mut result = 1_895_147_668i32.wrapping_add(mul_sat(1_895_147_668, x.wrapping_add(inner)));
    const STEPS: [i32; 7] = [
        1_672_461_947,
        1_302_514_674,
        790_015_084,
        290_630_308,
        39_332_535,
        720_401,
        242,
    ];
    for (shift, k) in (SHIFT_START..).zip(STEPS) {
        if remainder & (1i32.wrapping_shl(shift)) != 0 {
            result = mul_sat(result, k);
        }
    }
    if val == 0 {
        i32::MAX
    } else {
        result
    }
}

/// CMSIS-NN `arm_nn_one_over_one_plus_x_for_x_in_0_1` (`ONE_OVER1`): three
/// Newton-Raphson steps.
pub fn one_over_one_plus_x(val: i32) -> i32 {
    let sum = val as i64 + i32::MAX as i64;
    let half_denominator = ((sum + if sum >= 0 { 1 } else { -1 }) / 2) as i32;
    let mut x = 1_515_870_810i32.wrapping_add(mul_sat(half_denominator, -1_010_580_540));
    let shift = 1i32 << 29;
    for _ in 0..3 {
        let e = shift.wrapping_sub(mul_sat(half_denominator, x));
        x = x.wrapping_add(mul_pow2(mul_sat(x, e), 2));
    }
    mul_pow2(x, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requantize_examples() {
        // 1080243117 * 2^-17 scale from the DS-CNN export.
        assert_eq!(requantize(100_000, 1_080_243_117, -17), 0);
        assert_eq!(requantize(10_000_000, 1_080_243_117, -17), 38);
        // Ties away from zero in the final shift.
        assert_eq!(divide_by_power_of_two(3, 1), 2);
        assert_eq!(divide_by_power_of_two(-3, 1), -2);
        assert_eq!(divide_by_power_of_two(5, 2), 1);
        assert_eq!(requantize(1, 1 << 30, 1), 1);
    }
}
