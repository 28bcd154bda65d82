//! The depthwise loop of [`DepthwiseMac::PACKED_DEPTHWISE`] implementations
//! (depth multiplier 1, up to [`DW_MAX_TAPS`] taps) and the [`Taps`] table
//! its building blocks read: [`Taps`]'s unchecked reads are sound only under
//! the invariants established here (run lengths checked on push and fill),
//! so the table and the loop that fills it stay together.

use super::super::common::{four, take, ConvOperands};
use super::super::requant::{finish_acc, Requant, Rq};
use super::super::BAD;
use super::{chunk_consts, depthwise, DepthwiseMac, CHUNK};
use crate::error::KernelResult;
use core::marker::PhantomData;

/// Words of unpacked depthwise weights on the stack (1152 B: a 3×3 kernel
/// over 64 channels).
pub(crate) const DW_PACK_WORDS: usize = 288;

/// Depthwise multiplier 1 for [`DepthwiseMac::PACKED_DEPTHWISE`] implementations:
/// per channel chunk the weights are unpacked once into int16 lanes
/// (per four-channel block and tap: channels 0,2 and 1,3); per output pixel
/// a table holds every tap's input run (or a run of zero points for padding
/// taps), so border and interior pixels run the same loop
/// ([`DepthwiseMac::dw_block`]: one input word, two unpacks, four `SMLAxy` per tap).
pub(crate) fn depthwise_packed<M: DepthwiseMac>(
    ops: &ConvOperands<'_>,
    output: &mut [i8],
    mut scratch: &mut [u64],
) -> KernelResult {
    let (g, q, input, filter) = (&ops.g, &ops.q, ops.input, ops.filter);
    let (i, o, (kh, kw)) = (g.input, g.output, g.kernel);
    let ntaps = kh * kw;
    if ntaps > DW_MAX_TAPS {
        // More taps than the table holds: the dispatch's other loops.
        return depthwise::<M>(ops, 1, output, scratch);
    }
    let ch = o.c;
    let off = q.input_offset;
    let zpbuf = [off.wrapping_neg() as i8; CHUNK];
    // Channels per chunk: whole blocks of four whose unpacked weights fit.
    let chunk = CHUNK.min(4 * (DW_PACK_WORDS / (2 * ntaps.max(1))));
    if chunk == 0 {
        return Err(BAD);
    }
    let full = take::<i32, CHUNK>(&mut scratch)?;
    let req = take::<Rq, CHUNK>(&mut scratch)?;
    let accs = take::<i32, CHUNK>(&mut scratch)?;
    let wq = take::<u32, DW_PACK_WORDS>(&mut scratch)?;
    let mut c0 = 0;
    while c0 < ch {
        let cn = chunk.min(ch - c0);
        chunk_consts(ops, c0, cn, full, req)?;
        let blocks = cn / 4;
        let fast = req
            .iter()
            .take(cn)
            .all(|r| Requant::from_words(r).is_fast());
        // Whole blocks, fast channels, the usual clamp and output offset.
        let quick = fast
            && cn == 4 * blocks
            && q.act_min == -128
            && q.act_max == 127
            && (-128..=127).contains(&q.output_offset);
        let mut taps = Taps::new(cn);
        // Input offset of every tap from the kernel's first tap (row-major).
        let mut offs = [0usize; DW_MAX_TAPS];
        let mut slots = offs.iter_mut();
        for ky in 0..kh {
            for kx in 0..kw {
                let d = slots.next().ok_or(BAD)?;
                *d = (ky * g.dilation.0 * i.w + kx * g.dilation.1) * ch;
            }
        }
        let offs = offs.get(..ntaps).ok_or(BAD)?;
        for (blk, dst) in wq
            .chunks_exact_mut(2 * ntaps.max(1))
            .take(blocks)
            .enumerate()
        {
            for (t, d) in dst.as_chunks_mut::<2>().0.iter_mut().enumerate() {
                let w = super::super::isa::dsp::word(four(filter, t * ch + c0 + 4 * blk)?);
                *d = [
                    super::super::isa::dsp::sxtb16(w),
                    super::super::isa::dsp::sxtb16_ror8(w),
                ];
            }
        }
        for b in 0..o.n {
            for oy in 0..o.h {
                let y0 = (oy * g.stride.0).wrapping_sub(g.padding.0);
                let rows = in_bounds(y0, kh, g.dilation.0, i.h);
                for ox in 0..o.w {
                    let x0 = (ox * g.stride.1).wrapping_sub(g.padding.1);
                    let cols = in_bounds(x0, kw, g.dilation.1, i.w);
                    // Which taps are inside: bit t for tap t (row-major).
                    let mut inside = 0u32;
                    for ky in (0..kh).rev() {
                        let c = if rows >> ky & 1 != 0 { cols } else { 0 };
                        inside = inside.wrapping_shl(kw as u32) | c;
                    }
                    // Index of the first tap (wrapping: it may be padding;
                    // then only the inside taps' sums are meaningful).
                    let base = (b * i.h)
                        .wrapping_add(y0)
                        .wrapping_mul(i.w)
                        .wrapping_add(x0)
                        .wrapping_mul(ch)
                        .wrapping_add(c0);
                    taps.fill(input, &zpbuf, base, offs, inside)?;
                    let ob = ((b * o.h + oy) * o.w + ox) * ch + c0;
                    let dst = output.get_mut(ob..ob + cn).ok_or(BAD)?;
                    if quick && M::dw_pixel(&taps, wq, full, req, dst, blocks, accs)? {
                        continue;
                    }
                    M::dw_row(&taps, wq, full, accs, blocks)?;
                    // Channel tail (C % 4): plain loop.
                    for l in 4 * blocks..cn {
                        let mut a = *full.get(l).ok_or(BAD)?;
                        for (t, run) in taps.runs().enumerate() {
                            let x = *run.get(l).ok_or(BAD)? as i32;
                            let w = *filter.get(t * ch + c0 + l).ok_or(BAD)? as i32;
                            a = a.wrapping_add(x * w);
                        }
                        *accs.get_mut(l).ok_or(BAD)? = a;
                    }
                    finish_acc(q, accs, req, fast, dst);
                }
            }
        }
        c0 += cn;
    }
    Ok(())
}

