//! Run-time sizes of bounded dynamic tensors (`DYNAMIC_BOUND`).
//!
//! A bounded dynamic tensor's serialized sizes are upper bounds: its memory
//! is planned for them, and `set_input` and the kernels resize it at run
//! time, as ExecuTorch's `resize_tensor` does (same rank, at most the
//! planned number of elements). Its current sizes live in the method state,
//! one entry per such tensor value, in order of value index:
//!
//! ```text
//! [u32 value index][u8 rank][rank × u32 sizes]    all little-endian bytes
//! ```
//!
//! A program without dynamic tensors has an empty region, and every lookup
//! stops at its length. Static tensors keep the sizes the program gives them.
//! Without the `dynamic` feature the region is always empty: bounded
//! tensors then keep their serialized (upper-bound) sizes too.

use etch_pte::schema::Tensor;
use etch_pte::tensor::MAX_RANK;
use etch_pte::ShapeDynamism;

use crate::tensor::Shape;
use crate::{Error, ErrorCode, Result};

/// Bytes before an entry's sizes: value index and rank.
const HEAD: usize = 5;

/// The bytes tensor `t` takes in the region: 0 unless it is bounded
/// dynamic. A rank above 16 is `InvalidProgram` (`at` = `v`).
#[cfg_attr(not(feature = "dynamic"), allow(dead_code))]
pub(crate) fn entry_bytes(t: &Tensor<'_>, v: usize) -> Result<usize> {
    if !cfg!(feature = "dynamic") || t.shape_dynamism()? != ShapeDynamism::DynamicBound {
        return Ok(0);
    }
    let sizes = t.sizes_bytes()?;
    if sizes.len() > 4 * MAX_RANK {
        return Err(Error::new(
            ErrorCode::InvalidProgram,
            "dynamic tensor of rank above 16",
            v as u32,
        ));
    }
    Ok(HEAD + sizes.len())
}

/// Writes value `v`'s entry (its serialized sizes: the upper bounds) at the
/// start of `buf`; `buf` is at least [`entry_bytes`] long.
#[cfg_attr(not(feature = "dynamic"), allow(dead_code))]
pub(crate) fn write_entry(buf: &mut [u8], v: usize, t: &Tensor<'_>) -> Result<()> {
    let sizes = t.sizes_bytes()?;
    let mut head = [0u8; HEAD];
    head[..4].copy_from_slice(&(v as u32).to_le_bytes());
    head[4] = (sizes.len() / 4) as u8;
    if let Some(h) = buf.first_chunk_mut::<HEAD>() {
        *h = head;
    }
    if let Some(dst) = buf.get_mut(HEAD..HEAD + sizes.len()) {
        crate::memory::copy_slice(dst, sizes);
    }
    Ok(())
}

/// Byte range of value `v`'s sizes in `buf`, if it has an entry.
fn find(buf: &[u8], v: usize) -> Option<core::ops::Range<usize>> {
    let mut at = 0;
    while let Some(head) = buf.get(at..).and_then(|b| b.first_chunk::<HEAD>()) {
        let [a, b, c, d, rank] = *head;
        let end = at + HEAD + 4 * rank as usize;
        if u32::from_le_bytes([a, b, c, d]) as usize == v {
            return Some(at + HEAD..end);
        }
        at = end;
    }
    None
}

/// Tensor value `v`'s current shape and byte size: its run-time sizes when
/// it is bounded dynamic, else the serialized ones. Inlined: without the
/// `dynamic` feature it is the serialized reads its callers made before.
#[inline(always)]
pub(crate) fn current<'s>(t: &Tensor<'s>, dims: &'s [u8], v: usize) -> Result<(Shape<'s>, usize)> {
    if cfg!(feature = "dynamic") && !dims.is_empty() {
        if let Some(r) = find(dims, v) {
            return run_time(t, dims, r);
        }
    }
    Ok((Shape::from_serialized(t)?, etch_pte::tensor::nbytes(t)?))
}

/// The shape whose sizes are `dims[r]`, and its bytes.
#[inline(never)]
fn run_time<'s>(
    t: &Tensor<'s>,
    dims: &'s [u8],
    r: core::ops::Range<usize>,
) -> Result<(Shape<'s>, usize)> {
    let sizes = dims.get(r).unwrap_or(&[]).as_chunks::<4>().0;
    let shape = Shape::from_parts(sizes, t.dim_order_bytes()?)?;
    // The sizes were checked against the bound when written, so the
    // product fits (it is at most the serialized tensor's).
    let elem = t.scalar_type()?.element_size().unwrap_or(0);
    Ok((shape, shape.numel() * elem))
}

fn resize_error(what: &'static str, v: usize) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, v as u32)
}

/// Resizes tensor value `v` (tensor `t`) to `new`, as ExecuTorch's
/// `resize_tensor`: the rank is fixed; a static tensor accepts only its own
/// sizes; a bounded one any sizes whose element count is at most the
/// serialized (planned) one. Failures are `InvalidArgument` (what upstream's
/// kernels and `set_input` turn a failed resize into), `at` = `v`; nothing
/// is written then.
pub(crate) fn resize(dims: &mut [u8], v: usize, t: &Tensor<'_>, new: &[i64]) -> Result<()> {
    let bound = Shape::from_serialized(t)?;
    if new.len() != bound.rank() {
        return Err(resize_error("resize changes the rank", v));
    }
    let mut numel: u64 = 1;
    for &s in new {
        if !(0..=i32::MAX as i64).contains(&s) {
            return Err(resize_error("resize to a negative or too large size", v));
        }
        numel = numel.saturating_mul(s as u64);
    }
    let r = if cfg!(feature = "dynamic") {
        find(dims, v)
    } else {
        None
    };
    let Some(r) = r else {
        return if bound.sizes().iter().zip(new).all(|(a, &b)| a as i64 == b) {
            Ok(())
        } else {
            Err(resize_error("resize of a static tensor", v))
        };
    };
    if numel > bound.numel() as u64 {
        return Err(resize_error(
            "resize beyond the tensor's planned capacity",
            v,
        ));
    }
    if let Some(dst) = dims.get_mut(r) {
        for (w, &s) in dst.as_chunks_mut::<4>().0.iter_mut().zip(new) {
            *w = (s as u32).to_le_bytes();
        }
    }
    Ok(())
}
