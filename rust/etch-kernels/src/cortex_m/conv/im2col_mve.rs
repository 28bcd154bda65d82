//! [`super::im2col`] on Helium: one gathered window against four weight
//! rows per `asm!` pass (16-lane `VMLADAVA.S8` in a tail-predicated loop,
//! so any `K`), with CMSIS-NN's vector requantization
//! (`arm_requantize_mve`) on the four sums. Off-target (host tests) the
//! same pass is plain Rust from the instructions' definitions.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::common::wsum;
use super::super::common::{row, runs, runs_mut, ConvOperands};
use super::super::isa::mve::{div_ceil, gemm_x4, sum_s8, GroupConsts};
use super::super::{FcEncoding, FcParams, BAD};
use super::im2col::{gather, split_scratch, Pixel};
use crate::error::{KernelError, KernelResult};
use core::num::NonZeroUsize;

/// 32-bit words of one channel group's constants ([`GroupConsts`]).
const GROUP_WORDS: usize = 24;

/// Any convolution with `cout` a multiple of 4 and every channel's
/// requantization one the vector loop reproduces
/// ([`GroupConsts::neg_right`]): per output pixel, its window gathered
/// ([`gather`]), then one [`row_x4`] pass per four output channels. `None`
/// (the caller's loops run) otherwise, or when the groups' constants and one
/// window do not fit `scratch`.
pub(crate) fn conv_layer(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let cout = g.output.c;
    if cout == 0 || !cout.is_multiple_of(4) {
        return None;
    }
    for oc in 0..cout {
        GroupConsts::neg_right(*ops.mult.get(oc)?, *ops.shift.get(oc)?)?;
    }
    // GROUP_WORDS / 4 words per channel.
    let (consts, x) = split_scratch(ops, scratch, GROUP_WORDS / 4, 1)?;
    Some((|| {
        let k = x.len();
        // Kernel sums into the first lane block of each group, then the rest.
        for (gi, c) in consts
            .as_chunks_mut::<GROUP_WORDS>()
            .0
            .iter_mut()
            .enumerate()
        {
            let oc = 4 * gi;
            kernel_sums_at(ops, k, oc, c)?;
            for l in 0..4 {
                c[4 + l] = *ops.mult.get(oc + l).ok_or(BAD)?;
                c[8 + l] = *ops.shift.get(oc + l).ok_or(BAD)?;
                c[12 + l] = q.output_offset;
                c[16 + l] = q.act_min;
                c[20 + l] = q.act_max;
            }
        }
        let zp = q.input_offset.wrapping_neg() as i8;
        let (oh, ow) = (g.output.h, g.output.w);
        let pixels = g.output.n * oh * ow;
        let mut px = Pixel::FIRST;
        for p in 0..pixels {
            gather(ops, px, zp, x)?;
            px = px.next(oh, ow);
            let out = output.get_mut(p * cout..(p + 1) * cout).ok_or(BAD)?;
            rows_x4(x, ops.filter, consts, out)?;
        }
        Ok(())
    })())
}

/// Most 16-value chunks of a window whose weights [`conv_block`] packs
/// once per call for every group (`K ≤ 64`); larger windows (a multiple of
/// 16) are packed per block and group.
const BLOCK_MAX_CHUNKS: usize = 4;

/// Fewest windows per block when the weights are packed per block.
const BLOCK_MIN_REPACKED: usize = 8;

