//! [`super::im2col`] with `SXTB16`/`SMLAD` (Armv7E-M, Armv8-M Mainline;
//! emulated off-target): two output pixels' windows gathered straight into
//! int16 lanes, interleaved per group of four taps (`x0` bytes 0,2 | `x0`
//! bytes 1,3 | `x1` bytes 0,2 | `x1` bytes 1,3: one `LDM` loads a group of
//! both pixels), then per output channel one pass over its weight row
//! (one word, two `SXTB16`, four `SMLAD` per group: about 1.1 instructions
//! per multiply-accumulate), as CMSIS-NN's `arm_convolve_s8` widens its
//! columns to int16 once.
#![cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]

use super::super::common::{row, runs, ConvOperands};
use super::super::isa::dsp::{pack16, sxtb16, sxtb16_ror8, word};
use super::super::requant::Requant;
use super::super::BAD;
use super::im2col::{gather, kernel_sums, Pixel};
use crate::error::KernelResult;

/// Any convolution with at least two output pixels, the input zero point
/// an int8 value and the kernel sums and one pair of packed windows (`4K`
/// bytes) in `scratch`; `None` otherwise (the caller's loops run). Input
/// channels not a multiple of 4 (the RGB first layers: `K = 27`): `K`
/// padded to `Kp`, the next multiple of 4, the weight rows copied once per
/// call into `Kp`-value rows with zero weights in the padding (`cout·Kp`
/// bytes more), both windows gathered as int8 rows of `Kp` (`2Kp` bytes)
/// and packed from there: every word load aligned and the padding lanes
/// adding `x·0`, so the layer runs the whole-group loops.
pub(crate) fn conv_layer(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    scratch: &mut [u64],
) -> Option<KernelResult> {
    let (g, q) = (&ops.g, &ops.q);
    let cin = g.input.c;
    let cout = g.output.c;
    let k = g.kernel.0.checked_mul(g.kernel.1)?.checked_mul(cin)?;
    let pixels = g
        .output
        .n
        .checked_mul(g.output.h)?
        .checked_mul(g.output.w)?;
    if cin == 0 || cout == 0 || pixels < 2 || !(-127..=128).contains(&q.input_offset) {
        return None;
    }
    let direct = cin.is_multiple_of(4);
    let kp = k.checked_next_multiple_of(4)?;
    let ks_words = cout.div_ceil(2);
    let packed_words = (kp / 4).checked_mul(16)?.div_ceil(8);
    let (rows_words, wpad_words) = if direct {
        (0, 0)
    } else {
        (
            kp.checked_mul(2)?.div_ceil(8),
            cout.checked_mul(kp)?.div_ceil(8),
        )
    };
    if ks_words
        .checked_add(packed_words)?
        .checked_add(rows_words)?
        .checked_add(wpad_words)?
        > scratch.len()
    {
        return None;
    }
    let (ks, rest) = scratch.split_at_mut_checked(ks_words)?;
    let (packed, rest) = rest.split_at_mut_checked(packed_words)?;
    let (rows, rest) = rest.split_at_mut_checked(rows_words)?;
    let ks: &mut [i32] = bytemuck::cast_slice_mut(ks);
    let packed: &mut [u32] = bytemuck::cast_slice_mut(packed);
    let rows: &mut [i8] = bytemuck::cast_slice_mut(rows);
    let wpad: &mut [i8] = bytemuck::cast_slice_mut(rest.get_mut(..wpad_words)?);
    let ks = ks.get_mut(..cout)?;
    let packed = packed.get_mut(..kp)?;
    if ks.len() != ops.mult.len() || ks.len() != ops.shift.len() {
        return Some(Err(BAD));
    }
    if let Err(e) = kernel_sums(ops, k, ks, 1) {
        return Some(Err(e));
    }
    let (rows, weights) = if direct {
        (None, ops.filter)
    } else {
        let wpad = wpad.get_mut(..cout * kp)?;
        let rows = rows.get_mut(..2 * kp)?;
        if let Err(e) = pad_rows(ops.filter, k, wpad, kp) {
            return Some(Err(e));
        }
        rows.fill(0);
        (Some(rows), &*wpad)
    };
    let weights = weights.get(..cout * kp)?;
    // The fused loop straight from here: `pairs`' frame is not under it.
    Some(match Fused::of(ops) {
        Some(f) => fused_pairs(ops, output, ks, packed, rows, weights, &f),
        None => pairs(ops, output, ks, packed, rows, weights),
    })
}

