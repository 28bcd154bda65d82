//! Bulk byte copies for the data-movement kernels (clone, pad).
//!
//! `copy_from_slice` becomes a call to compiler-builtins' `memcpy`, which on
//! Cortex-M moves one word per loop iteration (about 1.25 instructions a
//! byte). On Arm, word-aligned runs go 48 bytes per iteration through four
//! `LDM`/`STM` pairs of three low registers (10 instructions: 0.21 a byte, the
//! same code on every core from Armv6-M up); the tail stays plain Rust.
//! Elsewhere the block primitive is the same copy in plain Rust, so the
//! splitting is tested on the host.

/// Bytes one block moves.
const BLOCK: usize = 48;

/// Copies `src` into `dst` if their lengths are equal (returns whether).
pub(crate) fn copy_bytes(dst: &mut [u8], src: &[u8]) -> bool {
    let n = dst.len();
    if n != src.len() {
        return false;
    }
    let aligned = (dst.as_ptr() as usize | src.as_ptr() as usize).is_multiple_of(4);
    let split = if aligned { n - n % BLOCK } else { 0 };
    let (Some((dh, dt)), Some((sh, st))) =
        (dst.split_at_mut_checked(split), src.split_at_checked(split))
    else {
        return false;
    };
    imp::copy_blocks(dh, sh);
    etch_runtime::memory::copy_slice(dt, st)
}

#[cfg(target_arch = "arm")]
mod imp {
    use super::BLOCK;

    /// Copies `dst.len() / 48` whole blocks; both slices word aligned and at
    /// least that long (`copy_bytes` splits them so).
    #[inline(always)]
    pub(super) fn copy_blocks(dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len()) / BLOCK;
        if n == 0 || !(dst.as_ptr() as usize | src.as_ptr() as usize).is_multiple_of(4) {
            return;
        }
        // SAFETY: reads `n * 48` bytes from `src` and writes as many to
        // `dst`, both within their slices (n = the shorter length / 48);
        // `&mut dst` and `&src` cannot overlap; both are word aligned (checked
        // above), as LDM/STM need. r3-r5 are declared clobbered, r0/r1 are
        // the advanced pointers, r2 the end (low registers only: Armv6-M's
        // LDM/STM take no others); no stack, no other memory.
        unsafe {
            let end = src.as_ptr().add(n * BLOCK);
            core::arch::asm!(
                "2:",
                "ldmia r0!, {{r3, r4, r5}}",
                "stmia r1!, {{r3, r4, r5}}",
                "ldmia r0!, {{r3, r4, r5}}",
                "stmia r1!, {{r3, r4, r5}}",
                "ldmia r0!, {{r3, r4, r5}}",
                "stmia r1!, {{r3, r4, r5}}",
                "ldmia r0!, {{r3, r4, r5}}",
                "stmia r1!, {{r3, r4, r5}}",
                "cmp r0, r2",
                "bne 2b",
                inout("r0") src.as_ptr() => _,
                inout("r1") dst.as_mut_ptr() => _,
                in("r2") end,
                out("r3") _, out("r4") _, out("r5") _,
                options(nostack),
            );
        }
    }
}

#[cfg(not(target_arch = "arm"))]
mod imp {
    use super::BLOCK;

    /// The Arm loops' effect in plain Rust: whole 48-byte blocks only.
    pub(super) fn copy_blocks(dst: &mut [u8], src: &[u8]) {
        let n = dst.len().min(src.len()) / BLOCK * BLOCK;
        if let (Some(d), Some(s)) = (dst.get_mut(..n), src.get(..n)) {
            etch_runtime::memory::copy_slice(d, s);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn copy_bytes_every_alignment_and_length() {
        let src: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8).collect();
        for s_off in 0..4 {
            for d_off in 0..4 {
                for len in [0, 1, 3, 4, 47, 48, 49, 64, 95, 96, 100, 150] {
                    let mut dst = [0xAAu8; 200];
                    assert!(copy_bytes(
                        &mut dst[d_off..d_off + len],
                        &src[s_off..s_off + len]
                    ));
                    assert_eq!(&dst[d_off..d_off + len], &src[s_off..s_off + len]);
                    assert!(dst[..d_off].iter().all(|&b| b == 0xAA));
                    assert!(dst[d_off + len..].iter().all(|&b| b == 0xAA));
                }
            }
        }
    }

    #[test]
    fn copy_bytes_unequal_lengths_copy_nothing() {
        let mut dst = [0u8; 40];
        assert!(!copy_bytes(&mut dst, &[7u8; 36]));
        assert_eq!(dst, [0u8; 40]);
    }
}
