//! Elementwise binary ops with PyTorch broadcasting over any dim order: the
//! output's logical index is walked once and each operand is read through its
//! own strides (stride 0 along broadcast dimensions). [`map`] is the
//! dtype-dispatching engine every element-wise kernel runs on.

use etch_runtime::{Result, Shape, TensorView, TensorViewMut};

use super::dtype::{Dst, Elem, Src};

const MAX_RANK: usize = 16;

use crate::ops::bad;

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
/// in elements.
pub fn for_each_broadcast(
    a: &Shape,
    b: &Shape,
    out: &Shape,
    mut f: impl FnMut(usize, usize, usize) -> Result<()>,
) -> Result<()> {
    for_each_broadcast_n([a, b], out, |[ia, ib], io| f(ia, ib, io))
}

/// Checks that `out` is exactly the broadcast of `ins` (what upstream's
/// `resize_to_broadcast_target_size` would make it): same rank as the
/// largest input, and every size > 1 of `out` found in some input.
pub fn check_broadcast_target<const N: usize>(ins: [&Shape; N], out: &Shape) -> Result<()> {
    let ro = out.rank();
    if ins.iter().map(|s| s.rank()).max().unwrap_or(0) != ro {
        return Err(bad("output rank is not the broadcast rank"));
    }
    for d in 0..ro {
        let osize = out.size(d as isize);
        let found = ins.iter().any(|s| {
            let off = ro - s.rank();
            d >= off && s.size((d - off) as isize) == osize
        });
        if !found && osize != 1 {
            return Err(bad("output size is not the broadcast size"));
        }
    }
    Ok(())
}

/// Calls `f(input_indices, out_index)` for every output element, indices in
/// elements, each input read through its own strides (0 along broadcast
/// dimensions). When every input is laid out exactly as `out`, one linear
/// pass over memory; otherwise the output's logical order.
pub fn for_each_broadcast_n<const N: usize>(
    ins: [&Shape; N],
    out: &Shape,
    mut f: impl FnMut([usize; N], usize) -> Result<()>,
) -> Result<()> {
    let mut strides = [[0usize; MAX_RANK]; N];
    for (s, shape) in strides.iter_mut().zip(ins.iter()) {
        *s = broadcast_strides(shape, out)?;
    }
    let so = out.strides();
    let sizes = out.sizes();
    let rank = sizes.len();
    let dense = strides
        .iter()
        .all(|s| (0..rank).all(|d| sizes.get(d).unwrap_or(1) <= 1 || s.get(d) == so.get(d)));
    if dense {
        for i in 0..out.numel() {
            f([i; N], i)?;
        }
        return Ok(());
    }
    let mut idx = [0u32; MAX_RANK];
    let mut at = [0usize; N];
    let mut io = 0usize;
    for _ in 0..out.numel() {
        f(at, io)?;
        for d in (0..rank).rev() {
            let (Some(i), Some(size)) = (idx.get_mut(d), sizes.get(d)) else {
                break;
            };
            let dout = so.get(d).copied().unwrap_or(0);
            *i += 1;
            io += dout;
            for (a, s) in at.iter_mut().zip(strides.iter()) {
                *a += s.get(d).copied().unwrap_or(0);
            }
            if *i < size {
                break;
            }
            let n = size as usize;
            io -= dout * n;
            for (a, s) in at.iter_mut().zip(strides.iter()) {
                *a -= s.get(d).copied().unwrap_or(0) * n;
            }
            *i = 0;
        }
    }
    Ok(())
}

/// ExecuTorch's elementwise engine (`apply_{uni,bi,tri}tensor_elementwise_fn`,
/// `elementwise_util.h`): each input element is loaded with `static_cast` to
/// the compute type `C`, `f` runs in `C`, its result is stored with
/// `static_cast` to the output's dtype. Inputs broadcast to `out`, any dim
/// order. One typed loop when every input is of dtype `C` and `out` of `R`
/// (upstream's dtype-specialized path; same numbers).
pub fn map<C: Elem, R: Elem, const N: usize>(
    ins: [&TensorView<'_>; N],
    out: &mut TensorViewMut<'_>,
    mut f: impl FnMut([C; N]) -> R,
) -> Result<()> {
    let shapes = ins.map(|t| t.shape);
    let out_shape = out.shape;
    check_broadcast_target(shapes.each_ref(), &out_shape)?;
    let mut srcs = [Src::Empty(&[]); N];
    for (slot, t) in srcs.iter_mut().zip(ins.iter()) {
        *slot = Src::new(t)?;
    }
    let mut dst = Dst::new(out)?;
    let typed = srcs.map(|s| C::slice(&s));
    if typed.iter().all(Option::is_some) {
        if let Some(od) = R::slice_mut(&mut dst) {
            let xs = typed.map(|x| x.unwrap_or(&[]));
            return for_each_broadcast_n(shapes.each_ref(), &out_shape, |idx, io| {
                let mut v = [C::default(); N];
                for ((slot, x), &i) in v.iter_mut().zip(xs.iter()).zip(idx.iter()) {
                    *slot = *x.get(i).ok_or(bad("elementwise index"))?;
                }
                *od.get_mut(io).ok_or(bad("elementwise index"))? = f(v);
                Ok(())
            });
        }
    }
    for_each_broadcast_n(shapes.each_ref(), &out_shape, |idx, io| {
        let mut v = [C::default(); N];
        for ((slot, x), &i) in v.iter_mut().zip(srcs.iter()).zip(idx.iter()) {
            *slot = C::from_num(x.get(i).ok_or(bad("elementwise index"))?);
        }
        dst.set(io, f(v).to_num()).ok_or(bad("elementwise index"))
    })
}

/// `static_cast` of every element to the output's dtype (`out` of the same
/// sizes, any dim order): `_to_dim_order_copy` with a dtype change.
pub fn convert(x: &TensorView<'_>, out: &mut TensorViewMut<'_>) -> Result<()> {
    if x.shape.sizes() != out.shape.sizes() {
        return Err(bad("conversion between shapes"));
    }
    let (shape, out_shape) = (x.shape, out.shape);
    let src = Src::new(x)?;
    let mut dst = Dst::new(out)?;
    for_each_broadcast_n([&shape], &out_shape, |[i], io| {
        let v = src.get(i).ok_or(bad("conversion index"))?;
        dst.set(io, v).ok_or(bad("conversion index"))
    })
}
