//! Randomised checks of the CMSIS-NN functions against reference loops
//! written independently and plainly: signed i64 coordinates, explicit
//! padding tests, i128 requantization with the rounding spelled out.

use super::kernels::Requant;
use super::mac::{Dsp, Mac, Scalar};
use super::*;

/// The multiply-accumulate implementation the build does not select: every
/// kernel test runs both and requires identical outputs.
#[cfg(feature = "dsp")]
type Other = Scalar;
#[cfg(not(feature = "dsp"))]
type Other = Dsp;

extern crate std;
use std::{vec, vec::Vec};

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.range(-128, 127) as i8).collect()
    }
}

/// CMSIS-NN requantization, written from its definition: `val·2^left`
/// (32-bit, as the C code), doubling high multiply rounded half up, then
/// division by `2^right` rounded half away from zero.
fn ref_requantize(val: i32, mult: i32, shift: i32) -> i64 {
    let left = shift.max(0);
    let right = (-shift).max(0);
    let x = val.wrapping_mul(1i32.wrapping_shl(left as u32)) as i128;
    let high = (x * mult as i128 + (1i128 << 30)) >> 31;
    let d = 1i128 << right;
    let q = if high >= 0 {
        (high + d / 2) / d
    } else {
        -((-high + d / 2) / d)
    };
    // Exactly-half negatives round away from zero: -(|h| + d/2)/d above.
    q as i64
}

fn clamp8(v: i64, lo: i32, hi: i32) -> i8 {
    v.max(lo as i64).min(hi as i64) as i8
}

fn out_size(i: usize, k: usize, s: usize, p: usize, d: usize) -> usize {
    (i + 2 * p).saturating_sub(d * (k - 1) + 1) / s + 1
}

/// Random cases per test; a few under Miri (docs/robustness.md).
const CASES: usize = if cfg!(miri) { 6 } else { 300 };

#[test]
fn requantize_matches_reference_over_shifts_and_signs() {
    let mut r = Rng(7);
    for shift in -31..=30 {
        for _ in 0..200 {
            let mult = r.range(1 << 30, i32::MAX as i64) as i32;
            // Keep `val << left` inside i32 as CMSIS-NN assumes.
            let bound = (i32::MAX >> shift.max(0)) as i64;
            let val = r.range(-bound, bound) as i32;
            assert_eq!(
                crate::ops::arith::requantize(val, mult, shift) as i64,
                ref_requantize(val, mult, shift),
                "val {val} mult {mult} shift {shift}"
            );
        }
    }
}

struct Case {
    g: Window,
    q: ConvQuant,
}

