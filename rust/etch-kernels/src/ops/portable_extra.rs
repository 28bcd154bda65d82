//! More `aten::*` portable kernels (f32 unless noted), each following the
//! arithmetic order of ExecuTorch's `kernels/portable/cpu/op_*.cpp`.

use etch_runtime::context::required;
use etch_runtime::{op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, TensorView};

use super::copy;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

fn same_layout(a: &TensorView<'_>, b: &etch_runtime::TensorViewMut<'_>) -> Result<()> {
    if a.dtype != b.dtype
        || a.shape.sizes() != b.shape.sizes()
        || !a.shape.memory_order_matches(b.shape.dim_order())
    {
        return Err(bad("input and output differ in dtype, shape or layout"));
    }
    Ok(())
}

/// Matrix product of `[m,k]` and `[k,n]` f32 slices, `sum += a·b` over k.
fn matmul(a: &[f32], b: &[f32], out: &mut [f32], m: usize, k: usize, n: usize) -> Result<()> {
    if a.len() < m * k || b.len() < k * n || out.len() < m * n {
        return Err(bad("matmul sizes"));
    }
    for i in 0..m {
        for j in 0..n {
            let mut sum = 0.0f32;
            for p in 0..k {
                sum += a.get(i * k + p).copied().unwrap_or(0.0)
                    * b.get(p * n + j).copied().unwrap_or(0.0);
            }
            if let Some(o) = out.get_mut(i * n + j) {
                *o = sum;
            }
        }
    }
    Ok(())
}

/// `mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)`, f32, contiguous.
pub const MM_OUT: Kernel = op!(
    "aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([a, b], [mut out]) = ctx.io([0, 1], [2])?;
        let (a, b) = (required(a, 0)?, required(b, 1)?);
        let (m, k, n) = (a.shape.size(0), a.shape.size(1), b.shape.size(1));
        if a.shape.rank() != 2
            || b.shape.size(0) != k
            || out.shape.sizes() != [m as u32, n as u32]
            || !a.shape.is_contiguous()
            || !b.shape.is_contiguous()
            || !out.shape.is_contiguous()
        {
            return Err(bad("mm shapes"));
        }
        matmul(a.as_f32()?, b.as_f32()?, out.as_f32_mut()?, m, k, n)
    }
);

/// `bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)`, f32, contiguous.
pub const BMM_OUT: Kernel = op!(
    "aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([a, b], [mut out]) = ctx.io([0, 1], [2])?;
        let (a, b) = (required(a, 0)?, required(b, 1)?);
        let (bs, m, k, n) = (
            a.shape.size(0),
            a.shape.size(1),
            a.shape.size(2),
            b.shape.size(2),
        );
        if a.shape.rank() != 3
            || b.shape.size(0) != bs
            || b.shape.size(1) != k
            || out.shape.sizes() != [bs as u32, m as u32, n as u32]
            || !a.shape.is_contiguous()
            || !b.shape.is_contiguous()
            || !out.shape.is_contiguous()
        {
            return Err(bad("bmm shapes"));
        }
        let (ad, bd, od) = (a.as_f32()?, b.as_f32()?, out.as_f32_mut()?);
        for i in 0..bs {
            let (Some(x), Some(y), Some(o)) = (
                ad.get(i * m * k..(i + 1) * m * k),
                bd.get(i * k * n..(i + 1) * k * n),
                od.get_mut(i * m * n..(i + 1) * m * n),
            ) else {
                return Err(bad("bmm sizes"));
            };
            matmul(x, y, o, m, k, n)?;
        }
        Ok(())
    }
);

/// `max_pool2d_with_indices.out(Tensor self, int[2] kernel_size,
/// int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False,
/// *, Tensor(a!) out, Tensor(b!) indices)`: the first maximum of each window
/// (NaN wins), its index `h·W + w` in the input plane.
pub const MAX_POOL2D_WITH_INDICES_OUT: Kernel = op!(
    "aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))",
    max_pool2d_with_indices_out
);

fn max_pool2d_with_indices_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let l = |ctx: &KernelContext<'_, '_>, i: usize, d: i64| -> Result<(i64, i64)> {
        let v = ctx.int_list(i)?;
        let s = v.as_slice();
        Ok(match s {
            [] => (d, d),
            [a] => (*a, *a),
            [a, b, ..] => (*a, *b),
        })
    };
    let (kh, kw) = l(ctx, 1, 1)?;
    let (sh, sw) = {
        let s = l(ctx, 2, 0)?;
        if s == (0, 0) {
            (kh, kw)
        } else {
            s
        }
    };
    let (ph, pw) = l(ctx, 3, 0)?;
    let (dh, dw) = l(ctx, 4, 1)?;
    // Upstream's `check_max_pool2d_with_indices_args`: positive kernel,
    // stride and dilation, non-negative padding.
    if kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0 || dh <= 0 || dw <= 0 || ph < 0 || pw < 0 {
        return Err(bad("max_pool2d parameters"));
    }
    let ([x], [mut out, mut idx]) = ctx.io([0], [6, 7])?;
    let x = required(x, 0)?;
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
                        super::tap_range(oy, kh, sh, dh, ph, ih),
                        super::tap_range(ox, kw, sw, dw, pw, iw),
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

