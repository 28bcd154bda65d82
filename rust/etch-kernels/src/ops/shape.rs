//! Shape and data-movement kernels (`split`, `select`, `stack`, `transpose`,
//! `repeat`, `flip`, `roll`, `pixel_shuffle`, ...): pure copies, so every
//! dtype works and the work dispatches on element size, not dtype. Each is
//! one strided walk (`walk.rs`) from the input's real strides to the
//! output's, so any dim order is handled. Argument checks follow
//! ExecuTorch's `kernels/portable/cpu/util/copy_ops_util.cpp`; input and
//! output dtypes must be equal (upstream's split/unbind/stack may convert
//! between dtypes; `to_edge` never emits that, and etch rejects it).

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{op, Kernel, KernelContext, Result};

use super::convert::{fill, scalar_bytes, Scalar};
use super::walk::{bad, copy_walk, elem_size, norm_dim, signed_strides, sizes_of, Side, MAX_WALK};

/// Copies `src` into `dst` after checking they have the same dtype; `dst`
/// gets `sizes` elements read at `src_base + Σ i·src_strides`.
fn move_into(
    src: &TensorView<'_>,
    src_base: usize,
    src_strides: &[isize],
    dst: &mut TensorViewMut<'_>,
    sizes: &[usize],
) -> Result<()> {
    if src.dtype != dst.dtype {
        return Err(bad("input and output dtypes differ"));
    }
    let elem = elem_size(src.dtype)?;
    let ds = signed_strides(&dst.shape);
    copy_walk(
        sizes,
        src.data,
        Side::new(src_base, src_strides),
        dst.data,
        Side::new(0, &ds),
        elem,
    )
}

/// `out` = `x` restricted to `[start, start + len)` along `dim`; every other
/// size of `out` must equal `x`'s.
pub fn narrow(
    x: &TensorView<'_>,
    dim: usize,
    start: usize,
    len: usize,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if out.shape.rank() != rank
        || start
            .checked_add(len)
            .is_none_or(|e| e > x.shape.size(dim as isize))
    {
        return Err(bad("narrow range"));
    }
    for d in 0..rank {
        let want = if d == dim {
            len
        } else {
            x.shape.size(d as isize)
        };
        if out.shape.size(d as isize) != want {
            return Err(bad("narrow output shape"));
        }
    }
    let strides = signed_strides(&x.shape);
    let base = start * x.shape.strides().get(dim).copied().unwrap_or(0);
    let sizes = sizes_of(&out.shape);
    move_into(x, base, &strides, out, sizes.get(..rank).unwrap_or(&[]))
}

/// `out` = `x[..., index, ...]` along `dim` (rank − 1 output).
pub fn select(
    x: &TensorView<'_>,
    dim: usize,
    index: usize,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if index >= x.shape.size(dim as isize) || out.shape.rank() + 1 != rank {
        return Err(bad("select index or output rank"));
    }
    let xs = signed_strides(&x.shape);
    let (mut strides, mut sizes) = ([0isize; MAX_WALK], [0usize; MAX_WALK]);
    let mut k = 0;
    for d in (0..rank).filter(|&d| d != dim) {
        let (Some(st), Some(sz)) = (strides.get_mut(k), sizes.get_mut(k)) else {
            return Err(bad("select rank"));
        };
        *st = xs.get(d).copied().unwrap_or(0);
        *sz = x.shape.size(d as isize);
        if out.shape.size(k as isize) != *sz {
            return Err(bad("select output shape"));
        }
        k += 1;
    }
    let base = index * x.shape.strides().get(dim).copied().unwrap_or(0);
    move_into(x, base, &strides, out, sizes.get(..k).unwrap_or(&[]))
}

/// `select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out)`:
/// negative `dim` and `index` count from the end (upstream
/// `check_select_copy_out_args`).
pub const SELECT_COPY_INT_OUT: Kernel = op!(
    "aten::select_copy.int_out(Tensor self, int dim, SymInt index, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (dim, index) = (ctx.int(1)?, ctx.int(2)?);
        let ([x], [mut out]) = ctx.io([0], [3])?;
        let x = required(x, 0)?;
        let dim = norm_dim(dim, x.shape.rank())?;
        let index = norm_index(index, x.shape.size(dim as isize))?;
        select(&x, dim, index, &mut out)
    }
);

/// A possibly negative index into a dimension of `size`, checked.
fn norm_index(index: i64, size: usize) -> Result<usize> {
    let n = size as i64;
    let i = if index < 0 {
        index.wrapping_add(n)
    } else {
        index
    };
    if (0..n).contains(&i) {
        Ok(i as usize)
    } else {
        Err(bad("index out of range"))
    }
}

