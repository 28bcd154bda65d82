//! Element types for kernels generic over dtype: [`Real`] gives each real
//! dtype ExecuTorch's `static_cast` conversions and C++ arithmetic
//! (integers wrap), and [`for_real_dtypes!`](crate::for_real_dtypes) turns a
//! runtime `ScalarType` into a type parameter, one arm per selected
//! `dtype-*` feature. [`loader`] erases an input's dtype behind a function
//! pointer that loads one element converted to the compute type, as
//! upstream's `get_load_to_compute_fn` does, so a kernel is monomorphized per
//! compute type only.

// Generic helpers that only unselected element types (`dtype-*` features)
// reach are unused in such builds.
#![cfg_attr(not(feature = "all-dtypes"), allow(dead_code))]

use etch_runtime::{Error, ErrorCode, Result, ScalarType};

use super::{f_to_i32, f_to_i64};

/// A real element type (Float, Double and the integer types).
pub(crate) trait Real: Copy + PartialOrd + bytemuck::Pod {
    const ZERO: Self;
    /// `static_cast<Self>(double)`: round to nearest for floats; for
    /// integers the x86-64 reference's conversion (truncate; out of range
    /// or NaN gives the minimum for 32/64-bit, the low bits of the 32-bit
    /// conversion for narrower types).
    fn from_f64(v: f64) -> Self;
    /// `static_cast<Self>(int64_t)`: wraps for integers, rounds for floats.
    fn from_i64(v: i64) -> Self;
    /// `static_cast<T>(self)`.
    fn cast<T: Real>(self) -> T;
    /// `a + b` in the type (integers wrap).
    fn add(self, b: Self) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! real_float {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            #[inline]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline]
            fn cast<T: Real>(self) -> T {
                T::from_f64(self as f64)
            }
            #[inline]
            fn add(self, b: Self) -> Self {
                self + b
            }
            #[inline]
            fn is_nan(self) -> bool {
                self.is_nan()
            }
        }
    };
}

macro_rules! real_int {
    ($t:ty, $from_f64:expr) => {
        impl Real for $t {
            const ZERO: Self = 0;
            #[inline]
            fn from_f64(v: f64) -> Self {
                $from_f64(v)
            }
            #[inline]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline]
            fn cast<T: Real>(self) -> T {
                T::from_i64(self as i64)
            }
            #[inline]
            fn add(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            #[inline]
            fn is_nan(self) -> bool {
                false
            }
        }
    };
}

real_float!(f32);
real_float!(f64);
real_int!(u8, |v| f_to_i32(v) as u8);
real_int!(i8, |v| f_to_i32(v) as i8);
real_int!(i16, |v| f_to_i32(v) as i16);
real_int!(i32, f_to_i32);
real_int!(i64, f_to_i64);

/// `match dtype { FLOAT => { type T = f32; body } ... }` over the real
/// dtypes this build selected (`dtype-*` features); `other` for the rest.
#[macro_export]
#[doc(hidden)]
macro_rules! for_real_dtypes {
    ($dtype:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $dtype {
            #[cfg(feature = "dtype-f32")]
            etch_runtime::ScalarType::FLOAT => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            #[cfg(feature = "dtype-i8")]
            etch_runtime::ScalarType::CHAR => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            #[cfg(feature = "dtype-u8")]
            etch_runtime::ScalarType::BYTE => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            #[cfg(feature = "dtype-i16")]
            etch_runtime::ScalarType::SHORT => {
                #[allow(dead_code)]
                type $T = i16;
                $body
            }
            #[cfg(feature = "dtype-i32")]
            etch_runtime::ScalarType::INT => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            #[cfg(feature = "dtype-i64")]
            etch_runtime::ScalarType::LONG => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            _ => $other,
        }
    };
}

/// Loads element `i` of raw tensor bytes converted to the compute type.
pub(crate) type Load<A> = fn(&[u8], usize) -> Option<A>;

fn load<T: Real, A: Real>(data: &[u8], i: usize) -> Option<A> {
    let size = core::mem::size_of::<T>();
    let bytes = data.get(i.checked_mul(size)?..)?.get(..size)?;
    Some(bytemuck::pod_read_unaligned::<T>(bytes).cast::<A>())
}

/// The loader of `dtype` elements as `A` (`static_cast<A>`), or
/// `InvalidArgument` for a dtype this build does not handle (upstream's
/// dtype switch fails the same way).
pub(crate) fn loader<A: Real>(dtype: ScalarType) -> Result<Load<A>> {
    crate::for_real_dtypes!(dtype, T => Ok(load::<T, A> as Load<A>), _ => Err(Error::new(
        ErrorCode::InvalidArgument,
        "unsupported input dtype",
        dtype.0 as u32,
    )))
}

/// Typed view of raw tensor bytes (dtype checked by the caller).
pub(crate) fn slice<T: Real>(data: &[u8]) -> Result<&[T]> {
    bytemuck::try_cast_slice(data).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            "tensor data misaligned or of the wrong length",
            0,
        )
    })
}

/// Typed mutable view of raw tensor bytes (dtype checked by the caller).
pub(crate) fn slice_mut<T: Real>(data: &mut [u8]) -> Result<&mut [T]> {
    bytemuck::try_cast_slice_mut(data).map_err(|_| {
        Error::new(
            ErrorCode::InvalidArgument,
            "tensor data misaligned or of the wrong length",
            0,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_the_x86_reference() {
        assert_eq!(u8::from_f64(-1.0), 255);
        assert_eq!(u8::from_f64(256.0), 0);
        assert_eq!(u8::from_f64(300.7), 44);
        assert_eq!(i8::from_f64(-129.0), 127);
        assert_eq!(i8::from_f64(f64::NAN), 0);
        assert_eq!(i32::from_f64(1e10), i32::MIN);
        assert_eq!(i64::from_f64(f64::INFINITY), i64::MIN);
        assert_eq!(i64::from_f64(-2.7), -2);
        assert_eq!(300i32.cast::<i8>(), 44);
        assert_eq!(16_777_217i64.cast::<f32>(), 16_777_216.0);
        assert_eq!(127i8.add(1), -128);
    }

    #[test]
    fn loader_converts_and_bounds_checks() {
        let bytes = [1u8, 0xff];
        let l = loader::<i64>(ScalarType::CHAR).unwrap();
        assert_eq!(l(&bytes, 1), Some(-1));
        assert_eq!(l(&bytes, 2), None);
        assert_eq!(l(&bytes, usize::MAX), None);
        assert!(loader::<f32>(ScalarType(11)).is_err());
    }
}
