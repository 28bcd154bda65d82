//! Element conversions between f32, f64, i8, u8, i16, i32, i64 and bool
//! (`static_cast` semantics) and `Scalar` arguments
//! (`check_overflow_scalar_cast`).
//!
//! float → int truncates toward zero. Out of range (and NaN, ±inf) the C++
//! cast is undefined; etch reproduces, on every target, what the x86-64
//! ExecuTorch wheel measurably does, so one result holds on the device and
//! against the reference: i32/i64 targets get `INT_MIN`/`INT64_MIN`, u8/i8/i16
//! go through that i32 value and keep its low bits (−1.0 → u8 255, 300.7 → u8
//! 44, 1e10/NaN/inf → 0). An ExecuTorch build for Cortex-M would saturate
//! (`vcvt`) instead; etch deliberately does not.

use etch_runtime::{Error, ErrorCode, KernelContext, Result, ScalarType};

use super::{f_to_i32, f_to_i64};
use crate::ops::bad;

/// One element, widened: every supported dtype's values fit one of these
/// exactly (f32 in f64, integers and bool in i64).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wide {
    I(i64),
    F(f64),
}

/// Whether etch converts to and from `dtype`.
pub(crate) fn convertible(dtype: ScalarType) -> bool {
    matches!(
        dtype,
        ScalarType::FLOAT
            | ScalarType::DOUBLE
            | ScalarType::CHAR
            | ScalarType::BYTE
            | ScalarType::SHORT
            | ScalarType::INT
            | ScalarType::LONG
            | ScalarType::BOOL
    )
}

fn unsupported() -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        "dtype not supported by the conversion",
        0,
    )
}

/// Reads the element of `dtype` at the start of `b` (little-endian).
pub(crate) fn load(dtype: ScalarType, b: &[u8]) -> Result<Wide> {
    fn arr<const N: usize>(b: &[u8]) -> Result<[u8; N]> {
        b.get(..N)
            .and_then(|s| s.try_into().ok())
            .ok_or(bad("element outside its tensor"))
    }
    Ok(match dtype {
        ScalarType::FLOAT => Wide::F(f32::from_le_bytes(arr(b)?) as f64),
        ScalarType::DOUBLE => Wide::F(f64::from_le_bytes(arr(b)?)),
        ScalarType::CHAR => Wide::I(i8::from_le_bytes(arr(b)?) as i64),
        ScalarType::BYTE => Wide::I(u8::from_le_bytes(arr(b)?) as i64),
        ScalarType::SHORT => Wide::I(i16::from_le_bytes(arr(b)?) as i64),
        ScalarType::INT => Wide::I(i32::from_le_bytes(arr(b)?) as i64),
        ScalarType::LONG => Wide::I(i64::from_le_bytes(arr(b)?)),
        ScalarType::BOOL => Wide::I((u8::from_le_bytes(arr(b)?) != 0) as i64),
        _ => return Err(unsupported()),
    })
}

/// `static_cast<dtype>(v)` as little-endian bytes at the start of `out`.
pub(crate) fn store(dtype: ScalarType, v: Wide, out: &mut [u8]) -> Result<()> {
    fn put<const N: usize>(out: &mut [u8], bytes: [u8; N]) -> Result<()> {
        let dst = out.get_mut(..N).ok_or(bad("element outside its tensor"))?;
        etch_runtime::memory::copy_slice(dst, &bytes);
        Ok(())
    }
    // Integer targets narrower than 32 bits take the low bits of the i32
    // (float) or i64 (integer) value: two's complement wrap.
    let wide = |v: Wide| match v {
        Wide::I(i) => i,
        Wide::F(f) => f_to_i32(f) as i64,
    };
    match dtype {
        ScalarType::FLOAT => put(
            out,
            match v {
                Wide::I(i) => i as f32,
                Wide::F(f) => f as f32,
            }
            .to_le_bytes(),
        ),
        ScalarType::DOUBLE => put(
            out,
            match v {
                Wide::I(i) => i as f64,
                Wide::F(f) => f,
            }
            .to_le_bytes(),
        ),
        ScalarType::CHAR => put(out, (wide(v) as i8).to_le_bytes()),
        ScalarType::BYTE => put(out, (wide(v) as u8).to_le_bytes()),
        ScalarType::SHORT => put(out, (wide(v) as i16).to_le_bytes()),
        ScalarType::INT => put(out, (wide(v) as i32).to_le_bytes()),
        ScalarType::LONG => put(
            out,
            match v {
                Wide::I(i) => i,
                Wide::F(f) => f_to_i64(f),
            }
            .to_le_bytes(),
        ),
        ScalarType::BOOL => put(
            out,
            [match v {
                Wide::I(i) => i != 0,
                Wide::F(f) => f != 0.0, // NaN → true
            } as u8],
        ),
        _ => Err(unsupported()),
    }
}

