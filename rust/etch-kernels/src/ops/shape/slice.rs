//! Parts of one tensor: `slice_copy`, `select_copy`, `narrow_copy`,
//! `split_copy`, `split_with_sizes_copy`, `unbind_copy`.

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, KernelContext, Result};

use crate::ops::bad;
use crate::ops::copy::strided as copy;
use crate::ops::copy::walk::{
    copy_walk, elem_size, norm_dim, signed_strides, sizes_of, Side, MAX_WALK,
};

/// `slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None,
/// SymInt? end=None, SymInt step=1, *, Tensor(a!) out)`: `start` and `end`
/// clamped as upstream's `adjust_slice_indices`; the output's size along
/// `dim` must be the slice's length, `ceil((end - start) / step)`.
pub const SLICE_COPY_TENSOR_OUT: Kernel = op!(SLICE_COPY, slice_copy);

/// `start` clamped as upstream's `adjust_slice_indices`, and the slice's
/// length `ceil((end - start) / step)`; `step` > 0, `size` a tensor size.
fn slice_bounds(start: i64, end: Option<i64>, step: i64, size: i64) -> (i64, i64) {
    // `x + size` cannot overflow for a negative `x`: `size` is a tensor
    // size, far below `i64::MAX`.
    let start = if start < 0 { start + size } else { start }.clamp(0, size);
    let end = end.map_or(size, |e| if e < 0 { e + size } else { e });
    // max/min, not clamp: clamp's `start <= size` assertion is a panic path
    // the compiler does not remove (start is already in 0..=size).
    let end = end.max(start).min(size);
    // `end - start` is in 0..=size and `step` > 0: no overflow.
    let len = (end - start).div_euclid(step) + ((end - start).rem_euclid(step) != 0) as i64;
    (start, len)
}

/// The slice's length (see [`slice_bounds`]).
fn slice_len(start: i64, end: Option<i64>, step: i64, size: i64) -> i64 {
    slice_bounds(start, end, step, size).1
}

const SLICE_COPY: &str = "aten::slice_copy.Tensor_out(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1, *, Tensor(a!) out) -> Tensor(a!)";

fn slice_copy(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = SLICE_COPY;
    let dim = ctx.int(arg!(S, dim))?;
    let start = ctx.opt_int(arg!(S, start))?.unwrap_or(0);
    let step = ctx.int(arg!(S, step))?;
    let end = ctx.opt_int(arg!(S, end))?;
    if ctx.has_dynamic_shapes() {
        // The output: self's sizes with `dim` the slice's length (the
        // checks below refuse what does not add up).
        let mut sizes = crate::ops::dynamic::Sizes::of(ctx, arg!(S, self))?;
        let rank = sizes.as_slice().len() as i64;
        let d = if dim < 0 { dim + rank } else { dim };
        if let Some(&size) = usize::try_from(d)
            .ok()
            .and_then(|d| sizes.as_slice().get(d))
        {
            if step > 0 {
                sizes.set(d as usize, slice_len(start, end, step, size));
                crate::ops::dynamic::resize(ctx, arg!(S, out), &sizes)?;
            }
        }
    }
    let ([x], [out]) = ctx.io(arg!(S, [self]), arg!(S, [out]))?;
    let x = required(x, arg!(S, self))?;
    let rank = x.shape.rank() as i64;
    let dim = if dim < 0 { dim + rank } else { dim };
    if !(0..rank).contains(&dim)
        || step <= 0
        || x.dtype != out.dtype
        || out.shape.rank() != x.shape.rank()
    {
        return Err(bad("slice_copy arguments"));
    }
    let size = x.shape.size(dim as isize) as i64;
    let (start, len) = slice_bounds(start, end, step, size);
    if out.shape.size(dim as isize) as i64 != len {
        return Err(bad("slice_copy output length"));
    }
    let start = start as usize;
    // Source strides with `dim` stepped, starting at `start`.
    // `start` and `step` come from the file: every product is checked.
    let mut strides = x.shape.strides();
    let base = strides
        .get(dim as usize)
        .copied()
        .unwrap_or(0)
        .checked_mul(start);
    if let Some(s) = strides.get_mut(dim as usize) {
        *s = usize::try_from(step)
            .ok()
            .and_then(|step| s.checked_mul(step))
            .ok_or(bad("slice_copy step"))?;
    }
    for d in 0..x.shape.rank() {
        if d != dim as usize && x.shape.size(d as isize) != out.shape.size(d as isize) {
            return Err(bad("slice_copy output shape"));
        }
    }
    let elem = x.dtype.element_size().ok_or(bad("unsized dtype"))?;
    let base = base
        .and_then(|b| b.checked_mul(elem))
        .ok_or(bad("slice start"))?;
    let src = x.data.get(base..).ok_or(bad("slice start"))?;
    let out_strides = out.shape.strides();
    let sizes = out.shape;
    copy::strided_copy(src, &strides, out.data, &out_strides, sizes.sizes(), elem)
}

