//! `cortex_m::*` operators: ExecuTorch's Cortex-M backend, whose kernels call
//! CMSIS-NN; reproduced in Rust with CMSIS-NN's integer arithmetic.

use etch_runtime::context::required;
use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, TensorViewMut,
};

use super::copy::bytes;

pub mod conv;
mod pad;
use crate::cortex_m::arith::{divide_by_power_of_two, requantize};
use crate::cortex_m::{
    add_s8, avg_pool_s8, conv_s8_in, depthwise_conv_s8_in, fully_connected_s8, max_pool_s8, mul_s8,
    AddQuant, ConvQuant, FcEncoding, FcParams, MulQuant, Nhwc, Window, ADD_SCRATCH_BYTES,
    CONV_SCRATCH_BYTES, DEPTHWISE_SCRATCH_BYTES, FC_SCRATCH_BYTES,
};
pub use pad::PAD_OUT;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `cortex-m-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-cortex_m-quantize_per_tensor-out")]
    QUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-cortex_m-dequantize_per_tensor-out")]
    DEQUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-cortex_m-quantized_linear-out")]
    QUANTIZED_LINEAR_OUT,
    #[cfg(feature = "op-cortex_m-quantized_conv2d-out")]
    conv::QUANTIZED_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_depthwise_conv2d-out")]
    conv::QUANTIZED_DEPTHWISE_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-pad-out")]
    PAD_OUT,
    #[cfg(feature = "op-cortex_m-quantized_avg_pool2d-out")]
    QUANTIZED_AVG_POOL2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_add-out")]
    QUANTIZED_ADD_OUT,
    #[cfg(feature = "op-cortex_m-quantized_mul-out")]
    QUANTIZED_MUL_OUT,
    #[cfg(feature = "op-cortex_m-quantized_activation-out")]
    QUANTIZED_ACTIVATION_OUT,
    #[cfg(feature = "op-cortex_m-quantized_max_pool2d-out")]
    QUANTIZED_MAX_POOL2D_OUT,
    #[cfg(feature = "op-cortex_m-quantized_transpose_conv2d-out")]
    conv::QUANTIZED_TRANSPOSE_CONV2D_OUT,
    #[cfg(feature = "op-cortex_m-softmax-out")]
    SOFTMAX_OUT,
    #[cfg(feature = "op-cortex_m-transpose-out")]
    TRANSPOSE_OUT,
    #[cfg(feature = "op-cortex_m-quantized_batch_matmul-out")]
    QUANTIZED_BATCH_MATMUL_OUT,
    #[cfg(feature = "op-cortex_m-quantized_div-out")]
    QUANTIZED_DIV_OUT,
    #[cfg(feature = "op-cortex_m-minimum-out")]
    MINIMUM_OUT,
    #[cfg(feature = "op-cortex_m-maximum-out")]
    MAXIMUM_OUT,
    #[cfg(feature = "op-cortex_m-quantized_conv2d_nhwc-out")]
    conv::QUANTIZED_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_depthwise_conv2d_nhwc-out")]
    conv::QUANTIZED_DEPTHWISE_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_transpose_conv2d_nhwc-out")]
    conv::QUANTIZED_TRANSPOSE_CONV2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_avg_pool2d_nhwc-out")]
    QUANTIZED_AVG_POOL2D_NHWC_OUT,
    #[cfg(feature = "op-cortex_m-quantized_max_pool2d_nhwc-out")]
    QUANTIZED_MAX_POOL2D_NHWC_OUT,
];

use crate::ops::bad;

/// Whether two schema lines have the same argument list (their text from
/// the `(` on): a kernel pair sharing one reader (NCHW and NHWC) checks it
/// at compile time.
const fn same_arguments(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && a[i] != b'(' {
        i += 1;
    }
    while j < b.len() && b[j] != b'(' {
        j += 1;
    }
    if a.len() - i != b.len() - j {
        return false;
    }
    while i < a.len() {
        if a[i] != b[j] {
            return false;
        }
        i += 1;
        j += 1;
    }
    true
}

fn i32_arg(ctx: &KernelContext<'_, '_>, i: usize) -> Result<i32> {
    i32::try_from(ctx.int(i)?).map_err(|_| bad("argument out of int32 range"))
}

/// `quantize_per_tensor.out`: same schema and scalar arithmetic as
/// `quantized_decomposed::quantize_per_tensor.out`.
pub const QUANTIZE_PER_TENSOR_OUT: Kernel = op!(
    "cortex_m::quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
    super::quantized_decomposed::quantize_per_tensor_out
);

/// `dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
/// int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)`.
pub const DEQUANTIZE_PER_TENSOR_OUT: Kernel = op!(
    "cortex_m::dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| super::quantized_decomposed::dequantize_per_tensor(ctx, arg!(SCHEMA, out))
);

/// `quantized_linear.out(Tensor input, Tensor weights, Tensor? bias,
/// Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset,
/// int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
/// int activation_min, *, Tensor(a!) out)` → `arm_fully_connected_s8`.
///
/// Both encodings the exporter writes: MVE files carry `kernel_sum`
/// (= input_offset·Σw + bias) and no bias, so `acc = kernel_sum[o] + Σ x·w`;
/// DSP/scalar files carry `bias`, so `acc = bias[o] + Σ (x + input_offset)·(w
/// + filter_offset)`. Then `arm_nn_requantize`, `+ output_offset`, clamp.
pub const QUANTIZED_LINEAR_OUT: Kernel = op!(
    QUANTIZED_LINEAR,
    quantized_linear_out,
    scratch = FC_SCRATCH_BYTES
);

const QUANTIZED_LINEAR: &str = "cortex_m::quantized_linear.out(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset, int[] requantize_multipliers, int[] requantize_shifts, int activation_max, int activation_min, *, Tensor(a!) out) -> Tensor(a!)";

fn quantized_linear_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZED_LINEAR;
    // Inline reads (`i32`): through `i32_arg` about 30 instructions each.
    let q = ConvQuant {
        input_offset: ctx.i32(arg!(S, input_offset))?,
        output_offset: ctx.i32(arg!(S, output_offset))?,
        act_max: ctx.i32(arg!(S, activation_max))?,
        act_min: ctx.i32(arg!(S, activation_min))?,
    };
    let filter_offset = ctx.i32(arg!(S, filter_offset))?;
    // Per-tensor: the upstream kernel reads element 0 of each list.
    let mult = i32::try_from(ctx.int_list_item(arg!(S, requantize_multipliers), 0)?)
        .map_err(|_| bad("multiplier"))?;
    let shift = i32::try_from(ctx.int_list_item(arg!(S, requantize_shifts), 0)?)
        .map_err(|_| bad("shift"))?;
    let scratch = ctx.take_scratch();
    // Views the caller owns (`io_into`): `io`'s came back through a
    // `Result` and were copied (about 180 instructions per call on M4).
    // Four `None`s written in place (`[None; 4]` was built aside and
    // copied, 112 B through `memcpy`, on every call).
    let (mut ins, mut outs) = ([None, None, None, None], [TensorViewMut::empty()]);
    let inputs = arg!(S, [input, weights, bias, kernel_sum]);
    ctx.io_into(inputs, arg!(S, [out]), &mut ins, &mut outs)?;
    let ([x, w, bias, kernel_sum], [out]) = (ins, &mut outs);
    let (x, w) = (required(x, arg!(S, input))?, required(w, arg!(S, weights))?);
    let out_features = w.shape.size(0);
    if w.shape.rank() != 2 {
        return Err(bad("linear weight is not 2-D"));
    }
    let encoding = match (kernel_sum, bias) {
        (Some(k), _) => FcEncoding::KernelSum(k.as_i32()?),
        (None, b) => FcEncoding::Bias(b.map(|b| b.as_i32()).transpose()?),
    };
    let (x, w) = (x.as_i8()?, w.as_i8()?);
    let p = FcParams {
        q,
        filter_offset,
        encoding,
        mult,
        shift,
    };
    Ok(fully_connected_s8(
        &p,
        x,
        w,
        out_features,
        out.as_i8_mut()?,
        scratch,
    )?)
}

