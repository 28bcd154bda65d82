//! The convolutions: `quantized_conv2d`, `quantized_depthwise_conv2d`,
//! `quantized_transpose_conv2d` (NCHW and NHWC), reading their windows and
//! quantization and calling [`crate::cortex_m`]'s `conv_s8_in` /
//! `depthwise_conv_s8_in`.

use super::*;

const QUANTIZED_CONV2D: &str = "cortex_m::quantized_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_CONV2D_NHWC: &str = "cortex_m::quantized_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_DEPTHWISE_CONV2D: &str = "cortex_m::quantized_depthwise_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_DEPTHWISE_CONV2D_NHWC: &str = "cortex_m::quantized_depthwise_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int depth_multiplier, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_TRANSPOSE_CONV2D: &str = "cortex_m::quantized_transpose_conv2d.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch, *, Tensor(a!) out) -> Tensor(a!)";
const QUANTIZED_TRANSPOSE_CONV2D_NHWC: &str = "cortex_m::quantized_transpose_conv2d_nhwc.out(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] output_padding, int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch, Tensor output_scratch, *, Tensor(a!) out) -> Tensor(a!)";
// One reader per pair of layouts: the same arguments in both schemas.
const _: () = assert!(same_arguments(QUANTIZED_CONV2D, QUANTIZED_CONV2D_NHWC));
const _: () = assert!(same_arguments(
    QUANTIZED_DEPTHWISE_CONV2D,
    QUANTIZED_DEPTHWISE_CONV2D_NHWC
));
const _: () = assert!(same_arguments(
    QUANTIZED_TRANSPOSE_CONV2D,
    QUANTIZED_TRANSPOSE_CONV2D_NHWC
));

/// Where a convolution's arguments are, by name from its schema (computed
/// at compile time: a name the schema lacks fails the build).
#[derive(Clone, Copy)]
struct ConvArgPos {
    /// `input`, `weight`, `bias`, `requantize_multipliers`,
    /// `requantize_shifts`.
    ins: [usize; 5],
    out: usize,
    stride: usize,
    padding: usize,
    dilation: usize,
    /// Depthwise only.
    depth_multiplier: usize,
    input_offset: usize,
    output_offset: usize,
    activation_min: usize,
    activation_max: usize,
}

impl ConvArgPos {
    const fn of(schema: &str, depthwise: bool) -> Self {
        use etch_runtime::signature::arg_index as at;
        ConvArgPos {
            ins: [
                at(schema, "input"),
                at(schema, "weight"),
                at(schema, "bias"),
                at(schema, "requantize_multipliers"),
                at(schema, "requantize_shifts"),
            ],
            out: at(schema, "out"),
            stride: at(schema, "stride"),
            padding: at(schema, "padding"),
            dilation: at(schema, "dilation"),
            depth_multiplier: if depthwise {
                at(schema, "depth_multiplier")
            } else {
                0
            },
            input_offset: at(schema, "input_offset"),
            output_offset: at(schema, "output_offset"),
            activation_min: at(schema, "activation_min"),
            activation_max: at(schema, "activation_max"),
        }
    }
}

const CONV_ARGS: ConvArgPos = ConvArgPos::of(QUANTIZED_CONV2D, false);
const DEPTHWISE_ARGS: ConvArgPos = ConvArgPos::of(QUANTIZED_DEPTHWISE_CONV2D, true);

// Depthwise's schema is conv's with `depth_multiplier` inserted before
// `input_offset`: each argument before it is at conv's position, each one
// after it one further. The adapter reads conv's positions plus
// `depthwise as usize` past the insertion (what the bare numbers `8 + d`
// compiled to: one add, no choice between two immediates per argument).
const _: () = {
    let (c, dw) = (CONV_ARGS, DEPTHWISE_ARGS);
    assert!(dw.ins[0] == c.ins[0] && dw.ins[1] == c.ins[1] && dw.ins[2] == c.ins[2]);
    assert!(dw.stride == c.stride && dw.padding == c.padding && dw.dilation == c.dilation);
    assert!(dw.depth_multiplier == c.input_offset);
    assert!(dw.input_offset == c.input_offset + 1 && dw.output_offset == c.output_offset + 1);
    assert!(dw.activation_min == c.activation_min + 1);
    assert!(dw.activation_max == c.activation_max + 1);
    assert!(dw.ins[3] == c.ins[3] + 1 && dw.ins[4] == c.ins[4] + 1 && dw.out == c.out + 1);
};

/// The window's tensor sizes from the views' shapes (each tensor is
/// resolved once, by `io`).
#[inline(always)]
fn conv_window(
    g: &mut Window,
    x: &etch_runtime::Shape,
    w: &etch_runtime::Shape,
    out: &etch_runtime::Shape,
    layout: Layout,
) -> Result<()> {
    if w.rank() != 4 {
        return Err(bad("conv weight is not rank 4"));
    }
    g.input = nhwc_dims(x, layout)?;
    g.output = nhwc_dims(out, layout)?;
    g.kernel = (w.size(1), w.size(2));
    Ok(())
}