/// The `k`-value rows of `w` into `kp`-value rows of `dst`, zeros after
/// each: every row of `dst` filled.
fn pad_rows(w: &[i8], k: usize, dst: &mut [i8], kp: usize) -> KernelResult {
    let rows = dst.len().checked_div(kp).ok_or(BAD)?;
    let src = w.get(..rows.checked_mul(k).ok_or(BAD)?).ok_or(BAD)?;
    for (d, s) in super::super::common::runs_mut(dst, kp).zip(runs(src, k)) {
        let (head, tail) = d.split_at_mut_checked(k).ok_or(BAD)?;
        for (d, s) in head.iter_mut().zip(s) {
            *d = *s;
        }
        tail.fill(0);
    }
    Ok(())
}

/// Both pixels' windows into `packed`: straight from the input (`rows`
/// `None`: input channels a multiple of 4), else gathered into `rows`
/// (two rows of `Kp = packed.len()` values, the first `K` written, the
/// padding as it was) and packed from there.
#[inline(always)]
fn gather_pair(
    ops: &ConvOperands<'_>,
    px: [Pixel; 2],
    packed: &mut [u32],
    rows: Option<&mut [i8]>,
) -> KernelResult {
    let zp = ops.q.input_offset.wrapping_neg();
    let Some(rows) = rows else {
        let zw = pack16(zp, zp);
        gather_packed(ops, px[0], zw, packed, 0)?;
        return gather_packed(ops, px[1], zw, packed, 2);
    };
    let (g, kp) = (&ops.g, packed.len());
    let k = g.kernel.0 * g.kernel.1 * g.input.c;
    let (r0, r1) = rows.split_at_mut_checked(kp).ok_or(BAD)?;
    gather_rows(ops, px[0], zp as i8, r0.get_mut(..k).ok_or(BAD)?)?;
    gather_rows(ops, px[1], zp as i8, r1.get_mut(..k).ok_or(BAD)?)?;
    let (c0, c1) = (r0.as_chunks::<4>().0, r1.as_chunks::<4>().0);
    for ((d, a), b) in packed.as_chunks_mut::<4>().0.iter_mut().zip(c0).zip(c1) {
        let (a, b) = (word(a), word(b));
        *d = [sxtb16(a), sxtb16_ror8(a), sxtb16(b), sxtb16_ror8(b)];
    }
    Ok(())
}

/// [`gather`] with its usual case inline: an undilated window wholly inside
/// the input is `kh` runs of `kw·cin` contiguous input values. Out of line:
/// one copy for the four call sites (flash).
#[inline(never)]
fn gather_rows(ops: &ConvOperands<'_>, px: Pixel, zp: i8, dst: &mut [i8]) -> KernelResult {
    let g = &ops.g;
    let (i, (kh, kw)) = (g.input, g.kernel);
    // No overflow: `Window::positions_fit`.
    let (y, x) = (px.y * g.stride.0, px.x * g.stride.1);
    let inside = g.dilation == (1, 1)
        && y >= g.padding.0
        && x >= g.padding.1
        && y - g.padding.0 + kh <= i.h
        && x - g.padding.1 + kw <= i.w;
    if !inside {
        return gather(ops, px, zp, dst);
    }
    let (run, step) = (kw * i.c, i.w * i.c);
    let at = ((px.b * i.h + y - g.padding.0) * i.w + x - g.padding.1) * i.c;
    for (ky, d) in super::super::common::runs_mut(dst, run).enumerate() {
        let s = row(ops.input, at + ky * step, run)?;
        for (d, s) in d.iter_mut().zip(s) {
            *d = *s;
        }
    }
    Ok(())
}

