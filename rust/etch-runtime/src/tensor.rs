//! Tensor views handed to kernels: dtype, shape (sizes + dim order) and data.

use etch_pte::schema;
use etch_pte::tensor::MAX_RANK;

use crate::{Error, ErrorCode, Result, ScalarType};

/// Sizes and dim order of a tensor (rank ≤ 16), with strides derived from the
/// dim order as ExecuTorch's `dim_order_to_stride` does (strides are not
/// serialized).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Shape {
    rank: u8,
    sizes: [u32; MAX_RANK],
    dim_order: [u8; MAX_RANK],
}

impl Shape {
    /// A shape from sizes in logical order and a dim order.
    pub fn new(sizes: &[u32], dim_order: &[u8]) -> Result<Shape> {
        let rank = sizes.len();
        if rank > MAX_RANK || dim_order.len() != rank {
            return Err(Error::new(ErrorCode::InvalidArgument, "bad shape rank", 0));
        }
        let mut s = Shape {
            rank: rank as u8,
            sizes: [0; MAX_RANK],
            dim_order: [0; MAX_RANK],
        };
        let mut seen = 0u32;
        for (i, (&size, &d)) in sizes.iter().zip(dim_order).enumerate() {
            if d as usize >= rank || seen & (1 << d) != 0 {
                return Err(Error::new(
                    ErrorCode::InvalidArgument,
                    "dim_order is not a permutation",
                    i as u32,
                ));
            }
            seen |= 1 << d;
            // Checked writes: `i < rank <= 16`, but the optimiser does not
            // always see it and an index would link the panic path.
            if let (Some(sz), Some(o)) = (s.sizes.get_mut(i), s.dim_order.get_mut(i)) {
                (*sz, *o) = (size, d);
            }
        }
        Ok(s)
    }

    /// A contiguous shape (dim order 0, 1, ...).
    pub fn contiguous(sizes: &[u32]) -> Result<Shape> {
        const ORDER: [u8; MAX_RANK] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
        Shape::new(sizes, ORDER.get(..sizes.len()).unwrap_or(&[]))
    }

    /// Reads the shape of a serialized tensor (checked).
    pub fn from_serialized(t: &schema::Tensor<'_>) -> Result<Shape> {
        let sizes = t.sizes()?;
        let order = t.dim_order()?;
        if sizes.len() > MAX_RANK || order.len() != sizes.len() {
            return Err(Error::new(
                ErrorCode::InvalidProgram,
                "tensor rank or dim_order invalid",
                t.position() as u32,
            ));
        }
        let mut buf = [0u32; MAX_RANK];
        for (slot, s) in buf.iter_mut().zip(sizes.iter()) {
            let s = s?;
            *slot = u32::try_from(s).map_err(|_| {
                Error::new(
                    ErrorCode::InvalidProgram,
                    "negative tensor size",
                    t.position() as u32,
                )
            })?;
        }
        Shape::new(buf.get(..sizes.len()).unwrap_or(&[]), order.bytes())
            .map_err(|e| Error::new(ErrorCode::InvalidProgram, e.what(), t.position() as u32))
    }

    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Sizes in logical (NCHW-style) order.
    pub fn sizes(&self) -> &[u32] {
        self.sizes.get(..self.rank()).unwrap_or(&[])
    }

    pub fn dim_order(&self) -> &[u8] {
        self.dim_order.get(..self.rank()).unwrap_or(&[])
    }

    /// Size of dimension `d` (negative counts from the end), 1 if out of range.
    pub fn size(&self, d: isize) -> usize {
        let d = if d < 0 { d + self.rank as isize } else { d };
        if d < 0 {
            return 1;
        }
        self.sizes().get(d as usize).map_or(1, |&s| s as usize)
    }

    /// Number of elements (saturating; shapes from a checked file never saturate).
    pub fn numel(&self) -> usize {
        self.sizes()
            .iter()
            .fold(1usize, |n, &s| n.saturating_mul(s as usize))
    }

    /// Strides in elements, in logical dimension order.
    pub fn strides(&self) -> [usize; MAX_RANK] {
        let mut strides = [0usize; MAX_RANK];
        let mut step = 1usize;
        for &d in self.dim_order().iter().rev() {
            let d = d as usize;
            if let (Some(st), Some(&sz)) = (strides.get_mut(d), self.sizes.get(d)) {
                *st = step;
                step = step.saturating_mul((sz as usize).max(1));
            }
        }
        strides
    }

    /// Whether elements are laid out in logical order.
    pub fn is_contiguous(&self) -> bool {
        self.memory_order_matches(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
    }

    /// Upstream's `is_channels_last_tensor` for rank 4: dim order `[0,2,3,1]`,
    /// or an order that puts the same bytes there (C == 1, or H == W == 1).
    pub fn is_channels_last(&self) -> bool {
        self.rank == 4 && self.memory_order_matches(&[0, 2, 3, 1])
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
        (self.rank == 4).then(|| (self.size(0), self.size(2), self.size(3), self.size(1)))
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
    pub shape: Shape,
    pub data: &'d [u8],
}

/// A writable tensor (a kernel's output or scratch).
#[derive(Debug)]
pub struct TensorViewMut<'d> {
    pub dtype: ScalarType,
    pub shape: Shape,
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
                rank: 0,
                sizes: [0; MAX_RANK],
                dim_order: [0; MAX_RANK],
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
    }
}
