//! Elements rearranged: `repeat`, `flip`, `roll`, `pixel_shuffle`,
//! `pixel_unshuffle`.

use etch_runtime::context::required;
use etch_runtime::tensor::{TensorView, TensorViewMut};
use etch_runtime::{arg, op, Kernel, Result};

use super::slice::move_into;
use crate::ops::bad;
use crate::ops::copy::walk::{
    copy_walk, elem_size, norm_dim, signed_strides, sizes_of, Side, MAX_WALK,
};

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
        let repeats = ctx.int_list(arg!(SCHEMA, repeats))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        repeat(
            &required(x, arg!(SCHEMA, self))?,
            repeats.as_slice(),
            &mut out,
        )
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
        let dims = ctx.int_list(arg!(SCHEMA, dims))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        flip(&required(x, arg!(SCHEMA, self))?, dims.as_slice(), &mut out)
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
        let (shifts, dims) = (ctx.int_list(arg!(SCHEMA, shifts))?, ctx.int_list(arg!(SCHEMA, dims))?);
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        roll(&required(x, arg!(SCHEMA, self))?, shifts.as_slice(), dims.as_slice(), &mut out)
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
    // r and r² as strides: r² may fit `usize` but not `isize` (empty
    // tensors pass every shape check whatever the factor).
    let ri = isize::try_from(r).map_err(|_| bad("pixel shuffle factor"))?;
    let rri = isize::try_from(rr).map_err(|_| bad("pixel shuffle factor"))?;
    // Walk [.., C, H, i, W, j]: big[c·r² + i·r + j, h, w] = small[c, h·r + i, w·r + j].
    let tail_sizes = [c, hb, r, wb, r];
    let tail_big = [bc.wrapping_mul(rri), bh, bc.wrapping_mul(ri), bw, bc];
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
        let r = ctx.int(arg!(SCHEMA, upscale_factor))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        pixel_shuffle(&required(x, arg!(SCHEMA, self))?, r, false, &mut out)
    }
);

/// `pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out)`.
pub const PIXEL_UNSHUFFLE_OUT: Kernel = op!(
    "aten::pixel_unshuffle.out(Tensor self, int downscale_factor, *, Tensor(a!) out) -> Tensor(a!)",
    |ctx| {
        let r = ctx.int(arg!(SCHEMA, downscale_factor))?;
        let ([x], [mut out]) = ctx.io(arg!(SCHEMA, [self]), arg!(SCHEMA, [out]))?;
        pixel_shuffle(&required(x, arg!(SCHEMA, self))?, r, true, &mut out)
    }
);
