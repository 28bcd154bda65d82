//! `arm_avgpool_s8` and `arm_max_pool_s8` (`cortex_m::quantized_avg_pool2d`,
//! `cortex_m::quantized_max_pool2d`): plain Rust on every target.

#[cfg(not(feature = "dsp"))]
use super::common::{lanes, put, runs};
use super::{Window, BAD};
use crate::error::KernelResult;

/// `arm_avgpool_s8`: integer mean of the in-bounds window, rounded half away
/// from zero, clamped to `[act_min, act_max]`.
pub fn avg_pool_s8(g: &Window, act: (i32, i32), input: &[i8], output: &mut [i8]) -> KernelResult {
    let (i, o) = (g.input, g.output);
    if i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || i.n != o.n
        || i.c != o.c
    {
        return Err(BAD);
    }
    if g.check_work(input)? {
        return Ok(());
    }
    avg_pool(g, act, input, output)
}

/// `arm_max_pool_s8`: window maximum (from -128), clamped to the range.
pub fn max_pool_s8(g: &Window, act: (i32, i32), input: &[i8], output: &mut [i8]) -> KernelResult {
    pool(g, input, output, |vals| {
        Some(
            vals.fold(i8::MIN as i32, |m, v| m.max(v as i32))
                .max(act.0)
                .min(act.1) as i8,
        )
    })
}

/// The in-bounds input positions of a window along one axis, in tap order:
/// exactly the taps `Window::tap` accepts, found in O(1) so the work is
/// bounded by `size` whatever kernel, stride and padding the file holds.
/// `dil > 0`.
fn in_bounds(
    o: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    dil: usize,
    size: usize,
) -> core::iter::Take<core::iter::StepBy<core::ops::RangeFrom<usize>>> {
    let start = o.saturating_mul(stride);
    // First valid tap and its position.
    let (lo, first) = match start.checked_sub(pad) {
        Some(base) => (0, base),
        None => {
            let gap = pad - start;
            let lo = gap.div_ceil(dil);
            (lo, lo.saturating_mul(dil) - gap)
        }
    };
    let n = if first < size {
        (size - 1 - first) / dil + 1
    } else {
        0
    };
    let n = n.min(kernel.saturating_sub(lo));
    (first..).step_by(dil).take(n)
}

fn pool(
    g: &Window,
    input: &[i8],
    output: &mut [i8],
    reduce: impl Fn(&mut dyn Iterator<Item = i8>) -> Option<i8>,
) -> KernelResult {
    let (i, o) = (g.input, g.output);
    if i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || i.n != o.n
        || i.c != o.c
    {
        return Err(BAD);
    }
    // Dilation 0 would repeat one tap `kernel` times: no model has it.
    if g.dilation.0 == 0 || g.dilation.1 == 0 {
        return Err(BAD);
    }
    if g.check_work(input)? {
        return Ok(());
    }
    let mut dst = output.iter_mut();
    for b in 0..o.n {
        for oy in 0..o.h {
            let rows = in_bounds(oy, g.kernel.0, g.stride.0, g.padding.0, g.dilation.0, i.h);
            for ox in 0..o.w {
                let cols = in_bounds(ox, g.kernel.1, g.stride.1, g.padding.1, g.dilation.1, i.w);
                for ch in 0..o.c {
                    let mut taps = rows
                        .clone()
                        .flat_map(|y| {
                            cols.clone()
                                .map(move |x| ((b * i.h + y) * i.w + x) * i.c + ch)
                        })
                        .map(|idx| input.get(idx).copied().unwrap_or(0));
                    let (Some(v), Some(d)) = (reduce(&mut taps), dst.next()) else {
                        return Err(BAD);
                    };
                    *d = v;
                }
            }
        }
    }
    Ok(())
}

