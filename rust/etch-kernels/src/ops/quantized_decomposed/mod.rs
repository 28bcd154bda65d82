//! `quantized_decomposed::*`: ExecuTorch's portable quantize / dequantize
//! kernels (`kernels/quantized/cpu/op_quantize.cpp`, `op_dequantize.cpp`).

use etch_runtime::context::required;
use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, TensorViewMut,
};

use crate::math::quantize::{quantize_f32, QuantRange};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `quantized-decomposed-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-quantized_decomposed-quantize_per_tensor-out")]
    QUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-quantized_decomposed-dequantize_per_tensor-out")]
    DEQUANTIZE_PER_TENSOR_OUT,
    #[cfg(feature = "op-quantized_decomposed-dequantize_per_channel-out")]
    DEQUANTIZE_PER_CHANNEL_OUT,
];

use crate::ops::bad;

/// `quantize_per_tensor.out(Tensor input, float scale, int zero_point,
/// int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)`.
pub const QUANTIZE_PER_TENSOR_OUT: Kernel = op!(QUANTIZE_PER_TENSOR, quantize_per_tensor_out);

const QUANTIZE_PER_TENSOR: &str = "quantized_decomposed::quantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)";

/// Shared with `cortex_m::quantize_per_tensor.out`, whose schema has the
/// same arguments and whose scalar path does the same arithmetic.
pub(crate) fn quantize_per_tensor_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = QUANTIZE_PER_TENSOR;
    let scale = ctx.double(arg!(S, scale))?;
    let zp = ctx.int(arg!(S, zero_point))?;
    let range = QuantRange::new(ctx.int(arg!(S, quant_min))?, ctx.int(arg!(S, quant_max))?)?;
    let dtype = ctx.scalar_type(arg!(S, dtype))?;
    crate::ops::dynamic::resize_like(ctx, arg!(S, out), arg!(S, input))?;
    let (mut ins, mut outs) = ([None], [TensorViewMut::empty()]);
    ctx.io_into(arg!(S, [input]), arg!(S, [out]), &mut ins, &mut outs)?;
    let ([x], [out]) = (ins, &mut outs);
    let x = required(x, arg!(S, input))?;
    if out.dtype != dtype || x.numel() != out.numel() {
        return Err(bad("quantize output dtype or size"));
    }
    let inv_scale = 1.0f32 / (scale as f32);
    let zp = i32::try_from(zp).map_err(|_| bad("zero point out of range"))?;
    let x = x.as_f32()?;
    match dtype {
        ScalarType::CHAR => {
            let out = out.as_i8_mut()?;
            #[cfg(feature = "mve")]
            if crate::cortex_m::isa::mve::quant::quantize_s8(
                x,
                inv_scale,
                zp,
                range.min as i32,
                range.max as i32,
                out,
            )
            .is_some()
            {
                return Ok(());
            }
            for (o, &v) in out.iter_mut().zip(x) {
                *o = quantize_f32(v, inv_scale, zp, range) as i8;
            }
        }
        ScalarType::BYTE => {
            for (o, &v) in out.as_u8_mut()?.iter_mut().zip(x) {
                *o = quantize_f32(v, inv_scale, zp, range) as u8;
            }
        }
        ScalarType::SHORT => {
            for (o, &v) in out.as_i16_mut()?.iter_mut().zip(x) {
                *o = quantize_f32(v, inv_scale, zp, range) as i16;
            }
        }
        ScalarType::INT => {
            for (o, &v) in out.as_i32_mut()?.iter_mut().zip(x) {
                *o = quantize_f32(v, inv_scale, zp, range) as i32;
            }
        }
        _ => {
            return Err(Error::new(
                ErrorCode::InvalidType,
                "quantize output dtype",
                0,
            ))
        }
    }
    Ok(())
}

/// Reads element `i` of an integer tensor as i32.
fn int_elements<'d>(t: &etch_runtime::TensorView<'d>) -> Result<IntElements<'d>> {
    Ok(match t.dtype {
        ScalarType::CHAR => IntElements::I8(t.as_i8()?),
        ScalarType::BYTE => IntElements::U8(t.as_u8()?),
        ScalarType::SHORT => IntElements::I16(t.as_i16()?),
        ScalarType::INT => IntElements::I32(t.as_i32()?),
        _ => {
            return Err(Error::new(
                ErrorCode::InvalidType,
                "dequantize input dtype",
                0,
            ))
        }
    })
}

