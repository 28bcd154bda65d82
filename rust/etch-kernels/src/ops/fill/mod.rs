//! Fills: `full`, `full_like`, `scalar_tensor`, `arange`, `masked_fill`:
//! outputs written from a scalar argument (cast with ExecuTorch's overflow
//! check where upstream has one).

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Error, ErrorCode, Kernel, Result, ScalarType};

use crate::ops::bad;
use crate::ops::copy::walk::elem_size;
use crate::ops::dtype::convert::{self, scalar_bytes, Scalar, Wide};

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `fill-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-full-out")]
    FULL_OUT,
    #[cfg(feature = "op-aten-masked_fill-Scalar_out")]
    MASKED_FILL_SCALAR_OUT,
    #[cfg(feature = "op-aten-scalar_tensor-out")]
    SCALAR_TENSOR_OUT,
    #[cfg(feature = "op-aten-full_like-out")]
    FULL_LIKE_OUT,
    #[cfg(feature = "op-aten-arange-start_out")]
    ARANGE_START_OUT,
];

/// `full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out)`.
pub const FULL_OUT: Kernel = op!(
    "aten::full.out(SymInt[] size, Scalar fill_value, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let v = ctx.scalar_f64(arg!(SCHEMA, fill_value))?;
        if ctx.has_dynamic_shapes() {
            // `size`'s current values (SymInts read at run time).
            let list = ctx.int_list(arg!(SCHEMA, size))?;
            let mut sizes = crate::ops::dynamic::Sizes::new();
            for &s in list.as_slice() {
                sizes.push(s)?;
            }
            crate::ops::dynamic::resize(ctx, arg!(SCHEMA, out), &sizes)?;
        }
        let ([], [mut out]) = ctx.io([], arg!(SCHEMA, [out]))?;
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

/// `masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *,
/// Tensor(a!) out)`: `out = mask ? value : self` with the Bool mask
/// broadcast to `self`; the value is `static_cast` to the dtype without an
/// overflow check, as upstream. (`Tensor.masked_fill` exports as
/// `scalar_tensor` + `where`, not as this.)
pub const MASKED_FILL_SCALAR_OUT: Kernel = op!(
    "aten::masked_fill.Scalar_out(Tensor self, Tensor mask, Scalar value, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let value = Scalar::read(ctx, arg!(SCHEMA, value))?;
        let ([x, mask], [mut out]) = ctx.io(arg!(SCHEMA, [self, mask]), arg!(SCHEMA, [out]))?;
        let (x, mask) = (required(x, arg!(SCHEMA, self))?, required(mask, arg!(SCHEMA, mask))?);
        masked_fill(&x, &mask, value, &mut out)
    }
);

/// See [`MASKED_FILL_SCALAR_OUT`].
pub(crate) fn masked_fill(
    x: &TensorView<'_>,
    mask: &TensorView<'_>,
    value: Scalar,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    if mask.dtype != ScalarType::BOOL
        || x.dtype != out.dtype
        || x.shape.sizes() != out.shape.sizes()
    {
        return Err(bad("masked_fill arguments"));
    }
    if !convert::convertible(x.dtype) {
        return Err(bad("masked_fill dtype"));
    }
    let mut v = [0u8; 8];
    convert::store(x.dtype, value.wide(), &mut v)?;
    let elem = elem_size(x.dtype)?;
    super::elementwise::for_each_broadcast(&x.shape, &mask.shape, &out.shape, |xi, mi, oi| {
        let fill = mask.data.get(mi).is_some_and(|&m| m != 0);
        let src = if fill {
            v.get(..elem)
        } else {
            x.data.get(xi * elem..xi * elem + elem)
        };
        let (Some(src), Some(dst)) = (src, out.data.get_mut(oi * elem..oi * elem + elem)) else {
            return Err(bad("masked_fill outside its tensor"));
        };
        etch_runtime::memory::copy_slice(dst, src);
        Ok(())
    })
}

/// Fills `out` with `value` after `check_overflow_scalar_cast`.
fn fill_out(out: &mut TensorViewMut<'_>, value: Scalar) -> Result<()> {
    let (v, elem) = scalar_bytes(value, out.dtype)?;
    convert::fill(out.data, &v, elem);
    Ok(())
}

/// `scalar_tensor.out(Scalar s, *, Tensor(a!) out)`: a 0-dim (or
/// one-element) tensor holding `s` (overflow-checked cast).
pub const SCALAR_TENSOR_OUT: Kernel = op!(
    "aten::scalar_tensor.out(Scalar s, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let value = Scalar::read(ctx, arg!(SCHEMA, s))?;
        let ([], [mut out]) = ctx.io([], arg!(SCHEMA, [out]))?;
        if out.numel() != 1 {
            return Err(bad("scalar_tensor output is not one element"));
        }
        fill_out(&mut out, value)
    }
);

