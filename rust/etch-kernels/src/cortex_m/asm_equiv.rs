//! Host-run equivalents of the Thumb-2 `asm!` loops that are active
//! without the `dsp` feature (`Scalar::dw_row` and `Scalar::dot_2x2_rows`
//! on Armv7-M/Armv8-M Mainline, `cfg(etch_thumb2)`): each loop transcribed
//! instruction by instruction, every load an index into the slice the
//! `asm!` reads through a raw pointer (`get(..).expect`: an out-of-bounds
//! address fails the test), run after the same bounds check the `asm!`
//! relies on, and compared with the portable implementations on random
//! shapes, edge sizes included. Under Miri as well (docs/robustness.md).

extern crate std;
use std::{vec, vec::Vec};

use super::kernels::Taps;
use super::mac::{dw_row_bounds, Mac, Scalar};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn i8s(&mut self, n: usize) -> Vec<i8> {
        (0..n).map(|_| self.next() as i8).collect()
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
fn thumb2_dw_row_equivalent_matches_portable() {
    let mut r = Rng(0xa5a5_1234);
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

#[test]
fn thumb2_dot_2x2_rows_equivalent_matches_portable() {
    let mut r = Rng(0x7777_0001);
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

/// The `unsafe` pointer reads of `depthwise_mult1` (interior pixels read
/// four channels through `at4` without bounds checks) are reached only with
/// more taps than the packed depthwise path takes (> 36): a 7×7 kernel here,
/// against a plain reference, interior and border pixels, dilation 1 and 2.
#[test]
fn depthwise_mult1_pointer_path_matches_reference() {
    use super::{depthwise_conv_s8, ConvQuant, Nhwc, Window};
    let mut r = Rng(0x0d0d_7777);
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