/// Most taps a [`Taps`] table holds: 5x5 kernels (25 taps) and smaller, and
/// no more than [`DW_PACK_WORDS`] admits (36) or the 32 bits of the inside
/// masks of [`Taps::fill`]. The table lives on the stack under every
/// depthwise call (a pointer a tap, plus the tap offsets), so
/// it is sized for the kernels models use, not for 32: 25 keeps a DS-CNN
/// inference below its 2 KiB stack target on Cortex-M4; larger kernels
/// take [`depthwise`]'s other loops.
pub(crate) const DW_MAX_TAPS: usize = if DW_PACK_WORDS / 8 < 25 {
    DW_PACK_WORDS / 8
} else {
    25
};

/// The input runs of one output pixel's taps: every run has at least `len`
/// values (checked on push and fill), which is what lets
/// [`DepthwiseMac::dw_block`] read four values at any block offset below
/// `len` without bounds checks. Only the runs' start pointers are kept (the
/// runs are `len` long from there): a second table of slices took 200 B
/// more of every depthwise call's stack.
pub(crate) struct Taps<'a> {
    /// Start of run `t` for `t < n`, borrowed from an `&'a [i8]` of at
    /// least `len` values; one slot more than the runs: the slot after the
    /// last run is null (the end marker of the DSP pixel loop).
    pub(super) ptrs: [*const i8; DW_MAX_TAPS + 1],
    n: usize,
    len: usize,
    _runs: PhantomData<&'a [i8]>,
}

