//! The two walks every reduction runs: [`ReducePlan`] (the kept and reduced
//! dimensions of one `dim` list) and [`for_each_slice`] (one dimension, for
//! the softmax family and `cumsum`).

use etch_runtime::{Result, Shape};

use super::MAX_RANK;
use crate::ops::bad;
use crate::ops::dtype::real::Real;

/// `dim` normalized against `rank` (a 0-d tensor takes 0 or -1), or
/// `InvalidArgument`.
pub(crate) fn normalize_dim(dim: i64, rank: usize) -> Result<usize> {
    let r = rank.max(1) as i64;
    let d = if dim < 0 { dim + r } else { dim };
    if (0..r).contains(&d) {
        Ok(d as usize)
    } else {
        Err(bad("dim out of range"))
    }
}

/// Which input elements reduce into each output element
/// (`ApplyOverDimListPlan`).
pub(crate) struct ReducePlan {
    rank: usize,
    sizes: [usize; MAX_RANK],
    strides: [usize; MAX_RANK],
    /// Bit `d` set: dimension `d` is reduced. 0 with `all`.
    mask: u32,
    /// No dim list (or an empty one, or a 0-d input): everything, flat.
    all: bool,
    numel: usize,
    /// Elements per output (`get_reduced_dim_product`).
    pub reduced: usize,
    /// Output elements (`get_out_numel`).
    pub out_numel: usize,
}

impl ReducePlan {
    /// Upstream's `check_dim_list_is_valid`: each dim in range, none twice.
    pub fn new(shape: &Shape, dims: Option<&[i64]>) -> Result<ReducePlan> {
        let rank = shape.rank();
        let mut plan = ReducePlan {
            rank,
            sizes: [0; MAX_RANK],
            strides: shape.strides(),
            mask: 0,
            all: true,
            numel: shape.numel(),
            reduced: shape.numel(),
            out_numel: 1,
        };
        for (s, v) in plan.sizes.iter_mut().zip(shape.sizes()) {
            *s = v as usize;
        }
        let dims = dims.unwrap_or(&[]);
        for &d in dims {
            let d = normalize_dim(d, rank)?;
            if plan.mask & (1 << d) != 0 {
                return Err(bad("dim appears twice in the dim list"));
            }
            plan.mask |= 1 << d;
        }
        if rank == 0 {
            plan.mask = 0;
            plan.reduced = 1;
        } else if !dims.is_empty() {
            plan.all = false;
            plan.reduced = 1;
            for (d, &size) in plan.sizes.iter().enumerate().take(rank) {
                if plan.mask & (1 << d) != 0 {
                    plan.reduced = plan.reduced.saturating_mul(size);
                } else {
                    plan.out_numel = plan.out_numel.saturating_mul(size);
                }
            }
        }
        Ok(plan)
    }

    /// Plan of a single optional dim (`argmax`, `max.dim`): `None` is all.
    pub fn single(shape: &Shape, dim: Option<i64>) -> Result<ReducePlan> {
        match dim {
            None => ReducePlan::new(shape, None),
            Some(d) => ReducePlan::new(shape, Some(&[d])),
        }
    }

    /// Whether `out` has the sizes upstream's `resize_reduction_out` gives:
    /// reduced dims kept as 1 (`keepdim`) or dropped.
    pub fn check_out(&self, out: &Shape, keepdim: bool) -> Result<()> {
        let o = out.sizes();
        let ok = if keepdim {
            o.len() == self.rank
                && o.iter().enumerate().all(|(d, s)| {
                    let kept = !self.all && self.mask & (1 << d) == 0;
                    let want = if kept {
                        self.sizes.get(d).copied()
                    } else {
                        Some(1)
                    };
                    want == Some(s as usize)
                })
        } else if self.all {
            o.is_empty()
        } else {
            let mut kept = (0..self.rank)
                .filter(|&d| self.mask & (1 << d) == 0)
                .map(|d| self.sizes.get(d).copied().unwrap_or(0));
            o.iter().all(|s| kept.next() == Some(s as usize)) && kept.next().is_none()
        };
        if !ok {
            return Err(bad("reduction output shape"));
        }
        // Outputs are written at `out_ix`, row-major over the kept dims.
        if !out.is_contiguous() {
            return Err(bad("reduction output dim order"));
        }
        Ok(())
    }

