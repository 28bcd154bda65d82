//! [`DepthwiseMac`] with `SXTB16` and `SMLAxy` (emulated off-target, see
//! [`crate::cortex_m::dsp`]).

use super::super::isa::dsp::{smlabb, smlatt, sxtb16, sxtb16_ror8, word};
use super::super::isa::Dsp;
use super::super::requant::Rq;
use super::{dw_row_bounds, DepthwiseMac, Taps, CHUNK};
use crate::error::KernelError;

impl DepthwiseMac for Dsp {
    const PACKED_DEPTHWISE: bool = true;
    const SIMPLE_FALLBACK: bool = true;

    #[inline(always)]
    fn dw_pixel(
        taps: &Taps<'_>,
        w: &[u32],
        full: &[i32],
        req: &[Rq],
        out: &mut [i8],
        blocks: usize,
        ctx: &mut [i32; CHUNK],
    ) -> Result<bool, KernelError> {
        let n = dw_row_bounds(taps, w, full, full, blocks)?;
        // Tap counts in threes (3×3 kernels): the loop below checks for the
        // end marker once per three taps.
        if n % 3 != 0 || blocks == 0 || req.len() < 4 * blocks || out.len() < 4 * blocks {
            return Ok(false);
        }
        dw_pixel_impl(taps, w, full, req, out, blocks, ctx);
        Ok(true)
    }

    #[cfg(all(target_arch = "arm", feature = "dsp"))]
    #[inline(always)]
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        let n = dw_row_bounds(taps, w, init, out, blocks)?;
        let mut wp = w.as_ptr();
        let tp0 = taps.ptrs().as_ptr();
        for (b, (ib, ob)) in init
            .as_chunks::<4>()
            .0
            .iter()
            .zip(out.as_chunks_mut::<4>().0)
            .take(blocks)
            .enumerate()
        {
            let [mut a0, mut a1, mut a2, mut a3] = *ib;
            // SAFETY: as in `dw_block`, with the bounds checked once above for
            // all blocks: block b reads 4 bytes at offset 4b < taps.len() − 3
            // of each of the n ≥ 1 runs, and words 2n·b .. 2n·(b+1) of `w`
            // (`wp` continues where the previous block stopped).
            unsafe {
                core::arch::asm!(
                    "2:",
                    "ldr {x}, [{tp}], #4",
                    "ldr {x}, [{x}, {j}]",
                    "ldrd {w0}, {w1}, [{wp}], #8",
                    "sxtb16 {xo}, {x}, ror #8",
                    "sxtb16 {x}, {x}",
                    "smlabb {a0}, {x}, {w0}, {a0}",
                    "smlatt {a2}, {x}, {w0}, {a2}",
                    "smlabb {a1}, {xo}, {w1}, {a1}",
                    "smlatt {a3}, {xo}, {w1}, {a3}",
                    "subs {n}, {n}, #1",
                    "bne 2b",
                    tp = inout(reg) tp0 => _,
                    wp = inout(reg) wp,
                    j = in(reg) 4 * b,
                    n = inout(reg) n => _,
                    a0 = inout(reg) a0,
                    a1 = inout(reg) a1,
                    a2 = inout(reg) a2,
                    a3 = inout(reg) a3,
                    x = out(reg) _,
                    xo = out(reg) _,
                    w0 = out(reg) _,
                    w1 = out(reg) _,
                    options(nostack, readonly),
                );
            }
            *ob = [a0, a1, a2, a3];
        }
        Ok(())
    }

    #[cfg(all(target_arch = "arm", feature = "dsp"))]
    #[inline(always)]
    fn dw_block(
        taps: &Taps<'_>,
        j: usize,
        w: &[u32],
        init: [i32; 4],
    ) -> Result<[i32; 4], KernelError> {
        let n = taps.count();
        if j + 4 > taps.len() || w.len() < 2 * n {
            return Err(KernelError::InvalidArgument);
        }
        let [mut a0, mut a1, mut a2, mut a3] = init;
        if n == 0 {
            return Ok(init);
        }
        // SAFETY: `n ≥ 1` passes; pass t reads pointer `ptrs[t]` (n of
        // them), four bytes at offset `j` of that run (every run holds at
        // least `taps.len() ≥ j + 4` bytes: checked on push and above) and two
        // words of `w` (checked: `w.len() ≥ 2n`). Unaligned `ldr` is fine on
        // Armv7E-M/Armv8-M; `w` is word-aligned for `ldrd`. Registers only
        // otherwise; flags and the sticky Q bit are clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldr {x}, [{tp}], #4",
                "ldr {x}, [{x}, {j}]",
                "ldrd {w0}, {w1}, [{wp}], #8",
                "sxtb16 {xo}, {x}, ror #8",
                "sxtb16 {x}, {x}",
                "smlabb {a0}, {x}, {w0}, {a0}",
                "smlatt {a2}, {x}, {w0}, {a2}",
                "smlabb {a1}, {xo}, {w1}, {a1}",
                "smlatt {a3}, {xo}, {w1}, {a3}",
                "subs {n}, {n}, #1",
                "bne 2b",
                tp = inout(reg) taps.ptrs().as_ptr() => _,
                wp = inout(reg) w.as_ptr() => _,
                j = in(reg) j,
                n = inout(reg) n => _,
                a0 = inout(reg) a0,
                a1 = inout(reg) a1,
                a2 = inout(reg) a2,
                a3 = inout(reg) a3,
                x = out(reg) _,
                xo = out(reg) _,
                w0 = out(reg) _,
                w1 = out(reg) _,
                options(nostack, readonly),
            );
        }
        Ok([a0, a1, a2, a3])
    }
    #[inline(always)]
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4] {
        let (x, w) = (word(x), word(w));
        let (xe, xo, we, wo) = (sxtb16(x), sxtb16_ror8(x), sxtb16(w), sxtb16_ror8(w));
        [
            smlabb(xe, we, acc[0]),
            smlabb(xo, wo, acc[1]),
            smlatt(xe, we, acc[2]),
            smlatt(xo, wo, acc[3]),
        ]
    }
}

