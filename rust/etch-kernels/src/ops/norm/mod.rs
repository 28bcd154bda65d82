//! Normalization (`_native_batch_norm_legit_no_training`,
//! `native_layer_norm`, `native_group_norm`), f32, with the arithmetic of
//! ExecuTorch's `op_native_batch_norm.cpp`, `op_native_layer_norm.cpp`
//! (`layer_norm_scalar`) and `op_native_group_norm.cpp`: which steps run in
//! f32 and which in f64 is part of the result, and is spelled out per op.
//!
//! Square roots are `libm::sqrt`/`sqrtf`: IEEE correctly rounded, as
//! glibc's and the hardware's are, so bit-exact.
//!
//! All three return three tensors; the emitter passes them as three `out`
//! arguments followed by the returned `TensorList`.

use etch_runtime::context::required;
pub mod softmax;

use etch_runtime::{
    arg, op, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType, TensorView,
};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `norm-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-_softmax-out")]
    softmax::SOFTMAX_OUT,
    #[cfg(feature = "op-aten-_log_softmax-out")]
    softmax::LOG_SOFTMAX_OUT,
    #[cfg(feature = "op-aten-_native_batch_norm_legit_no_training-out")]
    NATIVE_BATCH_NORM_LEGIT_NO_TRAINING_OUT,
    #[cfg(feature = "op-aten-native_layer_norm-out")]
    NATIVE_LAYER_NORM_OUT,
    #[cfg(feature = "op-aten-native_group_norm-out")]
    NATIVE_GROUP_NORM_OUT,
];

use crate::ops::bad;

/// Upstream's FLOATHBF16 dtype switch, of which this build has f32.
fn f32_only(t: &TensorView<'_>) -> Result<()> {
    if t.dtype == ScalarType::FLOAT {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidArgument,
            "normalization dtype",
            t.dtype.0 as u32,
        ))
    }
}

/// Block `k` of `n` elements of `x` and of `y` (no `chunks`: its length
/// division keeps a divide-by-zero panic path in firmware builds).
fn block<'a, 'b>(
    x: &'a [f32],
    y: &'b mut [f32],
    k: usize,
    n: usize,
) -> Result<(&'a [f32], &'b mut [f32])> {
    let lo = k.checked_mul(n).ok_or(bad("normalization block"))?;
    let hi = lo.checked_add(n).ok_or(bad("normalization block"))?;
    match (x.get(lo..hi), y.get_mut(lo..hi)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(bad("normalization block")),
    }
}

/// An optional rank-1 f32 parameter of `n` elements (weight, bias, running
/// statistics), checked as upstream checks it.
fn param<'d>(t: Option<TensorView<'d>>, n: usize) -> Result<Option<&'d [f32]>> {
    let Some(t) = t else { return Ok(None) };
    f32_only(&t)?;
    if t.shape.rank() != 1 || t.shape.size(0) != n {
        return Err(bad("normalization parameter shape"));
    }
    let d = t.as_f32()?;
    if d.len() != n {
        return Err(bad("normalization parameter size"));
    }
    Ok(Some(d))
}

/// `_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight,
/// Tensor? bias, Tensor running_mean, Tensor running_var, float momentum,
/// float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)`:
/// per channel `invstd = (f32)(1.0 / sqrt((double)var + eps))` (f64), then
/// `out = ((x − mean)·invstd)·w + b` in f32, left to right, with `w = 1`
/// and `b = 0` when absent (so `−0.0` becomes `+0.0` without a bias, as
/// upstream). `out1`/`out2` are empty.
pub const NATIVE_BATCH_NORM_LEGIT_NO_TRAINING_OUT: Kernel = op!(
    "aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))",
    |ctx| {
        let eps = ctx.double(arg!(SCHEMA, eps))?;
        let ins = arg!(SCHEMA, [input, weight, bias, running_mean, running_var]);
        batch_norm(ctx, ins, eps, arg!(SCHEMA, [out0, out1, out2]))
    }
);

