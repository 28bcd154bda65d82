//! Resampling kernels, as upstream's `op_upsample_nearest2d.cpp`,
//! `op_upsample_bilinear2d.cpp` and `util/upsample_util.h`.
//!
//! Nearest: the per-axis scale is `(float)(1.0 / scale_factor)`, or
//! `(float)(1.0 / ((double)out / in))` with an explicit size, and output
//! position `o` reads input `min((int64)floorf((float)o · s), in − 1)`. A
//! copy: any dtype, any dim order (real strides).
//!
//! Bilinear: `area_pixel_compute_scale<double>` then passed as f32, the
//! source index and lambdas of `compute_source_index_and_lambda` in f32, and
//! upstream's fixed association `top = tl·w0 + tr·w1`, `bottom = bl·w0 +
//! br·w1`, `val = top·h0 + bottom·h1` in f32 (integer dtypes load with
//! `static_cast<float>` and store truncated). Any dim order (real strides).

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, KernelContext, Result};

use super::copy::walk::{copy_walk, elem_size, signed_strides, Side};
use super::dtype::{switch_dtype, Dst, Elem, Num, Src};
use crate::ops::bad;
use etch_runtime::ScalarType;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `upsample-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-upsample_nearest2d-vec_out")]
    UPSAMPLE_NEAREST2D_VEC_OUT,
    #[cfg(feature = "op-aten-upsample_bilinear2d-vec_out")]
    UPSAMPLE_BILINEAR2D_VEC_OUT,
];

/// The f32 scale upstream uses for one axis.
fn axis_scale(scale: Option<f64>, input: usize, output: usize) -> f32 {
    match scale {
        Some(s) => (1.0 / s) as f32,
        None => (1.0 / (output as f64 / input as f64)) as f32,
    }
}

/// Input index for output index `o`: `min(floorf(o · s), in − 1)` (the
/// product is ≥ 0, so the truncating cast is floorf).
fn nearest(o: usize, s: f32, input: usize) -> usize {
    let v = (o as f32) * s;
    let i = if v.is_finite() && v > 0.0 {
        v as usize
    } else {
        0
    };
    i.min(input.saturating_sub(1))
}

/// `out` (N, C, OH, OW) = nearest samples of `x` (N, C, H, W); `scales` are
/// the (h, w) scale factors when given instead of a size.
pub fn upsample_nearest2d(
    x: &TensorView<'_>,
    scales: Option<(f64, f64)>,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    if x.shape.rank() != 4 || out.shape.rank() != 4 || x.dtype != out.dtype {
        return Err(bad("upsample_nearest2d shapes"));
    }
    let (n, c, h, w) = (
        x.shape.size(0),
        x.shape.size(1),
        x.shape.size(2),
        x.shape.size(3),
    );
    let (oh, ow) = (out.shape.size(2), out.shape.size(3));
    if out.shape.size(0) != n || out.shape.size(1) != c || (h == 0 || w == 0) && oh * ow != 0 {
        return Err(bad("upsample_nearest2d output shape"));
    }
    if let Some((sh, sw)) = scales {
        // Output size from the scales: (int64)(in · scale), truncated.
        let fits = |i: usize, s: f64, o: usize| s > 0.0 && ((i as f64 * s) as u64) == o as u64;
        if !fits(h, sh, oh) || !fits(w, sw, ow) {
            return Err(bad("upsample_nearest2d scale_factors and output shape"));
        }
    }
    let (s_h, s_w) = (
        axis_scale(scales.map(|s| s.0), h, oh),
        axis_scale(scales.map(|s| s.1), w, ow),
    );
    let (xs, os) = (signed_strides(&x.shape), signed_strides(&out.shape));
    let (xu, ou) = (x.shape.strides(), out.shape.strides());
    let at = |s: &[usize; 16], d: usize| s.get(d).copied().unwrap_or(0);
    let elem = elem_size(x.dtype)?;
    for yo in 0..oh {
        let yi = nearest(yo, s_h, h);
        for xo in 0..ow {
            let xi = nearest(xo, s_w, w);
            copy_walk(
                &[n, c],
                x.data,
                Side::new(yi * at(&xu, 2) + xi * at(&xu, 3), &xs),
                out.data,
                Side::new(yo * at(&ou, 2) + xo * at(&ou, 3), &os),
                elem,
            )?;
        }
    }
    Ok(())
}

/// `upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size,
/// float[]? scale_factors, *, Tensor(a!) out)`: exactly one of
/// `output_size` (2 sizes, equal to out's) and `scale_factors` (2 positive
/// scales) is given.
pub const UPSAMPLE_NEAREST2D_VEC_OUT: Kernel = op!(UPSAMPLE_NEAREST2D_VEC, upsample_nearest2d_out);