/// `narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *,
/// Tensor(a!) out)`: `start` in `[-size, size]` (negative counts from the
/// end), `length ≥ 0`, `start + length ≤ size` (upstream
/// `check_narrow_copy_args`).
pub const NARROW_COPY_OUT: Kernel = op!(
    "aten::narrow_copy.out(Tensor self, int dim, SymInt start, SymInt length, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (dim, start, length) = (ctx.int(1)?, ctx.int(2)?, ctx.int(3)?);
        let ([x], [mut out]) = ctx.io([0], [4])?;
        let x = required(x, 0)?;
        let dim = norm_dim(dim, x.shape.rank())?;
        let size = x.shape.size(dim as isize) as i64;
        if length < 0 || start < -size || start > size {
            return Err(bad("narrow start or length"));
        }
        let start = if start < 0 { start + size } else { start };
        narrow(&x, dim, start as usize, length as usize, &mut out)
    }
);

/// Splits input argument 0 along `dim` into the tensors of the `Tensor[]`
/// argument `out_arg`; `len(k)` gives chunk `k`'s length (checked against
/// each output's size).
fn split_into(
    ctx: &mut KernelContext<'_, '_>,
    dim: i64,
    out_arg: usize,
    count: usize,
    len: impl Fn(usize) -> Result<usize>,
) -> Result<()> {
    let x_value = ctx.value_index(0)?;
    let (_, x_shape) = ctx.tensor_info(0)?;
    if x_shape.rank() == 0 {
        return Err(bad("split of a 0-dim tensor"));
    }
    let dim = norm_dim(dim, x_shape.rank())?;
    if ctx.tensor_list_len(out_arg)? != count {
        return Err(bad("split output count"));
    }
    let mut start = 0usize;
    for k in 0..count {
        let n = len(k)?;
        let v = ctx.tensor_list_item(out_arg, k)?;
        let ([x], [mut out]) = ctx.io_values([Some(x_value)], [v])?;
        narrow(&required(x, 0)?, dim, start, n, &mut out)?;
        start = start.checked_add(n).ok_or(bad("split sizes overflow"))?;
    }
    if start != x_shape.size(dim as isize) {
        return Err(bad("split sizes do not sum to the dimension"));
    }
    Ok(())
}

/// `split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0,
/// *, Tensor(a!)[] out) -> ()`: sizes ≥ 0 summing to `size(dim)`, one output
/// per size (`torch.split` exports as this).
pub const SPLIT_WITH_SIZES_COPY_OUT: Kernel = op!(
    "aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *, Tensor(a!)[] out) -> ()",
    |ctx| {
        let (count, dim) = (ctx.int_list_len(1)?, ctx.int(2)?);
        // Read each size as it is used: the list may be longer than an IntList.
        let lens = SplitSizes::read(ctx, count)?;
        split_into(ctx, dim, 3, count, |k| lens.get(k))
    }
);

/// The sizes of a `split_with_sizes_copy`, read from the program (each ≥ 0).
struct SplitSizes {
    items: [usize; MAX_SPLITS],
}

/// Most outputs of one split (ExecuTorch has no such limit; etch's
/// `Tensor[]` outputs are resolved one by one, so this only bounds the
/// size list held on the stack).
const MAX_SPLITS: usize = 64;

impl SplitSizes {
    fn read(ctx: &KernelContext<'_, '_>, count: usize) -> Result<Self> {
        let mut items = [0usize; MAX_SPLITS];
        if count > MAX_SPLITS {
            return Err(bad("more than 64 split outputs"));
        }
        for (k, slot) in items.iter_mut().take(count).enumerate() {
            *slot = usize::try_from(ctx.int_list_item(1, k)?)
                .map_err(|_| bad("negative split size"))?;
        }
        Ok(SplitSizes { items })
    }

    fn get(&self, k: usize) -> Result<usize> {
        self.items.get(k).copied().ok_or(bad("split index"))
    }
}

/// `split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *,
/// Tensor(a!)[] out) -> ()`: chunks of `split_size` (the last may be
/// shorter); `split_size == 0` only for an empty dimension (one output).
pub const SPLIT_COPY_TENSOR_OUT: Kernel = op!(
    "aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()",
    |ctx| {
        let (split, dim) = (ctx.int(1)?, ctx.int(2)?);
        let (_, x_shape) = ctx.tensor_info(0)?;
        let size = x_shape.size(norm_dim(dim, x_shape.rank().max(1))? as isize);
        let split = usize::try_from(split).map_err(|_| bad("negative split_size"))?;
        if split == 0 && size != 0 {
            return Err(bad("split_size 0 of a non-empty dimension"));
        }
        let count = if split >= size {
            1
        } else {
            size.div_ceil(split)
        };
        split_into(ctx, dim, 3, count, |k| {
            Ok(split.min(size.saturating_sub(k * split)))
        })
    }
);