/// How an operator's activations describe CMSIS-NN's NHWC layout: logical
/// NCHW sizes with a channels-last dim order (the default flow), or explicit
/// NHWC sizes in a contiguous tensor (the `_nhwc` operators of the
/// experimental explicit-layout flow).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    ChannelsLast,
    ExplicitNhwc,
}

/// NHWC sizes of a rank-4 activation in `layout`.
fn nhwc_in(t: &etch_runtime::Shape, layout: Layout) -> Result<(usize, usize, usize, usize)> {
    match layout {
        Layout::ChannelsLast => nhwc(t),
        Layout::ExplicitNhwc if t.rank() == 4 && t.is_contiguous() => {
            Ok((t.size(0), t.size(1), t.size(2), t.size(3)))
        }
        Layout::ExplicitNhwc => Err(bad("_nhwc activation is not a contiguous rank-4 tensor")),
    }
}

/// [`nhwc_in`] as the compute functions' `Nhwc`.
fn nhwc_dims(t: &etch_runtime::Shape, layout: Layout) -> Result<Nhwc> {
    let mut d = Nhwc::ZERO;
    nhwc_into(t, layout, &mut d)?;
    Ok(d)
}

/// [`nhwc_dims`] written into a window's field: a `Result<Nhwc>` came back
/// through memory and was copied again into the window.
#[inline(never)]
fn nhwc_into(t: &etch_runtime::Shape, layout: Layout, out: &mut Nhwc) -> Result<()> {
    let (n, h, w, c) = nhwc_in(t, layout)?;
    *out = Nhwc { n, h, w, c };
    Ok(())
}