/// In-bounds input rows `[lo, hi)` of a dilation-1 window: CMSIS-NN's
/// `k_start = MAX(0, -base)`, `k_end = MIN(kernel, size - base)` with
/// `base = o·stride − pad`, in positions rather than taps. O(1) and bounded
/// by `size` whatever kernel, stride and padding the file holds.
#[inline(always)]
fn clip(o: usize, kernel: usize, stride: usize, pad: usize, size: usize) -> (usize, usize) {
    let start = o.saturating_mul(stride);
    let (lo, hi) = match start.checked_sub(pad) {
        Some(base) => (base, base.saturating_add(kernel)),
        None => (0, kernel.saturating_sub(pad - start)),
    };
    let hi = hi.min(size);
    (lo.min(hi), hi)
}

/// The window mean, rounded half away from zero (`None` for no taps).
#[inline(always)]
fn avg_round(sum: i32, count: i32) -> Option<i32> {
    let rounded = if sum > 0 {
        sum.wrapping_add(count / 2)
    } else {
        sum.wrapping_sub(count / 2)
    };
    rounded.checked_div(count)
}

/// Writes the window means of `sums` (rounded half away from zero,
/// clamped) from `output[at]` on. Out of line: one copy for every lane count.
#[cfg_attr(not(feature = "dsp"), allow(dead_code))]
#[inline(never)]
fn put_means(
    output: &mut [i8],
    at: usize,
    sums: &[i32],
    count: i32,
    act: (i32, i32),
) -> KernelResult {
    let out = output.get_mut(at..at + sums.len()).ok_or(BAD)?;
    for (o, &sum) in out.iter_mut().zip(sums) {
        *o = avg_round(sum, count).ok_or(BAD)?.max(act.0).min(act.1) as i8;
    }
    Ok(())
}

/// Sums of channels `start % c .. + 8` over a `rows × cols` pixel window
/// whose first byte is `input[start]` (`row_stride` bytes a row, `c` a
/// pixel), added in int16 lanes with `SXTAB16`: exact for at most 256 taps
/// (|sum| ≤ 256·128). `c ≥ 8`.
#[cfg_attr(not(feature = "dsp"), allow(dead_code))]
#[inline(always)]
pub(crate) fn window_sum8(
    input: &[i8],
    start: usize,
    rows: usize,
    cols: usize,
    row_stride: usize,
    c: usize,
) -> Result<[i32; 8], crate::error::KernelError> {
    use super::common::at4;
    use super::isa::dsp::{sxtab16, sxtab16_ror8, word};
    let (mut a0, mut b0, mut a1, mut b1) = (0u32, 0u32, 0u32, 0u32);
    if cols > 0 && c >= 8 {
        let len = (cols - 1) * c + 8;
        for y in 0..rows {
            let s = start + y * row_stride;
            let row = input.get(s..s + len).ok_or(BAD)?;
            let mut p = row.as_ptr();
            for _ in 0..cols {
                // SAFETY: pixel k of the row starts at k·c and k·c + 8 ≤
                // (cols - 1)·c + 8 = row.len(): both words are in `row`.
                let (w0, w1) = unsafe { (word(at4(p)), word(at4(p.add(4)))) };
                a0 = sxtab16(a0, w0);
                b0 = sxtab16_ror8(b0, w0);
                a1 = sxtab16(a1, w1);
                b1 = sxtab16_ror8(b1, w1);
                p = p.wrapping_add(c);
            }
        }
    }
    let lo = |x: u32| x as u16 as i16 as i32;
    let hi = |x: u32| (x >> 16) as u16 as i16 as i32;
    Ok([
        lo(a0),
        lo(b0),
        hi(a0),
        hi(b0),
        lo(a1),
        lo(b1),
        hi(a1),
        hi(b1),
    ])
}

