//! Depthwise with one input channel (DS-CNN's first layer) on
//! [`ConvMac::pointwise_quad`]'s loop without gathering windows: the
//! input's padded rows are cut, per output column, into "column words"
//! (for output column `ox` and padded row `y`, word `j` holds padded
//! values `ox·stride + 4j ..+ 4` of row `y`; padding reads the input zero
//! point, whose offset-corrected value is 0). Output pixel `(oy, ox)`'s
//! window is then the `kh·⌈kw/4⌉` consecutive words of column `ox` from
//! padded row `oy·stride`, so each column is one `pointwise_quad` call
//! (pixels `stride·⌈kw/4⌉` words apart, outputs a row apart) against the
//! taps of four channels packed once per layer (taps `kx ≥ kw` of a word
//! weigh 0). Against [`depthwise_single_gemm`](super::depthwise_single_gemm):
//! no per-pixel gather and no repacking per block of pixels.
//!
//! Output rows run in bands whose column words fit the scratch (taps
//! repacked per band; DS-CNN's layer is one band). Taken where the dilation
//! is 1, every channel is [`Requant::is_fast`], the clamp lies inside int8
//! (a narrower one is applied after the quad loop's int8 saturation), the
//! output offset is an int8 value, the channels are whole quads and one
//! output row's column words fit (else `None`, nothing written: the
//! caller's loops).

use super::super::common::{four, take, ConvOperands};
use super::super::conv::{pack4_sums, ConvMac, QuadRows, PB};
use super::super::isa::dsp::{sxtb16, sxtb16_ror8, word};
use super::super::requant::{Requant, Rq};
use super::super::BAD;
use crate::error::{KernelError, KernelResult};

/// The layer, or `None` where its conditions (module doc) do not hold.
pub(crate) fn single_columns<M: ConvMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let gr = kw.div_ceil(4);
    let groups = kh.checked_mul(gr)?;
    // Scratch: the quad loop's operands and packed taps, then column words
    // for as many output rows as fit: a band of `rows` rows reaches
    // (rows − 1)·stride + kh padded rows.
    let words = 2 * scratch.len().checked_sub(2 * PB + 4 * groups)?;
    let per_row = o.w.checked_mul(gr)?;
    let rows = (words.checked_div(per_row)?.checked_sub(kh)?)
        .checked_div(g.stride.0)?
        .checked_add(1)?
        .min(o.h);
    if !M::QUAD
        || i.c != 1
        || g.dilation != (1, 1)
        || groups == 0
        || rows == 0
        || o.c == 0
        || o.c % 4 != 0
        || q.act_min < -128
        || q.act_max > 127
        || q.act_min > q.act_max
        || !(-128..=127).contains(&q.output_offset)
        || !(-128..=127).contains(&q.input_offset.wrapping_neg())
        || ops.mult.len() != o.c
        || ops.shift.len() != o.c
        || !ops
            .mult
            .iter()
            .zip(ops.shift)
            .all(|(&m, &s)| Requant::new(m, s).is_fast())
    {
        return None;
    }
    Some(columns_layer::<M>(ops, output, scratch, rows))
}

