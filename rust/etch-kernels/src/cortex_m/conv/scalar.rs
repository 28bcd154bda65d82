//! [`ConvMac`] in plain Rust, with a Thumb-2 `asm!` loop for
//! [`ConvMac::dot_2x2_rows`] on Armv7-M/Armv8-M Mainline (`etch_thumb2`).

use super::super::mac::{mac, Scalar};
use super::ConvMac;

impl ConvMac for Scalar {
    const PACKED_POINTWISE: bool = false;

    #[cfg(etch_thumb2)]
    #[inline(always)]
    fn dot_2x2_rows(xs: &[i8], ws: &[i8], n: usize) -> [i32; 4] {
        if n == 0 || xs.len() < 2 * n || ws.len() < 2 * n {
            return Self::dot_2x2(&[], &[], &[], &[]);
        }
        // An odd first input in Rust, then pairs of inputs in `asm!`: LLVM's
        // loop kept four pointers plus an index (11 instructions per input
        // against 9 here, measured on Cortex-M3 under QEMU).
        let (mut a, mut b, mut c, mut d) = (0i32, 0i32, 0i32, 0i32);
        let mut start = 0;
        if n % 2 == 1 {
            let (Some(&x0), Some(&x1), Some(&w0), Some(&w1)) =
                (xs.first(), xs.get(n), ws.first(), ws.get(n))
            else {
                return [0; 4];
            };
            (a, b, c, d) = (
                mac(0, x0, w0),
                mac(0, x0, w1),
                mac(0, x1, w0),
                mac(0, x1, w1),
            );
            start = 1;
        }
        let pairs = (n - start) / 2;
        if pairs > 0 {
            // SAFETY: `pairs` passes read `xs[k]`, `xs[k + n]`, `ws[k]` and
            // `ws[k + n]` for `start ≤ k < n` (the pointer advances one byte
            // per input; the second row is `n − 1` bytes past it), all inside
            // the slices since both hold at least `2n` bytes (checked above).
            // Registers only otherwise; flags are clobbered.
            unsafe {
                core::arch::asm!(
                    "2:",
                    "ldrsb {xa}, [{xp}], #1",
                    "ldrsb {xb}, [{xp}, {s}]",
                    "ldrsb {wa}, [{wp}], #1",
                    "ldrsb {wb}, [{wp}, {s}]",
                    "mla {a}, {xa}, {wa}, {a}",
                    "mla {b}, {xa}, {wb}, {b}",
                    "mla {c}, {xb}, {wa}, {c}",
                    "mla {d}, {xb}, {wb}, {d}",
                    "ldrsb {xa}, [{xp}], #1",
                    "ldrsb {xb}, [{xp}, {s}]",
                    "ldrsb {wa}, [{wp}], #1",
                    "ldrsb {wb}, [{wp}, {s}]",
                    "mla {a}, {xa}, {wa}, {a}",
                    "mla {b}, {xa}, {wb}, {b}",
                    "mla {c}, {xb}, {wa}, {c}",
                    "mla {d}, {xb}, {wb}, {d}",
                    "subs {m}, {m}, #1",
                    "bne 2b",
                    xp = inout(reg) xs.as_ptr().wrapping_add(start) => _,
                    wp = inout(reg) ws.as_ptr().wrapping_add(start) => _,
                    s = in(reg) n - 1,
                    m = inout(reg) pairs => _,
                    a = inout(reg) a,
                    b = inout(reg) b,
                    c = inout(reg) c,
                    d = inout(reg) d,
                    xa = out(reg) _,
                    xb = out(reg) _,
                    wa = out(reg) _,
                    wb = out(reg) _,
                    options(nostack, readonly),
                );
            }
        }
        [a, b, c, d]
    }

    #[inline(always)]
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
        let lane = |w: u32, h: u32| (w >> (16 * h)) as u16 as i16 as i32;
        let mut a = init;
        for (x, w) in x.as_chunks::<4>().0.iter().zip(packed.as_chunks::<8>().0) {
            for (r, a) in a.iter_mut().enumerate() {
                let (e, o) = (w[2 * r], w[2 * r + 1]);
                *a = a
                    .wrapping_add(x[0] as i32 * lane(e, 0))
                    .wrapping_add(x[2] as i32 * lane(e, 1))
                    .wrapping_add(x[1] as i32 * lane(o, 0))
                    .wrapping_add(x[3] as i32 * lane(o, 1));
            }
        }
        a
    }

    #[inline(always)]
    fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2] {
        let (mut a0, mut a1) = (0, 0);
        for ((&x, &w0), &w1) in x.iter().zip(w0).zip(w1) {
            a0 = mac(a0, x, w0);
            a1 = mac(a1, x, w1);
        }
        [a0, a1]
    }

    #[inline(always)]
    fn dot_2x2(x0: &[i8], x1: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 4] {
        let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
        for (((&x0, &x1), &w0), &w1) in x0.iter().zip(x1).zip(w0).zip(w1) {
            a = mac(a, x0, w0);
            b = mac(b, x0, w1);
            c = mac(c, x1, w0);
            d = mac(d, x1, w1);
        }
        [a, b, c, d]
    }
}
