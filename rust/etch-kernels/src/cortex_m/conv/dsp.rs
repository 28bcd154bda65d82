//! [`ConvMac`] with `SXTB16`/`SMLAD` (emulated off-target, see
//! [`crate::cortex_m::dsp`]).

use super::super::isa::dsp::{smlad, sxtb16, sxtb16_ror8, word};
use super::super::isa::{prefix, Dsp, Scalar};
use super::ConvMac;
#[cfg(all(target_arch = "arm", feature = "dsp"))]
use super::{super::requant::Rq, super::BAD, QuadRows, PB};
#[cfg(all(target_arch = "arm", feature = "dsp"))]
use crate::error::KernelResult;

impl ConvMac for Dsp {
    const PACKED_POINTWISE: bool = true;
    const QUAD: bool = true;

    #[inline(always)]
    fn conv_layer(
        ops: &super::super::common::ConvOperands<'_>,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<crate::error::KernelResult> {
        // No generic gathered-window fallback: `conv` takes what this
        // refuses (flash: both would be linked wherever the operator is).
        super::im2col_dsp::conv_layer(ops, output, scratch)
    }

    #[inline(always)]
    fn fc_layer(
        p: &super::super::FcParams<'_>,
        input: &[i8],
        weights: &[i8],
        in_features: usize,
        out_features: usize,
        output: &mut [i8],
        scratch: &mut [u64],
    ) -> Option<crate::error::KernelResult> {
        super::super::fully_connected::fc_input_offset(
            p,
            input,
            weights,
            in_features,
            out_features,
            output,
            scratch,
        )
    }

    #[inline(always)]
    fn dot_1x4(x: &[i8], packed: &[u32], init: [i32; 4]) -> [i32; 4] {
        let groups = (x.len() / 4).min(packed.len() / 8);
        dot_1x4_groups(x, packed, groups, init)
    }