/// Every pixel pair: both windows packed ([`gather_pair`]), then per output
/// channel [`dot_2x1`] against its weight row (`kp = packed.len()` values
/// of `weights`, `ks` the kernel sums) and the requantization.
#[inline(never)]
fn pairs(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    ks: &[i32],
    packed: &mut [u32],
    mut rows: Option<&mut [i8]>,
    weights: &[i8],
) -> KernelResult {
    let (g, q) = (&ops.g, &ops.q);
    let kp = packed.len();
    let cout = g.output.c;
    let (oh, ow) = (g.output.h, g.output.w);
    let pixels = g.output.n * oh * ow;
    if kp == 0 || pixels < 2 {
        return Err(BAD);
    }
    let mut px = Pixel::FIRST;
    let mut p = 0;
    while p < pixels {
        // An odd last pixel is paired with the one before it (computed
        // again, to the same values): every pass writes two distinct rows.
        if p + 1 == pixels {
            p -= 1;
            px = Pixel::of(p, oh, ow).ok_or(BAD)?;
        }
        let px1 = px.next(oh, ow);
        gather_pair(ops, [px, px1], packed, rows.as_deref_mut())?;
        px = px1.next(oh, ow);
        let (lo, hi) = output.split_at_mut_checked((p + 1) * cout).ok_or(BAD)?;
        let o0 = lo.get_mut(p * cout..).ok_or(BAD)?;
        let o1 = hi.get_mut(..cout).ok_or(BAD)?;
        let rq = ops.mult.iter().zip(ops.shift);
        for ((((w, &kso), (&m, &sh)), d0), d1) in
            runs(weights, kp).zip(ks.iter()).zip(rq).zip(o0).zip(o1)
        {
            let [a, c] = dot_2x1(packed, w);
            let r = OneStep::new(m, sh);
            let finish = |acc: i32| {
                let v = r
                    .apply(kso.wrapping_add(acc), m, sh)
                    .wrapping_add(q.output_offset);
                v.max(q.act_min).min(q.act_max) as i8
            };
            *d0 = finish(a);
            *d1 = finish(c);
        }
        p += 2;
    }
    Ok(())
}

/// [`pairs`] for a [`Fused`] layer: per pixel pair both windows packed,
/// then every channel by [`channels_2x1`]. Out of line: inside `pairs` its
/// branch cost the other loop's code (MobileNet's and ResNet-8's first
/// layers about 0.1 M instructions each on M4).
#[inline(never)]
fn fused_pairs(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    ks: &[i32],
    packed: &mut [u32],
    mut rows: Option<&mut [i8]>,
    weights: &[i8],
    f: &Fused,
) -> KernelResult {
    let g = &ops.g;
    let cout = g.output.c;
    let (oh, ow) = (g.output.h, g.output.w);
    let pixels = g.output.n * oh * ow;
    let mut px = Pixel::FIRST;
    let mut p = 0;
    while p < pixels {
        if p + 1 == pixels {
            p -= 1;
            px = Pixel::of(p, oh, ow).ok_or(BAD)?;
        }
        let px1 = px.next(oh, ow);
        gather_pair(ops, [px, px1], packed, rows.as_deref_mut())?;
        px = px1.next(oh, ow);
        let out = output.get_mut(p * cout..(p + 2) * cout).ok_or(BAD)?;
        channels_2x1(packed, weights, ks, ops.mult, ops.shift, f, out).ok_or(BAD)?;
        p += 2;
    }
    Ok(())
}