/// A convolution with small windows (`K = kh·kw·cin ≤ 64`: the first
/// layers of VWW and ResNet-8, 3×3 over 3 channels; 1×1 strided
/// shortcuts) as [`gemm_x4`] over blocks of gathered windows: each window
/// one row of `16·⌈K/16⌉` values (lanes past `K` stay 0 and weigh 0),
/// interior windows copied a kernel row at a time, border windows through
/// [`gather`] (padding taps = the input zero point), then per four output
/// channels one matrix-product loop over the block with the weights
/// packed once per call. Kernel sums and packed weights live in the
/// scratch before the block. `None` (the per-pixel loops run) unless `cout`
/// is a multiple of 4, the window fits, the zero point is an int8 value,
/// a block of at least four windows fits and every channel's
/// requantization is admitted.
#[inline(never)]
pub(crate) fn conv_block(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let (cin, cout) = (i.c, o.c);
    let k = kh.checked_mul(kw)?.checked_mul(cin)?;
    let kc = k.div_ceil(16);
    // Non-zero by type: the division below has no panic path.
    let sx_nz = NonZeroUsize::new(g.stride.1)?;
    if k == 0 || cout == 0 || !cout.is_multiple_of(4) || !(-127..=128).contains(&q.input_offset) {
        return None;
    }
    let groups = cout / 4;
    let rowlen = 16 * kc;
    // Scratch words: kernel sums (cout i32), packed weights (64·kc bytes a
    // group: every group's when K ≤ 64, else one group's, repacked per
    // block), then the block of windows.
    let repack = kc > BLOCK_MAX_CHUNKS;
    if repack && !k.is_multiple_of(16) {
        return None;
    }
    let (sw, pw) = (cout.div_ceil(2), 8 * kc * if repack { 1 } else { groups });
    let block = (scratch.len().checked_sub(sw + pw)? * 8).checked_div(rowlen)?;
    if block < if repack { BLOCK_MIN_REPACKED } else { 4 } {
        return None;
    }
    for oc in 0..cout {
        GroupConsts::neg_right(*ops.mult.get(oc)?, *ops.shift.get(oc)?)?;
    }
    Some((|| {
        let (sums, rest) = scratch.split_at_mut_checked(sw).ok_or(BAD)?;
        let (pk, rows) = rest.split_at_mut_checked(pw).ok_or(BAD)?;
        let sums: &mut [i32] = bytemuck::cast_slice_mut(sums);
        let pk: &mut [i8] = bytemuck::cast_slice_mut(pk);
        let rows: &mut [i8] = bytemuck::cast_slice_mut(rows);
        let rows = rows.get_mut(..block * rowlen).ok_or(BAD)?;
        rows.fill(0);
        pk.fill(0);
        for oc in 0..cout {
            let w = row(ops.filter, oc * k, k)?;
            *sums.get_mut(oc).ok_or(BAD)? = init(ops.bias, oc, q.input_offset, w);
            if repack {
                continue;
            }
            // Group oc/4, lane oc%4: chunk j of the row at 64j + 16·lane.
            let base = 64 * kc * (oc / 4) + 16 * (oc % 4);
            for (j, part) in w.chunks(16).enumerate() {
                let at = base + 64 * j;
                // Element by element: `copy_from_slice` keeps a
                // length-mismatch panic.
                let d = pk.get_mut(at..at + part.len()).ok_or(BAD)?;
                for (d, &v) in d.iter_mut().zip(part) {
                    *d = v;
                }
            }
        }
        let zp = q.input_offset.wrapping_neg() as i8;
        let ((sy, _), (dy, dx), (pt, pl)) = (g.stride, g.dilation, g.padding);
        let sx = sx_nz.get();
        // Windows wholly inside start before these positions (wrapped
        // padding positions are huge and fail the test too).
        let (lim_y, lim_x) = (
            i.h.saturating_sub((kh - 1) * dy),
            i.w.saturating_sub((kw - 1) * dx),
        );
        let run = kw * cin;
        // Output columns from x_hi on have windows past the input's right edge.
        let x_hi = div_ceil(lim_x.saturating_add(pl), sx_nz);
        let pixels = o.n * o.h * o.w;
        let mut px = Pixel::FIRST;
        let mut p0 = 0;
        // Set up once: each group below writes every lane of its own three
        // (a fresh one per group cost a 48-byte `memclr` each).
        let mut c = GroupConsts {
            out_offset: [q.output_offset; 4],
            act_min: [q.act_min; 4],
            act_max: [q.act_max; 4],
            ..GroupConsts::default()
        };
        while p0 < pixels {
            let pn = block.min(pixels - p0);
            let mut n = 0;
            while n < pn {
                let y0 = (px.y * sy).wrapping_sub(pt);
                let x0 = (px.x * sx).wrapping_sub(pl);
                if dx == 1 && y0 < lim_y && x0 < lim_x {
                    // The interior windows left in this output row (and
                    // block), one call: x0 < lim_x while x < x_hi.
                    let count = x_hi.min(o.w).saturating_sub(px.x).min(pn - n).max(1);
                    let at = ((px.b * i.h + y0) * i.w + x0) * cin;
                    let dst = rows.get_mut(n * rowlen..).ok_or(BAD)?;
                    let (step, stride) = (sx * cin, dy * i.w * cin);
                    copy_windows(ops.input, at, step, count, stride, kh, run, dst, rowlen)?;
                    px.x += count - 1;
                    n += count;
                } else {
                    let dst = rows.get_mut(n * rowlen..n * rowlen + k).ok_or(BAD)?;
                    gather(ops, px, zp, dst)?;
                    n += 1;
                }
                px = px.next(o.h, o.w);
            }
            let x = rows.get(..pn * rowlen).ok_or(BAD)?;
            for gi in 0..groups {
                let oc = 4 * gi;
                for l in 0..4 {
                    let (m, sh) = (
                        *ops.mult.get(oc + l).ok_or(BAD)?,
                        *ops.shift.get(oc + l).ok_or(BAD)?,
                    );
                    c.mult[l] = m;
                    c.neg_right[l] = GroupConsts::neg_right(m, sh).ok_or(BAD)?;
                    c.kernel_sum[l] = *sums.get(oc + l).ok_or(BAD)?;
                }
                let w = if repack {
                    let rows = [
                        row(ops.filter, oc * k, k)?,
                        row(ops.filter, (oc + 1) * k, k)?,
                        row(ops.filter, (oc + 2) * k, k)?,
                        row(ops.filter, (oc + 3) * k, k)?,
                    ];
                    super::mve::pack_rows4(rows, pk)?;
                    &pk[..]
                } else {
                    pk.get(64 * kc * gi..64 * kc * (gi + 1)).ok_or(BAD)?
                };
                let out = output.get_mut(p0 * cout + oc..).ok_or(BAD)?;
                gemm_x4(x, kc, w, &c, pn, out, cout)?;
            }
            p0 += pn;
        }
        Ok(())
    })())
}

