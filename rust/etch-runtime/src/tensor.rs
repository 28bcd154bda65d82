//! Tensor views handed to kernels: dtype, shape (sizes + dim order) and data.

use etch_pte::schema;
use etch_pte::tensor::MAX_RANK;

use crate::{Error, ErrorCode, Result, ScalarType};

/// Sizes and dim order of a tensor (rank ≤ 16), with strides derived from the
/// dim order as ExecuTorch's `dim_order_to_stride` does (strides are not
/// serialized).
///
/// Borrowed, not copied: the sizes are the little-endian 32-bit words of the
/// program's `sizes` vector (or of a kernel's `[u32]`, on the little-endian
/// targets etch supports), the dim order its bytes. Four words, so views of
/// a kernel's arguments stay small on the stack (an owned shape of 16 sizes
/// was 84 bytes per view). Checked when made: rank ≤ 16, sizes
/// non-negative, dim order a permutation.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Shape<'a> {
    /// One little-endian word per dimension (`rank` of them, so that a
    /// checked rank proves the size reads in range).
    sizes: &'a [[u8; 4]],
    dim_order: &'a [u8],
}

#[cfg(target_endian = "big")]
compile_error!("etch reads .pte sizes in place: little-endian targets only");

/// The sizes of a [`Shape`] in logical order, read on demand.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Sizes<'a>(&'a [[u8; 4]]);

impl<'a> Sizes<'a> {
    /// Sizes given as `u32`s (read in place, as a shape's).
    pub fn new(sizes: &'a [u32]) -> Sizes<'a> {
        Sizes(bytemuck::cast_slice(sizes))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// Size of dimension `d`.
    #[inline]
    pub fn get(&self, d: usize) -> Option<u32> {
        self.0.get(d).map(|w| u32::from_le_bytes(*w))
    }
    pub fn first(&self) -> Option<u32> {
        self.get(0)
    }
    pub fn last(&self) -> Option<u32> {
        self.len().checked_sub(1).and_then(|d| self.get(d))
    }
    /// The sizes in order.
    pub fn iter(&self) -> SizesIter<'a> {
        SizesIter(self.0)
    }
    /// Dimensions `range` (empty if out of range), e.g. to compare batch dims.
    pub fn slice(&self, range: core::ops::Range<usize>) -> Option<Sizes<'a>> {
        self.0.get(range).map(Sizes)
    }
    /// The sizes copied out (the first `len()` items; the rest 0).
    pub fn to_array(&self) -> [u32; MAX_RANK] {
        let mut a = [0u32; MAX_RANK];
        for (slot, s) in a.iter_mut().zip(self.iter()) {
            *slot = s;
        }
        a
    }
}

/// Iterator over [`Sizes`]. (Not `chunks_exact`: zipping that divides by
/// a run-time chunk size and links a division-by-zero panic.)
#[derive(Clone)]
pub struct SizesIter<'a>(&'a [[u8; 4]]);

impl Iterator for SizesIter<'_> {
    type Item = u32;
    #[inline]
    fn next(&mut self) -> Option<u32> {
        let (w, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*w))
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.0.len(), Some(self.0.len()))
    }
}

impl DoubleEndedIterator for SizesIter<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<u32> {
        let (w, rest) = self.0.split_last()?;
        self.0 = rest;
        Some(u32::from_le_bytes(*w))
    }
}

impl ExactSizeIterator for SizesIter<'_> {}

impl<'a> IntoIterator for Sizes<'a> {
    type Item = u32;
    type IntoIter = SizesIter<'a>;
    fn into_iter(self) -> SizesIter<'a> {
        self.iter()
    }
}

impl PartialEq<[u32]> for Sizes<'_> {
    fn eq(&self, other: &[u32]) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, &b)| a == b)
    }
}

impl<const N: usize> PartialEq<[u32; N]> for Sizes<'_> {
    fn eq(&self, other: &[u32; N]) -> bool {
        *self == other[..]
    }
}

impl core::fmt::Debug for Sizes<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl core::fmt::Debug for Shape<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Shape")
            .field("sizes", &self.sizes())
            .field("dim_order", &self.dim_order)
            .finish()
    }
}

/// Dim order 0, 1, ..., 15.
pub(crate) const CONTIGUOUS: [u8; MAX_RANK] =
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

/// Checks sizes (`rank` words, each below 2^31) and dim order (a
/// permutation of `0..rank`, rank ≤ 16); `Err(i)` names the bad item.
fn check(sizes: &[[u8; 4]], dim_order: &[u8]) -> core::result::Result<(), u32> {
    let rank = dim_order.len();
    if rank > MAX_RANK || sizes.len() != rank {
        return Err(u32::MAX);
    }
    let mut seen = 0u32;
    for (i, (s, &d)) in SizesIter(sizes).zip(dim_order).enumerate() {
        if s > i32::MAX as u32 || d as usize >= rank || seen & (1 << d) != 0 {
            return Err(i as u32);
        }
        seen |= 1 << d;
    }
    Ok(())
}

