//! Convolution family: `aten::convolution.out` (portable `op_convolution.cpp`
//! with the checks of `kernel_ops_util.cpp`'s `check_convolution_args`).
//!
//! One kernel covers 1-D (3-D tensors) and 2-D convolution, plain and
//! transposed, grouped (depthwise is `groups == in_channels`), strided,
//! padded and dilated, for contiguous and channels-last tensors. Like
//! upstream, a 1-D convolution is run as a 2-D one with `H = 1` (stride 1,
//! padding 0, dilation 1 along H), and every tensor is indexed through the
//! strides of its dim order, so one loop nest serves every layout.
//!
//! Arithmetic (bit-exact with portable `op_convolution.cpp`):
//! - plain: per output element `acc = 0`, then `acc += in·w` over the
//!   group's input channels, kernel rows, kernel columns (in-bounds taps only,
//!   never an added zero), then `acc += bias`, in the element type;
//! - transposed: the output starts as the bias (or zero), then for each batch,
//!   output channel, input row, input column, input channel of the group and
//!   in-range tap, `out += in·w`; every output element so accumulates in
//!   (input row, input column, input channel) order, in the element type.

// Generic helpers that only unselected element types (`dtype-*` features)
// reach are unused in such builds.
#![cfg_attr(not(feature = "all-dtypes"), allow(dead_code))]

use etch_runtime::context::required;
#[allow(unused_imports)] // used only under dtype features
use etch_runtime::ScalarType;
use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, Shape, TensorView, TensorViewMut,
};

use super::dtype::{Elem as Load, Src};
use crate::math::tap_range;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `conv-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-convolution-out")]
    CONVOLUTION_OUT,
];

use crate::ops::bad;

/// `convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[]
/// stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[]
/// output_padding, SymInt groups, *, Tensor(a!) out)`.
pub const CONVOLUTION_OUT: Kernel = op!(CONVOLUTION, convolution_out);

const CONVOLUTION: &str = "aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, *, Tensor(a!) out) -> Tensor(a!)";

/// The checked geometry of one convolution, lifted to 2-D (`[N, C, H, W]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    n: usize,
    groups: usize,
    in_c: usize,
    in_h: usize,
    in_w: usize,
    out_c: usize,
    out_h: usize,
    out_w: usize,
    k_h: usize,
    k_w: usize,
    /// `(y, x)` stride, padding and dilation.
    stride: [i64; 2],
    pad: [i64; 2],
    dil: [i64; 2],
    transposed: bool,
    /// Element strides of input, weight and output in `[N, C, H, W]` order.
    xs: [usize; 4],
    ws: [usize; 4],
    os: [usize; 4],
}

/// Sizes and strides of a rank-3 or rank-4 shape as `[N, C, H, W]` (a rank-3
/// `[N, C, W]` gets `H = 1`, as upstream's `get_unsqueezed_sizes`).
fn lift(shape: &Shape) -> ([usize; 4], [usize; 4]) {
    let (s, st) = (shape.sizes(), shape.strides());
    let size = |d: usize| s.get(d).map_or(1, |v| v as usize);
    let stride = |d: usize| st.get(d).copied().unwrap_or(0);
    if shape.rank() == 3 {
        (
            [size(0), size(1), 1, size(2)],
            [stride(0), stride(1), 0, stride(2)],
        )
    } else {
        (
            [size(0), size(1), size(2), size(3)],
            [stride(0), stride(1), stride(2), stride(3)],
        )
    }
}

/// One of stride/padding/dilation/output_padding as `(y, x)`: upstream wants
/// 1 to `kernel_ndim` entries, each `>= min`; one entry applies to every
/// dimension (`val_at`), and a 1-D convolution takes `h` along H.
fn pair(l: &[i64], kernel_ndim: usize, min: i64, h: i64) -> Result<[i64; 2]> {
    if l.is_empty() || l.len() > kernel_ndim || l.iter().any(|&v| v < min) {
        return Err(bad("convolution stride, padding or dilation"));
    }
    let first = l.first().copied().unwrap_or(min);
    let last = l.last().copied().unwrap_or(first);
    Ok(if kernel_ndim == 1 {
        [h, first]
    } else {
        [first, last]
    })
}

