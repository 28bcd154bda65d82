//! `conv` against one reference ([`ref_conv`]: plain i64 loops), every
//! loop structure with both implementations, and the host transcription of
//! the Thumb-2 `asm!` loop ([`Scalar::dot_2x2_rows`]).

extern crate std;
use std::{vec, vec::Vec};

use super::super::depthwise::DEPTHWISE_SCRATCH_WORDS;
use super::super::isa::{Dsp, Mve, Scalar};
use super::super::testutil::*;
use super::super::Nhwc;
use super::scalar;
use super::*;
use crate::error::KernelError;

/// The implementation the build does not select: every kernel test runs
/// both and requires identical outputs.
#[cfg(feature = "dsp")]
type Other = Scalar;
#[cfg(not(feature = "dsp"))]
type Other = Dsp;

#[test]
fn conv_matches_reference() {
    let mut r = Rng(0x5eed);
    for _ in 0..CASES {
        let (c_in, c_out) = (r.range(1, 5) as usize, r.range(1, 6) as usize);
        let Case { g, q } = random_case(&mut r, c_in, c_out);
        let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
        let x = r.i8s(i.elements().unwrap());
        let w = r.i8s(c_out * kh * kw * c_in);
        let (mult, shift, bias) = quant_params(&mut r, c_out);
        let mut got = vec![0i8; o.elements().unwrap()];
        conv_s8(&g, &q, &x, &w, Some(&bias), &mult, &shift, &mut got).unwrap();
        let mut other = vec![0i8; got.len()];
        conv_with::<Other>(
            &g,
            &q,
            &x,
            &w,
            Some(&bias),
            &mult,
            &shift,
            &mut other,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(got, other, "scalar and dsp conv agree");
        let want = ref_conv(&g, &q, None, &x, &w, &bias, &mult, &shift);
        assert_eq!(got, want, "conv {g:?}");
    }
}

#[test]
fn dsp_and_scalar_dot_products_agree() {
    let mut r = Rng(0xab);
    for n in 0..=37 {
        for _ in 0..20 {
            let (x0, x1, w0, w1) = (r.i8s(n), r.i8s(n), r.i8s(n), r.i8s(n));
            let want = [
                naive(&x0, &w0),
                naive(&x0, &w1),
                naive(&x1, &w0),
                naive(&x1, &w1),
            ];
            assert_eq!(Scalar::dot_2x2(&x0, &x1, &w0, &w1), want);
            assert_eq!(Dsp::dot_2x2(&x0, &x1, &w0, &w1), want);
            assert_eq!(Scalar::dot_1x2(&x0, &w0, &w1), [want[0], want[1]]);
            assert_eq!(Dsp::dot_1x2(&x0, &w0, &w1), [want[0], want[1]]);
        }
    }
}

#[test]
fn mismatched_conv_lengths_are_errors_not_panics() {
    let g = Window {
        input: Nhwc {
            n: 1,
            h: 4,
            w: 4,
            c: 2,
        },
        output: Nhwc {
            n: 1,
            h: 4,
            w: 4,
            c: 3,
        },
        kernel: (3, 3),
        stride: (1, 1),
        padding: (1, 1),
        dilation: (1, 1),
    };
    let q = ConvQuant {
        input_offset: 0,
        output_offset: 0,
        act_min: -128,
        act_max: 127,
    };
    let mut out = vec![0i8; 48];
    let e = conv_s8(&g, &q, &[0; 31], &[0; 54], None, &[1; 3], &[0; 3], &mut out);
    assert_eq!(e, Err(KernelError::InvalidArgument));
    let e = conv_s8(&g, &q, &[0; 32], &[0; 54], None, &[1; 2], &[0; 3], &mut out);
    assert_eq!(e, Err(KernelError::InvalidArgument));
}

/// The DS-CNN pointwise shapes and their neighbours: 1×1 with odd pixel and
/// channel counts, and past the packed path's limit (133 input channels),
/// with extreme zero points and shifts; every loop structure with both
/// implementations, whichever the dispatch would pick.
#[test]
fn dscnn_shapes_match_reference_on_both_paths() {
    let mut r = Rng(0xd5c);
    let shapes = [
        geometry((25, 5, 64), 64, (1, 1), (1, 1), (0, 0)),
        geometry((5, 3, 7), 5, (1, 1), (1, 1), (0, 0)),
        geometry((3, 3, 13), 3, (1, 1), (1, 1), (0, 0)),
        geometry((3, 3, 133), 6, (1, 1), (1, 1), (0, 0)),
        geometry((7, 6, 5), 7, (3, 2), (2, 1), (1, 1)),
    ];
    for g in &shapes {
        for &(zp_in, shift_lo, shift_hi) in
            &[(-128, -31, -20), (127, -12, 0), (0, 0, 3), (-7, -9, -1)]
        {
            let q = ConvQuant {
                input_offset: -zp_in,
                output_offset: [-128, 127, -44][r.range(0, 2) as usize],
                act_min: -128,
                act_max: 127,
            };
            let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
            let x = r.i8s(i.elements().unwrap());
            let w = r.i8s(o.c * kh * kw * i.c);
            let mult: Vec<i32> = (0..o.c)
                .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
                .collect();
            let shift: Vec<i32> = (0..o.c)
                .map(|_| r.range(shift_lo, shift_hi) as i32)
                .collect();
            let bias: Vec<i32> = (0..o.c)
                .map(|_| r.range(-1 << 20, 1 << 20) as i32)
                .collect();
            let want = ref_conv(g, &q, None, &x, &w, &bias, &mult, &shift);
            for dsp in [false, true] {
                let mut got = vec![0i8; o.elements().unwrap()];
                if dsp {
                    conv_with::<Dsp>(
                        g,
                        &q,
                        &x,
                        &w,
                        Some(&bias),
                        &mult,
                        &shift,
                        &mut got,
                        &mut scratch(),
                    )
                } else {
                    conv_with::<Scalar>(
                        g,
                        &q,
                        &x,
                        &w,
                        Some(&bias),
                        &mult,
                        &shift,
                        &mut got,
                        &mut scratch(),
                    )
                }
                .unwrap();
                assert_eq!(got, want, "{g:?} zp {zp_in} dsp {dsp}");
            }
            type K = fn(&ConvOperands<'_>, &mut [i8], &mut [u64]) -> KernelResult;
            let paths: Vec<K> = if g.kernel == (1, 1) {
                vec![
                    |o, d, _| pointwise::<Scalar>(o, d),
                    |o, d, _| pointwise::<Dsp>(o, d),
                    pointwise_packed::<Scalar>,
                    pointwise_packed::<Dsp>,
                    |o, d, _| conv::<Scalar>(o, d),
                    |o, d, _| conv::<Dsp>(o, d),
                ]
            } else {
                vec![|o, d, _| conv::<Scalar>(o, d), |o, d, _| conv::<Dsp>(o, d)]
            };
            for (k, f) in paths.iter().enumerate() {
                let mut got = vec![0i8; o.elements().unwrap()];
                let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &shift);
                let mut scratch = scratch();
                f(&ops, &mut got, &mut scratch).unwrap();
                assert_eq!(got, want, "{g:?} path {k} zp {zp_in}");
                // A word short of the declared scratch: an error before any
                // output is written, or (paths that need less) the same result.
                let short = CONV_SCRATCH_WORDS.min(DEPTHWISE_SCRATCH_WORDS) - 1;
                got.fill(0);
                match f(&ops, &mut got, &mut scratch[..short]) {
                    Ok(()) => assert_eq!(got, want, "{g:?} path {k} short scratch"),
                    Err(_) => assert!(got.iter().all(|&v| v == 0), "{g:?} path {k} wrote"),
                }
            }
        }
    }
}

/// `Scalar::dot_2x2_rows`'s `asm!` after its Rust prologue (odd first
/// input): `pairs` passes of two inputs, each `ldrsb xa, [xp], #1;
/// ldrsb xb, [xp, s]` with `s = n − 1` (so `xb` is `n` past `xa`), the same
/// for the weights, four `mla`.
fn dot_2x2_rows_as_asm(xs: &[i8], ws: &[i8], n: usize) -> [i32; 4] {
    if n == 0 || xs.len() < 2 * n || ws.len() < 2 * n {
        return [0; 4];
    }
    let m = |acc: i32, x: i8, w: i8| acc.wrapping_add(x as i32 * w as i32);
    let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
    let mut start = 0;
    if n % 2 == 1 {
        (a, b, c, d) = (
            m(0, xs[0], ws[0]),
            m(0, xs[0], ws[n]),
            m(0, xs[n], ws[0]),
            m(0, xs[n], ws[n]),
        );
        start = 1;
    }
    let (mut xp, mut wp, s) = (start, start, n - 1);
    for _ in 0..(n - start) / 2 {
        for _ in 0..2 {
            let xa = *xs.get(xp).expect("ldrsb xa");
            xp += 1;
            let xb = *xs.get(xp + s).expect("ldrsb xb");
            let wa = *ws.get(wp).expect("ldrsb wa");
            wp += 1;
            let wb = *ws.get(wp + s).expect("ldrsb wb");
            (a, b, c, d) = (m(a, xa, wa), m(b, xa, wb), m(c, xb, wa), m(d, xb, wb));
        }
    }
    [a, b, c, d]
}

#[test]
fn thumb2_dot_2x2_rows_equivalent_matches_portable() {
    let mut r = XorShift(0x7777_0001);
    let cases = if cfg!(miri) { 30 } else { 3000 };
    for k in 0..cases {
        let n = if k < 8 { k } else { r.below(70) };
        let (ex, ew) = (r.below(3), r.below(3));
        let (xs, ws) = (r.i8s(2 * n + ex), r.i8s(2 * n + ew));
        let want = Scalar::dot_2x2(&xs[..n], &xs[n..2 * n], &ws[..n], &ws[n..2 * n]);
        assert_eq!(dot_2x2_rows_as_asm(&xs, &ws, n), want, "n = {n}");
        assert_eq!(Scalar::dot_2x2_rows(&xs, &ws, n), want, "n = {n}");
    }
}

/// The Helium pointwise kernel (host: its instructions emulated, see
/// `cortex_m::mve`) against the reference on the shapes it takes: input
/// channels in multiples of 16, output channels in multiples of 4, right
/// shifts 1 to 31, multipliers of either sign, edge zero points; and the
/// shapes it refuses fall back to the generic loops with the same result.
#[test]
fn mve_pointwise_matches_reference() {
    let mut r = Rng(0x4e55);
    let mut narrow_taken = 0;
    for case in 0..if cfg!(miri) { 4 } else { 90 } {
        // Two in three: multiples of 16 (the packed rows); else 1, 2, 4 or
        // 8 (several pixels a row).
        let cin = if case % 3 != 2 {
            // Up to 256 (VWW's last layers: the packed rows in the scratch).
            16 * r.range(1, 16) as usize
        } else {
            1 << r.range(0, 3)
        };
        let cout = 4 * r.range(1, 6) as usize;
        let g = geometry(
            (r.range(1, 7) as usize, r.range(1, 6) as usize, cin),
            cout,
            (1, 1),
            (1, 1),
            (0, 0),
        );
        let refuse = case % 5 == 4;
        let l = Layer::random(&mut r, g, None, refuse.then_some(cout / 2));
        let mut got = vec![0i8; l.want.len()];
        let b = Some(&l.bias[..]);
        conv_with::<Mve>(
            &g,
            &l.q,
            &l.x,
            &l.w,
            b,
            &l.mult,
            &l.shift,
            &mut got,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(got, l.want, "{g:?} case {case}");
        let took = l.direct(|ops, out| Mve::pointwise_layer(ops, out, &mut scratch()));
        if cin < 16 {
            // The narrow-row loop on its own: taken when the pixels fill
            // whole rows (else the per-pixel passes above ran).
            let whole_rows = (g.output.h * g.output.w).is_multiple_of(16 / cin);
            match l.direct(super::mve::pointwise_narrow) {
                Some(narrow) => {
                    assert!(whole_rows && !refuse, "{g:?}: taken");
                    assert_eq!(narrow, l.want, "{g:?} case {case} (narrow rows)");
                    narrow_taken += 1;
                }
                None => assert!(!whole_rows || refuse, "{g:?}: refused"),
            }
        }
        if refuse {
            assert!(took.is_none(), "refused channel: generic loops");
        } else {
            let direct = took.expect("the vector loop takes this shape");
            assert_eq!(direct, l.want, "{g:?} case {case} (vector loop)");
        }
    }
    assert!(
        cfg!(miri) || narrow_taken >= 4,
        "narrow rows ran {narrow_taken} times"
    );
}

/// The Thumb-2 weight-pair path ([`scalar::dot_1x4_pairs`]; host: the same
/// 64-bit sums in Rust) and the Armv6-M word path
/// ([`scalar::dot_1x4_words`]) against plain dot products: random rows, and the
/// extremes that bound [`scalar::PAIR_RUN`] (every product `(−128)·(−128)`,
/// or `(−128)·127`, over runs longer than one).
#[test]
fn weight_pairs_match_plain_dot_products() {
    let mut r = XorShift(0x9a1e_5eed);
    let check = |x: &[i8], rows: [&[i8]; 4], init: [i32; 4]| {
        let n = x.len() / 4 * 4;
        let mut packed = vec![0xdead_beefu32; 2 * n];
        scalar::pack4_pairs(rows, &mut packed);
        let want = core::array::from_fn(|l| init[l].wrapping_add(naive(&x[..n], &rows[l][..n])));
        assert_eq!(scalar::dot_1x4_pairs(x, &packed, init), want, "n = {n}");
        // The same row three times over, through the row loop.
        let xs3: Vec<i8> = x[..n]
            .iter()
            .chain(&x[..n])
            .chain(&x[..n])
            .copied()
            .collect();
        let mut accs = [[0x5a5a; 4]; 4];
        scalar::dot_1x4_pairs_rows(&xs3, n, &packed, init, &mut accs);
        let full = if n == 0 { 0 } else { 3 };
        assert!(accs[..full].iter().all(|a| *a == want), "n = {n}: {accs:?}");
        assert!(
            accs[full..].iter().all(|a| *a == [0x5a5a; 4]),
            "n = {n}: {accs:?}"
        );
        // Armv6-M's sign-extended words (twice the room per input).
        let mut words = vec![0xdead_beefu32; 4 * n];
        scalar::pack4_words(rows, &mut words);
        assert_eq!(scalar::dot_1x4_words(x, &words, init), want, "n = {n}");
        let mut accs = [[0x5a5a; 4]; 4];
        scalar::dot_1x4_words_rows(&xs3, n, &words, init, &mut accs);
        assert!(accs[..full].iter().all(|a| *a == want), "n = {n}: {accs:?}");
        assert!(
            accs[full..].iter().all(|a| *a == [0x5a5a; 4]),
            "n = {n}: {accs:?}"
        );
    };
    for k in 0..400 {
        let n = if k < 20 { k } else { r.below(600) };
        let x = r.i8s(n);
        let rows: Vec<Vec<i8>> = (0..4).map(|_| r.i8s(n)).collect();
        let init = [r.next() as i32, 0, -1, i32::MIN];
        check(&x, [&rows[0], &rows[1], &rows[2], &rows[3]], init);
    }
    for n in [4, 252, 256, 504, 508, 1000] {
        for (xv, wv) in [(-128i8, -128i8), (-128, 127), (127, -128), (127, 127)] {
            let (x, w) = (vec![xv; n], vec![wv; n]);
            let o = vec![-wv.max(-127); n];
            check(&x, [&w, &o, &w, &w], [0; 4]);
            check(&x, [&o, &w, &w, &o], [7; 4]);
        }
    }
}

/// A convolution entry point with caller-owned scratch ([`conv_with`]).
type ConvFn = fn(
    &Window,
    &ConvQuant,
    &[i8],
    &[i8],
    Option<&[i32]>,
    &[i32],
    &[i32],
    &mut [i8],
    &mut [u64],
) -> KernelResult;

/// The general convolution at ResNet-8's shapes (3×3 and strided 1×1, 3 to 64
/// input channels, and MobileNet's pointwise layers Helium's packed path refuses;
/// 4 to 64 output channels, pad 1, stride 1 and 2): every
/// implementation (Helium's gathered-window passes, the 2×2 blocks of the
/// others) against [`ref_conv`], with requantizations inside and outside
/// what the vector loop admits, and scratch as an earlier call left it.
#[test]
fn general_conv_matches_reference_at_resnet_shapes() {
    let mut r = Rng(0x1c0e);
    for (cin, cout, k, s, hw) in [
        (3, 16, 3, 1, 8),
        (16, 16, 3, 1, 6),
        (16, 32, 3, 2, 7),
        (16, 32, 1, 2, 6),
        (32, 64, 3, 1, 4),
        (64, 64, 3, 1, 3),
        (5, 4, 3, 2, 5),
        (7, 6, 2, 1, 4),
        // Pointwise layers Helium's packed path refuses (cin not a multiple
        // of 16, or over 128): the per-pixel row passes.
        (8, 16, 1, 1, 5),
        (24, 8, 1, 1, 4),
        (256, 8, 1, 1, 2),
    ] {
        for round in 0..4 {
            let p = if k == 3 { 1 } else { 0 };
            let g = geometry((hw, hw + 1, cin), cout, (k, k), (s, s), (p, p));
            let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][round];
            let q = ConvQuant {
                input_offset: -zp_in,
                output_offset: r.range(-128, 127) as i32,
                act_min: [-128, -20][round % 2],
                act_max: 127,
            };
            let x = r.i8s(g.input.elements().unwrap());
            let w = r.i8s(cout * k * k * cin);
            let (mult, mut shift, bias) = quant_params(&mut r, cout);
            if round == 3 {
                // A left shift: outside the vector loop's admitted range.
                shift[cout - 1] = 1;
            }
            let want = ref_conv(&g, &q, None, &x, &w, &bias, &mult, &shift);
            let run = |f: ConvFn| {
                let mut got = vec![0i8; want.len()];
                f(
                    &g,
                    &q,
                    &x,
                    &w,
                    Some(&bias),
                    &mult,
                    &shift,
                    &mut got,
                    &mut scratch(),
                )
                .unwrap();
                got
            };
            assert_eq!(
                run(conv_with::<Mve>),
                want,
                "mve {cin}->{cout} k{k} s{s} round {round}"
            );
            assert_eq!(
                run(conv_with::<Dsp>),
                want,
                "dsp {cin}->{cout} k{k} s{s} round {round}"
            );
            assert_eq!(
                run(conv_with::<Scalar>),
                want,
                "scalar {cin}->{cout} k{k} s{s} round {round}"
            );
        }
    }
}

/// Helium's block kernel for small windows (host: its instructions
/// emulated) against the reference: VWW's and ResNet-8's first layers,
/// strided 1×1 shortcuts and random small windows (stride, padding,
/// dilation, batch); what it refuses leaves the output untouched.
#[test]
fn mve_conv_block_matches_reference() {
    let mut r = Rng(0xb10c);
    let mut shapes = vec![
        geometry((96, 96, 3), 8, (3, 3), (2, 2), (1, 1)),
        geometry((32, 32, 3), 16, (3, 3), (1, 1), (1, 1)),
        geometry((8, 8, 16), 32, (1, 1), (2, 2), (0, 0)),
        // K = 144: weights repacked per block (ResNet-8's 16-channel 3x3).
        geometry((8, 9, 16), 16, (3, 3), (1, 1), (1, 1)),
        geometry((9, 7, 16), 32, (3, 3), (2, 2), (1, 1)),
    ];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let k = (r.range(1, 4) as usize, r.range(1, 4) as usize);
        let cin = r.range(1, 8) as usize;
        let s = (r.range(1, 2) as usize, r.range(1, 2) as usize);
        let p = random_padding(&mut r, k);
        let cout = 4 * r.range(1, 5) as usize;
        let g = geometry(
            (
                r.range(k.0 as i64, 12) as usize,
                r.range(k.1 as i64, 12) as usize,
                cin,
            ),
            cout,
            k,
            s,
            p,
        );
        if let Some(g) = dilate_or_batch(&mut r, g, 1) {
            shapes.push(g);
        }
    }
    let mut taken = 0;
    for (case, g) in shapes.iter().enumerate() {
        let refuse = case % 7 == 6;
        let l = Layer::random(&mut r, *g, None, refuse.then_some(g.output.c - 1));
        let mut got = vec![0i8; l.want.len()];
        let b = Some(&l.bias[..]);
        conv_with::<Mve>(
            g,
            &l.q,
            &l.x,
            &l.w,
            b,
            &l.mult,
            &l.shift,
            &mut got,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(got, l.want, "{g:?} case {case}");
        match l.direct(|ops, out| super::im2col_mve::conv_block(ops, out, &mut scratch())) {
            Some(direct) => {
                assert!(!refuse, "{g:?}: a refused requantization");
                assert_eq!(direct, l.want, "{g:?} case {case} (block kernel)");
                taken += 1;
            }
            None => {
                let k = g.kernel.0 * g.kernel.1 * g.input.c;
                assert!(refuse || (k > 64 && k % 16 != 0), "{g:?}: refused");
            }
        }
    }
    assert!(taken >= 20, "the block kernel ran {taken} shapes");
}

/// The DSP gathered-window kernel with input channels not a multiple of 4
/// (`K` padded to a multiple of 4, weight rows copied with zero padding):
/// VWW's and ResNet-8's RGB first layers and random windows (stride,
/// padding, dilation, batch), each taken (not refused) and equal to the
/// reference, through both its loops (fused requantization and not).
#[test]
fn dsp_padded_windows_match_reference() {
    let mut r = Rng(0x9ad);
    let mut shapes = vec![
        geometry((96, 96, 3), 8, (3, 3), (2, 2), (1, 1)),
        geometry((32, 32, 3), 16, (3, 3), (1, 1), (1, 1)),
        geometry((5, 6, 1), 3, (1, 1), (1, 1), (0, 0)),
    ];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let k = (r.range(1, 4) as usize, r.range(1, 4) as usize);
        let cin = [1, 2, 3, 5, 6, 7, 9, 13][r.range(0, 7) as usize];
        let s = (r.range(1, 2) as usize, r.range(1, 2) as usize);
        let p = random_padding(&mut r, k);
        let g = geometry(
            (
                r.range(k.0 as i64, 12) as usize,
                r.range(k.1 as i64, 12) as usize,
                cin,
            ),
            r.range(1, 9) as usize,
            k,
            s,
            p,
        );
        if let Some(g) = dilate_or_batch(&mut r, g, 1) {
            shapes.push(g);
        }
    }
    let (mut fused, mut other) = (0, 0);
    for (case, g) in shapes.iter().enumerate() {
        let l = Layer::random(&mut r, *g, None, None);
        let got = l.direct(|ops, out| super::im2col_dsp::conv_layer(ops, out, &mut scratch()));
        assert_eq!(got.as_ref(), Some(&l.want), "{g:?} case {case}");
        let fast =
            l.mult.iter().all(|&m| m >= 0) && l.shift.iter().all(|&s| (-23..=-2).contains(&s));
        if fast {
            fused += 1;
        } else {
            other += 1;
        }
    }
    assert!(fused >= 5 && other >= 5, "fused {fused}, other {other}");
}