impl<'a> Shape<'a> {
    /// A shape from sizes in logical order and a dim order.
    pub fn new(sizes: &'a [u32], dim_order: &'a [u8]) -> Result<Shape<'a>> {
        let sizes = Sizes::new(sizes).0;
        match check(sizes, dim_order) {
            Ok(()) => Ok(Shape { sizes, dim_order }),
            Err(u32::MAX) => Err(Error::new(ErrorCode::InvalidArgument, "bad shape rank", 0)),
            Err(i) => Err(Error::new(
                ErrorCode::InvalidArgument,
                "dim_order is not a permutation or a size is negative",
                i,
            )),
        }
    }

    /// A contiguous shape (dim order 0, 1, ...).
    pub fn contiguous(sizes: &'a [u32]) -> Result<Shape<'a>> {
        Shape::new(sizes, CONTIGUOUS.get(..sizes.len()).unwrap_or(&[]))
    }

    /// The shape of a serialized tensor, borrowed from the program (checked).
    pub fn from_serialized(t: &schema::Tensor<'a>) -> Result<Shape<'a>> {
        let (sizes, _) = t.sizes_bytes()?.as_chunks::<4>();
        let dim_order = t.dim_order_bytes()?;
        match check(sizes, dim_order) {
            Ok(()) => Ok(Shape { sizes, dim_order }),
            Err(_) => Err(Error::new(
                ErrorCode::InvalidProgram,
                "tensor rank, size or dim_order invalid",
                t.position() as u32,
            )),
        }
    }

    /// The shape of a tensor `Method::load` checked with
    /// [`Shape::from_serialized`], from the same bytes again (its decoded
    /// call table, `calls`): only the rank is checked here (the sizes and
    /// the permutation were at load, and the program's bytes are borrowed
    /// immutably for the method's life). `None` if the rank does not hold.
    #[inline]
    pub(crate) fn loaded(sizes: &'a [[u8; 4]], dim_order: &'a [u8]) -> Option<Shape<'a>> {
        (sizes.len() == dim_order.len() && sizes.len() <= MAX_RANK)
            .then_some(Shape { sizes, dim_order })
    }

    /// A shape from run-time sizes (little-endian words) and a serialized
    /// dim order (checked as [`Shape::from_serialized`]).
    pub(crate) fn from_parts(sizes: &'a [[u8; 4]], dim_order: &'a [u8]) -> Result<Shape<'a>> {
        match check(sizes, dim_order) {
            Ok(()) => Ok(Shape { sizes, dim_order }),
            Err(_) => Err(Error::new(
                ErrorCode::InvalidProgram,
                "tensor rank, size or dim_order invalid",
                0,
            )),
        }
    }

    pub fn rank(&self) -> usize {
        self.sizes.len()
    }

    /// The sizes as the little-endian words they are read from.
    pub(crate) fn sizes_bytes(&self) -> &'a [[u8; 4]] {
        self.sizes
    }

    /// Sizes in logical (NCHW-style) order.
    pub fn sizes(&self) -> Sizes<'a> {
        Sizes(self.sizes)
    }

    pub fn dim_order(&self) -> &'a [u8] {
        self.dim_order
    }

    /// Size of dimension `d` (negative counts from the end), 1 if out of range.
    #[inline]
    pub fn size(&self, d: isize) -> usize {
        let d = if d < 0 { d + self.rank() as isize } else { d };
        if d < 0 {
            return 1;
        }
        self.sizes().get(d as usize).map_or(1, |s| s as usize)
    }

    /// Number of elements (saturating; shapes from a checked file never saturate).
    pub fn numel(&self) -> usize {
        self.sizes()
            .iter()
            .fold(1usize, |n, s| n.saturating_mul(s as usize))
    }

    /// Strides in elements, in logical dimension order.
    pub fn strides(&self) -> [usize; MAX_RANK] {
        let mut strides = [0usize; MAX_RANK];
        let mut step = 1usize;
        for &d in self.dim_order().iter().rev() {
            let d = d as usize;
            if let (Some(st), Some(sz)) = (strides.get_mut(d), self.sizes().get(d)) {
                *st = step;
                step = step.saturating_mul((sz as usize).max(1));
            }
        }
        strides
    }

    /// Whether elements are laid out in logical order.
    pub fn is_contiguous(&self) -> bool {
        self.memory_order_matches(&CONTIGUOUS)
    }

    /// Upstream's `is_channels_last_tensor` for rank 4: dim order `[0,2,3,1]`,
    /// or an order that puts the same bytes there (C == 1, or H == W == 1).
    pub fn is_channels_last(&self) -> bool {
        self.rank() == 4 && self.memory_order_matches(&[0, 2, 3, 1])
    }

    /// Whether this shape lays bytes out exactly as `order` would: orders
    /// differing only in where size-1 dimensions go are equivalent.
    pub fn memory_order_matches(&self, order: &[u8]) -> bool {
        let rank = self.rank();
        let Some(order) = order.get(..rank) else {
            return false;
        };
        let mut a = self
            .dim_order()
            .iter()
            .filter(|&&d| self.size(d as isize) != 1);
        let mut b = order.iter().filter(|&&d| self.size(d as isize) != 1);
        loop {
            match (a.next(), b.next()) {
                (None, None) => return true,
                (Some(x), Some(y)) if x == y => continue,
                _ => return false,
            }
        }
    }

    /// Sizes as NHWC `(n, h, w, c)` for a rank-4 logical NCHW shape.
    pub fn nhwc(&self) -> Option<(usize, usize, usize, usize)> {
        (self.rank() == 4).then(|| (self.size(0), self.size(2), self.size(3), self.size(1)))
    }
}

