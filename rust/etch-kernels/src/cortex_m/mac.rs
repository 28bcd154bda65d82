//! Multiply-accumulate building blocks of the int8 kernels, in two
//! implementations with identical integer results: [`Scalar`] (plain Rust;
//! Cortex-M0/M3 and the host) and [`Dsp`] (`SXTB16` + `SMLAD`/`SMLAxy`,
//! Armv7E-M and Armv8-M Mainline; emulated off-target, see [`super::dsp`]).
//!
//! Every function returns raw sums `Σ x·w` of int8 values (no offsets):
//! the kernels fold `input_offset` in as `offset·Σw`, which is the same
//! integer modulo 2^32 as CMSIS-NN's `Σ (x + offset)·w`. Lengths: the
//! common prefix of the slices.

use super::dsp::{smlabb, smlad, smlatt, sxtb16, sxtb16_ror8, word};
use super::kernels::Taps;
use crate::error::KernelError;

pub(crate) trait Mac {
    /// `[Σ x·w0, Σ x·w1]`: one input row against two weight rows.
    fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2];
    /// `[Σ x0·w0, Σ x0·w1, Σ x1·w0, Σ x1·w1]`: two pixels × two channels.
    fn dot_2x2(x0: &[i8], x1: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 4];
    /// Whether [`Mac::dot_1x4`] on packed weights beats [`Mac::dot_2x2`]
    /// (true where unpacking weights costs instructions: DSP).
    const PACKED_POINTWISE: bool;
    /// Packs four weight rows (whole groups of four values) for
    /// [`Mac::dot_1x4`]: per group `g` and row `r`, two words at
    /// `8g + 2r`: values `4g, 4g+2` and `4g+1, 4g+3` as int16 lanes.
    fn pack4(w: [&[i8]; 4], out: &mut [u32]) {
        for (g, o) in out.as_chunks_mut::<8>().0.iter_mut().enumerate() {
            for (r, row) in w.iter().enumerate() {
                let Some(v) = row.get(4 * g..4 * g + 4).and_then(|v| v.try_into().ok()) else {
                    return;
                };
                let v = word(v);
                o[2 * r] = sxtb16(v);
                o[2 * r + 1] = sxtb16_ror8(v);
            }
        }
    }
    /// `[Σ x·w_r]` for the four rows packed by [`Mac::pack4`], over the
    /// whole groups of four in `x`.
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4];
    /// Whether the depthwise kernel should use [`Mac::dw_block`].
    const PACKED_DEPTHWISE: bool;
    /// `[Σ_t run_t[j + l]·w_t[l]]` for lanes `l < 4` over the taps of
    /// `taps`, with `w` the block's unpacked weights (two words per tap:
    /// lanes 0,2 and 1,3). Errors unless `j + 4 ≤ taps.len()` and `w` has two
    /// words per tap.
    fn dw_block(
        taps: &Taps<'_>,
        j: usize,
        w: &[u32],
        init: [i32; 4],
    ) -> Result<[i32; 4], KernelError> {
        if j + 4 > taps.len() || w.len() < 2 * taps.count() {
            return Err(KernelError::InvalidArgument);
        }
        let lane = |w: u32, h: u32| (w >> (16 * h)) as u16 as i16 as i32;
        let mut a = init;
        for (run, w) in taps.runs().zip(w.as_chunks::<2>().0) {
            let x = run.get(j..j + 4).unwrap_or(&[0; 4]);
            a[0] = a[0].wrapping_add(x[0] as i32 * lane(w[0], 0));
            a[2] = a[2].wrapping_add(x[2] as i32 * lane(w[0], 1));
            a[1] = a[1].wrapping_add(x[1] as i32 * lane(w[1], 0));
            a[3] = a[3].wrapping_add(x[3] as i32 * lane(w[1], 1));
        }
        Ok(a)
    }
    /// [`Mac::dw_block`] for blocks `0..blocks` of a pixel: block `b` uses
    /// `w[2·n·b ..]` (n = taps), starts from `init[4b..4b+4]` and ends in
    /// `out[4b..4b+4]`.
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        let per = 2 * taps.count();
        for b in 0..blocks {
            let (Some(wb), Some(ib), Some(ob)) = (
                w.get(per * b..per * (b + 1)),
                init.get(4 * b..4 * b + 4)
                    .and_then(|v| <[i32; 4]>::try_from(v).ok()),
                out.get_mut(4 * b..4 * b + 4),
            ) else {
                return Err(KernelError::InvalidArgument);
            };
            ob.copy_from_slice(&Self::dw_block(taps, 4 * b, wb, ib)?);
        }
        Ok(())
    }
    /// [`Mac::dot_2x2`] for two pixels stored back to back (`xs` = rows
    /// `xs[..n]`, `xs[n..2n]`) against two weight rows stored back to back.
    fn dot_2x2_rows(xs: &[i8], ws: &[i8], n: usize) -> [i32; 4] {
        // `split_at_checked`: `split_at` keeps a panic path LLVM cannot
        // always remove, even with the index clamped.
        let (x0, x1) = xs.split_at_checked(n).unwrap_or((xs, &[]));
        let (w0, w1) = ws.split_at_checked(n).unwrap_or((ws, &[]));
        Self::dot_2x2(x0, x1, w0, w1)
    }
    /// Four channels side by side: `acc[j] + x[j]·w[j]`.
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4];
}