/// The constants of [`channels_2x1`], for a layer whose every channel's
/// requantization [`fast_words`] computes (multiplier ≥ 0, right shift
/// 2..=23), with an int8 output offset and activation range.
struct Fused {
    /// `2·output_offset + 1`: the high word of the rounding constant with
    /// the output offset folded, `(1 + 2·off)·2^(r−2)`, is it shifted left
    /// by `r − 2`.
    off21: i32,
    lo: i32,
    hi: i32,
}

impl Fused {
    fn of(ops: &ConvOperands<'_>) -> Option<Fused> {
        let q = &ops.q;
        let int8 = -128..=127;
        if !int8.contains(&q.output_offset)
            || !int8.contains(&q.act_min)
            || !int8.contains(&q.act_max)
        {
            return None;
        }
        let fast = |(&m, &s): (&i32, &i32)| m >= 0 && (2..=23).contains(&s.wrapping_neg());
        ops.mult.iter().zip(ops.shift).all(fast).then_some(Fused {
            off21: 2 * q.output_offset + 1,
            lo: q.act_min,
            hi: q.act_max,
        })
    }
}

/// Every output channel of two output pixels: `out[c]` and
/// `out[cout + c]` = `clamp(fast_words(ks[c] + Σ x·w[c]), lo, hi)` over the
/// `packed.len() / 4 ≥ 1` groups of both pixels' windows and the weight
/// rows (`K = packed.len()` values each, contiguous), `cout = ks.len()`:
/// `None` unless the lengths fit. The portable spelling (host tests; the
/// DSP instructions emulated).
#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
fn channels_2x1(
    packed: &[u32],
    w: &[i8],
    ks: &[i32],
    mult: &[i32],
    shift: &[i32],
    f: &Fused,
    out: &mut [i8],
) -> Option<()> {
    let (cout, k) = (ks.len(), packed.len() / 4 * 4);
    if cout == 0 || k == 0 || out.len() != 2 * cout || w.len() < cout.checked_mul(k)? {
        return None;
    }
    let (o0, o1) = out.split_at_mut(cout);
    let rq = mult.iter().zip(shift);
    for ((((w, &s), (&m, &sh)), d0), d1) in w.chunks_exact(k).zip(ks).zip(rq).zip(o0).zip(o1) {
        let rm1 = sh.wrapping_neg() - 1;
        let words = [
            m as u32 as u64 | ((f.off21 << (rm1 - 1)) as u32 as u64) << 32,
            rm1 as u64,
        ];
        let [a, c] = dot_2x1(packed, w);
        let out = |acc: i32| {
            super::super::requant::fast_words(&words, s.wrapping_add(acc))
                .max(f.lo as i8)
                .min(f.hi as i8)
        };
        (*d0, *d1) = (out(a), out(c));
    }
    Some(())
}

/// One group of four taps of both pixels against one weight word: 8
/// instructions per 8 multiply-accumulates.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
macro_rules! group_2x1 {
    () => {
        concat!(
            "ldm {xp}!, {{r2, r3, r4, r5}}\n",
            "ldr {w}, [{wp}], #4\n",
            "sxtb16 {t}, {w}\n",
            "sxtb16 {w}, {w}, ror #8\n",
            "smlad {a}, r2, {t}, {a}\n",
            "smlad {a}, r3, {w}, {a}\n",
            "smlad {c}, r4, {t}, {c}\n",
            "smlad {c}, r5, {w}, {c}\n",
        )
    };
}

/// One output of [`channels_2x1`]'s `asm!` into `r3`: [`fast_words`] of
/// `acc` with the multiplier in `r2`, `r − 1` in `r4` and the folded high
/// word in `r5`, then the activation range (`{xp}`, `{n}`) by `SSUB8`/`SEL`
/// on the low byte.
#[cfg(all(target_arch = "arm", feature = "dsp"))]
macro_rules! requant_2x1 {
    ($acc:literal) => {
        concat!(
            "and {t}, ",
            $acc,
            ", #0x80000000\n",
            "orr {t}, {t}, #0x40000000\n",
            "add r3, r5, ",
            $acc,
            ", asr #31\n",
            "smlal {t}, r3, ",
            $acc,
            ", r2\n",
            "asr r3, r3, r4\n",
            "ssat r3, #8, r3\n",
            "ssub8 {t}, r3, {xp}\n",
            "sel r3, r3, {xp}\n",
            "ssub8 {t}, r3, {n}\n",
            "sel r3, {n}, r3\n",
        )
    };
}