/// Upstream's `get_convolution_out_target_size` for one spatial dimension
/// (C++ integer division truncates toward zero, as Rust's does); `None` when
/// the arithmetic overflows or the size is not positive.
fn out_size(
    input: usize,
    k: usize,
    stride: i64,
    pad: i64,
    dil: i64,
    out_pad: i64,
    transposed: bool,
) -> Option<usize> {
    let (input, k) = (i64::try_from(input).ok()?, i64::try_from(k).ok()?);
    let span = dil.checked_mul(k.checked_sub(1)?)?;
    let size = if transposed {
        (input.checked_sub(1)?)
            .checked_mul(stride)?
            .checked_sub(pad.checked_mul(2)?)?
            .checked_add(span)?
            .checked_add(out_pad)?
            .checked_add(1)?
    } else {
        input
            .checked_add(pad.checked_mul(2)?)?
            .checked_sub(span)?
            .checked_sub(1)?
            .checked_div(stride)?
            .checked_add(1)?
    };
    usize::try_from(size).ok().filter(|&s| s > 0)
}

/// Whether `shape` is contiguous, or channels-last (rank 4 only), as
/// upstream's `tensor_is_default_or_channels_last_dim_order`.
fn default_or_channels_last(shape: &Shape) -> bool {
    shape.is_contiguous() || shape.is_channels_last()
}

/// Checks the arguments as upstream's `check_convolution_args`,
/// `tensors_have_same_dim_order(in, out)` and the output-size resize do
/// (a mismatch is InvalidArgument) and derives the loop geometry.
#[allow(clippy::too_many_arguments)]
fn geometry(
    x: &TensorView<'_>,
    w: &TensorView<'_>,
    bias: Option<&TensorView<'_>>,
    out: &Shape,
    params: [&[i64]; 4],
    transposed: bool,
    groups: i64,
) -> Result<Geometry> {
    let [stride, padding, dilation, output_padding] = params;
    let rank = x.shape.rank();
    if rank != 3 && rank != 4 {
        return Err(Error::new(
            ErrorCode::InvalidArgument,
            "convolution input must be 3-D or 4-D",
            rank as u32,
        ));
    }
    if w.shape.rank() != rank || out.rank() != rank {
        return Err(bad("convolution ranks differ"));
    }
    // Transposed weights may have any dim order (their strides are used).
    // Input and output must share a layout (upstream's
    // `tensors_have_same_dim_order`), judged by the strides the orders
    // produce, not by the order lists: an input [1, 1, 32, 32] with dim
    // order [0, 2, 1, 3] is both contiguous and channels-last, and goes
    // with a channels-last output (upstream compares the lists and refuses).
    let same_layout = (x.shape.is_contiguous() && out.is_contiguous())
        || (x.shape.is_channels_last() && out.is_channels_last());
    if !default_or_channels_last(&x.shape)
        || !default_or_channels_last(out)
        || !(transposed || default_or_channels_last(&w.shape))
        || !same_layout
    {
        return Err(bad("convolution dim orders"));
    }
    let kernel_ndim = rank - 2;
    let stride = pair(stride, kernel_ndim, 1, 1)?;
    let pad = pair(padding, kernel_ndim, 0, 0)?;
    let dil = pair(dilation, kernel_ndim, 1, 1)?;
    let out_pad = if transposed {
        let p = pair(output_padding, kernel_ndim, 0, 0)?;
        for i in 0..2 {
            let (o, s, d) = (p[i], stride[i], dil[i]);
            if o >= s && o >= d {
                return Err(bad("convolution output_padding"));
            }
        }
        p
    } else {
        [0, 0]
    };
    let (xsz, xs) = lift(&x.shape);
    let (wsz, ws) = lift(&w.shape);
    let (osz, os) = lift(out);
    let [n, in_c, in_h, in_w] = xsz;
    let [w0, w1, k_h, k_w] = wsz;
    let groups = usize::try_from(groups)
        .ok()
        .filter(|&g| w0.checked_rem(g) == Some(0))
        .ok_or(bad("convolution groups"))?;
    let out_c = if transposed {
        if in_c != w0 {
            return Err(bad("convolution input channels"));
        }
        w1.checked_mul(groups).ok_or(bad("convolution channels"))?
    } else {
        if Some(in_c) != groups.checked_mul(w1) {
            return Err(bad("convolution input channels"));
        }
        w0
    };
    if in_c.checked_rem(groups) != Some(0) || out_c.checked_rem(groups) != Some(0) {
        return Err(bad("convolution groups"));
    }
    let size = |i: usize, k: usize, a: usize| {
        out_size(i, k, stride[a], pad[a], dil[a], out_pad[a], transposed)
            .ok_or(bad("convolution output size"))
    };
    let (out_h, out_w) = (size(in_h, k_h, 0)?, size(in_w, k_w, 1)?);
    if osz != [n, out_c, out_h, out_w] {
        return Err(bad("convolution output shape"));
    }
    if let Some(b) = bias {
        if b.shape.rank() != 1 || b.shape.size(0) != out_c {
            return Err(bad("convolution bias shape"));
        }
        // Any REALHBF16 dtype, loaded into the compute type
        // (`get_load_to_common_fn`); Bool is not among them.
        if b.dtype == ScalarType::BOOL {
            return Err(Error::new(
                ErrorCode::InvalidType,
                "convolution bias dtype",
                b.dtype.0 as u32,
            ));
        }
    }
    if x.dtype != w.dtype {
        return Err(bad("convolution dtypes differ"));
    }
    Ok(Geometry {
        n,
        groups,
        in_c,
        in_h,
        in_w,
        out_c,
        out_h,
        out_w,
        k_h,
        k_w,
        stride,
        pad,
        dil,
        transposed,
        xs,
        ws,
        os,
    })
}