fn cast_err(_: bytemuck::PodCastError) -> Error {
    Error::new(
        ErrorCode::InvalidArgument,
        "tensor data misaligned or of the wrong length",
        0,
    )
}

fn check_dtype(actual: ScalarType, wanted: ScalarType) -> Result<()> {
    if actual == wanted {
        Ok(())
    } else {
        Err(Error::new(
            ErrorCode::InvalidType,
            "tensor has an unexpected dtype",
            actual.0 as u32,
        ))
    }
}

/// A read-only tensor: constants in flash or planned data in an arena.
#[derive(Clone, Copy, Debug)]
pub struct TensorView<'d> {
    pub dtype: ScalarType,
    pub shape: Shape<'d>,
    pub data: &'d [u8],
}

/// A writable tensor (a kernel's output or scratch).
#[derive(Debug)]
pub struct TensorViewMut<'d> {
    pub dtype: ScalarType,
    pub shape: Shape<'d>,
    pub data: &'d mut [u8],
}

macro_rules! typed_access {
    ($($name:ident, $name_mut:ident, $t:ty, $dtype:expr;)*) => {
        impl<'d> TensorView<'d> {
            $(
                #[doc = concat!("The data as `", stringify!($t), "` (dtype checked).")]
                pub fn $name(&self) -> Result<&'d [$t]> {
                    check_dtype(self.dtype, $dtype)?;
                    bytemuck::try_cast_slice(self.data).map_err(cast_err)
                }
            )*
        }
        impl<'d> TensorViewMut<'d> {
            $(
                #[doc = concat!("The data as `", stringify!($t), "` (dtype checked).")]
                pub fn $name_mut(&mut self) -> Result<&mut [$t]> {
                    check_dtype(self.dtype, $dtype)?;
                    bytemuck::try_cast_slice_mut(self.data).map_err(cast_err)
                }
            )*
        }
    };
}

typed_access! {
    as_u8, as_u8_mut, u8, ScalarType::BYTE;
    as_i8, as_i8_mut, i8, ScalarType::CHAR;
    as_i16, as_i16_mut, i16, ScalarType::SHORT;
    as_i32, as_i32_mut, i32, ScalarType::INT;
    as_i64, as_i64_mut, i64, ScalarType::LONG;
    as_f32, as_f32_mut, f32, ScalarType::FLOAT;
    as_f64, as_f64_mut, f64, ScalarType::DOUBLE;
}

impl<'d> TensorView<'d> {
    pub fn numel(&self) -> usize {
        self.shape.numel()
    }
}

impl<'d> TensorViewMut<'d> {
    /// A zero-sized placeholder.
    pub fn empty() -> Self {
        TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape {
                sizes: &[],
                dim_order: &[],
            },
            data: &mut [],
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.numel()
    }