/// `unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()`:
/// one rank − 1 output per index of `dim`.
pub const UNBIND_COPY_INT_OUT: Kernel = op!(
    "aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()",
    |ctx| {
        let dim = ctx.int(1)?;
        let x_value = ctx.value_index(0)?;
        let (_, x_shape) = ctx.tensor_info(0)?;
        if x_shape.rank() == 0 {
            return Err(bad("unbind of a 0-dim tensor"));
        }
        let dim = norm_dim(dim, x_shape.rank())?;
        let count = x_shape.size(dim as isize);
        if ctx.tensor_list_len(2)? != count {
            return Err(bad("unbind output count"));
        }
        for k in 0..count {
            let v = ctx.tensor_list_item(2, k)?;
            let ([x], [mut out]) = ctx.io_values([Some(x_value)], [v])?;
            select(&required(x, 0)?, dim, k, &mut out)?;
        }
        Ok(())
    }
);

/// `stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out)`: inputs of
/// one shape placed along a new dimension `dim ∈ [-(rank+1), rank]`.
pub const STACK_OUT: Kernel = op!(
    "aten::stack.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (n, dim) = (ctx.tensor_list_len(0)?, ctx.int(1)?);
        let out_value = ctx.value_index(2)?;
        if n == 0 {
            return Err(bad("stack of no tensors"));
        }
        for k in 0..n {
            let v = ctx.tensor_list_item(0, k)?;
            let ([x], [mut out]) = ctx.io_values([Some(v)], [out_value])?;
            stack_one(&required(x, 0)?, k, n, dim, &mut out)?;
        }
        Ok(())
    }
);

/// Places input `k` of `n` at index `k` of the new dimension `dim` of `out`.
fn stack_one(
    x: &TensorView<'_>,
    k: usize,
    n: usize,
    dim: i64,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let dim = norm_dim(dim, rank + 1)?;
    if out.shape.rank() != rank + 1 || out.shape.size(dim as isize) != n || x.dtype != out.dtype {
        return Err(bad("stack output shape"));
    }
    let os = signed_strides(&out.shape);
    let (mut dst_strides, mut sizes) = ([0isize; MAX_WALK], [0usize; MAX_WALK]);
    for d in 0..rank {
        let od = if d < dim { d } else { d + 1 };
        let size = x.shape.size(d as isize);
        if out.shape.size(od as isize) != size {
            return Err(bad("stack input shapes"));
        }
        if let (Some(st), Some(sz)) = (dst_strides.get_mut(d), sizes.get_mut(d)) {
            *st = os.get(od).copied().unwrap_or(0);
            *sz = size;
        }
    }
    let elem = elem_size(x.dtype)?;
    let base = k * out.shape.strides().get(dim).copied().unwrap_or(0);
    copy_walk(
        sizes.get(..rank).unwrap_or(&[]),
        x.data,
        Side::new(0, &signed_strides(&x.shape)),
        out.data,
        Side::new(base, &dst_strides),
        elem,
    )
}

/// `out` = `x` with dimensions `d0` and `d1` swapped.
pub fn transpose(
    x: &TensorView<'_>,
    d0: usize,
    d1: usize,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let mut strides = signed_strides(&x.shape);
    if out.shape.rank() != rank {
        return Err(bad("transpose output rank"));
    }
    strides.swap(d0.min(MAX_WALK - 1), d1.min(MAX_WALK - 1));
    for d in 0..rank {
        let src = if d == d0 {
            d1
        } else if d == d1 {
            d0
        } else {
            d
        };
        if out.shape.size(d as isize) != x.shape.size(src as isize) {
            return Err(bad("transpose output shape"));
        }
    }
    let sizes = sizes_of(&out.shape);
    move_into(x, 0, &strides, out, sizes.get(..rank).unwrap_or(&[]))
}

/// `transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!)
/// out)` (a 0-dim tensor accepts dims 0 and −1).
pub const TRANSPOSE_COPY_INT_OUT: Kernel = op!(
    "aten::transpose_copy.int_out(Tensor self, int dim0, int dim1, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (d0, d1) = (ctx.int(1)?, ctx.int(2)?);
        let ([x], [mut out]) = ctx.io([0], [3])?;
        let x = required(x, 0)?;
        let r = x.shape.rank().max(1);
        let (d0, d1) = (norm_dim(d0, r)?, norm_dim(d1, r)?);
        transpose(&x, d0, d1, &mut out)
    }
);

/// `t_copy.out(Tensor self, *, Tensor(a!) out)`: rank ≤ 2; a copy below
/// rank 2.
pub const T_COPY_OUT: Kernel = op!(
    "aten::t_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io([0], [1])?;
        let x = required(x, 0)?;
        match x.shape.rank() {
            0 | 1 => transpose(&x, 0, 0, &mut out),
            2 => transpose(&x, 0, 1, &mut out),
            _ => Err(bad("t_copy of a tensor of rank > 2")),
        }
    }
);