impl<'a> Taps<'a> {
    #[inline(always)]
    pub(crate) fn new(len: usize) -> Self {
        Taps {
            ptrs: [core::ptr::null(); DW_MAX_TAPS + 1],
            n: 0,
            len,
            _runs: PhantomData,
        }
    }

    /// Appends one run (the tests build tables with it; the kernel uses
    /// [`Taps::fill`]).
    #[cfg(test)]
    pub(crate) fn push(&mut self, run: &'a [i8]) -> KernelResult {
        if run.len() < self.len {
            return Err(BAD);
        }
        // The last slot is the end marker: at most DW_MAX_TAPS runs.
        if self.n >= DW_MAX_TAPS {
            return Err(BAD);
        }
        let Some(p) = self.ptrs.get_mut(self.n) else {
            return Err(BAD);
        };
        *p = run.as_ptr();
        self.n += 1;
        if let Some(end) = self.ptrs.get_mut(self.n) {
            *end = core::ptr::null();
        }
        Ok(())
    }

    /// The runs, `len` values each.
    #[inline(always)]
    pub(crate) fn runs(&self) -> impl Iterator<Item = &'a [i8]> + '_ {
        let len = self.len;
        self.ptrs.iter().take(self.n).map(move |&p| {
            // SAFETY: `ptrs[..n]` were set only by `push` and `fill`, each
            // from `run.as_ptr()` of a `run: &'a [i8]` they checked holds at
            // least `len` values (`len` never changes after `new`), so `len`
            // values from `p` are initialised, in one allocation, and shared-
            // borrowed (not mutated) for `'a`. Tested by
            // `taps_fill_picks_input_runs_and_padding` and `taps_push_keeps_len_values_of_each_run`.
            unsafe { core::slice::from_raw_parts(p, len) }
        })
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(crate) fn count(&self) -> usize {
        self.n
    }

    /// Replaces the runs by one per offset of `offs`: where bit `t` of
    /// `inside` is set, `input[base + offs[t] ..]` (wrapping index; a run
    /// outside `input` is an error), else `zp` (padding). One out-of-line
    /// loop instead of a window walk per tap in the kernel body (about 50
    /// instructions per tap there on Cortex-M4).
    #[inline(never)]
    pub(crate) fn fill(
        &mut self,
        input: &'a [i8],
        zp: &'a [i8],
        base: usize,
        offs: &[usize],
        mut inside: u32,
    ) -> KernelResult {
        let len = self.len;
        if zp.len() < len {
            return Err(BAD);
        }
        let mut n = 0;
        // The last slot stays for the end marker.
        for (p, &o) in self.ptrs.iter_mut().take(DW_MAX_TAPS).zip(offs) {
            let run = if inside & 1 != 0 {
                let at = base.wrapping_add(o);
                input.get(at..at.wrapping_add(len)).ok_or(BAD)?
            } else {
                zp
            };
            inside >>= 1;
            *p = run.as_ptr();
            n += 1;
        }
        self.n = n;
        if let Some(end) = self.ptrs.get_mut(n) {
            *end = core::ptr::null();
        }
        Ok(())
    }

    /// Start pointers of the runs (each run at least [`Taps::len`] long),
    /// followed in memory by a null pointer.
    #[cfg_attr(not(all(target_arch = "arm", feature = "dsp")), allow(dead_code))]
    #[inline(always)]
    pub(crate) fn ptrs(&self) -> &[*const i8] {
        self.ptrs.get(..self.n).unwrap_or(&[])
    }
}

/// Bit `k` set where tap `k` of `k_n` (first at `first`, wrapping, then
/// every `dil`) lands inside `0..size` (`k_n ≤ 32`).
#[inline(always)]
pub(crate) fn in_bounds(first: usize, k_n: usize, dil: usize, size: usize) -> u32 {
    let mut m = 0u32;
    for k in (0..k_n).rev() {
        m = (m << 1) | u32::from(first.wrapping_add(k * dil) < size);
    }
    m
}
