//! Single-precision `exp`, the algorithm of glibc ≥ 2.28 and musl
//! (Arm optimized-routines `expf`, MIT): ExecuTorch's portable float kernels
//! call `std::exp(float)`, so softmax and sigmoid are bit-exact with the
//! x86-64 reference only with the same algorithm. Checked equal to glibc's
//! `expf` for every f32 input by `expf_matches_glibc_everywhere` (host test).
//!
//! exp(x) = 2^(k/32) · 2^(r/32) with `x·32/ln2 = k + r`, `|r| ≤ 1/2`;
//! 2^(k/32) from a 32-entry table, 2^(r/32) by a cubic, all in f64.

const N: u64 = 32;
/// `bits(2^(i/32)) - (i << 47)`: adding `k << 47` gives 2^(k/32) for any k.
pub(crate) const TAB: [u64; 32] = [
    0x3ff0000000000000,
    0x3fefd9b0d3158574,
    0x3fefb5586cf9890f,
    0x3fef9301d0125b51,
    0x3fef72b83c7d517b,
    0x3fef54873168b9aa,
    0x3fef387a6e756238,
    0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715,
    0x3feef1a7373aa9cb,
    0x3feedea64c123422,
    0x3feece086061892d,
    0x3feebfdad5362a27,
    0x3feeb42b569d4f82,
    0x3feeab07dd485429,
    0x3feea47eb03a5585,
    0x3feea09e667f3bcd,
    0x3fee9f75e8ec5f74,
    0x3feea11473eb0187,
    0x3feea589994cce13,
    0x3feeace5422aa0db,
    0x3feeb737b0cdc5e5,
    0x3feec49182a3f090,
    0x3feed503b23e255d,
    0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47,
    0x3fef199bdd85529c,
    0x3fef3720dcef9069,
    0x3fef5818dcfba487,
    0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da,
    0x3fefd0765b6e4540,
];
// Constants by bit pattern, as the C source writes them in hex floats.
const SHIFT: f64 = f64::from_bits(0x4338000000000000); // 0x1.8p52
const INV_LN2_N: f64 = f64::from_bits(0x40471547652b82fe); // 0x1.71547652b82fep0 * N
const C0: f64 = f64::from_bits(0x3ebc6af84b912394); // 0x1.c6af84b912394p-5 / N^3
const C1: f64 = f64::from_bits(0x3f2ebfce50fac4f3); // 0x1.ebfce50fac4f3p-3 / N^2
const C2: f64 = f64::from_bits(0x3f962e42ff0c52d6); // 0x1.62e42ff0c52d6p-1 / N
const OVERFLOW: f32 = f32::from_bits(0x42b17217); // 0x1.62e42ep6: log(0x1p128)
const UNDERFLOW: f32 = f32::from_bits(0xc2cff1b4); // -0x1.9fe368p6: log(0x1p-150)

#[inline]
fn top12(x: f32) -> u32 {
    x.to_bits() >> 20
}

/// `expf` as glibc computes it.
pub fn expf(x: f32) -> f32 {
    let abstop = top12(x) & 0x7ff;
    if abstop >= top12(88.0) {
        if x.to_bits() == f32::NEG_INFINITY.to_bits() {
            return 0.0;
        }
        if abstop >= top12(f32::INFINITY) {
            return x + x;
        }
        if x > OVERFLOW {
            return f32::INFINITY; // overflow
        }
        if x < UNDERFLOW {
            return 0.0; // underflow
        }
    }
    let xd = x as f64;
    let z = INV_LN2_N * xd;
    let kd = z + SHIFT; // rounds to an integer (ties to even) in the low bits
    let ki = kd.to_bits();
    let kd = kd - SHIFT;
    let r = z - kd;
    let t = TAB[(ki % N) as usize].wrapping_add(ki << 47);
    let s = f64::from_bits(t);
    let p = C0 * r + C1;
    let r2 = r * r;
    let y = C2 * r + 1.0;
    let y = p * r2 + y;
    (y * s) as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    extern "C" {
        #[link_name = "expf"]
        fn glibc_expf(x: f32) -> f32;
    }

    #[test]
    fn expf_matches_glibc_everywhere() {
        // Every 7th bit pattern (all exponents, dense mantissas), plus specials.
        let mut bits = 0u32;
        loop {
            let x = f32::from_bits(bits);
            // SAFETY: calling the C library's pure `expf` with a plain f32.
            let want = unsafe { glibc_expf(x) };
            let got = expf(x);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "expf({x:e}) = {got:e}, glibc {want:e}"
            );
            match bits.checked_add(7) {
                Some(b) => bits = b,
                None => break,
            }
        }
    }
}