/// `ins`: input, weight, bias, running_mean, running_var; `outs`: out0,
/// out1, out2.
fn batch_norm(
    ctx: &mut KernelContext<'_, '_>,
    ins: [usize; 5],
    eps: f64,
    outs: [usize; 3],
) -> Result<()> {
    let ([x, w, b, mean, var], [mut out, mean_out, invstd_out]) = ctx.io(ins, outs)?;
    let x = required(x, ins[0])?;
    f32_only(&x)?;
    if out.dtype != x.dtype || mean_out.dtype != x.dtype || invstd_out.dtype != x.dtype {
        return Err(bad("batch_norm output dtypes"));
    }
    if x.shape.rank() < 2 || out.shape.sizes() != x.shape.sizes() {
        return Err(bad("batch_norm shapes"));
    }
    // Upstream resizes mean_out and invstd_out to {0}: they carry no data.
    if mean_out.numel() != 0 || invstd_out.numel() != 0 {
        return Err(bad("batch_norm mean/invstd outputs must be empty"));
    }
    if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(bad("batch_norm needs contiguous tensors"));
    }
    let c = x.shape.size(1);
    let (w, b) = (param(w, c)?, param(b, c)?);
    let mean = param(Some(required(mean, ins[3])?), c)?.unwrap_or(&[]);
    let var = param(Some(required(var, ins[4])?), c)?.unwrap_or(&[]);
    let inner: usize = x.shape.sizes().iter().skip(2).map(|s| s as usize).product();
    let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
    if xd.len() != od.len() {
        return Err(bad("batch_norm sizes"));
    }
    let mut k = 0usize;
    for _outer in 0..x.shape.size(0) {
        for ch in 0..c {
            let (Some(&m), Some(&v)) = (mean.get(ch), var.get(ch)) else {
                return Err(bad("batch_norm channel"));
            };
            let invstd = (1.0 / libm::sqrt(v as f64 + eps)) as f32;
            let wv = w.and_then(|w| w.get(ch).copied()).unwrap_or(1.0);
            let bv = b.and_then(|b| b.get(ch).copied()).unwrap_or(0.0);
            if inner == 0 {
                continue;
            }
            let (xs, os) = block(xd, od, k, inner)?;
            k += 1;
            for (o, &xv) in os.iter_mut().zip(xs) {
                *o = (xv - m) * invstd * wv + bv;
            }
        }
    }
    Ok(())
}

/// `native_layer_norm.out(Tensor input, SymInt[] normalized_shape,
/// Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0,
/// Tensor(b!) out1, Tensor(c!) out2)`, f32: `layer_norm_scalar` per row of
/// the N normalized elements: `sum = 0.f; sum = sum + x` and
/// `sq = 0.f; sq += x·x` in f32, `mean = sum/N`, `var = sq/N − mean·mean`
/// (E[x²] − E[x]², f32), `std = sqrtf(var + (float)eps)`, then
/// `y = (x − mean) / std · w + b` (division, f32); `mean_out = mean`,
/// `rstd_out = (f32)(1.0 / (double)std)`. The pip runtime registers the
/// optimized `native_layer_norm`, whose small-input path is this routine.
pub const NATIVE_LAYER_NORM_OUT: Kernel = op!(LAYER_NORM, layer_norm);

const LAYER_NORM: &str = "aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))";

