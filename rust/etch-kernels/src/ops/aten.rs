//! `aten::*` portable kernels (ExecuTorch `kernels/portable/cpu`).

use etch_runtime::context::required;
#[allow(unused_imports)] // used only under dtype features
use etch_runtime::ScalarType;
use etch_runtime::{op, Error, ErrorCode, Kernel, KernelContext, Result};

use super::copy;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// `permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)`.
pub const PERMUTE_COPY_OUT: Kernel = op!(
    "aten::permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = ctx.int_list(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        copy::permute(&required(x, 0)?, dims.as_slice(), &mut out)
    }
);

/// `view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)`: same
/// elements in logical order, new sizes.
pub const VIEW_COPY_OUT: Kernel = op!(
    "aten::view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [out]) = ctx.io([0], [2])?;
        let x = required(x, 0)?;
        if x.dtype != out.dtype || x.numel() != out.numel() {
            return Err(bad("view_copy size or dtype"));
        }
        if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
            return Err(Error::new(
                ErrorCode::NotSupported,
                "view_copy of a non-contiguous tensor",
                0,
            ));
        }
        etch_runtime::memory::copy_slice(out.data, x.data);
        Ok(())
    }
);

/// `clone.out(Tensor self, *, MemoryFormat? memory_format, Tensor(a!) out)`.
pub const CLONE_OUT: Kernel = op!(
    "aten::clone.out(Tensor self, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io([0], [2])?;
        copy::copy_tensor(&required(x, 0)?, &mut out)
    }
);

/// `addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
/// Scalar alpha=1, Tensor(a!) out)`, f32. Portable `op_addmm.cpp`: for each
/// output `sum = Σ_k mat1[i,k]·mat2[k,j]` accumulated in f32 in k order, then
/// `sum·alpha + self[i,j]·beta` (self broadcast to the output).
pub const ADDMM_OUT: Kernel = op!(
    "aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    addmm_out
);

fn addmm_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let beta = ctx.scalar_f64(3)? as f32;
    let alpha = ctx.scalar_f64(4)? as f32;
    let ([bias, a, b], [mut out]) = ctx.io([0, 1, 2], [5])?;
    let (bias, a, b) = (required(bias, 0)?, required(a, 1)?, required(b, 2)?);
    let (m, n, p) = (a.shape.size(0), a.shape.size(1), b.shape.size(1));
    if a.shape.rank() != 2
        || b.shape.rank() != 2
        || b.shape.size(0) != n
        || out.shape.sizes() != [m as u32, p as u32]
    {
        return Err(bad("addmm shapes"));
    }
    if !a.shape.is_contiguous() || !b.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(Error::new(
            ErrorCode::NotSupported,
            "addmm of non-contiguous tensors",
            0,
        ));
    }
    // Broadcast of self: [p], [1,p], [m,1], [m,p] or a scalar.
    let (bm, bp) = match bias.shape.rank() {
        0 => (1, 1),
        1 => (1, bias.shape.size(0)),
        2 => (bias.shape.size(0), bias.shape.size(1)),
        _ => return Err(bad("addmm self rank")),
    };
    if (bm != 1 && bm != m) || (bp != 1 && bp != p) {
        return Err(bad("addmm self not broadcastable"));
    }
    let (a, b, bias) = (a.as_f32()?, b.as_f32()?, bias.as_f32()?);
    let out = out.as_f32_mut()?;
    if a.len() < m * n || b.len() < n * p || out.len() < m * p {
        return Err(bad("addmm data sizes"));
    }
    for i in 0..m {
        for j in 0..p {
            let mut sum = 0.0f32;
            for k in 0..n {
                sum += a.get(i * n + k).copied().unwrap_or(0.0)
                    * b.get(k * p + j).copied().unwrap_or(0.0);
            }
            let (bi, bj) = (
                i.checked_rem(bm).unwrap_or(0),
                j.checked_rem(bp).unwrap_or(0),
            );
            let s = bias.get(bi * bp + bj).copied().unwrap_or(0.0);
            if let Some(o) = out.get_mut(i * p + j) {
                *o = sum * alpha + s * beta;
            }
        }
    }
    Ok(())
}

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
pub const AVG_POOL2D_OUT: Kernel = op!(
    "aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)",
    avg_pool2d_out
);

fn avg_pool2d_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let (kernel, stride, padding) = (ctx.int_list(1)?, ctx.int_list(2)?, ctx.int_list(3)?);
    let include_pad = ctx.bool(5)?;
    let divisor = ctx.opt_int(6)?;
    let (kh, kw) = (val_at(&kernel, 0, 1), val_at(&kernel, 1, 1));
    let (sh, sw) = (val_at(&stride, 0, kh), val_at(&stride, 1, kw));
    let (ph, pw) = (val_at(&padding, 0, 0), val_at(&padding, 1, 0));
    let ([x], [mut out]) = ctx.io([0], [7])?;
    let x = required(x, 0)?;
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

/// `slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None,
/// SymInt? end=None, SymInt step=1, *, Tensor(a!) out)`.
pub const SLICE_COPY_TENSOR_OUT: Kernel = op!(
    "aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)",
    slice_copy
);

fn slice_copy(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let (dim, start, step) = (ctx.int(1)?, ctx.opt_int(2)?.unwrap_or(0), ctx.int(4)?);
    let ([x], [out]) = ctx.io([0], [5])?;
    let x = required(x, 0)?;
    let rank = x.shape.rank() as i64;
    let dim = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&dim)
        || step <= 0
        || x.dtype != out.dtype
        || out.shape.rank() != x.shape.rank()
    {
        return Err(bad("slice_copy arguments"));
    }
    let size = x.shape.size(dim as isize) as i64;
    let start = if start < 0 { start + size } else { start }.clamp(0, size) as usize;
    // Source strides with `dim` stepped, starting at `start`.
    // `start` and `step` come from the file: every product is checked.
    let mut strides = x.shape.strides();
    let base = strides
        .get(dim as usize)
        .copied()
        .unwrap_or(0)
        .checked_mul(start);
    if let Some(s) = strides.get_mut(dim as usize) {
        *s = usize::try_from(step)
            .ok()
            .and_then(|step| s.checked_mul(step))
            .ok_or(bad("slice_copy step"))?;
    }
    for d in 0..x.shape.rank() {
        if d != dim as usize && x.shape.size(d as isize) != out.shape.size(d as isize) {
            return Err(bad("slice_copy output shape"));
        }
    }
    let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
    let base = base
        .and_then(|b| b.checked_mul(elem))
        .ok_or(bad("slice start"))?;
    let src = x.data.get(base..).ok_or(bad("slice start"))?;
    let out_strides = out.shape.strides();
    let sizes = out.shape;
    copy::strided_copy(src, &strides, out.data, &out_strides, sizes.sizes(), elem)
}