enum IntElements<'d> {
    I8(&'d [i8]),
    U8(&'d [u8]),
    I16(&'d [i16]),
    I32(&'d [i32]),
}

impl IntElements<'_> {
    fn get(&self, i: usize) -> Option<i32> {
        match self {
            IntElements::I8(v) => v.get(i).map(|&x| x as i32),
            IntElements::U8(v) => v.get(i).map(|&x| x as i32),
            IntElements::I16(v) => v.get(i).map(|&x| x as i32),
            IntElements::I32(v) => v.get(i).copied(),
        }
    }
}

/// `dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
/// int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype,
/// Tensor(a!) out)`: `out = (float)(q - zp) * (float)scale`.
pub const DEQUANTIZE_PER_TENSOR_OUT: Kernel = op!(DEQUANTIZE_PER_TENSOR, |ctx| {
    dequantize_per_tensor(ctx, arg!(DEQUANTIZE_PER_TENSOR, out))
});

const DEQUANTIZE_PER_TENSOR: &str = "quantized_decomposed::dequantize_per_tensor.out(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)";

/// Shared with `cortex_m::dequantize_per_tensor.out`, whose schema has the
/// same arguments before `out` (and no `out_dtype`).
pub(crate) fn dequantize_per_tensor(ctx: &mut KernelContext<'_, '_>, out_arg: usize) -> Result<()> {
    const S: &str = DEQUANTIZE_PER_TENSOR;
    let [x_arg, scale_arg, zp_arg] = arg!(S, [input, scale, zero_point]);
    let scale = ctx.double(scale_arg)? as f32;
    let zp = i32::try_from(ctx.int(zp_arg)?).map_err(|_| bad("zero point out of range"))?;
    crate::ops::dynamic::resize_like(ctx, out_arg, x_arg)?;
    let (mut ins, mut outs) = ([None], [TensorViewMut::empty()]);
    ctx.io_into([x_arg], [out_arg], &mut ins, &mut outs)?;
    let ([x], [out]) = (ins, &mut outs);
    let x = required(x, x_arg)?;
    if x.numel() != out.numel() {
        return Err(bad("dequantize output size"));
    }
    let q = int_elements(&x)?;
    let out = out.as_f32_mut()?;
    #[cfg(feature = "mve")]
    if let IntElements::I8(v) = &q {
        if crate::cortex_m::isa::mve::quant::dequantize_s8(v, scale, zp, out).is_some() {
            return Ok(());
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        let v = q.get(i).ok_or(bad("dequantize input size"))?;
        *o = (v.wrapping_sub(zp)) as f32 * scale;
    }
    Ok(())
}

/// `dequantize_per_channel.out(Tensor input, Tensor scales, Tensor?
/// zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *,
/// ScalarType? out_dtype, Tensor(a!) out)`: per channel along `axis`,
/// `(float)(q - zp[c]) * (float)scales[c]` (zero points read as int64).
pub const DEQUANTIZE_PER_CHANNEL_OUT: Kernel =
    op!(DEQUANTIZE_PER_CHANNEL, dequantize_per_channel_out);

const DEQUANTIZE_PER_CHANNEL: &str = "quantized_decomposed::dequantize_per_channel.out(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None, Tensor(a!) out) -> Tensor(a!)";

fn dequantize_per_channel_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = DEQUANTIZE_PER_CHANNEL;
    let axis = ctx.int(arg!(S, axis))?;
    let ([x, scales, zps], [mut out]) =
        ctx.io(arg!(S, [input, scales, zero_points]), arg!(S, [out]))?;
    let (x, scales) = (
        required(x, arg!(S, input))?,
        required(scales, arg!(S, scales))?,
    );
    let rank = x.shape.rank() as i64;
    let axis = if axis < 0 { axis + rank } else { axis };
    if !(0..rank).contains(&axis)
        || x.numel() != out.numel()
        || x.shape.sizes() != out.shape.sizes()
    {
        return Err(bad("dequantize_per_channel axis or size"));
    }
    let channels = x.shape.size(axis as isize);
    let scale_at = |c: usize| -> Option<f32> {
        match scales.dtype {
            ScalarType::FLOAT => scales.as_f32().ok()?.get(c).copied(),
            ScalarType::DOUBLE => scales.as_f64().ok()?.get(c).map(|&s| s as f32),
            _ => None,
        }
    };
    let zp_at = |c: usize| -> Option<i64> {
        match &zps {
            None => Some(0),
            Some(z) => match z.dtype {
                ScalarType::LONG => z.as_i64().ok()?.get(c).copied(),
                ScalarType::INT => z.as_i32().ok()?.get(c).map(|&v| v as i64),
                _ => None,
            },
        }
    };
    if scales.numel() != channels || zps.as_ref().is_some_and(|z| z.numel() != channels) {
        return Err(bad("dequantize_per_channel parameter sizes"));
    }
    // Element i (physical) belongs to channel (i / stride) % channels.
    let stride = x
        .shape
        .strides()
        .get(axis as usize)
        .copied()
        .unwrap_or(1)
        .max(1);
    let q = int_elements(&x)?;
    let out_strides_match = x.shape.memory_order_matches(out.shape.dim_order());
    if !out_strides_match {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "dequantize_per_channel layout change",
            0,
        ));
    }
    for (i, o) in out.as_f32_mut()?.iter_mut().enumerate() {
        let c = (i / stride) % channels.max(1);
        let (Some(v), Some(s), Some(zp)) = (q.get(i), scale_at(c), zp_at(c)) else {
            return Err(bad("dequantize_per_channel parameters"));
        };
        *o = (v as i64).wrapping_sub(zp) as f32 * s;
    }
    Ok(())
}
