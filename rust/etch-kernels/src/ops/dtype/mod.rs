//! Element types as ExecuTorch's portable kernels see them: the promotion
//! table (`promoteTypes`), the weak-scalar rule (`promote_type_with_scalar`),
//! `canCast`, the compute type, and C++ `static_cast` between element types
//! (with the x86-64 float → int behaviour of the reference build:
//! [`f_to_i32`], [`f_to_i64`]).
//!
//! Kernels see tensor data through [`Src`]/[`Dst`] (typed slices, checked
//! once) and element values through [`Num`] (what C++ holds before a
//! `static_cast`); a compute type is an [`Elem`].

// With no dtype selected the typed views have no variants to reach.
#![cfg_attr(
    not(feature = "all-dtypes"),
    allow(unreachable_code, unused_variables, unused_imports, dead_code)
)]

use etch_runtime::{
    Error, ErrorCode, KernelContext, Result, ScalarType, TensorView, TensorViewMut,
};

pub(crate) mod convert;
pub(crate) mod real;

pub(crate) fn invalid(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// A dtype ExecuTorch accepts here but this build did not select
/// (`dtype-*` features), or one etch does not implement (Half, BFloat16,
/// Double tensors).
pub(crate) fn unsupported(dtype: ScalarType) -> Error {
    Error::new(
        ErrorCode::InvalidType,
        "element type not supported by this build",
        dtype.0 as u32,
    )
}

/// One element value as C++ holds it before a `static_cast` (a `Scalar`
/// argument holds bool, int64 or double).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Bool(bool),
    Int(i64),
    F32(f32),
    F64(f64),
}

