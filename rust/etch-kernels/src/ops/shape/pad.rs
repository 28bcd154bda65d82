//! `constant_pad_nd`.

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, Result};

use crate::ops::bad;
use crate::ops::copy::walk::{copy_walk, signed_strides, sizes_of, Side, MAX_WALK};
use crate::ops::dtype::convert::{fill, scalar_bytes, Scalar};

/// `out` = `x` padded with `value`: `pad` holds (before, after) pairs from
/// the last dimension backwards, each ≥ 0 (upstream
/// `check_constant_pad_args`; cropping with negative pads is
/// `InvalidArgument`). The value is cast with the overflow check.
/// Default dim order only: upstream walks both tensors as if contiguous.
pub(crate) fn constant_pad(
    x: &TensorView<'_>,
    pad: &[i64],
    value: Scalar,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if x.dtype != out.dtype || out.shape.rank() != rank {
        return Err(bad("constant_pad_nd dtype or rank"));
    }
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > rank || pad.iter().any(|&p| p < 0) {
        return Err(bad("constant_pad_nd pad"));
    }
    if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(bad("constant_pad_nd of a tensor not in default dim order"));
    }
    let os = out.shape.strides();
    let mut base = 0usize;
    for d in 0..rank {
        let k = rank - 1 - d;
        let before = pad.get(2 * k).copied().unwrap_or(0) as u64;
        let after = pad.get(2 * k + 1).copied().unwrap_or(0) as u64;
        let want = (x.shape.size(d as isize) as u64)
            .checked_add(before)
            .and_then(|s| s.checked_add(after));
        if want != Some(out.shape.size(d as isize) as u64) {
            return Err(bad("constant_pad_nd output shape"));
        }
        base += before as usize * os.get(d).copied().unwrap_or(0);
    }
    let (v, elem) = scalar_bytes(value, out.dtype)?;
    fill(out.data, &v, elem);
    let sizes = sizes_of(&x.shape);
    copy_walk(
        sizes.get(..rank).unwrap_or(&[]),
        x.data,
        Side::new(0, &signed_strides(&x.shape)),
        out.data,
        Side::new(base, &signed_strides(&out.shape)),
        elem,
    )
}

/// `constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *,
/// Tensor(a!) out)`.
pub const CONSTANT_PAD_ND_OUT: Kernel = op!(
    "aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let n = ctx.int_list_len(arg!(SCHEMA, pad))?;
        let mut pad = [0i64; 2 * MAX_WALK];
        if n > pad.len() {
            return Err(bad("constant_pad_nd pad longer than the rank"));
        }
        for (k, p) in pad.iter_mut().take(n).enumerate() {
            *p = ctx.int_list_item(arg!(SCHEMA, pad), k)?;
        }
        let value = Scalar::read(ctx, arg!(SCHEMA, value))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        constant_pad(&required(x, arg!(SCHEMA, self))?, pad.get(..n).unwrap_or(&[]), value, &mut out)
    }
);

#[cfg(test)]
mod pad_tests {
    use super::*;
    use etch_runtime::{ErrorCode, ScalarType, Shape};

    fn out<'a>(buf: &'a mut [u8], sizes: &'a [u32]) -> TensorViewMut<'a> {
        TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(sizes).unwrap(),
            data: &mut buf[..sizes.iter().product::<u32>() as usize],
        }
    }

    #[test]
    fn constant_pad_checks() {
        let data = [1u8, 2, 3, 4];
        let x = TensorView {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[2, 2]).unwrap(),
            data: &data,
        };
        let mut buf = [0u8; 12];
        constant_pad(
            &x,
            &[1, 0, 0, 1],
            Scalar::Int(-1),
            &mut out(&mut buf, &[3, 3]),
        )
        .unwrap();
        assert_eq!(buf[..9], [255, 1, 2, 255, 3, 4, 255, 255, 255]);
        let ia = ErrorCode::InvalidArgument;
        // Negative pad (crop), odd length, too many pairs, value out of range, wrong shape.
        let code = |r: Result<()>| r.unwrap_err().code;
        assert_eq!(
            code(constant_pad(
                &x,
                &[-1, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 1])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[0, 0, 0, 0, 0, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 2])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Int(256),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Double(f64::NAN),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 4])
            )),
            ia
        );
    }
}
