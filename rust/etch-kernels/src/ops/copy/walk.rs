//! Strided walks for the data-movement kernels: every element of a logical
//! shape visited in row-major order with two element offsets at once, each
//! `base + Σ index[d]·stride[d]` with signed strides (a flip walks backwards,
//! a broadcast stands still). Copies, dtype conversions, repeats, flips and
//! pixel shuffles are all one walk with the right strides; the extents are
//! checked once up front, so the walk itself never leaves its buffers.

use etch_runtime::{Result, ScalarType, Shape};

use crate::ops::bad;

/// Most dimensions a walk may have: a rank-16 tensor seen as 32 dimensions
/// (`repeat` splits every dimension into tile × element).
pub(crate) const MAX_WALK: usize = 32;

/// A possibly negative dimension `dim` of a rank-`rank` tensor, checked.
pub(crate) fn norm_dim(dim: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let d = if dim < 0 { dim.wrapping_add(r) } else { dim };
    if (0..r).contains(&d) {
        Ok(d as usize)
    } else {
        Err(bad("dim out of range"))
    }
}

/// Bytes per element of `dtype` (any sized dtype: copies move bytes).
pub(crate) fn elem_size(dtype: ScalarType) -> Result<usize> {
    dtype.element_size().ok_or(bad("unsized dtype"))
}

/// A shape's strides as signed element strides.
pub(crate) fn signed_strides(shape: &Shape) -> [isize; MAX_WALK] {
    let mut out = [0isize; MAX_WALK];
    for (o, &s) in out.iter_mut().zip(shape.strides().iter()) {
        *o = s as isize;
    }
    out
}

/// One side of a walk: the first element's offset and the per-dimension
/// strides, in elements.
#[derive(Clone, Copy)]
pub(crate) struct Side<'s> {
    pub base: usize,
    pub strides: &'s [isize],
}

impl<'s> Side<'s> {
    pub fn new(base: usize, strides: &'s [isize]) -> Self {
        Side { base, strides }
    }

    /// The element range `[lo, hi]` the walk over `sizes` reaches, or `None`
    /// on overflow or a negative offset. Empty walks reach nothing.
    fn extent(&self, sizes: &[usize]) -> Option<(usize, usize)> {
        let (mut lo, mut hi) = (isize::try_from(self.base).ok()?, 0isize);
        hi = hi.checked_add(lo)?;
        for (k, &s) in sizes.iter().enumerate() {
            let st = *self.strides.get(k)?;
            let span = isize::try_from(s.checked_sub(1)?).ok()?.checked_mul(st)?;
            if span < 0 {
                lo = lo.checked_add(span)?;
            } else {
                hi = hi.checked_add(span)?;
            }
        }
        Some((usize::try_from(lo).ok()?, usize::try_from(hi).ok()?))
    }
}

/// Calls `f(a_offset, b_offset)` for every multi-index of `sizes` in
/// row-major order. Both sides' extents must lie below `a_len` / `b_len`
/// elements (checked once; `InvalidArgument` otherwise).
pub(crate) fn walk2(
    sizes: &[usize],
    a: Side<'_>,
    a_len: usize,
    b: Side<'_>,
    b_len: usize,
    mut f: impl FnMut(usize, usize) -> Result<()>,
) -> Result<()> {
    walk(sizes, [(a, a_len), (b, b_len)], |[x, y]| f(x, y))
}

