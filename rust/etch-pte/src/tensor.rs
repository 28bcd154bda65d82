//! Shape arithmetic on serialized tensors: rank, element count, byte size and
//! dim-order checks, all overflow-checked.

use crate::error::{Error, Result};
use crate::schema::Tensor;

/// Highest rank ExecuTorch supports (`kTensorDimensionLimit`).
pub const MAX_RANK: usize = 16;

/// Number of elements, checked: sizes non-negative, rank ≤ 16, no overflow.
pub fn numel(tensor: &Tensor<'_>) -> Result<u64> {
    let sizes = tensor.sizes()?;
    if sizes.len() > MAX_RANK {
        return Err(Error::invalid("tensor rank above 16", tensor.position()));
    }
    let mut n: u64 = 1;
    for s in sizes.iter() {
        let s = s?;
        if s < 0 {
            return Err(Error::invalid("negative tensor size", sizes.position()));
        }
        n = n.checked_mul(s as u64).ok_or(Error::invalid(
            "tensor element count overflows",
            sizes.position(),
        ))?;
    }
    Ok(n)
}

/// Bytes of data (numel × element size), checked to fit in `usize`.
pub fn nbytes(tensor: &Tensor<'_>) -> Result<usize> {
    let elem = tensor
        .scalar_type()?
        .element_size()
        .ok_or(Error::not_supported(
            "tensor scalar type has no supported size",
            tensor.position(),
        ))?;
    numel(tensor)?
        .checked_mul(elem as u64)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Error::invalid(
            "tensor byte size overflows",
            tensor.position(),
        ))
}

/// Checks that `dim_order` has one entry per dimension and is a permutation.
pub fn check_dim_order(tensor: &Tensor<'_>) -> Result<()> {
    let rank = tensor.sizes()?.len();
    let order = tensor.dim_order()?;
    if order.len() != rank || rank > MAX_RANK {
        return Err(Error::invalid(
            "dim_order length differs from rank",
            order.position(),
        ));
    }
    let mut seen: u32 = 0;
    for &d in order.bytes() {
        let bit = 1u32.checked_shl(d as u32).unwrap_or(0);
        if (d as usize) >= rank || seen & bit != 0 {
            return Err(Error::invalid(
                "dim_order is not a permutation",
                order.position(),
            ));
        }
        seen |= bit;
    }
    Ok(())
}
