//! CMSIS-NN arithmetic as pure functions over NHWC int8 slices: what the
//! `cortex_m::*` adapters in `ops::cortex_m` call, and what the tests below
//! check against plain i64 reference loops.
//!
//! Every function validates its slice lengths against the geometry first and
//! returns `KernelError::InvalidArgument` on mismatch; inner loops use checked
//! slicing, so nothing can panic.

use crate::error::{KernelError, KernelResult};
use crate::ops::arith::requantize;

pub mod dsp;
mod kernels;
mod mac;

/// The multiply-accumulate implementation this build runs: `SXTB16`/`SMLAD`
/// with the `dsp` feature (Armv7E-M, Armv8-M Mainline), plain Rust otherwise.
#[cfg(feature = "dsp")]
type Active = mac::Dsp;
#[cfg(not(feature = "dsp"))]
type Active = mac::Scalar;

/// NHWC sizes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Nhwc {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
}

impl Nhwc {
    /// Element count, if it fits `usize`.
    pub fn elements(&self) -> Option<usize> {
        self.n
            .checked_mul(self.h)?
            .checked_mul(self.w)?
            .checked_mul(self.c)
    }
}

/// Geometry and quantization of a CMSIS-NN convolution or pooling window.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub input: Nhwc,
    pub output: Nhwc,
    /// Kernel (height, width).
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}

impl Window {
    /// Input position of output `o`, kernel tap `k` along one axis, if inside
    /// the input. Taps in the padding contribute nothing: CMSIS-NN pads with
    /// the input zero point, whose offset-corrected value is 0.
    #[inline]
    pub fn tap(
        o: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
        size: usize,
    ) -> Option<usize> {
        // Checked: stride and dilation come from the file.
        let pos = o
            .checked_mul(stride)?
            .checked_add(k.checked_mul(dil)?)?
            .checked_sub(pad)?;
        (pos < size).then_some(pos)
    }

    /// Whether the kernels' unchecked position arithmetic is safe for this
    /// geometry: along each axis the farthest tap position
    /// `(o − 1)·stride + (k − 1)·dilation`, plus one more stride and
    /// dilation (the loops step one past their last tap), fits `usize`.
    /// Stride, dilation and padding are file-supplied and may be anything
    /// up to 2^63 (32-bit `usize` on the device makes smaller values
    /// overflow too).
    pub fn positions_fit(&self) -> bool {
        let axis = |o: usize, k: usize, s: usize, d: usize| {
            o.saturating_sub(1)
                .checked_mul(s)
                .zip(k.saturating_sub(1).checked_mul(d))
                .and_then(|(a, b)| a.checked_add(b))
                .and_then(|v| v.checked_add(s))
                .and_then(|v| v.checked_add(d))
                .is_some()
        };
        axis(self.output.h, self.kernel.0, self.stride.0, self.dilation.0)
            && axis(self.output.w, self.kernel.1, self.stride.1, self.dilation.1)
    }

    /// The checks every window kernel makes after its length checks:
    /// `Ok(true)` when the output is empty (nothing to compute: the kernel
    /// returns without looping over sizes that may be huge, since a tensor
    /// with one zero dimension has zero bytes whatever its others are);
    /// an error when the input is empty under a non-empty output (an
    /// implausible window whose other sizes would bound no work) or when
    /// positions could overflow ([`Window::positions_fit`]).
    pub(crate) fn check_work(&self, input: &[i8]) -> Result<bool, KernelError> {
        if self.output.elements() == Some(0) {
            return Ok(true);
        }
        if input.is_empty() || self.kernel.0 == 0 || self.kernel.1 == 0 || !self.positions_fit() {
            return Err(BAD);
        }
        Ok(false)
    }
}

/// Output quantization of a convolution: offsets and activation range.
#[derive(Clone, Copy, Debug)]
pub struct ConvQuant {
    pub input_offset: i32,
    pub output_offset: i32,
    pub act_min: i32,
    pub act_max: i32,
}