/// `alias_copy.out(Tensor self, *, Tensor(a!) out)`: a copy.
pub const ALIAS_COPY_OUT: Kernel = op!(
    "aten::alias_copy.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let ([x], [mut out]) = ctx.io([0], [1])?;
        let x = required(x, 0)?;
        transpose(&x, 0, 0, &mut out)
    }
);

/// `out` = `x` tiled `repeats[d]` times along each dimension (`x` seen with
/// leading size-1 dimensions up to `repeats.len()`). One walk over
/// (tile, element) pairs: a rank-r repeat is a 2r-dimensional copy.
pub fn repeat(x: &TensorView<'_>, repeats: &[i64], out: &mut TensorViewMut<'_>) -> Result<()> {
    let (rank, r) = (x.shape.rank(), repeats.len());
    if r < rank || out.shape.rank() != r || x.dtype != out.dtype {
        return Err(bad("repeat rank or dtype"));
    }
    if r > MAX_WALK / 2 {
        return Err(bad("repeat rank"));
    }
    let (xs, os) = (signed_strides(&x.shape), signed_strides(&out.shape));
    let mut sizes = [0usize; MAX_WALK];
    let (mut src, mut dst) = ([0isize; MAX_WALK], [0isize; MAX_WALK]);
    for (d, &rep) in repeats.iter().enumerate() {
        let rep = usize::try_from(rep).map_err(|_| bad("negative repeat"))?;
        // The input dimension aligned with output dimension d, if any.
        let (size, stride) = match (d + rank).checked_sub(r) {
            Some(xd) => (x.shape.size(xd as isize), xs.get(xd).copied().unwrap_or(0)),
            None => (1, 0),
        };
        let o = os.get(d).copied().unwrap_or(0);
        if rep.checked_mul(size) != Some(out.shape.size(d as isize)) {
            return Err(bad("repeat output shape"));
        }
        // (tile, element): tiles step by a whole input extent in `out`.
        set(&mut sizes, 2 * d, rep);
        set(&mut sizes, 2 * d + 1, size);
        set(&mut src, 2 * d + 1, stride);
        set(&mut dst, 2 * d, o.wrapping_mul(size as isize));
        set(&mut dst, 2 * d + 1, o);
    }
    copy_walk(
        sizes.get(..2 * r).unwrap_or(&[]),
        x.data,
        Side::new(0, &src),
        out.data,
        Side::new(0, &dst),
        elem_size(x.dtype)?,
    )
}

fn set<T>(a: &mut [T], k: usize, v: T) {
    if let Some(slot) = a.get_mut(k) {
        *slot = v;
    }
}

/// `repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out)`:
/// `len(repeats) ≥ rank`, each ≥ 0.
pub const REPEAT_OUT: Kernel = op!(
    "aten::repeat.out(Tensor self, SymInt[] repeats, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let repeats = ctx.int_list(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        repeat(&required(x, 0)?, repeats.as_slice(), &mut out)
    }
);

/// Upstream's `flip_out` and `roll_out` read the input at
/// `coordinateToIndex(indexToCoordinate(ix))`, mixing a row-major coordinate
/// with dim-order strides: in any other dim order their result is not a
/// flip or roll. etch does not emulate that; it rejects those layouts.
fn contiguous_only(x: &TensorView<'_>, out: &TensorViewMut<'_>) -> Result<()> {
    if x.shape.is_contiguous() && out.shape.is_contiguous() {
        Ok(())
    } else {
        Err(bad("flip/roll of a tensor not in default dim order"))
    }
}

/// `out` = `x` reversed along every dimension in `dims` (each once; negative
/// dims count from the end): the walk starts at the last element of each
/// flipped dimension and steps backwards.
pub fn flip(x: &TensorView<'_>, dims: &[i64], out: &mut TensorViewMut<'_>) -> Result<()> {
    let rank = x.shape.rank();
    if out.shape.sizes() != x.shape.sizes() {
        return Err(bad("flip output shape"));
    }
    contiguous_only(x, out)?;
    let mut strides = signed_strides(&x.shape);
    let mut base = 0usize;
    let mut seen = 0u32;
    for &d in dims {
        let d = norm_dim(d, rank.max(1))?;
        if seen & (1 << d) != 0 {
            return Err(bad("flip dims repeat a dimension"));
        }
        seen |= 1 << d;
        let (Some(st), Some(&ust)) = (strides.get_mut(d), x.shape.strides().get(d)) else {
            continue; // a 0-dim tensor's dim 0
        };
        base += (x.shape.size(d as isize).saturating_sub(1)).saturating_mul(ust);
        *st = -*st;
    }
    let sizes = sizes_of(&x.shape);
    move_into(x, base, &strides, out, sizes.get(..rank).unwrap_or(&[]))
}

