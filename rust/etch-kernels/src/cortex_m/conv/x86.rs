//! [`ConvMac`] for x86-64 hosts: the pointwise layer as SSE2 matrix
//! products ([`pointwise`]: four output channels at a time, `PMADDWD` over
//! int16-widened rows, see [`super::super::x86`]); [`Scalar`]'s building
//! blocks for everything else.
#![cfg_attr(feature = "dsp", allow(dead_code))]

use super::super::common::{init, row, ConvOperands};
mod avx2;

use super::super::isa::x86::avx2 as avx2_isa;
use super::super::isa::x86::{
    add32, dot4, dot8, finish4, pack4, pack8, zero, Rq4, MAX_LEN, PACK_WORDS,
};
use super::super::isa::{Scalar, X86};
use super::super::requant::Requant;
use super::super::BAD;
use super::ConvMac;
use crate::error::{KernelError, KernelResult};

impl ConvMac for X86 {
    const PACKED_POINTWISE: bool = <Scalar as ConvMac>::PACKED_POINTWISE;
    const PACK_WORDS: usize = <Scalar as ConvMac>::PACK_WORDS;
    const ROWS: bool = <Scalar as ConvMac>::ROWS;

    #[inline(always)]
    fn pointwise_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<KernelResult> {
        if avx2_isa::detected() {
            // SAFETY: the CPU runs AVX2 (detected), all `avx2::pointwise`
            // requires.
            if let Some(done) = unsafe { avx2::pointwise(ops, output) } {
                return Some(done);
            }
        }
        pointwise(ops, output)
    }

    conv_blocks_from!(Scalar: dot_1x2, dot_2x2, pack4, dot_1x4, dot_1x4_rows, dot_2x2_rows);
}

/// Values `4h..4h + 4` of eight.
#[inline(always)]
fn split4<T: Copy + Default>(v: [T; 8], h: usize) -> [T; 4] {
    core::array::from_fn(|l| v.get(4 * h + l).copied().unwrap_or_default())
}

