//! [`AddLoop`] with `SMLAL` requantization (Armv7E-M, Armv8-M Mainline):
//! one `asm!` loop, 18 instructions per element against about 29 for
//! LLVM's loop (two lookups, the output requantization as
//! [`fast_words`](super::super::requant::fast_words) with the output
//! offset folded into its high word, `SSAT`, the lower activation bound).
//! Off target the same steps run in plain Rust.

use super::super::isa::Dsp;
use super::super::requant::Requant;
use super::{AddLoop, AddQuant};

impl AddLoop for Dsp {
    #[inline(always)]
    fn add_tables(t: &[[i32; 256]; 2], q: &AddQuant, a: &[i8], b: &[i8], out: &mut [i8]) -> bool {
        let r = Requant::new(q.out.1, q.out.2);
        // Exact when the channel is fast, the output offset folds and the
        // activation range is [act_min, 127] inside int8 (`SSAT #8`, then
        // the lower bound).
        if !r.is_fast()
            || !(-128..=127).contains(&q.out.0)
            || q.act_max != 127
            || !(-128..=127).contains(&q.act_min)
            || a.len() != out.len()
            || b.len() != out.len()
        {
            return false;
        }
        if !out.is_empty() {
            add_loop(t, &r.to_words(q.out.0), q.act_min, a, b, out);
        }
        true
    }
}

#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn add_loop(t: &[[i32; 256]; 2], w: &[u64; 2], lo: i32, a: &[i8], b: &[i8], out: &mut [i8]) {
    use super::super::requant::fast_words;
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        let s = t[0][x as u8 as usize].wrapping_add(t[1][y as u8 as usize]);
        *o = (fast_words(w, s) as i32).max(lo) as i8;
    }
}

#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn add_loop(t: &[[i32; 256]; 2], w: &[u64; 2], lo: i32, a: &[i8], b: &[i8], out: &mut [i8]) {
    let (mult, hiw, rm1) = (w[0] as u32, (w[0] >> 32) as u32, w[1] as u32);
    // SAFETY: the caller checked `a`, `b` and `out` of one length n ≥ 1:
    // pass i reads a[i] and b[i], words a[i] (0..255) of table 0 and 256 +
    // b[i] of the two tables back to back (`t` is 2048 contiguous bytes,
    // 4-aligned), and writes out[i]. No stack; flags (and the Q bit) are
    // clobbered.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldrb {x}, [{a}], #1",
            "ldrb {y}, [{b}], #1",
            "add {y}, {y}, #256",
            "ldr {x}, [{t}, {x}, lsl #2]",
            "ldr {y}, [{t}, {y}, lsl #2]",
            "add {x}, {x}, {y}",
            // fast_words: (hi:lo) = (hiw + sign : 2^30 | sign bit) + s·mult.
            "and {y}, {x}, #0x80000000",
            "orr {y}, {y}, #0x40000000",
            "add {h}, {hiw}, {x}, asr #31",
            "smlal {y}, {h}, {x}, {mult}",
            "asr {h}, {h}, {rm1}",
            "ssat {h}, #8, {h}",
            "cmp {h}, {lo}",
            "it lt",
            "movlt {h}, {lo}",
            "strb {h}, [{o}], #1",
            "subs {n}, {n}, #1",
            "bne 2b",
            a = inout(reg) a.as_ptr() => _,
            b = inout(reg) b.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) out.len() => _,
            t = in(reg) t.as_ptr(),
            mult = in(reg) mult,
            hiw = in(reg) hiw,
            rm1 = in(reg) rm1,
            lo = in(reg) lo,
            x = out(reg) _,
            y = out(reg) _,
            h = out(reg) _,
            options(nostack),
        );
    }
}
