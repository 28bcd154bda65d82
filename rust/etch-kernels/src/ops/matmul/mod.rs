//! Matrix products (f32): `mm`, `bmm`, `addmm`, `linear`, each following
//! the arithmetic order of ExecuTorch's `kernels/portable/cpu/op_*.cpp`.

use super::bad;
use super::dynamic::{self, Sizes};
use etch_runtime::context::required;
use etch_runtime::{arg, op, Error, ErrorCode, Kernel, KernelContext, Result};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `matmul-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-addmm-out")]
    ADDMM_OUT,
    #[cfg(feature = "op-aten-mm-out")]
    MM_OUT,
    #[cfg(feature = "op-aten-bmm-out")]
    BMM_OUT,
    #[cfg(feature = "op-aten-linear-out")]
    LINEAR_OUT,
];

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
        let ([a, b], [mut out]) = ctx.io(arg!(SCHEMA, [self, mat2]), arg!(SCHEMA, [out]))?;
        let (a, b) = (
            required(a, arg!(SCHEMA, self))?,
            required(b, arg!(SCHEMA, mat2))?,
        );
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
        if ctx.has_dynamic_shapes() {
            // [b, n, m] x [b, m, p] -> [b, n, p].
            let (a, b) = (
                Sizes::of(ctx, arg!(SCHEMA, self))?,
                Sizes::of(ctx, arg!(SCHEMA, mat2))?,
            );
            let mut sizes = Sizes::new();
            for s in [
                a.as_slice().first(),
                a.as_slice().get(1),
                b.as_slice().get(2),
            ] {
                sizes.push(s.copied().unwrap_or(0))?;
            }
            dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([a, b], [mut out]) = ctx.io(arg!(SCHEMA, [self, mat2]), arg!(SCHEMA, [out]))?;
        let (a, b) = (
            required(a, arg!(SCHEMA, self))?,
            required(b, arg!(SCHEMA, mat2))?,
        );
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

/// `linear.out(Tensor input, Tensor weight, Tensor? bias=None, *,
/// Tensor(a!) out)`, f32, contiguous: ExecuTorch has no portable `linear`
/// (exporters decompose it into `permute_copy` + `addmm`); this follows
/// `addmm`'s order: `Σ_k x[i,k]·w[j,k]` from 0 in k order, then `+ bias[j]`.
/// In a method with bounded dynamic shapes `out` is resized to `input`'s
/// sizes with the last one `weight.size(0)` (`[..., in] -> [..., out]`).
pub const LINEAR_OUT: Kernel = op!(
    "aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        if ctx.has_dynamic_shapes() {
            let mut sizes = Sizes::of(ctx, arg!(SCHEMA, input))?;
            let n_out = Sizes::of(ctx, arg!(SCHEMA, weight))?
                .as_slice()
                .first()
                .copied()
                .unwrap_or(0);
            sizes.set(sizes.as_slice().len().wrapping_sub(1), n_out);
            dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([x, w, bias], [mut out]) =
            ctx.io(arg!(SCHEMA, [input, weight, bias]), arg!(SCHEMA, [out]))?;
        let (x, w) = (required(x, arg!(SCHEMA, input))?, required(w, arg!(SCHEMA, weight))?);
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
/// `addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
/// Scalar alpha=1, Tensor(a!) out)`, f32. Portable `op_addmm.cpp`: for each
/// output `sum = Σ_k mat1[i,k]·mat2[k,j]` accumulated in f32 in k order, then
/// `sum·alpha + self[i,j]·beta` (self broadcast to the output).
pub const ADDMM_OUT: Kernel = op!(ADDMM, addmm_out);

const ADDMM: &str = "aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)";

fn addmm_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = ADDMM;
    let beta = ctx.scalar_f64(arg!(S, beta))? as f32;
    let alpha = ctx.scalar_f64(arg!(S, alpha))? as f32;
    if ctx.has_dynamic_shapes() {
        // [mat1.size(0), mat2.size(1)].
        let (a, b) = (
            Sizes::of(ctx, arg!(S, mat1))?,
            Sizes::of(ctx, arg!(S, mat2))?,
        );
        let mut sizes = Sizes::new();
        sizes.push(a.as_slice().first().copied().unwrap_or(0))?;
        sizes.push(b.as_slice().get(1).copied().unwrap_or(0))?;
        dynamic::resize(ctx, arg!(S, out), &sizes)?;
    }
    let ([bias, a, b], [mut out]) = ctx.io(arg!(S, [self, mat1, mat2]), arg!(S, [out]))?;
    let [bias_arg, a_arg, b_arg] = arg!(S, [self, mat1, mat2]);
    let (bias, a, b) = (
        required(bias, bias_arg)?,
        required(a, a_arg)?,
        required(b, b_arg)?,
    );
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
