//! Windows of a plane or an NHWC input: taps gathered into whole vectors
//! ([`gather_windows`]), one weight row packed for [`gemm_x4`](super::gemm_x4)
//! ([`pack_col`]) and sums of 16 channels over a window ([`window_sum16`]).

use crate::error::{KernelError, KernelResult};

/// Byte offsets of a window's taps in a plane (`VLDRB.U8` gather offsets),
/// in whole vectors of 16, with their maximum.
pub(crate) struct GatherOffsets<const N: usize> {
    offs: [u8; N],
    chunks: usize,
    max: usize,
}

impl<const N: usize> GatherOffsets<N> {
    /// The taps' offsets in order (lanes past the last gather offset 0),
    /// `16·chunks ≤ N` lanes; `None` if an offset exceeds 255 or the taps
    /// exceed the lanes.
    pub(crate) fn new(taps: impl Iterator<Item = usize>, chunks: usize) -> Option<Self> {
        let mut g = GatherOffsets {
            offs: [0; N],
            chunks,
            max: 0,
        };
        if chunks == 0 || 16 * chunks > N {
            return None;
        }
        let mut n = 0;
        for t in taps {
            *g.offs.get_mut(n)? = u8::try_from(t).ok()?;
            g.max = g.max.max(t);
            n += 1;
        }
        (n <= 16 * chunks).then_some(g)
    }
}

/// `dst[16·chunks·k + j] = plane[base + k·step + offs[j]]` for `k < count`,
/// `j < 16·chunks`: `count` windows gathered one vector at a time.
///
/// Errors unless `count ≥ 1`, `plane` reaches `base + (count − 1)·step +
/// max offset` and `dst` holds `16·chunks·count` bytes.
#[inline]
pub(crate) fn gather_windows<const N: usize>(
    plane: &[i8],
    base: usize,
    step: usize,
    count: usize,
    offs: &GatherOffsets<N>,
    dst: &mut [i8],
) -> KernelResult {
    let last = count
        .checked_sub(1)
        .and_then(|k| k.checked_mul(step))
        .and_then(|v| v.checked_add(base))
        .and_then(|v| v.checked_add(offs.max));
    if last.is_none_or(|l| l >= plane.len())
        || (16 * offs.chunks)
            .checked_mul(count)
            .is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    imp::gather_windows(plane, base, step, count, &offs.offs, offs.chunks, dst);
    Ok(())
}

/// One weight row of [`gemm_x4`]'s packed layout from IHWO weights:
/// `dst[64j + n] = filter[start + (16j + n)·cout]` for taps `16j + n <
/// ntaps`, 0 for the lanes past them (`j < chunks`); returns the row's sum
/// (16-bit gathers of eight lanes, predicated by the taps left).
///
/// Errors unless `1 ≤ ntaps ≤ 16·chunks`, `7·cout ≤ 65535`, `filter`
/// reaches `start + (ntaps − 1)·cout` and `dst` holds `64·(chunks − 1) +
/// 16` bytes.
#[inline]
pub(crate) fn pack_col(
    filter: &[i8],
    start: usize,
    cout: usize,
    ntaps: usize,
    chunks: usize,
    dst: &mut [i8],
) -> Result<i32, KernelError> {
    let last = ntaps
        .checked_sub(1)
        .and_then(|t| t.checked_mul(cout))
        .and_then(|v| v.checked_add(start));
    if ntaps == 0
        || chunks.checked_mul(16).is_none_or(|n| n < ntaps)
        || cout > 65535 / 7
        || last.is_none_or(|l| l >= filter.len())
        || chunks
            .checked_sub(1)
            .and_then(|c| c.checked_mul(64))
            .and_then(|n| n.checked_add(16))
            .is_none_or(|n| n > dst.len())
    {
        return Err(KernelError::InvalidArgument);
    }
    Ok(imp::pack_col(filter, start, cout, ntaps, chunks, dst))
}