/// Like [`walk2`] with `K` sides: `f` gets the `K` offsets of each
/// multi-index of `sizes`, row-major.
pub(crate) fn walk<const K: usize>(
    sizes: &[usize],
    sides: [(Side<'_>, usize); K],
    mut f: impl FnMut([usize; K]) -> Result<()>,
) -> Result<()> {
    let rank = sizes.len();
    if rank > MAX_WALK || sides.iter().any(|(s, _)| s.strides.len() < rank) {
        return Err(bad("walk rank"));
    }
    if sizes.contains(&0) {
        return Ok(());
    }
    for (side, len) in &sides {
        match side.extent(sizes) {
            Some((_, hi)) if hi < *len => {}
            _ => return Err(bad("walk outside its tensor")),
        }
    }
    let mut idx = [0usize; MAX_WALK];
    let mut off: [usize; K] = core::array::from_fn(|k| sides.get(k).map_or(0, |s| s.0.base));
    loop {
        f(off)?;
        // Odometer, innermost dimension fastest. Offsets stay within the
        // extents checked above, so the wrapping steps never wrap.
        let mut d = rank;
        loop {
            if d == 0 {
                return Ok(());
            }
            d -= 1;
            let (Some(i), Some(&n)) = (idx.get_mut(d), sizes.get(d)) else {
                return Ok(());
            };
            *i += 1;
            let wrap = *i == n;
            for (o, (side, _)) in off.iter_mut().zip(&sides) {
                let st = side.strides.get(d).copied().unwrap_or(0);
                *o = if wrap {
                    o.wrapping_add_signed(st.wrapping_mul(1 - n as isize))
                } else {
                    o.wrapping_add_signed(st)
                };
            }
            if !wrap {
                break;
            }
            *i = 0;
        }
    }
}

/// Copies elements of `elem` bytes from `src` (side `s`) to `dst` (side
/// `d`) over `sizes`. Rows whose innermost stride is 1 on both sides move
/// as one slice copy.
pub(crate) fn copy_walk(
    sizes: &[usize],
    src: &[u8],
    s: Side<'_>,
    dst: &mut [u8],
    d: Side<'_>,
    elem: usize,
) -> Result<()> {
    let rank = sizes.len();
    let inner_contiguous =
        rank > 0 && s.strides.get(rank - 1) == Some(&1) && d.strides.get(rank - 1) == Some(&1);
    let (outer, row) = if inner_contiguous {
        let row = sizes.get(rank - 1).copied().unwrap_or(0);
        (sizes.get(..rank - 1).unwrap_or(&[]), row)
    } else {
        (sizes, 1)
    };
    if row == 0 || elem == 0 {
        return Ok(());
    }
    // A row is one element of a walk over the outer dimensions; the check
    // of that walk's extent covers the row's first elements, the lengths
    // below cover its last.
    let (src_len, dst_len) = (src.len() / elem, dst.len() / elem);
    let row_bytes = row.checked_mul(elem).ok_or(bad("row too long"))?;
    walk2(
        outer,
        s,
        src_len.saturating_sub(row - 1),
        d,
        dst_len.saturating_sub(row - 1),
        |a, b| {
            let (Some(from), Some(to)) = (
                src.get(a * elem..a * elem + row_bytes),
                dst.get_mut(b * elem..b * elem + row_bytes),
            ) else {
                return Err(bad("walk outside its tensor"));
            };
            etch_runtime::memory::copy_slice(to, from);
            Ok(())
        },
    )
}

/// Sizes of a shape as `usize`, for walks.
pub(crate) fn sizes_of(shape: &Shape) -> [usize; MAX_WALK] {
    let mut out = [0usize; MAX_WALK];
    for (o, s) in out.iter_mut().zip(shape.sizes()) {
        *o = s as usize;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use etch_runtime::ErrorCode;

    #[test]
    fn walk_backwards_and_rows() {
        // A 2×3 matrix read with the column order reversed.
        let src: [u8; 6] = [0, 1, 2, 3, 4, 5];
        let mut dst = [0u8; 6];
        copy_walk(
            &[2, 3],
            &src,
            Side::new(2, &[3, -1]),
            &mut dst,
            Side::new(0, &[3, 1]),
            1,
        )
        .unwrap();
        assert_eq!(dst, [2, 1, 0, 5, 4, 3]);
        // Contiguous rows of 2-byte elements move as slices.
        let mut dst2 = [0u8; 6];
        copy_walk(
            &[3],
            &src,
            Side::new(0, &[1]),
            &mut dst2,
            Side::new(0, &[1]),
            2,
        )
        .unwrap();
        assert_eq!(dst2, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn walk_outside_is_an_error() {
        let src = [0u8; 4];
        let mut dst = [0u8; 4];
        let e = copy_walk(
            &[2, 3],
            &src,
            Side::new(0, &[3, 1]),
            &mut dst,
            Side::new(0, &[3, 1]),
            1,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        // A backwards walk starting too close to 0.
        let e = copy_walk(
            &[3],
            &src,
            Side::new(1, &[-1]),
            &mut dst,
            Side::new(0, &[1]),
            1,
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert_eq!(norm_dim(-1, 3).unwrap(), 2);
        assert!(norm_dim(3, 3).is_err() && norm_dim(-4, 3).is_err());
    }
}
