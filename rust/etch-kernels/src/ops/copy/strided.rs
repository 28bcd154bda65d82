//! Layout-changing copies shared by permute, clone, dim-order and view ops:
//! every element of a logical shape moved from one strided layout to another.

use etch_runtime::tensor::{Sizes, TensorView, TensorViewMut};
use etch_runtime::{Error, ErrorCode, Result};

const MAX_RANK: usize = 16;

use crate::ops::bad;

/// Largest element offset a (sizes, strides) layout reaches, plus one.
fn extent(sizes: Sizes<'_>, strides: &[usize]) -> Option<usize> {
    let mut max = 0usize;
    for (s, &st) in sizes.iter().zip(strides) {
        if s == 0 {
            return Some(0);
        }
        max = max.checked_add((s as usize - 1).checked_mul(st)?)?;
    }
    max.checked_add(1)
}

/// Copies `sizes` elements of `elem` bytes: source element at multi-index
/// `i` is at `Σ i[d]·src_strides[d]`, destination at `Σ i[d]·dst_strides[d]`.
pub fn strided_copy(
    src: &[u8],
    src_strides: &[usize],
    dst: &mut [u8],
    dst_strides: &[usize],
    sizes: Sizes<'_>,
    elem: usize,
) -> Result<()> {
    let rank = sizes.len();
    if rank > MAX_RANK || src_strides.len() < rank || dst_strides.len() < rank {
        return Err(bad("copy rank"));
    }
    let (Some(se), Some(de)) = (extent(sizes, src_strides), extent(sizes, dst_strides)) else {
        return Err(bad("copy extent overflows"));
    };
    if se.saturating_mul(elem) > src.len() || de.saturating_mul(elem) > dst.len() {
        return Err(bad("copy outside its tensor"));
    }
    let numel: usize = sizes.iter().map(|s| s as usize).product();
    let mut idx = [0u32; MAX_RANK];
    let (mut s_off, mut d_off) = (0usize, 0usize);
    for _ in 0..numel {
        let (Some(from), Some(to)) = (
            src.get(s_off * elem..s_off * elem + elem),
            dst.get_mut(d_off * elem..d_off * elem + elem),
        ) else {
            return Err(bad("copy outside its tensor"));
        };
        etch_runtime::memory::copy_slice(to, from);
        // Odometer over the logical index, innermost dimension fastest.
        for d in (0..rank).rev() {
            let (Some(i), Some(size), Some(&ss), Some(&ds)) = (
                idx.get_mut(d),
                sizes.get(d),
                src_strides.get(d),
                dst_strides.get(d),
            ) else {
                break;
            };
            *i += 1;
            s_off += ss;
            d_off += ds;
            if *i < size {
                break;
            }
            s_off -= ss * size as usize;
            d_off -= ds * size as usize;
            *i = 0;
        }
    }
    Ok(())
}

/// Copies `src` into `dst` element by element in logical order; both must
/// have the same sizes and dtype, layouts may differ. A plain byte copy when
/// the layouts agree.
pub fn copy_tensor(src: &TensorView<'_>, dst: &mut TensorViewMut<'_>) -> Result<()> {
    if src.dtype != dst.dtype {
        return Err(Error::new(ErrorCode::InvalidType, "copy between dtypes", 0));
    }
    if src.shape.sizes() != dst.shape.sizes() {
        return Err(bad("copy between shapes"));
    }
    let elem = src.dtype.element_size().ok_or(bad("unsized dtype"))?;
    if src.shape.memory_order_matches(dst.shape.dim_order()) && src.data.len() == dst.data.len() {
        super::bytes::copy_bytes(dst.data, src.data);
        return Ok(());
    }
    strided_copy(
        src.data,
        &src.shape.strides(),
        dst.data,
        &dst.shape.strides(),
        dst.shape.sizes(),
        elem,
    )
}

/// `permute(src, dims)` into `dst`: output dimension `d` is input dimension
/// `dims[d]`.
pub fn permute(src: &TensorView<'_>, dims: &[i64], dst: &mut TensorViewMut<'_>) -> Result<()> {
    let rank = src.shape.rank();
    if dims.len() != rank || dst.shape.rank() != rank || src.dtype != dst.dtype {
        return Err(bad("permute rank or dtype"));
    }
    let in_strides = src.shape.strides();
    let mut strides = [0usize; MAX_RANK];
    let mut seen = 0u32;
    for (d, &p) in dims.iter().enumerate() {
        let p = if p < 0 { p + rank as i64 } else { p };
        if !(0..rank as i64).contains(&p) || seen & (1 << p) != 0 {
            return Err(bad("permute dims are not a permutation"));
        }
        seen |= 1 << p;
        if src.shape.size(p as isize) != dst.shape.size(d as isize) {
            return Err(bad("permute output shape"));
        }
        if let (Some(slot), Some(&st)) = (strides.get_mut(d), in_strides.get(p as usize)) {
            *slot = st;
        }
    }
    let elem = src.dtype.element_size().ok_or(bad("unsized dtype"))?;
    strided_copy(
        src.data,
        &strides,
        dst.data,
        &dst.shape.strides(),
        dst.shape.sizes(),
        elem,
    )
}
