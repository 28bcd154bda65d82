//! Depthwise 3×3, depth multiplier 1, with `SMLAD` (two multiply-accumulates
//! an instruction): the taps of kernel rows 0 and 1 of one channel are one
//! pair of int16 lanes, and so are kernel row 2 and a zero weight. Each
//! input row pair `(r, r+1)` is unpacked once per channel chunk into a row
//! of "pair words" (per column and channel: `in[r][x][c]` low, `in[r+1][x][c]`
//! high; padding reads the input zero point, as in `packed.rs`), kept in a
//! three-row cache: output row `oy` reads pair rows `y0` (kernel rows 0, 1)
//! and `y0 + 2` (kernel row 2, with `y0 = oy·stride − padding`), so with
//! stride 1 or 2 every pair row is built once. Per output pixel and four
//! channels: 12 `LDRD` of pair words, 12 of weights and 24 `SMLAD` against
//! 27 loads, 18 `SXTB16` and 36 `SMLAxy` in `packed.rs`'s loop.
//!
//! Arithmetic: `bias + off·Σw + Σ x·w` in wrapping `i32`, as
//! `arm_depthwise_conv_s8` (the zero weight and the zero-point padding add
//! nothing, see `chunk_consts`), then [`fast_words`]. Taken only where every
//! channel is [`Requant::is_fast`], the clamp is the full int8 range and the
//! output offset an int8 value (else `None`: the caller's loops).

use super::super::common::ConvOperands;
use super::super::isa::dsp::pack16;
#[cfg_attr(all(target_arch = "arm", feature = "dsp"), allow(unused_imports))]
use super::super::isa::dsp::smlad;
#[cfg_attr(all(target_arch = "arm", feature = "dsp"), allow(unused_imports))]
use super::super::isa::dsp::{sxtb16, sxtb16_ror8, word};
#[cfg_attr(all(target_arch = "arm", feature = "dsp"), allow(unused_imports))]
use super::super::requant::fast_words;
use super::super::requant::{Requant, Rq};
use super::super::BAD;
use super::{chunk_consts, CHUNK};
use crate::error::{KernelError, KernelResult};

/// Weight words per block of four channels: per kernel column, four pair
/// words of kernel rows 0/1, then four of row 2 and a zero.
const WQ_BLOCK: usize = 24;

/// Splits `n` items of `T` off the front of `scratch` (whole words).
fn take_n<'s, T: bytemuck::Pod>(
    scratch: &mut &'s mut [u64],
    n: usize,
) -> Result<&'s mut [T], KernelError> {
    let words = (n * core::mem::size_of::<T>()).div_ceil(8);
    let (head, tail) = core::mem::take(scratch)
        .split_at_mut_checked(words)
        .ok_or(BAD)?;
    *scratch = tail;
    let items: &mut [T] = bytemuck::try_cast_slice_mut(head).map_err(|_| BAD)?;
    items.get_mut(..n).ok_or(BAD)
}

/// The layer, or `None` where its conditions (module doc) do not hold or
/// the scratch holds fewer than four channels' worth (nothing written then).
pub(crate) fn depthwise_pairs(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let (i, o) = (g.input, g.output);
    let ch = o.c;
    if g.kernel != (3, 3)
        || g.dilation != (1, 1)
        || ch == 0
        || ch % 4 != 0
        || i.c != ch
        || o.w == 0
        || q.act_min != -128
        || q.act_max != 127
        || !(-128..=127).contains(&q.output_offset)
        || !(-128..=127).contains(&q.input_offset.wrapping_neg())
        || ops.mult.len() != ch
        || ops.shift.len() != ch
        || !ops
            .mult
            .iter()
            .zip(ops.shift)
            .all(|(&m, &s)| Requant::new(m, s).is_fast())
    {
        return None;
    }
    // Pair-row columns: x from −padding to the last pixel's third tap.
    let vw = (o.w - 1).checked_mul(g.stride.1)?.checked_add(3)?;
    // Bytes per channel: full (4), req (16), weights (24), 3 pair rows.
    let per_ch = 44usize.checked_add(vw.checked_mul(12)?)?;
    // Checked divisions: no panic path in embedded builds.
    let most = ((8 * scratch.len()).checked_div(per_ch)? / 4 * 4).min(CHUNK);
    if most < 4 {
        return None;
    }
    // Equal chunks (whole blocks of four) rather than a short last one.
    let chunks = (ch + most - 1).checked_div(most)?;
    let cn = (ch + chunks - 1).checked_div(chunks)?.div_ceil(4) * 4;
    Some(pairs_layer(ops, output, scratch, cn, vw))
}