/// `count` interior windows of [`conv_block`] copied into its block:
/// window `w` is `rows` runs of `run` bytes, `input[at + w·step + r·stride
/// ..]`, back to back at `dst[w·rowlen ..]`. Bounds are checked once for
/// all windows; on Helium each run is one predicated load and store (up to
/// 16 bytes) or a tail-predicated loop.
///
/// Errors unless `count, rows, run ≥ 1`, `rows·run ≤ rowlen`, the last
/// window's last run ends inside `input` and `dst` holds `(count − 1)·rowlen
/// + rows·run` bytes.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn copy_windows(
    input: &[i8],
    at: usize,
    step: usize,
    count: usize,
    stride: usize,
    rows: usize,
    run: usize,
    dst: &mut [i8],
    rowlen: usize,
) -> KernelResult {
    let end = count
        .checked_sub(1)
        .and_then(|w| w.checked_mul(step))
        .zip(rows.checked_sub(1).and_then(|r| r.checked_mul(stride)))
        .and_then(|(a, b)| a.checked_add(b))
        .and_then(|v| v.checked_add(at))
        .and_then(|v| v.checked_add(run));
    let win = rows.checked_mul(run);
    let dst_end = count
        .checked_sub(1)
        .and_then(|w| w.checked_mul(rowlen))
        .zip(win)
        .and_then(|(a, b)| a.checked_add(b));
    if run == 0
        || end.is_none_or(|e| e > input.len())
        || win.is_none_or(|n| n > rowlen)
        || dst_end.is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    for w in 0..count {
        let (src, d) = (at + w * step, w * rowlen);
        #[cfg(all(target_arch = "arm", feature = "mve"))]
        if run > 16 {
            // SAFETY: checked above for every window: run r (r < rows ≥ 1)
            // of window w reads input[at + w·step + r·stride ..][..run] and
            // writes dst[w·rowlen + r·run ..][..run] (the tail-predicated
            // loop touches exactly `run` bytes from each start; the
            // pointers are reset per run). No stack; q0, lr and flags are
            // clobbered and declared.
            unsafe {
                core::arch::asm!(
                    "1:",
                    "mov {t}, {s}",
                    "mov {u}, {d}",
                    "mov lr, {run}",
                    "dlstp.8 lr, lr",
                    "2:",
                    "vldrb.u8 q0, [{t}], #16",
                    "vstrb.8 q0, [{u}], #16",
                    "letp lr, 2b",
                    "add {s}, {s}, {stride}",
                    "add {d}, {d}, {run}",
                    "subs {rows}, {rows}, #1",
                    "bne 1b",
                    run = in(reg) run,
                    rows = inout(reg) rows => _,
                    stride = in(reg) stride,
                    s = inout(reg) input.as_ptr().add(src) => _,
                    d = inout(reg) dst.as_mut_ptr().add(d) => _,
                    t = out(reg) _,
                    u = out(reg) _,
                    out("lr") _,
                    out("d0") _, out("d1") _,
                    options(nostack),
                );
            }
            continue;
        }
        #[cfg(all(target_arch = "arm", feature = "mve"))]
        // SAFETY: checked above for every window, and 1 ≤ run ≤ 16 here:
        // run r (r < rows ≥ 1) of window w reads input[at + w·step +
        // r·stride ..][..run] and writes dst[w·rowlen + r·run ..][..run];
        // lanes past `run` are predicated off (VCTP) and touch no memory.
        // No stack; q0, lr, the predicate and flags are clobbered and
        // declared.
        unsafe {
            core::arch::asm!(
                "vctp.8 {run}",
                "dls lr, {rows}",
                "2:",
                "vpstt",
                "vldrbt.u8 q0, [{s}]",
                "vstrbt.8 q0, [{d}]",
                "add {s}, {s}, {stride}",
                "add {d}, {d}, {run}",
                "le lr, 2b",
                run = in(reg) run,
                rows = in(reg) rows,
                stride = in(reg) stride,
                s = inout(reg) input.as_ptr().add(src) => _,
                d = inout(reg) dst.as_mut_ptr().add(d) => _,
                out("lr") _,
                out("d0") _, out("d1") _,
                options(nostack),
            );
        }
        #[cfg(not(all(target_arch = "arm", feature = "mve")))]
        for (r, o) in dst[d..].chunks_exact_mut(run).take(rows).enumerate() {
            o.copy_from_slice(&input[src + r * stride..src + r * stride + run]);
        }
    }
    Ok(())
}

