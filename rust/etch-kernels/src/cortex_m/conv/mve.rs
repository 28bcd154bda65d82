//! [`ConvMac`] for Helium: the pointwise layer as MVE matrix products
//! ([`gemm_x4`]: 16-lane `VMLADAVA.S8`, CMSIS-NN's kernel sums and vector
//! requantization), [`Dsp`]'s building blocks for everything else.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::common::{row, wsum, ConvOperands};
use super::super::isa::mve::{gemm_x4, sum_s8, GroupConsts};
use super::super::isa::{Dsp, Mve};
use super::super::BAD;
use super::ConvMac;
use crate::error::KernelResult;

impl ConvMac for Mve {
    const PACKED_POINTWISE: bool = true;

    #[inline(always)]
    fn pointwise_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        pointwise(ops, output, scratch)
            .or_else(|| pointwise_narrow(ops, output))
            .or_else(|| super::im2col_mve::pointwise_rows(ops, output))
    }

    #[inline(always)]
    fn fc_layer(
        p: &super::super::FcParams<'_>,
        input: &[i8],
        weights: &[i8],
        in_features: usize,
        out_features: usize,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        super::im2col_mve::fc_layer(p, input, weights, in_features, out_features, output).or_else(
            || {
                super::super::fully_connected::fc_input_offset(
                    p,
                    input,
                    weights,
                    in_features,
                    out_features,
                    output,
                    scratch,
                )
            },
        )
    }

    #[inline(always)]
    fn conv_layer(
        ops: &ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        // The block loop's per-call setup (every channel's kernel sum and
        // packed weights) pays from a few hundred pixels on: ResNet-8's
        // last shortcut (8x8 outputs, 64 channels) ran 20 % slower in it.
        let o = ops.g.output;
        let block = if o.n * o.h * o.w >= BLOCK_MIN_PIXELS {
            super::im2col_mve::conv_block(ops, output, scratch)
        } else {
            None
        };
        block
            .or_else(|| super::im2col_mve::conv_layer(ops, output, scratch))
            .or_else(|| super::im2col_dsp::conv_layer(ops, output, scratch))
    }

    conv_blocks_from!(Dsp: dot_1x2, dot_2x2, dot_1x4);
}

/// Fewest output pixels for which [`ConvMac::conv_layer`] takes the block
/// loop (`im2col_mve::conv_block`).
const BLOCK_MIN_PIXELS: usize = 128;

/// The per-group constants of output channels `oc..oc + 4` (weight rows
/// `rows`) into `c`, or `None` when one channel's requantization is
/// outside what the vector loop reproduces ([`GroupConsts::neg_right`]).
/// Written in place: returned by value (`Option<Result<GroupConsts>>`),
/// each group paid three `memcpy` calls of about 100 bytes, ~1,000
/// instructions (MobileNetV1's pointwise layers: ~370 k per inference).
/// Inlined: out of line (two callers) the packed path took 27 k
/// instructions more per 128-channel layer.
#[inline(always)]
pub(crate) fn group_consts(
    ops: &ConvOperands<'_>,
    oc: usize,
    rows: [&[i8]; 4],
    c: &mut GroupConsts,
) -> Option<KernelResult> {
    let q = &ops.q;
    c.out_offset = [q.output_offset; 4];
    c.act_min = [q.act_min; 4];
    c.act_max = [q.act_max; 4];
    for (l, r) in rows.iter().enumerate() {
        let (Some(&m), Some(&s)) = (ops.mult.get(oc + l), ops.shift.get(oc + l)) else {
            return Some(Err(BAD));
        };
        c.neg_right[l] = GroupConsts::neg_right(m, s)?;
        c.mult[l] = m;
        let b = ops.bias.and_then(|b| b.get(oc + l).copied()).unwrap_or(0);
        // Rows of whole vectors (every pointwise row): `VADDVA`.
        let sum = sum_s8(r).unwrap_or_else(|_| wsum(r));
        c.kernel_sum[l] = b.wrapping_add(q.input_offset.wrapping_mul(sum));
    }
    Some(Ok(()))
}

/// 1×1 convolution as `pixels × cin` by `cin × cout`: four output channels
/// per pass with their weight rows interleaved in chunks of 16 (in the
/// kernel scratch, [`pack_rows4`]), every pixel against them in one
/// [`gemm_x4`] loop. `None` (the generic loops run) unless `cin` is a
/// multiple of 16 whose four rows fit the scratch, `cout` a multiple of 4
/// and every channel's requantization admitted.
fn pointwise(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, filter) = (&ops.g, ops.filter);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    if cin == 0 || cin % 16 != 0 || 4 * cin > 8 * scratch.len() || cout % 4 != 0 || pixels == 0 {
        return None;
    }
    // Admitted first, so that a refused channel leaves the output untouched.
    for oc in 0..cout {
        let (m, s) = (*ops.mult.get(oc)?, *ops.shift.get(oc)?);
        GroupConsts::neg_right(m, s)?;
    }
    let input = ops.input.get(..pixels * cin)?;
    let buf: &mut [i8] = bytemuck::cast_slice_mut(scratch);
    Some((|| {
        let packed = buf.get_mut(..4 * cin).ok_or(BAD)?;
        let mut c = GroupConsts::default();
        for oc in (0..cout).step_by(4) {
            let rows = [
                row(filter, oc * cin, cin)?,
                row(filter, (oc + 1) * cin, cin)?,
                row(filter, (oc + 2) * cin, cin)?,
                row(filter, (oc + 3) * cin, cin)?,
            ];
            pack_rows4(rows, packed)?;
            group_consts(ops, oc, rows, &mut c).ok_or(BAD)??;
            let out = output.get_mut(oc..).ok_or(BAD)?;
            gemm_x4(input, cin / 16, packed, &c, pixels, out, cout)?;
        }
        Ok(())
    })())
}