/// `quantized_conv2d.out(Tensor input, Tensor weight, Tensor? bias,
/// int[] stride, int[] padding, int[] dilation, int input_offset,
/// int output_offset, Tensor requantize_multipliers, Tensor requantize_shifts,
/// int activation_min, int activation_max, Tensor scratch, *, Tensor(a!) out)`
/// → `arm_convolve_wrapper_s8`: per output pixel and channel
/// `acc = bias[oc] + Σ_{ky,kx,ic} (x + input_offset)·w[oc,ky,kx,ic]` over taps
/// inside the input, then per-channel `arm_nn_requantize`, `+ output_offset`,
/// clamp. Weights OHWI, activations NHWC.
pub const QUANTIZED_CONV2D_OUT: Kernel = op!(
    QUANTIZED_CONV2D,
    |ctx| quantized_conv2d(ctx, Layout::ChannelsLast),
    scratch = CONV_SCRATCH_BYTES,
);

/// `quantized_conv2d_nhwc.out`: same arguments, explicit NHWC activations.
pub const QUANTIZED_CONV2D_NHWC_OUT: Kernel = op!(
    QUANTIZED_CONV2D_NHWC,
    |ctx| quantized_conv2d(ctx, Layout::ExplicitNhwc),
    scratch = CONV_SCRATCH_BYTES,
);

/// `quantized_depthwise_conv2d.out(..., int[] dilation, int depth_multiplier,
/// int input_offset, ...)` → `arm_depthwise_conv_wrapper_s8`: output channel
/// `oc = ic·depth_multiplier + m` sees only input channel `ic`;
/// `acc = bias[oc] + Σ_{ky,kx} (x[ic] + input_offset)·w[0,ky,kx,oc]`, then as
/// conv. Weights `[1, KH, KW, C_out]` (IHWO).
pub const QUANTIZED_DEPTHWISE_CONV2D_OUT: Kernel = op!(
    QUANTIZED_DEPTHWISE_CONV2D,
    |ctx| quantized_depthwise_conv2d(ctx, Layout::ChannelsLast),
    scratch = DEPTHWISE_SCRATCH_BYTES,
);

/// `quantized_depthwise_conv2d_nhwc.out`: explicit NHWC activations.
pub const QUANTIZED_DEPTHWISE_CONV2D_NHWC_OUT: Kernel = op!(
    QUANTIZED_DEPTHWISE_CONV2D_NHWC,
    |ctx| quantized_depthwise_conv2d(ctx, Layout::ExplicitNhwc),
    scratch = DEPTHWISE_SCRATCH_BYTES,
);

fn quantized_conv2d(ctx: &mut KernelContext<'_, '_>, layout: Layout) -> Result<()> {
    quantized_conv(ctx, layout, false)
}

fn quantized_depthwise_conv2d(ctx: &mut KernelContext<'_, '_>, layout: Layout) -> Result<()> {
    quantized_conv(ctx, layout, true)
}

/// A convolution call's operands, read from its arguments: slices into the
/// constants and planned buffers (not the ~100-byte views they came from).
struct ConvArgs<'d> {
    g: Window,
    q: ConvQuant,
    ch_mult: usize,
    x: &'d [i8],
    w: &'d [i8],
    bias: Option<&'d [i32]>,
    mult: &'d [i32],
    shift: &'d [i32],
    out: &'d mut [i8],
    scratch: &'d mut [u64],
}

/// An int8 output view's bytes, taken out of the view for as long as the
/// call's borrow lasts (`as_i8_mut` would tie them to the view).
pub(crate) fn into_i8<'d>(out: &mut TensorViewMut<'d>) -> Result<&'d mut [i8]> {
    if out.dtype != ScalarType::CHAR {
        return Err(Error::new(
            ErrorCode::InvalidType,
            "tensor has an unexpected dtype",
            out.dtype.0 as u32,
        ));
    }
    bytemuck::try_cast_slice_mut(core::mem::take(&mut out.data)).map_err(|_| bad("int8 output"))
}

/// Reads the quantization shared by conv and depthwise conv: at conv's
/// positions plus `d` (1 for depthwise, past `depth_multiplier`).
fn conv_quant(ctx: &KernelContext<'_, '_>, d: usize) -> Result<ConvQuant> {
    let c = CONV_ARGS;
    Ok(ConvQuant {
        input_offset: i32_arg(ctx, c.input_offset + d)?,
        output_offset: i32_arg(ctx, c.output_offset + d)?,
        act_min: i32_arg(ctx, c.activation_min + d)?,
        act_max: i32_arg(ctx, c.activation_max + d)?,
    })
}