/// A pointwise (1×1, stride 1, unpadded) layer that the packed-weight
/// path (`super::mve`'s `pointwise`: `cin` a multiple of 16 up to
/// `PACK_IC`) does not take: every pixel row is its own window, so per
/// four output channels one [`rows_x4`] pass per pixel (any `cin`), the
/// group's constants on the stack. `None` unless `cout` is a multiple of 4
/// and every channel's requantization is admitted.
#[inline(never)] // its own frame: not merged into the packed path's
pub(crate) fn pointwise_rows(ops: &ConvOperands<'_>, output: &mut [i8]) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (cin, cout) = (g.input.c, g.output.c);
    let pixels = g.output.n * g.output.h * g.output.w;
    if cin == 0 || cout == 0 || !cout.is_multiple_of(4) || pixels == 0 {
        return None;
    }
    for oc in 0..cout {
        GroupConsts::neg_right(*ops.mult.get(oc)?, *ops.shift.get(oc)?)?;
    }
    Some((|| {
        let mut c = [0i32; GROUP_WORDS];
        for oc in (0..cout).step_by(4) {
            kernel_sums_at(ops, cin, oc, &mut c)?;
            for l in 0..4 {
                c[4 + l] = *ops.mult.get(oc + l).ok_or(BAD)?;
                c[8 + l] = *ops.shift.get(oc + l).ok_or(BAD)?;
                c[12 + l] = q.output_offset;
                c[16 + l] = q.act_min;
                c[20 + l] = q.act_max;
            }
            let w = row(ops.filter, oc * cin, 4 * cin)?;
            for p in 0..pixels {
                let x = row(ops.input, p * cin, cin)?;
                let o = output
                    .get_mut(p * cout + oc..p * cout + oc + 4)
                    .ok_or(BAD)?;
                rows_x4(x, w, &c, o)?;
            }
        }
        Ok(())
    })())
}

/// `arm_fully_connected_s8` on Helium for the kernel-sum encoding (what
/// cpu-M55 programs carry): per batch row and four output rows one
/// [`rows_x4`] pass (the four weight rows are contiguous), the kernel sums
/// and the per-tensor requantization as its constants. A last partial group
/// (`out_features % 4`: ResNet-8's 10-way head) runs as the last four rows
/// again, rewriting the outputs before it with the same values. `None` (the
/// caller's loops run) unless there are at least 4 output features and the
/// requantization is one the vector loop reproduces.
pub(crate) fn fc_layer(
    p: &FcParams<'_>,
    input: &[i8],
    weights: &[i8],
    in_features: usize,
    out_features: usize,
    output: &mut [i8],
) -> Option<KernelResult> {
    let (q, mult, shift) = (&p.q, p.mult, p.shift);
    let FcEncoding::KernelSum(ks) = p.encoding else {
        return None;
    };
    if in_features == 0 || out_features < 4 || ks.len() != out_features {
        return None;
    }
    let neg_right = GroupConsts::neg_right(mult, shift)?;
    let mut c = [0i32; GROUP_WORDS];
    for l in 0..4 {
        c[4 + l] = mult;
        c[8 + l] = neg_right;
        c[12 + l] = q.output_offset;
        c[16 + l] = q.act_min;
        c[20 + l] = q.act_max;
    }
    let last = out_features - 4;
    Some((|| {
        for (x, out) in runs(input, in_features).zip(runs_mut(output, out_features)) {
            for ((w, o), k) in runs(weights, 4 * in_features)
                .zip(runs_mut(out, 4))
                .zip(ks.as_chunks::<4>().0)
            {
                c[..4].copy_from_slice(k);
                rows_x4(x, w, &c, o)?;
            }
            if !out_features.is_multiple_of(4) {
                // The last four rows again (a separate loop: folded into
                // the one above, the autoencoder ran 5 k instructions more).
                let w = row(weights, last * in_features, 4 * in_features)?;
                let k: &[i32; 4] = ks.get(last..).and_then(|k| k.try_into().ok()).ok_or(BAD)?;
                c[..4].copy_from_slice(k);
                rows_x4(x, w, &c, out.get_mut(last..).ok_or(BAD)?)?;
            }
        }
        Ok(())
    })())
}