/// NHWC sizes of a rank-4 activation stored channels-last (CMSIS-NN's layout).
fn nhwc(t: &etch_runtime::Shape) -> Result<(usize, usize, usize, usize)> {
    if !t.is_channels_last() {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "cortex_m activation is not channels-last",
            0,
        ));
    }
    t.nhwc().ok_or(bad("cortex_m activation is not rank 4"))
}

/// (h, w) pair from an `int[2]` argument (one value means both). CMSIS-NN
/// holds kernel, stride, padding and dilation in `int32_t`: a value outside
/// `0..=i32::MAX` is an invalid argument on every target.
fn pair(ctx: &KernelContext<'_, '_>, i: usize) -> Result<(usize, usize)> {
    let mut p = (0, 0);
    pair_into(ctx, i, &mut p)?;
    Ok(p)
}

/// [`pair`] written into a window's field (a `Result` of one word comes
/// back in registers; `Result<(usize, usize)>` came back through memory).
#[inline(never)]
fn pair_into(ctx: &KernelContext<'_, '_>, i: usize, out: &mut (usize, usize)) -> Result<()> {
    let mut l = [0i64; 2];
    let len = ctx.int_list_into(i, &mut l)?;
    let [a, b] = l;
    let b = if len > 1 { b } else { a };
    let as_usize = |v: i64| u32::try_from(v).ok().filter(|&v| v <= i32::MAX as u32);
    let (Some(a), Some(b)) = (as_usize(a), as_usize(b)) else {
        return Err(bad("stride, padding or dilation outside 0..=i32::MAX"));
    };
    *out = (a as usize, b as usize);
    Ok(())
}

/// `quantized_avg_pool2d.out(Tensor input, int[] kernel_size, int[] stride,
/// int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift,
/// Tensor scratch, *, Tensor(a!) out)` → `arm_avgpool_s8`: the integer mean
/// of the window's in-bounds elements, rounded half away from zero, clamped
/// to int8. The quantization arguments are unused (input and output share
/// them), as in the upstream kernel.
pub const QUANTIZED_AVG_POOL2D_OUT: Kernel = op!(QUANTIZED_AVG_POOL2D, |ctx| quantized_avg_pool2d(
    ctx,
    Layout::ChannelsLast
));

/// `quantized_avg_pool2d_nhwc.out`: explicit NHWC activations.
pub const QUANTIZED_AVG_POOL2D_NHWC_OUT: Kernel =
    op!(QUANTIZED_AVG_POOL2D_NHWC, |ctx| quantized_avg_pool2d(
        ctx,
        Layout::ExplicitNhwc
    ));

const QUANTIZED_AVG_POOL2D: &str = "cortex_m::quantized_avg_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_AVG_POOL2D_NHWC: &str = "cortex_m::quantized_avg_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, int zero_point, int multiplier, int shift, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
// One reader for both layouts: the same arguments in both schemas.
const _: () = assert!(same_arguments(
    QUANTIZED_AVG_POOL2D,
    QUANTIZED_AVG_POOL2D_NHWC
));