/// Reads both convolutions' arguments, inlined into their one adapter
/// ([`quantized_conv`]); the kernel call ([`run_conv`]) is out of line, so
/// the views `io` returns and the kernels' locals never share one stack
/// frame.
#[inline(always)]
fn conv_args<'c>(
    ctx: &'c mut KernelContext<'_, '_>,
    layout: Layout,
    depthwise: bool,
) -> Result<ConvArgs<'c>> {
    // Conv's positions, one further past `depth_multiplier` for depthwise
    // (checked at compile time above).
    let c = CONV_ARGS;
    let d = usize::from(depthwise);
    // Filled in place (the tensors' fields once `io` has resolved them): no
    // second copy of the scalars beside the views on the stack.
    let mut a = ConvArgs {
        g: Window {
            input: Nhwc::ZERO,
            output: Nhwc::ZERO,
            kernel: (0, 0),
            stride: pair(ctx, c.stride)?,
            padding: pair(ctx, c.padding)?,
            dilation: pair(ctx, c.dilation)?,
        },
        q: conv_quant(ctx, d)?,
        ch_mult: if depthwise {
            usize::try_from(ctx.int(DEPTHWISE_ARGS.depth_multiplier)?)
                .map_err(|_| bad("depth_multiplier"))?
        } else {
            0
        },
        x: &[],
        w: &[],
        bias: None,
        mult: &[],
        shift: &[],
        out: &mut [],
        scratch: ctx.take_scratch(),
    };
    // Views the caller owns (`io_into`): `io` returned them through a
    // `Result` that this frame copied (784 B at opt-level "z").
    // Two lets, not a tuple: the tuple was built aside and copied (140 B).
    let mut ins = [None; 5];
    let mut outs = [TensorViewMut::empty()];
    let ins_at = [c.ins[0], c.ins[1], c.ins[2], c.ins[3] + d, c.ins[4] + d];
    ctx.io_into(ins_at, [c.out + d], &mut ins, &mut outs)?;
    let ([x, w, bias, mult, shift], [out]) = (&ins, &mut outs);
    let (Some(x), Some(w), Some(mult), Some(shift)) = (x, w, mult, shift) else {
        return Err(bad("required tensor argument is None"));
    };
    conv_window(&mut a.g, &x.shape, &w.shape, &out.shape, layout)?;
    let g = &a.g;
    // OHWI for conv, IHWO for depthwise.
    let weights_fit = if depthwise {
        w.shape.size(3) == g.output.c
    } else {
        w.shape.size(0) == g.output.c && w.shape.size(3) == g.input.c
    };
    if !weights_fit {
        return Err(bad("conv weight shape"));
    }
    a.x = x.as_i8()?;
    a.w = w.as_i8()?;
    a.bias = bias.map(|b| b.as_i32()).transpose()?;
    a.mult = mult.as_i32()?;
    a.shift = shift.as_i32()?;
    a.out = into_i8(out)?;
    Ok(a)
}

/// Both convolutions' adapter (one copy in flash): the depthwise schema has
/// `depth_multiplier` at 6, so its later arguments sit one further on.
#[inline(never)]
fn quantized_conv(ctx: &mut KernelContext<'_, '_>, layout: Layout, depthwise: bool) -> Result<()> {
    run_conv(&mut conv_args(ctx, layout, depthwise)?, depthwise)
}

#[inline(never)]
fn run_conv(a: &mut ConvArgs<'_>, depthwise: bool) -> Result<()> {
    Ok(if depthwise {
        depthwise_conv_s8_in(
            &a.g,
            &a.q,
            a.ch_mult,
            a.x,
            a.w,
            a.bias,
            a.mult,
            a.shift,
            a.out,
            &mut *a.scratch,
        )
    } else {
        conv_s8_in(
            &a.g,
            &a.q,
            a.x,
            a.w,
            a.bias,
            a.mult,
            a.shift,
            a.out,
            &mut *a.scratch,
        )
    }?)
}

/// `quantized_transpose_conv2d.out(Tensor input, Tensor weight, Tensor? bias,
/// int[] stride, int[] padding, int[] output_padding, int[] dilation,
/// int input_offset, int output_offset, Tensor requantize_multipliers,
/// Tensor requantize_shifts, int activation_min, int activation_max,
/// Tensor scratch, Tensor scratch2, *, Tensor(a!) out)` →
/// `arm_transpose_conv_s8`: every input pixel scatters
/// `(x + input_offset)·w[oc,ky,kx,ic]` to output `(iy·s - p + ky·d, ...)`,
/// starting from the bias; then per-channel requantize as conv. Weights
/// `[C_out, KH, KW, C_in]`. Computed here by gathering per output element
/// (same integer sums, no scratch).
pub const QUANTIZED_TRANSPOSE_CONV2D_OUT: Kernel =
    op!(
        QUANTIZED_TRANSPOSE_CONV2D,
        |ctx| quantized_transpose_conv2d(ctx, Layout::ChannelsLast)
    );