/// [`DepthwiseMac::dw_pixel`] off target: [`DepthwiseMac::dw_block`] per
/// block, then [`fast_words`](super::super::requant::fast_words).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[cfg_attr(not(test), allow(dead_code))]
#[inline(always)]
fn dw_pixel_impl(
    taps: &Taps<'_>,
    w: &[u32],
    full: &[i32],
    req: &[Rq],
    out: &mut [i8],
    blocks: usize,
    _ctx: &mut [i32; CHUNK],
) {
    let per = 2 * taps.count();
    for b in 0..blocks {
        let (Some(wb), Some(init)) = (
            w.get(per * b..per * (b + 1)),
            full.get(4 * b..4 * b + 4)
                .and_then(|v| <[i32; 4]>::try_from(v).ok()),
        ) else {
            return;
        };
        let Ok(acc) = Dsp::dw_block(taps, 4 * b, wb, init) else {
            return;
        };
        for (l, a) in acc.iter().enumerate() {
            if let (Some(d), Some(r)) = (out.get_mut(4 * b + l), req.get(4 * b + l)) {
                *d = super::super::requant::fast_words(r, *a);
            }
        }
    }
}

/// [`DepthwiseMac::dw_pixel`] on Arm with DSP: one `asm!` block for the
/// whole pixel. Per block of four channels: start values from `full`, the
/// taps three at a time (the tap loop of [`DepthwiseMac::dw_row`] without
/// its counter: the pointer table ends in null), then the four outputs'
/// requantization as [`fast_words`](super::super::requant::fast_words) and
/// their stores. 87 instructions per block of a 3×3 kernel plus 40 for the
/// outputs, against 124 plus 60 for `dw_row` and `finish_acc`.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn dw_pixel_impl(
    taps: &Taps<'_>,
    w: &[u32],
    full: &[i32],
    req: &[Rq],
    out: &mut [i8],
    blocks: usize,
    ctx: &mut [i32; CHUNK],
) {
    ctx[0] = full.as_ptr() as i32;
    ctx[1] = req.as_ptr() as i32;
    ctx[2] = out.as_mut_ptr() as i32;
    ctx[3] = (4 * blocks) as i32;
    ctx[4] = taps.ptrs().as_ptr() as i32;
    // SAFETY: checked by the caller (`dw_pixel`): n ≥ 3 tap runs, n a
    // multiple of three, each at least 4·blocks bytes long (`Taps::push`),
    // their pointers followed by a null one (`Taps::push`); 2n·blocks words of
    // `w` (read in order, block after block); 4·blocks values of `full`,
    // words of `req` (16 bytes each, 8-aligned) and bytes of `out`. Block
    // `j/4` reads bytes j..j+4 of every run, full[j..j+4], req[j..j+4],
    // writes out[j..j+4], for j = 0, 4, .. < 4·blocks. `ctx` is a live array
    // of 64 words, read at words 0..5. Unaligned `ldr` of the runs is fine
    // on Armv7E-M; `w`, `full`, `req` are word-aligned for `ldrd`. Registers
    // only otherwise; flags (and the Q bit) clobbered.
    unsafe {
        core::arch::asm!(
            "1:",
            "ldr {x}, [{ctx}]",
            "add {x}, {x}, {j}, lsl #2",
            "ldrd {a0}, {a1}, [{x}]",
            "ldrd {a2}, {a3}, [{x}, #8]",
            "ldr {tp}, [{ctx}, #16]",
            "ldr {x}, [{tp}], #4",
            "2:",
            "ldr {x}, [{x}, {j}]",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "smlabb {a0}, {x}, {w0}, {a0}",
            "smlatt {a2}, {x}, {w0}, {a2}",
            "smlabb {a1}, {xo}, {w1}, {a1}",
            "smlatt {a3}, {xo}, {w1}, {a3}",
            "ldr {x}, [{tp}], #4",
            "ldr {x}, [{x}, {j}]",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "smlabb {a0}, {x}, {w0}, {a0}",
            "smlatt {a2}, {x}, {w0}, {a2}",
            "smlabb {a1}, {xo}, {w1}, {a1}",
            "smlatt {a3}, {xo}, {w1}, {a3}",
            "ldr {x}, [{tp}], #4",
            "ldr {x}, [{x}, {j}]",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "smlabb {a0}, {x}, {w0}, {a0}",
            "smlatt {a2}, {x}, {w0}, {a2}",
            "smlabb {a1}, {xo}, {w1}, {a1}",
            "smlatt {a3}, {xo}, {w1}, {a3}",
            "ldr {x}, [{tp}], #4",
            "cmp {x}, #0",
            "bne 2b",
            // Requantize: x = req + 16j, xo = mult, w0 = high word,
            // w1 = r − 1, tp = low word.
            "ldr {x}, [{ctx}, #4]",
            "add {x}, {x}, {j}, lsl #4",
            "ldrd {xo}, {w0}, [{x}]",
            "ldr {w1}, [{x}, #8]",
            "and {tp}, {a0}, #0x80000000",
            "orr {tp}, {tp}, #0x40000000",
            "add {w0}, {w0}, {a0}, asr #31",
            "smlal {tp}, {w0}, {a0}, {xo}",
            "asr {a0}, {w0}, {w1}",
            "ssat {a0}, #8, {a0}",
            "ldrd {xo}, {w0}, [{x}, #16]",
            "ldr {w1}, [{x}, #24]",
            "and {tp}, {a1}, #0x80000000",
            "orr {tp}, {tp}, #0x40000000",
            "add {w0}, {w0}, {a1}, asr #31",
            "smlal {tp}, {w0}, {a1}, {xo}",
            "asr {a1}, {w0}, {w1}",
            "ssat {a1}, #8, {a1}",
            "ldrd {xo}, {w0}, [{x}, #32]",
            "ldr {w1}, [{x}, #40]",
            "and {tp}, {a2}, #0x80000000",
            "orr {tp}, {tp}, #0x40000000",
            "add {w0}, {w0}, {a2}, asr #31",
            "smlal {tp}, {w0}, {a2}, {xo}",
            "asr {a2}, {w0}, {w1}",
            "ssat {a2}, #8, {a2}",
            "ldrd {xo}, {w0}, [{x}, #48]",
            "ldr {w1}, [{x}, #56]",
            "and {tp}, {a3}, #0x80000000",
            "orr {tp}, {tp}, #0x40000000",
            "add {w0}, {w0}, {a3}, asr #31",
            "smlal {tp}, {w0}, {a3}, {xo}",
            "asr {a3}, {w0}, {w1}",
            "ssat {a3}, #8, {a3}",
            "ldr {x}, [{ctx}, #8]",
            "add {x}, {x}, {j}",
            "strb {a0}, [{x}]",
            "strb {a1}, [{x}, #1]",
            "strb {a2}, [{x}, #2]",
            "strb {a3}, [{x}, #3]",
            "add {j}, {j}, #4",
            "ldr {x}, [{ctx}, #12]",
            "cmp {x}, {j}",
            "bne 1b",
            ctx = in(reg) ctx.as_mut_ptr(),
            j = inout(reg) 0usize => _,
            wp = inout(reg) w.as_ptr() => _,
            tp = out(reg) _,
            a0 = out(reg) _,
            a1 = out(reg) _,
            a2 = out(reg) _,
            a3 = out(reg) _,
            x = out(reg) _,
            xo = out(reg) _,
            w0 = out(reg) _,
            w1 = out(reg) _,
            options(nostack),
        );
    }
}