// Kept out of line: one symbol per kernel, for size and profile attribution.
#[inline(never)]
fn quantized_avg_pool2d(ctx: &mut KernelContext<'_, '_>, layout: Layout) -> Result<()> {
    const S: &str = QUANTIZED_AVG_POOL2D;
    let mut g = Window {
        input: Nhwc::ZERO,
        output: Nhwc::ZERO,
        kernel: (0, 0),
        stride: (0, 0),
        padding: (0, 0),
        dilation: (1, 1),
    };
    pair_into(ctx, arg!(S, kernel_size), &mut g.kernel)?;
    pair_into(ctx, arg!(S, stride), &mut g.stride)?;
    pair_into(ctx, arg!(S, padding), &mut g.padding)?;
    let (mut ins, mut outs) = ([None], [TensorViewMut::empty()]);
    ctx.io_into(arg!(S, [input]), arg!(S, [out]), &mut ins, &mut outs)?;
    let ([x], [out]) = (ins, &mut outs);
    let x = required(x, arg!(S, input))?;
    nhwc_into(&x.shape, layout, &mut g.input)?;
    nhwc_into(&out.shape, layout, &mut g.output)?;
    // The upstream kernel runs with the full int8 range.
    Ok(avg_pool_s8(&g, (-128, 127), x.as_i8()?, out.as_i8_mut()?)?)
}

/// Element `i` of a broadcast operand: equal sizes, or one value per channel
/// of a channels-last output (the only broadcast the cortex_m ops accept).
fn channel_or_same(len: usize, out_len: usize, channels: usize, i: usize) -> Option<usize> {
    if len == out_len {
        Some(i)
    } else if len == channels && channels > 0 {
        Some(i % channels)
    } else if len == 1 {
        Some(0)
    } else {
        None
    }
}

/// `quantized_add.out(Tensor self, int self_zero_point, int self_multiplier,
/// int self_shift, Tensor other, int other_zero_point, int other_multiplier,
/// int other_shift, int output_zero_point, int output_multiplier,
/// int output_shift, int activation_min, int activation_max, *, Tensor(a!) out)`
/// → `arm_elementwise_add_s8`: each input `((x - zp) << 20)` requantized by
/// its multiplier/shift, summed, requantized by the output's, `+ zp`, clamped.
pub const QUANTIZED_ADD_OUT: Kernel = op!(
    QUANTIZED_ADD,
    quantized_add_out,
    scratch = ADD_SCRATCH_BYTES
);

const QUANTIZED_ADD: &str = "cortex_m::quantized_add.out(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other, int other_zero_point, int other_multiplier, int other_shift, int output_zero_point, int output_multiplier, int output_shift, int activation_min, int activation_max, *, Tensor(a!) out) -> Tensor(a!)";

fn quantized_add_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZED_ADD;
    let mut p = [0i32; 11];
    let args = arg!(
        S,
        [
            self_zero_point,
            self_multiplier,
            self_shift,
            other_zero_point,
            other_multiplier,
            other_shift,
            output_zero_point,
            output_multiplier,
            output_shift,
            activation_min,
            activation_max
        ]
    );
    for (slot, arg) in p.iter_mut().zip(args) {
        *slot = i32_arg(ctx, arg)?;
    }
    let [zp1, m1, s1, zp2, m2, s2, zpo, mo, so, act_min, act_max] = p;
    let scratch = ctx.take_scratch();
    let (mut ins, mut outs) = ([None; 2], [TensorViewMut::empty()]);
    ctx.io_into(arg!(S, [self, other]), arg!(S, [out]), &mut ins, &mut outs)?;
    let ([a, b], [out]) = (ins, &mut outs);
    let (a, b) = (required(a, arg!(S, self))?, required(b, arg!(S, other))?);
    let channels = out.shape.size(1);
    let (a, b, out) = (a.as_i8()?, b.as_i8()?, out.as_i8_mut()?);
    let n = out.len();
    if a.len() == n && b.len() == n {
        let q = AddQuant {
            a: (zp1, m1, s1),
            b: (zp2, m2, s2),
            out: (zpo, mo, so),
            act_min,
            act_max,
        };
        return Ok(add_s8(&q, a, b, out, scratch)?);
    }
    for (i, o) in out.iter_mut().enumerate() {
        let (Some(ia), Some(ib)) = (
            channel_or_same(a.len(), n, channels, i),
            channel_or_same(b.len(), n, channels, i),
        ) else {
            return Err(bad("add operand shapes"));
        };
        let (Some(&x), Some(&y)) = (a.get(ia), b.get(ib)) else {
            return Err(bad("add index"));
        };
        let x = requantize((x as i32).wrapping_sub(zp1).wrapping_shl(20), m1, s1);
        let y = requantize((y as i32).wrapping_sub(zp2).wrapping_shl(20), m2, s2);
        let sum = requantize(x.wrapping_add(y), mo, so).wrapping_add(zpo);
        *o = sum.max(act_min).min(act_max) as i8;
    }
    Ok(())
}