fn layer_norm(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let shape = ctx.int_list(arg!(LAYER_NORM, normalized_shape))?;
    let eps = ctx.double(arg!(LAYER_NORM, eps))? as f32;
    if ctx.has_dynamic_shapes() {
        // out0 as the input; mean and rstd the input's sizes with the
        // normalized dims 1 (upstream's get_layer_norm_out_target_size).
        let x_arg = arg!(LAYER_NORM, input);
        crate::ops::dynamic::resize_like(ctx, arg!(LAYER_NORM, out0), x_arg)?;
        let mut stat = crate::ops::dynamic::Sizes::of(ctx, x_arg)?;
        let rank = stat.as_slice().len();
        let lead = rank
            .checked_sub(shape.len())
            .ok_or(bad("layer_norm normalized_shape"))?;
        stat.fill_from(lead, 1);
        crate::ops::dynamic::resize(ctx, arg!(LAYER_NORM, out1), &stat)?;
        crate::ops::dynamic::resize(ctx, arg!(LAYER_NORM, out2), &stat)?;
    }
    let ([x, w, b], [mut out, mut mean_out, mut rstd_out]) = ctx.io(
        arg!(LAYER_NORM, [input, weight, bias]),
        arg!(LAYER_NORM, [out0, out1, out2]),
    )?;
    let x = required(x, arg!(LAYER_NORM, input))?;
    f32_only(&x)?;
    let (rank, nd) = (x.shape.rank(), shape.len());
    if nd == 0 || nd > rank {
        return Err(bad("layer_norm normalized_shape"));
    }
    let lead = rank - nd;
    let sizes = x.shape.sizes();
    let mut n = 1usize;
    for (k, &want) in shape.as_slice().iter().enumerate() {
        let have = sizes.get(lead + k).unwrap_or(0);
        if i64::from(have) != want {
            return Err(bad("layer_norm normalized_shape differs from the input"));
        }
        n = n.saturating_mul(have as usize);
    }
    let m: usize = sizes.iter().take(lead).map(|s| s as usize).product();
    for t in [&w, &b].into_iter().flatten() {
        f32_only(t)?;
        if Some(t.shape.sizes()) != sizes.slice(lead..rank) {
            return Err(bad("layer_norm weight/bias shape"));
        }
    }
    if [out.dtype, mean_out.dtype, rstd_out.dtype] != [x.dtype; 3] {
        return Err(bad("layer_norm output dtypes"));
    }
    // mean/rstd: the input's sizes with the normalized dims set to 1.
    let stat_ok = |s: &etch_runtime::Shape| {
        s.rank() == rank
            && s.sizes().iter().enumerate().all(|(d, v)| {
                v == if d < lead {
                    sizes.get(d).unwrap_or(0)
                } else {
                    1
                }
            })
    };
    if out.shape.sizes() != sizes || !stat_ok(&mean_out.shape) || !stat_ok(&rstd_out.shape) {
        return Err(bad("layer_norm output shapes"));
    }
    if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(bad("layer_norm needs contiguous tensors"));
    }
    let w = w.map(|t| t.as_f32()).transpose()?;
    let b = b.map(|t| t.as_f32()).transpose()?;
    let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
    let (md, rd) = (mean_out.as_f32_mut()?, rstd_out.as_f32_mut()?);
    if m == 0 {
        return Ok(());
    }
    if md.len() != m || rd.len() != m || xd.len() != m * n || od.len() != m * n {
        return Err(bad("layer_norm sizes"));
    }
    if n == 0 {
        md.fill(0.0);
        rd.fill(f32::NAN);
        return Ok(());
    }
    for (i, (mo, ro)) in md.iter_mut().zip(rd.iter_mut()).enumerate() {
        let (xs, ys) = block(xd, od, i, n)?;
        let mut sum = 0.0f32;
        for &v in xs {
            sum += v;
        }
        let mut sq = 0.0f32;
        for &v in xs {
            sq += v * v;
        }
        let mean = sum / n as f32;
        let var = sq / n as f32 - mean * mean;
        let std = libm::sqrtf(var + eps);
        for (j, (y, &v)) in ys.iter_mut().zip(xs).enumerate() {
            let wv = w.and_then(|w| w.get(j).copied()).unwrap_or(1.0);
            let bv = b.and_then(|b| b.get(j).copied()).unwrap_or(0.0);
            *y = (v - mean) / std * wv + bv;
        }
        *mo = mean;
        *ro = (1.0 / std as f64) as f32;
    }
    Ok(())
}

/// `native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias,
/// SymInt N, SymInt C, SymInt HxW, int group, float eps, *, Tensor(a!)
/// out0, Tensor(b!) out1, Tensor(c!) out2)`, f32: per (n, group) block of
/// `D·HxW` elements, `sum`/`sq` in f32 from 0 (`sq += x·x`), then in f64
/// `mean = sum/inner`, `var = sq/inner − mean²`, `rstd = 1/sqrt(var + eps)`;
/// without weight and bias `y = (f32)((x − mean)·rstd)`, otherwise per
/// channel `scale = rstd·w`, `beta = −scale·mean + b`,
/// `y = (f32)(scale·x + beta)` (f64); `mean`/`rstd` outputs `[N, group]`.
pub const NATIVE_GROUP_NORM_OUT: Kernel = op!(GROUP_NORM, group_norm);