#[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
#[inline(always)]
fn prefix(s: &[i8], n: usize) -> &[i8] {
    s.get(..n).unwrap_or(&[])
}

#[inline(always)]
fn mac(acc: i32, x: i8, w: i8) -> i32 {
    acc.wrapping_add((x as i32) * (w as i32))
}

/// Plain Rust; LLVM turns it into `ldrsb` + `mla` (or `smlabb`).
pub(crate) struct Scalar;

/// The bounds both `asm!` versions of [`Mac::dw_row`] rely on, checked once
/// per row: `n ≥ 1` tap runs of at least `4·blocks` bytes, `2n·blocks`
/// weight words and `4·blocks` accumulators in and out. Returns `n`.
#[cfg(any(test, etch_thumb2, all(target_arch = "arm", feature = "dsp")))]
#[inline(always)]
pub(crate) fn dw_row_bounds(
    taps: &Taps<'_>,
    w: &[u32],
    init: &[i32],
    out: &[i32],
    blocks: usize,
) -> Result<usize, KernelError> {
    let n = taps.count();
    if n == 0
        || 4 * blocks > taps.len()
        || w.len() < 2 * n * blocks
        || init.len() < 4 * blocks
        || out.len() < 4 * blocks
    {
        return Err(KernelError::InvalidArgument);
    }
    Ok(n)
}

impl Mac for Scalar {
    const PACKED_POINTWISE: bool = false;
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

/// `SXTB16` unpacks four int8 values of a word into two words of int16
/// lanes (bytes 0,2 and 1,3); `SMLAD` multiplies and accumulates two lanes
/// at once. Byte order inside a word does not matter for sums as long as
/// `x` and `w` are unpacked alike.
#[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
pub(crate) struct Dsp;

impl Mac for Dsp {
    const PACKED_POINTWISE: bool = true;
    const PACKED_DEPTHWISE: bool = true;

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
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
        let groups = (x.len() / 4).min(packed.len() / 8);
        dot_1x4_groups(x, packed, groups, init)
    }

