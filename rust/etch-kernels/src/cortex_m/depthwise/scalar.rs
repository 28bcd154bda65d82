//! [`DepthwiseMac`] in plain Rust, with `asm!` loops for
//! [`DepthwiseMac::dw_row`] on Armv7-M/Armv8-M Mainline (`etch_thumb2`) and
//! on Armv6-M (`etch_v6m`).

use super::super::isa::{mac, Scalar};
use super::DepthwiseMac;
#[cfg(any(etch_thumb2, etch_v6m))]
use super::{dw_row_bounds, Taps};
#[cfg(any(etch_thumb2, etch_v6m))]
use crate::error::KernelError;

impl DepthwiseMac for Scalar {
    const PACKED_DEPTHWISE: bool = true;

    /// Thumb-2: every block of the pixel in one `asm!` block (the block
    /// loop's state in a 24-byte stack frame: all twelve registers are in
    /// use by the tap loop).
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
        if blocks == 0 {
            return Ok(());
        }
        // SAFETY: as the DSP version: block b (b < blocks, j = 4b) reads
        // bytes 4b..4b+4 of each of the n ≥ 1 runs (every run holds
        // `taps.len() ≥ 4·blocks` bytes), words 2n·b .. 2n·(b+1) of `w` (the
        // weight pointer runs on from block to block) and `init[4b..4b+4]`,
        // and writes `out[4b..4b+4]`, all checked by `dw_row_bounds`; the
        // pointer table holds n entries. `init` and `out` are word aligned
        // (`ldrd`/`strd`). Lanes: word 0 of a tap holds channels 0 (low) and
        // 2 (high), word 1 channels 1 and 3. The stack frame is restored;
        // flags are clobbered.
        unsafe {
            core::arch::asm!(
                "sub sp, sp, #24",
                "str {tp}, [sp, #0]",
                "str {n}, [sp, #4]",
                "str {a0}, [sp, #8]",
                "str {a1}, [sp, #12]",
                "str {a2}, [sp, #16]",
                "movs {j}, #0",
                // Per block: accumulators from `init`, then the taps.
                "3:",
                "ldr {x}, [sp, #8]",
                "ldrd {a0}, {a1}, [{x}], #8",
                "ldrd {a2}, {a3}, [{x}], #8",
                "str {x}, [sp, #8]",
                "ldr {tp}, [sp, #0]",
                "ldr {n}, [sp, #4]",
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
                // Accumulators to `out`; next block.
                "ldr {x}, [sp, #12]",
                "strd {a0}, {a1}, [{x}], #8",
                "strd {a2}, {a3}, [{x}], #8",
                "str {x}, [sp, #12]",
                "adds {j}, {j}, #4",
                "ldr {x}, [sp, #16]",
                "subs {x}, {x}, #1",
                "str {x}, [sp, #16]",
                "bne 3b",
                "add sp, sp, #24",
                tp = inout(reg) taps.ptrs().as_ptr() => _,
                wp = inout(reg) w.as_ptr() => _,
                n = inout(reg) n => _,
                j = out(reg) _,
                a0 = inout(reg) init.as_ptr() => _,
                a1 = inout(reg) out.as_mut_ptr() => _,
                a2 = inout(reg) blocks => _,
                a3 = out(reg) _,
                p = out(reg) _,
                w = out(reg) _,
                x = out(reg) _,
                t = out(reg) _,
            );
        }
        Ok(())
    }

    /// Armv6-M: every block of the pixel in one `asm!` block (the registers
    /// it needs beyond r0–r5 are saved once per pixel); per tap one `ldm` of
    /// the run pointer, one of both weight words, and per channel
    /// `ldrb`/`sxtb` (no `ldrsb` with an immediate offset), the lane
    /// (`sxth` or `asrs #16`), `MULS` and `ADD` into r8–r11.
    #[cfg(etch_v6m)]
    #[inline(always)]
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        let n = dw_row_bounds(taps, w, init, out, blocks)?;
        if blocks == 0 {
            return Ok(());
        }
        let tp = taps.ptrs().as_ptr();
        // SAFETY: as the Thumb-2 version: block b (b < blocks) reads bytes
        // 4b..4b+4 of each of the n ≥ 1 runs (each at least `4·blocks`
        // long), words 2n·b .. 2n·(b+1) of `w` (in order: the weight
        // pointer runs on from block to block), `init[4b..4b+4]` and writes
        // `out[4b..4b+4]`, all checked by `dw_row_bounds`; the pointer table
        // holds n entries (r7 = one past it). `w`, `init` and `out` are word
        // aligned. r6–r12 are not operands on Armv6-M: saved and restored on
        // the stack, with a 24-byte frame for the block loop's state (so no
        // `nostack`); flags are clobbered.
        unsafe {
            core::arch::asm!(
                "push {{r6, r7}}",
                "mov r6, r8",
                "mov r7, r9",
                "push {{r6, r7}}",
                "mov r6, r10",
                "mov r7, r11",
                "push {{r6, r7}}",
                "mov r6, r12",
                "push {{r6}}",
                "sub sp, #24",
                "str r0, [sp, #0]",
                "mov r7, r1",
                "mov r6, r2",
                "str r3, [sp, #8]",
                "str r4, [sp, #12]",
                "str r5, [sp, #16]",
                "movs r1, #0",
                "mov r12, r1",
                // Per block: accumulators from `init`.
                "3:",
                "ldr r0, [sp, #8]",
                "ldm r0!, {{r1, r2, r3, r4}}",
                "str r0, [sp, #8]",
                "mov r8, r1",
                "mov r9, r2",
                "mov r10, r3",
                "mov r11, r4",
                "ldr r0, [sp, #0]",
                // Per tap: channels 0 and 2 in word 0, 1 and 3 in word 1.
                "2:",
                "ldm r0!, {{r1}}",
                "add r1, r12",
                "ldm r6!, {{r3, r4}}",
                "ldrb r2, [r1, #0]",
                "sxtb r2, r2",
                "sxth r5, r3",
                "muls r5, r2, r5",
                "add r8, r5",
                "ldrb r2, [r1, #2]",
                "sxtb r2, r2",
                "asrs r5, r3, #16",
                "muls r5, r2, r5",
                "add r10, r5",
                "ldrb r2, [r1, #1]",
                "sxtb r2, r2",
                "sxth r5, r4",
                "muls r5, r2, r5",
                "add r9, r5",
                "ldrb r2, [r1, #3]",
                "sxtb r2, r2",
                "asrs r5, r4, #16",
                "muls r5, r2, r5",
                "add r11, r5",
                "cmp r0, r7",
                "bne 2b",
                // Accumulators to `out`; next block.
                "ldr r0, [sp, #12]",
                "mov r1, r8",
                "mov r2, r9",
                "mov r3, r10",
                "mov r4, r11",
                "stm r0!, {{r1, r2, r3, r4}}",
                "str r0, [sp, #12]",
                "movs r1, #4",
                "add r12, r1",
                "ldr r1, [sp, #16]",
                "subs r1, #1",
                "str r1, [sp, #16]",
                "bne 3b",
                "add sp, #24",
                "pop {{r6}}",
                "mov r12, r6",
                "pop {{r6, r7}}",
                "mov r10, r6",
                "mov r11, r7",
                "pop {{r6, r7}}",
                "mov r8, r6",
                "mov r9, r7",
                "pop {{r6, r7}}",
                inout("r0") tp => _,
                inout("r1") tp.wrapping_add(n) => _,
                inout("r2") w.as_ptr() => _,
                inout("r3") init.as_ptr() => _,
                inout("r4") out.as_mut_ptr() => _,
                inout("r5") blocks => _,
            );
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