const GROUP_NORM: &str = "aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2) -> (Tensor(a!), Tensor(b!), Tensor(c!))";

fn group_norm(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let [n, c, hxw, g] = arg!(GROUP_NORM, [N, C, HxW, group]);
    let (n, c, hxw, g) = (ctx.int(n)?, ctx.int(c)?, ctx.int(hxw)?, ctx.int(g)?);
    let eps = ctx.double(arg!(GROUP_NORM, eps))?;
    let ([x, w, b], [mut out, mut mean_out, mut rstd_out]) = ctx.io(
        arg!(GROUP_NORM, [input, weight, bias]),
        arg!(GROUP_NORM, [out0, out1, out2]),
    )?;
    let x = required(x, arg!(GROUP_NORM, input))?;
    f32_only(&x)?;
    let as_usize = |v: i64| usize::try_from(v).map_err(|_| bad("group_norm size"));
    let (n, c, hxw) = (as_usize(n)?, as_usize(c)?, as_usize(hxw)?);
    if x.shape.rank() < 2
        || x.shape.size(0) != n
        || x.shape.size(1) != c
        || Some(x.numel()) != n.checked_mul(c).and_then(|v| v.checked_mul(hxw))
    {
        return Err(bad("group_norm N, C, HxW differ from the input"));
    }
    if g <= 0 || c.checked_rem(g as usize) != Some(0) {
        return Err(bad("group_norm group"));
    }
    let g = g as usize;
    let (w, b) = (param(w, c)?, param(b, c)?);
    if [out.dtype, mean_out.dtype, rstd_out.dtype] != [x.dtype; 3] {
        return Err(bad("group_norm output dtypes"));
    }
    if out.shape.sizes() != x.shape.sizes()
        || mean_out.shape.sizes() != [n as u32, g as u32]
        || rstd_out.shape.sizes() != [n as u32, g as u32]
    {
        return Err(bad("group_norm output shapes"));
    }
    if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(bad("group_norm needs contiguous tensors"));
    }
    let d = c.checked_div(g).unwrap_or(0);
    let inner = d * hxw;
    let (xd, od) = (x.as_f32()?, out.as_f32_mut()?);
    let (md, rd) = (mean_out.as_f32_mut()?, rstd_out.as_f32_mut()?);
    if n * g == 0 {
        return Ok(());
    }
    if inner == 0 {
        md.fill(0.0);
        rd.fill(f32::NAN);
        return Ok(());
    }
    for (i, (mo, ro)) in md.iter_mut().zip(rd.iter_mut()).enumerate() {
        let (xs, ys) = block(xd, od, i, inner)?;
        let mut sum = 0.0f32;
        for &v in xs {
            sum += v;
        }
        let mut sq = 0.0f32;
        for &v in xs {
            sq += v * v;
        }
        let mean = sum as f64 / inner as f64;
        let var = sq as f64 / inner as f64 - mean * mean;
        let rstd = 1.0 / libm::sqrt(var + eps);
        if w.is_none() && b.is_none() {
            for (y, &v) in ys.iter_mut().zip(xs) {
                *y = ((v as f64 - mean) * rstd) as f32;
            }
        } else {
            let group = i.checked_rem(g).unwrap_or(0);
            for j in 0..d {
                let (xc, yc) = block(xs, ys, j, hxw)?;
                let ch = group * d + j;
                let wv = w.and_then(|w| w.get(ch).copied()).map_or(1.0, f64::from);
                let bv = b.and_then(|b| b.get(ch).copied()).map_or(0.0, f64::from);
                let scale = rstd * wv;
                let beta = -scale * mean + bv;
                for (y, &v) in yc.iter_mut().zip(xc) {
                    *y = (scale * v as f64 + beta) as f32;
                }
            }
        }
        *mo = mean as f32;
        *ro = rstd as f32;
    }
    Ok(())
}