/// Sums of 16 adjacent channels over a window of `rows × cols` pixels:
/// lane `l` is `Σ input[start + y·row_step + x·px_step + l]` over `y <
/// rows`, `x < cols` (four vectors of 32-bit lanes, `VLDRB.S32` + `VADD`).
///
/// Written into `out` (returned by value, the array cost a 64-byte
/// `memcpy` per call). Errors unless `rows, cols ≥ 1` and `input` reaches
/// the last pixel's 16 values.
#[inline]
pub(crate) fn window_sum16(
    input: &[i8],
    start: usize,
    rows: usize,
    cols: usize,
    row_step: usize,
    px_step: usize,
    out: &mut [i32; 16],
) -> KernelResult {
    let last = rows
        .checked_sub(1)
        .and_then(|r| r.checked_mul(row_step))
        .zip(cols.checked_sub(1).and_then(|c| c.checked_mul(px_step)))
        .and_then(|(a, b)| a.checked_add(b))
        .and_then(|v| v.checked_add(start))
        .and_then(|v| v.checked_add(16));
    if last.is_none_or(|l| l > input.len()) {
        return Err(KernelError::InvalidArgument);
    }
    imp::window_sum16(input, start, rows, cols, row_step, px_step, out);
    Ok(())
}

/// The instructions on Arm with Helium, plain Rust elsewhere (the host
/// tests' reference); each function's wrapper above checked its bounds.
mod imp {
    #[inline(always)]
    pub(super) fn gather_windows(
        plane: &[i8],
        base: usize,
        step: usize,
        count: usize,
        offs: &[u8],
        chunks: usize,
        dst: &mut [i8],
    ) {
        #[cfg(all(target_arch = "arm", feature = "mve"))]
        {
            // SAFETY: `gather_windows` checked `count ≥ 1`, every gathered
            // byte base + k·step + offs[j] (k < count, offs[j] ≤ the maximum
            // it checked) inside `plane`, and `dst.len() ≥ 16·chunks·count`:
            // window k writes dst[16·chunks·k .. 16·chunks·(k + 1)]. `offs`
            // holds 16·chunks bytes (`GatherOffsets::new`). No stack; q0, q1,
            // lr and flags are clobbered.
            unsafe {
                core::arch::asm!(
                    "1:",
                    "mov {t}, {o}",
                    "wls lr, {chunks}, 3f",
                    "2:",
                    "vldrb.u8 q1, [{t}], #16",
                    "vldrb.u8 q0, [{src}, q1]",
                    "vstrb.8 q0, [{d}], #16",
                    "le lr, 2b",
                    "3:",
                    "add {src}, {src}, {step}",
                    "subs {n}, {n}, #1",
                    "bne 1b",
                    src = inout(reg) plane.as_ptr().add(base) => _,
                    o = in(reg) offs.as_ptr(),
                    t = out(reg) _,
                    chunks = in(reg) chunks,
                    d = inout(reg) dst.as_mut_ptr() => _,
                    step = in(reg) step,
                    n = inout(reg) count => _,
                    out("lr") _,
                    out("d0") _, out("d1") _, out("d2") _, out("d3") _,
                    options(nostack),
                );
            }
        }
        // Off target: the same bytes in plain Rust.
        #[cfg(not(all(target_arch = "arm", feature = "mve")))]
        {
            let n = 16 * chunks;
            for k in 0..count {
                for (j, &o) in offs.iter().take(n).enumerate() {
                    dst[n * k + j] = plane[base + k * step + o as usize];
                }
            }
        }
    }

