//! Pooling (f32): `avg_pool2d`, `max_pool2d_with_indices`,
//! `_adaptive_avg_pool2d`, each following the arithmetic order of
//! ExecuTorch's `kernels/portable/cpu/op_*.cpp`.

use super::bad;
use crate::ops::reduce::bad_dtype;
use etch_runtime::context::required;
#[allow(unused_imports)] // used only under dtype features
use etch_runtime::ScalarType;
use etch_runtime::{arg, op, Error, ErrorCode, Kernel, KernelContext, Result};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `pool-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-max_pool2d_with_indices-out")]
    MAX_POOL2D_WITH_INDICES_OUT,
    #[cfg(feature = "op-aten-avg_pool2d-out")]
    AVG_POOL2D_OUT,
    #[cfg(feature = "op-aten-_adaptive_avg_pool2d-out")]
    ADAPTIVE_AVG_POOL2D_OUT,
];

/// ExecuTorch's `val_at`: a one-element list applies to every dimension, an
/// empty one gives `default`.
fn val_at(list: &etch_runtime::context::IntList, i: usize, default: i64) -> i64 {
    match list.as_slice() {
        [] => default,
        [v] => *v,
        l => l.get(i).copied().unwrap_or(default),
    }
}

/// Element index of NCHW coordinate `(n, c, y, x)` under `strides`.
#[inline]
fn at4(strides: &[usize], n: usize, c: usize, y: usize, x: usize) -> usize {
    let s = |d: usize| strides.get(d).copied().unwrap_or(0);
    n * s(0) + c * s(1) + y * s(2) + x * s(3)
}

/// `avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[],
/// int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True,
/// int? divisor_override=None, *, Tensor(a!) out)`, f32, contiguous.
/// Portable `kernel_reduction_then_map_2d`: the first in-bounds value starts
/// the sum, later ones are added in row-major window order; then
/// `sum / count` (count includes the padding clipped to `in + pad` when
/// `count_include_pad`) or `sum / divisor_override`.
pub const AVG_POOL2D_OUT: Kernel = op!(AVG_POOL2D, avg_pool2d_out);

const AVG_POOL2D: &str = "aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)";

fn avg_pool2d_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = AVG_POOL2D;
    let [kernel, stride, padding] = arg!(S, [kernel_size, stride, padding]);
    let (kernel, stride, padding) = (
        ctx.int_list(kernel)?,
        ctx.int_list(stride)?,
        ctx.int_list(padding)?,
    );
    let include_pad = ctx.bool(arg!(S, count_include_pad))?;
    let divisor = ctx.opt_int(arg!(S, divisor_override))?;
    let (kh, kw) = (val_at(&kernel, 0, 1), val_at(&kernel, 1, 1));
    let (sh, sw) = (val_at(&stride, 0, kh), val_at(&stride, 1, kw));
    let (ph, pw) = (val_at(&padding, 0, 0), val_at(&padding, 1, 0));
    let ([x], [mut out]) = ctx.io(arg!(S, [self]), arg!(S, [out]))?;
    let x = required(x, arg!(S, self))?;
    if x.shape.rank() != 4
        || out.shape.rank() != 4
        || !x.shape.is_contiguous()
        || !out.shape.is_contiguous()
    {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "avg_pool2d needs contiguous 4-D tensors",
            0,
        ));
    }
    // Upstream's `check_avg_pool2d_args` also wants non-negative padding
    // (the clipped window below relies on it).
    if kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || ph < 0 || pw < 0 || divisor == Some(0) {
        return Err(bad("avg_pool2d parameters"));
    }
    let (n, c, ih, iw) = (
        x.shape.size(0),
        x.shape.size(1),
        x.shape.size(2),
        x.shape.size(3),
    );
    let (oh, ow) = (out.shape.size(2), out.shape.size(3));
    if out.shape.size(0) != n || out.shape.size(1) != c {
        return Err(bad("avg_pool2d output shape"));
    }
    let (xs, os) = (x.shape.strides(), out.shape.strides());
    let xd = x.as_f32()?;
    let od = out.as_f32_mut()?;
    for b in 0..n {
        for ch in 0..c {
            for oy in 0..oh {
                for ox in 0..ow {
                    // Checked: the parameters come from the file.
                    let window = |o: usize, s: i64, p: i64, k: i64, size: usize| {
                        let lo = (o as i64).checked_mul(s)?.checked_sub(p)?;
                        Some((lo, lo.checked_add(k)?.min((size as i64).checked_add(p)?)))
                    };
                    let (Some((ih0, ih1)), Some((iw0, iw1))) =
                        (window(oy, sh, ph, kh, ih), window(ox, sw, pw, kw, iw))
                    else {
                        return Err(bad("avg_pool2d window"));
                    };
                    let pool_size = (ih1 - ih0).saturating_mul(iw1 - iw0);
                    let (ih0c, iw0c) = (ih0.max(0), iw0.max(0));
                    let (ih1c, iw1c) = (ih1.min(ih as i64), iw1.min(iw as i64));
                    if ih0c >= ih1c || iw0c >= iw1c {
                        continue; // upstream leaves such outputs unwritten
                    }
                    let count = if include_pad {
                        pool_size
                    } else {
                        (ih1c - ih0c) * (iw1c - iw0c)
                    };
                    let mut accum: Option<f32> = None;
                    // The in-bounds taps, row-major: exactly the ones the
                    // upstream loop over the whole kernel does not skip.
                    for y in ih0c as usize..ih1c as usize {
                        for xx in iw0c as usize..iw1c as usize {
                            let v = xd.get(at4(&xs, b, ch, y, xx)).copied().unwrap_or(0.0);
                            accum = Some(match accum {
                                None => v,
                                Some(a) => v + a,
                            });
                        }
                    }
                    let sum = accum.unwrap_or(0.0);
                    let Some(o) = od.get_mut(at4(&os, b, ch, oy, ox)) else {
                        return Err(bad("avg_pool2d output index"));
                    };
                    *o = match divisor {
                        Some(d) => sum / d as f32,
                        None => sum / count as f32,
                    };
                }
            }
        }
    }
    Ok(())
}
/// `max_pool2d_with_indices.out(Tensor self, int[2] kernel_size,
/// int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False,
/// *, Tensor(a!) out, Tensor(b!) indices)`: the first maximum of each window
/// (NaN wins), its index `h·W + w` in the input plane.
pub const MAX_POOL2D_WITH_INDICES_OUT: Kernel =
    op!(MAX_POOL2D_WITH_INDICES, max_pool2d_with_indices_out);

