//! The fully connected loop of Cortex-M0/M3 ([`Scalar`](super::super::isa::Scalar)'s
//! `fc_layer`, [`fc_offset_pairs`](super::fc_offset_pairs)), also `conv`'s tap runs.

/// `[Σ (x + off)·w0, Σ (x + off)·w1]` over the common length, wrapping.
#[cfg(not(etch_thumb2))]
#[inline(always)]
pub(crate) fn dot_1x2_off(x: &[i8], off: i32, w0: &[i8], w1: &[i8]) -> [i32; 2] {
    let (mut a0, mut a1) = (0i32, 0i32);
    for ((&x, &w0), &w1) in x.iter().zip(w0).zip(w1) {
        let v = (x as i32).wrapping_add(off);
        a0 = a0.wrapping_add(v.wrapping_mul(w0 as i32));
        a1 = a1.wrapping_add(v.wrapping_mul(w1 as i32));
    }
    [a0, a1]
}

/// [`dot_1x2_off`] on Thumb-2: an odd first input in Rust, then pairs of
/// inputs in `asm!` (the fully connected loop, and `conv`'s tap runs with
/// `off = 0`): 7 instructions per input against about 8.6 per
/// multiply-accumulate for LLVM's zipped loop plus the weight sums
/// (Cortex-M3, the autoencoder under QEMU).
#[cfg(etch_thumb2)]
#[inline(always)]
pub(crate) fn dot_1x2_off(x: &[i8], off: i32, w0: &[i8], w1: &[i8]) -> [i32; 2] {
    let n = x.len().min(w0.len()).min(w1.len());
    let (mut a0, mut a1, mut start) = (0i32, 0i32, 0);
    if n % 2 == 1 {
        let (Some(&x), Some(&u), Some(&v)) = (x.first(), w0.first(), w1.first()) else {
            return [0; 2];
        };
        let x = (x as i32).wrapping_add(off);
        (a0, a1, start) = (x.wrapping_mul(u as i32), x.wrapping_mul(v as i32), 1);
    }
    let pairs = (n - start) / 2;
    if pairs > 0 {
        // SAFETY: `pairs` passes read `x[k]`, `w0[k]` and `w1[k]` for
        // `start ≤ k < n` (each pointer advances one byte per input),
        // inside the slices as `n` is the shortest length. Registers only
        // otherwise; flags are clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldrsb {x}, [{xp}], #1",
                "ldrsb {u}, [{p0}], #1",
                "ldrsb {v}, [{p1}], #1",
                "add {x}, {x}, {off}",
                "mla {a0}, {x}, {u}, {a0}",
                "mla {a1}, {x}, {v}, {a1}",
                "ldrsb {x}, [{xp}], #1",
                "ldrsb {u}, [{p0}], #1",
                "ldrsb {v}, [{p1}], #1",
                "add {x}, {x}, {off}",
                "mla {a0}, {x}, {u}, {a0}",
                "mla {a1}, {x}, {v}, {a1}",
                "subs {m}, {m}, #1",
                "bne 2b",
                xp = inout(reg) x.as_ptr().wrapping_add(start) => _,
                p0 = inout(reg) w0.as_ptr().wrapping_add(start) => _,
                p1 = inout(reg) w1.as_ptr().wrapping_add(start) => _,
                m = inout(reg) pairs => _,
                off = in(reg) off,
                a0 = inout(reg) a0,
                a1 = inout(reg) a1,
                x = out(reg) _,
                u = out(reg) _,
                v = out(reg) _,
                options(nostack, readonly),
            );
        }
    }
    [a0, a1]
}