/// `static_cast<int64_t>(double)` as the x86-64 reference build runs it
/// (`cvttsd2si`, 64-bit): truncation, `i64::MIN` when out of range or NaN.
/// The one float → int conversion of the crate: [`Num`], [`real::Real`] and
/// [`convert`] all go through it and [`f_to_i32`], so one result holds on
/// the device and against the reference. An ExecuTorch build for Cortex-M
/// would saturate (`vcvt`) instead; etch deliberately does not.
pub(crate) fn f_to_i64(f: f64) -> i64 {
    // [-2^63, 2^63)
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// `static_cast<int32_t>(double)` as x86-64 (`cvttsd2si`, 32-bit):
/// truncation, `i32::MIN` when out of range or NaN. Narrower integer
/// targets keep the low bits of this.
pub(crate) fn f_to_i32(f: f64) -> i32 {
    if f > -2_147_483_649.0 && f < 2_147_483_648.0 {
        f as i32
    } else {
        i32::MIN
    }
}

impl Num {
    /// `static_cast<bool>`: nonzero (NaN included) is true.
    pub fn to_bool(self) -> bool {
        match self {
            Num::Bool(b) => b,
            Num::Int(i) => i != 0,
            Num::F32(f) => f != 0.0,
            Num::F64(f) => f != 0.0,
        }
    }
    /// `static_cast<int64_t>`.
    pub fn to_i64(self) -> i64 {
        match self {
            Num::Bool(b) => b as i64,
            Num::Int(i) => i,
            Num::F32(f) => f_to_i64(f as f64),
            Num::F64(f) => f_to_i64(f),
        }
    }
    /// `static_cast` to a 32-bit or narrower integer, before narrowing
    /// (two's-complement wrap, as C++ does).
    pub fn to_i32(self) -> i32 {
        match self {
            Num::Bool(b) => b as i32,
            Num::Int(i) => i as i32,
            Num::F32(f) => f_to_i32(f as f64),
            Num::F64(f) => f_to_i32(f),
        }
    }
    /// `static_cast<float>` (round to nearest even).
    pub fn to_f32(self) -> f32 {
        match self {
            Num::Bool(b) => b as u8 as f32,
            Num::Int(i) => i as f32,
            Num::F32(f) => f,
            Num::F64(f) => f as f32,
        }
    }
    /// `static_cast<double>`.
    pub fn to_f64(self) -> f64 {
        match self {
            Num::Bool(b) => b as u8 as f64,
            Num::Int(i) => i as f64,
            Num::F32(f) => f as f64,
            Num::F64(f) => f,
        }
    }
    /// The dtype of a `Scalar` (`get_scalar_dtype`): Bool, Long or Double.
    pub fn scalar_dtype(self) -> ScalarType {
        match self {
            Num::Bool(_) => ScalarType::BOOL,
            Num::Int(_) => ScalarType::LONG,
            Num::F32(_) | Num::F64(_) => ScalarType::DOUBLE,
        }
    }
}

/// A `Scalar` argument with its kind (Int, Double or Bool) kept: the
/// promotion rules depend on it.
pub fn scalar_arg(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Num> {
    if let Ok(v) = ctx.int(i) {
        return Ok(Num::Int(v));
    }
    if let Ok(v) = ctx.double(i) {
        return Ok(Num::F64(v));
    }
    ctx.bool(i).map(Num::Bool)
}

/// A `Scalar?` argument.
pub fn opt_scalar_arg(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Option<Num>> {
    if ctx.is_null(i)? {
        Ok(None)
    } else {
        scalar_arg(ctx, i).map(Some)
    }
}

pub fn is_float(t: ScalarType) -> bool {
    matches!(
        t,
        ScalarType::FLOAT | ScalarType::DOUBLE | ScalarType::HALF | ScalarType::BFLOAT16
    )
}

/// `isIntegralType(t, include_bool)`.
pub fn is_integral(t: ScalarType, include_bool: bool) -> bool {
    matches!(
        t,
        ScalarType::BYTE
            | ScalarType::CHAR
            | ScalarType::SHORT
            | ScalarType::INT
            | ScalarType::LONG
    ) || (include_bool && t == ScalarType::BOOL)
}

fn is_real_or_bool(t: ScalarType) -> bool {
    is_float(t) || is_integral(t, true)
}

/// `promoteTypes(a, b)` over the real and bool dtypes (c10's table);
/// quantized and bits types, where upstream aborts, are InvalidArgument.
pub fn promote(a: ScalarType, b: ScalarType) -> Result<ScalarType> {
    use ScalarType as S;
    if !is_real_or_bool(a) || !is_real_or_bool(b) {
        return if a == b {
            Ok(a)
        } else {
            Err(invalid("no promotion between these dtypes"))
        };
    }
    Ok(if a == b {
        a
    } else if a == S::BOOL {
        b
    } else if b == S::BOOL {
        a
    } else if is_float(a) && is_float(b) {
        if a == S::DOUBLE || b == S::DOUBLE {
            S::DOUBLE
        } else {
            S::FLOAT // Half/BF16 with Float, or Half with BF16
        }
    } else if is_float(a) {
        a
    } else if is_float(b) {
        b
    } else if a == S::BYTE || b == S::BYTE {
        // u8 with a signed type: the signed type, at least i16.
        let s = if a == S::BYTE { b } else { a };
        if s == S::CHAR {
            S::SHORT
        } else {
            s
        }
    } else if a.0 > b.0 {
        a // i8 < i16 < i32 < i64 follow their codes
    } else {
        b
    })
}

/// `promote_type_with_scalar(t, s)`: the scalar is weak.
pub fn promote_with_scalar(t: ScalarType, s: Num) -> ScalarType {
    match s {
        Num::F32(_) | Num::F64(_) if !is_float(t) => ScalarType::FLOAT,
        Num::Int(_) if t == ScalarType::BOOL => ScalarType::LONG,
        _ => t,
    }
}

/// `canCast(from, to)`: no float → integral, no non-bool → Bool.
pub fn can_cast(from: ScalarType, to: ScalarType) -> bool {
    let float_to_int = is_float(from) && is_integral(to, false);
    let to_bool = from != ScalarType::BOOL && to == ScalarType::BOOL;
    !float_to_int && !to_bool
}

/// `get_compute_type`: Half and BFloat16 compute in Float.
pub fn compute_type(t: ScalarType) -> ScalarType {
    if t == ScalarType::HALF || t == ScalarType::BFLOAT16 {
        ScalarType::FLOAT
    } else {
        t
    }
}

/// A compute type: how a value is made from and turned into a [`Num`].
pub trait Elem: Copy + PartialOrd + Default + 'static {
    const DTYPE: ScalarType;
    /// `numeric_limits<T>::lowest()` and `max()`, as f64.
    const LOWEST_F64: f64;
    const MAX_F64: f64;
    fn from_num(n: Num) -> Self;
    fn to_num(self) -> Num;
    /// The data as `&[Self]` when the tensor's dtype is exactly this type.
    fn slice<'a>(_: &Src<'a>) -> Option<&'a [Self]> {
        None
    }
    fn slice_mut<'a, 'b>(_: &'b mut Dst<'a>) -> Option<&'b mut [Self]> {
        None
    }
}

