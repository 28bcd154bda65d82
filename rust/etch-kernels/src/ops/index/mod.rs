//! Indexing and filling kernels: `index_select`, `gather`, `embedding`,
//! `index.Tensor`, `masked_fill`, `scalar_tensor`, `full_like`, `arange`.
//! Gathers are copies (any dtype, by element size) through the tensors'
//! real strides; index values come from the program's tensors and are
//! range-checked one by one: an out-of-range index is `InvalidArgument`
//! (upstream fails the same way, possibly after writing earlier rows).

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, KernelContext, Result, ScalarType};

use super::copy::walk::{
    copy_walk, elem_size, norm_dim, signed_strides, sizes_of, walk, Side, MAX_WALK,
};
use super::dtype::convert::{self, Wide};
use crate::ops::bad;

/// The kernels of this family the build selected (`op-*` features, all
/// of them with `index-ops`).
pub const KERNELS: &[Kernel] = &[
    #[cfg(feature = "op-aten-index_select-out")]
    INDEX_SELECT_OUT,
    #[cfg(feature = "op-aten-gather-out")]
    GATHER_OUT,
    #[cfg(feature = "op-aten-embedding-out")]
    EMBEDDING_OUT,
    #[cfg(feature = "op-aten-index-Tensor_out")]
    INDEX_TENSOR_OUT,
];

const MAX_RANK: usize = 16;

/// Index tensors are Long or Int.
fn check_index_dtype(t: &TensorView<'_>) -> Result<usize> {
    match t.dtype {
        ScalarType::LONG => Ok(8),
        ScalarType::INT => Ok(4),
        _ => Err(bad("index tensor is not Long or Int")),
    }
}

/// Index element at element offset `k` of `t` (Long or Int).
fn index_at(t: &TensorView<'_>, k: usize) -> Result<i64> {
    let elem = check_index_dtype(t)?;
    let at = k.checked_mul(elem).ok_or(bad("index offset"))?;
    match convert::load(t.dtype, t.data.get(at..).ok_or(bad("index offset"))?)? {
        Wide::I(i) => Ok(i),
        Wide::F(_) => Err(bad("index tensor is not Long or Int")),
    }
}

/// An index into a dimension of `size`: `[0, size)`, or also `[-size, 0)`
/// when `wrap`.
fn checked_index(i: i64, size: usize, wrap: bool) -> Result<usize> {
    let n = size as i64;
    let i = if wrap && i < 0 { i.wrapping_add(n) } else { i };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(bad("index out of range"))
    }
}

/// `out` = the slices `x[.., index[j], ..]` along `dim`, for each `j` in
/// order (upstream `index_select_out`: index of rank ≤ 1, values in
/// `[0, size)`; a 0-dim input is copied whole).
pub fn index_select(
    x: &TensorView<'_>,
    dim: i64,
    index: &TensorView<'_>,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    check_index_dtype(index)?;
    if index.shape.rank() > 1 || x.dtype != out.dtype || out.shape.rank() != rank {
        return Err(bad("index_select arguments"));
    }
    let elem = elem_size(x.dtype)?;
    if rank == 0 {
        norm_dim(dim, 1)?;
        let from = x.data.get(..elem).ok_or(bad("index_select input"))?;
        let to = out.data.get_mut(..elem).ok_or(bad("index_select output"))?;
        etch_runtime::memory::copy_slice(to, from);
        return Ok(());
    }
    let dim = norm_dim(dim, rank)?;
    let n = index.numel();
    let mut sizes = sizes_of(&x.shape);
    for d in 0..rank {
        let want = if d == dim {
            n
        } else {
            x.shape.size(d as isize)
        };
        if out.shape.size(d as isize) != want {
            return Err(bad("index_select output shape"));
        }
    }
    if let Some(s) = sizes.get_mut(dim) {
        *s = 1;
    }
    let (xs, os) = (signed_strides(&x.shape), signed_strides(&out.shape));
    let (xd, od) = (
        x.shape.strides().get(dim).copied().unwrap_or(0),
        out.shape.strides().get(dim).copied().unwrap_or(0),
    );
    let size = x.shape.size(dim as isize);
    for j in 0..n {
        let i = checked_index(index_at(index, j)?, size, false)?;
        copy_walk(
            sizes.get(..rank).unwrap_or(&[]),
            x.data,
            Side::new(i * xd, &xs),
            out.data,
            Side::new(j * od, &os),
            elem,
        )?;
    }
    Ok(())
}