/// `bias[c] + offset·Σw` (CMSIS-NN's kernel sum), `Σw` 16 values per
/// `VADDVA` when `w` is whole vectors (every window of 16·n values: the
/// byte-at-a-time sum cost ResNet-8 about 200 k instructions per inference).
#[inline(always)]
fn init(bias: Option<&[i32]>, c: usize, offset: i32, w: &[i8]) -> i32 {
    let sum = sum_s8(w).unwrap_or_else(|_| wsum(w));
    bias.and_then(|b| b.get(c).copied())
        .unwrap_or(0)
        .wrapping_add(offset.wrapping_mul(sum))
}

/// Kernel sums of channels `oc..oc + 4` into `c[..4]`.
fn kernel_sums_at(ops: &ConvOperands<'_>, k: usize, oc: usize, c: &mut [i32]) -> KernelResult {
    for (l, s) in c.iter_mut().take(4).enumerate() {
        let w = row(ops.filter, (oc + l) * k, k)?;
        *s = init(ops.bias, oc + l, ops.q.input_offset, w);
    }
    Ok(())
}

/// For every group `g` of four output rows:
/// `o[4g + l] = clamp(requant(Σ_j x[j]·w[(4g + l)·K + j] + ks) + out_offset)`
/// for `l < 4`, `K = x.len()`, with `c[24g .. 24g + 24]` the group's
/// [`GroupConsts`] laid out as 24 words (kernel sums, multipliers, minus
/// the right shifts, output offsets, activation minima and maxima).
/// Errors unless `K ≥ 1` and `w`, `c` and `o` hold the same number `G ≥ 1`
/// of groups (`4GK`, `24G` and `4G` values).
#[inline(always)]
pub(crate) fn rows_x4(x: &[i8], w: &[i8], c: &[i32], o: &mut [i8]) -> KernelResult {
    let k = x.len();
    let groups = o.len() / 4;
    if k == 0
        || groups == 0
        || !o.len().is_multiple_of(4)
        || Some(w.len()) != groups.checked_mul(4 * k)
        || Some(c.len()) != groups.checked_mul(GROUP_WORDS)
    {
        return Err(KernelError::InvalidArgument);
    }
    imp::rows_x4(x, w, c, o, groups);
    Ok(())
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
mod imp {
    #[inline(always)]
    pub(super) fn rows_x4(x: &[i8], w: &[i8], c: &[i32], o: &mut [i8], groups: usize) {
        let k = x.len();
        // q7 lanes keep what the group loop needs across groups (the loop
        // itself uses every free general register): [0] x's start, [1] K,
        // [2] the next group's weights, [3] the groups left.
        let keep: [u32; 4] = [
            x.as_ptr() as u32,
            k as u32,
            w.as_ptr() as u32,
            groups as u32,
        ];
        // SAFETY: `keep` is 16 readable bytes (vldrw.u32: 4-aligned as a
        // [u32; 4]). `rows_x4` checked `K ≥ 1`, `groups ≥ 1`, `w.len() =
        // 4K·groups`, `c.len() = 24·groups` and `o.len() = 4·groups`. Group
        // g's tail-predicated loop (`DLSTP.8`/`LETP`, ceil(K/16) passes) reads
        // x[0..K] and w[(4g + l)·K ..][..K] for l < 4 (lanes past K are
        // predicated off and not accessed); its requantization reads
        // c[24g .. 24g + 24] (word-aligned: kernel scratch or a stack array of
        // i32) and `VSTRB.32` writes o[4g .. 4g + 4]. No stack; q0–q3 and q7 (d0–d7, d14–d15), the named
        // registers, lr and flags are clobbered and declared so.
        unsafe {
            core::arch::asm!(
                "vldrw.u32 q7, [r0]",
                "1:",
                "vmov.32 {x}, q7[0]",
                "vmov.32 lr, q7[1]",
                "vmov.32 {w0}, q7[2]",
                "add {w1}, {w0}, lr",
                "add {w2}, {w1}, lr",
                "add {w3}, {w2}, lr",
                "add r0, {w3}, lr",
                "vmov.32 q7[2], r0",
                "movs r0, #0",
                "movs r2, #0",
                "movs r4, #0",
                "mov r8, #0",
                "dlstp.8 lr, lr",
                "2:",
                "vldrb.u8 q0, [{x}], #16",
                "vldrb.u8 q1, [{w0}], #16",
                "vmladava.s8 r0, q0, q1",
                "vldrb.u8 q1, [{w1}], #16",
                "vmladava.s8 r2, q0, q1",
                "vldrb.u8 q1, [{w2}], #16",
                "vmladava.s8 r4, q0, q1",
                "vldrb.u8 q1, [{w3}], #16",
                "vmladava.s8 r8, q0, q1",
                "letp lr, 2b",
                // Lanes 0..3 = rows 0..3, then arm_requantize_mve as
                // super::super::isa::mve::gemm_x4 does it.
                "vmov q1[2], q1[0], r0, r4",
                "vmov q1[3], q1[1], r2, r8",
                "vldrw.u32 q3, [{c}]",
                "vadd.i32 q1, q1, q3",
                "vldrw.u32 q3, [{c}, #16]",
                "vqrdmulh.s32 q1, q1, q3",
                "vshr.s32 q0, q1, #31",
                "vqadd.s32 q1, q1, q0",
                "vldrw.u32 q3, [{c}, #32]",
                "vrshl.s32 q1, q1, q3",
                "vldrw.u32 q3, [{c}, #48]",
                "vadd.i32 q1, q1, q3",
                "vldrw.u32 q3, [{c}, #64]",
                "vmax.s32 q1, q1, q3",
                "vldrw.u32 q3, [{c}, #80]",
                "vmin.s32 q1, q1, q3",
                "adds {c}, #96",
                "vstrb.32 q1, [r1]",
                "adds r1, #4",
                "vmov.32 r0, q7[3]",
                "subs r0, #1",
                "vmov.32 q7[3], r0",
                "bne 1b",
                x = out(reg) _,
                w0 = out(reg) _,
                w1 = out(reg) _,
                w2 = out(reg) _,
                w3 = out(reg) _,
                c = inout(reg) c.as_ptr() => _,
                // A low register: the narrowing VSTRB.32 encodes Rn in 3 bits.
                inout("r1") o.as_mut_ptr() => _,
                inout("r0") keep.as_ptr() => _,
                out("r2") _, out("r4") _, out("r8") _, out("lr") _,
                out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                out("d4") _, out("d5") _, out("d6") _, out("d7") _,
                out("d14") _, out("d15") _,
                options(nostack),
            );
        }
    }
}

#[cfg(not(all(target_arch = "arm", feature = "mve")))]
mod imp {
    use super::super::super::isa::mve::{requantize_lane, GroupConsts};
    use super::GROUP_WORDS;

    pub(super) fn rows_x4(x: &[i8], w: &[i8], c: &[i32], o: &mut [i8], groups: usize) {
        let k = x.len();
        for gi in 0..groups {
            let c = &c[GROUP_WORDS * gi..GROUP_WORDS * (gi + 1)];
            let mut g = GroupConsts::default();
            g.kernel_sum.copy_from_slice(&c[..4]);
            g.mult.copy_from_slice(&c[4..8]);
            g.neg_right.copy_from_slice(&c[8..12]);
            g.out_offset.copy_from_slice(&c[12..16]);
            g.act_min.copy_from_slice(&c[16..20]);
            g.act_max.copy_from_slice(&c[20..24]);
            for l in 0..4 {
                let r = 4 * gi + l;
                let acc = x
                    .iter()
                    .zip(&w[r * k..(r + 1) * k])
                    .fold(0i32, |s, (&a, &b)| s.wrapping_add(a as i32 * b as i32));
                o[r] = requantize_lane(acc, &g, l) as i8;
            }
        }
    }
}
