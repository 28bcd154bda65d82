//! [`DepthwiseMac`] in plain Rust, with a Thumb-2 `asm!` loop for
//! [`DepthwiseMac::dw_row`] on Armv7-M/Armv8-M Mainline (`etch_thumb2`).

use super::super::mac::{mac, Scalar};
use super::DepthwiseMac;
#[cfg(etch_thumb2)]
use super::{dw_row_bounds, Taps};
#[cfg(etch_thumb2)]
use crate::error::KernelError;

impl DepthwiseMac for Scalar {
    const PACKED_DEPTHWISE: bool = true;

    #[cfg(etch_thumb2)]
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
            // SAFETY: as the DSP version: block b reads bytes 4b..4b+4 of
            // each of the n ≥ 1 runs (every run holds `taps.len() ≥ 4·blocks`
            // bytes) and words 2n·b .. 2n·(b+1) of `w`, all checked above.
            // Lanes: word 0 of a tap holds channels 0 (low) and 2 (high),
            // word 1 channels 1 and 3. Registers only; flags clobbered.
            unsafe {
                core::arch::asm!(
                    "2:",
                    "ldr {p}, [{tp}], #4",
                    "add {p}, {p}, {j}",
                    "ldr {w}, [{wp}], #4",
                    "ldrsb {x}, [{p}]",
                    "sxth {t}, {w}",
                    "mla {a0}, {x}, {t}, {a0}",
                    "ldrsb {x}, [{p}, #2]",
                    "asrs {t}, {w}, #16",
                    "mla {a2}, {x}, {t}, {a2}",
                    "ldr {w}, [{wp}], #4",
                    "ldrsb {x}, [{p}, #1]",
                    "sxth {t}, {w}",
                    "mla {a1}, {x}, {t}, {a1}",
                    "ldrsb {x}, [{p}, #3]",
                    "asrs {t}, {w}, #16",
                    "mla {a3}, {x}, {t}, {a3}",
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
                    p = out(reg) _,
                    w = out(reg) _,
                    x = out(reg) _,
                    t = out(reg) _,
                    options(nostack, readonly),
                );
            }
            *ob = [a0, a1, a2, a3];
        }
        Ok(())
    }
    #[inline(always)]
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4] {
        [
            mac(acc[0], x[0], w[0]),
            mac(acc[1], x[1], w[1]),
            mac(acc[2], x[2], w[2]),
            mac(acc[3], x[3], w[3]),
        ]
    }
}