    #[cfg(all(target_arch = "arm", feature = "dsp"))]
    #[inline(always)]
    fn pointwise_quad(
        x: &[i8],
        packed: &[u32],
        init: [i32; 4],
        req: &[Rq; 4],
        out: &mut [i8],
        rows: &QuadRows,
        scratch: &mut [[i32; 4]; PB],
    ) -> KernelResult {
        pointwise_quad_asm(x, packed, init, req, out, rows, scratch)
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
}

/// The pointwise inner loop on Arm with DSP: one `asm!` loop, because LLVM
/// spills accumulators or keeps two indices for every Rust spelling tried
/// (27–33 instructions per group of four inputs against 17 here, measured
/// under QEMU; one group per pass). Same arithmetic as the portable loop below, which the host
/// tests run: per group one input word unpacked by `SXTB16` (bytes 0,2 and,
/// rotated, 1,3), then two `SMLAD` per packed row.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(never)] // the layers' usual cases run pointwise_quad_asm: one copy
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
            // One group per pass (this loop is the rare cases' only: the
            // usual ones run pointwise_quad_asm; kept short for flash).
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
            "subs {n}, {n}, #1",
            "bne 3b",
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

/// One input-channel group of [`pointwise_quad_asm`]'s unrolled loop: four
/// input bytes (one word at r9, sign-extended in pairs) against the four
/// output channels' packed weights (eight words at r4), summed into r0..r3.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
macro_rules! pointwise_group {
    () => {
        concat!(
            "ldr r10, [r9], #4\n",
            "sxtb16 r11, r10, ror #8\n",
            "sxtb16 r10, r10\n",
            "ldrd r12, lr, [r4], #8\n",
            "smlad r0, r10, r12, r0\n",
            "smlad r0, r11, lr, r0\n",
            "ldrd r12, lr, [r4], #8\n",
            "smlad r1, r10, r12, r1\n",
            "smlad r1, r11, lr, r1\n",
            "ldrd r12, lr, [r4], #8\n",
            "smlad r2, r10, r12, r2\n",
            "smlad r2, r11, lr, r2\n",
            "ldrd r12, lr, [r4], #8\n",
            "smlad r3, r10, r12, r3\n",
            "smlad r3, r11, lr, r3",
        )
    };
}

/// One output lane's requantization in [`pointwise_quad_asm`]
/// ([`super::super::requant::fast_words`]): the lane's three words (mult,
/// high word, r − 1) loaded from r4 into r10..r12, the accumulator `$acc`
/// replaced by its saturated int8 result.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[rustfmt::skip] // one instruction a line
macro_rules! requant_lane {
    ($acc:literal) => {
        concat!(
            "ldm r4!, {{r10, r11, r12}}\n",
            "and lr, ", $acc, ", #0x80000000\n",
            "orr lr, lr, #0x40000000\n",
            "add r11, r11, ", $acc, ", asr #31\n",
            "smlal lr, r11, ", $acc, ", r10\n",
            "asr ", $acc, ", r11, r12\n",
            "ssat ", $acc, ", #8, ", $acc,
        )
    };
}

/// [`ConvMac::pointwise_quad`] on Arm with DSP: the whole pass (every pixel's
/// [`dot_1x4_groups`] loop, then the four outputs' requantization as
/// [`super::super::requant::fast_words`], stored) in one `asm!` block, which
/// reads its per-pass operands from `ctx` in the kernel scratch: init at
/// words 0..4, packed weights and group count at 4..6, output pointer and
/// step at 6..8, the output pointer past the last pixel at 8,
/// requantization words of lane `l` at `9 + 3l` (`mult`, high word,
/// `r − 1`), the input pointer's step after a pixel's groups at 21. Its
/// registers are fixed (r0..r5 = accumulators, weight pointer, group count;
/// r10..r12 = a lane's words) so that one `LDM` loads each of those runs
/// of words.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
#[inline(never)] // one copy for the pointwise and first-layer kernels
fn pointwise_quad_asm(
    x: &[i8],
    packed: &[u32],
    init: [i32; 4],
    req: &[Rq; 4],
    out: &mut [i8],
    rows: &QuadRows,
    scratch: &mut [[i32; 4]; PB],
) -> KernelResult {
    let groups = packed.len() / 8;
    let cin = 4 * groups;
    let (pixels, xstep, ostep) = (rows.pixels, rows.xstep, rows.ostep);
    // The loop reads x[p·xstep .. p·xstep + cin] and packed[.. 8·groups],
    // and writes out[p·ostep .. p·ostep + 4], for p < pixels; it stops when
    // the output pointer has taken `pixels` steps of `ostep ≥ 1` (a total
    // that fits a usize, so no earlier step count meets the same address).
    if pixels == 0 {
        return Ok(());
    }
    let m = pixels - 1;
    if groups == 0
        || ostep == 0
        || pixels.checked_mul(ostep).is_none()
        || m.checked_mul(ostep)
            .and_then(|v| v.checked_add(4))
            .is_none_or(|end| end > out.len())
        || m.checked_mul(xstep)
            .and_then(|v| v.checked_add(cin))
            .is_none_or(|end| end > x.len())
    {
        return Err(BAD);
    }
    let ctx: &mut [[i32; 4]; 6] = scratch.first_chunk_mut::<6>().ok_or(BAD)?;
    let [c0, c1, c2, c3, c4, c5] = ctx;
    let op = out.as_mut_ptr() as i32;
    *c0 = init;
    *c1 = [packed.as_ptr() as i32, groups as i32, op, ostep as i32];
    // Output end, then lane l's words (mult, high word, r − 1) at 9 + 3l.
    let [m0, m1, m2, m3] = req.map(|r| [r[0] as i32, (r[0] >> 32) as i32, r[1] as i32]);
    let end = op.wrapping_add((pixels * ostep) as i32);
    *c2 = [end, m0[0], m0[1], m0[2]];
    *c3 = [m1[0], m1[1], m1[2], m2[0]];
    *c4 = [m2[1], m2[2], m3[0], m3[1]];
    *c5 = [m3[2], xstep.wrapping_sub(cin) as i32, 0, 0];
    // SAFETY: pixel p (p < pixels: the output pointer, stepped by ostep ≥ 1
    // after each pixel, meets ctx word 8 after exactly `pixels` steps, as
    // pixels·ostep fits a usize) reads `groups` words of x from `xp` (which
    // starts at x and after each pixel's `cin` bytes steps on by
    // xstep − cin, so pixel p reads x[p·xstep .. p·xstep + cin], inside
    // `x` as checked above), the 8·groups words of `packed` from its start,
    // the words of `ctx` (a live, 8-aligned array of 24 words), and writes
    // four bytes at out + p·ostep (checked above). Unaligned `ldr` of x is
    // allowed on Armv7E-M; `packed` and `ctx` are word-aligned for `ldrd`.
    // Registers only otherwise; flags clobbered.
    unsafe {
        core::arch::asm!(
            "1:",
            // a, b, c, d, wp, n = r0..r5: one LDM.
            "ldm r8, {{r0, r1, r2, r3, r4, r5}}",
            // Four groups a pass; a count of 4k + m (m = 1..3) enters the
            // pass at group 4 − m.
            "ands r10, r5, #3",
            "beq 3f",
            "add r5, r5, #4",
            "sub r5, r5, r10",
            "cmp r10, #2",
            "beq 6f",
            "bhi 7f",
            "b 8f",
            "3:",
            pointwise_group!(),
            "7:",
            pointwise_group!(),
            "6:",
            pointwise_group!(),
            "8:",
            pointwise_group!(),
            "subs r5, r5, #4",
            "bne 3b",
            // Requantize lane by lane: x = mult, xo = high word, w0 = r − 1,
            // w1 = low word (fast_words); wp walks the lanes' words.
            "add r4, r8, #36",
            requant_lane!("r0"),
            requant_lane!("r1"),
            requant_lane!("r2"),
            requant_lane!("r3"),
            "ldrd r10, r11, [r8, #24]",
            "strb r0, [r10]",
            "strb r1, [r10, #1]",
            "strb r2, [r10, #2]",
            "strb r3, [r10, #3]",
            "add r10, r10, r11",
            "str r10, [r8, #24]",
            "ldr r11, [r8, #84]",
            "add r9, r9, r11",
            "ldr r11, [r8, #32]",
            "cmp r10, r11",
            "bne 1b",
            in("r8") ctx.as_mut_ptr(),
            inout("r9") x.as_ptr() => _,
            out("r0") _,
            out("r1") _,
            out("r2") _,
            out("r3") _,
            out("r4") _,
            out("r5") _,
            out("r10") _,
            out("r11") _,
            out("r12") _,
            out("lr") _,
            options(nostack),
        );
    }
    Ok(())
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