/// [`channels_2x1`] on Arm with DSP: one `asm!` for all channels, the
/// groups two per pass (an odd count enters at the second), then both
/// outputs requantized in registers (the per-channel words from the
/// multiplier and shift: five instructions); the loop state in a 48-byte
/// frame on the stack (every register is in use).
#[cfg(all(target_arch = "arm", feature = "dsp"))]
fn channels_2x1(
    packed: &[u32],
    w: &[i8],
    ks: &[i32],
    mult: &[i32],
    shift: &[i32],
    f: &Fused,
    out: &mut [i8],
) -> Option<()> {
    let (cout, groups) = (ks.len(), packed.len() / 4);
    if cout == 0
        || groups == 0
        || mult.len() < cout
        || shift.len() < cout
        || out.len() != 2 * cout
        || w.len() < cout.checked_mul(4 * groups)?
    {
        return None;
    }
    // SAFETY: `cout ≥ 1` channels; channel `c` reads `ks[c]`, `mult[c]`,
    // `shift[c]` (each slice holds `cout`, checked), the `groups ≥ 1` groups
    // of `packed` (four words each at `xp`, reset per channel: `4·groups ≤
    // packed.len()`; `u32`-aligned for `LDM`) and weight row `c` (`4·groups`
    // bytes at `wp`, which runs on through the contiguous rows: `cout` rows
    // fit in `w`, checked), and writes `out[c]` and `out[cout + c]`
    // (`out.len() = 2·cout`). The 48-byte frame is pushed and popped inside
    // (8-byte aligned). Unaligned `LDR` is allowed on Armv7E-M and Armv8-M
    // Mainline. Flags, the GE bits and the sticky Q bit are clobbered.
    unsafe {
        core::arch::asm!(
            "sub sp, sp, #48",
            "strd {xp}, {n}, [sp]",
            "strd {a}, {c}, [sp, #8]",
            "strd {w}, {t}, [sp, #16]",
            "strd {u}, r2, [sp, #24]",
            "strd r3, r4, [sp, #32]",
            "str r5, [sp, #40]",
            "6:",
            "ldr {t}, [sp, #8]",
            "ldr {a}, [{t}], #4",
            "str {t}, [sp, #8]",
            "mov {c}, {a}",
            "ldrd {xp}, {n}, [sp]",
            "lsrs {n}, {n}, #1",
            "adc {n}, {n}, #0",
            "bcs 5f",
            "3:",
            group_2x1!(),
            "5:",
            group_2x1!(),
            "subs {n}, {n}, #1",
            "bne 3b",
            "ldr {t}, [sp, #12]",
            "ldr r2, [{t}], #4",
            "str {t}, [sp, #12]",
            "ldr {t}, [sp, #16]",
            "ldr r3, [{t}], #4",
            "str {t}, [sp, #16]",
            "mvn r4, r3",
            "sub r3, r4, #1",
            "ldr r5, [sp, #28]",
            "lsl r5, r5, r3",
            "ldrd {xp}, {n}, [sp, #32]",
            requant_2x1!("{a}"),
            "ldr {a}, [sp, #20]",
            "strb r3, [{a}]",
            requant_2x1!("{c}"),
            "ldr {w}, [sp, #24]",
            "strb r3, [{a}, {w}]",
            "add {a}, {a}, #1",
            "str {a}, [sp, #20]",
            "ldr {t}, [sp, #40]",
            "subs {t}, {t}, #1",
            "str {t}, [sp, #40]",
            "bne 6b",
            "add sp, sp, #48",
            // Entry values, stored in the frame: [0] packed, [4] groups,
            // [8] ks, [12] mult, [16] shift, [20] out, [24] cout,
            // [28] 2·out_off + 1, [32] lo, [36] hi, [40] channels left.
            xp = inout(reg) packed.as_ptr() => _,
            n = inout(reg) groups => _,
            wp = inout(reg) w.as_ptr() => _,
            a = inout(reg) ks.as_ptr() => _,
            c = inout(reg) mult.as_ptr() => _,
            w = inout(reg) shift.as_ptr() => _,
            t = inout(reg) out.as_mut_ptr() => _,
            u = inout(reg) cout => _,
            inout("r2") f.off21 => _,
            inout("r3") f.lo => _,
            inout("r4") f.hi => _,
            inout("r5") cout => _,
        );
    }
    Some(())
}

