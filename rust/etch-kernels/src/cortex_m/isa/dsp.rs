//! The Armv7E-M / Armv8-M Mainline DSP instructions the int8 inner loops use.
//!
//! LLVM never emits `SXTB16`/`SMLAD` by itself and stable Rust has no ARM DSP
//! intrinsics, so on Arm with the `dsp` feature each one is a single stable
//! `asm!` instruction. Everywhere else (host tests, Cortex-M0/M3 builds that
//! never select this path) the same functions are emulated in plain Rust from
//! the Arm ARM pseudocode, so the DSP code paths run and are tested on the
//! host bit for bit.
//!
//! Words are little-endian: byte `k` of a word is bits `8k..8k+8`, as an
//! `ldr` of four int8 values on a Cortex-M sees them.

#[cfg(all(target_arch = "arm", feature = "dsp"))]
mod imp {
    use core::arch::asm;

    /// `SXTB16 r, x`: bytes 0 and 2 sign-extended into the two halfwords.
    #[inline(always)]
    pub fn sxtb16(x: u32) -> u32 {
        let r: u32;
        // SAFETY: a register-to-register instruction: reads `x`, writes `r`,
        // touches no memory, stack or flags.
        unsafe {
            core::arch::asm!("sxtb16 {r}, {x}", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    /// `SXTB16 r, x, ROR #8`: bytes 1 and 3 sign-extended into the halfwords.
    #[inline(always)]
    pub fn sxtb16_ror8(x: u32) -> u32 {
        let r: u32;
        // SAFETY: as `sxtb16`: registers only, no memory, stack or flags.
        unsafe {
            asm!("sxtb16 {r}, {x}, ror #8", r = lateout(reg) r, x = in(reg) x,
                options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    /// `SMLAD r, a, b, acc`: `acc + a.lo·b.lo + a.hi·b.hi` (signed halfwords),
    /// modulo 2^32.
    #[inline(always)]
    pub fn smlad(a: u32, b: u32, acc: i32) -> i32 {
        let r: i32;
        // SAFETY: registers only, no memory or stack. It may set the sticky
        // Q flag on overflow, so flags are not declared preserved; nothing
        // here reads Q.
        unsafe {
            asm!("smlad {r}, {a}, {b}, {acc}", r = lateout(reg) r, a = in(reg) a,
                b = in(reg) b, acc = in(reg) acc, options(pure, nomem, nostack));
        }
        r
    }

    macro_rules! smla_xy {
        ($name:ident, $insn:literal) => {
            /// `SMLA<x><y> r, a, b, acc`: `acc + a.x·b.y` (signed halfwords;
            /// B = bottom, T = top), modulo 2^32.
            #[inline(always)]
            pub fn $name(a: u32, b: u32, acc: i32) -> i32 {
                let r: i32;
                // SAFETY: registers only, no memory or stack; may set the
                // sticky Q flag (flags not declared preserved, Q never read).
                unsafe {
                    asm!(concat!($insn, " {r}, {a}, {b}, {acc}"), r = lateout(reg) r,
                        a = in(reg) a, b = in(reg) b, acc = in(reg) acc,
                        options(pure, nomem, nostack));
                }
                r
            }
        };
    }
    /// `SXTAB16 r, acc, x`: bytes 0 and 2 of `x` sign-extended and added
    /// to the halfwords of `acc` (each modulo 2^16).
    #[inline(always)]
    pub fn sxtab16(acc: u32, x: u32) -> u32 {
        let r: u32;
        // SAFETY: registers only, no memory, stack or flags.
        unsafe {
            asm!("sxtab16 {r}, {acc}, {x}", r = lateout(reg) r, acc = in(reg) acc,
                x = in(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    /// `SXTAB16 r, acc, x, ROR #8`: bytes 1 and 3 of `x` added likewise.
    #[inline(always)]
    pub fn sxtab16_ror8(acc: u32, x: u32) -> u32 {
        let r: u32;
        // SAFETY: registers only, no memory, stack or flags.
        unsafe {
            asm!("sxtab16 {r}, {acc}, {x}, ror #8", r = lateout(reg) r, acc = in(reg) acc,
                x = in(reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        r
    }

    smla_xy!(smlabb, "smlabb");
    smla_xy!(smlabt, "smlabt");
    smla_xy!(smlatb, "smlatb");
    smla_xy!(smlatt, "smlatt");
}

#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
mod imp {
    #[inline(always)]
    fn lo(x: u32) -> i32 {
        x as u16 as i16 as i32
    }
    #[inline(always)]
    fn hi(x: u32) -> i32 {
        (x >> 16) as u16 as i16 as i32
    }
    #[inline(always)]
    fn byte(x: u32, k: u32) -> u32 {
        (x >> (8 * k)) as u8 as i8 as i16 as u16 as u32
    }

    /// `SXTB16 r, x`: bytes 0 and 2 sign-extended into the two halfwords.
    #[inline(always)]
    pub fn sxtb16(x: u32) -> u32 {
        byte(x, 0) | (byte(x, 2) << 16)
    }

    /// `SXTB16 r, x, ROR #8`: bytes 1 and 3 sign-extended into the halfwords.
    #[inline(always)]
    pub fn sxtb16_ror8(x: u32) -> u32 {
        sxtb16(x.rotate_right(8))
    }

    /// `SXTAB16`: bytes 0 and 2 of `x` sign-extended and added to the
    /// halfwords of `acc`, each modulo 2^16.
    #[inline(always)]
    pub fn sxtab16(acc: u32, x: u32) -> u32 {
        let e = sxtb16(x);
        (acc.wrapping_add(e) & 0xffff) | (acc & 0xffff_0000).wrapping_add(e & 0xffff_0000)
    }

    /// `SXTAB16 ..., ROR #8`: bytes 1 and 3 added likewise.
    #[inline(always)]
    pub fn sxtab16_ror8(acc: u32, x: u32) -> u32 {
        sxtab16(acc, x.rotate_right(8))
    }

    /// `SMLAD`: `acc + a.lo·b.lo + a.hi·b.hi` modulo 2^32 (the Arm ARM sums
    /// exactly, then keeps the low 32 bits).
    #[inline(always)]
    pub fn smlad(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lo(a) * lo(b)).wrapping_add(hi(a) * hi(b))
    }

    /// `SMLABB`: `acc + a.bottom·b.bottom`.
    #[inline(always)]
    pub fn smlabb(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lo(a) * lo(b))
    }
    /// `SMLABT`: `acc + a.bottom·b.top`.
    #[inline(always)]
    pub fn smlabt(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(lo(a) * hi(b))
    }
    /// `SMLATB`: `acc + a.top·b.bottom`.
    #[inline(always)]
    pub fn smlatb(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(hi(a) * lo(b))
    }
    /// `SMLATT`: `acc + a.top·b.top`.
    #[inline(always)]
    pub fn smlatt(a: u32, b: u32, acc: i32) -> i32 {
        acc.wrapping_add(hi(a) * hi(b))
    }
}

pub use imp::*;

/// Four int8 values as the little-endian word an `ldr` loads (one
/// unaligned load on Armv7-M and later).
#[inline(always)]
pub fn word(b: &[i8; 4]) -> u32 {
    u32::from_le_bytes([b[0] as u8, b[1] as u8, b[2] as u8, b[3] as u8])
}

/// Two int16 lanes in one word: `lo` in bits 0..16, `hi` in 16..32.
#[inline(always)]
pub fn pack16(lo: i32, hi: i32) -> u32 {
    (lo as u16 as u32) | ((hi as u32) << 16)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dsp_instructions_follow_the_arm_arm() {
        use super::*;
        assert_eq!(sxtb16(0x80_7f_01_ff), 0x007f_ffff);
        assert_eq!(sxtb16_ror8(0x80_7f_01_ff), 0xff80_0001);
        assert_eq!(word(&[-1, 1, 127, -128]), 0x807f_01ff);
        // Halfword lanes wrap on their own: 0x7fff + 1 and 0x0000 - 1.
        assert_eq!(sxtab16(pack16(0x7fff, 0), 0x00ff_0001), 0xffff_8000);
        assert_eq!(
            sxtab16_ror8(pack16(-3, 100), 0x80_7f_01_ff),
            pack16(-2, -28)
        );
        // (-32768)² + (-32768)² + i32::MAX wraps modulo 2^32.
        let m = 0x8000_8000;
        assert_eq!(smlad(m, m, i32::MAX), i32::MAX.wrapping_add(1 << 31));
        assert_eq!(smlad(pack16(3, -2), pack16(-5, 7), 100), 100 - 15 - 14);
        let (a, b) = (pack16(-3, 5), pack16(7, -11));
        assert_eq!(smlabb(a, b, 1), 1 - 21);
        assert_eq!(smlabt(a, b, 1), 1 + 33);
        assert_eq!(smlatb(a, b, 1), 1 + 35);
        assert_eq!(smlatt(a, b, 1), 1 - 55);
    }
}
