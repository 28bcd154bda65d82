//! `aten::*` portable kernels (ExecuTorch `kernels/portable/cpu`).

use etch_runtime::context::required;
use etch_runtime::{ArgKind as A, Error, ErrorCode, Kernel, KernelContext, Result, ScalarType};

use super::copy;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// `permute_copy.out(Tensor self, int[] dims, *, Tensor(a!) out)`.
pub const PERMUTE_COPY_OUT: Kernel = Kernel {
    name: "aten::permute_copy.out",
    args: &[A::Tensor, A::IntList, A::Tensor, A::Tensor],
    run: |ctx| {
        let dims = ctx.int_list(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        copy::permute(&required(x, 0)?, dims.as_slice(), &mut out)
    },
};

/// `view_copy.out(Tensor self, SymInt[] size, *, Tensor(a!) out)`: same
/// elements in logical order, new sizes.
pub const VIEW_COPY_OUT: Kernel = Kernel {
    name: "aten::view_copy.out",
    args: &[A::Tensor, A::IntList, A::Tensor, A::Tensor],
    run: |ctx| {
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
        out.data.copy_from_slice(x.data);
        Ok(())
    },
};

/// `clone.out(Tensor self, *, MemoryFormat? memory_format, Tensor(a!) out)`.
pub const CLONE_OUT: Kernel = Kernel {
    name: "aten::clone.out",
    args: &[A::Tensor, A::OptInt, A::Tensor, A::Tensor],
    run: |ctx| {
        let ([x], [mut out]) = ctx.io([0], [2])?;
        copy::copy_tensor(&required(x, 0)?, &mut out)
    },
};

/// `relu.out(Tensor self, *, Tensor(a!) out)`: portable `op_relu.cpp` keeps
/// NaN and values `>= 0` (so `-0.0` stays `-0.0`), else 0.
pub const RELU_OUT: Kernel = Kernel {
    name: "aten::relu.out",
    args: &[A::Tensor, A::Tensor, A::Tensor],
    run: |ctx| {
        let ([x], [mut out]) = ctx.io([0], [1])?;
        let x = required(x, 0)?;
        if x.dtype != out.dtype
            || x.numel() != out.numel()
            || !x.shape.memory_order_matches(out.shape.dim_order())
        {
            return Err(bad("relu shapes"));
        }
        match x.dtype {
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => {
                for (o, &v) in out.as_f32_mut()?.iter_mut().zip(x.as_f32()?) {
                    *o = if v.is_nan() || v >= 0.0 { v } else { 0.0 };
                }
            }
            #[cfg(feature = "dtype-i8")]
            ScalarType::CHAR => {
                for (o, &v) in out.as_i8_mut()?.iter_mut().zip(x.as_i8()?) {
                    *o = v.max(0);
                }
            }
            _ => return Err(Error::new(ErrorCode::InvalidType, "relu dtype", 0)),
        }
        Ok(())
    },
};

/// `addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
/// Scalar alpha=1, Tensor(a!) out)`, f32. Portable `op_addmm.cpp`: for each
/// output `sum = Σ_k mat1[i,k]·mat2[k,j]` accumulated in f32 in k order, then
/// `sum·alpha + self[i,j]·beta` (self broadcast to the output).
pub const ADDMM_OUT: Kernel = Kernel {
    name: "aten::addmm.out",
    args: &[
        A::Tensor,
        A::Tensor,
        A::Tensor,
        A::Scalar,
        A::Scalar,
        A::Tensor,
        A::Tensor,
    ],
    run: addmm_out,
};

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
    let (bm, bp) = match bias.shape.sizes() {
        [] => (1, 1),
        [q] => (1, *q as usize),
        [r, q] => (*r as usize, *q as usize),
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
            let s = bias.get((i % bm) * bp + (j % bp)).copied().unwrap_or(0.0);
            if let Some(o) = out.get_mut(i * p + j) {
                *o = sum * alpha + s * beta;
            }
        }
    }
    Ok(())
}