fn convolution_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = CONVOLUTION;
    let transposed = ctx.bool(arg!(S, transposed))?;
    let groups = ctx.int(arg!(S, groups))?;
    let (stride, padding) = (
        ctx.int_list(arg!(S, stride))?,
        ctx.int_list(arg!(S, padding))?,
    );
    let dilation = ctx.int_list(arg!(S, dilation))?;
    let output_padding = ctx.int_list(arg!(S, output_padding))?;
    let params = [
        stride.as_slice(),
        padding.as_slice(),
        dilation.as_slice(),
        output_padding.as_slice(),
    ];
    if ctx.has_dynamic_shapes() {
        let sizes = out_sizes(ctx, params, transposed, groups)?;
        super::dynamic::resize(ctx, arg!(S, out), &sizes)?;
    }
    let ([x, w, bias], [mut out]) = ctx.io(arg!(S, [input, weight, bias]), arg!(S, [out]))?;
    let (x, w) = (required(x, arg!(S, input))?, required(w, arg!(S, weight))?);
    convolution(&x, &w, bias.as_ref(), &mut out, params, transposed, groups)
}

/// The output sizes upstream's `get_convolution_out_target_size` gives for
/// the input's and weight's current sizes (`geometry` checks the rest).
fn out_sizes(
    ctx: &KernelContext<'_, '_>,
    params: [&[i64]; 4],
    transposed: bool,
    groups: i64,
) -> Result<super::dynamic::Sizes> {
    let (_, xs) = ctx.tensor_info(arg!(CONVOLUTION, input))?;
    let (_, ws) = ctx.tensor_info(arg!(CONVOLUTION, weight))?;
    let rank = xs.rank();
    if (rank != 3 && rank != 4) || ws.rank() != rank {
        return Err(bad("convolution ranks differ"));
    }
    let kernel_ndim = rank - 2;
    let [stride, padding, dilation, output_padding] = params;
    let stride = pair(stride, kernel_ndim, 1, 1)?;
    let pad = pair(padding, kernel_ndim, 0, 0)?;
    let dil = pair(dilation, kernel_ndim, 1, 1)?;
    let out_pad = if transposed {
        pair(output_padding, kernel_ndim, 0, 0)?
    } else {
        [0, 0]
    };
    let ([n, _, in_h, in_w], _) = lift(&xs);
    let ([w0, w1, k_h, k_w], _) = lift(&ws);
    let out_c = if transposed {
        usize::try_from(groups)
            .ok()
            .and_then(|g| w1.checked_mul(g))
            .ok_or(bad("convolution groups"))?
    } else {
        w0
    };
    let size = |i: usize, k: usize, a: usize| {
        out_size(i, k, stride[a], pad[a], dil[a], out_pad[a], transposed)
            .ok_or(bad("convolution output size"))
    };
    let mut s = super::dynamic::Sizes::new();
    s.push(n as i64)?;
    s.push(out_c as i64)?;
    if rank == 4 {
        s.push(size(in_h, k_h, 0)? as i64)?;
    }
    s.push(size(in_w, k_w, 1)? as i64)?;
    Ok(s)
}