fn random_case(r: &mut Rng, c_in: usize, c_out: usize) -> Case {
    let (ih, iw) = (r.range(1, 7) as usize, r.range(1, 9) as usize);
    let (kh, kw) = (r.range(1, 3) as usize, r.range(1, 3) as usize);
    let (sh, sw) = (r.range(1, 2) as usize, r.range(1, 2) as usize);
    let (dh, dw) = (r.range(1, 2) as usize, r.range(1, 2) as usize);
    let (ph, pw) = (r.range(0, 2) as usize, r.range(0, 2) as usize);
    let n = r.range(1, 2) as usize;
    let oh = out_size(ih, kh, sh, ph, dh).max(1);
    let ow = out_size(iw, kw, sw, pw, dw).max(1);
    // Zero points at the edges are the interesting ones.
    let zp_in = [-128, 127, 0, r.range(-128, 127)][r.range(0, 3) as usize] as i32;
    let zp_out = [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32;
    let act_min = [-128, zp_out][r.range(0, 1) as usize];
    // Now and then an offset no int8 zero point gives (the generic paths).
    let input_offset = if r.range(0, 9) == 0 {
        r.range(-1000, 1000) as i32
    } else {
        -zp_in
    };
    Case {
        g: Window {
            input: Nhwc {
                n,
                h: ih,
                w: iw,
                c: c_in,
            },
            output: Nhwc {
                n,
                h: oh,
                w: ow,
                c: c_out,
            },
            kernel: (kh, kw),
            stride: (sh, sw),
            padding: (ph, pw),
            dilation: (dh, dw),
        },
        q: ConvQuant {
            input_offset,
            output_offset: zp_out,
            act_min,
            act_max: 127,
        },
    }
}

fn quant_params(r: &mut Rng, c: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mult = (0..c)
        .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
        .collect();
    let shift = (0..c).map(|_| r.range(-12, 2) as i32).collect();
    let bias = (0..c).map(|_| r.range(-40_000, 40_000) as i32).collect();
    (mult, shift, bias)
}

/// Input (y, x) of output `o` and tap `k`, signed, or None in the padding.
fn ref_pos(o: usize, k: usize, s: usize, p: usize, d: usize, size: usize) -> Option<usize> {
    let pos = o as i64 * s as i64 + k as i64 * d as i64 - p as i64;
    (0..size as i64).contains(&pos).then_some(pos as usize)
}

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
        conv_with::<Other>(&g, &q, &x, &w, Some(&bias), &mult, &shift, &mut other).unwrap();
        assert_eq!(got, other, "scalar and dsp conv agree");
        let mut k = 0;
        for b in 0..o.n {
            for oy in 0..o.h {
                for ox in 0..o.w {
                    for c in 0..c_out {
                        let mut acc = bias[c] as i64;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let (Some(y), Some(xx)) = (
                                    ref_pos(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h),
                                    ref_pos(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w),
                                ) else {
                                    continue;
                                };
                                for ic in 0..c_in {
                                    let xv = x[((b * i.h + y) * i.w + xx) * c_in + ic] as i64;
                                    let wv = w[((c * kh + ky) * kw + kx) * c_in + ic] as i64;
                                    acc += (xv + q.input_offset as i64) * wv;
                                }
                            }
                        }
                        let want = clamp8(
                            ref_requantize(acc as i32, mult[c], shift[c]) + q.output_offset as i64,
                            q.act_min,
                            q.act_max,
                        );
                        assert_eq!(got[k], want, "conv {g:?} at {k}");
                        k += 1;
                    }
                }
            }
        }
    }
}

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
        )
        .unwrap();
        assert_eq!(got, other, "scalar and dsp depthwise agree");
        let mut k = 0;
        for b in 0..o.n {
            for oy in 0..o.h {
                for ox in 0..o.w {
                    for c in 0..c_out {
                        let mut acc = bias[c] as i64;
                        for ky in 0..kh {
                            for kx in 0..kw {
                                let (Some(y), Some(xx)) = (
                                    ref_pos(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h),
                                    ref_pos(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w),
                                ) else {
                                    continue;
                                };
                                let xv = x[((b * i.h + y) * i.w + xx) * c_in + c / ch_mult] as i64;
                                acc += (xv + q.input_offset as i64)
                                    * w[(ky * kw + kx) * c_out + c] as i64;
                            }
                        }
                        let want = clamp8(
                            ref_requantize(acc as i32, mult[c], shift[c]) + q.output_offset as i64,
                            q.act_min,
                            q.act_max,
                        );
                        assert_eq!(got[k], want, "depthwise {g:?} mult {ch_mult} at {k}");
                        k += 1;
                    }
                }
            }
        }
    }
}