macro_rules! elem {
    ($t:ty, $dtype:ident, $variant:ident, $feature:literal, $from:expr, $to:expr) => {
        impl Elem for $t {
            const DTYPE: ScalarType = ScalarType::$dtype;
            const LOWEST_F64: f64 = <$t>::MIN as f64;
            const MAX_F64: f64 = <$t>::MAX as f64;
            #[inline]
            fn from_num(n: Num) -> Self {
                let f: fn(Num) -> $t = $from;
                f(n)
            }
            #[inline]
            fn to_num(self) -> Num {
                let f: fn($t) -> Num = $to;
                f(self)
            }
            #[inline]
            fn slice<'a>(s: &Src<'a>) -> Option<&'a [Self]> {
                #[allow(unreachable_patterns)]
                match s {
                    #[cfg(feature = $feature)]
                    Src::$variant(d) => Some(d),
                    _ => None,
                }
            }
            #[inline]
            fn slice_mut<'a, 'b>(s: &'b mut Dst<'a>) -> Option<&'b mut [Self]> {
                #[allow(unreachable_patterns)]
                match s {
                    #[cfg(feature = $feature)]
                    Dst::$variant(d) => Some(d),
                    _ => None,
                }
            }
        }
    };
}

elem!(
    u8,
    BYTE,
    U8,
    "dtype-u8",
    |n| n.to_i32() as u8,
    |v| Num::Int(v as i64)
);
elem!(
    i8,
    CHAR,
    I8,
    "dtype-i8",
    |n| n.to_i32() as i8,
    |v| Num::Int(v as i64)
);
elem!(i16, SHORT, I16, "dtype-i16", |n| n.to_i32() as i16, |v| {
    Num::Int(v as i64)
});
elem!(i32, INT, I32, "dtype-i32", |n| n.to_i32(), |v| Num::Int(
    v as i64
));
elem!(i64, LONG, I64, "dtype-i64", |n| n.to_i64(), Num::Int);
elem!(f32, FLOAT, F32, "dtype-f32", |n| n.to_f32(), Num::F32);

impl Elem for f64 {
    const DTYPE: ScalarType = ScalarType::DOUBLE;
    const LOWEST_F64: f64 = f64::MIN;
    const MAX_F64: f64 = f64::MAX;
    fn from_num(n: Num) -> Self {
        n.to_f64()
    }
    fn to_num(self) -> Num {
        Num::F64(self)
    }
}

impl Elem for bool {
    const DTYPE: ScalarType = ScalarType::BOOL;
    const LOWEST_F64: f64 = 0.0;
    const MAX_F64: f64 = 1.0;
    fn from_num(n: Num) -> Self {
        n.to_bool()
    }
    fn to_num(self) -> Num {
        Num::Bool(self)
    }
}

/// C++ arithmetic in a compute type: integers wrap (computed in `int` and
/// narrowed, as C++ does), floats are IEEE; Bool follows C++ `bool`
/// arithmetic (computed in `int`, nonzero is true).
pub trait Arith: Elem {
    const IS_FLOAT: bool;
    fn zero() -> Self;
    fn one() -> Self;
    /// ±inf (floats; integers never ask).
    fn inf(negative: bool) -> Self;
    fn signbit(self) -> bool;
    /// `std::trunc` (integers unchanged).
    fn trunc(self) -> Self;
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    fn neg(self) -> Self;
    /// `a / b`; integer callers check `b != 0` first (0 here), `MIN / -1` wraps.
    fn div(self, o: Self) -> Self;
    /// `a % b`; integer callers check `b != 0` first (0 here).
    fn rem(self, o: Self) -> Self;
    fn is_nan(self) -> bool {
        false
    }
}