    /// Input offset of the first element of output `out_ix` (`get_init_index`).
    fn base(&self, out_ix: usize) -> usize {
        if self.all {
            return 0;
        }
        let mut rest = out_ix;
        let mut base = 0usize;
        for d in (0..self.rank).rev() {
            if self.mask & (1 << d) != 0 {
                continue;
            }
            let (Some(&size), Some(&stride)) = (self.sizes.get(d), self.strides.get(d)) else {
                break;
            };
            if size == 0 {
                return 0;
            }
            base += rest.checked_rem(size).unwrap_or(0) * stride;
            rest = rest.checked_div(size).unwrap_or(0);
        }
        base
    }

    /// Calls `f(input_offset, k)` for the `k`-th element reduced into
    /// output `out_ix`, in upstream's order; nothing for an empty input.
    pub fn visit(
        &self,
        out_ix: usize,
        mut f: impl FnMut(usize, usize) -> Result<()>,
    ) -> Result<()> {
        if self.numel == 0 {
            return Ok(());
        }
        if self.all {
            for i in 0..self.numel {
                f(i, i)?;
            }
            return Ok(());
        }
        let mut idx = [0usize; MAX_RANK];
        let mut off = self.base(out_ix);
        for k in 0..self.reduced {
            f(off, k)?;
            // Odometer over the reduced dims, innermost fastest.
            for d in (0..self.rank).rev() {
                if self.mask & (1 << d) == 0 {
                    continue;
                }
                let (Some(i), Some(&size), Some(&stride)) =
                    (idx.get_mut(d), self.sizes.get(d), self.strides.get(d))
                else {
                    break;
                };
                *i += 1;
                off += stride;
                if *i < size {
                    break;
                }
                off -= size * stride;
                *i = 0;
            }
        }
        Ok(())
    }

    /// `map_reduce`: `acc = map(first)`, then `acc = reduce(map(x), acc)`;
    /// `None` for an empty input.
    pub fn map_reduce<T: Real, A: Copy>(
        &self,
        data: &[T],
        out_ix: usize,
        map: impl Fn(T) -> A,
        reduce: impl Fn(A, A) -> A,
    ) -> Result<Option<A>> {
        let mut acc: Option<A> = None;
        self.visit(out_ix, |i, _| {
            let v = map(*data.get(i).ok_or(bad("reduction index"))?);
            acc = Some(match acc {
                None => v,
                Some(a) => reduce(v, a),
            });
            Ok(())
        })?;
        Ok(acc)
    }
}

/// For every 1-D slice of `shape` along `dim` (all other coordinates, row
/// major), calls `f(base, stride, size)`: element `j` of the slice is at
/// `base + j·stride` (upstream `apply_over_dim`, over any dim order).
pub(crate) fn for_each_slice(
    shape: &Shape,
    dim: usize,
    mut f: impl FnMut(usize, usize, usize) -> Result<()>,
) -> Result<()> {
    let rank = shape.rank();
    if rank == 0 {
        return f(0, 1, shape.numel());
    }
    let strides = shape.strides();
    let size = shape.size(dim as isize);
    let stride = strides.get(dim).copied().unwrap_or(1);
    if shape.numel() == 0 {
        return Ok(());
    }
    let slices = shape.numel() / size.max(1);
    let mut idx = [0usize; MAX_RANK];
    let mut base = 0usize;
    for _ in 0..slices {
        f(base, stride, size)?;
        for d in (0..rank).rev() {
            if d == dim {
                continue;
            }
            let (Some(i), Some(&st)) = (idx.get_mut(d), strides.get(d)) else {
                break;
            };
            let sz = shape.size(d as isize);
            *i += 1;
            base += st;
            if *i < sz {
                break;
            }
            base -= sz * st;
            *i = 0;
        }
    }
    Ok(())
}