#[inline(never)]
fn pairs_layer(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
    cn: usize,
    vw: usize,
) -> KernelResult {
    let (g, q, filter) = (&ops.g, &ops.q, ops.filter);
    let o = g.output;
    let ch = o.c;
    let full = take_n::<i32>(&mut scratch, cn)?;
    let req = take_n::<Rq>(&mut scratch, cn)?;
    let wq = take_n::<u32>(&mut scratch, cn / 4 * WQ_BLOCK)?;
    let row_words = cn * vw;
    let cache = take_n::<u32>(&mut scratch, 3 * row_words)?;
    let zp = q.input_offset.wrapping_neg() as i8;
    let zpbuf = [zp; CHUNK];
    let (pad_t, pad_l) = (g.padding.0 as isize, g.padding.1);
    let mut c0 = 0;
    while c0 < ch {
        let cn = cn.min(ch - c0);
        let blocks = cn / 4;
        chunk_consts(ops, c0, cn, full, req)?;
        // Weights (IHWO, tap t = 3·ky + kx at t·ch + c).
        for (blk, dst) in wq.chunks_exact_mut(WQ_BLOCK).take(blocks).enumerate() {
            for (kx, d) in dst.chunks_exact_mut(8).enumerate() {
                for l in 0..4 {
                    let c = c0 + 4 * blk + l;
                    let w = |ky: usize| -> Result<i32, KernelError> {
                        Ok(*filter.get((3 * ky + kx) * ch + c).ok_or(BAD)? as i32)
                    };
                    *d.get_mut(l).ok_or(BAD)? = pack16(w(0)?, w(1)?);
                    *d.get_mut(4 + l).ok_or(BAD)? = pack16(w(2)?, 0);
                }
            }
        }
        // Padding columns (the same in every pair row): both lanes the zero
        // point, written once per chunk.
        let cols = g.input.w.min(vw.saturating_sub(pad_l));
        let zz = pack16(zp as i32, zp as i32);
        for row in cache.chunks_exact_mut(row_words.max(1)) {
            for cx in (0..pad_l.min(vw)).chain(pad_l + cols..vw) {
                for k in 0..blocks {
                    if let Some(d) = row.get_mut(4 * (vw * k + cx)..4 * (vw * k + cx) + 4) {
                        d.fill(zz);
                    }
                }
            }
        }
        for b in 0..o.n {
            // Which pair row each cache slot holds (slot r mod 3).
            let mut tags = [isize::MIN; 3];
            for oy in 0..o.h {
                let y0 = (oy * g.stride.0) as isize - pad_t;
                let mut slots = [0usize; 2];
                for (s, r) in slots.iter_mut().zip([y0, y0 + 2]) {
                    let slot = r.rem_euclid(3) as usize;
                    let row = cache
                        .get_mut(slot * row_words..(slot + 1) * row_words)
                        .ok_or(BAD)?;
                    if tags[slot] != r {
                        build_pair_row(ops, b, r, pad_l, c0, blocks, vw, &zpbuf, row)?;
                        tags[slot] = r;
                    }
                    *s = slot;
                }
                let ob = (b * o.h + oy) * o.w * ch + c0;
                let (Some(va), Some(vb), Some(out)) = (
                    cache.get(slots[0] * row_words..),
                    cache.get(slots[1] * row_words..),
                    output.get_mut(ob..),
                ) else {
                    return Err(BAD);
                };
                let rows = Rows {
                    n: o.w,
                    s: 4 * g.stride.1,
                    step: ch,
                    blocks,
                    vstride: 4 * vw,
                };
                pairs_row(va, vb, wq, full, req, out, &rows)?;
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// Pair row `r` (input rows `r`, `r + 1` of batch `b`) of channels
/// `c0 .. c0 + 4·blocks`: per block, per column `x + pad_l` (`x` from
/// `−pad_l`), four pair words (channel `c0 + 4·blk + l` in word `l`); the
/// padding columns are the caller's (written once per chunk).
#[allow(clippy::too_many_arguments)]
fn build_pair_row(
    ops: &ConvOperands<'_>,
    b: usize,
    r: isize,
    pad_l: usize,
    c0: usize,
    blocks: usize,
    vw: usize,
    zp: &[i8],
    row: &mut [u32],
) -> KernelResult {
    let (i, input) = (ops.g.input, ops.input);
    let ch = i.c;
    let len = 4 * blocks;
    let zp = zp.get(..len).ok_or(BAD)?;
    // Columns read from the input: x = 0 .. cols (column x + pad_l).
    let cols = i.w.min(vw.saturating_sub(pad_l));
    // Input row y of batch b from channel c0 (`(cols − 1)·ch + len` values:
    // every column's run), stepping ch a column; or the zero points,
    // stepping 0.
    let src = |y: isize| -> Result<(&[i8], usize), KernelError> {
        let Some(y) = usize::try_from(y).ok().filter(|&y| y < i.h) else {
            return Ok((zp, 0));
        };
        let at = (b * i.h + y) * i.w * ch + c0;
        let n = cols.saturating_sub(1) * ch + len;
        Ok((input.get(at..at + n).ok_or(BAD)?, ch))
    };
    let (lo, hi) = (src(r)?, src(r + 1)?);
    if blocks == 0 || row.len() < 4 * vw * blocks {
        return Err(BAD);
    }
    if cols > 0 {
        let dst = row.get_mut(4 * pad_l..).ok_or(BAD)?;
        pair_columns(lo, hi, dst, vw, blocks, cols);
    }
    Ok(())
}

/// Columns `x < cols` of a pair row: for block `k < blocks`, words
/// `dst[4·(vw·k + x) ..][..4]` = values `4k..4k+4` of `lo.0[x·lo.1 ..]` (low
/// lanes) and of `hi.0[x·hi.1 ..]` (high lanes), as int16. `lo.0` and
/// `hi.0` hold those values (`(cols − 1)·step + 4·blocks`, checked by the
/// caller) and `dst` at least `4·(vw·(blocks − 1) + cols)` words (checked
/// here: nothing written otherwise).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn pair_columns(
    lo: (&[i8], usize),
    hi: (&[i8], usize),
    dst: &mut [u32],
    vw: usize,
    blocks: usize,
    cols: usize,
) {
    let l16 = |x: u32, y: u32| (x & 0xffff) | (y << 16);
    let h16 = |x: u32, y: u32| (x >> 16) | (y & 0xffff_0000);
    if dst.len() < 4 * (vw * (blocks - 1) + cols) {
        return;
    }
    for x in 0..cols {
        for k in 0..blocks {
            let (Ok(a), Ok(c)) = (
                super::super::common::four(lo.0, x * lo.1 + 4 * k),
                super::super::common::four(hi.0, x * hi.1 + 4 * k),
            ) else {
                return;
            };
            let (a, c) = (word(a), word(c));
            let (ae, ao, ce, co) = (sxtb16(a), sxtb16_ror8(a), sxtb16(c), sxtb16_ror8(c));
            if let Some(d) = dst.get_mut(4 * (vw * k + x)..4 * (vw * k + x) + 4) {
                d.copy_from_slice(&[l16(ae, ce), l16(ao, co), h16(ae, ce), h16(ao, co)]);
            }
        }
    }
}

/// [`pair_columns`] on Arm with DSP: one `asm!` loop, 15 instructions a
/// block.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn pair_columns(
    lo: (&[i8], usize),
    hi: (&[i8], usize),
    dst: &mut [u32],
    vw: usize,
    blocks: usize,
    cols: usize,
) {
    let need = |s: (&[i8], usize)| {
        (cols - 1)
            .checked_mul(s.1)
            .and_then(|v| v.checked_add(4 * blocks))
            .is_some_and(|n| s.0.len() >= n)
    };
    if blocks == 0
        || cols == 0
        || !need(lo)
        || !need(hi)
        || dst.len() < 4 * (vw * (blocks - 1) + cols)
    {
        return;
    }
    // ctx words: 0/1 the column's low/high sources, 2/3 their steps, 4 the
    // column's first destination, 5 columns left, 6 blocks.
    let mut ctx: [u32; 7] = [
        lo.0.as_ptr() as u32,
        hi.0.as_ptr() as u32,
        lo.1 as u32,
        hi.1 as u32,
        dst.as_mut_ptr() as u32,
        cols as u32,
        blocks as u32,
    ];
    // SAFETY: checked above: `cols` ≥ 1 columns of `blocks` ≥ 1 passes;
    // column x, pass k reads bytes x·step + 4k .. + 4 of `lo.0` and `hi.0`
    // (each at least (cols − 1)·step + 4·blocks long; unaligned `ldr` is fine
    // on Armv7E-M) and writes words 4·(vw·k + x) .. + 4 of `dst`
    // (word-aligned for `strd`, at least 4·(vw·(blocks − 1) + cols) long).
    // `ctx` is a live local array of 7 words. Registers only otherwise;
    // flags clobbered.
    unsafe {
        core::arch::asm!(
            "1:",
            "ldrd {pa}, {pc}, [{ctx}]",
            "ldr {d}, [{ctx}, #16]",
            "ldr {n}, [{ctx}, #24]",
            "2:",
            "ldr {a}, [{pa}], #4",
            "ldr {c}, [{pc}], #4",
            "sxtb16 {ae}, {a}",
            "sxtb16 {ao}, {a}, ror #8",
            "sxtb16 {ce}, {c}",
            "sxtb16 {co}, {c}, ror #8",
            "pkhbt {a}, {ae}, {ce}, lsl #16",
            "pkhtb {c}, {ce}, {ae}, asr #16",
            "pkhbt {ae}, {ao}, {co}, lsl #16",
            "pkhtb {ce}, {co}, {ao}, asr #16",
            "strd {a}, {ae}, [{d}]",
            "strd {c}, {ce}, [{d}, #8]",
            "add {d}, {d}, {stride}",
            "subs {n}, {n}, #1",
            "bne 2b",
            "ldrd {a}, {c}, [{ctx}]",
            "ldrd {ae}, {ao}, [{ctx}, #8]",
            "add {a}, {a}, {ae}",
            "add {c}, {c}, {ao}",
            "strd {a}, {c}, [{ctx}]",
            "ldrd {a}, {c}, [{ctx}, #16]",
            "add {a}, {a}, #16",
            "subs {c}, {c}, #1",
            "strd {a}, {c}, [{ctx}, #16]",
            "bne 1b",
            ctx = in(reg) ctx.as_mut_ptr(),
            stride = in(reg) 16 * vw,
            pa = out(reg) _,
            pc = out(reg) _,
            d = out(reg) _,
            n = out(reg) _,
            a = out(reg) _,
            c = out(reg) _,
            ae = out(reg) _,
            ao = out(reg) _,
            ce = out(reg) _,
            co = out(reg) _,
            options(nostack),
        );
    }
}

/// The shape of one [`pairs_row`] call: `n` pixels, pair words `s` apart
/// per pixel, outputs `step` apart, `blocks` blocks of four channels whose
/// pair words are `vstride` apart.
pub(super) struct Rows {
    pub(super) n: usize,
    pub(super) s: usize,
    pub(super) step: usize,
    pub(super) blocks: usize,
    pub(super) vstride: usize,
}

/// One output row, every block of four channels: block `k`, pixel `p < n`
/// reads pair words `va[vstride·k + s·p ..][..12]` (kernel rows 0/1, three
/// columns of four) and the same of `vb` (row 2), weights
/// `w[24k ..][..24]` (per column: four of `va`'s, four of `vb`'s), starts at
/// `full[4k..4k+4]` and ends requantized ([`fast_words`] of `req[4k..]`)
/// in `out[4k + p·step ..][..4]`.
pub(super) fn pairs_row(
    va: &[u32],
    vb: &[u32],
    w: &[u32],
    full: &[i32],
    req: &[Rq],
    out: &mut [i8],
    rows: &Rows,
) -> KernelResult {
    // The bounds the asm relies on, once per row.
    let (Some(m), Some(kb)) = (rows.n.checked_sub(1), rows.blocks.checked_sub(1)) else {
        return Err(BAD);
    };
    let last_v = m
        .checked_mul(rows.s)
        .zip(kb.checked_mul(rows.vstride))
        .and_then(|(a, b)| a.checked_add(b)?.checked_add(12));
    let last_o = m
        .checked_mul(rows.step)
        .and_then(|v| v.checked_add(4 * rows.blocks));
    if last_v.is_none_or(|l| va.len() < l || vb.len() < l)
        || last_o.is_none_or(|l| out.len() < l)
        || w.len() < WQ_BLOCK * rows.blocks
        || full.len() < 4 * rows.blocks
        || req.len() < 4 * rows.blocks
    {
        return Err(BAD);
    }
    pairs_row_impl(va, vb, w, full, req, out, rows);
    Ok(())
}

/// [`pairs_row`] after its checks. On Arm with DSP: one `asm!` loop over
/// the row's blocks and pixels. Per pixel and block: the four start values,
/// three columns of four `LDRD` pairs and four `SMLAD` (48 instructions),
/// the requantization of [`fast_words`] (9 per output), four `STRB`; 104
/// in all against about 150 in `packed.rs`'s loop. Off target: plain Rust
/// over the emulated `SMLAD`.
#[inline(always)]
fn pairs_row_impl(
    va: &[u32],
    vb: &[u32],
    w: &[u32],
    full: &[i32],
    req: &[Rq],
    out: &mut [i8],
    rows: &Rows,
) {
    #[cfg(all(target_arch = "arm", feature = "dsp"))]
    {
        // ctx words: 0 full, 1 req, 2 out, 3 step, 4 pixels left, 5 pair
        // pointer advance after a pixel's 48 bytes, 6 weights, 7 pixels,
        // 8 the block's first output, 9/10 the block's first pair words,
        // 11 blocks left, 12 bytes between blocks' pair words.
        let mut ctx: [u32; 13] = [
            full.as_ptr() as u32,
            req.as_ptr() as u32,
            out.as_mut_ptr() as u32,
            rows.step as u32,
            rows.n as u32,
            (4 * rows.s as u32).wrapping_sub(48),
            w.as_ptr() as u32,
            rows.n as u32,
            out.as_mut_ptr() as u32,
            va.as_ptr() as u32,
            vb.as_ptr() as u32,
            rows.blocks as u32,
            4 * rows.vstride as u32,
        ];
        // SAFETY: checked by `pairs_row`: n ≥ 1 pixels and blocks ≥ 1; block k,
        // pixel p reads words vstride·k + s·p .. + 12 of `va` and of `vb` (both
        // at least (blocks−1)·vstride + (n−1)·s + 12 long), words 24k .. 24k + 24
        // of `w`, 4k .. 4k + 4 of `full`, `req` entries 4k .. 4k + 4 (16 bytes
        // each: mult, high word, r − 1 at offsets 0, 4, 8) and writes bytes
        // 4k + p·step .. + 4 of `out` (at least (n−1)·step + 4·blocks long).
        // `va`, `vb`, `w`, `full`, `req` are word-aligned for `ldrd`; `ctx` is a
        // live local array of 13 words, read and written only at those words.
        // Registers only otherwise; flags and the Q bit are clobbered.
        unsafe {
            core::arch::asm!(
                "1:",
                "ldr {v0}, [{ctx}]",
                "ldrd {a0}, {a1}, [{v0}]",
                "ldrd {a2}, {a3}, [{v0}, #8]",
                "ldr {pw}, [{ctx}, #24]",
                ".rept 3",
                "ldrd {v0}, {v1}, [{pa}], #8",
                "ldrd {w0}, {w1}, [{pw}], #8",
                "smlad {a0}, {v0}, {w0}, {a0}",
                "smlad {a1}, {v1}, {w1}, {a1}",
                "ldrd {v0}, {v1}, [{pa}], #8",
                "ldrd {w0}, {w1}, [{pw}], #8",
                "smlad {a2}, {v0}, {w0}, {a2}",
                "smlad {a3}, {v1}, {w1}, {a3}",
                "ldrd {v0}, {v1}, [{pb}], #8",
                "ldrd {w0}, {w1}, [{pw}], #8",
                "smlad {a0}, {v0}, {w0}, {a0}",
                "smlad {a1}, {v1}, {w1}, {a1}",
                "ldrd {v0}, {v1}, [{pb}], #8",
                "ldrd {w0}, {w1}, [{pw}], #8",
                "smlad {a2}, {v0}, {w0}, {a2}",
                "smlad {a3}, {v1}, {w1}, {a3}",
                ".endr",
                // Requantize: v0 = req, v1 = mult, w0 = high word, w1 = r − 1,
                // pw = low word.
                "ldr {v0}, [{ctx}, #4]",
                "ldrd {v1}, {w0}, [{v0}]",
                "ldr {w1}, [{v0}, #8]",
                "and {pw}, {a0}, #0x80000000",
                "orr {pw}, {pw}, #0x40000000",
                "add {w0}, {w0}, {a0}, asr #31",
                "smlal {pw}, {w0}, {a0}, {v1}",
                "asr {a0}, {w0}, {w1}",
                "ssat {a0}, #8, {a0}",
                "ldrd {v1}, {w0}, [{v0}, #16]",
                "ldr {w1}, [{v0}, #24]",
                "and {pw}, {a1}, #0x80000000",
                "orr {pw}, {pw}, #0x40000000",
                "add {w0}, {w0}, {a1}, asr #31",
                "smlal {pw}, {w0}, {a1}, {v1}",
                "asr {a1}, {w0}, {w1}",
                "ssat {a1}, #8, {a1}",
                "ldrd {v1}, {w0}, [{v0}, #32]",
                "ldr {w1}, [{v0}, #40]",
                "and {pw}, {a2}, #0x80000000",
                "orr {pw}, {pw}, #0x40000000",
                "add {w0}, {w0}, {a2}, asr #31",
                "smlal {pw}, {w0}, {a2}, {v1}",
                "asr {a2}, {w0}, {w1}",
                "ssat {a2}, #8, {a2}",
                "ldrd {v1}, {w0}, [{v0}, #48]",
                "ldr {w1}, [{v0}, #56]",
                "and {pw}, {a3}, #0x80000000",
                "orr {pw}, {pw}, #0x40000000",
                "add {w0}, {w0}, {a3}, asr #31",
                "smlal {pw}, {w0}, {a3}, {v1}",
                "asr {a3}, {w0}, {w1}",
                "ssat {a3}, #8, {a3}",
                "ldr {v0}, [{ctx}, #8]",
                "strb {a0}, [{v0}]",
                "strb {a1}, [{v0}, #1]",
                "strb {a2}, [{v0}, #2]",
                "strb {a3}, [{v0}, #3]",
                "ldrd {v1}, {w0}, [{ctx}, #12]",
                "add {v0}, {v0}, {v1}",
                "str {v0}, [{ctx}, #8]",
                "ldr {v1}, [{ctx}, #20]",
                "add {pa}, {pa}, {v1}",
                "add {pb}, {pb}, {v1}",
                "subs {w0}, {w0}, #1",
                "str {w0}, [{ctx}, #16]",
                "bne 1b",
                // Next block: full += 16, req += 64, weights += 96, output += 4,
                // pair words += 4·vstride, pixels = n.
                "ldr {v0}, [{ctx}, #44]",
                "subs {v0}, {v0}, #1",
                "beq 3f",
                "str {v0}, [{ctx}, #44]",
                "ldrd {v0}, {v1}, [{ctx}]",
                "add {v0}, {v0}, #16",
                "add {v1}, {v1}, #64",
                "strd {v0}, {v1}, [{ctx}]",
                "ldr {v0}, [{ctx}, #24]",
                "add {v0}, {v0}, #96",
                "str {v0}, [{ctx}, #24]",
                "ldrd {v0}, {v1}, [{ctx}, #28]",
                "str {v0}, [{ctx}, #16]",
                "add {v1}, {v1}, #4",
                "str {v1}, [{ctx}, #32]",
                "str {v1}, [{ctx}, #8]",
                "ldrd {pa}, {pb}, [{ctx}, #36]",
                "ldr {v0}, [{ctx}, #48]",
                "add {pa}, {pa}, {v0}",
                "add {pb}, {pb}, {v0}",
                "strd {pa}, {pb}, [{ctx}, #36]",
                "b 1b",
                "3:",
                ctx = in(reg) ctx.as_mut_ptr(),
                pa = inout(reg) va.as_ptr() => _,
                pb = inout(reg) vb.as_ptr() => _,
                pw = out(reg) _,
                a0 = out(reg) _,
                a1 = out(reg) _,
                a2 = out(reg) _,
                a3 = out(reg) _,
                v0 = out(reg) _,
                v1 = out(reg) _,
                w0 = out(reg) _,
                w1 = out(reg) _,
                options(nostack),
            );
        }
    }
    #[cfg(not(all(target_arch = "arm", feature = "dsp")))]
    {
        let s = rows.s;
        for k in 0..rows.blocks {
            let (vo, wo) = (rows.vstride * k, WQ_BLOCK * k);
            for p in 0..rows.n {
                let mut acc = [
                    full[4 * k],
                    full[4 * k + 1],
                    full[4 * k + 2],
                    full[4 * k + 3],
                ];
                for kx in 0..3 {
                    for l in 0..4 {
                        let a = va[vo + s * p + 4 * kx + l];
                        let b = vb[vo + s * p + 4 * kx + l];
                        acc[l] = smlad(a, w[wo + 8 * kx + l], acc[l]);
                        acc[l] = smlad(b, w[wo + 8 * kx + 4 + l], acc[l]);
                    }
                }
                for l in 0..4 {
                    out[4 * k + p * rows.step + l] = fast_words(&req[4 * k + l], acc[l]);
                }
            }
        }
    }
}