    #[inline(always)]
    pub(super) fn pack_col(
        filter: &[i8],
        start: usize,
        cout: usize,
        ntaps: usize,
        chunks: usize,
        dst: &mut [i8],
    ) -> i32 {
        #[cfg(all(target_arch = "arm", feature = "mve"))]
        {
            let offs: [u16; 8] = core::array::from_fn(|l| (l * cout) as u16);
            let sum: i32;
            // SAFETY: `pack_col` checked `1 ≤ ntaps ≤ 16·chunks`, `7·cout <
            // 2^16` (the gather's offsets), filter[start + (ntaps − 1)·cout]
            // inside `filter` and `dst.len() ≥ 64·(chunks − 1) + 16`. Half h
            // (taps 8h ..) gathers filter[start + (8h + n)·cout] only for the
            // lanes n with 8h + n < ntaps (VCTP; predicated-off lanes read
            // nothing and load 0) and stores dst[64⌊h/2⌋ + 8(h mod 2) ..] (8
            // bytes). `offs` is 16 readable bytes. No stack; q0, q7, lr and
            // flags are clobbered.
            unsafe {
                core::arch::asm!(
                    "vldrh.u16 q7, [{o}]",
                    "movs r0, #0",
                    "wls lr, {chunks}, 3f",
                    "2:",
                    "vctp.16 {rem}",
                    "vpst",
                    "vldrbt.s16 q0, [{src}, q7]",
                    "vstrb.16 q0, [r1]",
                    "vaddva.s16 r0, q0",
                    "add {src}, {src}, {step}",
                    "subs {rem}, {rem}, #8",
                    "it mi",
                    "movmi {rem}, #0",
                    "vctp.16 {rem}",
                    "vpst",
                    "vldrbt.s16 q0, [{src}, q7]",
                    "vstrb.16 q0, [r1, #8]",
                    "vaddva.s16 r0, q0",
                    "add {src}, {src}, {step}",
                    "subs {rem}, {rem}, #8",
                    "it mi",
                    "movmi {rem}, #0",
                    "add r1, r1, #64",
                    "le lr, 2b",
                    "3:",
                    o = in(reg) offs.as_ptr(),
                    // An even register: VADDVA's destination.
                    out("r0") sum,
                    chunks = in(reg) chunks,
                    rem = inout(reg) ntaps => _,
                    src = inout(reg) filter.as_ptr().add(start) => _,
                    step = in(reg) 8 * cout,
                    // A low register: the narrowing VSTRB.16 encodes Rn in 3 bits.
                    inout("r1") dst.as_mut_ptr() => _,
                    out("lr") _,
                    out("d0") _, out("d1") _, out("d14") _, out("d15") _,
                    options(nostack),
                );
            }
            sum
        }
        // Off target: the same bytes in plain Rust.
        #[cfg(not(all(target_arch = "arm", feature = "mve")))]
        {
            let mut sum = 0i32;
            for t in 0..16 * chunks {
                let v = if t < ntaps {
                    filter[start + t * cout]
                } else {
                    0
                };
                dst[64 * (t / 16) + t % 16] = v;
                sum = sum.wrapping_add(v as i32);
            }
            sum
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(super) fn window_sum16(
        input: &[i8],
        start: usize,
        rows: usize,
        cols: usize,
        row_step: usize,
        px_step: usize,
        out: &mut [i32; 16],
    ) {
        #[cfg(all(target_arch = "arm", feature = "mve"))]
        {
            // SAFETY: `window_sum16` checked `rows, cols ≥ 1` and start + (rows
            // − 1)·row_step + (cols − 1)·px_step + 16 ≤ input.len(): pixel (y,
            // x) reads input[start + y·row_step + x·px_step ..][..16] (four
            // widening loads of 4). `out` is 64 writable bytes, 4-aligned.
            // No stack; q0, q4–q7, r1, lr and flags are clobbered.
            unsafe {
                core::arch::asm!(
                    "vmov.i32 q4, #0",
                    "vmov.i32 q5, #0",
                    "vmov.i32 q6, #0",
                    "vmov.i32 q7, #0",
                    "1:",
                    "mov r1, {p}",
                    "wls lr, {cols}, 3f",
                    "2:",
                    "vldrb.s32 q0, [r1]",
                    "vadd.i32 q4, q4, q0",
                    "vldrb.s32 q0, [r1, #4]",
                    "vadd.i32 q5, q5, q0",
                    "vldrb.s32 q0, [r1, #8]",
                    "vadd.i32 q6, q6, q0",
                    "vldrb.s32 q0, [r1, #12]",
                    "vadd.i32 q7, q7, q0",
                    "add r1, r1, {px}",
                    "le lr, 2b",
                    "3:",
                    "add {p}, {p}, {row}",
                    "subs {rows}, {rows}, #1",
                    "bne 1b",
                    "vstrw.32 q4, [{o}]",
                    "vstrw.32 q5, [{o}, #16]",
                    "vstrw.32 q6, [{o}, #32]",
                    "vstrw.32 q7, [{o}, #48]",
                    p = inout(reg) input.as_ptr().add(start) => _,
                    cols = in(reg) cols,
                    px = in(reg) px_step,
                    row = in(reg) row_step,
                    rows = inout(reg) rows => _,
                    o = in(reg) out.as_mut_ptr(),
                    out("r1") _, out("lr") _,
                    out("d0") _, out("d1") _,
                    out("d8") _, out("d9") _, out("d10") _, out("d11") _,
                    out("d12") _, out("d13") _, out("d14") _, out("d15") _,
                    options(nostack),
                );
            }
        }
        // Off target: the same bytes in plain Rust.
        #[cfg(not(all(target_arch = "arm", feature = "mve")))]
        {
            *out = [0; 16];
            for y in 0..rows {
                for x in 0..cols {
                    let p = start + y * row_step + x * px_step;
                    for (l, o) in out.iter_mut().enumerate() {
                        *o = o.wrapping_add(input[p + l] as i32);
                    }
                }
            }
        }
    }
}