/// `quantized_transpose_conv2d_nhwc.out`: explicit NHWC activations.
pub const QUANTIZED_TRANSPOSE_CONV2D_NHWC_OUT: Kernel =
    op!(QUANTIZED_TRANSPOSE_CONV2D_NHWC, |ctx| {
        quantized_transpose_conv2d(ctx, Layout::ExplicitNhwc)
    });

// Kept out of line: one symbol per kernel, for size and profile attribution.
#[inline(never)]
fn quantized_transpose_conv2d(ctx: &mut KernelContext<'_, '_>, layout: Layout) -> Result<()> {
    const S: &str = QUANTIZED_TRANSPOSE_CONV2D;
    let (sh, sw) = pair(ctx, arg!(S, stride))?;
    let (ph, pw) = pair(ctx, arg!(S, padding))?;
    let (dh, dw) = pair(ctx, arg!(S, dilation))?;
    let (in_off, out_off) = (
        i32_arg(ctx, arg!(S, input_offset))?,
        i32_arg(ctx, arg!(S, output_offset))?,
    );
    let (act_min, act_max) = (
        i32_arg(ctx, arg!(S, activation_min))?,
        i32_arg(ctx, arg!(S, activation_max))?,
    );
    let ([x, w, bias, mult, shift], [mut out]) = ctx.io(
        arg!(
            S,
            [
                input,
                weight,
                bias,
                requantize_multipliers,
                requantize_shifts
            ]
        ),
        arg!(S, [out]),
    )?;
    let (x, w, mult, shift) = (
        required(x, arg!(S, input))?,
        required(w, arg!(S, weight))?,
        required(mult, arg!(S, requantize_multipliers))?,
        required(shift, arg!(S, requantize_shifts))?,
    );
    let (n, ih, iw, ic) = nhwc_in(&x.shape, layout)?;
    let (on, oh, ow, oc) = nhwc_in(&out.shape, layout)?;
    let (kh, kw) = (w.shape.size(1), w.shape.size(2));
    if w.shape.rank() != 4
        || w.shape.size(0) != oc
        || w.shape.size(3) != ic
        || on != n
        || sh == 0
        || sw == 0
    {
        return Err(bad("transpose conv shapes"));
    }
    let (x, w, mult, shift) = (x.as_i8()?, w.as_i8()?, mult.as_i32()?, shift.as_i32()?);
    let bias = bias.map(|b| b.as_i32()).transpose()?;
    let out = out.as_i8_mut()?;
    // An empty output is no work (its other sizes may be huge); a non-empty
    // one needs a non-empty input and weight, whose lengths bound the loops.
    if out.is_empty() {
        return Ok(());
    }
    if x.is_empty() || w.is_empty() {
        return Err(bad("transpose conv of an empty input or weight"));
    }
    // Input row feeding output row `o` through tap `k`, if any.
    let source = |o: usize, k: usize, s: usize, p: usize, d: usize, size: usize| -> Option<usize> {
        let num = o.checked_add(p)?.checked_sub(k.checked_mul(d)?)?;
        (num % s == 0 && num / s < size).then_some(num / s)
    };
    let mut dst = out.iter_mut();
    for b in 0..n {
        for oy in 0..oh {
            for ox in 0..ow {
                for c in 0..oc {
                    let mut acc = bias.and_then(|bv| bv.get(c).copied()).unwrap_or(0);
                    for ky in 0..kh {
                        let Some(iy) = source(oy, ky, sh, ph, dh, ih) else {
                            continue;
                        };
                        for kx in 0..kw {
                            let Some(ix) = source(ox, kx, sw, pw, dw, iw) else {
                                continue;
                            };
                            let xi = ((b * ih + iy) * iw + ix) * ic;
                            let wi = ((c * kh + ky) * kw + kx) * ic;
                            let (Some(xs), Some(ws)) = (x.get(xi..xi + ic), w.get(wi..wi + ic))
                            else {
                                return Err(bad("transpose conv index"));
                            };
                            for (&xv, &wv) in xs.iter().zip(ws) {
                                acc = acc.wrapping_add(
                                    (xv as i32).wrapping_add(in_off).wrapping_mul(wv as i32),
                                );
                            }
                        }
                    }
                    let (Some(&m), Some(&s), Some(o)) = (mult.get(c), shift.get(c), dst.next())
                    else {
                        return Err(bad("transpose conv index"));
                    };
                    let v = requantize(acc, m, s).wrapping_add(out_off);
                    *o = v.max(act_min).min(act_max) as i8;
                }
            }
        }
    }
    Ok(())
}
