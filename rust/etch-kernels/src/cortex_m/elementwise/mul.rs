//! `arm_elementwise_mul_s8` (`cortex_m::quantized_mul`): `(x − zp_a)·(y −
//! zp_b)` (wrapping, as CMSIS-NN's `(x + offset)·(y + offset)` with the
//! offsets negated), requantized (`arm_nn_requantize`), `+ zp_out`,
//! clamped to int8.
//!
//! The element loop has an `asm!` form per ISA ([`MulLoop`]): `dsp.rs`
//! (one element per pass, `SMLAL` requantization, `SSAT`), `mve.rs` (four
//! lanes per pass, vector requantization); the portable loop otherwise.

use super::super::arith::requantize;
use super::super::isa::Scalar;
use super::super::requant::Requant;
use super::super::{Active, BAD};
use crate::error::KernelResult;

mod dsp;
mod mve;

/// One multiply's quantization: the inputs' zero points and the output's
/// (zero point, multiplier, shift).
#[derive(Clone, Copy, Debug)]
pub struct MulQuant {
    pub a_zp: i32,
    pub b_zp: i32,
    pub out: (i32, i32, i32),
}

impl MulQuant {
    /// The product of one pair of inputs, offsets applied.
    #[inline(always)]
    fn product(&self, x: i8, y: i8) -> i32 {
        (x as i32)
            .wrapping_sub(self.a_zp)
            .wrapping_mul((y as i32).wrapping_sub(self.b_zp))
    }

    /// One output, step by step as CMSIS-NN: the reference every loop
    /// matches.
    #[inline]
    pub fn output(&self, x: i8, y: i8) -> i8 {
        let v = requantize(self.product(x, y), self.out.1, self.out.2).wrapping_add(self.out.0);
        v.clamp(-128, 127) as i8
    }

    /// The same with the inputs swapped (the product commutes).
    #[inline]
    pub fn swapped(&self) -> MulQuant {
        MulQuant {
            a_zp: self.b_zp,
            b_zp: self.a_zp,
            out: self.out,
        }
    }
}

/// The element loop, where an instruction set has one of its own:
/// `out[i] = mul(a[i], b[i])` (slices of equal length, checked by the
/// caller), `true` when done; `false` (the default, or parameters the loop
/// does not reproduce exactly) leaves `out` untouched and the portable
/// loop runs.
pub(crate) trait MulLoop {
    #[inline(always)]
    fn mul_loop(_q: &MulQuant, _a: &[i8], _b: &[i8], _out: &mut [i8]) -> bool {
        false
    }
}

impl MulLoop for Scalar {}
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl MulLoop for super::super::isa::X86 {}

/// `out[i] = mul(a[i], b[i % b.len()])`: operands of the output's size, or
/// `b` repeated (one value per channel of a channels-last output, or one
/// value). Errors unless `a` has the output's length and `b` is non-empty
/// (an empty output takes any `b`).
pub fn mul_s8(q: &MulQuant, a: &[i8], b: &[i8], out: &mut [i8]) -> KernelResult {
    mul_with::<Active>(q, a, b, out)
}

pub(crate) fn mul_with<M: MulLoop>(
    q: &MulQuant,
    a: &[i8],
    b: &[i8],
    out: &mut [i8],
) -> KernelResult {
    if a.len() != out.len() {
        return Err(BAD);
    }
    // Rows of `b`'s length (the last may be shorter); no `chunks`: its
    // zero-size check keeps a panic path.
    let (mut a, mut out) = (a, out);
    while !out.is_empty() {
        let k = b.len().min(out.len());
        let (Some((o, ot)), Some((x, xt)), Some(y)) = (
            core::mem::take(&mut out).split_at_mut_checked(k),
            a.split_at_checked(k),
            b.get(..k),
        ) else {
            return Err(BAD);
        };
        if k == 0 {
            return Err(BAD);
        }
        mul_row::<M>(q, x, y, o);
        (a, out) = (xt, ot);
    }
    Ok(())
}

/// One row of equal lengths (the caller checked them).
#[inline(always)]
fn mul_row<M: MulLoop>(q: &MulQuant, a: &[i8], b: &[i8], out: &mut [i8]) {
    if M::mul_loop(q, a, b, out) {
        return;
    }
    let r = Requant::new(q.out.1, q.out.2);
    if r.is_fast() {
        // The usual case, without the reference's branches per element.
        let zo = q.out.0;
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = r
                .apply_fast(q.product(x, y))
                .wrapping_add(zo)
                .clamp(-128, 127) as i8;
        }
        return;
    }
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = q.output(x, y);
    }
}

#[cfg(test)]
mod tests;