macro_rules! arith_int {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const IS_FLOAT: bool = false;
            fn zero() -> Self { 0 }
            fn one() -> Self { 1 }
            fn inf(_: bool) -> Self { 0 }
            #[allow(unused_comparisons)]
            fn signbit(self) -> bool { self < 0 }
            fn trunc(self) -> Self { self }
            #[inline] fn add(self, o: Self) -> Self { self.wrapping_add(o) }
            #[inline] fn sub(self, o: Self) -> Self { self.wrapping_sub(o) }
            #[inline] fn mul(self, o: Self) -> Self { self.wrapping_mul(o) }
            #[inline] fn neg(self) -> Self { self.wrapping_neg() }
            #[inline] fn div(self, o: Self) -> Self {
                // None for 0 (callers check) and for MIN / -1, which wraps to MIN.
                self.checked_div(o).unwrap_or(if o == 0 { 0 } else { self })
            }
            #[inline] fn rem(self, o: Self) -> Self { self.checked_rem(o).unwrap_or(0) }
        }
    )*};
}
arith_int!(u8, i8, i16, i32, i64);

macro_rules! arith_float {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            const IS_FLOAT: bool = true;
            fn zero() -> Self { 0.0 }
            fn one() -> Self { 1.0 }
            fn inf(negative: bool) -> Self { if negative { -<$t>::INFINITY } else { <$t>::INFINITY } }
            fn signbit(self) -> bool { self.is_sign_negative() }
            fn trunc(self) -> Self { Self::from_num(Num::F64(libm::trunc(self as f64))) }
            #[inline] fn add(self, o: Self) -> Self { self + o }
            #[inline] fn sub(self, o: Self) -> Self { self - o }
            #[inline] fn mul(self, o: Self) -> Self { self * o }
            #[inline] fn neg(self) -> Self { -self }
            #[inline] fn div(self, o: Self) -> Self { self / o }
            #[inline] fn rem(self, o: Self) -> Self { self % o }
            #[inline] fn is_nan(self) -> bool { self != self }
        }
    )*};
}
arith_float!(f32, f64);

impl Arith for bool {
    const IS_FLOAT: bool = false;
    fn zero() -> Self {
        false
    }
    fn one() -> Self {
        true
    }
    fn inf(_: bool) -> Self {
        true
    }
    fn signbit(self) -> bool {
        false
    }
    fn trunc(self) -> Self {
        self
    }
    fn add(self, o: Self) -> Self {
        self | o
    }
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    fn mul(self, o: Self) -> Self {
        self & o
    }
    fn neg(self) -> Self {
        self
    }
    fn div(self, o: Self) -> Self {
        self & o
    }
    fn rem(self, _: Self) -> Self {
        false
    }
}

/// `utils::min_override`: the first NaN wins, else `std::min` (`b < a ? b : a`).
#[inline]
pub fn min_override<T: Arith>(a: T, b: T) -> T {
    if a.is_nan() || !(b.is_nan() || b < a) {
        a
    } else {
        b
    }
}

/// `utils::max_override`: the first NaN wins, else `std::max` (`a < b ? b : a`).
#[inline]
pub fn max_override<T: Arith>(a: T, b: T) -> T {
    if a.is_nan() || !(b.is_nan() || a < b) {
        a
    } else {
        b
    }
}

/// Whether `v` lies in `[lowest, max]` of `T`.
pub fn in_range<T: Elem>(v: f64) -> bool {
    (T::LOWEST_F64..=T::MAX_F64).contains(&v)
}

/// `check_overflow_scalar_cast<T>` (c10 `overflows`): the scalar cast to
/// `T`, or InvalidArgument when it does not fit (floats take ±inf and NaN).
pub fn checked_scalar<T: Arith>(s: Num) -> Result<T> {
    let fits = match s {
        _ if T::DTYPE == ScalarType::BOOL => true, // no overflow into bool
        Num::Bool(_) => true,
        Num::Int(v) if T::DTYPE == ScalarType::BYTE => (-255..=255).contains(&v),
        Num::Int(v) => in_range::<T>(v as f64),
        Num::F32(_) | Num::F64(_) => {
            let f = s.to_f64();
            (T::IS_FLOAT && !f.is_finite()) || in_range::<T>(f)
        }
    };
    if fits {
        Ok(T::from_num(s))
    } else {
        Err(invalid("scalar out of range for the tensor's dtype"))
    }
}