/// `arm_avgpool_s8`: four channels at a time summed over the in-bounds
/// window, mean rounded half away from zero, clamped. An empty window is an
/// error (CMSIS-NN divides by its zero count).
fn avg_pool(g: &Window, act: (i32, i32), input: &[i8], output: &mut [i8]) -> KernelResult {
    let (i, o) = (g.input, g.output);
    let c = i.c;
    #[cfg(feature = "mve")]
    let mut sums = [0i32; 16];
    for b in 0..o.n {
        for oy in 0..o.h {
            let (y0, y1) = clip(oy, g.kernel.0, g.stride.0, g.padding.0, i.h);
            for ox in 0..o.w {
                let (x0, x1) = clip(ox, g.kernel.1, g.stride.1, g.padding.1, i.w);
                let count = ((y1 - y0) * (x1 - x0)) as i32;
                if count == 0 {
                    return Err(BAD);
                }
                let out_base = ((b * o.h + oy) * o.w + ox) * c;
                // A window as wide as the input is one run of pixels (DS-CNN's
                // global pool: 125 pixels, not 25 rows of 5).
                #[cfg(feature = "dsp")]
                let (rows, cols) = if x1 - x0 == i.w {
                    (1, (y1 - y0) * i.w)
                } else {
                    (y1 - y0, x1 - x0)
                };
                let mut j = 0;
                // Helium: 16 channels at a time (`cortex_m::mve`).
                #[cfg(feature = "mve")]
                while c - j >= 16 {
                    let start = ((b * i.h + y0) * i.w + x0) * c + j;
                    super::isa::mve::gather::window_sum16(
                        input,
                        start,
                        rows,
                        cols,
                        i.w * c,
                        c,
                        &mut sums,
                    )?;
                    put_means(output, out_base + j, &sums, count, act)?;
                    j += 16;
                }
                // DSP: eight channels a pixel in halfword lanes (two words,
                // four SXTAB16), exact while the window has at most 256 taps.
                #[cfg(feature = "dsp")]
                while c - j >= 8 && count <= 256 {
                    let start = ((b * i.h + y0) * i.w + x0) * c + j;
                    let sums = window_sum8(input, start, rows, cols, i.w * c, c)?;
                    put_means(output, out_base + j, &sums, count, act)?;
                    j += 8;
                }
                // DSP: the channels left (fewer than eight, or all of a
                // window over 256 taps) one at a time.
                #[cfg(feature = "dsp")]
                while j < c {
                    let mut sum = 0i32;
                    for y in y0..y1 {
                        for x in x0..x1 {
                            let v = input.get(((b * i.h + y) * i.w + x) * c + j).ok_or(BAD)?;
                            sum = sum.wrapping_add(*v as i32);
                        }
                    }
                    put_means(output, out_base + j, &[sum], count, act)?;
                    j += 1;
                }
                // Four channels a pixel (zero-filled past the last), whole
                // rows of the window as one slice: the sums in registers.
                #[cfg(not(feature = "dsp"))]
                while j < c {
                    let n = 4.min(c - j);
                    let mut s = [0i32; 4];
                    let span = (x1 - x0) * c;
                    for y in y0..y1 {
                        let start = ((b * i.h + y) * i.w + x0) * c;
                        let row = input.get(start..start + span).ok_or(BAD)?;
                        if n == 4 {
                            // The usual case: no lane loop.
                            for px in runs(row, c) {
                                let Some(&[v0, v1, v2, v3]) = px.get(j..j + 4) else {
                                    return Err(BAD);
                                };
                                s[0] = s[0].wrapping_add(v0 as i32);
                                s[1] = s[1].wrapping_add(v1 as i32);
                                s[2] = s[2].wrapping_add(v2 as i32);
                                s[3] = s[3].wrapping_add(v3 as i32);
                            }
                        } else {
                            for px in runs(row, c) {
                                let v = lanes(px, j, n)?;
                                for (s, v) in s.iter_mut().zip(v) {
                                    *s = s.wrapping_add(v as i32);
                                }
                            }
                        }
                    }
                    for (l, &sum) in s.iter().enumerate().take(n) {
                        let m = avg_round(sum, count).ok_or(BAD)?;
                        put(output, out_base + j + l, m.max(act.0).min(act.1) as i8)?;
                    }
                    j += 4;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::testutil::*;
    use super::*;
    use std::vec;

    /// The int16-lane window sums against plain i32 sums, up to the 256-tap
    /// limit with every value at the int8 extremes.
    #[test]
    fn window_sum8_matches_plain_sums() {
        let mut r = Rng(0x5a8);
        for case in 0..40 {
            let (c, rows, cols) = (
                r.range(8, 20) as usize,
                r.range(1, 16) as usize,
                r.range(1, 16) as usize,
            );
            let (rows, cols) = if case < 2 { (16, 16) } else { (rows, cols) };
            let w = cols + 2;
            let mut x = r.i8s((rows + 1) * w * c);
            if case == 0 {
                x.iter_mut().for_each(|v| *v = -128);
            } else if case == 1 {
                x.iter_mut().for_each(|v| *v = 127);
            }
            let j = r.range(0, (c - 8) as i64) as usize;
            let start = (w + 1) * c + j;
            let got = window_sum8(&x, start, rows, cols, w * c, c).unwrap();
            for (l, &g) in got.iter().enumerate() {
                let mut want = 0i32;
                for y in 0..rows {
                    for k in 0..cols {
                        want += x[start + y * w * c + k * c + l] as i32;
                    }
                }
                assert_eq!(g, want, "lane {l}, case {case}");
            }
        }
    }

    #[test]
    fn pools_match_reference() {
        let mut r = Rng(0x9001);
        for _ in 0..CASES {
            let c = r.range(1, 5) as usize;
            let Case { mut g, .. } = random_case(&mut r, c, c);
            g.dilation = (1, 1);
            g.output.h = out_size(g.input.h, g.kernel.0, g.stride.0, g.padding.0, 1).max(1);
            g.output.w = out_size(g.input.w, g.kernel.1, g.stride.1, g.padding.1, 1).max(1);
            // Keep every window overlapping the input (CMSIS-NN rejects empty ones).
            g.padding = (
                g.padding.0.min(g.kernel.0 - 1),
                g.padding.1.min(g.kernel.1 - 1),
            );
            let (i, o) = (g.input, g.output);
            let x = r.i8s(i.elements().unwrap());
            let act = (r.range(-128, 0) as i32, r.range(0, 127) as i32);
            let mut avg = vec![0i8; o.elements().unwrap()];
            let mut max = vec![0i8; o.elements().unwrap()];
            let avg_r = avg_pool_s8(&g, act, &x, &mut avg);
            max_pool_s8(&g, act, &x, &mut max).unwrap();
            let mut k = 0;
            let mut empty = false;
            for b in 0..o.n {
                for oy in 0..o.h {
                    for ox in 0..o.w {
                        for ch in 0..c {
                            let mut vals = vec![];
                            for ky in 0..g.kernel.0 {
                                for kx in 0..g.kernel.1 {
                                    if let (Some(y), Some(xx)) = (
                                        ref_pos(oy, ky, g.stride.0, g.padding.0, 1, i.h),
                                        ref_pos(ox, kx, g.stride.1, g.padding.1, 1, i.w),
                                    ) {
                                        vals.push(x[((b * i.h + y) * i.w + xx) * c + ch] as i64);
                                    }
                                }
                            }
                            if vals.is_empty() {
                                empty = true;
                                k += 1;
                                continue;
                            }
                            let (sum, n) = (vals.iter().sum::<i64>(), vals.len() as i64);
                            // Mean rounded half away from zero.
                            let mean = if sum >= 0 {
                                (2 * sum + n) / (2 * n)
                            } else {
                                -((-2 * sum + n) / (2 * n))
                            };
                            if avg_r.is_ok() {
                                assert_eq!(avg[k], clamp8(mean, act.0, act.1), "avg {g:?} at {k}");
                            }
                            let m = *vals.iter().max().unwrap();
                            assert_eq!(
                                max[k],
                                clamp8(m.max(-128), act.0, act.1),
                                "max {g:?} at {k}"
                            );
                            k += 1;
                        }
                    }
                }
            }
            assert_eq!(
                avg_r.is_err(),
                empty,
                "avg pool rejects exactly the empty windows"
            );
        }
    }
}