const UPSAMPLE_NEAREST2D_VEC: &str = "aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)";

fn upsample_nearest2d_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = UPSAMPLE_NEAREST2D_VEC;
    let scales = read_size_or_scales(ctx, arg!(S, [output_size, scale_factors, out]))?;
    let ([x], [mut out]) = ctx.io(arg!(S, [input]), arg!(S, [out]))?;
    upsample_nearest2d(&required(x, arg!(S, input))?, scales, &mut out)
}

/// How one output coordinate samples an axis: input indices `i0`, `i1` and
/// their weights `l0`, `l1` (upstream's `compute_source_index_and_lambda`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Lerp {
    i0: usize,
    i1: usize,
    l0: f32,
    l1: f32,
}

/// `area_pixel_compute_scale<double>` passed on as f32: align_corners
/// `(in − 1) / (out − 1)` (0 when out ≤ 1), otherwise `1 / scale`, where the
/// scale is the scale factor or `(double)out / in` for an explicit size.
fn bilinear_scale(scale: Option<f64>, input: usize, output: usize, align_corners: bool) -> f32 {
    if align_corners {
        if output > 1 {
            ((input - 1) as f64 / (output - 1) as f64) as f32
        } else {
            0.0
        }
    } else {
        let s = scale.unwrap_or(output as f64 / input as f64);
        (1.0 / s) as f32
    }
}

/// `compute_source_index_and_lambda` for output index `o` (f32 throughout;
/// `input` ≥ 1). `None` when the source index is NaN (a scale no checked
/// argument produces).
fn lerp(o: usize, s: f32, input: usize, output: usize, align_corners: bool) -> Option<Lerp> {
    if output == input {
        return Some(Lerp {
            i0: o,
            i1: o,
            l0: 1.0,
            l1: 0.0,
        });
    }
    // area_pixel_compute_source_index (cubic = false).
    let real = if align_corners {
        s * o as f32
    } else {
        let r = s * (o as f32 + 0.5) - 0.5;
        if r < 0.0 {
            0.0
        } else {
            r
        }
    };
    // guard_index_and_lambda: min((int64)floorf(real), in − 1); real ≥ 0.
    let fl = libm::floorf(real);
    if fl.is_nan() {
        return None;
    }
    let last = input - 1;
    let i0 = if fl < last as f32 { fl as usize } else { last };
    // std::min(std::max(d, 0.f), 1.f).
    let d = real - i0 as f32;
    let d = if d < 0.0 { 0.0 } else { d };
    let l1 = if 1.0 < d { 1.0 } else { d };
    let i1 = if i0 < last { i0 + 1 } else { i0 };
    Some(Lerp {
        i0,
        i1,
        l0: 1.0 - l1,
        l1,
    })
}

