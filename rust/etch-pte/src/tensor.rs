//! Shape arithmetic on serialized tensors: rank, element count, byte size and
//! dim-order checks, all overflow-checked.

use crate::error::{Error, Result};
use crate::schema::Tensor;

/// Highest rank ExecuTorch supports (`kTensorDimensionLimit`).
pub const MAX_RANK: usize = 16;

/// `n × m`, `None` when it overflows `u64`: `u64::checked_mul` with a
/// 32-bit factor, two 32×32 multiplies on Cortex-M rather than the general
/// 64×64 overflow check (every factor here is a size or an element size).
#[inline(always)]
fn mul_u32(n: u64, m: u32) -> Option<u64> {
    let lo = (n as u32 as u64) * m as u64;
    let hi = (n >> 32) * m as u64;
    if hi >> 32 != 0 {
        return None;
    }
    lo.checked_add(hi << 32)
}

/// Number of elements, checked: sizes non-negative, rank ≤ 16, no overflow.
pub fn numel(tensor: &Tensor<'_>) -> Result<u64> {
    let bytes = tensor.sizes_bytes()?;
    // Where errors point: the first size, as `Vector::position` says
    // (computed only in builds whose errors carry `at`).
    let at = (bytes.as_ptr() as usize).wrapping_sub(tensor.0.buffer().as_ptr() as usize);
    let (sizes, _) = bytes.as_chunks::<4>();
    if sizes.len() > MAX_RANK {
        return Err(Error::invalid("tensor rank above 16", tensor.position()));
    }
    let mut n: u64 = 1;
    for s in sizes {
        let s = i32::from_le_bytes(*s);
        if s < 0 {
            return Err(Error::invalid("negative tensor size", at));
        }
        n = mul_u32(n, s as u32).ok_or(Error::invalid("tensor element count overflows", at))?;
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
    mul_u32(numel(tensor)?, elem as u32)
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

#[cfg(test)]
mod tests {
    use super::mul_u32;

    /// The same as `u64::checked_mul` at and around every overflow edge.
    #[test]
    fn mul_u32_is_checked_mul() {
        let ns = [
            0u64,
            1,
            2,
            3,
            0xffff_ffff,
            0x1_0000_0000,
            0x1_0000_0001,
            0x7fff_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
            u64::MAX,
            u64::MAX / 3,
            u64::MAX / 3 + 1,
            1 << 33,
            (1 << 33) - 1,
            0x0000_0001_ffff_ffff,
            0x0000_0002_0000_0000,
            0x1234_5678_9abc_def0,
        ];
        let ms = [
            0u32,
            1,
            2,
            3,
            4,
            8,
            0x7fff_ffff,
            0x8000_0000,
            u32::MAX,
            0x1_0001,
            12345,
        ];
        for &n in &ns {
            for &m in &ms {
                for n in [n, n.wrapping_add(1), n.wrapping_sub(1)] {
                    assert_eq!(mul_u32(n, m), n.checked_mul(m as u64), "{n:#x} * {m:#x}");
                    if m != 0 {
                        // The largest n that does not overflow, and the next.
                        let edge = u64::MAX / m as u64;
                        for k in [edge - 1, edge, edge.wrapping_add(1)] {
                            assert_eq!(mul_u32(k, m), k.checked_mul(m as u64), "{k:#x} * {m:#x}");
                        }
                    }
                }
            }
        }
    }
}