/// The kernel on its tensors and arguments (`params`: stride, padding,
/// dilation, output_padding).
fn convolution(
    x: &TensorView<'_>,
    w: &TensorView<'_>,
    bias: Option<&TensorView<'_>>,
    out: &mut TensorViewMut<'_>,
    params: [&[i64]; 4],
    transposed: bool,
    groups: i64,
) -> Result<()> {
    #[allow(unused_variables)] // unused when no dtype is selected
    let g = geometry(x, w, bias, &out.shape, params, transposed, groups)?;
    if x.dtype != out.dtype {
        return Err(bad("convolution dtypes differ"));
    }
    if out.numel() == 0 {
        return Ok(());
    }
    #[allow(unused_macros)] // unused when no dtype is selected
    macro_rules! run {
        ($get:ident, $get_mut:ident) => {{
            let bias = match bias {
                Some(b) => Some(Src::new(b)?),
                None => None,
            };
            convolve(&g, x.$get()?, w.$get()?, bias, out.$get_mut()?)
        }};
    }
    match x.dtype {
        #[cfg(feature = "dtype-f32")]
        ScalarType::FLOAT => run!(as_f32, as_f32_mut),
        #[cfg(feature = "dtype-i8")]
        ScalarType::CHAR => run!(as_i8, as_i8_mut),
        #[cfg(feature = "dtype-u8")]
        ScalarType::BYTE => run!(as_u8, as_u8_mut),
        #[cfg(feature = "dtype-i16")]
        ScalarType::SHORT => run!(as_i16, as_i16_mut),
        #[cfg(feature = "dtype-i32")]
        ScalarType::INT => run!(as_i32, as_i32_mut),
        #[cfg(feature = "dtype-i64")]
        ScalarType::LONG => run!(as_i64, as_i64_mut),
        // Element types not selected by `dtype-*` features land here too.
        _ => Err(Error::new(
            ErrorCode::InvalidType,
            "convolution dtype",
            x.dtype.0 as u32,
        )),
    }
}

/// An element type convolution accumulates in (upstream's `CTYPE`): floats
/// round after every multiply and add, integers wrap.
trait Elem: Copy + Default {
    /// `acc + a·b`, the product rounded first (no fused multiply-add).
    fn mac(acc: Self, a: Self, b: Self) -> Self;
    fn add(a: Self, b: Self) -> Self;
}

impl Elem for f32 {
    #[inline(always)]
    fn mac(acc: f32, a: f32, b: f32) -> f32 {
        acc + a * b
    }
    #[inline(always)]
    fn add(a: f32, b: f32) -> f32 {
        a + b
    }
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            #[inline(always)]
            fn mac(acc: $t, a: $t, b: $t) -> $t {
                acc.wrapping_add(a.wrapping_mul(b))
            }
            #[inline(always)]
            fn add(a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
        }
    )*};
}
int_elem!(i8, u8, i16, i32, i64);

/// Element index of `[n, c, y, x]` under `strides`.
#[inline(always)]
fn at(s: &[usize; 4], n: usize, c: usize, y: usize, x: usize) -> usize {
    n * s[0] + c * s[1] + y * s[2] + x * s[3]
}

/// Whether `data` holds every element `sizes`/`strides` address (so no index
/// computed from in-range coordinates overflows or falls outside it).
fn covers<T>(data: &[T], sizes: [usize; 4], strides: &[usize; 4]) -> bool {
    let mut last = 0usize;
    for (&n, &s) in sizes.iter().zip(strides) {
        let Some(span) = n.checked_sub(1).map(|m| m.checked_mul(s)) else {
            return true; // an empty tensor: nothing is addressed
        };
        match span.and_then(|v| last.checked_add(v)) {
            Some(v) => last = v,
            None => return false,
        }
    }
    last < data.len()
}