/// `index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out)`.
pub const INDEX_SELECT_OUT: Kernel = op!(
    "aten::index_select.out(Tensor self, int dim, Tensor index, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dim = ctx.int(arg!(SCHEMA, dim))?;
        let ([x, index], [mut out]) = ctx.io(arg!(SCHEMA, [self, index]), arg!(SCHEMA, [out]))?;
        index_select(
            &required(x, arg!(SCHEMA, self))?,
            dim,
            &required(index, arg!(SCHEMA, index))?,
            &mut out,
        )
    }
);

/// `out[c] = x[c with c[dim] := index[c]]` (upstream `gather_out`: index
/// Long, of `x`'s rank, `index.size(d) ≤ x.size(d)` for `d ≠ dim`, values in
/// `[0, x.size(dim))`; out has the index's shape). Real strides on all three
/// tensors, so any dim order works.
pub fn gather(
    x: &TensorView<'_>,
    dim: i64,
    index: &TensorView<'_>,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let dim = norm_dim(dim, rank.max(1))?;
    if index.dtype != ScalarType::LONG || x.dtype != out.dtype {
        return Err(bad("gather dtypes"));
    }
    if out.shape.sizes() != index.shape.sizes() {
        return Err(bad("gather output shape"));
    }
    if index.numel() == 0 {
        return Ok(());
    }
    if index.shape.rank() != rank
        || (0..rank).any(|d| d != dim && index.shape.size(d as isize) > x.shape.size(d as isize))
    {
        return Err(bad("gather index shape"));
    }
    let elem = elem_size(x.dtype)?;
    let mut xs = signed_strides(&x.shape);
    let step = x.shape.strides().get(dim).copied().unwrap_or(0);
    if let Some(s) = xs.get_mut(dim) {
        *s = 0; // the index supplies the position along `dim`
    }
    let (is, os) = (signed_strides(&index.shape), signed_strides(&out.shape));
    let size = x.shape.size(dim as isize);
    let sizes = sizes_of(&index.shape);
    let x_len = x.data.len() / elem.max(1);
    let out_len = out.data.len() / elem.max(1);
    walk(
        sizes.get(..rank.max(1)).unwrap_or(&[]),
        [
            (Side::new(0, &xs), x_len),
            (Side::new(0, &is), index.numel()),
            (Side::new(0, &os), out_len),
        ],
        |[xo, io, oo]| {
            let i = checked_index(index_at(index, io)?, size, false)?;
            let from = xo + i * step;
            let (Some(src), Some(dst)) = (
                x.data.get(from * elem..from * elem + elem),
                out.data.get_mut(oo * elem..oo * elem + elem),
            ) else {
                return Err(bad("gather outside its tensor"));
            };
            etch_runtime::memory::copy_slice(dst, src);
            Ok(())
        },
    )
}

/// `gather.out(Tensor self, int dim, Tensor index, *, bool
/// sparse_grad=False, Tensor(a!) out)`.
pub const GATHER_OUT: Kernel = op!(
    "aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dim = ctx.int(arg!(SCHEMA, dim))?;
        let ([x, index], [mut out]) = ctx.io(arg!(SCHEMA, [self, index]), arg!(SCHEMA, [out]))?;
        gather(&required(x, arg!(SCHEMA, self))?, dim, &required(index, arg!(SCHEMA, index))?, &mut out)
    }
);

