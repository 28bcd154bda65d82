extern crate std;
use super::super::super::isa::{Dsp, Mve};
use super::super::super::testutil::{clamp8, ref_requantize, Rng};
use super::*;
use std::{vec, vec::Vec};

type MulFn = fn(&MulQuant, &[i8], &[i8], &mut [i8]) -> KernelResult;

const VARIANTS: [(&str, MulFn); 4] = [
    ("active", mul_s8),
    ("scalar", mul_with::<Scalar>),
    ("dsp", mul_with::<Dsp>),
    ("mve", mul_with::<Mve>),
];

/// The reference ([`MulQuant::output`]) against CMSIS-NN's arithmetic in
/// i64 where the output offset cannot wrap and the shift is defined, and every variant (the `asm!`
/// loops' instructions emulated on the host) against the reference, on
/// random inputs: lengths not multiples of 4 or 16, zero points at and past
/// the int8 extremes, shifts from left to far right, negative and extreme
/// multipliers, per-channel and single-value `b`.
#[test]
fn mul_matches_reference() {
    let mut r = Rng(0x3a1);
    for round in 0..3000 {
        let n = r.range(0, 70) as usize;
        let a = r.i8s(n);
        let b_len = match round % 4 {
            0 => 1,
            1 => r.range(1, 9) as usize,
            _ => n,
        };
        let b = r.i8s(b_len.max(usize::from(n == 0)));
        let zp = |r: &mut Rng, k: usize| match k % 4 {
            0 => [-128, 127, -127, 128][r.range(0, 3) as usize],
            1 => r.range(-128, 127) as i32,
            2 => r.range(-40000, 40000) as i32,
            _ => r.range(i32::MIN as i64, i32::MAX as i64) as i32,
        };
        let m = match round % 5 {
            0 => r.range(1 << 30, i32::MAX as i64) as i32,
            1 => r.range(0, i32::MAX as i64) as i32,
            2 => [i32::MIN, i32::MAX, 0, 1 << 30][r.range(0, 3) as usize],
            _ => r.range(i32::MIN as i64, i32::MAX as i64) as i32,
        };
        let q = MulQuant {
            a_zp: zp(&mut r, round / 3),
            b_zp: zp(&mut r, round / 7),
            out: (zp(&mut r, round / 11), m, r.range(-33, 3) as i32),
        };
        let want: Vec<i8> = (0..n).map(|i| q.output(a[i], b[i % b.len()])).collect();
        // (Right shifts past 31 are undefined in C; the reference caps them.)
        if (-(1 << 20)..1 << 20).contains(&q.out.0) && q.out.2 >= -31 {
            let exact: Vec<i8> = (0..n)
                .map(|i| {
                    let p = (a[i] as i32)
                        .wrapping_sub(q.a_zp)
                        .wrapping_mul((b[i % b.len()] as i32).wrapping_sub(q.b_zp));
                    clamp8(ref_requantize(p, m, q.out.2) + q.out.0 as i64, -128, 127)
                })
                .collect();
            assert_eq!(want, exact, "reference: round {round}, {q:?}");
        }
        for (name, f) in VARIANTS {
            let mut got = vec![0x55i8; n];
            f(&q, &a, &b, &mut got).unwrap();
            assert_eq!(got, want, "{name}: round {round}, {q:?}, b {}", b.len());
        }
    }
}

/// The loops take the usual parameters (right shifts, offsets inside int8)
/// and refuse what they cannot match; lengths are checked.
#[test]
fn mul_loops_take_and_refuse() {
    let mut q = MulQuant {
        a_zp: -3,
        b_zp: 128,
        out: (-5, 1 << 30, -10),
    };
    let mut o = [0i8; 5];
    assert!(Dsp::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    assert!(Mve::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    assert!(!Scalar::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    assert!(!Dsp::mul_loop(&q, &[1; 5], &[2; 4], &mut o));
    assert!(!Mve::mul_loop(&q, &[1; 5], &[2; 4], &mut o));
    q.out.0 = 128;
    assert!(!Dsp::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    assert!(Mve::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    q.out.2 = 0;
    assert!(!Mve::mul_loop(&q, &[1; 5], &[2; 5], &mut o));
    for (name, f) in VARIANTS {
        assert_eq!(f(&q, &[1], &[], &mut [0]), Err(BAD), "{name}");
        assert_eq!(f(&q, &[1, 2], &[1], &mut [0]), Err(BAD), "{name}");
        assert_eq!(f(&q, &[], &[], &mut []), Ok(()), "{name}");
    }
}