/// 1×1 convolution as `pixels × cin` by `cin × cout`: per group of four
/// output channels (a last short group repeats its last channel and drops
/// the copies) their weight rows widened once ([`pack4`], 2 KiB of stack),
/// then every pixel's row against them ([`dot4`]) and one requantization
/// per four outputs. `None` (the generic loops run) for rows longer than
/// [`MAX_LEN`].
#[inline(never)]
pub(crate) fn pointwise(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q, filter) = (&ops.g, &ops.q, ops.filter);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    if cin == 0 || cin > MAX_LEN || cout == 0 {
        return None;
    }
    let (mut packed, mut packed_hi) = ([zero(); PACK_WORDS], [zero(); PACK_WORDS]);
    Some((|| {
        let input = ops.input.get(..pixels * cin).ok_or(BAD)?;
        let output = output.get_mut(..pixels * cout).ok_or(BAD)?;
        let packed = packed.get_mut(..8 * cin.div_ceil(16)).ok_or(BAD)?;
        let packed_hi = packed_hi.get_mut(..8 * cin.div_ceil(16)).ok_or(BAD)?;
        let mut oc = 0;
        while cout - oc >= 8 {
            // Eight channels per pass when all eight requantize in vector form.
            let (mut init8, mut mult8, mut shift8) = ([0i32; 8], [0i32; 8], [0i32; 8]);
            for l in 0..8 {
                let c = oc + l;
                init8[l] = init(ops.bias, c, q.input_offset, row(filter, c * cin, cin)?);
                mult8[l] = *ops.mult.get(c).ok_or(BAD)?;
                shift8[l] = *ops.shift.get(c).ok_or(BAD)?;
            }
            let (Some(rq0), Some(rq1)) = (
                Rq4::new(q, split4(mult8, 0), split4(shift8, 0)),
                Rq4::new(q, split4(mult8, 1), split4(shift8, 1)),
            ) else {
                break;
            };
            let rows = |h: usize| -> Result<[&[i8]; 4], KernelError> {
                let at = |l: usize| row(filter, (oc + 4 * h + l) * cin, cin);
                Ok([at(0)?, at(1)?, at(2)?, at(3)?])
            };
            pack4(rows(0)?, packed);
            pack4(rows(1)?, packed_hi);
            let (i0, i1) = (
                bytemuck::cast(split4(init8, 0)),
                bytemuck::cast(split4(init8, 1)),
            );
            for (x, o) in input.chunks_exact(cin).zip(output.chunks_exact_mut(cout)) {
                let (a0, a1) = dot8(x, packed, packed_hi);
                let v = rq0.clamp16_2(rq0.offset(add32(a0, i0)), rq1.offset(add32(a1, i1)));
                let v = pack8(v);
                *<&mut [i8; 8]>::try_from(o.get_mut(oc..oc + 8).ok_or(BAD)?).map_err(|_| BAD)? = v;
            }
            oc += 8;
        }
        while oc < cout {
            let n = 4.min(cout - oc);
            let ch = |l: usize| oc + l.min(n - 1);
            let rows = [
                row(filter, ch(0) * cin, cin)?,
                row(filter, ch(1) * cin, cin)?,
                row(filter, ch(2) * cin, cin)?,
                row(filter, ch(3) * cin, cin)?,
            ];
            pack4(rows, packed);
            let (mut init4, mut mult4, mut shift4) = ([0i32; 4], [0i32; 4], [0i32; 4]);
            for l in 0..4 {
                let c = ch(l);
                init4[l] = init(ops.bias, c, q.input_offset, rows[l]);
                mult4[l] = *ops.mult.get(c).ok_or(BAD)?;
                shift4[l] = *ops.shift.get(c).ok_or(BAD)?;
            }
            let init4 = bytemuck::cast(init4);
            let outs = input.chunks_exact(cin).zip(output.chunks_exact_mut(cout));
            if let Some(rq) = Rq4::new(q, mult4, shift4) {
                for (x, o) in outs {
                    let acc = add32(dot4(x, packed), init4);
                    rq.store(acc, o.get_mut(oc..oc + n).ok_or(BAD)?);
                }
            } else {
                let req4: [Requant; 4] =
                    core::array::from_fn(|l| Requant::new(mult4[l], shift4[l]));
                let fast = req4.iter().all(Requant::is_fast);
                for (x, o) in outs {
                    let acc = add32(dot4(x, packed), init4);
                    finish4(q, acc, &req4, fast, o.get_mut(oc..oc + n).ok_or(BAD)?);
                }
            }
            oc += 4;
        }
        Ok(())
    })())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::super::testutil::*;
    use super::super::super::{ConvQuant, Window};
    use super::super::{conv_with, CONV_SCRATCH_WORDS};
    use super::*;
    use std::{vec, vec::Vec};

    /// Values of one operand: random, or all at one extreme.
    fn values(r: &mut Rng, n: usize, kind: u64) -> Vec<i8> {
        match kind % 4 {
            0 => vec![-128; n],
            1 => vec![127; n],
            _ => r.i8s(n),
        }
    }

    /// The SSE2 pointwise layer and the scalar loops on the same operands:
    /// every input width up to three vectors and beyond (every remainder of
    /// 16 and 8), odd and short output channel counts, extreme zero
    /// points, extreme values, slow and fast requantization, narrow
    /// activation ranges.
    #[test]
    fn sse2_pointwise_equals_scalar() {
        let mut r = Rng(0x8664);
        let widths = (1..=49).chain([63, 64, 65, 127, 128, 200, 255, 256]);
        for cin in widths {
            for case in 0..6u64 {
                let cout = [1, 2, 3, 4, 5, 7, 8, 9, 64][r.range(0, 8) as usize];
                let g = geometry(
                    (r.range(1, 5) as usize, r.range(1, 4) as usize, cin),
                    cout,
                    (1, 1),
                    (1, 1),
                    (0, 0),
                );
                let zp_in = [-128, 127, 0, r.range(-128, 127) as i32][case as usize % 4];
                let zp_out = [-128, 127, r.range(-128, 127) as i32][r.range(0, 2) as usize];
                let q = ConvQuant {
                    input_offset: -zp_in,
                    output_offset: zp_out,
                    act_min: if case == 5 { zp_out.min(100) } else { -128 },
                    act_max: if case == 4 { zp_out.max(-100) } else { 127 },
                };
                let kind = r.next();
                let x = values(&mut r, g.input.elements().unwrap(), kind);
                let kind = case + 2 * r.range(0, 1) as u64;
                let w = values(&mut r, cout * cin, kind);
                let (mut mult, mut shift, bias) = quant_params(&mut r, cout);
                if case == 3 {
                    // Not the fast requantization: no right shift, or a
                    // negative multiplier.
                    shift[0] = 0;
                    mult[cout - 1] = -mult[cout - 1];
                }
                let run = |f: &dyn Fn(&mut [i8])| {
                    let mut out = vec![0i8; g.output.elements().unwrap()];
                    f(&mut out);
                    out
                };
                let ops = ConvOperands::new(g, q, &x, &w, Some(&bias), &mult, &shift);
                let want = run(&|o| {
                    let mut s = vec![0u64; CONV_SCRATCH_WORDS];
                    conv_with::<Scalar>(&g, &q, &x, &w, Some(&bias), &mult, &shift, o, &mut s)
                        .unwrap()
                });
                let got = run(&|o| pointwise(&ops, o).unwrap().unwrap());
                assert_eq!(got, want, "cin {cin} cout {cout} case {case}");
                let via = run(&|o| {
                    let mut s = vec![0u64; CONV_SCRATCH_WORDS];
                    conv_with::<X86>(&g, &q, &x, &w, Some(&bias), &mult, &shift, o, &mut s).unwrap()
                });
                assert_eq!(via, want, "cin {cin} cout {cout} case {case} (dispatch)");
            }
        }
    }

    /// Rows longer than the packed buffer are refused (the generic loops
    /// take them); a short output is an error, not a panic.
    #[test]
    fn sse2_pointwise_refuses_what_it_cannot_run() {
        let mut r = Rng(7);
        let g = geometry((2, 2, MAX_LEN + 1), 4, (1, 1), (1, 1), (0, 0));
        let q = ConvQuant {
            input_offset: 0,
            output_offset: 0,
            act_min: -128,
            act_max: 127,
        };
        let x = r.i8s(g.input.elements().unwrap());
        let w = r.i8s(4 * (MAX_LEN + 1));
        let (mult, shift, bias) = quant_params(&mut r, 4);
        let ops = ConvOperands::new(g, q, &x, &w, Some(&bias), &mult, &shift);
        assert!(pointwise(&ops, &mut [0; 16]).is_none());
        let g: Window = geometry((2, 2, 8), 4, (1, 1), (1, 1), (0, 0));
        let ops = ConvOperands::new(g, q, &x[..32], &w[..32], Some(&bias), &mult, &shift);
        assert_eq!(pointwise(&ops, &mut [0; 15]).unwrap(), Err(BAD));
    }
}