fn convolve<T: Elem + Load>(
    g: &Geometry,
    x: &[T],
    w: &[T],
    bias: Option<Src<'_>>,
    out: &mut [T],
) -> Result<()> {
    // Bias element `oc` cast to the compute type (`static_cast`: integers
    // narrow by wrapping, floats truncate toward zero).
    let bias_at = |oc: usize| match bias {
        Some(b) => b
            .get(oc)
            .map(|v| Some(T::from_num(v)))
            .ok_or(bad("convolution bias index")),
        None => Ok(None),
    };
    // `groups` divides both channel counts (checked by `geometry`).
    let in_pg = g.in_c.checked_div(g.groups).unwrap_or(0);
    let out_pg = g.out_c.checked_div(g.groups).unwrap_or(0).max(1);
    let w_sizes = if g.transposed {
        [g.in_c, out_pg, g.k_h, g.k_w]
    } else {
        [g.out_c, in_pg, g.k_h, g.k_w]
    };
    if !covers(x, [g.n, g.in_c, g.in_h, g.in_w], &g.xs)
        || !covers(w, w_sizes, &g.ws)
        || !covers(out, [g.n, g.out_c, g.out_h, g.out_w], &g.os)
    {
        return Err(bad("convolution tensor data sizes"));
    }
    let [sy, sx] = g.stride;
    let [py, px] = g.pad;
    let [dy, dx] = g.dil;
    let (xs, ws, os) = (&g.xs, &g.ws, &g.os);
    let taps = |o: usize, k: usize, s: i64, d: i64, p: i64, size: usize| {
        let k = i64::try_from(k).map_err(|_| bad("convolution kernel size"))?;
        let (lo, hi) = tap_range(o, k, s, d, p, size).ok_or(bad("convolution geometry"))?;
        // `0 <= lo <= hi <= k`; when there are taps, the first one's
        // position `o·s − p + lo·d` lies in [0, size) (tap_range checked
        // `o·s − p`), so none of this overflows.
        let first = if lo < hi {
            o as i64 * s - p + lo * d
        } else {
            0
        };
        Ok::<_, Error>((lo as usize, hi as usize, first as usize, d as usize))
    };
    if !g.transposed {
        for b in 0..g.n {
            for oc in 0..g.out_c {
                let ic0 = oc.checked_div(out_pg).unwrap_or(0) * in_pg;
                let bias = bias_at(oc)?;
                for oy in 0..g.out_h {
                    let (ky0, ky1, iy0, dy) = taps(oy, g.k_h, sy, dy, py, g.in_h)?;
                    for ox in 0..g.out_w {
                        let (kx0, kx1, ix0, dx) = taps(ox, g.k_w, sx, dx, px, g.in_w)?;
                        let mut acc = T::default();
                        for icg in 0..in_pg {
                            for (j, ky) in (ky0..ky1).enumerate() {
                                let iy = iy0 + j * dy;
                                for (i, kx) in (kx0..kx1).enumerate() {
                                    let ix = ix0 + i * dx;
                                    let (Some(&v), Some(&k)) = (
                                        x.get(at(xs, b, ic0 + icg, iy, ix)),
                                        w.get(at(ws, oc, icg, ky, kx)),
                                    ) else {
                                        return Err(bad("convolution index"));
                                    };
                                    acc = T::mac(acc, v, k);
                                }
                            }
                        }
                        if let Some(bias) = bias {
                            acc = T::add(acc, bias);
                        }
                        let Some(o) = out.get_mut(at(os, b, oc, oy, ox)) else {
                            return Err(bad("convolution index"));
                        };
                        *o = acc;
                    }
                }
            }
        }
        return Ok(());
    }
    // Transposed: start from the bias (or zero), then scatter.
    for b in 0..g.n {
        for oc in 0..g.out_c {
            let init = bias_at(oc)?.unwrap_or_default();
            for oy in 0..g.out_h {
                for ox in 0..g.out_w {
                    if let Some(o) = out.get_mut(at(os, b, oc, oy, ox)) {
                        *o = init;
                    }
                }
            }
        }
    }
    for b in 0..g.n {
        for oc in 0..g.out_c {
            let (grp, ocg) = (
                oc.checked_div(out_pg).unwrap_or(0),
                oc.checked_rem(out_pg).unwrap_or(0),
            );
            let ic0 = grp * in_pg;
            for iy in 0..g.in_h {
                // Taps of input row `iy` landing inside the output.
                let (ky0, ky1, oy0, dy) = taps(iy, g.k_h, sy, dy, py, g.out_h)?;
                for ix in 0..g.in_w {
                    let (kx0, kx1, ox0, dx) = taps(ix, g.k_w, sx, dx, px, g.out_w)?;
                    for ic in ic0..ic0 + in_pg {
                        let Some(&v) = x.get(at(xs, b, ic, iy, ix)) else {
                            return Err(bad("convolution index"));
                        };
                        for (j, ky) in (ky0..ky1).enumerate() {
                            let oy = oy0 + j * dy;
                            for (i, kx) in (kx0..kx1).enumerate() {
                                let ox = ox0 + i * dx;
                                let (Some(&k), Some(o)) = (
                                    w.get(at(ws, ic, ocg, ky, kx)),
                                    out.get_mut(at(os, b, oc, oy, ox)),
                                ) else {
                                    return Err(bad("convolution index"));
                                };
                                *o = T::mac(*o, v, k);
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