/// 1×1 convolution with fewer than 16 input channels that divide 16
/// (VWW's first pointwise layer: 8): `16 / cin` consecutive pixels make
/// one 16-byte row of the input as it lies, and [`gemm_x4`] runs over
/// those rows once per sub-pixel `s`, with the four weight rows in lanes
/// `s·cin .. (s + 1)·cin` (zeros elsewhere) and outputs `16 / cin` pixels
/// apart. `None` (the per-pixel row passes run) unless the pixels fill
/// whole rows, `cout` is a multiple of 4 and every channel's
/// requantization is admitted. Out of line: inlined, it changed how the
/// packed path above was compiled (+27 k instructions per 128-channel layer).
#[inline(never)]
pub(super) fn pointwise_narrow(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, filter) = (&ops.g, ops.filter);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    if cin == 0 || cin >= 16 || 16 % cin != 0 || cout % 4 != 0 || pixels == 0 {
        return None;
    }
    let sub = 16 / cin;
    if pixels % sub != 0 {
        return None;
    }
    for oc in 0..cout {
        let (m, s) = (*ops.mult.get(oc)?, *ops.shift.get(oc)?);
        GroupConsts::neg_right(m, s)?;
    }
    let input = ops.input.get(..pixels * cin)?;
    let mut c = GroupConsts::default();
    let mut packed = [0i8; 64];
    Some((|| {
        for oc in (0..cout).step_by(4) {
            let rows = [
                row(filter, oc * cin, cin)?,
                row(filter, (oc + 1) * cin, cin)?,
                row(filter, (oc + 2) * cin, cin)?,
                row(filter, (oc + 3) * cin, cin)?,
            ];
            group_consts(ops, oc, rows, &mut c).ok_or(BAD)??;
            for s in 0..sub {
                packed.fill(0);
                for (l, r) in rows.iter().enumerate() {
                    let at = 16 * l + s * cin;
                    // Element by element: `copy_from_slice` keeps a
                    // length-mismatch panic (fewer than 16 values).
                    let d = packed.get_mut(at..at + cin).ok_or(BAD)?;
                    for (d, &v) in d.iter_mut().zip(*r) {
                        *d = v;
                    }
                }
                let out = output.get_mut(s * cout + oc..).ok_or(BAD)?;
                gemm_x4(input, 1, &packed, &c, pixels / sub, out, sub * cout)?;
            }
        }
        Ok(())
    })())
}

/// The four weight rows (`K` values each, `K` a multiple of 16) in
/// [`gemm_x4`]'s layout: chunk `j` of row `l` at `dst[64j + 16l ..]`; on
/// Helium one load and one store per chunk (a `copy_from_slice` per chunk
/// called `memcpy`, about 40 instructions each).
///
/// Errors unless the rows have one length `K`, a non-zero multiple of 16,
/// and `dst` holds `4K` values.
#[inline(always)]
pub(crate) fn pack_rows4(rows: [&[i8]; 4], dst: &mut [i8]) -> KernelResult {
    let k = rows[0].len();
    if k == 0 || !k.is_multiple_of(16) || rows.iter().any(|r| r.len() != k) || dst.len() < 4 * k {
        return Err(BAD);
    }
    #[cfg(all(target_arch = "arm", feature = "mve"))]
    // SAFETY: checked above: pass j (j < K/16) reads rows[l][16j .. 16j +
    // 16] for l < 4 and writes dst[64j .. 64j + 64]. No stack; q0, lr and
    // flags are clobbered and declared.
    unsafe {
        core::arch::asm!(
            "dls lr, {n}",
            "2:",
            "vldrb.u8 q0, [{a}], #16",
            "vstrb.8 q0, [{d}], #16",
            "vldrb.u8 q0, [{b}], #16",
            "vstrb.8 q0, [{d}], #16",
            "vldrb.u8 q0, [{c}], #16",
            "vstrb.8 q0, [{d}], #16",
            "vldrb.u8 q0, [{e}], #16",
            "vstrb.8 q0, [{d}], #16",
            "le lr, 2b",
            n = in(reg) k / 16,
            a = inout(reg) rows[0].as_ptr() => _,
            b = inout(reg) rows[1].as_ptr() => _,
            c = inout(reg) rows[2].as_ptr() => _,
            e = inout(reg) rows[3].as_ptr() => _,
            d = inout(reg) dst.as_mut_ptr() => _,
            out("lr") _,
            out("d0") _, out("d1") _,
            options(nostack),
        );
    }
    #[cfg(not(all(target_arch = "arm", feature = "mve")))]
    for (j, chunk) in dst.chunks_exact_mut(64).take(k / 16).enumerate() {
        for (l, d) in chunk.chunks_exact_mut(16).enumerate() {
            d.copy_from_slice(&rows[l][16 * j..16 * j + 16]);
        }
    }
    Ok(())
}