/// `full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat?
/// memory_format=None, Tensor(a!) out)`: out (self's shape) filled with the
/// overflow-checked value; `memory_format` None, contiguous or preserve
/// (`MemoryFormat::Contiguous` = 0, `Preserve` = 1, as the exporter writes
/// `torch.contiguous_format` / `torch.preserve_format`), else
/// InvalidArgument.
pub const FULL_LIKE_OUT: Kernel = op!(
    "aten::full_like.out(Tensor self, Scalar fill_value, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let value = Scalar::read(ctx, arg!(SCHEMA, fill_value))?;
        if !matches!(ctx.opt_int(arg!(SCHEMA, memory_format))?, None | Some(0) | Some(1)) {
            return Err(bad("full_like memory_format"));
        }
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        if required(x, arg!(SCHEMA, self))?.shape.sizes() != out.shape.sizes() {
            return Err(bad("full_like output shape"));
        }
        fill_out(&mut out, value)
    }
);

/// `arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!)
/// out)`: `out[i] = static_cast(start + i·step)` computed in f64 (upstream
/// `arange_out_impl`); step ≠ 0 and pointing from start to end, and out's
/// length must be `ceil((end − start) / step)`.
pub const ARANGE_START_OUT: Kernel = op!(
    "aten::arange.start_out(Scalar start, Scalar end, Scalar step=1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let f = |s: Scalar| match s.wide() {
            Wide::I(i) => i as f64,
            Wide::F(f) => f,
        };
        let (start, end, step) = (
            f(Scalar::read(ctx, arg!(SCHEMA, start))?),
            f(Scalar::read(ctx, arg!(SCHEMA, end))?),
            f(Scalar::read(ctx, arg!(SCHEMA, step))?),
        );
        let ([], [mut out]) = ctx.io([], arg!(SCHEMA, [out]))?;
        arange(start, end, step, &mut out)
    }
);

/// See [`ARANGE_START_OUT`].
pub fn arange(start: f64, end: f64, step: f64, out: &mut TensorViewMut<'_>) -> Result<()> {
    let ok_dir = (step > 0.0 && end >= start) || (step < 0.0 && end <= start);
    if !ok_dir || out.shape.rank() != 1 || !convert::convertible(out.dtype) {
        return Err(bad("arange arguments"));
    }
    // n == ceil(q) without libm: n = 0 for q ≤ 0, else n − 1 < q ≤ n.
    let (n, q) = (out.numel(), (end - start) / step);
    let nf = n as f64;
    let fits = if n == 0 {
        q <= 0.0
    } else {
        nf - 1.0 < q && q <= nf
    };
    if !fits {
        return Err(bad("arange output length"));
    }
    let elem = elem_size(out.dtype)?;
    for (i, chunk) in out.data.chunks_exact_mut(elem.max(1)).enumerate() {
        let v = start + (i as i32 as f64) * step;
        convert::store(out.dtype, Wide::F(v), chunk)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::testutil::{o, t};
    use etch_runtime::ErrorCode;

    const X: [u8; 6] = [10, 11, 12, 13, 14, 15]; // [2, 3] i8
    use ScalarType as T;

    #[test]
    fn fills_and_arange() {
        let mut buf = [0u8; 12];
        let mut out = o(T::INT, &[3], &mut buf);
        arange(5.0, -1.0, -2.5, &mut out).unwrap();
        assert_eq!(out.as_i32_mut().unwrap(), [5, 2, 0]);
        // Wrong length, wrong direction, zero step.
        assert!(arange(0.0, 4.0, 1.0, &mut o(T::INT, &[3], &mut buf)).is_err());
        assert!(arange(0.0, 3.0, -1.0, &mut o(T::INT, &[3], &mut buf)).is_err());
        assert!(arange(0.0, 3.0, 0.0, &mut o(T::INT, &[3], &mut buf)).is_err());
        // masked_fill: value cast without an overflow check (300 → i8 44), mask broadcast.
        let x = t(T::CHAR, &[2, 3], &X);
        let m = [1u8, 0, 1];
        let mut out6 = [0u8; 6];
        masked_fill(
            &x,
            &t(T::BOOL, &[3], &m),
            Scalar::Int(300),
            &mut o(T::CHAR, &[2, 3], &mut out6),
        )
        .unwrap();
        assert_eq!(out6, [44, 11, 44, 44, 14, 44]);
        let e = masked_fill(
            &x,
            &t(T::CHAR, &[3], &m),
            Scalar::Int(1),
            &mut o(T::CHAR, &[2, 3], &mut out6),
        );
        assert_eq!(e.unwrap_err().code, ErrorCode::InvalidArgument);
    }
}