impl ConvQuant {
    /// `arm_nn_requantize`, `+ output_offset`, then `MAX(act_min)`, `MIN(act_max)`.
    #[inline]
    pub fn finish(&self, acc: i32, mult: i32, shift: i32) -> i8 {
        let v = requantize(acc, mult, shift).wrapping_add(self.output_offset);
        v.max(self.act_min).min(self.act_max) as i8
    }
}

const BAD: KernelError = KernelError::InvalidArgument;

/// `arm_convolve_s8` (all of CMSIS-NN's conv paths compute the same sums):
/// `acc = bias[oc] + Σ_{ky,kx,ic} (x + input_offset)·w[oc,ky,kx,ic]` over
/// in-bounds taps, per-channel requantize. Weights OHWI.
#[allow(clippy::too_many_arguments)]
pub fn conv_s8(
    g: &Window,
    q: &ConvQuant,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    conv_with::<Active>(g, q, input, filter, bias, mult, shift, output)
}

#[allow(clippy::too_many_arguments)]
fn conv_with<M: mac::Mac>(
    g: &Window,
    q: &ConvQuant,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    let (i, o) = (g.input, g.output);
    let (kh, kw) = g.kernel;
    let filter_len =
        o.c.checked_mul(kh)
            .and_then(|v| v.checked_mul(kw))
            .and_then(|v| v.checked_mul(i.c));
    if i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || filter_len != Some(filter.len())
        || i.n != o.n
        || mult.len() != o.c
        || shift.len() != o.c
        || bias.is_some_and(|b| b.len() != o.c)
    {
        return Err(BAD);
    }
    if g.check_work(input)? {
        return Ok(());
    }
    let ops = kernels::ConvOperands::new(*g, *q, input, filter, bias, mult, shift);
    if g.kernel == (1, 1) && g.padding == (0, 0) && g.stride == (1, 1) && i.h == o.h && i.w == o.w {
        if M::PACKED_POINTWISE {
            kernels::pointwise_packed::<M>(&ops, output)
        } else {
            kernels::pointwise::<M>(&ops, output)
        }
    } else {
        kernels::conv::<M>(&ops, output)
    }
}

/// `Σ (x + offset)·w`: the inner product the convolutions spend their time
/// in (the seam for SMLAD-based versions).
#[inline]
pub fn dot_offset(x: &[i8], w: &[i8], offset: i32) -> i32 {
    let mut acc = 0i32;
    for (&a, &b) in x.iter().zip(w) {
        acc = acc.wrapping_add((a as i32).wrapping_add(offset).wrapping_mul(b as i32));
    }
    acc
}

/// `arm_depthwise_conv_s8`: output channel `oc = ic·ch_mult + m` sees only
/// input channel `ic`; weights `[1, KH, KW, C_out]`.
#[allow(clippy::too_many_arguments)]
pub fn depthwise_conv_s8(
    g: &Window,
    q: &ConvQuant,
    ch_mult: usize,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    depthwise_with::<Active>(g, q, ch_mult, input, filter, bias, mult, shift, output)
}

#[allow(clippy::too_many_arguments)]
fn depthwise_with<M: mac::Mac>(
    g: &Window,
    q: &ConvQuant,
    ch_mult: usize,
    input: &[i8],
    filter: &[i8],
    bias: Option<&[i32]>,
    mult: &[i32],
    shift: &[i32],
    output: &mut [i8],
) -> KernelResult {
    let (i, o) = (g.input, g.output);
    let (kh, kw) = g.kernel;
    if ch_mult == 0
        || i.c.checked_mul(ch_mult) != Some(o.c)
        || i.elements() != Some(input.len())
        || o.elements() != Some(output.len())
        || kh.checked_mul(kw).and_then(|v| v.checked_mul(o.c)) != Some(filter.len())
        || i.n != o.n
        || mult.len() != o.c
        || shift.len() != o.c
        || bias.is_some_and(|b| b.len() != o.c)
    {
        return Err(BAD);
    }
    if g.check_work(input)? {
        return Ok(());
    }
    let ops = kernels::ConvOperands::new(*g, *q, input, filter, bias, mult, shift);
    kernels::depthwise::<M>(&ops, ch_mult, output)
}

