//! `cortex_m::*` operators: ExecuTorch's Cortex-M backend, whose kernels call
//! CMSIS-NN; reproduced in Rust with CMSIS-NN's integer arithmetic.

use etch_runtime::context::required;
use etch_runtime::{ArgKind as A, Error, ErrorCode, Kernel, KernelContext, Result};

use super::arith::requantize;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

fn i32_arg(ctx: &KernelContext<'_, '_>, i: usize) -> Result<i32> {
    i32::try_from(ctx.int(i)?).map_err(|_| bad("argument out of int32 range"))
}

/// `quantize_per_tensor.out`: same schema and scalar arithmetic as
/// `quantized_decomposed::quantize_per_tensor.out`.
pub const QUANTIZE_PER_TENSOR_OUT: Kernel = Kernel {
    name: "cortex_m::quantize_per_tensor.out",
    args: &[A::Tensor, A::Double, A::Int, A::Int, A::Int, A::ScalarType, A::Tensor, A::Tensor],
    run: super::quantized_decomposed::quantize_per_tensor_out,
};

/// `dequantize_per_tensor.out(Tensor input, float scale, int zero_point,
/// int quant_min, int quant_max, ScalarType dtype, *, Tensor(a!) out)`.
pub const DEQUANTIZE_PER_TENSOR_OUT: Kernel = Kernel {
    name: "cortex_m::dequantize_per_tensor.out",
    args: &[A::Tensor, A::Double, A::Int, A::Int, A::Int, A::ScalarType, A::Tensor, A::Tensor],
    run: |ctx| super::quantized_decomposed::dequantize_per_tensor(ctx, 6),
};

/// `quantized_linear.out(Tensor input, Tensor weights, Tensor? bias,
/// Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset,
/// int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
/// int activation_min, *, Tensor(a!) out)` → `arm_fully_connected_s8`.
///
/// Both encodings the exporter writes: MVE files carry `kernel_sum`
/// (= input_offset·Σw + bias) and no bias, so `acc = kernel_sum[o] + Σ x·w`;
/// DSP/scalar files carry `bias`, so `acc = bias[o] + Σ (x + input_offset)·(w
/// + filter_offset)`. Then `arm_nn_requantize`, `+ output_offset`, clamp.
pub const QUANTIZED_LINEAR_OUT: Kernel = Kernel {
    name: "cortex_m::quantized_linear.out",
    args: &[
        A::Tensor, A::Tensor, A::OptTensor, A::OptTensor, A::Int, A::Int, A::Int, A::IntList, A::IntList, A::Int,
        A::Int, A::Tensor, A::Tensor,
    ],
    run: quantized_linear_out,
};

fn quantized_linear_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let input_offset = i32_arg(ctx, 4)?;
    let filter_offset = i32_arg(ctx, 5)?;
    let output_offset = i32_arg(ctx, 6)?;
    let mult = i32::try_from(ctx.int_list_item(7, 0)?).map_err(|_| bad("multiplier"))?;
    let shift = i32::try_from(ctx.int_list_item(8, 0)?).map_err(|_| bad("shift"))?;
    let act_max = i32_arg(ctx, 9)?;
    let act_min = i32_arg(ctx, 10)?;
    let ([x, w, bias, kernel_sum], [mut out]) = ctx.io([0, 1, 2, 3], [11])?;
    let (x, w) = (required(x, 0)?, required(w, 1)?);
    let (x, w) = (x.as_i8()?, w.as_i8()?);
    let out = out.as_i8_mut()?;
    let n_out = w.len().checked_div(1).unwrap_or(0);
    let _ = n_out;
    let out_features = match &kernel_sum {
        Some(k) => k.numel(),
        None => match &bias {
            Some(b) => b.numel(),
            None => 0,
        },
    };
    let out_features = if out_features == 0 { out.len() } else { out_features };
    if out_features == 0 || w.len() % out_features != 0 {
        return Err(bad("linear weight shape"));
    }
    let in_features = w.len() / out_features;
    if in_features == 0 || x.len() % in_features != 0 || out.len() != (x.len() / in_features) * out_features {
        return Err(bad("linear input/output shape"));
    }
    let bias = bias.map(|b| b.as_i32()).transpose()?;
    let kernel_sum = kernel_sum.map(|k| k.as_i32()).transpose()?;
    for (row, out_row) in x.chunks_exact(in_features).zip(out.chunks_exact_mut(out_features)) {
        for ((o, w_row), oi) in out_row.iter_mut().zip(w.chunks_exact(in_features)).zip(0..) {
            let acc = match kernel_sum {
                Some(ks) => {
                    let mut acc = ks.get(oi).copied().unwrap_or(0);
                    for (&xv, &wv) in row.iter().zip(w_row) {
                        acc = acc.wrapping_add((xv as i32) * (wv as i32));
                    }
                    acc
                }
                None => {
                    let mut acc = bias.and_then(|b| b.get(oi).copied()).unwrap_or(0);
                    for (&xv, &wv) in row.iter().zip(w_row) {
                        acc = acc.wrapping_add((xv as i32 + input_offset).wrapping_mul(wv as i32 + filter_offset));
                    }
                    acc
                }
            };
            let v = requantize(acc, mult, shift).wrapping_add(output_offset);
            *o = v.clamp(act_min, act_max) as i8;
        }
    }
    Ok(())
}
