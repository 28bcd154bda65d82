//! [`ConvMac`] in plain Rust, with Thumb-2 `asm!` loops on Armv7-M/Armv8-M
//! Mainline (`etch_thumb2`): [`ConvMac::dot_2x2_rows`], and the packed
//! pointwise path on weight pairs ([`pack4_pairs`], [`dot_1x4_pairs`]).

use super::super::fully_connected::dot_1x2_off;
use super::super::isa::{mac, Scalar};
use super::ConvMac;

impl ConvMac for Scalar {
    /// On Thumb-2, weight pairs and `SMLAL` ([`dot_1x4_pairs`]); on
    /// Armv6-M, sign-extended weight words and `MULS` ([`dot_1x4_words`]).
    const PACKED_POINTWISE: bool = cfg!(any(etch_thumb2, etch_v6m));
    const PACK_WORDS: usize = if cfg!(etch_v6m) { 4 } else { 2 };

    #[cfg(etch_v6m)]
    #[inline(always)]
    fn pack4(w: [&[i8]; 4], out: &mut [u32]) {
        pack4_words(w, out)
    }

    #[cfg(etch_v6m)]
    #[inline(always)]
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
        dot_1x4_words(x, packed, init)
    }

    #[cfg(etch_thumb2)]
    #[inline(always)]
    fn pack4(w: [&[i8]; 4], out: &mut [u32]) {
        pack4_pairs(w, out)
    }

    #[cfg(etch_thumb2)]
    #[inline(always)]
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
        dot_1x4_pairs(x, packed, init)
    }

    const ROWS: bool = cfg!(any(etch_thumb2, etch_v6m));

    #[cfg(etch_v6m)]
    #[inline(always)]
    fn dot_1x4_rows(xs: &[i8], n: usize, packed: &[u32], init: [i32; 4], accs: &mut [[i32; 4]]) {
        dot_1x4_words_rows(xs, n, packed, init, accs)
    }

    #[cfg(etch_thumb2)]
    #[inline(always)]
    fn dot_1x4_rows(xs: &[i8], n: usize, packed: &[u32], init: [i32; 4], accs: &mut [[i32; 4]]) {
        dot_1x4_pairs_rows(xs, n, packed, init, accs)
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

    #[cfg(not(any(etch_thumb2, etch_v6m)))]
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

    #[cfg(etch_thumb2)]
    #[inline(always)]
    fn dot_1x2(x: &[i8], w0: &[i8], w1: &[i8]) -> [i32; 2] {
        dot_1x2_off(x, 0, w0, w1)
    }

    /// Bias-encoded layers (what the exporter writes outside Helium):
    /// `bias + Σ (x + input_offset)·w`, two rows per pass, no weight sums
    /// (the generic loop's `input_offset·Σw` cost as much as the products).
    #[inline(always)]
    fn fc_layer(
        p: &super::super::FcParams<'_>,
        input: &[i8],
        weights: &[i8],
        in_features: usize,
        out_features: usize,
        output: &mut [i8],
        _scratch: &mut [u64],
    ) -> Option<crate::error::KernelResult> {
        super::super::fully_connected::fc_offset_pairs(
            p,
            input,
            weights,
            in_features,
            out_features,
            output,
            dot_1x2_off,
        )
    }

    #[cfg(not(etch_thumb2))]
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

/// Weight pairs: two int8 weights `w_a + w_b·2^23` in one word, so that one
/// `SMLAL` (32×32 → 64-bit multiply-accumulate, Armv7-M) adds `x·w_a` and
/// `x·w_b` at once: `S = Σ x·w_a + 2^23·Σ x·w_b` exactly in 64 bits. With
/// `S` started at `2^22`, `2^22 + Σ x·w_a` stays in `[0, 2^23)` while the
/// run has at most [`PAIR_RUN`] inputs (`|x·w| ≤ 2^14`), so the low 23 bits
/// give `Σ x·w_a` and `S >> 23` gives `Σ x·w_b`, both exact.
#[cfg(any(test, etch_thumb2))]
pub(crate) const PAIR_RUN: usize = 252;

/// Packs four weight rows for [`dot_1x4_pairs`] (the [`ConvMac::pack4`]
/// contract: whole groups of four, eight words each): per input `k`, words
/// `2k` = rows 0 and 1, `2k + 1` = rows 2 and 3, as weight pairs.
#[cfg(any(test, etch_thumb2))]
#[inline(always)]
pub(crate) fn pack4_pairs(w: [&[i8]; 4], out: &mut [u32]) {
    let n = (out.len() / 8) * 4;
    let [r0, r1, r2, r3] = w.map(|r| r.get(..n.min(r.len())).unwrap_or(&[]));
    let pair = |a: i8, b: i8| (a as i32).wrapping_add((b as i32) << 23) as u32;
    let rows = r0.iter().zip(r1).zip(r2).zip(r3);
    for ((((&a, &b), &c), &d), o) in rows.zip(out.as_chunks_mut::<2>().0) {
        *o = [pair(a, b), pair(c, d)];
    }
}

/// `2^22 + Σ x·w_a + 2^23·Σ x·w_b` back into the two sums (see [`PAIR_RUN`]).
#[cfg(any(test, etch_thumb2))]
#[inline(always)]
fn unpair(s: i64) -> [i32; 2] {
    [((s as i32) & 0x7f_ffff) - (1 << 22), (s >> 23) as i32]
}

/// [`ConvMac::dot_1x4`] on [`pack4_pairs`] words: per input one `ldrsb`, one
/// `ldrd` of both pairs and two `SMLAL` (four multiply-accumulates), in runs
/// of at most [`PAIR_RUN`] inputs. Same lengths as `dot_1x4`: the whole
/// groups of four of `x` that `packed` holds.
#[cfg(any(test, etch_thumb2))]
#[inline(always)]
pub(crate) fn dot_1x4_pairs(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
    let n = (x.len() / 4).min(packed.len() / 8) * 4;
    let (mut x, mut packed) = (
        x.get(..n).unwrap_or(&[]),
        packed.get(..2 * n).unwrap_or(&[]),
    );
    let mut a = init;
    while !x.is_empty() {
        let run = x.len().min(PAIR_RUN);
        let (xr, xt) = x.split_at_checked(run).unwrap_or((x, &[]));
        let (wr, wt) = packed.split_at_checked(2 * run).unwrap_or((packed, &[]));
        let [s0, s1] = pairs_run(xr, wr);
        let ([a0, a1], [a2, a3]) = (unpair(s0), unpair(s1));
        a = [
            a[0].wrapping_add(a0),
            a[1].wrapping_add(a1),
            a[2].wrapping_add(a2),
            a[3].wrapping_add(a3),
        ];
        (x, packed) = (xt, wt);
    }
    a
}

/// One run: `[2^22 + Σ x_k·p_2k, 2^22 + Σ x_k·p_2k+1]` as 64-bit sums, over
/// `x.len()` inputs (a multiple of four, at most [`PAIR_RUN`]; `p` holds
/// `2·x.len()` words, as [`dot_1x4_pairs`] guarantees).
#[cfg(etch_thumb2)]
#[inline(always)]
fn pairs_run(x: &[i8], p: &[u32]) -> [i64; 2] {
    let quads = x.len() / 4;
    let (mut al, mut ah, mut bl, mut bh) = (1u32 << 22, 0u32, 1u32 << 22, 0u32);
    if quads > 0 && p.len() >= 2 * x.len() {
        // SAFETY: `quads` passes of four inputs read `x[0 .. 4·quads]` (one
        // byte each, post-incremented) and `p[0 .. 8·quads]` (`ldrd` of two
        // words, post-incremented by 8), inside both slices (`4·quads ≤
        // x.len()` and `p.len() ≥ 2·x.len()`, checked above). `p` is word
        // aligned (a `&[u32]`), as `ldrd` needs. Registers only otherwise;
        // flags are clobbered.
        unsafe {
            core::arch::asm!(
                "2:",
                "ldrsb {x}, [{xp}], #1",
                "ldrd {wa}, {wb}, [{wp}], #8",
                "smlal {al}, {ah}, {x}, {wa}",
                "smlal {bl}, {bh}, {x}, {wb}",
                "ldrsb {x}, [{xp}], #1",
                "ldrd {wa}, {wb}, [{wp}], #8",
                "smlal {al}, {ah}, {x}, {wa}",
                "smlal {bl}, {bh}, {x}, {wb}",
                "ldrsb {x}, [{xp}], #1",
                "ldrd {wa}, {wb}, [{wp}], #8",
                "smlal {al}, {ah}, {x}, {wa}",
                "smlal {bl}, {bh}, {x}, {wb}",
                "ldrsb {x}, [{xp}], #1",
                "ldrd {wa}, {wb}, [{wp}], #8",
                "smlal {al}, {ah}, {x}, {wa}",
                "smlal {bl}, {bh}, {x}, {wb}",
                "subs {m}, {m}, #1",
                "bne 2b",
                xp = inout(reg) x.as_ptr() => _,
                wp = inout(reg) p.as_ptr() => _,
                m = inout(reg) quads => _,
                al = inout(reg) al,
                ah = inout(reg) ah,
                bl = inout(reg) bl,
                bh = inout(reg) bh,
                x = out(reg) _,
                wa = out(reg) _,
                wb = out(reg) _,
                options(nostack, readonly),
            );
        }
    }
    [
        ((ah as u64) << 32 | al as u64) as i64,
        ((bh as u64) << 32 | bl as u64) as i64,
    ]
}

/// [`pairs_run`] off target (host tests): the same 64-bit sums.
#[cfg(all(test, not(etch_thumb2)))]
fn pairs_run(x: &[i8], p: &[u32]) -> [i64; 2] {
    let mut s = [1i64 << 22; 2];
    for (&x, w) in x.iter().zip(p.as_chunks::<2>().0) {
        s[0] += x as i64 * w[0] as i32 as i64;
        s[1] += x as i64 * w[1] as i32 as i64;
    }
    s
}

/// Packs four weight rows as sign-extended words for [`dot_1x4_words`]
/// (Armv6-M: `MULS` takes whole registers): per input `k`, words
/// `4k .. 4k + 4` = rows 0..3. Whole groups of four inputs, sixteen words
/// each.
#[cfg(any(test, etch_v6m))]
#[inline(always)]
pub(crate) fn pack4_words(w: [&[i8]; 4], out: &mut [u32]) {
    let n = (out.len() / 16) * 4;
    let [r0, r1, r2, r3] = w.map(|r| r.get(..n.min(r.len())).unwrap_or(&[]));
    let rows = r0.iter().zip(r1).zip(r2).zip(r3);
    for ((((&a, &b), &c), &d), o) in rows.zip(out.as_chunks_mut::<4>().0) {
        *o = [
            a as i32 as u32,
            b as i32 as u32,
            c as i32 as u32,
            d as i32 as u32,
        ];
    }
}

/// [`ConvMac::dot_1x4`] on [`pack4_words`] words: per input one `ldrsb`,
/// one `ldm` of the four weights and four `MULS` + `ADD` (accumulators in
/// r8–r11). Same lengths as `dot_1x4`: the whole groups of four of `x`
/// that `packed` holds.
#[cfg(any(test, etch_v6m))]
#[inline(always)]
pub(crate) fn dot_1x4_words(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
    let n = (x.len() / 4).min(packed.len() / 16) * 4;
    let (Some(x), Some(w)) = (x.get(..n), packed.get(..4 * n)) else {
        return init;
    };
    let mut acc = init;
    if n > 0 {
        words_run(x, w, &mut acc);
    }
    acc
}

/// The Armv6-M inner loop of [`words_run`] and [`words_rows`]: two inputs
/// per pass, each one `ldrsb r3, [r0, r1]` (r0 one past the row, r1 counting
/// up from −len to 0), one `ldm r2!` of its four weights and four
/// `MULS` + `ADD` into the accumulators r8–r11; r4–r7 are scratch, flags
/// clobbered.
#[cfg(etch_v6m)]
macro_rules! words_loop {
    () => {
        concat!(
            "2:\n",
            "ldrsb r3, [r0, r1]\n",
            "ldm r2!, {{r4, r5, r6, r7}}\n",
            "muls r4, r3, r4\n",
            "add r8, r4\n",
            "muls r5, r3, r5\n",
            "add r9, r5\n",
            "muls r6, r3, r6\n",
            "add r10, r6\n",
            "muls r7, r3, r7\n",
            "add r11, r7\n",
            "adds r1, #1\n",
            "ldrsb r3, [r0, r1]\n",
            "ldm r2!, {{r4, r5, r6, r7}}\n",
            "muls r4, r3, r4\n",
            "add r8, r4\n",
            "muls r5, r3, r5\n",
            "add r9, r5\n",
            "muls r6, r3, r6\n",
            "add r10, r6\n",
            "muls r7, r3, r7\n",
            "add r11, r7\n",
            "adds r1, #1\n",
            "bne 2b",
        )
    };
}

/// `acc[l] += Σ_k x[k]·w[4k + l]` over `x.len()` inputs (a positive
/// multiple of four; `w` holds `4·x.len()` words, as [`dot_1x4_words`]
/// guarantees).
#[cfg(etch_v6m)]
#[inline(always)]
fn words_run(x: &[i8], w: &[u32], acc: &mut [i32; 4]) {
    if x.is_empty() || !x.len().is_multiple_of(4) || w.len() < 4 * x.len() {
        return;
    }
    // SAFETY: r0 = one past `x`, r1 = −len counting up to 0, so `ldrsb r3,
    // [r0, r1]` reads `x[0 .. len]` in order; `ldm r2!` reads the 4·len words
    // of `w` (checked above; word aligned as a `&[u32]`); the accumulators
    // are read from and written back to `acc` (16 bytes, word aligned).
    // r6–r11 are not operands on Armv6-M, so the block saves and restores
    // them on the stack itself (hence no `nostack`); flags are clobbered.
    unsafe {
        core::arch::asm!(
            "push {{r6, r7}}",
            "mov r6, r8",
            "mov r7, r9",
            "push {{r6, r7}}",
            "mov r6, r10",
            "mov r7, r11",
            "push {{r6, r7}}",
            "push {{r3}}",
            "ldm r3!, {{r4, r5, r6, r7}}",
            "mov r8, r4",
            "mov r9, r5",
            "mov r10, r6",
            "mov r11, r7",
            words_loop!(),
            "pop {{r3}}",
            "mov r4, r8",
            "mov r5, r9",
            "mov r6, r10",
            "mov r7, r11",
            "stm r3!, {{r4, r5, r6, r7}}",
            "pop {{r6, r7}}",
            "mov r10, r6",
            "mov r11, r7",
            "pop {{r6, r7}}",
            "mov r8, r6",
            "mov r9, r7",
            "pop {{r6, r7}}",
            inout("r0") x.as_ptr().wrapping_add(x.len()) => _,
            inout("r1") x.len().wrapping_neg() => _,
            inout("r2") w.as_ptr() => _,
            inout("r3") acc.as_mut_ptr() => _,
            out("r4") _,
            out("r5") _,
        );
    }
}

/// [`words_run`] off target (host tests): the same sums.
#[cfg(all(test, not(etch_v6m)))]
fn words_run(x: &[i8], w: &[u32], acc: &mut [i32; 4]) {
    for (&x, w) in x.iter().zip(w.as_chunks::<4>().0) {
        for (a, &w) in acc.iter_mut().zip(w) {
            *a = a.wrapping_add(x as i32 * w as i32);
        }
    }
}

/// [`ConvMac::dot_1x4_rows`] on weight pairs: the pixel loop inside the
/// `asm!` too (per row: the sums start at `2^22 + 2^23·init_b`, so `S >> 23`
/// is already `init_b + Σ x·w_b`; four stores), for rows of 4..=[`PAIR_RUN`]
/// inputs in whole groups of four; others row by row.
#[cfg(any(test, etch_thumb2))]
#[inline(always)]
pub(crate) fn dot_1x4_pairs_rows(
    xs: &[i8],
    n: usize,
    packed: &[u32],
    init: [i32; 4],
    accs: &mut [[i32; 4]],
) {
    let rows = xs.len().checked_div(n).unwrap_or(0).min(accs.len());
    if !(4..=PAIR_RUN).contains(&n) || !n.is_multiple_of(4) || packed.len() < 2 * n || rows == 0 {
        for (a, x) in accs.iter_mut().zip(xs.chunks_exact(n.max(1))) {
            *a = dot_1x4_pairs(x, packed, init);
        }
        return;
    }
    let start = |b: i32| ((1i64 << 22) + ((b as i64) << 23)) as u64;
    let (sa, sb) = (start(init[1]), start(init[3]));
    let k = |a: i32| a.wrapping_sub(1 << 22) as u32;
    pairs_rows(
        xs,
        n,
        rows,
        packed,
        [
            sa as u32,
            (sa >> 32) as u32,
            sb as u32,
            (sb >> 32) as u32,
            k(init[0]),
            k(init[2]),
        ],
        accs,
    );
}

/// The row loop of [`dot_1x4_pairs_rows`]: `rows ≥ 1` rows of `n` inputs
/// (`4 ≤ n ≤ PAIR_RUN`, a multiple of four), with `xs` holding `rows·n`
/// bytes, `packed` `2n` words and `accs` `rows` entries (checked by the
/// caller). `c` = both pairs' starting sums (low, high words) and
/// `init_a − 2^22` for both pairs.
#[cfg(etch_thumb2)]
#[inline(always)]
fn pairs_rows(
    xs: &[i8],
    n: usize,
    rows: usize,
    packed: &[u32],
    c: [u32; 6],
    accs: &mut [[i32; 4]],
) {
    if rows == 0 || rows > accs.len() || xs.len() < rows * n || packed.len() < 2 * n || n < 4 {
        return;
    }
    let cfg: [u32; 10] = [
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        c[5],
        packed.as_ptr() as u32,
        (n / 4) as u32,
        accs.as_mut_ptr().wrapping_add(rows) as u32,
        0,
    ];
    // SAFETY: per row r < rows: `n/4` passes read `xs[r·n .. (r+1)·n]` (the
    // input pointer runs on from row to row) and `packed[0 .. 2n]` (`ldrd`,
    // word aligned), then two `strd` write `accs[r]` (16 bytes, word
    // aligned) until the output pointer reaches one past `accs[rows − 1]`;
    // all inside the slices (checked above). `cfg` is read only. Registers
    // only otherwise; flags are clobbered.
    unsafe {
        core::arch::asm!(
            "1:",
            "ldrd {al}, {ah}, [{cfg}, #0]",
            "ldrd {bl}, {bh}, [{cfg}, #8]",
            "ldrd {wp}, {m}, [{cfg}, #24]",
            "2:",
            "ldrsb {x}, [{xp}], #1",
            "ldrd {wa}, {wb}, [{wp}], #8",
            "smlal {al}, {ah}, {x}, {wa}",
            "smlal {bl}, {bh}, {x}, {wb}",
            "ldrsb {x}, [{xp}], #1",
            "ldrd {wa}, {wb}, [{wp}], #8",
            "smlal {al}, {ah}, {x}, {wa}",
            "smlal {bl}, {bh}, {x}, {wb}",
            "ldrsb {x}, [{xp}], #1",
            "ldrd {wa}, {wb}, [{wp}], #8",
            "smlal {al}, {ah}, {x}, {wa}",
            "smlal {bl}, {bh}, {x}, {wb}",
            "ldrsb {x}, [{xp}], #1",
            "ldrd {wa}, {wb}, [{wp}], #8",
            "smlal {al}, {ah}, {x}, {wa}",
            "smlal {bl}, {bh}, {x}, {wb}",
            "subs {m}, {m}, #1",
            "bne 2b",
            // a = low 23 bits + (init_a − 2^22); b = S >> 23.
            "ldrd {wa}, {wb}, [{cfg}, #16]",
            "ubfx {x}, {al}, #0, #23",
            "add {x}, {x}, {wa}",
            "lsrs {al}, {al}, #23",
            "orr {al}, {al}, {ah}, lsl #9",
            "strd {x}, {al}, [{out}], #8",
            "ubfx {x}, {bl}, #0, #23",
            "add {x}, {x}, {wb}",
            "lsrs {bl}, {bl}, #23",
            "orr {bl}, {bl}, {bh}, lsl #9",
            "strd {x}, {bl}, [{out}], #8",
            "ldr {x}, [{cfg}, #32]",
            "cmp {out}, {x}",
            "bne 1b",
            cfg = in(reg) cfg.as_ptr(),
            xp = inout(reg) xs.as_ptr() => _,
            out = inout(reg) accs.as_mut_ptr() => _,
            wp = out(reg) _,
            m = out(reg) _,
            al = out(reg) _,
            ah = out(reg) _,
            bl = out(reg) _,
            bh = out(reg) _,
            x = out(reg) _,
            wa = out(reg) _,
            wb = out(reg) _,
            options(nostack),
        );
    }
}

/// [`pairs_rows`] off target (host tests): row by row, the same sums.
#[cfg(all(test, not(etch_thumb2)))]
fn pairs_rows(
    xs: &[i8],
    n: usize,
    rows: usize,
    packed: &[u32],
    c: [u32; 6],
    accs: &mut [[i32; 4]],
) {
    let s = |lo: u32, hi: u32| ((hi as u64) << 32 | lo as u64) as i64;
    for (a, x) in accs.iter_mut().zip(xs.chunks_exact(n)).take(rows) {
        let [mut sa, mut sb] = [s(c[0], c[1]), s(c[2], c[3])];
        for (&x, w) in x.iter().zip(packed.as_chunks::<2>().0) {
            sa += x as i64 * w[0] as i32 as i64;
            sb += x as i64 * w[1] as i32 as i64;
        }
        *a = [
            ((sa as u32 & 0x7f_ffff) as i32).wrapping_add(c[4] as i32),
            (sa >> 23) as i32,
            ((sb as u32 & 0x7f_ffff) as i32).wrapping_add(c[5] as i32),
            (sb >> 23) as i32,
        ];
    }
}

/// [`ConvMac::dot_1x4_rows`] on [`pack4_words`] words: the pixel loop
/// inside the `asm!` too (registers saved once per block of pixels), for
/// rows of whole groups of four inputs that `packed` holds; others row by row.
#[cfg(any(test, etch_v6m))]
#[inline(always)]
pub(crate) fn dot_1x4_words_rows(
    xs: &[i8],
    n: usize,
    packed: &[u32],
    init: [i32; 4],
    accs: &mut [[i32; 4]],
) {
    let rows = xs.len().checked_div(n).unwrap_or(0).min(accs.len());
    if n == 0 || !n.is_multiple_of(4) || packed.len() < 4 * n || rows == 0 {
        for (a, x) in accs.iter_mut().zip(xs.chunks_exact(n.max(1))) {
            *a = dot_1x4_words(x, packed, init);
        }
        return;
    }
    words_rows(xs, n, rows, packed, init, accs);
}

/// The row loop of [`dot_1x4_words_rows`]: `rows ≥ 1` rows of `n` inputs
/// (a positive multiple of four), `xs` holding `rows·n` bytes, `packed`
/// `4n` words, `accs` `rows` entries (checked by the caller).
#[cfg(etch_v6m)]
#[inline(always)]
fn words_rows(
    xs: &[i8],
    n: usize,
    rows: usize,
    packed: &[u32],
    init: [i32; 4],
    accs: &mut [[i32; 4]],
) {
    if rows == 0 || rows > accs.len() || xs.len() < rows * n || packed.len() < 4 * n || n == 0 {
        return;
    }
    // init[0..4], weights, −n, output pointer, rows left, n.
    let mut cfg: [u32; 9] = [
        init[0] as u32,
        init[1] as u32,
        init[2] as u32,
        init[3] as u32,
        packed.as_ptr() as u32,
        n.wrapping_neg() as u32,
        accs.as_mut_ptr() as u32,
        rows as u32,
        n as u32,
    ];
    // SAFETY: row r < rows: r0 = one past the row (advanced by n per row),
    // r1 = −n up to 0, so `ldrsb r3, [r0, r1]` reads `xs[r·n .. (r+1)·n]`;
    // `ldm r2!` reads `packed[0 .. 4n]` (word aligned); `stm` writes
    // `accs[r]` (16 bytes, word aligned), the pointer kept in `cfg`, which
    // the block reads and updates through r12. All inside the slices
    // (checked above). r6–r12 are saved and restored on the stack (hence no
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
            "mov r12, r1",
            // Per row: accumulators, weight pointer and index from `cfg`.
            "3:",
            "mov r3, r12",
            "ldm r3!, {{r4, r5, r6, r7}}",
            "mov r8, r4",
            "mov r9, r5",
            "mov r10, r6",
            "mov r11, r7",
            "ldr r2, [r3, #0]",
            "ldr r1, [r3, #4]",
            words_loop!(),
            // Store the row's sums; next row.
            "mov r3, r12",
            "ldr r4, [r3, #24]",
            "mov r1, r8",
            "mov r5, r9",
            "mov r6, r10",
            "mov r7, r11",
            "stm r4!, {{r1, r5, r6, r7}}",
            "str r4, [r3, #24]",
            "ldr r1, [r3, #32]",
            "adds r0, r0, r1",
            "ldr r1, [r3, #28]",
            "subs r1, #1",
            "str r1, [r3, #28]",
            "bne 3b",
            "pop {{r6}}",
            "mov r12, r6",
            "pop {{r6, r7}}",
            "mov r10, r6",
            "mov r11, r7",
            "pop {{r6, r7}}",
            "mov r8, r6",
            "mov r9, r7",
            "pop {{r6, r7}}",
            inout("r0") xs.as_ptr().wrapping_add(n) => _,
            inout("r1") cfg.as_mut_ptr() => _,
            out("r2") _,
            out("r3") _,
            out("r4") _,
            out("r5") _,
        );
    }
}

/// [`words_rows`] off target (host tests): row by row, the same sums.
#[cfg(all(test, not(etch_v6m)))]
fn words_rows(
    xs: &[i8],
    n: usize,
    rows: usize,
    packed: &[u32],
    init: [i32; 4],
    accs: &mut [[i32; 4]],
) {
    for (a, x) in accs.iter_mut().zip(xs.chunks_exact(n)).take(rows) {
        *a = init;
        words_run(x, packed, a);
    }
}