/// `arm_nn_requantize(·, mult, shift)` as [`Requant::apply`]'s one-step
/// form, set up in a few instructions per channel (no [`Requant::new`]) for
/// its fast case (right shift 2..=23, multiplier ≥ 0); the reference
/// otherwise.
#[derive(Clone, Copy)]
struct OneStep {
    /// `2^30 + 2^(30+r)`, or `None` outside the fast case.
    k: Option<i64>,
}

impl OneStep {
    #[inline(always)]
    fn new(mult: i32, shift: i32) -> Self {
        let r = shift.wrapping_neg();
        let fast = (2..=23).contains(&r) && mult >= 0;
        OneStep {
            k: fast.then(|| (1i64 << 30) + (1i64 << (30 + r))),
        }
    }

    #[inline(always)]
    fn apply(&self, acc: i32, mult: i32, shift: i32) -> i32 {
        let Some(k) = self.k else {
            return Requant::new(mult, shift).apply(acc);
        };
        let neg = (acc as u32 >> 31) as i64;
        let p = (acc as i64) * (mult as i64) + k + neg * (i32::MIN as i64);
        ((p >> 32) as i32) >> (shift.wrapping_neg() - 1)
    }
}

/// Output pixel `px`'s window into lanes `slot`, `slot + 1` of every group
/// of four words of `packed` (`K` words: `K/4` groups), taps in the
/// padding as the zero point `zw` (both halfwords).
#[inline(never)] // one copy for both pixels (flash)
fn gather_packed(
    ops: &ConvOperands<'_>,
    px: Pixel,
    zw: u32,
    packed: &mut [u32],
    slot: usize,
) -> KernelResult {
    let g = &ops.g;
    let (i, (kh, kw)) = (g.input, g.kernel);
    let cin = i.c;
    let Pixel { b, y: oy, x: ox } = px;
    let words = cin; // four packed words per four taps
    let mut at = 0;
    for ky in 0..kh {
        let y = (oy * g.stride.0 + ky * g.dilation.0)
            .checked_sub(g.padding.0)
            .filter(|&y| y < i.h);
        for kx in 0..kw {
            let dst = packed.get_mut(at..at + words).ok_or(BAD)?;
            at += words;
            let xx = (ox * g.stride.1 + kx * g.dilation.1)
                .checked_sub(g.padding.1)
                .filter(|&x| x < i.w);
            let (Some(y), Some(xx)) = (y, xx) else {
                for d in dst.chunks_exact_mut(4) {
                    d[slot] = zw;
                    d[slot + 1] = zw;
                }
                continue;
            };
            let src = row(ops.input, ((b * i.h + y) * i.w + xx) * cin, cin)?;
            for (d, s) in dst.chunks_exact_mut(4).zip(src.as_chunks::<4>().0) {
                let v = word(s);
                d[slot] = sxtb16(v);
                d[slot + 1] = sxtb16_ror8(v);
            }
        }
    }
    Ok(())
}

