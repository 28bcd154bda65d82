//! Resampling kernels (`upsample_nearest2d.vec`), as upstream's
//! `op_upsample_nearest2d.cpp` / `util/upsample_util.h`: the per-axis scale
//! is `(float)(1.0 / scale_factor)`, or `(float)(1.0 / ((double)out / in))`
//! with an explicit size, and output position `o` reads input
//! `min((int64)floorf((float)o · s), in − 1)`. A copy: any dtype, any dim
//! order (real strides).

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{op, Kernel, KernelContext, Result};

use super::walk::{bad, copy_walk, elem_size, signed_strides, Side};

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
pub const UPSAMPLE_NEAREST2D_VEC_OUT: Kernel = op!(
    "aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size, float[]? scale_factors, *, Tensor(a!) out) -> Tensor(a!)",
    upsample_nearest2d_out
);

fn upsample_nearest2d_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let scales = match (ctx.is_null(1)?, ctx.is_null(2)?) {
        (false, true) => {
            let size = ctx.int_list(1)?;
            let (_, out_shape) = ctx.tensor_info(3)?;
            if size.len() != 2
                || size.get_or(0, -1) != out_shape.size(2) as i64
                || size.get_or(1, -1) != out_shape.size(3) as i64
            {
                return Err(bad("upsample_nearest2d output_size"));
            }
            None
        }
        (true, false) => {
            if ctx.double_list_len(2)? != 2 {
                return Err(bad("upsample_nearest2d scale_factors"));
            }
            Some((ctx.double_list_item(2, 0)?, ctx.double_list_item(2, 1)?))
        }
        _ => return Err(bad("upsample_nearest2d: give output_size or scale_factors")),
    };
    let ([x], [mut out]) = ctx.io([0], [3])?;
    upsample_nearest2d(&required(x, 0)?, scales, &mut out)
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
}
