//! `depthwise` against one reference ([`ref_conv`]: plain i64 loops), every
//! loop structure with both implementations, and the host transcription of
//! the Thumb-2 `asm!` loop ([`Scalar::dw_row`]).

extern crate std;
use std::{vec, vec::Vec};

use super::super::conv::{CONV_SCRATCH_WORDS, PB};
use super::super::isa::{Dsp, Mve, Scalar};
use super::super::testutil::*;
use super::*;

/// The implementation the build does not select: every kernel test runs
/// both and requires identical outputs.
#[cfg(feature = "dsp")]
type Other = Scalar;
#[cfg(not(feature = "dsp"))]
type Other = Dsp;

#[test]
fn depthwise_matches_reference() {
    let mut r = Rng(0xd0d0);
    for _ in 0..CASES {
        let c_in = r.range(1, 4) as usize;
        let ch_mult = r.range(1, 3) as usize;
        let c_out = c_in * ch_mult;
        let Case { g, q } = random_case(&mut r, c_in, c_out);
        let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
        let x = r.i8s(i.elements().unwrap());
        let w = r.i8s(kh * kw * c_out);
        let (mult, shift, bias) = quant_params(&mut r, c_out);
        let mut got = vec![0i8; o.elements().unwrap()];
        depthwise_conv_s8(
            &g,
            &q,
            ch_mult,
            &x,
            &w,
            Some(&bias),
            &mult,
            &shift,
            &mut got,
        )
        .unwrap();
        let mut other = vec![0i8; got.len()];
        depthwise_with::<Other>(
            &g,
            &q,
            ch_mult,
            &x,
            &w,
            Some(&bias),
            &mult,
            &shift,
            &mut other,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(got, other, "scalar and dsp depthwise agree");
        let want = ref_conv(&g, &q, Some(ch_mult), &x, &w, &bias, &mult, &shift);
        assert_eq!(got, want, "depthwise {g:?} mult {ch_mult}");
    }
}

/// Depth multipliers 2 to 5 with several input channels (output channel
/// `ic·ch_mult + m`), edge zero points and shifts: [`depthwise_simple`]
/// directly, and every implementation's whole kernel.
#[test]
fn multiplier_matches_reference() {
    let mut r = Rng(0x3a17);
    for _ in 0..CASES {
        let c_in = r.range(2, 5) as usize;
        let ch_mult = r.range(2, 5) as usize;
        let c_out = c_in * ch_mult;
        let Case { g, q } = random_case(&mut r, c_in, c_out);
        let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
        let x = r.i8s(i.elements().unwrap());
        let w = r.i8s(kh * kw * c_out);
        let (mult, mut shift, bias) = quant_params(&mut r, c_out);
        if r.range(0, 3) == 0 {
            for s in &mut shift {
                *s = [-31, -1, 0, 1][r.range(0, 3) as usize];
            }
        }
        let want = ref_conv(&g, &q, Some(ch_mult), &x, &w, &bias, &mult, &shift);
        let ops = ConvOperands::new(g, q, &x, &w, Some(&bias), &mult, &shift);
        let mut got = vec![0i8; o.elements().unwrap()];
        depthwise_simple(&ops, ch_mult, &mut got).unwrap();
        assert_eq!(got, want, "simple {g:?} mult {ch_mult}");
        type K = fn(
            &Window,
            &ConvQuant,
            usize,
            &[i8],
            &[i8],
            Option<&[i32]>,
            &[i32],
            &[i32],
            &mut [i8],
            &mut [u64],
        ) -> KernelResult;
        let kernels: [K; 3] = [
            depthwise_with::<Scalar>,
            depthwise_with::<Dsp>,
            depthwise_with::<Active>,
        ];
        for k in kernels {
            let mut got = vec![0i8; o.elements().unwrap()];
            let b = Some(&bias[..]);
            k(
                &g,
                &q,
                ch_mult,
                &x,
                &w,
                b,
                &mult,
                &shift,
                &mut got,
                &mut scratch(),
            )
            .unwrap();
            assert_eq!(got, want, "{g:?} mult {ch_mult}");
        }
    }
}

#[test]
fn dsp_and_scalar_mul4_agree() {
    let mut r = Rng(0xcd);
    for _ in 0..2000 {
        let acc: Vec<i32> = (0..8).map(|_| r.next() as i32).collect();
        let (x, w) = (r.i8s(4), r.i8s(4));
        let (x4, w4): (&[i8; 4], &[i8; 4]) = (x[..].try_into().unwrap(), w[..].try_into().unwrap());
        let a4: [i32; 4] = acc[..4].try_into().unwrap();
        let want: Vec<i32> = (0..4)
            .map(|j| a4[j].wrapping_add(x[j] as i32 * w[j] as i32))
            .collect();
        assert_eq!(Scalar::mul4(a4, x4, w4).to_vec(), want);
        assert_eq!(Dsp::mul4(a4, x4, w4).to_vec(), want);
    }
}

/// The DS-CNN depthwise shapes and their neighbours: 3×3 with channel
/// tails, the first layer (one input channel, 10×4 kernel, stride 2,
/// padding (5, 1), multiplier 64), and past the packed path's limit (7×7
/// taps), with extreme zero points and shifts; every loop structure with
/// both implementations, whichever the dispatch would pick.
#[test]
fn dscnn_shapes_match_reference_on_both_paths() {
    let mut r = Rng(0xd5c);
    let shapes = [
        (geometry((25, 5, 64), 64, (3, 3), (1, 1), (1, 1)), 1),
        (geometry((6, 5, 9), 9, (3, 3), (2, 1), (1, 1)), 1),
        (geometry((49, 10, 1), 64, (10, 4), (2, 2), (5, 1)), 64),
        (geometry((9, 7, 1), 6, (3, 4), (2, 1), (1, 2)), 6),
        (geometry((8, 8, 6), 6, (7, 7), (1, 1), (3, 3)), 1),
    ];
    for (g, ch_mult) in &shapes {
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
            let w = r.i8s(kh * kw * o.c);
            let mult: Vec<i32> = (0..o.c)
                .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
                .collect();
            let shift: Vec<i32> = (0..o.c)
                .map(|_| r.range(shift_lo, shift_hi) as i32)
                .collect();
            let bias: Vec<i32> = (0..o.c)
                .map(|_| r.range(-1 << 20, 1 << 20) as i32)
                .collect();
            let want = ref_conv(g, &q, Some(*ch_mult), &x, &w, &bias, &mult, &shift);
            for dsp in [false, true] {
                let mut got = vec![0i8; o.elements().unwrap()];
                let (b, m) = (Some(&bias[..]), *ch_mult);
                if dsp {
                    depthwise_with::<Dsp>(
                        g,
                        &q,
                        m,
                        &x,
                        &w,
                        b,
                        &mult,
                        &shift,
                        &mut got,
                        &mut scratch(),
                    )
                } else {
                    depthwise_with::<Scalar>(
                        g,
                        &q,
                        m,
                        &x,
                        &w,
                        b,
                        &mult,
                        &shift,
                        &mut got,
                        &mut scratch(),
                    )
                }
                .unwrap();
                assert_eq!(got, want, "{g:?} mult {ch_mult} zp {zp_in} dsp {dsp}");
            }
            type K = fn(&ConvOperands<'_>, &mut [i8], &mut [u64]) -> KernelResult;
            let paths: Vec<K> = if *ch_mult == 1 {
                vec![
                    depthwise_mult1::<Scalar>,
                    depthwise_mult1::<Dsp>,
                    depthwise_packed::<Scalar>,
                    depthwise_packed::<Dsp>,
                ]
            } else {
                vec![
                    depthwise_single_gemm::<Scalar>,
                    depthwise_single_gemm::<Dsp>,
                ]
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

/// `Scalar::dw_row`'s `asm!`: per block `b`, per tap (`subs n; bne`):
/// `ldr p, [tp], #4; add p, p, j(=4b)`, `ldr w, [wp], #4`, four `ldrsb` at
/// `p + 0..3`, `sxth`/`asrs #16` lanes, `mla`. `wp` carries over blocks.
fn dw_row_as_asm(taps: &Taps<'_>, w: &[u32], init: &[i32], out: &mut [i32], blocks: usize) {
    let n = dw_row_bounds(taps, w, init, out, blocks).expect("bounds the asm relies on");
    let runs: Vec<&[i8]> = taps.runs().collect();
    let mut wp = 0usize;
    for b in 0..blocks {
        let [mut a0, mut a1, mut a2, mut a3] = [
            init[4 * b],
            init[4 * b + 1],
            init[4 * b + 2],
            init[4 * b + 3],
        ];
        let (mut tp, mut left) = (0usize, n);
        loop {
            let run = runs[tp];
            tp += 1;
            let p = 4 * b;
            let ld = |k: usize| *run.get(p + k).expect("ldrsb in bounds") as i32;
            let mut wd = *w.get(wp).expect("ldr w in bounds");
            wp += 1;
            a0 = a0.wrapping_add(ld(0).wrapping_mul(wd as u16 as i16 as i32));
            a2 = a2.wrapping_add(ld(2).wrapping_mul((wd as i32) >> 16));
            wd = *w.get(wp).expect("ldr w in bounds");
            wp += 1;
            a1 = a1.wrapping_add(ld(1).wrapping_mul(wd as u16 as i16 as i32));
            a3 = a3.wrapping_add(ld(3).wrapping_mul((wd as i32) >> 16));
            left -= 1;
            if left == 0 {
                break;
            }
        }
        out[4 * b..4 * b + 4].copy_from_slice(&[a0, a1, a2, a3]);
    }
}

#[test]
fn thumb2_dw_row_equivalent_matches_portable() {
    let mut r = XorShift(0xa5a5_1234);
    let cases = if cfg!(miri) { 20 } else { 2000 };
    for _ in 0..cases {
        let blocks = 1 + r.below(4);
        let len = 4 * blocks + r.below(4);
        let ntaps = 1 + r.below(9);
        let data: Vec<Vec<i8>> = (0..ntaps)
            .map(|_| {
                let extra = r.below(3);
                r.i8s(len + extra)
            })
            .collect();
        let mut taps = Taps::new(len);
        for run in &data {
            taps.push(run).unwrap();
        }
        let w: Vec<u32> = (0..2 * ntaps * blocks).map(|_| r.next() as u32).collect();
        let init: Vec<i32> = (0..4 * blocks).map(|_| r.next() as i32).collect();
        let (mut got, mut want) = (vec![0; 4 * blocks], vec![0; 4 * blocks]);
        dw_row_as_asm(&taps, &w, &init, &mut got, blocks);
        // The portable implementation (off the Arm target: no asm).
        Scalar::dw_row(&taps, &w, &init, &mut want, blocks).unwrap();
        assert_eq!(got, want, "{ntaps} taps, {blocks} blocks, runs of {len}");
    }
    // The bounds check refuses what would read past a run or the weights.
    let run = [0i8; 7];
    let mut taps = Taps::new(7);
    taps.push(&run).unwrap();
    let (w, init, out) = ([0u32; 4], [0i32; 8], [0i32; 8]);
    assert!(dw_row_bounds(&taps, &w, &init, &out, 2).is_err()); // 8 > 7 bytes
    assert!(dw_row_bounds(&taps, &w[..1], &init, &out, 1).is_err());
    assert!(dw_row_bounds(&Taps::new(8), &w, &init, &out, 1).is_err()); // no taps
    assert!(dw_row_bounds(&taps, &w, &init, &out, 1).is_ok());
}

/// `Taps::push` keeps each run's start: `runs()` gives `len` values from
/// it (the unsafe reconstruction), the pointer table ends in null, and a
/// table holds at most `DW_MAX_TAPS` runs.
#[test]
fn taps_push_keeps_len_values_of_each_run() {
    let data: Vec<i8> = (0..40).collect();
    let mut taps = Taps::new(3);
    taps.push(&data[5..9]).unwrap();
    taps.push(&data[0..3]).unwrap();
    assert!(taps.push(&data[0..2]).is_err(), "run shorter than len");
    assert_eq!(taps.runs().collect::<Vec<_>>(), [&data[5..8], &data[0..3]]);
    assert_eq!(taps.ptrs(), [data[5..].as_ptr(), data.as_ptr()]);
    assert!(taps.ptrs.get(2).is_some_and(|p| p.is_null()));
    for k in 2..DW_MAX_TAPS {
        taps.push(&data[k..k + 3]).unwrap();
    }
    assert_eq!(taps.count(), DW_MAX_TAPS);
    assert!(taps.push(&data[0..3]).is_err(), "full table");
    assert!(taps.ptrs.get(DW_MAX_TAPS).is_some_and(|p| p.is_null()));
    let last = taps.runs().last().unwrap();
    assert_eq!(last, &data[DW_MAX_TAPS - 1..DW_MAX_TAPS + 2]);
}

/// `Taps::fill`: inside taps are the input runs at base + offset (wrapping
/// base: a window over the top-left corner), the others the zero-point run,
/// the pointer table ends in null, and a run past the input is an error.
#[test]
fn taps_fill_picks_input_runs_and_padding() {
    // A 3×3 input of 2 channels; window of a 2×2 kernel at (-1, 0).
    let input: Vec<i8> = (0..18).collect();
    let zp = [-7i8; 2];
    let offs = [0usize, 2, 6, 8]; // (0,0), (0,1), (1,0), (1,1)
    let base = 0usize.wrapping_sub(6); // row -1, column 0
    let mut taps = Taps::new(2);
    taps.fill(&input, &zp, base, &offs, 0b1100).unwrap();
    let runs: Vec<&[i8]> = taps.runs().collect();
    assert_eq!(runs, [&zp[..], &zp[..], &input[0..2], &input[2..4]]);
    assert_eq!(taps.count(), 4);
    assert_eq!(
        taps.ptrs(),
        [
            zp.as_ptr(),
            zp.as_ptr(),
            input.as_ptr(),
            input[2..].as_ptr()
        ]
    );
    assert!(taps.ptrs.get(4).is_some_and(|p| p.is_null()));
    // Fewer taps next time: the table ends after them.
    taps.fill(&input, &zp, 14, &offs[..1], 1).unwrap();
    assert_eq!(taps.runs().collect::<Vec<_>>(), [&input[14..16]]);
    assert!(taps.ptrs.get(1).is_some_and(|p| p.is_null()));
    // The last run would end past the input; a short zero-point run.
    assert!(taps.fill(&input, &zp, 10, &offs, 0b1111).is_err());
    assert!(Taps::new(3).fill(&input, &zp, 0, &offs, 0).is_err());
}

/// The `unsafe` pointer reads of `depthwise_mult1` (interior pixels read
/// four channels through `at4` without bounds checks) are reached only with
/// more taps than the packed depthwise path takes (> 36): a 7×7 kernel here,
/// against a plain reference, interior and border pixels, dilation 1 and 2.
#[test]
fn depthwise_mult1_pointer_path_matches_reference() {
    use super::super::Nhwc;
    let mut r = XorShift(0x0d0d_7777);
    let rounds = if cfg!(miri) { 2 } else { 20 };
    for round in 0..rounds {
        let (h, w, c, k, dil) = (
            9 + r.below(3),
            8 + r.below(3),
            4 * (1 + r.below(2)),
            7,
            1 + round % 2,
        );
        let pad = 3 * dil;
        let g = Window {
            input: Nhwc { n: 1, h, w, c },
            output: Nhwc { n: 1, h, w, c },
            kernel: (k, k),
            stride: (1, 1),
            padding: (pad, pad),
            dilation: (dil, dil),
        };
        let q = ConvQuant {
            input_offset: 5,
            output_offset: -3,
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(h * w * c);
        let f = r.i8s(k * k * c);
        let (mult, shift) = (vec![1 << 30; c], vec![-6; c]);
        let mut out = vec![0i8; h * w * c];
        depthwise_conv_s8(&g, &q, 1, &x, &f, None, &mult, &shift, &mut out).unwrap();
        for oy in 0..h {
            for ox in 0..w {
                for ch in 0..c {
                    let mut acc = 0i32;
                    for ky in 0..k {
                        for kx in 0..k {
                            let (y, xx) = (
                                (oy + ky * dil) as isize - pad as isize,
                                (ox + kx * dil) as isize - pad as isize,
                            );
                            if y < 0 || xx < 0 || y >= h as isize || xx >= w as isize {
                                continue;
                            }
                            let xv =
                                x[(y as usize * w + xx as usize) * c + ch] as i32 + q.input_offset;
                            acc += xv * f[(ky * k + kx) * c + ch] as i32;
                        }
                    }
                    let want = q.finish(acc, mult[ch], shift[ch]);
                    assert_eq!(
                        out[(oy * w + ox) * c + ch],
                        want,
                        "({oy},{ox},{ch}) dil {dil}"
                    );
                }
            }
        }
    }
}

/// The Helium one-input-channel kernel (host: its instructions emulated,
/// see `cortex_m::mve`) against the reference: DS-CNN's first layer and
/// random windows, output channels in fours, right shifts 1 to 31; a
/// refused channel falls back to the generic loops with the same result.
#[test]
fn mve_single_channel_matches_reference() {
    let mut r = Rng(0x1c55);
    let mut shapes = vec![geometry((49, 10, 1), 64, (10, 4), (2, 2), (5, 1))];
    for _ in 0..if cfg!(miri) { 2 } else { 30 } {
        let k = (r.range(1, 6) as usize, r.range(1, 6) as usize);
        let p = random_padding(&mut r, k);
        shapes.push(geometry(
            (
                r.range(k.0 as i64, 12) as usize,
                r.range(k.1 as i64, 9) as usize,
                1,
            ),
            4 * r.range(1, 5) as usize,
            k,
            (r.range(1, 2) as usize, r.range(1, 2) as usize),
            p,
        ));
    }
    for (case, g) in shapes.iter().enumerate() {
        let refuse = case % 7 == 6;
        let l = Layer::random(&mut r, *g, Some(g.output.c), refuse.then_some(1));
        let mut got = vec![0i8; l.want.len()];
        let (o, b) = (g.output, Some(&l.bias[..]));
        depthwise_with::<Mve>(
            g,
            &l.q,
            o.c,
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
        match l.direct(|ops, out| Mve::single_channel_layer(ops, out, &mut scratch())) {
            None => assert!(refuse, "{g:?}: the vector loop takes this shape"),
            Some(direct) => {
                assert!(!refuse);
                assert_eq!(direct, l.want, "{g:?} case {case} (vector loop)");
            }
        }
    }
}

/// The `SMLAD` 3×3 layer (`pairs.rs`) against the reference: DS-CNN's
/// depthwise shape, VWW-like strided rows, random sizes, strides 1 and 2,
/// padding 0 to 2, batches of two, zero points at the int8 edges, right
/// shifts 2 to 23 (the fast channels it takes); a scratch of less than four
/// channels' worth and a channel it does not take return `None` without
/// writing.
#[test]
fn pairs_3x3_matches_reference() {
    let mut r = Rng(0x3a3a);
    let mut shapes = vec![
        geometry((25, 5, 64), 64, (3, 3), (1, 1), (1, 1)),
        geometry((12, 12, 8), 8, (3, 3), (2, 2), (1, 1)),
        geometry((5, 7, 4), 4, (3, 3), (1, 2), (0, 1)),
    ];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let c = 4 * r.range(1, 5) as usize;
        let (s, p) = (
            (r.range(1, 2) as usize, r.range(1, 2) as usize),
            (r.range(0, 2) as usize, r.range(0, 2) as usize),
        );
        let (h, w) = (r.range(3, 9) as usize, r.range(3, 9) as usize);
        let mut g = geometry((h, w, c), c, (3, 3), s, p);
        if r.range(0, 3) == 0 {
            g.input.n = 2;
            g.output.n = 2;
        }
        shapes.push(g);
    }
    for (k, g) in shapes.iter().enumerate() {
        let (i, o) = (g.input, g.output);
        let zp_in = [-128, 127, 0, r.range(-128, 127)][k % 4] as i32;
        let q = ConvQuant {
            input_offset: -zp_in,
            output_offset: [-128, 127, r.range(-128, 127) as i32][k % 3],
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(i.elements().unwrap());
        let w = r.i8s(9 * o.c);
        let mult: Vec<i32> = (0..o.c)
            .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
            .collect();
        let shift: Vec<i32> = (0..o.c).map(|_| r.range(-23, -2) as i32).collect();
        let bias: Vec<i32> = (0..o.c)
            .map(|_| r.range(-1 << 20, 1 << 20) as i32)
            .collect();
        let want = ref_conv(g, &q, Some(1), &x, &w, &bias, &mult, &shift);
        let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &shift);
        let mut got = vec![0i8; o.elements().unwrap()];
        let done = super::pairs::depthwise_pairs(&ops, &mut got, &mut scratch());
        assert!(matches!(done, Some(Ok(()))), "{g:?} not taken");
        assert_eq!(got, want, "{g:?} zp {zp_in}");
        // The dispatch picks it for Dsp: the same outputs.
        let mut via = vec![0i8; got.len()];
        depthwise_with::<Dsp>(
            g,
            &q,
            1,
            &x,
            &w,
            Some(&bias),
            &mult,
            &shift,
            &mut via,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(via, want, "{g:?} via Dsp");
        // Too little scratch for four channels, or one slow channel
        // (right shift 1): not taken, nothing written.
        let mut none = vec![0i8; got.len()];
        assert!(super::pairs::depthwise_pairs(&ops, &mut none, &mut scratch()[..8]).is_none());
        let mut slow = shift.clone();
        slow[o.c - 1] = -1;
        let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &slow);
        assert!(super::pairs::depthwise_pairs(&ops, &mut none, &mut scratch()).is_none());
        assert!(none.iter().all(|&v| v == 0));
    }
}

/// The one-input-channel column-word layer (`columns.rs`, Dsp's
/// `separate_layer`) against the reference: DS-CNN's first layer,
/// random kernels of 1 to 9 columns (one to three words a kernel row),
/// strides 1 to 3, padding up to the kernel, batches of two, zero points at
/// the int8 edges, fast right shifts, in one band and in bands of two rows,
/// with a narrowed clamp; a slow channel and too little scratch for one row
/// are refused (`None`, nothing written).
#[test]
fn dsp_single_columns_matches_reference() {
    let mut r = Rng(0xc01c);
    let mut shapes = vec![geometry((49, 10, 1), 64, (10, 4), (2, 2), (4, 1))];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let k = (r.range(1, 6) as usize, r.range(1, 9) as usize);
        let p = (
            r.range(0, k.0 as i64 - 1) as usize,
            r.range(0, k.1 as i64 - 1) as usize,
        );
        let (h, w) = (
            r.range(k.0 as i64, 14) as usize,
            r.range(k.1 as i64, 12) as usize,
        );
        let s = (r.range(1, 3) as usize, r.range(1, 3) as usize);
        let mut g = geometry((h, w, 1), 4 * r.range(1, 4) as usize, k, s, p);
        if r.range(0, 3) == 0 {
            g.input.n = 2;
            g.output.n = 2;
        }
        shapes.push(g);
    }
    for (k, g) in shapes.iter().enumerate() {
        let (i, o) = (g.input, g.output);
        let zp_in = [-128, 127, 0, r.range(-128, 127)][k % 4] as i32;
        let q = ConvQuant {
            input_offset: -zp_in,
            output_offset: [-128, 127, r.range(-128, 127) as i32][k % 3],
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(i.elements().unwrap());
        let w = r.i8s(g.kernel.0 * g.kernel.1 * o.c);
        let mult: Vec<i32> = (0..o.c)
            .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
            .collect();
        let shift: Vec<i32> = (0..o.c).map(|_| r.range(-23, -2) as i32).collect();
        let bias: Vec<i32> = (0..o.c)
            .map(|_| r.range(-1 << 20, 1 << 20) as i32)
            .collect();
        let want = ref_conv(g, &q, Some(o.c), &x, &w, &bias, &mult, &shift);
        let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &shift);
        let mut got = vec![0i8; o.elements().unwrap()];
        let done = Dsp::separate_layer(&ops, o.c, &mut got, &mut scratch());
        assert!(matches!(done, Some(Ok(()))), "{g:?} not taken");
        assert_eq!(got, want, "{g:?} zp {zp_in}");
        let mut via = vec![0i8; got.len()];
        depthwise_with::<Dsp>(
            g,
            &q,
            o.c,
            &x,
            &w,
            Some(&bias),
            &mult,
            &shift,
            &mut via,
            &mut scratch(),
        )
        .unwrap();
        assert_eq!(via, want, "{g:?} via Dsp");
        // Scratch for two output rows' column words: bands of two rows.
        let (kh, gr) = (g.kernel.0, g.kernel.1.div_ceil(4));
        let two = 2 * PB + 4 * kh * gr + (o.w * gr * (kh + g.stride.0)).div_ceil(2);
        let mut banded = vec![0i8; got.len()];
        let done = Dsp::separate_layer(&ops, o.c, &mut banded, &mut scratch()[..two]);
        assert!(matches!(done, Some(Ok(()))), "{g:?} not taken in bands");
        assert_eq!(banded, want, "{g:?} in bands of two rows");
        // A clamp narrower than int8: applied after the quad loop.
        let narrow = ConvQuant {
            act_min: -20,
            act_max: 100,
            ..q
        };
        let want_n = ref_conv(g, &narrow, Some(o.c), &x, &w, &bias, &mult, &shift);
        let ops_n = ConvOperands::new(*g, narrow, &x, &w, Some(&bias), &mult, &shift);
        let mut got_n = vec![0i8; got.len()];
        assert!(Dsp::separate_layer(&ops_n, o.c, &mut got_n, &mut scratch()).is_some());
        assert_eq!(got_n, want_n, "{g:?} narrowed clamp");
        // Too little scratch for one row, or a slow channel (right shift
        // 1): not taken, nothing written.
        let mut none = vec![0i8; got.len()];
        assert!(Dsp::separate_layer(&ops, o.c, &mut none, &mut scratch()[..two / 2]).is_none());
        let mut slow = shift.clone();
        slow[o.c - 1] = -1;
        let ops = ConvOperands::new(*g, q, &x, &w, Some(&bias), &mult, &slow);
        assert!(Dsp::separate_layer(&ops, o.c, &mut none, &mut scratch()).is_none());
        assert!(none.iter().all(|&v| v == 0));
    }
}

/// `pairs.rs`'s `asm!` row loop transcribed instruction by instruction
/// (the `ctx` words, the post-incremented pair and weight pointers, the
/// advance of `4·s − 48` bytes after a pixel, the next block's pointers,
/// and the requantization as `AND`/`ORR`/`ADD asr #31`/`SMLAL`/`ASR`/`SSAT
/// #8` on the `req` words) against the portable loop, on random words and
/// accumulators.
#[test]
fn pairs_row_asm_transcription_matches_portable() {
    use super::super::isa::dsp::smlad;
    use super::super::requant::{Requant, Rq};
    use super::pairs::{pairs_row, Rows};
    let mut r = XorShift(0x0009_a125);
    for _ in 0..if cfg!(miri) { 3 } else { 300 } {
        let (n, blocks) = (1 + r.below(6), 1 + r.below(4));
        let s = 4 * (1 + r.below(2));
        let vstride = (n - 1) * s + 12 + 4 * r.below(3);
        let step = 4 * blocks + 4 * r.below(3);
        let rows = Rows {
            n,
            s,
            step,
            blocks,
            vstride,
        };
        let len = (blocks - 1) * vstride + (n - 1) * s + 12;
        let va: Vec<u32> = (0..len).map(|_| r.next() as u32).collect();
        let vb: Vec<u32> = (0..len).map(|_| r.next() as u32).collect();
        let w: Vec<u32> = (0..24 * blocks).map(|_| r.next() as u32).collect();
        let full: Vec<i32> = (0..4 * blocks)
            .map(|_| r.next() as i32 >> r.below(20))
            .collect();
        let req: Vec<Rq> = (0..4 * blocks)
            .map(|_| {
                let m = (1 << 30) + (r.next() as i32 & 0x3fff_ffff);
                let sh = -2 - r.below(21) as i32;
                Requant::new(m, sh).to_words(r.below(256) as i32 - 128)
            })
            .collect();
        let mut want = vec![0i8; (n - 1) * step + 4 * blocks];
        pairs_row(&va, &vb, &w, &full, &req, &mut want, &rows).unwrap();
        // Word k of req entry e (ldr/ldrd at e·16 + 4k).
        let rw = |e: usize, k: usize| (req[e][k / 2] >> (32 * (k % 2))) as u32;
        let mut got = vec![0i8; want.len()];
        // ctx: byte positions (full, req, weights in words; out, pairs in
        // bytes), pixels left, blocks left.
        let adv = (4 * s as u32).wrapping_sub(48);
        let (mut fullp, mut reqp, mut wbase) = (0usize, 0usize, 0usize);
        let (mut outp, mut outbase) = (0usize, 0usize);
        let (mut pa, mut pb) = (0u32, 0u32);
        let (mut pa0, mut pb0) = (0u32, 0u32);
        let (mut left, mut blocks_left) = (n, blocks);
        loop {
            let mut a = [
                full[fullp],
                full[fullp + 1],
                full[fullp + 2],
                full[fullp + 3],
            ];
            let mut pw = wbase;
            for _ in 0..3 {
                // pa, pa, pb, pb: lanes 0/1 then 2/3 of each row.
                for (lanes, second) in [(0, false), (2, false), (0, true), (2, true)] {
                    let (v, p) = if second {
                        (&vb, &mut pb)
                    } else {
                        (&va, &mut pa)
                    };
                    let at = (*p / 4) as usize;
                    let (v0, v1) = (v[at], v[at + 1]);
                    *p += 8;
                    let (w0, w1) = (w[pw], w[pw + 1]);
                    pw += 2;
                    a[lanes] = smlad(v0, w0, a[lanes]);
                    a[lanes + 1] = smlad(v1, w1, a[lanes + 1]);
                }
            }
            for (e, acc) in a.iter_mut().enumerate() {
                let (mult, hi, rm1) = (rw(reqp + e, 0) as i32, rw(reqp + e, 1), rw(reqp + e, 2));
                let lo = (*acc as u32 & 0x8000_0000) | 0x4000_0000;
                let hi = hi.wrapping_add((*acc >> 31) as u32);
                // SMLAL: (hi:lo) += acc·mult (signed 64-bit).
                let sum = (((hi as u64) << 32 | lo as u64) as i64)
                    .wrapping_add(*acc as i64 * mult as i64);
                let h = (sum >> 32) as i32;
                *acc = (h >> (rm1 & 0xff).min(31)).clamp(-128, 127);
            }
            for (l, v) in a.iter().enumerate() {
                got[outp + l] = *v as i8;
            }
            outp += step;
            pa = pa.wrapping_add(adv);
            pb = pb.wrapping_add(adv);
            left -= 1;
            if left != 0 {
                continue;
            }
            blocks_left -= 1;
            if blocks_left == 0 {
                break;
            }
            (fullp, reqp, wbase) = (fullp + 4, reqp + 4, wbase + 24);
            left = n;
            outbase += 4;
            outp = outbase;
            pa0 += 4 * vstride as u32;
            pb0 += 4 * vstride as u32;
            (pa, pb) = (pa0, pb0);
        }
        assert_eq!(got, want, "n {n} s {s} step {step} blocks {blocks}");
    }
}