/// A tensor's data as a typed slice (alignment and length checked once).
#[derive(Clone, Copy)]
pub enum Src<'a> {
    /// No data: fills an array of views before the real ones are read, and
    /// keeps the lifetime when no `dtype-*` feature is selected.
    #[allow(dead_code)] // its slice is never read
    Empty(&'a [u8]),
    #[cfg(feature = "dtype-u8")]
    U8(&'a [u8]),
    #[cfg(feature = "dtype-i8")]
    I8(&'a [i8]),
    #[cfg(feature = "dtype-i16")]
    I16(&'a [i16]),
    #[cfg(feature = "dtype-i32")]
    I32(&'a [i32]),
    #[cfg(feature = "dtype-i64")]
    I64(&'a [i64]),
    #[cfg(feature = "dtype-f32")]
    F32(&'a [f32]),
    #[cfg(feature = "dtype-bool")]
    Bool(&'a [u8]),
}

/// A writable tensor's data as a typed slice.
pub enum Dst<'a> {
    /// Keeps the lifetime when no `dtype-*` feature is selected.
    #[allow(dead_code)] // never built
    Empty(&'a mut [u8]),
    #[cfg(feature = "dtype-u8")]
    U8(&'a mut [u8]),
    #[cfg(feature = "dtype-i8")]
    I8(&'a mut [i8]),
    #[cfg(feature = "dtype-i16")]
    I16(&'a mut [i16]),
    #[cfg(feature = "dtype-i32")]
    I32(&'a mut [i32]),
    #[cfg(feature = "dtype-i64")]
    I64(&'a mut [i64]),
    #[cfg(feature = "dtype-f32")]
    F32(&'a mut [f32]),
    #[cfg(feature = "dtype-bool")]
    Bool(&'a mut [u8]),
}

impl<'a> Src<'a> {
    pub fn new(t: &TensorView<'a>) -> Result<Src<'a>> {
        Ok(match t.dtype {
            #[cfg(feature = "dtype-u8")]
            ScalarType::BYTE => Src::U8(t.as_u8()?),
            #[cfg(feature = "dtype-i8")]
            ScalarType::CHAR => Src::I8(t.as_i8()?),
            #[cfg(feature = "dtype-i16")]
            ScalarType::SHORT => Src::I16(t.as_i16()?),
            #[cfg(feature = "dtype-i32")]
            ScalarType::INT => Src::I32(t.as_i32()?),
            #[cfg(feature = "dtype-i64")]
            ScalarType::LONG => Src::I64(t.as_i64()?),
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => Src::F32(t.as_f32()?),
            #[cfg(feature = "dtype-bool")]
            ScalarType::BOOL => Src::Bool(t.data),
            other => return Err(unsupported(other)),
        })
    }

    /// Element `i` as C++ loads it.
    #[inline]
    pub fn get(&self, i: usize) -> Option<Num> {
        Some(match self {
            Src::Empty(_) => return None,
            #[cfg(feature = "dtype-u8")]
            Src::U8(d) => Num::Int(*d.get(i)? as i64),
            #[cfg(feature = "dtype-i8")]
            Src::I8(d) => Num::Int(*d.get(i)? as i64),
            #[cfg(feature = "dtype-i16")]
            Src::I16(d) => Num::Int(*d.get(i)? as i64),
            #[cfg(feature = "dtype-i32")]
            Src::I32(d) => Num::Int(*d.get(i)? as i64),
            #[cfg(feature = "dtype-i64")]
            Src::I64(d) => Num::Int(*d.get(i)?),
            #[cfg(feature = "dtype-f32")]
            Src::F32(d) => Num::F32(*d.get(i)?),
            #[cfg(feature = "dtype-bool")]
            Src::Bool(d) => Num::Bool(*d.get(i)? != 0),
        })
    }
}

impl<'a> Dst<'a> {
    pub fn new(t: &'a mut TensorViewMut<'_>) -> Result<Dst<'a>> {
        Ok(match t.dtype {
            #[cfg(feature = "dtype-u8")]
            ScalarType::BYTE => Dst::U8(t.as_u8_mut()?),
            #[cfg(feature = "dtype-i8")]
            ScalarType::CHAR => Dst::I8(t.as_i8_mut()?),
            #[cfg(feature = "dtype-i16")]
            ScalarType::SHORT => Dst::I16(t.as_i16_mut()?),
            #[cfg(feature = "dtype-i32")]
            ScalarType::INT => Dst::I32(t.as_i32_mut()?),
            #[cfg(feature = "dtype-i64")]
            ScalarType::LONG => Dst::I64(t.as_i64_mut()?),
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => Dst::F32(t.as_f32_mut()?),
            #[cfg(feature = "dtype-bool")]
            ScalarType::BOOL => Dst::Bool(&mut *t.data),
            other => return Err(unsupported(other)),
        })
    }

    /// Stores `v` at `i` with `static_cast` to the element type.
    #[inline]
    pub fn set(&mut self, i: usize, v: Num) -> Option<()> {
        match self {
            Dst::Empty(_) => return None,
            #[cfg(feature = "dtype-u8")]
            Dst::U8(d) => *d.get_mut(i)? = u8::from_num(v),
            #[cfg(feature = "dtype-i8")]
            Dst::I8(d) => *d.get_mut(i)? = i8::from_num(v),
            #[cfg(feature = "dtype-i16")]
            Dst::I16(d) => *d.get_mut(i)? = i16::from_num(v),
            #[cfg(feature = "dtype-i32")]
            Dst::I32(d) => *d.get_mut(i)? = i32::from_num(v),
            #[cfg(feature = "dtype-i64")]
            Dst::I64(d) => *d.get_mut(i)? = i64::from_num(v),
            #[cfg(feature = "dtype-f32")]
            Dst::F32(d) => *d.get_mut(i)? = f32::from_num(v),
            #[cfg(feature = "dtype-bool")]
            Dst::Bool(d) => *d.get_mut(i)? = v.to_bool() as u8,
        }
        Some(())
    }
}

/// Runs `$body` with `$T` bound to the Rust type of compute dtype `$t`, over
/// ExecuTorch's REAL set (`ET_SWITCH_REAL_TYPES`) restricted to the selected
/// `dtype-*` features; `realb` adds Bool, `float` is Float only. Other
/// dtypes: InvalidArgument if upstream's switch rejects them too, InvalidType
/// if only this build does.
macro_rules! switch_dtype {
    (real, $t:expr, $T:ident => $body:expr) => {{
        #[allow(unreachable_patterns)]
        match $t {
            #[cfg(feature = "dtype-u8")]
            ScalarType::BYTE => {
                type $T = u8;
                $body
            }
            #[cfg(feature = "dtype-i8")]
            ScalarType::CHAR => {
                type $T = i8;
                $body
            }
            #[cfg(feature = "dtype-i16")]
            ScalarType::SHORT => {
                type $T = i16;
                $body
            }
            #[cfg(feature = "dtype-i32")]
            ScalarType::INT => {
                type $T = i32;
                $body
            }
            #[cfg(feature = "dtype-i64")]
            ScalarType::LONG => {
                type $T = i64;
                $body
            }
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => {
                type $T = f32;
                $body
            }
            ScalarType::BOOL => Err($crate::ops::dtype::invalid("operator does not take Bool")),
            other => Err($crate::ops::dtype::unsupported(other)),
        }
    }};
    (float, $t:expr, $T:ident => $body:expr) => {{
        match $t {
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => {
                type $T = f32;
                $body
            }
            other if $crate::ops::dtype::is_float(other) => {
                Err($crate::ops::dtype::unsupported(other))
            }
            _ => Err($crate::ops::dtype::invalid(
                "operator takes floating dtypes only",
            )),
        }
    }};
    (realb, $t:expr, $T:ident => $body:expr) => {{
        #[allow(unreachable_patterns)]
        match $t {
            #[cfg(feature = "dtype-u8")]
            ScalarType::BYTE => {
                type $T = u8;
                $body
            }
            #[cfg(feature = "dtype-i8")]
            ScalarType::CHAR => {
                type $T = i8;
                $body
            }
            #[cfg(feature = "dtype-i16")]
            ScalarType::SHORT => {
                type $T = i16;
                $body
            }
            #[cfg(feature = "dtype-i32")]
            ScalarType::INT => {
                type $T = i32;
                $body
            }
            #[cfg(feature = "dtype-i64")]
            ScalarType::LONG => {
                type $T = i64;
                $body
            }
            #[cfg(feature = "dtype-f32")]
            ScalarType::FLOAT => {
                type $T = f32;
                $body
            }
            #[cfg(feature = "dtype-bool")]
            ScalarType::BOOL => {
                type $T = bool;
                $body
            }
            other => Err($crate::ops::dtype::unsupported(other)),
        }
    }};
}
pub(crate) use switch_dtype;

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType as S;

    #[test]
    fn promotion_table() {
        assert_eq!(promote(S::BYTE, S::CHAR).unwrap(), S::SHORT);
        assert_eq!(promote(S::BYTE, S::INT).unwrap(), S::INT);
        assert_eq!(promote(S::CHAR, S::LONG).unwrap(), S::LONG);
        assert_eq!(promote(S::BOOL, S::CHAR).unwrap(), S::CHAR);
        assert_eq!(promote(S::LONG, S::FLOAT).unwrap(), S::FLOAT);
        assert_eq!(promote(S::FLOAT, S::DOUBLE).unwrap(), S::DOUBLE);
        assert_eq!(promote(S::HALF, S::BFLOAT16).unwrap(), S::FLOAT);
        assert_eq!(promote(S::INT, S::BFLOAT16).unwrap(), S::BFLOAT16);
        assert_eq!(
            promote(S::QINT8, S::FLOAT).unwrap_err().code,
            ErrorCode::InvalidArgument
        );
    }

    #[test]
    fn weak_scalars() {
        assert_eq!(promote_with_scalar(S::LONG, Num::F64(0.5)), S::FLOAT);
        assert_eq!(promote_with_scalar(S::BOOL, Num::F64(0.5)), S::FLOAT);
        assert_eq!(promote_with_scalar(S::CHAR, Num::Int(1000)), S::CHAR);
        assert_eq!(promote_with_scalar(S::BOOL, Num::Int(2)), S::LONG);
        assert_eq!(promote_with_scalar(S::BOOL, Num::Bool(true)), S::BOOL);
        assert_eq!(promote_with_scalar(S::FLOAT, Num::Int(2)), S::FLOAT);
    }

    #[test]
    fn can_cast_rules() {
        assert!(!can_cast(S::FLOAT, S::INT));
        assert!(!can_cast(S::INT, S::BOOL));
        assert!(can_cast(S::BOOL, S::FLOAT));
        assert!(can_cast(S::LONG, S::CHAR));
    }

    #[test]
    fn x86_float_to_int_casts() {
        // static_cast as measured on ExecuTorch's x86-64 wheel.
        assert_eq!(u8::from_num(Num::F32(-1.0)), 255);
        assert_eq!(u8::from_num(Num::F32(256.0)), 0);
        assert_eq!(u8::from_num(Num::F32(300.7)), 44);
        assert_eq!(i8::from_num(Num::F32(-129.0)), 127);
        assert_eq!(i8::from_num(Num::F32(255.9)), -1);
        assert_eq!(u8::from_num(Num::F32(1e10)), 0);
        assert_eq!(i8::from_num(Num::F32(f32::NAN)), 0);
        assert_eq!(i32::from_num(Num::F32(f32::INFINITY)), i32::MIN);
        assert_eq!(i32::from_num(Num::F32(-2.9)), -2);
        assert_eq!(i64::from_num(Num::F64(f64::NAN)), i64::MIN);
        assert_eq!(i64::from_num(Num::F64(1e300)), i64::MIN);
        assert!(bool::from_num(Num::F32(f32::NAN)));
        assert_eq!(f32::from_num(Num::Int(16_777_217)), 16_777_216.0);
        assert_eq!(i8::from_num(Num::Int(200)), -56);
    }
}