/// `out[.., :] = weight[indices[..], :]` (upstream `embedding_out`: weight
/// 2-D, out of rank `indices.rank + 1` and weight's dtype, indices Long or
/// Int in `[0, rows)`; `padding_idx`, `scale_grad_by_freq` and `sparse`
/// ignored).
pub fn embedding(
    weight: &TensorView<'_>,
    indices: &TensorView<'_>,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    check_index_dtype(indices)?;
    let r = indices.shape.rank();
    if weight.shape.rank() != 2 || out.shape.rank() != r + 1 || weight.dtype != out.dtype {
        return Err(bad("embedding shapes"));
    }
    let (rows, width) = (weight.shape.size(0), weight.shape.size(1));
    if out.shape.size(r as isize) != width
        || (0..r).any(|d| out.shape.size(d as isize) != indices.shape.size(d as isize))
    {
        return Err(bad("embedding output shape"));
    }
    let elem = elem_size(weight.dtype)?;
    let (ws, os, is) = (
        signed_strides(&weight.shape),
        signed_strides(&out.shape),
        signed_strides(&indices.shape),
    );
    let w_rows = weight.shape.strides().first().copied().unwrap_or(0);
    let (row_src, row_dst) = (
        [ws.get(1).copied().unwrap_or(0)],
        [os.get(r).copied().unwrap_or(0)],
    );
    let sizes = sizes_of(&indices.shape);
    let out_len = out.data.len() / elem.max(1);
    // Walk the indices in logical order; each names a row to copy.
    walk(
        sizes.get(..r).unwrap_or(&[]),
        [
            (Side::new(0, &is), indices.numel()),
            (Side::new(0, &os), out_len),
        ],
        |[io, oo]| {
            let i = checked_index(index_at(indices, io)?, rows, false)?;
            copy_walk(
                &[width],
                weight.data,
                Side::new(i * w_rows, &row_src),
                out.data,
                Side::new(oo, &row_dst),
                elem,
            )
        },
    )
}

/// `embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1,
/// bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out)`.
pub const EMBEDDING_OUT: Kernel = op!(
    "aten::embedding.out(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([w, indices], [mut out]) = ctx.io(arg!(SCHEMA, [weight, indices]), arg!(SCHEMA, [out]))?;
        embedding(&required(w, arg!(SCHEMA, weight))?, &required(indices, arg!(SCHEMA, indices))?, &mut out)
    }
);

/// `index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out)`
/// with Long/Int index tensors (broadcast together; negative values count
/// from the end) and absent (`None`) entries, adjacent or not, as
/// upstream's `advanced_index_util`. Bool/Byte mask indices give
/// data-dependent output sizes and are `InvalidArgument` here.
pub const INDEX_TENSOR_OUT: Kernel = op!(INDEX_TENSOR, index_tensor_out);

const INDEX_TENSOR: &str =
    "aten::index.Tensor_out(Tensor self, Tensor?[] indices, *, Tensor(a!) out) -> Tensor(a!)";

fn index_tensor_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = INDEX_TENSOR;
    let n = ctx.tensor_list_len(arg!(S, indices))?;
    if n > MAX_RANK {
        return Err(bad("more indices than dimensions"));
    }
    let mut ins: [Option<usize>; MAX_RANK + 1] = [None; MAX_RANK + 1];
    if let Some(slot) = ins.first_mut() {
        *slot = Some(ctx.value_index(arg!(S, self))?);
    }
    for (k, slot) in ins.iter_mut().skip(1).take(n).enumerate() {
        *slot = ctx.opt_tensor_list_item(arg!(S, indices), k)?;
    }
    let out_value = ctx.value_index(arg!(S, out))?;
    let (views, [mut out]) = ctx.io_values(ins, [out_value])?;
    let [x, idx @ ..] = views;
    let indices = idx.get(..n).unwrap_or(&[]);
    index_tensor(&required(x, arg!(S, self))?, indices, &mut out)
}

