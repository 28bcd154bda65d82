//! Elementwise binary ops with PyTorch broadcasting over any dim order: the
//! output's logical index is walked once and each operand is read through its
//! own strides (stride 0 along broadcast dimensions).

use etch_runtime::{Error, ErrorCode, Result, Shape};

const MAX_RANK: usize = 16;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// Strides of `operand` seen from an output of shape `out`, or an error if
/// it does not broadcast to it (sizes aligned at the trailing dimension).
pub fn broadcast_strides(operand: &Shape, out: &Shape) -> Result<[usize; MAX_RANK]> {
    let (r, ro) = (operand.rank(), out.rank());
    if r > ro {
        return Err(bad("operand does not broadcast to the output"));
    }
    let own = operand.strides();
    let mut strides = [0usize; MAX_RANK];
    for d in 0..r {
        let od = ro - r + d;
        let (size, osize) = (operand.size(d as isize), out.size(od as isize));
        if size == osize {
            if let (Some(s), Some(&o)) = (strides.get_mut(od), own.get(d)) {
                *s = o;
            }
        } else if size != 1 {
            return Err(bad("operand does not broadcast to the output"));
        }
    }
    Ok(strides)
}

/// Calls `f(a_index, b_index, out_index)` for every output element, indices
/// in elements, in the output's logical order.
pub fn for_each_broadcast(
    a: &Shape,
    b: &Shape,
    out: &Shape,
    mut f: impl FnMut(usize, usize, usize) -> Result<()>,
) -> Result<()> {
    let (sa, sb, so) = (
        broadcast_strides(a, out)?,
        broadcast_strides(b, out)?,
        out.strides(),
    );
    let sizes = out.sizes();
    let rank = sizes.len();
    let mut idx = [0u32; MAX_RANK];
    let (mut ia, mut ib, mut io) = (0usize, 0usize, 0usize);
    for _ in 0..out.numel() {
        f(ia, ib, io)?;
        for d in (0..rank).rev() {
            let (Some(i), Some(&size)) = (idx.get_mut(d), sizes.get(d)) else {
                break;
            };
            let (da, db, dout) = (
                sa.get(d).copied().unwrap_or(0),
                sb.get(d).copied().unwrap_or(0),
                so.get(d).copied().unwrap_or(0),
            );
            *i += 1;
            ia += da;
            ib += db;
            io += dout;
            if *i < size {
                break;
            }
            let n = size as usize;
            ia -= da * n;
            ib -= db * n;
            io -= dout * n;
            *i = 0;
        }
    }
    Ok(())
}
