//! `arm_elementwise_add_s8` (`cortex_m::quantized_add`) for operands of the
//! output's size: each input `((x − zp) << 20)` requantized by its own
//! multiplier and shift, the two summed (wrapping), requantized by the
//! output's, `+ zp`, clamped.
//!
//! An input's requantized value depends on its int8 value alone, so each
//! input's 256 possible values are requantized once per call into a table
//! in the kernel scratch ([`ADD_SCRATCH_BYTES`]); per element there is then
//! one lookup per input and one requantization. The element loop over the
//! tables has an `asm!` form per ISA where it pays ([`AddLoop`]): `dsp.rs`
//! (one element per pass, `SMLAL` requantization), `mve.rs` (four lanes
//! per pass, gathered lookups, vector requantization).

use super::arith::requantize;
use super::isa::{Dsp, Scalar};
use super::requant::Requant;
use super::{Active, BAD};
use crate::error::KernelResult;

mod dsp;
mod mul;
mod mve;

pub use mul::{mul_s8, MulQuant};

/// The element loop over the two tables, where an instruction set has one
/// of its own: `out[i] = clamp(requant(ta[a[i]] + tb[b[i]]) + zp_out)` for
/// every `i` (slices of equal length, checked by the caller), `true` when
/// done; `false` (the default, or parameters the loop does not reproduce
/// exactly) leaves `out` untouched and the portable loop runs.
pub(crate) trait AddLoop {
    #[inline(always)]
    fn add_tables(
        _t: &[[i32; 256]; 2],
        _q: &AddQuant,
        _a: &[i8],
        _b: &[i8],
        _out: &mut [i8],
    ) -> bool {
        false
    }

    /// Both inputs' tables: `t[k][v as u8] = requantize((v − zp_k) << 20,
    /// m_k, s_k)` for every int8 `v` (`k` = 0 for `a`, 1 for `b`).
    #[inline(always)]
    fn fill_tables(t: &mut [[i32; 256]; 2], q: &AddQuant) {
        fill_table(&mut t[0], q.a);
        fill_table(&mut t[1], q.b);
    }
}

/// One input's table of [`AddLoop::fill_tables`], one value at a time.
#[inline(always)]
fn fill_table(t: &mut [i32; 256], p: (i32, i32, i32)) {
    for v in i8::MIN..=i8::MAX {
        t[v as u8 as usize] = AddQuant::input(v, p);
    }
}

impl AddLoop for Scalar {}
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
impl AddLoop for super::isa::X86 {}

/// One add's quantization: per input (zero point, multiplier, shift), the
/// output's, and the activation range.
#[derive(Clone, Copy, Debug)]
pub struct AddQuant {
    pub a: (i32, i32, i32),
    pub b: (i32, i32, i32),
    pub out: (i32, i32, i32),
    pub act_min: i32,
    pub act_max: i32,
}

impl AddQuant {
    /// One input value requantized (`arm_elementwise_add_s8`'s per-input step).
    #[inline(always)]
    fn input(v: i8, (zp, m, s): (i32, i32, i32)) -> i32 {
        requantize((v as i32).wrapping_sub(zp).wrapping_shl(20), m, s)
    }

    /// One output from the two inputs' requantized values.
    #[inline(always)]
    fn output(&self, x: i32, y: i32, r: &Requant) -> i8 {
        let v = r.apply(x.wrapping_add(y)).wrapping_add(self.out.0);
        v.max(self.act_min).min(self.act_max) as i8
    }
}

/// Scratch bytes [`add_s8`] uses for its tables (two of 256 `i32`).
pub const ADD_SCRATCH_BYTES: u32 = 2 * 256 * 4;

/// `out[i] = add(a[i], b[i])` for operands of the output's length; with
/// less than [`ADD_SCRATCH_BYTES`] of scratch each element is computed
/// directly (same integers).
pub fn add_s8(
    q: &AddQuant,
    a: &[i8],
    b: &[i8],
    out: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    add_with::<Active>(q, a, b, out, scratch)
}