const MAX_POOL2D_WITH_INDICES: &str = "aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))";

fn max_pool2d_with_indices_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = MAX_POOL2D_WITH_INDICES;
    let l = |ctx: &KernelContext<'_, '_>, i: usize, d: i64| -> Result<(i64, i64)> {
        let v = ctx.int_list(i)?;
        let s = v.as_slice();
        Ok(match s {
            [] => (d, d),
            [a] => (*a, *a),
            [a, b, ..] => (*a, *b),
        })
    };
    let (kh, kw) = l(ctx, arg!(S, kernel_size), 1)?;
    let (sh, sw) = {
        let s = l(ctx, arg!(S, stride), 0)?;
        if s == (0, 0) {
            (kh, kw)
        } else {
            s
        }
    };
    let (ph, pw) = l(ctx, arg!(S, padding), 0)?;
    let (dh, dw) = l(ctx, arg!(S, dilation), 1)?;
    // Upstream's `check_max_pool2d_with_indices_args`: positive kernel,
    // stride and dilation, non-negative padding.
    if kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || ph < 0 || pw < 0 {
        return Err(bad("max_pool2d parameters"));
    }
    let ([x], [mut out, mut idx]) = ctx.io(arg!(S, [self]), arg!(S, [out, indices]))?;
    let x = required(x, arg!(S, self))?;
    if x.shape.rank() != 4
        || !x.shape.is_contiguous()
        || !out.shape.is_contiguous()
        || !idx.shape.is_contiguous()
    {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "max_pool2d needs contiguous 4-D tensors",
            0,
        ));
    }
    let (n, c, ih, iw) = (
        x.shape.size(0),
        x.shape.size(1),
        x.shape.size(2),
        x.shape.size(3),
    );
    let (oh, ow) = (out.shape.size(2), out.shape.size(3));
    let xd = x.as_f32()?;
    let od = out.as_f32_mut()?;
    let id = idx.as_i64_mut()?;
    let mut k = 0usize;
    for b in 0..n {
        for ch in 0..c {
            let plane = (b * c + ch) * ih * iw;
            for oy in 0..oh {
                for ox in 0..ow {
                    let mut best: Option<(f32, i64)> = None;
                    // Only the in-bounds taps (the rest were skipped anyway).
                    let (Some((ky0, ky1)), Some((kx0, kx1))) = (
                        crate::math::tap_range(oy, kh, sh, dh, ph, ih),
                        crate::math::tap_range(ox, kw, sw, dw, pw, iw),
                    ) else {
                        return Err(bad("max_pool2d window"));
                    };
                    for ky in ky0..ky1 {
                        let y = oy as i64 * sh - ph + ky * dh;
                        for kx in kx0..kx1 {
                            let xx = ox as i64 * sw - pw + kx * dw;
                            let pos = y * iw as i64 + xx;
                            let v = xd.get(plane + pos as usize).copied().unwrap_or(0.0);
                            best = Some(match best {
                                None => (v, pos),
                                Some((bv, bi)) => {
                                    if v > bv || v.is_nan() {
                                        (v, pos)
                                    } else {
                                        (bv, bi)
                                    }
                                }
                            });
                        }
                    }
                    let (v, i) = best.unwrap_or((f32::NEG_INFINITY, 0));
                    if let (Some(o), Some(oi)) = (od.get_mut(k), id.get_mut(k)) {
                        *o = v;
                        *oi = i;
                    }
                    k += 1;
                }
            }
        }
    }
    Ok(())
}
/// `_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *,
/// Tensor(a!) out)`, f32, contiguous 3-D or 4-D: portable
/// `op__adaptive_avg_pool2d.cpp`. Window rows `[floor(o·in/out),
/// ceil((o+1)·in/out))` with the quotient in f32, likewise columns;
/// `sum = 0.f; sum += x` row-major over the window, then
/// `sum / (float)count`.
pub const ADAPTIVE_AVG_POOL2D_OUT: Kernel = op!(
    "aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let size = ctx.int_list(arg!(SCHEMA, output_size))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let rank = x.shape.rank();
        let [oh, ow] = *size.as_slice() else {
            return Err(bad("adaptive_avg_pool2d output_size"));
        };
        if !(rank == 3 || rank == 4) || oh <= 0 || ow <= 0 || x.dtype != out.dtype {
            return Err(bad("adaptive_avg_pool2d arguments"));
        }
        let (ih, iw) = (x.shape.size(-2), x.shape.size(-1));
        if ih == 0 || iw == 0 {
            return Err(bad("adaptive_avg_pool2d empty plane"));
        }
        let (oh, ow) = (oh as usize, ow as usize);
        let planes = x.numel().checked_div(ih * iw).unwrap_or(0);
        let sizes_ok = out.shape.rank() == rank
            && out.shape.sizes().slice(0..rank - 2) == x.shape.sizes().slice(0..rank - 2)
            && out.shape.size(-2) == oh
            && out.shape.size(-1) == ow;
        if !sizes_ok {
            return Err(bad("adaptive_avg_pool2d output shape"));
        }
        if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
            return Err(bad("adaptive_avg_pool2d needs contiguous tensors"));
        }
        if x.dtype != ScalarType::FLOAT {
            return Err(bad_dtype("adaptive_avg_pool2d dtype", x.dtype));
        }
        let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
        // floor/ceil of (o·in)/out computed in f32, as upstream.
        let start = |o: usize, out: usize, inn: usize| libm::floorf((o * inn) as f32 / out as f32) as usize;
        let end = |o: usize, out: usize, inn: usize| libm::ceilf(((o + 1) * inn) as f32 / out as f32) as usize;
        for p in 0..planes {
            let plane = xd.get(p * ih * iw..(p + 1) * ih * iw).ok_or(bad("adaptive_avg_pool2d input"))?;
            for y in 0..oh {
                let (y0, y1) = (start(y, oh, ih), end(y, oh, ih).min(ih));
                for xo in 0..ow {
                    let (x0, x1) = (start(xo, ow, iw), end(xo, ow, iw).min(iw));
                    let mut sum = 0.0f32;
                    for r in y0..y1 {
                        for c in x0..x1 {
                            sum += plane.get(r * iw + c).copied().unwrap_or(0.0);
                        }
                    }
                    let count = (y1.saturating_sub(y0) * x1.saturating_sub(x0)) as f32;
                    *od.get_mut((p * oh + y) * ow + xo).ok_or(bad("adaptive_avg_pool2d output"))? = sum / count;
                }
            }
        }
        Ok(())
    }
);