    #[inline(always)]
    fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2] {
        let n = x.len().min(w0.len()).min(w1.len());
        let (xc, xt) = prefix(x, n).as_chunks::<4>();
        let (w0c, w0t) = prefix(w0, n).as_chunks::<4>();
        let (w1c, w1t) = prefix(w1, n).as_chunks::<4>();
        let (mut a0, mut a1) = (0, 0);
        for ((x, w0), w1) in xc.iter().zip(w0c).zip(w1c) {
            let x = word(x);
            let (xe, xo) = (sxtb16(x), sxtb16_ror8(x));
            let w0 = word(w0);
            a0 = smlad(xe, sxtb16(w0), a0);
            a0 = smlad(xo, sxtb16_ror8(w0), a0);
            let w1 = word(w1);
            a1 = smlad(xe, sxtb16(w1), a1);
            a1 = smlad(xo, sxtb16_ror8(w1), a1);
        }
        let [t0, t1] = Scalar::dot_1x2(xt, w0t, w1t);
        [a0.wrapping_add(t0), a1.wrapping_add(t1)]
    }

    #[inline(always)]
    fn dot_2x2(x0: &[i8], x1: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 4] {
        let n = x0.len().min(x1.len()).min(w0.len()).min(w1.len());
        let (x0c, x0t) = prefix(x0, n).as_chunks::<4>();
        let (x1c, x1t) = prefix(x1, n).as_chunks::<4>();
        let (w0c, w0t) = prefix(w0, n).as_chunks::<4>();
        let (w1c, w1t) = prefix(w1, n).as_chunks::<4>();
        let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
        for (((x0, x1), w0), w1) in x0c.iter().zip(x1c).zip(w0c).zip(w1c) {
            let (w0, w1) = (word(w0), word(w1));
            let (w0e, w0o, w1e, w1o) = (sxtb16(w0), sxtb16_ror8(w0), sxtb16(w1), sxtb16_ror8(w1));
            let x = word(x0);
            let (xe, xo) = (sxtb16(x), sxtb16_ror8(x));
            a = smlad(xe, w0e, a);
            a = smlad(xo, w0o, a);
            b = smlad(xe, w1e, b);
            b = smlad(xo, w1o, b);
            let x = word(x1);
            let (xe, xo) = (sxtb16(x), sxtb16_ror8(x));
            c = smlad(xe, w0e, c);
            c = smlad(xo, w0o, c);
            d = smlad(xe, w1e, d);
            d = smlad(xo, w1o, d);
        }
        let t = Scalar::dot_2x2(x0t, x1t, w0t, w1t);
        [
            a.wrapping_add(t[0]),
            b.wrapping_add(t[1]),
            c.wrapping_add(t[2]),
            d.wrapping_add(t[3]),
        ]
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

/// The pointwise inner loop on Arm with DSP: one `asm!` loop, because LLVM
/// spills accumulators or keeps two indices for every Rust spelling tried
/// (27–33 instructions per group of four inputs against 16 here, measured
/// under QEMU; two groups per pass). Same arithmetic as the portable loop below, which the host
/// tests run: per group one input word unpacked by `SXTB16` (bytes 0,2 and,
/// rotated, 1,3), then two `SMLAD` per packed row.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(always)]
fn dot_1x4_groups(x: &[i8], packed: &[u32], groups: usize, init: [i32; 4]) -> [i32; 4] {
    let [mut a, mut b, mut c, mut d] = init;
    if groups == 0 {
        return init;
    }
    // SAFETY: the loop runs `groups ≥ 1` times; each pass reads one word at
    // `xp` (advanced by 4) and eight words at `wp` (advanced by 32), and the
    // caller's `groups ≤ min(x.len() / 4, packed.len() / 8)` keeps all of
    // them inside `x` and `packed`. Unaligned `ldr` is allowed on Armv7-M and
    // Armv8-M Mainline; `packed` is `u32`-aligned for `ldrd`. Registers only
    // otherwise; flags (and the sticky Q bit SMLAD may set) are clobbered,
    // which `asm!` assumes without `preserves_flags`.
    unsafe {
        core::arch::asm!(
            // An odd group first, then two groups per pass.
            "tst {n}, #1",
            "beq 3f",
            "ldr {x}, [{xp}], #4",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {a}, {x}, {w0}, {a}",
            "smlad {a}, {xo}, {w1}, {a}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {b}, {x}, {w0}, {b}",
            "smlad {b}, {xo}, {w1}, {b}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {c}, {x}, {w0}, {c}",
            "smlad {c}, {xo}, {w1}, {c}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {d}, {x}, {w0}, {d}",
            "smlad {d}, {xo}, {w1}, {d}",
            "subs {n}, {n}, #1",
            "beq 4f",
            "3:",
            "ldr {x}, [{xp}], #4",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {a}, {x}, {w0}, {a}",
            "smlad {a}, {xo}, {w1}, {a}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {b}, {x}, {w0}, {b}",
            "smlad {b}, {xo}, {w1}, {b}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {c}, {x}, {w0}, {c}",
            "smlad {c}, {xo}, {w1}, {c}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {d}, {x}, {w0}, {d}",
            "smlad {d}, {xo}, {w1}, {d}",
            "ldr {x}, [{xp}], #4",
            "sxtb16 {xo}, {x}, ror #8",
            "sxtb16 {x}, {x}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {a}, {x}, {w0}, {a}",
            "smlad {a}, {xo}, {w1}, {a}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {b}, {x}, {w0}, {b}",
            "smlad {b}, {xo}, {w1}, {b}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {c}, {x}, {w0}, {c}",
            "smlad {c}, {xo}, {w1}, {c}",
            "ldrd {w0}, {w1}, [{wp}], #8",
            "smlad {d}, {x}, {w0}, {d}",
            "smlad {d}, {xo}, {w1}, {d}",
            "subs {n}, {n}, #2",
            "bne 3b",
            "4:",
            xp = inout(reg) x.as_ptr() => _,
            wp = inout(reg) packed.as_ptr() => _,
            n = inout(reg) groups => _,
            a = inout(reg) a,
            b = inout(reg) b,
            c = inout(reg) c,
            d = inout(reg) d,
            x = out(reg) _,
            xo = out(reg) _,
            w0 = out(reg) _,
            w1 = out(reg) _,
            options(nostack, readonly),
        );
    }
    [a, b, c, d]
}

/// Portable form of the loop above (host tests, non-DSP builds).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
#[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
#[inline(always)]
fn dot_1x4_groups(x: &[i8], packed: &[u32], groups: usize, init: [i32; 4]) -> [i32; 4] {
    let [mut a, mut b, mut c, mut d] = init;
    for (x, w) in x
        .as_chunks::<4>()
        .0
        .iter()
        .zip(packed.as_chunks::<8>().0)
        .take(groups)
    {
        let x = word(x);
        let (xe, xo) = (sxtb16(x), sxtb16_ror8(x));
        a = smlad(xe, w[0], a);
        a = smlad(xo, w[1], a);
        b = smlad(xe, w[2], b);
        b = smlad(xo, w[3], b);
        c = smlad(xe, w[4], c);
        c = smlad(xo, w[5], c);
        d = smlad(xe, w[6], d);
        d = smlad(xo, w[7], d);
    }
    [a, b, c, d]
}