/// `quantized_mul.out(Tensor self, int self_zero_point, Tensor other,
/// int other_zero_point, int output_zero_point, int output_multiplier,
/// int output_shift, *, Tensor(a!) out)` → `arm_elementwise_mul_s8`:
/// `(x - zp1)·(y - zp2)` requantized, `+ zp`, clamped to int8.
pub const QUANTIZED_MUL_OUT: Kernel = op!(QUANTIZED_MUL, quantized_mul_out);

const QUANTIZED_MUL: &str = "cortex_m::quantized_mul.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, int output_multiplier, int output_shift, *, Tensor(a!) out) -> Tensor(a!)";

fn quantized_mul_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZED_MUL;
    let (zp1, zp2, zpo) = (
        i32_arg(ctx, arg!(S, self_zero_point))?,
        i32_arg(ctx, arg!(S, other_zero_point))?,
        i32_arg(ctx, arg!(S, output_zero_point))?,
    );
    let (mo, so) = (
        i32_arg(ctx, arg!(S, output_multiplier))?,
        i32_arg(ctx, arg!(S, output_shift))?,
    );
    let (mut ins, mut outs) = ([None; 2], [TensorViewMut::empty()]);
    ctx.io_into(arg!(S, [self, other]), arg!(S, [out]), &mut ins, &mut outs)?;
    let ([a, b], [out]) = (ins, &mut outs);
    let (a, b) = (required(a, arg!(S, self))?, required(b, arg!(S, other))?);
    let channels = out.shape.size(1);
    let (a, b, out) = (a.as_i8()?, b.as_i8()?, out.as_i8_mut()?);
    let n = out.len();
    let q = MulQuant {
        a_zp: zp1,
        b_zp: zp2,
        out: (zpo, mo, so),
    };
    // One operand of the output's size, the other of it, of one value per
    // channel or of one value: the element loops (`b` repeated).
    let repeats = |len: usize| len == n || (len == channels && channels > 0) || len == 1;
    if n > 0 && a.len() == n && repeats(b.len()) {
        return Ok(mul_s8(&q, a, b, out)?);
    }
    if n > 0 && b.len() == n && repeats(a.len()) {
        return Ok(mul_s8(&q.swapped(), b, a, out)?);
    }
    for (i, o) in out.iter_mut().enumerate() {
        let (Some(ia), Some(ib)) = (
            channel_or_same(a.len(), n, channels, i),
            channel_or_same(b.len(), n, channels, i),
        ) else {
            return Err(bad("mul operand shapes"));
        };
        let (Some(&x), Some(&y)) = (a.get(ia), b.get(ib)) else {
            return Err(bad("mul index"));
        };
        *o = q.output(x, y);
    }
    Ok(())
}

/// `quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out)`:
/// a 256-entry int8 lookup table indexed by `x + 128` (sigmoid, tanh, ...,
/// precomputed at export).
pub const QUANTIZED_ACTIVATION_OUT: Kernel =
    op!(
    "cortex_m::quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x, lut], [mut out]) = ctx.io(arg!(SCHEMA, [input, lut]), arg!(SCHEMA, [out]))?;
        let (x, lut) = (required(x, arg!(SCHEMA, input))?, required(lut, arg!(SCHEMA, lut))?);
        let (x, lut, out) = (x.as_i8()?, lut.as_i8()?, out.as_i8_mut()?);
        if lut.len() != 256 || x.len() != out.len() {
            return Err(bad("activation LUT or sizes"));
        }
        for (o, &v) in out.iter_mut().zip(x) {
            *o = lut.get((v as i32 + 128) as usize).copied().unwrap_or(0);
        }
        Ok(())
    }
);

/// `quantized_max_pool2d.out(Tensor input, int[] kernel_size, int[] stride,
/// int[] padding, int[] dilation, bool ceil_mode, int input_zero_point,
/// int output_zero_point, int activation_min, int activation_max, *,
/// Tensor(a!) out)` → `arm_max_pool_s8`: the window's in-bounds maximum
/// (starting from -128), clamped to the activation range.
pub const QUANTIZED_MAX_POOL2D_OUT: Kernel = op!(QUANTIZED_MAX_POOL2D, |ctx| quantized_max_pool2d(
    ctx,
    Layout::ChannelsLast
));