/// `out = x[indices]` (see [`INDEX_TENSOR_OUT`]).
pub fn index_tensor(
    x: &TensorView<'_>,
    indices: &[Option<TensorView<'_>>],
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if indices.len() > rank || x.dtype != out.dtype {
        return Err(bad("index.Tensor arguments"));
    }
    // Broadcast shape of the index tensors (right-aligned).
    let mut bshape = [1usize; MAX_RANK];
    let mut bdim = 0usize;
    let (mut blocks, mut in_block, mut start, mut seen_index) = (0, false, 0, false);
    for (k, t) in indices.iter().enumerate() {
        let Some(t) = t else {
            in_block = false;
            if !seen_index {
                start = k + 1;
            }
            continue;
        };
        check_index_dtype(t)?;
        seen_index = true;
        if !in_block {
            blocks += 1;
            in_block = true;
        }
        bdim = bdim.max(t.shape.rank());
    }
    for t in indices.iter().flatten() {
        let r = t.shape.rank();
        for j in 0..r {
            let size = t.shape.size(j as isize);
            let Some(b) = bshape.get_mut(bdim - r + j) else {
                return Err(bad("index rank"));
            };
            if *b == 1 {
                *b = size;
            } else if size != 1 && size != *b {
                return Err(bad("index tensors do not broadcast"));
            }
        }
    }
    let indexed = indices.iter().flatten().count();
    if blocks == 0 {
        // No index tensor: a copy.
        if out.shape.sizes() != x.shape.sizes() {
            return Err(bad("index.Tensor output shape"));
        }
        let sizes = sizes_of(&x.shape);
        return copy_walk(
            sizes.get(..rank).unwrap_or(&[]),
            x.data,
            Side::new(0, &signed_strides(&x.shape)),
            out.data,
            Side::new(0, &signed_strides(&out.shape)),
            elem_size(x.dtype)?,
        );
    }
    // Output dims: the broadcast block goes where the indexed dims were if
    // they are adjacent, else first. `dim_map[d]` = output dim of input dim
    // `d` (None for indexed dims).
    let bpos = if blocks == 1 { start } else { 0 };
    let out_rank = rank + bdim - indexed;
    if out.shape.rank() != out_rank || out_rank > MAX_RANK {
        return Err(bad("index.Tensor output rank"));
    }
    let mut dim_map = [None; MAX_RANK];
    let mut o = 0;
    for (d, slot) in dim_map.iter_mut().enumerate().take(rank) {
        if o == bpos {
            o += bdim;
        }
        if indices.get(d).is_some_and(|t| t.is_some()) {
            continue;
        }
        *slot = Some(o);
        o += 1;
    }
    for d in 0..out_rank {
        let want = if (bpos..bpos + bdim).contains(&d) {
            bshape.get(d - bpos).copied().unwrap_or(1)
        } else {
            let src = dim_map.iter().position(|&m| m == Some(d));
            src.map_or(0, |s| x.shape.size(s as isize))
        };
        if out.shape.size(d as isize) != want {
            return Err(bad("index.Tensor output shape"));
        }
    }
    let elem = elem_size(x.dtype)?;
    let (xs, os) = (x.shape.strides(), out.shape.strides());
    let osizes = sizes_of(&out.shape);
    let mut coord = [0usize; MAX_RANK];
    for _ in 0..out.shape.numel() {
        // Input offset of this output coordinate.
        let mut from = 0usize;
        let to: usize = coord
            .iter()
            .zip(os.iter())
            .take(out_rank)
            .map(|(&c, &st)| c * st)
            .sum();
        for d in 0..rank {
            let pos = match (dim_map.get(d).copied().flatten(), indices.get(d)) {
                (Some(od), _) => coord.get(od).copied().unwrap_or(0),
                (None, Some(Some(t))) => {
                    // This index tensor's element at the broadcast coordinate.
                    let r = t.shape.rank();
                    let ts = t.shape.strides();
                    let mut k = 0usize;
                    for j in 0..r {
                        let c = coord.get(bpos + bdim - r + j).copied().unwrap_or(0);
                        let c = if t.shape.size(j as isize) == 1 { 0 } else { c };
                        k += c * ts.get(j).copied().unwrap_or(0);
                    }
                    checked_index(index_at(t, k)?, x.shape.size(d as isize), true)?
                }
                _ => return Err(bad("index.Tensor dims")),
            };
            from += pos * xs.get(d).copied().unwrap_or(0);
        }
        let (Some(src), Some(dst)) = (
            x.data.get(from * elem..from * elem + elem),
            out.data.get_mut(to * elem..to * elem + elem),
        ) else {
            return Err(bad("index.Tensor outside its tensor"));
        };
        etch_runtime::memory::copy_slice(dst, src);
        // Odometer over the output coordinate.
        for d in (0..out_rank).rev() {
            let (Some(c), Some(&n)) = (coord.get_mut(d), osizes.get(d)) else {
                break;
            };
            *c += 1;
            if *c < n {
                break;
            }
            *c = 0;
        }
    }
    Ok(())
}

/// Capacity check: index.Tensor's input list holds `MAX_RANK` tensors plus self.
const _: () = assert!(MAX_RANK < MAX_WALK);

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use crate::ops::testutil::{o, t};
    use etch_runtime::ErrorCode;
    use std::vec::Vec;

    fn longs(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    const X: [u8; 6] = [10, 11, 12, 13, 14, 15]; // [2, 3] i8
    use ScalarType as T;

    #[test]
    fn out_of_range_indices_are_invalid_argument() {
        let ia = ErrorCode::InvalidArgument;
        let x = t(T::CHAR, &[2, 3], &X);
        let mut buf = [0u8; 8];
        for bad_index in [3i64, -1, i64::MIN] {
            let i = longs(&[0, bad_index]);
            let idx = t(T::LONG, &[2], &i);
            let e = index_select(&x, 1, &idx, &mut o(T::CHAR, &[2, 2], &mut buf[..4]));
            assert_eq!(e.unwrap_err().code, ia, "index_select {bad_index}");
            let g = longs(&[0, bad_index, 1, 2]);
            let gi = t(T::LONG, &[2, 2], &g);
            let e = gather(&x, 1, &gi, &mut o(T::CHAR, &[2, 2], &mut buf[..4]));
            assert_eq!(e.unwrap_err().code, ia, "gather {bad_index}");
            let e = embedding(&x, &idx, &mut o(T::CHAR, &[2, 3], &mut buf[..6]));
            if bad_index != 0 {
                assert_eq!(e.unwrap_err().code, ia, "embedding {bad_index}");
            }
        }
        // index.Tensor: −size wraps, −size − 1 does not.
        let i = longs(&[-3]);
        let idx = [None, Some(t(T::LONG, &[1], &i))];
        index_tensor(&x, &idx, &mut o(T::CHAR, &[2, 1], &mut buf[..2])).unwrap();
        assert_eq!(buf[..2], [10, 13]);
        let i = longs(&[-4]);
        let idx = [None, Some(t(T::LONG, &[1], &i))];
        let e = index_tensor(&x, &idx, &mut o(T::CHAR, &[2, 1], &mut buf[..2]));
        assert_eq!(e.unwrap_err().code, ia);
        // Index dtypes: float indices, int32 gather index.
        let f = [0u8; 4];
        let e = index_select(
            &x,
            0,
            &t(T::FLOAT, &[1], &f),
            &mut o(T::CHAR, &[1, 3], &mut buf[..3]),
        );
        assert_eq!(e.unwrap_err().code, ia);
        let e = gather(
            &x,
            0,
            &t(T::INT, &[1, 1], &f),
            &mut o(T::CHAR, &[1, 1], &mut buf[..1]),
        );
        assert_eq!(e.unwrap_err().code, ia);
        // Mask (Bool) indices are not supported.
        let m = [1u8, 0];
        let e = index_tensor(
            &x,
            &[Some(t(T::BOOL, &[2], &m))],
            &mut o(T::CHAR, &[1, 3], &mut buf[..3]),
        );
        assert_eq!(e.unwrap_err().code, ia);
    }

    #[test]
    fn index_tensor_broadcasts_and_places_the_block() {
        let x = t(T::CHAR, &[2, 3], &X);
        let (a, b) = (longs(&[1, 0]), longs(&[2]));
        // x[[1, 0], [2]] → [x[1, 2], x[0, 2]]
        let idx = [Some(t(T::LONG, &[2], &a)), Some(t(T::LONG, &[1], &b))];
        let mut buf = [0u8; 2];
        index_tensor(&x, &idx, &mut o(T::CHAR, &[2], &mut buf)).unwrap();
        assert_eq!(buf, [15, 12]);
    }
}