/// `flip.out(Tensor self, int[] dims, *, Tensor(a!) out)`.
pub const FLIP_OUT: Kernel = op!(
    "aten::flip.out(Tensor self, int[] dims, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let dims = ctx.int_list(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        flip(&required(x, 0)?, dims.as_slice(), &mut out)
    }
);

/// `out[c] = x[c − shift]` along each dimension (cyclically): shifts of a
/// repeated dimension add up, as upstream's `roll_out`. Each rolled
/// dimension is two segments, so this is at most 2^k walks for k rolled
/// dimensions (k ≤ 16).
pub fn roll(
    x: &TensorView<'_>,
    shifts: &[i64],
    dims: &[i64],
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if rank == 0 || shifts.is_empty() || shifts.len() != dims.len() {
        return Err(bad("roll shifts and dims"));
    }
    if out.shape.sizes() != x.shape.sizes() || x.dtype != out.dtype {
        return Err(bad("roll output shape"));
    }
    contiguous_only(x, out)?;
    if x.numel() == 0 {
        return Ok(());
    }
    let mut shift = [0usize; MAX_WALK];
    for (&s, &d) in shifts.iter().zip(dims) {
        let d = norm_dim(d, rank)?;
        let n = x.shape.size(d as isize) as i64;
        if let (Some(slot), Some(s)) = (shift.get_mut(d), s.checked_rem_euclid(n)) {
            let total = (*slot as i64).wrapping_add(s);
            *slot = total.checked_rem_euclid(n).unwrap_or(0) as usize;
        }
    }
    let rolled = shift.iter().filter(|&&s| s != 0).count();
    let (xs, os) = (x.shape.strides(), out.shape.strides());
    let (src_strides, dst_strides) = (signed_strides(&x.shape), signed_strides(&out.shape));
    let elem = elem_size(x.dtype)?;
    // Combination `mask`: bit j set = the j-th rolled dimension's wrapped
    // segment (out [0, s) ← x [n−s, n)), clear = out [s, n) ← x [0, n−s).
    for mask in 0u32..(1u32 << rolled) {
        let (mut sizes, mut src_base, mut dst_base, mut j) =
            ([0usize; MAX_WALK], 0usize, 0usize, 0);
        for (d, size) in sizes.iter_mut().enumerate().take(rank) {
            let n = x.shape.size(d as isize);
            let s = shift.get(d).copied().unwrap_or(0);
            let (len, from, to) = if s == 0 {
                (n, 0, 0)
            } else {
                j += 1;
                if mask & (1 << (j - 1)) != 0 {
                    (s, n - s, 0)
                } else {
                    (n - s, 0, s)
                }
            };
            *size = len;
            src_base += from * xs.get(d).copied().unwrap_or(0);
            dst_base += to * os.get(d).copied().unwrap_or(0);
        }
        copy_walk(
            sizes.get(..rank).unwrap_or(&[]),
            x.data,
            Side::new(src_base, &src_strides),
            out.data,
            Side::new(dst_base, &dst_strides),
            elem,
        )?;
    }
    Ok(())
}

/// `roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!)
/// out)`: as upstream, `dims` must name one dimension per shift (the
/// flattened roll, `dims=[]`, is `InvalidArgument`). `torch.roll` exports as
/// `arange`/`fmod`/`index_select`, not as this.
pub const ROLL_OUT: Kernel = op!(
    "aten::roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let (shifts, dims) = (ctx.int_list(1)?, ctx.int_list(2)?);
        let ([x], [mut out]) = ctx.io([0], [3])?;
        roll(&required(x, 0)?, shifts.as_slice(), dims.as_slice(), &mut out)
    }
);

