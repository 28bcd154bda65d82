//! Output resizing for bounded dynamic shapes: what ExecuTorch's portable
//! kernels do with `resize_tensor` / `resize_to_broadcast_target_size`
//! before writing `out`. Each helper computes the output's sizes from the
//! inputs' current ones and calls [`KernelContext::resize`]; in a method
//! without dynamic tensors it does nothing (the kernel's own shape checks
//! then see the serialized sizes, as before).

use etch_runtime::{Error, ErrorCode, KernelContext, Result};

/// Most dimensions a tensor has (ExecuTorch's `kTensorDimensionLimit`).
const MAX_RANK: usize = 16;

fn bad(what: &'static str) -> Error {
    Error::new(ErrorCode::InvalidArgument, what, 0)
}

/// Sizes being computed: up to 16 of them.
pub(crate) struct Sizes {
    items: [i64; MAX_RANK],
    len: usize,
}

impl Sizes {
    pub(crate) fn new() -> Self {
        Sizes {
            items: [0; MAX_RANK],
            len: 0,
        }
    }
    pub(crate) fn push(&mut self, s: i64) -> Result<()> {
        let slot = self.items.get_mut(self.len).ok_or(bad("rank above 16"))?;
        *slot = s;
        self.len += 1;
        Ok(())
    }
    /// Sets every size from dimension `d` on to `v`.
    pub(crate) fn fill_from(&mut self, d: usize, v: i64) {
        if let Some(tail) = self.items.get_mut(d..self.len) {
            tail.fill(v);
        }
    }
    /// Sets dimension `d`'s size (nothing past the rank).
    pub(crate) fn set(&mut self, d: usize, v: i64) {
        if let Some(s) = self.items.get_mut(..self.len).and_then(|s| s.get_mut(d)) {
            *s = v;
        }
    }
    pub(crate) fn as_slice(&self) -> &[i64] {
        self.items.get(..self.len).unwrap_or(&[])
    }
    /// Current sizes of tensor argument `i`.
    pub(crate) fn of(ctx: &KernelContext<'_, '_>, i: usize) -> Result<Self> {
        let (_, shape) = ctx.tensor_info(i)?;
        let mut s = Sizes::new();
        for d in shape.sizes().iter() {
            s.push(d as i64)?;
        }
        Ok(s)
    }
}

/// Resizes `out` to `sizes` when the method has dynamic shapes.
pub(crate) fn resize(ctx: &mut KernelContext<'_, '_>, out: usize, sizes: &Sizes) -> Result<()> {
    if !ctx.has_dynamic_shapes() {
        return Ok(());
    }
    ctx.resize(out, sizes.as_slice())
}

/// `out` resized to tensor argument `like`'s sizes (element-wise ops).
pub(crate) fn resize_like(ctx: &mut KernelContext<'_, '_>, out: usize, like: usize) -> Result<()> {
    ctx.resize_like(out, like)
}

/// `out` resized to the broadcast of tensor arguments `a` and `b`
/// (`resize_to_broadcast_target_size`); sizes that do not broadcast are
/// `InvalidArgument`.
pub(crate) fn resize_broadcast(
    ctx: &mut KernelContext<'_, '_>,
    out: usize,
    a: usize,
    b: usize,
) -> Result<()> {
    if !ctx.has_dynamic_shapes() {
        return Ok(());
    }
    let (sa, sb) = (Sizes::of(ctx, a)?, Sizes::of(ctx, b)?);
    let (sa, sb) = (sa.as_slice(), sb.as_slice());
    let rank = sa.len().max(sb.len());
    let mut s = Sizes::new();
    for d in 0..rank {
        // Aligned from the last dimension.
        let at = |l: &[i64]| {
            (d + l.len())
                .checked_sub(rank)
                .and_then(|k| l.get(k).copied())
                .unwrap_or(1)
        };
        let (x, y) = (at(sa), at(sb));
        s.push(match (x, y) {
            _ if x == y => x,
            (1, _) => y,
            (_, 1) => x,
            _ => return Err(bad("sizes do not broadcast")),
        })?;
    }
    ctx.resize(out, s.as_slice())
}

/// The sizes of a view of a tensor of `numel` elements as `list` (int list
/// argument `arg`: run-time Int values), one `-1` inferred, as upstream's
/// `get_view_target_size`; a size below -1, two `-1`s or another element
/// count are `InvalidArgument`.
pub(crate) fn view_sizes(ctx: &KernelContext<'_, '_>, arg: usize, numel: usize) -> Result<Sizes> {
    let list = ctx.int_list(arg)?;
    let mut s = Sizes::new();
    let mut infer = None;
    let mut known: u64 = 1;
    for (d, &v) in list.as_slice().iter().enumerate() {
        if v == -1 && infer.is_none() {
            infer = Some(d);
        } else if v < 0 {
            return Err(bad("view size negative"));
        } else {
            known = known
                .checked_mul(v as u64)
                .ok_or(bad("view size overflows"))?;
        }
        s.push(v)?;
    }
    let numel = numel as u64;
    match infer {
        Some(d) => {
            let v = numel
                .checked_div(known)
                .ok_or(bad("view size cannot be inferred"))?;
            if v * known != numel {
                return Err(bad("view sizes do not match the element count"));
            }
            if let Some(slot) = s.items.get_mut(d) {
                *slot = v as i64;
            }
        }
        None if known != numel => return Err(bad("view sizes do not match the element count")),
        None => {}
    }
    Ok(s)
}

/// Sizes of a reduction of argument `x` over `dims` (all when `None`),
/// kept as 1 with `keepdim`, dropped otherwise.
pub(crate) fn reduced_sizes(
    ctx: &KernelContext<'_, '_>,
    x: usize,
    dims: Option<&[i64]>,
    keepdim: bool,
) -> Result<Sizes> {
    let input = Sizes::of(ctx, x)?;
    let rank = input.len as i64;
    let mut s = Sizes::new();
    for (d, &size) in input.as_slice().iter().enumerate() {
        let reduced = match dims {
            None => true,
            Some([]) => true,
            Some(ds) => ds
                .iter()
                .any(|&k| (if k < 0 { k + rank } else { k }) == d as i64),
        };
        if !reduced {
            s.push(size)?;
        } else if keepdim {
            s.push(1)?;
        }
    }
    Ok(s)
}