/// Copies `src` into `dst` after checking they have the same dtype; `dst`
/// gets `sizes` elements read at `src_base + Σ i·src_strides`.
pub(crate) fn move_into(
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
        let (dim, index) = (ctx.int(arg!(SCHEMA, dim))?, ctx.int(arg!(SCHEMA, index))?);
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let dim = norm_dim(dim, x.shape.rank())?;
        let index = norm_index(index, x.shape.size(dim as isize))?;
        select(&x, dim, index, &mut out)
    }
);

/// A possibly negative index into a dimension of `size`, checked.
pub(super) fn norm_index(index: i64, size: usize) -> Result<usize> {
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
        let (dim, start, length) = (ctx.int(arg!(SCHEMA, dim))?, ctx.int(arg!(SCHEMA, start))?, ctx.int(arg!(SCHEMA, length))?);
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        let x = required(x, arg!(SCHEMA, self))?;
        let dim = norm_dim(dim, x.shape.rank())?;
        let size = x.shape.size(dim as isize) as i64;
        if length < 0 || start < -size || start > size {
            return Err(bad("narrow start or length"));
        }
        let start = if start < 0 { start + size } else { start };
        narrow(&x, dim, start as usize, length as usize, &mut out)
    }
);

/// Splits the input along `dim` into the tensors of the `Tensor[]` output;
/// `args`: the positions of the input (`self`) and the output list (`out`);
/// `len(k)` gives chunk `k`'s length (checked against each output's size).
fn split_into(
    ctx: &mut KernelContext<'_, '_>,
    args: [usize; 2],
    dim: i64,
    count: usize,
    len: impl Fn(usize) -> Result<usize>,
) -> Result<()> {
    let [x_arg, out_arg] = args;
    let x_value = ctx.value_index(x_arg)?;
    let (_, x_shape) = ctx.tensor_info(x_arg)?;
    if x_shape.rank() == 0 {
        return Err(bad("split of a 0-dim tensor"));
    }
    let dim = norm_dim(dim, x_shape.rank())?;
    let dim_size = x_shape.size(dim as isize);
    if ctx.tensor_list_len(out_arg)? != count {
        return Err(bad("split output count"));
    }
    let mut start = 0usize;
    for k in 0..count {
        let n = len(k)?;
        let v = ctx.tensor_list_item(out_arg, k)?;
        let ([x], [mut out]) = ctx.io_values([Some(x_value)], [v])?;
        narrow(&required(x, x_arg)?, dim, start, n, &mut out)?;
        start = start.checked_add(n).ok_or(bad("split sizes overflow"))?;
    }
    if start != dim_size {
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
        let (count, dim) = (ctx.int_list_len(arg!(SCHEMA, split_sizes))?, ctx.int(arg!(SCHEMA, dim))?);
        // Read each size as it is used: the list may be longer than an IntList.
        let lens = SplitSizes::read(ctx, arg!(SCHEMA, split_sizes), count)?;
        split_into(ctx, arg!(SCHEMA, [self, out]), dim, count, |k| lens.get(k))
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
    /// The first `count` items of the `SymInt[]` argument at `arg`.
    fn read(ctx: &KernelContext<'_, '_>, arg: usize, count: usize) -> Result<Self> {
        let mut items = [0usize; MAX_SPLITS];
        if count > MAX_SPLITS {
            return Err(bad("more than 64 split outputs"));
        }
        for (k, slot) in items.iter_mut().take(count).enumerate() {
            *slot = usize::try_from(ctx.int_list_item(arg, k)?)
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
        let (split, dim) = (ctx.int(arg!(SCHEMA, split_size))?, ctx.int(arg!(SCHEMA, dim))?);
        let (_, x_shape) = ctx.tensor_info(arg!(SCHEMA, self))?;
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
        split_into(ctx, arg!(SCHEMA, [self, out]), dim, count, |k| {
            Ok(split.min(size.saturating_sub(k * split)))
        })
    }
);

/// `unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()`:
/// one rank − 1 output per index of `dim`.
pub const UNBIND_COPY_INT_OUT: Kernel = op!(
    "aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()",
    |ctx| {
        let dim = ctx.int(arg!(SCHEMA, dim))?;
        let x_value = ctx.value_index(arg!(SCHEMA, self))?;
        let (_, x_shape) = ctx.tensor_info(arg!(SCHEMA, self))?;
        if x_shape.rank() == 0 {
            return Err(bad("unbind of a 0-dim tensor"));
        }
        let dim = norm_dim(dim, x_shape.rank())?;
        let count = x_shape.size(dim as isize);
        if ctx.tensor_list_len(arg!(SCHEMA, out))? != count {
            return Err(bad("unbind output count"));
        }
        for k in 0..count {
            let v = ctx.tensor_list_item(arg!(SCHEMA, out), k)?;
            let ([x], [mut out]) = ctx.io_values([Some(x_value)], [v])?;
            select(&required(x, arg!(SCHEMA, self))?, dim, k, &mut out)?;
        }
        Ok(())
    }
);