/// `full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out)`.
pub const FULL_OUT: Kernel = op!(
    "aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let v = ctx.scalar_f64(1)?;
        let ([], [mut out]) = ctx.io([], [2])?;
        match out.dtype {
            ScalarType::FLOAT => out.as_f32_mut()?.fill(v as f32),
            ScalarType::CHAR => out.as_i8_mut()?.fill(v as i8),
            ScalarType::INT => out.as_i32_mut()?.fill(v as i32),
            ScalarType::LONG => out.as_i64_mut()?.fill(v as i64),
            _ => return Err(Error::new(ErrorCode::InvalidType, "full dtype", 0)),
        }
        Ok(())
    }
);

/// Copy ops whose output has the input's elements in logical order under
/// new sizes (`unsqueeze_copy`, `squeeze_copy`): contiguous only.
fn reshape_copy(ctx: &mut KernelContext<'_, '_>, out_arg: usize) -> Result<()> {
    let ([x], [out]) = ctx.io([0], [out_arg])?;
    let x = required(x, 0)?;
    if x.dtype != out.dtype
        || x.numel() != out.numel()
        || !x.shape.is_contiguous()
        || !out.shape.is_contiguous()
    {
        return Err(bad("reshape copy shapes"));
    }
    etch_runtime::memory::copy_slice(out.data, x.data);
    Ok(())
}

/// `unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out)`.
pub const UNSQUEEZE_COPY_OUT: Kernel = op!(
    "aten::unsqueeze_copy.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| reshape_copy(ctx, 2)
);

/// `squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out)`.
pub const SQUEEZE_COPY_DIMS_OUT: Kernel = op!(
    "aten::squeeze_copy.dims_out(Tensor self, int[] dim, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| reshape_copy(ctx, 2)
);

/// `expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False,
/// Tensor(a!) out)`: broadcast copy (stride 0 along expanded dimensions).
pub const EXPAND_COPY_OUT: Kernel = op!(
    "aten::expand_copy.out(Tensor self, SymInt[] size, *, bool implicit=False, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [out]) = ctx.io([0], [3])?;
        let x = required(x, 0)?;
        let strides = super::elementwise::broadcast_strides(&x.shape, &out.shape)?;
        let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
        let (os, sizes) = (out.shape.strides(), out.shape);
        copy::strided_copy(x.data, &strides, out.data, &os, sizes.sizes(), elem)
    }
);

/// `cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)`: inputs placed
/// one after another along `dim`; empty 1-D inputs are skipped as upstream.
pub const CAT_OUT: Kernel = op!(
    "aten::cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
    cat_out
);

fn cat_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let n = ctx.tensor_list_len(0)?;
    let dim = ctx.int(1)?;
    let out_value = ctx.value_index(2)?;
    let mut offset = 0usize; // position along `dim`
    for k in 0..n {
        let v = ctx.tensor_list_item(0, k)?;
        let ([x], [out]) = ctx.io_values([Some(v)], [out_value])?;
        let x = required(x, 0)?;
        if x.numel() == 0 {
            continue;
        }
        let rank = out.shape.rank() as i64;
        let d = if dim < 0 { dim + rank } else { dim };
        if !(0..rank).contains(&d) || x.shape.rank() != out.shape.rank() || x.dtype != out.dtype {
            return Err(bad("cat shapes"));
        }
        let d = d as usize;
        let os = out.shape.strides();
        let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
        let start = offset * os.get(d).copied().unwrap_or(0) * elem;
        let dst = out.data.get_mut(start..).ok_or(bad("cat offset"))?;
        copy::strided_copy(x.data, &x.shape.strides(), dst, &os, x.shape.sizes(), elem)?;
        offset += x.shape.size(d as isize);
    }
    Ok(())
}

/// `linear.out(Tensor input, Tensor weight, Tensor? bias=None, *,
/// Tensor(a!) out)`, f32, contiguous: ExecuTorch has no portable `linear`
/// (exporters decompose it into `permute_copy` + `addmm`); this follows
/// `addmm`'s order: `Σ_k x[i,k]·w[j,k]` from 0 in k order, then `+ bias[j]`.
pub const LINEAR_OUT: Kernel = op!(
    "aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x, w, bias], [mut out]) = ctx.io([0, 1, 2], [3])?;
        let (x, w) = (required(x, 0)?, required(w, 1)?);
        let (n_out, k) = (w.shape.size(0), w.shape.size(1));
        if w.shape.rank() != 2
            || x.shape.size(-1) != k
            || out.shape.size(-1) != n_out
            || !x.shape.is_contiguous()
            || !w.shape.is_contiguous()
            || !out.shape.is_contiguous()
        {
            return Err(bad("linear shapes"));
        }
        let bias = bias.map(|b| b.as_f32()).transpose()?;
        let (xd, wd, od) = (x.as_f32()?, w.as_f32()?, out.as_f32_mut()?);
        let rows = xd.len().checked_div(k).unwrap_or(0);
        if rows * n_out != od.len() || bias.is_some_and(|b| b.len() != n_out) {
            return Err(bad("linear sizes"));
        }
        for i in 0..rows {
            for j in 0..n_out {
                let mut sum = 0.0f32;
                for p in 0..k {
                    sum += xd.get(i * k + p).copied().unwrap_or(0.0)
                        * wd.get(j * k + p).copied().unwrap_or(0.0);
                }
                if let Some(b) = bias {
                    sum += b.get(j).copied().unwrap_or(0.0);
                }
                if let Some(o) = od.get_mut(i * n_out + j) {
                    *o = sum;
                }
            }
        }
        Ok(())
    }
);