/// `quantized_max_pool2d_nhwc.out`: explicit NHWC activations.
pub const QUANTIZED_MAX_POOL2D_NHWC_OUT: Kernel =
    op!(QUANTIZED_MAX_POOL2D_NHWC, |ctx| quantized_max_pool2d(
        ctx,
        Layout::ExplicitNhwc
    ));

const QUANTIZED_MAX_POOL2D: &str = "cortex_m::quantized_max_pool2d.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_MAX_POOL2D_NHWC: &str = "cortex_m::quantized_max_pool2d_nhwc.out(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, int activation_max, *, Tensor(a!) out) -> Tensor(a!)";
// One reader for both layouts: the same arguments in both schemas.
const _: () = assert!(same_arguments(
    QUANTIZED_MAX_POOL2D,
    QUANTIZED_MAX_POOL2D_NHWC
));

// Kept out of line: one symbol per kernel, for size and profile attribution.
#[inline(never)]
fn quantized_max_pool2d(ctx: &mut KernelContext<'_, '_>, layout: Layout) -> Result<()> {
    const S: &str = QUANTIZED_MAX_POOL2D;
    let (kernel, stride, padding, dilation) = (
        pair(ctx, arg!(S, kernel_size))?,
        pair(ctx, arg!(S, stride))?,
        pair(ctx, arg!(S, padding))?,
        pair(ctx, arg!(S, dilation))?,
    );
    let act = (
        i32_arg(ctx, arg!(S, activation_min))?,
        i32_arg(ctx, arg!(S, activation_max))?,
    );
    let ([x], [mut out]) = ctx.io(arg!(S, [input]), arg!(S, [out]))?;
    let x = required(x, arg!(S, input))?;
    let g = Window {
        input: nhwc_dims(&x.shape, layout)?,
        output: nhwc_dims(&out.shape, layout)?,
        kernel,
        stride,
        padding,
        dilation,
    };
    Ok(max_pool_s8(&g, act, x.as_i8()?, out.as_i8_mut()?)?)
}

/// `softmax.out(Tensor input, int dim, int input_zero_point,
/// int output_zero_point, int input_multiplier, int input_shift, int diff_min,
/// *, Tensor(a!) out)` → `arm_softmax_s8` over the last dimension: integer
/// exp of `(x - max)` scaled by the multiplier, sum in 12 accumulator bits,
/// reciprocal by Newton-Raphson, output scale 1/256 with zero point -128
/// (TFLite-Micro bit-accurate).
pub const SOFTMAX_OUT: Kernel = op!(SOFTMAX, softmax_out);

const SOFTMAX: &str = "cortex_m::softmax.out(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier, int input_shift, int diff_min, *, Tensor(a!) out) -> Tensor(a!)";

fn softmax_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = SOFTMAX;
    use crate::cortex_m::arith::{exp_on_negative_values as exp_neg, mul_sat, one_over_one_plus_x};
    const ACCUM_BITS: i32 = 12;
    let dim = ctx.int(arg!(S, dim))?;
    let (mult, shift, diff_min) = (
        i32_arg(ctx, arg!(S, input_multiplier))?,
        i32_arg(ctx, arg!(S, input_shift))?,
        i32_arg(ctx, arg!(S, diff_min))?,
    );
    let ([x], [mut out]) = ctx.io(arg!(S, [input]), arg!(S, [out]))?;
    let x = required(x, arg!(S, input))?;
    let rank = x.shape.rank() as i64;
    if (dim != -1 && dim != rank - 1) || !x.shape.is_contiguous() || !(0..=31).contains(&shift) {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "softmax over a non-last dimension",
            0,
        ));
    }
    let row = x.shape.size(-1).max(1);
    let (x, out) = (x.as_i8()?, out.as_i8_mut()?);
    if x.len() != out.len() || x.len() % row != 0 {
        return Err(bad("softmax sizes"));
    }
    let mask = 1i32 << shift;
    let rows = x.len() / row;
    for r in 0..rows {
        let (Some(input), Some(output)) = (
            x.get(r * row..(r + 1) * row),
            out.get_mut(r * row..(r + 1) * row),
        ) else {
            return Err(bad("softmax index"));
        };
        let max = input.iter().copied().max().unwrap_or(0) as i32;
        let mut sum = 0i32;
        for &v in input {
            let diff = v as i32 - max;
            if diff >= diff_min {
                sum = sum.wrapping_add(divide_by_power_of_two(
                    exp_neg(mul_sat(diff.wrapping_mul(mask), mult)),
                    ACCUM_BITS,
                ));
            }
        }
        let headroom = (sum as u32).leading_zeros() as i32;
        let shifted = if sum > 0 {
            sum.wrapping_shl(headroom as u32)
        } else {
            0
        };
        let shifted_scale = one_over_one_plus_x(shifted.wrapping_sub(i32::MIN));
        let bits_over_unit = ACCUM_BITS - headroom + 23;
        for (o, &v) in output.iter_mut().zip(input) {
            let diff = v as i32 - max;
            *o = if diff >= diff_min {
                let e = exp_neg(mul_sat(diff.wrapping_mul(mask), mult));
                let res = divide_by_power_of_two(mul_sat(shifted_scale, e), bits_over_unit)
                    .wrapping_add(-128);
                res.clamp(-128, 127) as i8
            } else {
                -128
            };
        }
    }
    Ok(())
}