/// How `arm_fully_connected_s8` gets its per-output constant term: the
/// DSP/scalar builds read `bias` and add `input_offset` to every input; the
/// MVE build reads a precomputed `kernel_sum = input_offset·Σw + bias` and
/// multiplies raw inputs. Both give the same integers.
#[derive(Clone, Copy, Debug)]
pub enum FcEncoding<'a> {
    Bias(Option<&'a [i32]>),
    KernelSum(&'a [i32]),
}

/// `arm_fully_connected_s8`, per-tensor quantization: `input [batches, in]`,
/// `weights [out, in]`, `output [batches, out]`.
#[allow(clippy::too_many_arguments)]
pub fn fully_connected_s8(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> KernelResult {
    fully_connected_with::<Active>(
        q,
        filter_offset,
        encoding,
        input,
        weights,
        out_features,
        mult,
        shift,
        output,
    )
}

#[allow(clippy::too_many_arguments)]
fn fully_connected_with<M: mac::Mac>(
    q: &ConvQuant,
    filter_offset: i32,
    encoding: FcEncoding<'_>,
    input: &[i8],
    weights: &[i8],
    out_features: usize,
    mult: i32,
    shift: i32,
    output: &mut [i8],
) -> KernelResult {
    let in_features = weights.len().checked_div(out_features).unwrap_or(0);
    let batches = input.len().checked_div(in_features).unwrap_or(0);
    let const_len = match encoding {
        FcEncoding::Bias(Some(b)) => b.len(),
        FcEncoding::Bias(None) => out_features,
        FcEncoding::KernelSum(k) => k.len(),
    };
    if in_features == 0
        || in_features * out_features != weights.len()
        || batches * in_features != input.len()
        || output.len() != batches * out_features
        || const_len != out_features
    {
        return Err(BAD);
    }
    if filter_offset == 0 {
        return kernels::fully_connected::<M>(
            q,
            encoding,
            input,
            weights,
            in_features,
            out_features,
            mult,
            shift,
            output,
        );
    }
    for b in 0..batches {
        let (Some(row), Some(out_row)) = (
            input.get(b * in_features..(b + 1) * in_features),
            output.get_mut(b * out_features..(b + 1) * out_features),
        ) else {
            return Err(BAD);
        };
        for (oi, o) in out_row.iter_mut().enumerate() {
            let Some(w_row) = weights.get(oi * in_features..(oi + 1) * in_features) else {
                return Err(BAD);
            };
            let acc = match encoding {
                FcEncoding::KernelSum(ks) => {
                    let mut acc = ks.get(oi).copied().unwrap_or(0);
                    for (&x, &w) in row.iter().zip(w_row) {
                        acc = acc.wrapping_add(
                            (x as i32).wrapping_mul((w as i32).wrapping_add(filter_offset)),
                        );
                    }
                    acc
                }
                FcEncoding::Bias(bias) => {
                    let mut acc = bias.and_then(|bv| bv.get(oi).copied()).unwrap_or(0);
                    for (&x, &w) in row.iter().zip(w_row) {
                        acc = acc.wrapping_add(
                            (x as i32)
                                .wrapping_add(q.input_offset)
                                .wrapping_mul((w as i32).wrapping_add(filter_offset)),
                        );
                    }
                    acc
                }
            };
            *o = q.finish(acc, mult, shift);
        }
    }
    Ok(())
}

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
    kernels::avg_pool(g, act, input, output)
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

#[cfg(test)]
mod asm_equiv;
#[cfg(test)]
mod tests;