/// A `Scalar` argument as the program stores it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scalar {
    Bool(bool),
    Int(i64),
    Double(f64),
}

impl Scalar {
    /// Argument `i` of `ctx`, which must be a Scalar (Bool, Int or Double).
    pub fn read(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Scalar> {
        if let Ok(v) = ctx.int(i) {
            Ok(Scalar::Int(v))
        } else if let Ok(v) = ctx.bool(i) {
            Ok(Scalar::Bool(v))
        } else {
            ctx.double(i).map(Scalar::Double)
        }
    }

    /// The scalar widened (`scalar_to<CTYPE>`'s source value).
    pub fn wide(self) -> Wide {
        match self {
            Scalar::Bool(b) => Wide::I(b as i64),
            Scalar::Int(i) => Wide::I(i),
            Scalar::Double(d) => Wide::F(d),
        }
    }

    /// `check_overflow_scalar_cast<dtype>`: the value cast to `dtype`, or
    /// `InvalidArgument` where `c10::overflows` says it does not fit. Bool
    /// values and bool targets never overflow; an Int into an unsigned
    /// type may be negative down to −max (it wraps); a Double must lie in
    /// `[lowest, max]` (±inf and NaN pass only into floating types).
    pub fn cast(self, dtype: ScalarType, out: &mut [u8]) -> Result<()> {
        let (lo, hi): (f64, f64) = match dtype {
            ScalarType::FLOAT => (f32::MIN as f64, f32::MAX as f64),
            ScalarType::DOUBLE | ScalarType::BOOL => (f64::NEG_INFINITY, f64::INFINITY),
            ScalarType::CHAR => (-128.0, 127.0),
            ScalarType::BYTE => (0.0, 255.0),
            ScalarType::SHORT => (-32768.0, 32767.0),
            ScalarType::INT => (-2147483648.0, 2147483647.0),
            ScalarType::LONG => (-9223372036854775808.0, 9223372036854775807.0),
            _ => return Err(unsupported()),
        };
        let floating = matches!(dtype, ScalarType::FLOAT | ScalarType::DOUBLE);
        let overflows = match self {
            _ if dtype == ScalarType::BOOL => false,
            Scalar::Bool(_) => false,
            Scalar::Int(i) => {
                let (lo, hi) = (lo as i128, hi as i128);
                let i = i as i128;
                if dtype == ScalarType::BYTE {
                    i > hi || i < -hi
                } else {
                    !floating && (i < lo || i > hi)
                }
            }
            Scalar::Double(d) if floating => d.is_finite() && (d < lo || d > hi),
            Scalar::Double(d) => d.is_nan() || d < lo || d > hi,
        };
        if overflows {
            return Err(bad("scalar value out of the dtype's range"));
        }
        store(dtype, self.wide(), out)
    }
}

/// A value of `dtype` as bytes (for fills): the scalar after
/// [`Scalar::cast`], and the element size.
pub(crate) fn scalar_bytes(s: Scalar, dtype: ScalarType) -> Result<([u8; 8], usize)> {
    let mut b = [0u8; 8];
    s.cast(dtype, &mut b)?;
    Ok((b, dtype.element_size().ok_or(unsupported())?))
}

/// Fills `dst` with the element `value` (`elem` bytes).
pub(crate) fn fill(dst: &mut [u8], value: &[u8; 8], elem: usize) {
    let v = value.get(..elem).unwrap_or(&[]);
    for chunk in dst.chunks_exact_mut(elem.max(1)) {
        if chunk.len() == v.len() {
            etch_runtime::memory::copy_slice(chunk, v);
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    fn conv(from: Wide, to: ScalarType) -> Vec<u8> {
        let mut b = [0u8; 8];
        store(to, from, &mut b).unwrap();
        b[..to.element_size().unwrap()].to_vec()
    }

    #[test]
    fn float_to_int_follows_the_x86_reference() {
        use ScalarType as T;
        // Truncation toward zero in range.
        assert_eq!(conv(Wide::F(-2.9), T::INT), (-2i32).to_le_bytes());
        assert_eq!(conv(Wide::F(2.9), T::CHAR), [2]);
        // Out of range, NaN, inf: INT_MIN, then the low bits.
        assert_eq!(conv(Wide::F(-1.0), T::BYTE), [255]);
        assert_eq!(conv(Wide::F(256.0), T::BYTE), [0]);
        assert_eq!(conv(Wide::F(300.7), T::BYTE), [44]);
        assert_eq!(conv(Wide::F(-129.0), T::CHAR), [127]);
        assert_eq!(conv(Wide::F(255.9), T::CHAR), [255]);
        assert_eq!(conv(Wide::F(40000.0), T::SHORT), (-25536i16).to_le_bytes());
        for v in [1e10, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(conv(Wide::F(v), T::BYTE), [0]);
            assert_eq!(conv(Wide::F(v), T::INT), i32::MIN.to_le_bytes());
        }
        for v in [1e19, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(conv(Wide::F(v), T::LONG), i64::MIN.to_le_bytes());
        }
        assert_eq!(
            conv(Wide::F(1e10), T::LONG),
            10_000_000_000i64.to_le_bytes()
        );
        // Bool: != 0, NaN is true; int wraps; int → float rounds to nearest even.
        assert_eq!(conv(Wide::F(f64::NAN), T::BOOL), [1]);
        assert_eq!(conv(Wide::F(-0.0), T::BOOL), [0]);
        assert_eq!(conv(Wide::I(-1), T::BYTE), [255]);
        assert_eq!(
            conv(Wide::I(16_777_217), T::FLOAT),
            16_777_216f32.to_le_bytes()
        );
    }

    #[test]
    fn scalar_overflow_rules() {
        use ScalarType as T;
        let ok = |s: Scalar, t: T| scalar_bytes(s, t).map(|(b, n)| b[..n].to_vec());
        let ia = |s: Scalar, t: T| scalar_bytes(s, t).unwrap_err().code;
        assert_eq!(ok(Scalar::Int(-255), T::BYTE).unwrap(), [1]);
        assert_eq!(ia(Scalar::Int(-256), T::BYTE), ErrorCode::InvalidArgument);
        assert_eq!(ia(Scalar::Int(256), T::BYTE), ErrorCode::InvalidArgument);
        assert_eq!(ia(Scalar::Int(128), T::CHAR), ErrorCode::InvalidArgument);
        assert_eq!(ok(Scalar::Double(-128.0), T::CHAR).unwrap(), [128]);
        // c10::overflows compares before truncating: 127.9 > 127.
        assert_eq!(
            ia(Scalar::Double(127.9), T::CHAR),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            ia(Scalar::Double(127.5 + 0.5), T::CHAR),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            ia(Scalar::Double(f64::NAN), T::INT),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            ia(Scalar::Double(f64::INFINITY), T::LONG),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            ia(Scalar::Double(1e39), T::FLOAT),
            ErrorCode::InvalidArgument
        );
        assert_eq!(
            ok(Scalar::Double(f64::NEG_INFINITY), T::FLOAT).unwrap(),
            f32::NEG_INFINITY.to_le_bytes()
        );
        assert_eq!(
            ok(Scalar::Int(i64::MAX), T::FLOAT).unwrap(),
            9.223372e18f32.to_le_bytes()
        );
        assert_eq!(ok(Scalar::Double(0.5), T::BOOL).unwrap(), [1]);
        assert_eq!(ok(Scalar::Int(7), T::BOOL).unwrap(), [1]);
        assert_eq!(
            ok(Scalar::Bool(true), T::DOUBLE).unwrap(),
            1f64.to_le_bytes()
        );
    }
}