/// `transpose.out(Tensor input, int[] perm, *, Tensor(a!) out)` →
/// `arm_transpose_s8`.
pub const TRANSPOSE_OUT: Kernel = op!(
    "cortex_m::transpose.out(Tensor input, int[] perm, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let perm = ctx.int_list(arg!(SCHEMA, perm))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [input]), arg!(SCHEMA, [out]))?;
        super::copy::strided::permute(
            &required(x, arg!(SCHEMA, input))?,
            perm.as_slice(),
            &mut out,
        )
    }
);

/// `quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point,
/// Tensor rhs_transposed, int rhs_zero_point, int output_zero_point,
/// int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out)`
/// → `arm_batch_matmul_s8`: `Σ_k (lhs + lhs_offset)·(rhs_t + rhs_offset)`
/// (the "zero point" arguments are CMSIS offsets, added), requantized,
/// `+ output_zero_point`, clamped to int8.
pub const QUANTIZED_BATCH_MATMUL_OUT: Kernel =
    op!(QUANTIZED_BATCH_MATMUL, quantized_batch_matmul_out);

const QUANTIZED_BATCH_MATMUL: &str = "cortex_m::quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point, int output_zero_point, int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";

fn quantized_batch_matmul_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZED_BATCH_MATMUL;
    let (lhs_off, rhs_off, out_zp) = (
        i32_arg(ctx, arg!(S, lhs_zero_point))?,
        i32_arg(ctx, arg!(S, rhs_zero_point))?,
        i32_arg(ctx, arg!(S, output_zero_point))?,
    );
    let (mult, shift) = (
        i32_arg(ctx, arg!(S, output_multiplier))?,
        i32_arg(ctx, arg!(S, output_shift))?,
    );
    let ([l, r], [mut out]) = ctx.io(arg!(S, [lhs, rhs_transposed]), arg!(S, [out]))?;
    let (l, r) = (
        required(l, arg!(S, lhs))?,
        required(r, arg!(S, rhs_transposed))?,
    );
    if l.shape.rank() != 3 || r.shape.rank() != 3 || out.shape.rank() != 3 {
        return Err(bad("batch_matmul ranks"));
    }
    let (b, m, k) = (l.shape.size(0), l.shape.size(1), l.shape.size(2));
    let nn = r.shape.size(1);
    if r.shape.size(0) != b
        || r.shape.size(2) != k
        || out.shape.sizes() != [b as u32, m as u32, nn as u32]
    {
        return Err(bad("batch_matmul shapes"));
    }
    let (l, r, out) = (l.as_i8()?, r.as_i8()?, out.as_i8_mut()?);
    if out.is_empty() {
        // No work, whatever the other sizes are.
        return Ok(());
    }
    let mut dst = out.iter_mut();
    for bi in 0..b {
        for i in 0..m {
            for j in 0..nn {
                let (Some(lr), Some(rr)) = (
                    l.get((bi * m + i) * k..(bi * m + i + 1) * k),
                    r.get((bi * nn + j) * k..(bi * nn + j + 1) * k),
                ) else {
                    return Err(bad("batch_matmul index"));
                };
                let mut acc = 0i32;
                for (&a, &c) in lr.iter().zip(rr) {
                    acc = acc.wrapping_add(
                        (a as i32)
                            .wrapping_add(lhs_off)
                            .wrapping_mul((c as i32).wrapping_add(rhs_off)),
                    );
                }
                let Some(o) = dst.next() else {
                    return Err(bad("batch_matmul index"));
                };
                *o = requantize(acc, mult, shift)
                    .wrapping_add(out_zp)
                    .clamp(-128, 127) as i8;
            }
        }
    }
    Ok(())
}

