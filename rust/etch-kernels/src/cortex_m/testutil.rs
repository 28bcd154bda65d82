//! What the cortex_m reference tests share: deterministic random numbers,
//! CMSIS-NN requantization written from its definition, random geometries,
//! a plain i64 convolution and random layers with their reference output.

extern crate std;
use std::{vec, vec::Vec};

use super::common::ConvOperands;
use super::conv::CONV_SCRATCH_WORDS;
use super::depthwise::DEPTHWISE_SCRATCH_WORDS;
use super::{ConvQuant, Nhwc, Window};
use crate::error::KernelResult;

/// Kernel scratch as an earlier call may leave it (never assumed zero),
/// large enough for either layer kernel.
pub(crate) fn scratch() -> Vec<u64> {
    vec![0xa5a5_a5a5_a5a5_a5a5; CONV_SCRATCH_WORDS.max(DEPTHWISE_SCRATCH_WORDS)]
}

/// xorshift64*: deterministic, dependency-free.
pub(crate) struct Rng(pub(crate) u64);
impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(crate) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
    pub(crate) fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.range(-128, 127) as i8).collect()
    }
}

/// CMSIS-NN requantization, written from its definition: `val·2^left`
/// (32-bit, as the C code), doubling high multiply rounded half up, then
/// division by `2^right` rounded half away from zero.
pub(crate) fn ref_requantize(val: i32, mult: i32, shift: i32) -> i64 {
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

pub(crate) fn clamp8(v: i64, lo: i32, hi: i32) -> i8 {
    v.max(lo as i64).min(hi as i64) as i8
}

pub(crate) fn out_size(i: usize, k: usize, s: usize, p: usize, d: usize) -> usize {
    (i + 2 * p).saturating_sub(d * (k - 1) + 1) / s + 1
}

/// Random cases per test; a few under Miri (docs/robustness.md).
pub(crate) const CASES: usize = if cfg!(miri) { 6 } else { 300 };

pub(crate) struct Case {
    pub(crate) g: Window,
    pub(crate) q: ConvQuant,
}

pub(crate) fn random_case(r: &mut Rng, c_in: usize, c_out: usize) -> Case {
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

pub(crate) fn quant_params(r: &mut Rng, c: usize) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let mult = (0..c)
        .map(|_| r.range(1 << 30, i32::MAX as i64) as i32)
        .collect();
    let shift = (0..c).map(|_| r.range(-12, 2) as i32).collect();
    let bias = (0..c).map(|_| r.range(-40_000, 40_000) as i32).collect();
    (mult, shift, bias)
}

/// Input (y, x) of output `o` and tap `k`, signed, or None in the padding.
pub(crate) fn ref_pos(
    o: usize,
    k: usize,
    s: usize,
    p: usize,
    d: usize,
    size: usize,
) -> Option<usize> {
    let pos = o as i64 * s as i64 + k as i64 * d as i64 - p as i64;
    (0..size as i64).contains(&pos).then_some(pos as usize)
}

pub(crate) fn naive(x: &[i8], w: &[i8]) -> i32 {
    x.iter().zip(w).map(|(&a, &b)| a as i32 * b as i32).sum()
}

/// Plain i64 convolution over OHWI (conv) or IHWO (depthwise) weights.
#[allow(clippy::too_many_arguments)]
pub(crate) fn ref_conv(
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

pub(crate) fn geometry(
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

/// Random padding below the kernel on each side (the Helium tests' windows).
pub(crate) fn random_padding(r: &mut Rng, k: (usize, usize)) -> (usize, usize) {
    (
        r.range(0, k.0 as i64 - 1) as usize,
        r.range(0, k.1 as i64 - 1) as usize,
    )
}

/// `g` varied as the Helium tests vary their random windows: one in four
/// with dilation 2 along `axis` (0 rows, 1 columns; `None` if the dilated
/// window no longer fits the padded input), then one in five with a batch
/// of two.
pub(crate) fn dilate_or_batch(r: &mut Rng, mut g: Window, axis: usize) -> Option<Window> {
    if r.range(0, 4) == 0 {
        let (i, k, s, p) = if axis == 0 {
            g.dilation = (2, 1);
            (g.input.h, g.kernel.0, g.stride.0, g.padding.0)
        } else {
            g.dilation = (1, 2);
            (g.input.w, g.kernel.1, g.stride.1, g.padding.1)
        };
        let o = out_size(i, k, s, p, 2);
        if o == 0 || i + 2 * p < 2 * (k - 1) + 1 {
            return None;
        }
        if axis == 0 {
            g.output.h = o;
        } else {
            g.output.w = o;
        }
    }
    if r.range(0, 5) == 0 {
        g.input.n = 2;
        g.output.n = 2;
    }
    Some(g)
}

/// xorshift64 (the generator of the `asm!` transcription tests).
pub(crate) struct XorShift(pub(crate) u64);
impl XorShift {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub(crate) fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.next() as i8).collect()
    }
}

/// A layer of random operands for a geometry, with its reference output
/// ([`ref_conv`]): zero points at the int8 edges or anywhere, activation
/// ranges full or narrowed, multipliers from `2^30` up or (one in four) any
/// odd value, right shifts 1 to 31 (what the Helium requantization admits)
/// except on channel `refuse`, which gets a left shift of 1 (Helium's loops
/// refuse the layer and the generic ones run it).
pub(crate) struct Layer {
    pub(crate) g: Window,
    pub(crate) q: ConvQuant,
    pub(crate) x: Vec<i8>,
    pub(crate) w: Vec<i8>,
    pub(crate) bias: Vec<i32>,
    pub(crate) mult: Vec<i32>,
    pub(crate) shift: Vec<i32>,
    pub(crate) want: Vec<i8>,
}

impl Layer {
    /// `ch_mult`: `Some(m)` a depthwise layer of channel multiplier `m`
    /// (IHWO weights), `None` a convolution (OHWI weights).
    pub(crate) fn random(
        r: &mut Rng,
        g: Window,
        ch_mult: Option<usize>,
        refuse: Option<usize>,
    ) -> Layer {
        let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
        let zp_in = [-128, 127, 0, r.range(-128, 127)][r.range(0, 3) as usize] as i32;
        let q = ConvQuant {
            input_offset: -zp_in,
            output_offset: [-128, 127, r.range(-128, 127)][r.range(0, 2) as usize] as i32,
            act_min: [-128, -20][r.range(0, 1) as usize],
            act_max: [127, 100][r.range(0, 1) as usize],
        };
        let x = r.i8s(i.elements().unwrap());
        let taps = kh * kw * if ch_mult.is_some() { 1 } else { i.c };
        let w = r.i8s(taps * o.c);
        let mult = (0..o.c)
            .map(|_| match r.range(0, 3) {
                0 => r.next() as i32 | 1,
                _ => r.range(1 << 30, i32::MAX as i64) as i32,
            })
            .collect::<Vec<i32>>();
        let shift = (0..o.c)
            .map(|c| {
                if refuse == Some(c) {
                    1
                } else {
                    r.range(-31, -1) as i32
                }
            })
            .collect::<Vec<i32>>();
        let bias = (0..o.c)
            .map(|_| r.range(-1 << 20, 1 << 20) as i32)
            .collect::<Vec<i32>>();
        let want = ref_conv(&g, &q, ch_mult, &x, &w, &bias, &mult, &shift);
        Layer {
            g,
            q,
            x,
            w,
            bias,
            mult,
            shift,
            want,
        }
    }

    pub(crate) fn ops(&self) -> ConvOperands<'_> {
        ConvOperands::new(
            self.g,
            self.q,
            &self.x,
            &self.w,
            Some(&self.bias),
            &self.mult,
            &self.shift,
        )
    }

    /// Runs a layer kernel that may refuse the layer on an output filled
    /// with `0x55`: `Some(output)` if it ran (and succeeded), `None` if it
    /// refused, after checking that it left the output untouched.
    pub(crate) fn direct(
        &self,
        f: impl FnOnce(&ConvOperands<'_>, &mut [i8]) -> Option<KernelResult>,
    ) -> Option<Vec<i8>> {
        let mut out = vec![0x55i8; self.want.len()];
        match f(&self.ops(), &mut out) {
            Some(res) => {
                res.unwrap();
                Some(out)
            }
            None => {
                assert!(out.iter().all(|&v| v == 0x55), "output untouched");
                None
            }
        }
    }
}