/// The layer in bands of `band` output rows (at least 1).
fn columns_layer<M: ConvMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
    band: usize,
) -> KernelResult {
    let (g, q, filter) = (&ops.g, &ops.q, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let (gr, cout, sh) = (kw.div_ceil(4), o.c, g.stride.0);
    let ctx = take::<[i32; 4], PB>(&mut scratch)?;
    let (packed, rest) = scratch.split_at_mut_checked(4 * kh * gr).ok_or(BAD)?;
    let packed: &mut [u32] = bytemuck::try_cast_slice_mut(packed).map_err(|_| BAD)?;
    let cols: &mut [u32] = bytemuck::try_cast_slice_mut(rest).map_err(|_| BAD)?;
    let zp = q.input_offset.wrapping_neg() as i8;
    let zpw = u32::from_le_bytes([zp as u8; 4]);
    let mut r0 = 0;
    while r0 < o.n * o.h {
        // Output rows r0 .. r0 + rn of batch b (a band never spans two).
        let (Some(b), Some(oy0)) = (r0.checked_div(o.h), r0.checked_rem(o.h)) else {
            return Err(BAD);
        };
        let rn = band.min(o.h - oy0);
        // Padded rows of the band's windows, from oy0·stride.
        let hp = (rn - 1) * sh + kh;
        // Column words: column ox, band row y, word j at (ox·hp + y)·gr + j
        // (loops and checked indexing: no division, no panic path).
        let mut words = cols.iter_mut();
        for ox in 0..o.w {
            for y in oy0 * sh..oy0 * sh + hp {
                let iy = y.wrapping_sub(g.padding.0);
                let row = (b * i.h).wrapping_add(iy).wrapping_mul(i.w);
                for j in 0..gr {
                    let d = words.next().ok_or(BAD)?;
                    let ix = (ox * g.stride.1 + 4 * j).wrapping_sub(g.padding.1);
                    *d = if iy >= i.h {
                        zpw
                    } else if ix.checked_add(4).is_some_and(|e| e <= i.w)
                        && (ops.input.as_ptr().wrapping_add(row + ix) as usize).is_multiple_of(4)
                    {
                        // Four values inside the row at a word-aligned
                        // address: one `ldr`. Unaligned ones take the byte
                        // loop below, so the layer never loads a word from
                        // an unaligned address (CCR.UNALIGN_TRP:
                        // tools/ci/unaligned-trap.sh).
                        word(four(ops.input, row + ix)?)
                    } else {
                        let mut v = [zp; 4];
                        for (k, e) in v.iter_mut().enumerate() {
                            let ix = ix.wrapping_add(k);
                            if ix < i.w {
                                *e = *ops.input.get(row + ix).ok_or(BAD)?;
                            }
                        }
                        word(&v)
                    };
                }
            }
        }
        let x: &[i8] = bytemuck::cast_slice(&cols[..]);
        let rows = QuadRows {
            pixels: rn,
            xstep: 4 * sh * gr,
            ostep: o.w * cout,
        };
        let mut oc = 0;
        while oc < cout {
            pack_taps(filter, (kh, kw), cout, oc, packed)?;
            let sums = pack4_sums(packed);
            let mut init = [0i32; 4];
            let mut req: [Rq; 4] = [[0; 2]; 4];
            for l in 0..4 {
                let c = oc + l;
                init[l] = ops
                    .bias
                    .and_then(|b| b.get(c).copied())
                    .unwrap_or(0)
                    .wrapping_add(q.input_offset.wrapping_mul(sums[l]));
                req[l] = Requant::new(*ops.mult.get(c).ok_or(BAD)?, *ops.shift.get(c).ok_or(BAD)?)
                    .to_words(q.output_offset);
            }
            for ox in 0..o.w {
                let xs = x.get(4 * ox * hp * gr..).ok_or(BAD)?;
                let out = output.get_mut((r0 * o.w + ox) * cout + oc..).ok_or(BAD)?;
                M::pointwise_quad(xs, packed, init, &req, out, &rows, ctx)?;
            }
            oc += 4;
        }
        r0 += rn;
    }
    // A narrower clamp than int8's (the quad loop saturates to int8 only).
    if (q.act_min, q.act_max) != (-128, 127) {
        for v in output.iter_mut() {
            *v = (*v as i32).max(q.act_min).min(q.act_max) as i8;
        }
    }
    Ok(())
}

/// Channels `oc..oc + 4`'s taps in [`ConvMac::pack4`]'s layout, one group
/// per kernel row and word `j` (taps `4j..4j + 4` of the row; those at
/// `kx ≥ kw` weigh 0): per tap one word of the four channels (weights are
/// `[1, KH, KW, C_out]`), transposed into each channel's int16 pairs (taps
/// 0,2 and 1,3).
fn pack_taps(
    filter: &[i8],
    (kh, kw): (usize, usize),
    cout: usize,
    oc: usize,
    packed: &mut [u32],
) -> Result<(), KernelError> {
    let lo = |x: u32, y: u32| (x & 0xffff) | (y << 16);
    let hi = |x: u32, y: u32| (x >> 16) | (y & 0xffff_0000);
    let mut groups = packed.as_chunks_mut::<8>().0.iter_mut();
    for (ky, j) in (0..kh).flat_map(|ky| (0..kw.div_ceil(4)).map(move |j| (ky, j))) {
        let o = groups.next().ok_or(BAD)?;
        let mut t = [0u32; 4];
        for (k, t) in t.iter_mut().enumerate() {
            let kx = 4 * j + k;
            if kx < kw {
                *t = word(four(filter, (ky * kw + kx) * cout + oc)?);
            }
        }
        let [a, b, c, d] = t;
        let (ae, ao, be, bo) = (sxtb16(a), sxtb16_ror8(a), sxtb16(b), sxtb16_ror8(b));
        let (ce, co, de, dd) = (sxtb16(c), sxtb16_ror8(c), sxtb16(d), sxtb16_ror8(d));
        *o = [
            lo(ae, ce),
            lo(be, de),
            lo(ao, co),
            lo(bo, dd),
            hi(ae, ce),
            hi(be, de),
            hi(ao, co),
            hi(bo, dd),
        ];
    }
    Ok(())
}