/// `[Σ x0·w, Σ x1·w]` over the `K/4` groups of `packed` (as
/// [`gather_packed`] lays them out) and `w` (`K` int8 values).
#[inline(always)]
fn dot_2x1(packed: &[u32], w: &[i8]) -> [i32; 2] {
    let groups = (packed.len() / 4).min(w.len() / 4);
    imp::dot_2x1(packed, w, groups)
}

#[cfg(not(all(target_arch = "arm", feature = "dsp")))]
mod imp {
    use super::super::super::isa::dsp::{smlad, sxtb16, sxtb16_ror8, word};

    #[inline(always)]
    pub(super) fn dot_2x1(packed: &[u32], w: &[i8], groups: usize) -> [i32; 2] {
        let (mut a, mut c) = (0i32, 0i32);
        for (x, w) in packed
            .as_chunks::<4>()
            .0
            .iter()
            .zip(w.as_chunks::<4>().0)
            .take(groups)
        {
            let w = word(w);
            let (t, u) = (sxtb16(w), sxtb16_ror8(w));
            a = smlad(x[0], t, a);
            a = smlad(x[1], u, a);
            c = smlad(x[2], t, c);
            c = smlad(x[3], u, c);
        }
        [a, c]
    }
}

#[cfg(all(target_arch = "arm", feature = "dsp"))]
mod imp {
    #[inline(always)]
    pub(super) fn dot_2x1(packed: &[u32], w: &[i8], groups: usize) -> [i32; 2] {
        let (mut a, mut c) = (0i32, 0i32);
        if groups == 0 || groups > packed.len() / 4 || groups > w.len() / 4 {
            return [a, c];
        }
        // SAFETY: `groups ≥ 1` passes of the one-group body in all (one,
        // then pairs); each reads four words at `xp` (advanced by 16) and one
        // word at `wp` (advanced by 4), and `groups` is at most
        // packed.len() / 4 and w.len() / 4 (checked above), so every read is
        // inside `packed` and `w`. `packed` is `u32`-aligned for `LDM`;
        // unaligned `LDR` is allowed on Armv7E-M and Armv8-M Mainline.
        // Registers only otherwise; flags (and the sticky Q bit SMLAD may
        // set) are clobbered, which `asm!` assumes without `preserves_flags`.
        unsafe {
            core::arch::asm!(
                "tst {n}, #1",
                "beq 2f",
                "ldm {xp}!, {{r2, r3, r4, r5}}",
                "ldr {w}, [{wp}], #4",
                "sxtb16 {t}, {w}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {a}, r2, {t}, {a}",
                "smlad {a}, r3, {w}, {a}",
                "smlad {c}, r4, {t}, {c}",
                "smlad {c}, r5, {w}, {c}",
                "2:",
                "lsrs {n}, {n}, #1",
                "beq 4f",
                "3:",
                "ldm {xp}!, {{r2, r3, r4, r5}}",
                "ldr {w}, [{wp}], #4",
                "sxtb16 {t}, {w}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {a}, r2, {t}, {a}",
                "smlad {a}, r3, {w}, {a}",
                "smlad {c}, r4, {t}, {c}",
                "smlad {c}, r5, {w}, {c}",
                "ldm {xp}!, {{r2, r3, r4, r5}}",
                "ldr {w}, [{wp}], #4",
                "sxtb16 {t}, {w}",
                "sxtb16 {w}, {w}, ror #8",
                "smlad {a}, r2, {t}, {a}",
                "smlad {a}, r3, {w}, {a}",
                "smlad {c}, r4, {t}, {c}",
                "smlad {c}, r5, {w}, {c}",
                "subs {n}, {n}, #1",
                "bne 3b",
                "4:",
                xp = inout(reg) packed.as_ptr() => _,
                wp = inout(reg) w.as_ptr() => _,
                n = inout(reg) groups => _,
                a = inout(reg) a,
                c = inout(reg) c,
                w = out(reg) _,
                t = out(reg) _,
                out("r2") _, out("r3") _, out("r4") _, out("r5") _,
                options(nostack, readonly),
            );
        }
        [a, c]
    }
}