/// Pixel shuffle (`down == false`, `[.., C·r², H, W] → [.., C, H·r, W·r]`)
/// or unshuffle (`down == true`, the inverse): one walk over
/// `[.., C, H, r, W, r]` (shuffle) or `[.., C, r, r, H, W]` (unshuffle)
/// with both tensors' real strides.
pub fn pixel_shuffle(
    x: &TensorView<'_>,
    r: i64,
    down: bool,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    let r = usize::try_from(r).map_err(|_| bad("pixel shuffle factor"))?;
    if rank < 3 || out.shape.rank() != rank || r == 0 || x.dtype != out.dtype {
        return Err(bad("pixel shuffle arguments"));
    }
    // `big` has the r² channels, `small` the r-times larger plane.
    let (big, small) = if down {
        (&out.shape, &x.shape)
    } else {
        (&x.shape, &out.shape)
    };
    let lead = rank - 3;
    let rr = r.checked_mul(r).ok_or(bad("pixel shuffle factor"))?;
    let (cb, hb, wb) = (big.size(-3), big.size(-2), big.size(-1));
    let c = cb.checked_div(rr).ok_or(bad("pixel shuffle factor"))?;
    if c * rr != cb
        || small.size(-3) != c
        || Some(small.size(-2)) != hb.checked_mul(r)
        || Some(small.size(-1)) != wb.checked_mul(r)
        || (0..lead).any(|d| big.size(d as isize) != small.size(d as isize))
    {
        return Err(bad("pixel shuffle shapes"));
    }
    let (bs, ss) = (signed_strides(big), signed_strides(small));
    let at = |s: &[isize; MAX_WALK], d: usize| s.get(d).copied().unwrap_or(0);
    let (bc, bh, bw) = (at(&bs, lead), at(&bs, lead + 1), at(&bs, lead + 2));
    let (sc, sh, sw) = (at(&ss, lead), at(&ss, lead + 1), at(&ss, lead + 2));
    let ri = r as isize;
    // Walk [.., C, H, i, W, j]: big[c·r² + i·r + j, h, w] = small[c, h·r + i, w·r + j].
    let tail_sizes = [c, hb, r, wb, r];
    let tail_big = [bc.wrapping_mul(ri * ri), bh, bc.wrapping_mul(ri), bw, bc];
    let tail_small = [sc, sh.wrapping_mul(ri), sh, sw.wrapping_mul(ri), sw];
    let (mut sizes, mut big_st, mut small_st) = ([0usize; MAX_WALK], bs, ss);
    for d in 0..lead {
        if let Some(s) = sizes.get_mut(d) {
            *s = big.size(d as isize);
        }
    }
    for (k, ((&n, &b), &s)) in tail_sizes
        .iter()
        .zip(&tail_big)
        .zip(&tail_small)
        .enumerate()
    {
        if let (Some(sz), Some(bst), Some(sst)) = (
            sizes.get_mut(lead + k),
            big_st.get_mut(lead + k),
            small_st.get_mut(lead + k),
        ) {
            (*sz, *bst, *sst) = (n, b, s);
        }
    }
    let sizes = sizes.get(..lead + 5).unwrap_or(&[]);
    let (src_st, dst_st) = if down {
        (&small_st, &big_st)
    } else {
        (&big_st, &small_st)
    };
    copy_walk(
        sizes,
        x.data,
        Side::new(0, src_st),
        out.data,
        Side::new(0, dst_st),
        elem_size(x.dtype)?,
    )
}

/// `pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out)`
/// (`F.pixel_shuffle` exports as view/permute copies, not as this).
pub const PIXEL_SHUFFLE_OUT: Kernel = op!(
    "aten::pixel_shuffle.out(Tensor self, int upscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let r = ctx.int(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        pixel_shuffle(&required(x, 0)?, r, false, &mut out)
    }
);

/// `pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out)`.
pub const PIXEL_UNSHUFFLE_OUT: Kernel = op!(
    "aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let r = ctx.int(1)?;
        let ([x], [mut out]) = ctx.io([0], [2])?;
        pixel_shuffle(&required(x, 0)?, r, true, &mut out)
    }
);

#[cfg(test)]
mod tests {
    use super::*;
    use etch_runtime::{ErrorCode, ScalarType, Shape};