pub(crate) fn add_with<M: AddLoop>(
    q: &AddQuant,
    a: &[i8],
    b: &[i8],
    out: &mut [i8],
    scratch: &mut [u64],
) -> KernelResult {
    if a.len() != out.len() || b.len() != out.len() {
        return Err(BAD);
    }
    let r = Requant::new(q.out.1, q.out.2);
    let words = scratch.get_mut(..ADD_SCRATCH_BYTES as usize / 8);
    let Some(tables) = words.and_then(|w| bytemuck::try_cast_slice_mut::<u64, [i32; 256]>(w).ok())
    else {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = q.output(AddQuant::input(x, q.a), AddQuant::input(y, q.b), &r);
        }
        return Ok(());
    };
    let Ok(pair) = <&mut [[i32; 256]; 2]>::try_from(tables) else {
        return Err(BAD);
    };
    M::fill_tables(pair, q);
    if M::add_tables(pair, q, a, b, out) {
        return Ok(());
    }
    let [ta, tb] = &*pair;
    if r.is_fast() {
        // The usual case, without the reference path's branch per element.
        let (zo, lo, hi) = (q.out.0, q.act_min, q.act_max);
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            let s = ta[x as u8 as usize].wrapping_add(tb[y as u8 as usize]);
            *o = r.apply_fast(s).wrapping_add(zo).max(lo).min(hi) as i8;
        }
        return Ok(());
    }
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = q.output(ta[x as u8 as usize], tb[y as u8 as usize], &r);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::isa::Mve;
    use super::super::testutil::{clamp8, ref_requantize, Rng};
    use super::*;
    use std::{vec, vec::Vec};

    type AddFn = fn(&AddQuant, &[i8], &[i8], &mut [i8], &mut [u64]) -> KernelResult;

    /// Helium's input tables (four values a pass where the vector
    /// requantization is exact) against the scalar ones, over zero points,
    /// multipliers and shifts well past what exporters write.
    #[test]
    fn mve_tables_match_scalar_tables() {
        let mut r = Rng(0x7ab1e5);
        for round in 0..2000 {
            let mut p = || {
                (
                    [
                        r.range(-128, 127),
                        r.range(i32::MIN as i64, i32::MAX as i64),
                    ][round % 2] as i32,
                    [
                        r.range(1 << 29, i32::MAX as i64),
                        r.range(i32::MIN as i64, i32::MAX as i64),
                    ][round / 2 % 2] as i32,
                    r.range(-33, 3) as i32,
                )
            };
            let q = AddQuant {
                a: p(),
                b: p(),
                out: (0, 1 << 30, -1),
                act_min: -128,
                act_max: 127,
            };
            let (mut want, mut got) = ([[0i32; 256]; 2], [[1i32; 256]; 2]);
            Scalar::fill_tables(&mut want, &q);
            Mve::fill_tables(&mut got, &q);
            assert_eq!(got, want, "round {round}: {q:?}");
        }
    }

    /// Against CMSIS-NN's per-element arithmetic in i64, with and without
    /// the tables, every variant (the `asm!` loops' instructions emulated
    /// on the host), with multipliers and shifts (left shifts included)
    /// over their range and the activation ranges the loops take or refuse.
    #[test]
    fn add_matches_reference() {
        let mut r = Rng(0xadd);
        for round in 0..400 {
            let n = r.range(0, 300) as usize;
            let (a, b) = (r.i8s(n), r.i8s(n));
            let mut p = || {
                (
                    r.range(-128, 127) as i32,
                    r.range(1 << 29, i32::MAX as i64) as i32,
                    r.range(-31, 2) as i32,
                )
            };
            let (pa, pb, po) = (p(), p(), p());
            let q = AddQuant {
                a: pa,
                b: pb,
                out: po,
                act_min: [-128, -3, po.0, 200][round % 4],
                act_max: [127, 90, 127][round % 3],
            };
            let want: Vec<i8> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| {
                    let f = |v: i8, (zp, m, s): (i32, i32, i32)| {
                        ref_requantize((v as i32 - zp).wrapping_shl(20), m, s) as i32
                    };
                    let s = f(x, pa).wrapping_add(f(y, pb));
                    clamp8(
                        ref_requantize(s, po.1, po.2) + po.0 as i64,
                        q.act_min,
                        q.act_max,
                    )
                })
                .collect();
            for words in [ADD_SCRATCH_BYTES as usize / 8, 3] {
                let mut scratch = vec![0xa5a5_a5a5_a5a5_a5a5u64; words];
                let variants: [(&str, AddFn); 4] = [
                    ("active", add_s8),
                    ("scalar", add_with::<Scalar>),
                    ("dsp", add_with::<Dsp>),
                    ("mve", add_with::<Mve>),
                ];
                for (name, f) in variants {
                    let mut got = vec![0i8; n];
                    f(&q, &a, &b, &mut got, &mut scratch).unwrap();
                    assert_eq!(got, want, "{name}: round {round}, {words} scratch words");
                }
            }
        }
        // The loops take the usual parameters (ResNet-8's adds: right
        // shifts, a ReLU's lower bound) and refuse what they cannot match.
        let t = [[7i32; 256], [-3i32; 256]];
        let mut q = AddQuant {
            a: (0, 1 << 30, 0),
            b: (0, 1 << 30, 0),
            out: (-5, 1 << 30, -10),
            act_min: -5,
            act_max: 127,
        };
        let mut o = [0i8; 5];
        assert!(Dsp::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        assert!(Mve::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        assert!(!Scalar::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        q.act_max = 100;
        assert!(!Dsp::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        assert!(Mve::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        q.out.2 = 0;
        assert!(!Mve::add_tables(&t, &q, &[1; 5], &[2; 5], &mut o));
        q.out.2 = -10;
        assert!(!Mve::add_tables(&t, &q, &[1; 5], &[2; 4], &mut o));
        let mut s = vec![0u64; 256];
        assert_eq!(
            add_s8(
                &AddQuant {
                    a: (0, 1, 0),
                    b: (0, 1, 0),
                    out: (0, 1, 0),
                    act_min: -128,
                    act_max: 127
                },
                &[1],
                &[],
                &mut [0],
                &mut s
            ),
            Err(BAD)
        );
    }
}