/// `out` (N, C, OH, OW) = bilinear samples of `x` (N, C, H, W), any dim
/// order, REAL dtypes (upstream's REALHBF16 without Half/BFloat16);
/// `scales` are the (h, w) scale factors when given instead of a size.
// With no dtype selected the dtype switch has no arm to reach.
#[cfg_attr(
    not(feature = "all-dtypes"),
    allow(unreachable_code, unused_variables, unused_mut)
)]
pub fn upsample_bilinear2d(
    x: &TensorView<'_>,
    align_corners: bool,
    scales: Option<(f64, f64)>,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    if x.shape.rank() != 4 || out.shape.rank() != 4 || x.dtype != out.dtype {
        return Err(bad("upsample_bilinear2d shapes"));
    }
    let (n, c, h, w) = (
        x.shape.size(0),
        x.shape.size(1),
        x.shape.size(2),
        x.shape.size(3),
    );
    let (oh, ow) = (out.shape.size(2), out.shape.size(3));
    // resize_upsample_2d: a positive output size; N and C kept.
    if out.shape.size(0) != n || out.shape.size(1) != c || oh == 0 || ow == 0 || h == 0 || w == 0 {
        return Err(bad("upsample_bilinear2d output shape"));
    }
    if let Some((sh, sw)) = scales {
        // Output size from the scales: (int32)(in · scale), truncated.
        let fits = |i: usize, s: f64, o: usize| s > 0.0 && ((i as f64 * s) as u64) == o as u64;
        if !fits(h, sh, oh) || !fits(w, sw, ow) {
            return Err(bad("upsample_bilinear2d scale_factors and output shape"));
        }
    }
    let s_h = bilinear_scale(scales.map(|s| s.0), h, oh, align_corners);
    let s_w = bilinear_scale(scales.map(|s| s.1), w, ow, align_corners);
    let (xs, os) = (x.shape.strides(), out.shape.strides());
    let st = |s: &[usize; 16]| -> [usize; 4] {
        core::array::from_fn(|d| s.get(d).copied().unwrap_or(0))
    };
    let geom = Geom {
        n,
        c,
        oh,
        ow,
        xs: st(&xs),
        os: st(&os),
        lerp_h: |o| lerp(o, s_h, h, oh, align_corners),
        lerp_w: |o| lerp(o, s_w, w, ow, align_corners),
    };
    let dtype = x.dtype;
    let src = Src::new(x)?;
    let mut dst = Dst::new(out)?;
    switch_dtype!(real, dtype, T => {
        match (T::slice(&src), T::slice_mut(&mut dst)) {
            (Some(xd), Some(od)) => bilinear_typed::<T>(xd, od, &geom),
            _ => Err(bad("upsample_bilinear2d dtype")),
        }
    })
}

/// The loop bounds, element strides (N, C, H, W) and per-axis samplers.
struct Geom<FH, FW> {
    n: usize,
    c: usize,
    oh: usize,
    ow: usize,
    xs: [usize; 4],
    os: [usize; 4],
    lerp_h: FH,
    lerp_w: FW,
}

#[cfg_attr(not(feature = "all-dtypes"), allow(dead_code))]
fn bilinear_typed<T: Elem>(
    x: &[T],
    out: &mut [T],
    g: &Geom<impl Fn(usize) -> Option<Lerp>, impl Fn(usize) -> Option<Lerp>>,
) -> Result<()> {
    let oob = || bad("upsample_bilinear2d index");
    let load = |i: usize| -> Result<f32> { Ok(x.get(i).ok_or_else(oob)?.to_num().to_f32()) };
    let [xn, xc, xh, xw] = g.xs;
    let [on, oc, ohs, ows] = g.os;
    for ni in 0..g.n {
        for ci in 0..g.c {
            let xbase = ni * xn + ci * xc;
            let obase = ni * on + ci * oc;
            for yo in 0..g.oh {
                let lh = (g.lerp_h)(yo).ok_or_else(oob)?;
                let (r0, r1) = (xbase + lh.i0 * xh, xbase + lh.i1 * xh);
                for xo in 0..g.ow {
                    let lw = (g.lerp_w)(xo).ok_or_else(oob)?;
                    let (c0, c1) = (lw.i0 * xw, lw.i1 * xw);
                    let top = load(r0 + c0)? * lw.l0 + load(r0 + c1)? * lw.l1;
                    let bottom = load(r1 + c0)? * lw.l0 + load(r1 + c1)? * lw.l1;
                    let val = top * lh.l0 + bottom * lh.l1;
                    *out.get_mut(obase + yo * ohs + xo * ows).ok_or_else(oob)? =
                        T::from_num(Num::F32(val));
                }
            }
        }
    }
    Ok(())
}

