//! [`DepthwiseMac`] with `SXTB16` and `SMLAxy` (emulated off-target, see
//! [`crate::cortex_m::dsp`]).

use super::super::common::ConvOperands;
use super::super::isa::dsp::{smlabb, smlatt, sxtb16, sxtb16_ror8, word};
use super::super::isa::Dsp;
use super::DepthwiseMac;
#[cfg(all(target_arch = "arm", feature = "dsp"))]
use super::{dw_row_bounds, Taps};
#[cfg(all(target_arch = "arm", feature = "dsp"))]
use crate::error::KernelError;
use crate::error::KernelResult;

impl DepthwiseMac for Dsp {
    const PACKED_DEPTHWISE: bool = true;
    const SIMPLE_FALLBACK: bool = true;
    const SINGLE_GEMM: bool = false;

    /// One input channel: column words (`columns.rs`); depth multiplier
    /// 1: `SMLAD` row pairs for 3×3 (`pairs.rs`).
    #[inline(always)]
    fn separate_layer(
        ops: &ConvOperands<'_>,
        ch_mult: usize,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<KernelResult> {
        if ops.g.input.c == 1 {
            super::columns::single_columns::<Self>(ops, output, scratch)
        } else if ch_mult == 1 {
            super::pairs::depthwise_pairs(ops, output, scratch)
        } else {
            None
        }
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