/// `minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)` (int8,
/// broadcasting) → `arm_minimum_s8`.
pub const MINIMUM_OUT: Kernel = op!(
    "cortex_m::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| min_max(ctx, arg!(SCHEMA, [self, other, out]), false)
);

/// `maximum.out(Tensor self, Tensor other, *, Tensor(a!) out)` (int8,
/// broadcasting) → `arm_maximum_s8`.
pub const MAXIMUM_OUT: Kernel = op!(
    "cortex_m::maximum.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| min_max(ctx, arg!(SCHEMA, [self, other, out]), true)
);

/// `args`: the positions of `self`, `other` and `out`.
fn min_max(ctx: &mut KernelContext<'_, '_>, args: [usize; 3], max: bool) -> Result<()> {
    let [a_arg, b_arg, out_arg] = args;
    let ([a, b], [mut out]) = ctx.io([a_arg, b_arg], [out_arg])?;
    let (a, b) = (required(a, a_arg)?, required(b, b_arg)?);
    let shape = out.shape;
    let (ad, bd, od) = (a.as_i8()?, b.as_i8()?, out.as_i8_mut()?);
    super::elementwise::for_each_broadcast(&a.shape, &b.shape, &shape, |ia, ib, io| {
        let (Some(&x), Some(&y), Some(o)) = (ad.get(ia), bd.get(ib), od.get_mut(io)) else {
            return Err(bad("min/max index"));
        };
        *o = if max { x.max(y) } else { x.min(y) };
        Ok(())
    })
}

/// `quantized_div.out(Tensor self, int self_zero_point, Tensor other,
/// int other_zero_point, int output_zero_point, float output_scale, *,
/// Tensor(a!) out)`: the quotient of the zero-point-corrected operands in f32
/// (0 where the divisor is 0), times the effective scale, rounded half to
/// even, `+ zero point`, clamped to the element type (int8 or int16).
pub const QUANTIZED_DIV_OUT: Kernel = op!(QUANTIZED_DIV, quantized_div_out);

const QUANTIZED_DIV: &str = "cortex_m::quantized_div.out(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, float output_scale, *, Tensor(a!) out) -> Tensor(a!)";

fn quantized_div_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZED_DIV;
    use crate::math::quantize::round_half_even;
    let (zp1, zp2, zpo) = (
        i32_arg(ctx, arg!(S, self_zero_point))?,
        i32_arg(ctx, arg!(S, other_zero_point))?,
        i32_arg(ctx, arg!(S, output_zero_point))?,
    );
    let scale = ctx.double(arg!(S, output_scale))? as f32;
    let ([a, b], [mut out]) = ctx.io(arg!(S, [self, other]), arg!(S, [out]))?;
    let (a, b) = (required(a, arg!(S, self))?, required(b, arg!(S, other))?);
    if a.numel() != b.numel()
        || a.numel() != out.numel()
        || a.dtype != out.dtype
        || b.dtype != out.dtype
    {
        return Err(bad("div operand shapes"));
    }
    let q = |x: i32, y: i32| -> f32 {
        let (n, d) = (x.wrapping_sub(zp1) as f32, y.wrapping_sub(zp2) as f32);
        let quotient = if d != 0.0 { n / d } else { 0.0 };
        round_half_even(quotient * scale) + zpo as f32
    };
    match out.dtype {
        etch_runtime::ScalarType::CHAR => {
            let (ad, bd) = (a.as_i8()?, b.as_i8()?);
            for ((o, &x), &y) in out.as_i8_mut()?.iter_mut().zip(ad).zip(bd) {
                *o = q(x as i32, y as i32).clamp(-128.0, 127.0) as i8;
            }
        }
        etch_runtime::ScalarType::SHORT => {
            let (ad, bd) = (a.as_i16()?, b.as_i16()?);
            for ((o, &x), &y) in out.as_i16_mut()?.iter_mut().zip(ad).zip(bd) {
                *o = q(x as i32, y as i32).clamp(-32768.0, 32767.0) as i16;
            }
        }
        _ => return Err(Error::new(ErrorCode::InvalidType, "div dtype", 0)),
    }
    Ok(())
}
