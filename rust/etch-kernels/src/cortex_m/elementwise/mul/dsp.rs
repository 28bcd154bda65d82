//! [`MulLoop`] with `SMLAL` requantization (Armv7E-M, Armv8-M Mainline):
//! one `asm!` loop, 14 instructions per element (two sign-extending loads,
//! the offsets and the product, the output requantization as
//! [`fast_words`](super::super::super::requant::fast_words) with the output
//! offset folded into its high word, `SSAT #8`). Off target the same steps
//! run in plain Rust.

use super::super::super::isa::Dsp;
use super::super::super::requant::Requant;
use super::{MulLoop, MulQuant};

impl MulLoop for Dsp {
    #[inline(always)]
    fn mul_loop(q: &MulQuant, a: &[i8], b: &[i8], out: &mut [i8]) -> bool {
        let r = Requant::new(q.out.1, q.out.2);
        // Exact when the channel is fast and the output offset folds
        // (`SSAT #8` is the int8 clamp).
        if !r.is_fast()
            || !(-128..=127).contains(&q.out.0)
            || a.len() != out.len()
            || b.len() != out.len()
        {
            return false;
        }
        if !out.is_empty() {
            mul_loop(q, &r.to_words(q.out.0), a, b, out);
        }
        true
    }
}

#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
fn mul_loop(q: &MulQuant, w: &[u64; 2], a: &[i8], b: &[i8], out: &mut [i8]) {
    use super::super::super::requant::fast_words;
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = fast_words(w, q.product(x, y));
    }
}

#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn mul_loop(q: &MulQuant, w: &[u64; 2], a: &[i8], b: &[i8], out: &mut [i8]) {
    let (mult, hiw, rm1) = (w[0] as u32, (w[0] >> 32) as u32, w[1] as u32);
    // SAFETY: the caller checked `a`, `b` and `out` of one length n ≥ 1:
    // pass i reads a[i] and b[i] and writes out[i]. No stack; flags (and
    // the Q bit) are clobbered.
    unsafe {
        core::arch::asm!(
            "2:",
            "ldrsb {x}, [{a}], #1",
            "ldrsb {y}, [{b}], #1",
            "sub {x}, {x}, {za}",
            "sub {y}, {y}, {zb}",
            "mul {x}, {x}, {y}",
            // fast_words: (hi:lo) = (hiw + sign : 2^30 | sign bit) + p·mult.
            "and {y}, {x}, #0x80000000",
            "orr {y}, {y}, #0x40000000",
            "add {h}, {hiw}, {x}, asr #31",
            "smlal {y}, {h}, {x}, {mult}",
            "asr {h}, {h}, {rm1}",
            "ssat {h}, #8, {h}",
            "strb {h}, [{o}], #1",
            "subs {n}, {n}, #1",
            "bne 2b",
            a = inout(reg) a.as_ptr() => _,
            b = inout(reg) b.as_ptr() => _,
            o = inout(reg) out.as_mut_ptr() => _,
            n = inout(reg) out.len() => _,
            za = in(reg) q.a_zp,
            zb = in(reg) q.b_zp,
            mult = in(reg) mult,
            hiw = in(reg) hiw,
            rm1 = in(reg) rm1,
            x = out(reg) _,
            y = out(reg) _,
            h = out(reg) _,
            options(nostack),
        );
    }
}