#[test]
fn fully_connected_encodings_agree_with_reference() {
    let mut r = Rng(0xfc);
    for _ in 0..CASES {
        let (batches, inf, outf) = (
            r.range(1, 3) as usize,
            r.range(1, 40) as usize,
            r.range(1, 12) as usize,
        );
        let zp_in = [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32;
        let q = ConvQuant {
            input_offset: -zp_in,
            output_offset: r.range(-128, 127) as i32,
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(batches * inf);
        let w = r.i8s(outf * inf);
        let (mult, shift) = (
            r.range(1 << 30, i32::MAX as i64) as i32,
            r.range(-12, 1) as i32,
        );
        let bias: Vec<i32> = (0..outf).map(|_| r.range(-40_000, 40_000) as i32).collect();
        // The MVE export's precomputed term.
        let kernel_sum: Vec<i32> = (0..outf)
            .map(|o| {
                bias[o]
                    + q.input_offset
                        * w[o * inf..(o + 1) * inf]
                            .iter()
                            .map(|&v| v as i32)
                            .sum::<i32>()
            })
            .collect();
        let mut dsp = vec![0i8; batches * outf];
        let mut mve = vec![0i8; batches * outf];
        fully_connected_s8(
            &q,
            0,
            FcEncoding::Bias(Some(&bias)),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut dsp,
        )
        .unwrap();
        fully_connected_s8(
            &q,
            0,
            FcEncoding::KernelSum(&kernel_sum),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut mve,
        )
        .unwrap();
        assert_eq!(dsp, mve, "both encodings give the same result");
        let mut other = vec![0i8; batches * outf];
        fully_connected_with::<Other>(
            &q,
            0,
            FcEncoding::Bias(Some(&bias)),
            &x,
            &w,
            outf,
            mult,
            shift,
            &mut other,
        )
        .unwrap();
        assert_eq!(dsp, other, "scalar and dsp fully connected agree");
        for b in 0..batches {
            for o in 0..outf {
                let acc: i64 = bias[o] as i64
                    + (0..inf)
                        .map(|j| {
                            (x[b * inf + j] as i64 + q.input_offset as i64) * w[o * inf + j] as i64
                        })
                        .sum::<i64>();
                let want = clamp8(
                    ref_requantize(acc as i32, mult, shift) + q.output_offset as i64,
                    -128,
                    127,
                );
                assert_eq!(dsp[b * outf + o], want);
            }
        }
    }
}

#[test]
fn pools_match_reference() {
    let mut r = Rng(0x9001);
    for _ in 0..CASES {
        let c = r.range(1, 5) as usize;
        let Case { mut g, .. } = random_case(&mut r, c, c);
        g.dilation = (1, 1);
        g.output.h = out_size(g.input.h, g.kernel.0, g.stride.0, g.padding.0, 1).max(1);
        g.output.w = out_size(g.input.w, g.kernel.1, g.stride.1, g.padding.1, 1).max(1);
        // Keep every window overlapping the input (CMSIS-NN rejects empty ones).
        g.padding = (
            g.padding.0.min(g.kernel.0 - 1),
            g.padding.1.min(g.kernel.1 - 1),
        );
        let (i, o) = (g.input, g.output);
        let x = r.i8s(i.elements().unwrap());
        let act = (r.range(-128, 0) as i32, r.range(0, 127) as i32);
        let mut avg = vec![0i8; o.elements().unwrap()];
        let mut max = vec![0i8; o.elements().unwrap()];
        let avg_r = avg_pool_s8(&g, act, &x, &mut avg);
        max_pool_s8(&g, act, &x, &mut max).unwrap();
        let mut k = 0;
        let mut empty = false;
        for b in 0..o.n {
            for oy in 0..o.h {
                for ox in 0..o.w {
                    for ch in 0..c {
                        let mut vals = vec![];
                        for ky in 0..g.kernel.0 {
                            for kx in 0..g.kernel.1 {
                                if let (Some(y), Some(xx)) = (
                                    ref_pos(oy, ky, g.stride.0, g.padding.0, 1, i.h),
                                    ref_pos(ox, kx, g.stride.1, g.padding.1, 1, i.w),
                                ) {
                                    vals.push(x[((b * i.h + y) * i.w + xx) * c + ch] as i64);
                                }
                            }
                        }
                        if vals.is_empty() {
                            empty = true;
                            k += 1;
                            continue;
                        }
                        let (sum, n) = (vals.iter().sum::<i64>(), vals.len() as i64);
                        // Mean rounded half away from zero.
                        let mean = if sum >= 0 {
                            (2 * sum + n) / (2 * n)
                        } else {
                            -((-2 * sum + n) / (2 * n))
                        };
                        if avg_r.is_ok() {
                            assert_eq!(avg[k], clamp8(mean, act.0, act.1), "avg {g:?} at {k}");
                        }
                        let m = *vals.iter().max().unwrap();
                        assert_eq!(
                            max[k],
                            clamp8(m.max(-128), act.0, act.1),
                            "max {g:?} at {k}"
                        );
                        k += 1;
                    }
                }
            }
        }
        assert_eq!(
            avg_r.is_err(),
            empty,
            "avg pool rejects exactly the empty windows"
        );
    }
}

#[test]
fn mismatched_lengths_are_errors_not_panics() {
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
    let e = fully_connected_s8(
        &q,
        0,
        FcEncoding::Bias(None),
        &[0; 10],
        &[0; 7],
        3,
        1,
        0,
        &mut [0; 3],
    );
    assert_eq!(e, Err(KernelError::InvalidArgument));
}

#[test]
fn fast_requantize_equals_reference_everywhere() {
    let mut r = Rng(0x4e9);
    let mut shifts: Vec<i32> = (-31..=30).collect();
    shifts.extend([i32::MIN, -32, -40, 31, 32, 40, i32::MAX]);
    let special = [
        i32::MIN,
        i32::MIN + 1,
        -1,
        0,
        1,
        i32::MAX,
        1 << 30,
        -(1 << 30),
    ];
    for &shift in &shifts {
        let mut mults: Vec<i32> = special.to_vec();
        mults.extend((0..8).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
        mults.extend((0..4).map(|_| r.next() as i32));
        for &m in &mults {
            let q = Requant::new(m, shift);
            let mut accs: Vec<i32> = special.to_vec();
            accs.extend((0..60).map(|_| r.next() as i32));
            accs.extend((0..60).map(|_| r.range(-70_000, 70_000) as i32));
            // Rounding ties of the final shift: (2k + 1)·2^(r-1) for small k.
            let rsh = (-(shift as i64)).clamp(0, 31) as u32;
            if rsh > 0 {
                for k in -3i64..3 {
                    let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                    accs.push((tie / m.max(1) as i64) as i32);
                }
            }
            for &acc in &accs {
                assert_eq!(
                    q.apply(acc),
                    crate::ops::arith::requantize(acc, m, shift),
                    "acc {acc} mult {m} shift {shift}"
                );
            }
        }
    }
}

#[test]
fn dsp_instructions_follow_the_arm_arm() {
    use super::dsp::*;
    assert_eq!(sxtb16(0x80_7f_01_ff), 0x007f_ffff);
    assert_eq!(sxtb16_ror8(0x80_7f_01_ff), 0xff80_0001);
    assert_eq!(word(&[-1, 1, 127, -128]), 0x807f_01ff);
    // (-32768)² + (-32768)² + i32::MAX wraps modulo 2^32.
    let m = 0x8000_8000;
    assert_eq!(smlad(m, m, i32::MAX), i32::MAX.wrapping_add(1 << 31));
    assert_eq!(smlad(pack16(3, -2), pack16(-5, 7), 100), 100 - 15 - 14);
    let (a, b) = (pack16(-3, 5), pack16(7, -11));
    assert_eq!(smlabb(a, b, 1), 1 - 21);
    assert_eq!(smlabt(a, b, 1), 1 + 33);
    assert_eq!(smlatb(a, b, 1), 1 + 35);
    assert_eq!(smlatt(a, b, 1), 1 - 55);
}

fn naive(x: &[i8], w: &[i8]) -> i32 {
    x.iter().zip(w).map(|(&a, &b)| a as i32 * b as i32).sum()
}

#[test]
fn dsp_and_scalar_building_blocks_agree() {
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

/// Plain i64 convolution over OHWI (conv) or IHWO (depthwise) weights.
#[allow(clippy::too_many_arguments)]
fn ref_conv(
    g: &Window,
    q: &ConvQuant,
    ch_mult: Option<usize>,
    x: &[i8],
    w: &[i8],
    bias: &[i32],
    mult: &[i32],
    shift: &[i32],
) -> Vec<i8> {
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let mut out = vec![];
    for b in 0..o.n {
        for oy in 0..o.h {
            for ox in 0..o.w {
                for c in 0..o.c {
                    let mut acc = bias[c] as i64;
                    for ky in 0..kh {
                        for kx in 0..kw {
                            let (Some(y), Some(xx)) = (
                                ref_pos(oy, ky, g.stride.0, g.padding.0, g.dilation.0, i.h),
                                ref_pos(ox, kx, g.stride.1, g.padding.1, g.dilation.1, i.w),
                            ) else {
                                continue;
                            };
                            let px = ((b * i.h + y) * i.w + xx) * i.c;
                            match ch_mult {
                                Some(m) => {
                                    acc += (x[px + c / m] as i64 + q.input_offset as i64)
                                        * w[(ky * kw + kx) * o.c + c] as i64
                                }
                                None => {
                                    for ic in 0..i.c {
                                        acc += (x[px + ic] as i64 + q.input_offset as i64)
                                            * w[((c * kh + ky) * kw + kx) * i.c + ic] as i64;
                                    }
                                }
                            }
                        }
                    }
                    out.push(clamp8(
                        ref_requantize(acc as i32, mult[c], shift[c]) + q.output_offset as i64,
                        q.act_min,
                        q.act_max,
                    ));
                }
            }
        }
    }
    out
}

fn geometry(
    input: (usize, usize, usize),
    c_out: usize,
    k: (usize, usize),
    s: (usize, usize),
    p: (usize, usize),
) -> Window {
    Window {
        input: Nhwc {
            n: 1,
            h: input.0,
            w: input.1,
            c: input.2,
        },
        output: Nhwc {
            n: 1,
            h: out_size(input.0, k.0, s.0, p.0, 1),
            w: out_size(input.1, k.1, s.1, p.1, 1),
            c: c_out,
        },
        kernel: k,
        stride: s,
        padding: p,
        dilation: (1, 1),
    }
}

/// The DS-CNN shapes and their neighbours: pointwise 1×1 with odd pixel and
/// channel counts, 3×3 depthwise with channel tails, and the first layer (one
/// input channel, 10×4 kernel, stride 2, padding (5, 1), multiplier 64),
/// with extreme zero points and shifts.
#[test]
fn dscnn_shapes_match_reference_on_both_paths() {
    let mut r = Rng(0xd5c);
    let shapes: &[(Window, Option<usize>)] = &[
        (geometry((25, 5, 64), 64, (1, 1), (1, 1), (0, 0)), None),
        (geometry((5, 3, 7), 5, (1, 1), (1, 1), (0, 0)), None),
        (geometry((3, 3, 13), 3, (1, 1), (1, 1), (0, 0)), None),
        (geometry((25, 5, 64), 64, (3, 3), (1, 1), (1, 1)), Some(1)),
        (geometry((6, 5, 9), 9, (3, 3), (2, 1), (1, 1)), Some(1)),
        (geometry((49, 10, 1), 64, (10, 4), (2, 2), (5, 1)), Some(64)),
        (geometry((9, 7, 1), 6, (3, 4), (2, 1), (1, 2)), Some(6)),
        // Past the packed paths' limits: 133 input channels, 7×7 taps.
        (geometry((3, 3, 133), 6, (1, 1), (1, 1), (0, 0)), None),
        (geometry((8, 8, 6), 6, (7, 7), (1, 1), (3, 3)), Some(1)),
    ];
    for (g, ch_mult) in shapes {
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
            let wlen = if ch_mult.is_some() {
                kh * kw * o.c
            } else {
                o.c * kh * kw * i.c
            };
            let w = r.i8s(wlen);
            let mult: Vec<i32> = (0..o.c)
                .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
                .collect();
            let shift: Vec<i32> = (0..o.c)
                .map(|_| r.range(shift_lo, shift_hi) as i32)
                .collect();
            let bias: Vec<i32> = (0..o.c)
                .map(|_| r.range(-1 << 20, 1 << 20) as i32)
                .collect();
            let want = ref_conv(g, &q, *ch_mult, &x, &w, &bias, &mult, &shift);
            for dsp in [false, true] {
                let mut got = vec![0i8; o.elements().unwrap()];
                let res = match (ch_mult, dsp) {
                    (None, false) => {
                        conv_with::<Scalar>(g, &q, &x, &w, Some(&bias), &mult, &shift, &mut got)
                    }
                    (None, true) => {
                        conv_with::<Dsp>(g, &q, &x, &w, Some(&bias), &mult, &shift, &mut got)
                    }
                    (Some(m), false) => depthwise_with::<Scalar>(
                        g,
                        &q,
                        *m,
                        &x,
                        &w,
                        Some(&bias),
                        &mult,
                        &shift,
                        &mut got,
                    ),
                    (Some(m), true) => depthwise_with::<Dsp>(
                        g,
                        &q,
                        *m,
                        &x,
                        &w,
                        Some(&bias),
                        &mult,
                        &shift,
                        &mut got,
                    ),
                };
                res.unwrap();
                assert_eq!(got, want, "{g:?} mult {ch_mult:?} zp {zp_in} dsp {dsp}");
            }
            // Every loop structure with both implementations, whichever the
            // dispatch would pick.
            type K = fn(&kernels::ConvOperands<'_>, &mut [i8]) -> KernelResult;
            let paths: Vec<K> = match ch_mult {
                None if g.kernel == (1, 1) => vec![
                    kernels::pointwise::<Scalar>,
                    kernels::pointwise::<Dsp>,
                    kernels::pointwise_packed::<Scalar>,
                    kernels::pointwise_packed::<Dsp>,
                    kernels::conv::<Scalar>,
                    kernels::conv::<Dsp>,
                ],
                None => vec![kernels::conv::<Scalar>, kernels::conv::<Dsp>],
                Some(1) => vec![
                    kernels::depthwise_mult1::<Scalar>,
                    kernels::depthwise_mult1::<Dsp>,
                    kernels::depthwise_packed::<Scalar>,
                    kernels::depthwise_packed::<Dsp>,
                ],
                Some(_) => vec![
                    kernels::depthwise_single_gemm::<Scalar>,
                    kernels::depthwise_single_gemm::<Dsp>,
                ],
            };
            for (k, f) in paths.iter().enumerate() {
                let mut got = vec![0i8; o.elements().unwrap()];
                let ops = kernels::ConvOperands {
                    g: *g,
                    q,
                    input: &x,
                    filter: &w,
                    bias: Some(&bias),
                    mult: &mult,
                    shift: &shift,
                };
                f(&ops, &mut got).unwrap();
                assert_eq!(got, want, "{g:?} path {k} zp {zp_in}");
            }
        }
    }
}