/// `upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size, bool
/// align_corners, float[]? scale_factors, *, Tensor(a!) out)`: exactly one
/// of `output_size` (2 positive sizes, equal to out's) and `scale_factors`
/// (2 positive scales) is given.
pub const UPSAMPLE_BILINEAR2D_VEC_OUT: Kernel =
    op!(UPSAMPLE_BILINEAR2D_VEC, upsample_bilinear2d_out);

const UPSAMPLE_BILINEAR2D_VEC: &str = "aten::upsample_bilinear2d.vec_out(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)";

fn upsample_bilinear2d_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = UPSAMPLE_BILINEAR2D_VEC;
    let align_corners = ctx.bool(arg!(S, align_corners))?;
    let scales = read_size_or_scales(ctx, arg!(S, [output_size, scale_factors, out]))?;
    let ([x], [mut out]) = ctx.io(arg!(S, [input]), arg!(S, [out]))?;
    upsample_bilinear2d(
        &required(x, arg!(S, input))?,
        align_corners,
        scales,
        &mut out,
    )
}

/// The `output_size` / `scale_factors` pair of the upsample schemas:
/// exactly one is given; a size must equal out's (H, W), the scales are
/// returned. `args`: the positions of `output_size`, `scale_factors` and
/// `out`.
fn read_size_or_scales(
    ctx: &KernelContext<'_, '_>,
    args: [usize; 3],
) -> Result<Option<(f64, f64)>> {
    let [size_arg, scales_arg, out_arg] = args;
    match (ctx.is_null(size_arg)?, ctx.is_null(scales_arg)?) {
        (false, true) => {
            let size = ctx.int_list(size_arg)?;
            let (_, out_shape) = ctx.tensor_info(out_arg)?;
            if size.len() != 2
                || size.get_or(0, -1) != out_shape.size(2) as i64
                || size.get_or(1, -1) != out_shape.size(3) as i64
            {
                return Err(bad("upsample output_size"));
            }
            Ok(None)
        }
        (true, false) => {
            if ctx.double_list_len(scales_arg)? != 2 {
                return Err(bad("upsample scale_factors"));
            }
            Ok(Some((
                ctx.double_list_item(scales_arg, 0)?,
                ctx.double_list_item(scales_arg, 1)?,
            )))
        }
        _ => Err(bad("upsample: give output_size or scale_factors")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use etch_runtime::{ErrorCode, ScalarType, Shape};

    #[test]
    fn nearest_indices_and_checks() {
        // 1/3 scale of 3 → 1 ... (float)(1/(5/3)) = 0.6: 0,0,1,1,2.
        let s = axis_scale(None, 3, 5);
        let idx: [usize; 5] = core::array::from_fn(|o| nearest(o, s, 3));
        assert_eq!(idx, [0, 0, 1, 1, 2]);
        let data = [1u8, 2, 3, 4];
        let x = TensorView {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[1, 1, 2, 2]).unwrap(),
            data: &data,
        };
        let mut buf = [0u8; 16];
        let mut out = TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[1, 1, 4, 4]).unwrap(),
            data: &mut buf,
        };
        upsample_nearest2d(&x, Some((2.0, 2.0)), &mut out).unwrap();
        assert_eq!(buf, [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4]);
        let mut out = TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[1, 1, 4, 4]).unwrap(),
            data: &mut buf,
        };
        // Scales that do not give the output size; a negative scale.
        let e = upsample_nearest2d(&x, Some((3.0, 2.0)), &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        let e = upsample_nearest2d(&x, Some((-2.0, 2.0)), &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    fn bilinear_case(
        dtype: ScalarType,
        data: &[u8],
        align: bool,
        scales: Option<(f64, f64)>,
        buf: &mut [u8],
    ) -> Result<()> {
        let x = TensorView {
            dtype,
            shape: Shape::contiguous(&[1, 1, 2, 2]).unwrap(),
            data,
        };
        let mut out = TensorViewMut {
            dtype,
            shape: Shape::contiguous(&[1, 1, 4, 4]).unwrap(),
            data: buf,
        };
        upsample_bilinear2d(&x, align, scales, &mut out)
    }

    #[test]
    fn bilinear_indices_weights_and_values() {
        // Half-pixel centres, scale 2: s = 0.5; o = 3 clamps to the last
        // input with its weight kept (upstream: l1 = 0.25 on i0 = i1 = 1).
        let s = bilinear_scale(Some(2.0), 2, 4, false);
        let l: [Lerp; 4] = core::array::from_fn(|o| lerp(o, s, 2, 4, false).unwrap());
        assert_eq!((l[0].i0, l[0].i1, l[0].l1), (0, 1, 0.0));
        assert_eq!((l[1].i0, l[1].i1, l[1].l1), (0, 1, 0.25));
        assert_eq!((l[3].i0, l[3].i1, l[3].l0, l[3].l1), (1, 1, 0.75, 0.25));
        // align_corners: (in − 1)/(out − 1) = 1/3; out == in copies.
        assert_eq!(bilinear_scale(None, 2, 4, true), (1.0f64 / 3.0) as f32);
        assert_eq!(bilinear_scale(None, 2, 1, true), 0.0);
        assert_eq!(
            lerp(1, 0.5, 3, 3, false),
            Some(Lerp {
                i0: 1,
                i1: 1,
                l0: 1.0,
                l1: 0.0
            })
        );

        let xs = [1.0f32, 2.0, 3.0, 4.0];
        let data: [u8; 16] = bytemuck_f32(&xs);
        let mut buf = [0u8; 64];
        bilinear_case(ScalarType::FLOAT, &data, false, Some((2.0, 2.0)), &mut buf).unwrap();
        let got: [f32; 16] =
            core::array::from_fn(|i| f32::from_le_bytes(buf[4 * i..4 * i + 4].try_into().unwrap()));
        assert_eq!(
            got,
            [
                1.0, 1.25, 1.75, 2.0, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25, 3.5, 3.0, 3.25, 3.75,
                4.0
            ]
        );
        // Integers load as float and truncate on store.
        let mut b8 = [0u8; 16];
        bilinear_case(ScalarType::BYTE, &[0, 3, 6, 9], true, None, &mut b8).unwrap();
        assert_eq!(b8, [0, 1, 2, 3, 2, 3, 4, 5, 4, 5, 6, 7, 6, 7, 8, 9]);
    }

    #[test]
    fn bilinear_bad_arguments() {
        let mut buf = [0u8; 16];
        let data = [0u8; 4];
        for (dtype, scales) in [
            (ScalarType::BYTE, Some((3.0, 2.0))),
            (ScalarType::BYTE, Some((-2.0, 2.0))),
            (ScalarType::BOOL, None),
        ] {
            let e = bilinear_case(dtype, &data, false, scales, &mut buf).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArgument);
        }
        // Output N/C differ from the input's.
        let x = TensorView {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[1, 2, 2, 2]).unwrap(),
            data: &[0u8; 8],
        };
        let mut out = TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[1, 1, 4, 4]).unwrap(),
            data: &mut buf,
        };
        let e = upsample_bilinear2d(&x, false, None, &mut out).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    fn bytemuck_f32(xs: &[f32; 4]) -> [u8; 16] {
        let mut b = [0u8; 16];
        for (c, x) in b.chunks_exact_mut(4).zip(xs) {
            c.copy_from_slice(&x.to_le_bytes());
        }
        b
    }
}