    /// A read-only view of the same tensor.
    pub fn as_view(&self) -> TensorView<'_> {
        TensorView {
            dtype: self.dtype,
            shape: self.shape,
            data: self.data,
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;

    #[test]
    fn strides_follow_dim_order() {
        let s = Shape::new(&[1, 64, 25, 5], &[0, 2, 3, 1]).unwrap();
        assert_eq!(&s.strides()[..4], &[8000, 1, 320, 64]);
        assert!(s.is_channels_last());
        assert!(!s.is_contiguous());
        let c = Shape::new(&[1, 1, 49, 10], &[0, 2, 1, 3]).unwrap();
        assert!(c.is_channels_last() && c.is_contiguous());
        assert_eq!(&c.strides()[..4], &[490, 10, 10, 1]);
    }

    #[test]
    fn bad_dim_order_rejected() {
        assert!(Shape::new(&[2, 2], &[0, 0]).is_err());
        assert!(Shape::new(&[2, 2], &[0, 2]).is_err());
        assert!(Shape::new(&[2, 2], &[0]).is_err());
        assert!(
            Shape::new(&[2, 1 << 31], &[0, 1]).is_err(),
            "negative as i32"
        );
        assert!(Shape::contiguous(&[1; 17]).is_err());
        assert_eq!(Shape::contiguous(&[1; 16]).unwrap().rank(), 16);
    }

    #[test]
    fn sizes_are_read_in_place() {
        let s = Shape::new(&[1, 64, 25, 5], &[0, 2, 3, 1]).unwrap();
        let sizes = s.sizes();
        assert_eq!(sizes.len(), 4);
        assert_eq!(sizes.iter().collect::<std::vec::Vec<_>>(), [1, 64, 25, 5]);
        assert_eq!(sizes.iter().next_back(), Some(5));
        assert_eq!(
            (sizes.first(), sizes.last(), sizes.get(4)),
            (Some(1), Some(5), None)
        );
        assert_eq!(sizes, [1, 64, 25, 5]);
        assert_ne!(sizes, [1, 64, 25]);
        assert_eq!(sizes.slice(1..3), Some(Sizes::new(&[64, 25])));
        assert_eq!(sizes.slice(3..5), None);
        assert_eq!(&sizes.to_array()[..5], &[1, 64, 25, 5, 0]);
        assert_eq!(
            (s.size(-1), s.size(1), s.size(4), s.size(-5)),
            (5, 64, 1, 1)
        );
        assert_eq!(s.numel(), 8000);
        assert_eq!(s.nhwc(), Some((1, 25, 5, 64)));
        assert_eq!(
            std::format!("{s:?}"),
            "Shape { sizes: [1, 64, 25, 5], dim_order: [0, 2, 3, 1] }"
        );
        let empty = TensorViewMut::empty();
        assert_eq!((empty.shape.rank(), empty.numel()), (0, 1));
    }

    #[test]
    fn serialized_shape_borrows_the_program() {
        // A Tensor table built by hand: root offset, vtable, table, vectors.
        // vtable (12 bytes at 4): vtable size 12, table size 12, slots:
        // scalar_type absent, storage_offset absent, sizes at +4, dim_order at +8.
        let mut b = std::vec![0u8; 64];
        b[0..4].copy_from_slice(&16u32.to_le_bytes()); // root table at 16
        let vt: [u16; 6] = [12, 12, 0, 0, 4, 8];
        for (k, v) in vt.iter().enumerate() {
            b[4 + 2 * k..6 + 2 * k].copy_from_slice(&v.to_le_bytes());
        }
        b[16..20].copy_from_slice(&12i32.to_le_bytes()); // soffset to vtable at 4
        b[20..24].copy_from_slice(&8u32.to_le_bytes()); // sizes at 28
        b[24..28].copy_from_slice(&20u32.to_le_bytes()); // dim_order at 44
        b[28..32].copy_from_slice(&3u32.to_le_bytes());
        for (k, v) in [1i32, 10, 49].iter().enumerate() {
            b[32 + 4 * k..36 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        b[44..48].copy_from_slice(&3u32.to_le_bytes());
        b[48..51].copy_from_slice(&[0, 2, 1]);
        let t = schema::Tensor(etch_pte::Table::at(&b, 16).unwrap());
        let s = Shape::from_serialized(&t).unwrap();
        assert_eq!(s.sizes(), [1, 10, 49]);
        assert_eq!(s.dim_order(), &[0, 2, 1]);
        assert_eq!(s.strides()[..3], [490, 1, 10]);
        // A negative size and a dim order of the wrong length are refused,
        // at the tensor's table.
        let at16 = Error::new(ErrorCode::InvalidProgram, "", 16).at();
        let mut neg = b.clone();
        neg[36..40].copy_from_slice(&(-10i32).to_le_bytes());
        let t = schema::Tensor(etch_pte::Table::at(&neg, 16).unwrap());
        let e = Shape::from_serialized(&t).unwrap_err();
        assert_eq!((e.code, e.at()), (ErrorCode::InvalidProgram, at16));
        let mut short = b.clone();
        short[44..48].copy_from_slice(&2u32.to_le_bytes());
        let t = schema::Tensor(etch_pte::Table::at(&short, 16).unwrap());
        let e = Shape::from_serialized(&t).unwrap_err();
        assert_eq!((e.code, e.at()), (ErrorCode::InvalidProgram, at16));
    }
}