    fn view<'a>(sizes: &'a [u32], order: &'a [u8], data: &'a [u8]) -> TensorView<'a> {
        TensorView {
            dtype: ScalarType::CHAR,
            shape: Shape::new(sizes, order).unwrap(),
            data,
        }
    }

    fn out<'a>(sizes: &'a [u32], data: &'a mut [u8]) -> TensorViewMut<'a> {
        TensorViewMut {
            dtype: ScalarType::CHAR,
            shape: Shape::contiguous(sizes).unwrap(),
            data,
        }
    }

    fn code(r: Result<()>) -> ErrorCode {
        r.unwrap_err().code
    }

    const IOTA: [u8; 24] = [
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
    ];

    #[test]
    fn select_and_narrow_follow_strides() {
        // A [2, 3] tensor stored transposed (dim order [1, 0]): logical
        // element (i, j) is byte j·2 + i.
        let x = view(&[2, 3], &[1, 0], &IOTA[..6]);
        let mut o = [0u8; 3];
        select(&x, 0, 1, &mut out(&[3], &mut o)).unwrap();
        assert_eq!(o, [1, 3, 5]);
        let mut o = [0u8; 4];
        narrow(&x, 1, 1, 2, &mut out(&[2, 2], &mut o)).unwrap();
        assert_eq!(o, [2, 4, 3, 5]);
    }

    #[test]
    fn repeat_tiles_with_leading_dims() {
        let x = view(&[2], &[0], &IOTA[..2]);
        let mut o = [0u8; 12];
        repeat(&x, &[2, 3], &mut out(&[2, 6], &mut o)).unwrap();
        assert_eq!(o, [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn pixel_shuffle_round_trips() {
        // [1, 4, 1, 2] → [1, 1, 2, 4]: out[0, 0, i, w·2 + j] = x[0, i·2 + j, 0, w].
        let x = view(&[1, 4, 1, 2], &[0, 1, 2, 3], &IOTA[..8]);
        let mut o = [0u8; 8];
        pixel_shuffle(&x, 2, false, &mut out(&[1, 1, 2, 4], &mut o)).unwrap();
        assert_eq!(o, [0, 2, 1, 3, 4, 6, 5, 7]);
        let y = view(&[1, 1, 2, 4], &[0, 1, 2, 3], &o);
        let mut back = [0u8; 8];
        pixel_shuffle(&y, 2, true, &mut out(&[1, 4, 1, 2], &mut back)).unwrap();
        assert_eq!(back, IOTA[..8]);
    }

    #[test]
    fn roll_and_flip() {
        let x = view(&[2, 3], &[0, 1], &IOTA[..6]);
        let mut o = [0u8; 6];
        roll(&x, &[1, -4], &[1, 0], &mut out(&[2, 3], &mut o)).unwrap();
        // dim 1 by 1, dim 0 by −4 ≡ 0.
        assert_eq!(o, [2, 0, 1, 5, 3, 4]);
        roll(&x, &[1, 1], &[1, 1], &mut out(&[2, 3], &mut o)).unwrap();
        assert_eq!(o, [1, 2, 0, 4, 5, 3]);
        flip(&x, &[-1, 0], &mut out(&[2, 3], &mut o)).unwrap();
        assert_eq!(o, [5, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn bad_arguments_are_invalid_argument() {
        use ErrorCode::InvalidArgument as IA;
        let x = view(&[2, 3], &[0, 1], &IOTA[..6]);
        let mut o = [0u8; 6];
        // select index beyond the dimension; narrow past the end.
        assert_eq!(code(select(&x, 1, 3, &mut out(&[2], &mut o[..2]))), IA);
        assert_eq!(
            code(narrow(&x, 1, 2, 2, &mut out(&[2, 2], &mut o[..4]))),
            IA
        );
        assert_eq!(norm_index(-4, 3).unwrap_err().code, IA);
        assert_eq!(norm_index(-3, 3).unwrap(), 0);
        // repeat: fewer repeats than dims, negative repeat, wrong out shape.
        assert_eq!(code(repeat(&x, &[2], &mut out(&[4, 3], &mut [0; 12]))), IA);
        assert_eq!(code(repeat(&x, &[1, -1], &mut out(&[2, 3], &mut o))), IA);
        assert_eq!(code(repeat(&x, &[1, 1], &mut out(&[3, 2], &mut o))), IA);
        // flip: repeated dim, dim out of range, channels-last (upstream's walk is wrong there).
        assert_eq!(code(flip(&x, &[1, -1], &mut out(&[2, 3], &mut o))), IA);
        assert_eq!(code(flip(&x, &[2], &mut out(&[2, 3], &mut o))), IA);
        let cl = view(&[1, 2, 3, 1], &[0, 2, 3, 1], &IOTA[..6]);
        assert_eq!(code(flip(&cl, &[1], &mut out(&[1, 2, 3, 1], &mut o))), IA);
        // roll: no shifts, mismatched lists.
        assert_eq!(code(roll(&x, &[], &[], &mut out(&[2, 3], &mut o))), IA);
        assert_eq!(code(roll(&x, &[1], &[0, 1], &mut out(&[2, 3], &mut o))), IA);
        // pixel shuffle: channels not divisible by r², factor 0.
        let p = view(&[1, 3, 1, 2], &[0, 1, 2, 3], &IOTA[..6]);
        assert_eq!(
            code(pixel_shuffle(&p, 2, false, &mut out(&[1, 1, 2, 3], &mut o))),
            IA
        );
        assert_eq!(
            code(pixel_shuffle(&p, 0, false, &mut out(&[1, 3, 1, 2], &mut o))),
            IA
        );
        // stack: dim beyond rank + 1, output count wrong.
        assert_eq!(
            code(stack_one(&x, 0, 2, 3, &mut out(&[2, 2, 3], &mut [0; 12]))),
            IA
        );
        assert_eq!(
            code(stack_one(&x, 0, 2, 0, &mut out(&[3, 2, 3], &mut [0; 18]))),
            IA
        );
        // transpose into a wrong shape; dtype mismatch.
        assert_eq!(code(transpose(&x, 0, 1, &mut out(&[2, 3], &mut o))), IA);
        let mut wrong = out(&[2, 3], &mut o);
        wrong.dtype = ScalarType::BYTE;
        assert_eq!(code(transpose(&x, 0, 0, &mut wrong)), IA);
    }

    #[test]
    fn stack_interleaves() {
        let (a, b) = (
            view(&[2], &[0], &IOTA[..2]),
            view(&[2], &[0], &IOTA[10..12]),
        );
        let mut o = [0u8; 4];
        stack_one(&a, 0, 2, -1, &mut out(&[2, 2], &mut o)).unwrap();
        stack_one(&b, 1, 2, -1, &mut out(&[2, 2], &mut o)).unwrap();
        assert_eq!(o, [0, 10, 1, 11]);
    }
}

/// `out` = `x` padded with `value`: `pad` holds (before, after) pairs from
/// the last dimension backwards, each ≥ 0 (upstream
/// `check_constant_pad_args`; cropping with negative pads is
/// `InvalidArgument`). The value is cast with the overflow check.
/// Default dim order only: upstream walks both tensors as if contiguous.
pub fn constant_pad(
    x: &TensorView<'_>,
    pad: &[i64],
    value: Scalar,
    out: &mut TensorViewMut<'_>,
) -> Result<()> {
    let rank = x.shape.rank();
    if x.dtype != out.dtype || out.shape.rank() != rank {
        return Err(bad("constant_pad_nd dtype or rank"));
    }
    if !pad.len().is_multiple_of(2) || pad.len() / 2 > rank || pad.iter().any(|&p| p < 0) {
        return Err(bad("constant_pad_nd pad"));
    }
    if !x.shape.is_contiguous() || !out.shape.is_contiguous() {
        return Err(bad("constant_pad_nd of a tensor not in default dim order"));
    }
    let os = out.shape.strides();
    let mut base = 0usize;
    for d in 0..rank {
        let k = rank - 1 - d;
        let before = pad.get(2 * k).copied().unwrap_or(0) as u64;
        let after = pad.get(2 * k + 1).copied().unwrap_or(0) as u64;
        let want = (x.shape.size(d as isize) as u64)
            .checked_add(before)
            .and_then(|s| s.checked_add(after));
        if want != Some(out.shape.size(d as isize) as u64) {
            return Err(bad("constant_pad_nd output shape"));
        }
        base += before as usize * os.get(d).copied().unwrap_or(0);
    }
    let (v, elem) = scalar_bytes(value, out.dtype)?;
    fill(out.data, &v, elem);
    let sizes = sizes_of(&x.shape);
    copy_walk(
        sizes.get(..rank).unwrap_or(&[]),
        x.data,
        Side::new(0, &signed_strides(&x.shape)),
        out.data,
        Side::new(base, &signed_strides(&out.shape)),
        elem,
    )
}

/// `constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *,
/// Tensor(a!) out)`.
pub const CONSTANT_PAD_ND_OUT: Kernel = op!(
    "aten::constant_pad_nd.out(Tensor self, SymInt[] pad, Scalar value=0, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let n = ctx.int_list_len(1)?;
        let mut pad = [0i64; 2 * MAX_WALK];
        if n > pad.len() {
            return Err(bad("constant_pad_nd pad longer than the rank"));
        }
        for (k, p) in pad.iter_mut().take(n).enumerate() {
            *p = ctx.int_list_item(1, k)?;
        }
        let value = Scalar::read(ctx, 2)?;
        let ([x], [mut out]) = ctx.io([0], [3])?;
        constant_pad(&required(x, 0)?, pad.get(..n).unwrap_or(&[]), value, &mut out)
    }
);

#[cfg(test)]
mod pad_tests {
    use super::*;
    use etch_runtime::{ErrorCode, ScalarType, Shape};

    fn out<'a>(buf: &'a mut [u8], sizes: &'a [u32]) -> TensorViewMut<'a> {
        TensorViewMut {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(sizes).unwrap(),
            data: &mut buf[..sizes.iter().product::<u32>() as usize],
        }
    }

    #[test]
    fn constant_pad_checks() {
        let data = [1u8, 2, 3, 4];
        let x = TensorView {
            dtype: ScalarType::BYTE,
            shape: Shape::contiguous(&[2, 2]).unwrap(),
            data: &data,
        };
        let mut buf = [0u8; 12];
        constant_pad(
            &x,
            &[1, 0, 0, 1],
            Scalar::Int(-1),
            &mut out(&mut buf, &[3, 3]),
        )
        .unwrap();
        assert_eq!(buf[..9], [255, 1, 2, 255, 3, 4, 255, 255, 255]);
        let ia = ErrorCode::InvalidArgument;
        // Negative pad (crop), odd length, too many pairs, value out of range, wrong shape.
        let code = |r: Result<()>| r.unwrap_err().code;
        assert_eq!(
            code(constant_pad(
                &x,
                &[-1, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 1])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[0, 0, 0, 0, 0, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 2])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Int(256),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Double(f64::NAN),
                &mut out(&mut buf, &[2, 3])
            )),
            ia
        );
        assert_eq!(
            code(constant_pad(
                &x,
                &[1, 0],
                Scalar::Int(0),
                &mut out(&mut buf, &[2, 4])
            )),
            ia
        );
    }
}
