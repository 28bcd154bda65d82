//! Helpers the cortex_m kernels share: one call's operands, checked slice
//! access (every index goes through `get`, so nothing can panic), weight
//! sums and tap ranges.

use super::{ConvQuant, Window, BAD};
use crate::error::{KernelError, KernelResult};

/// The read-only operands of one convolution kernel call: geometry,
/// quantization, tensors and per-channel requantization (the output is
/// passed separately, mutably).
///
/// `g` and `q` are held by value on purpose: behind the kernels' `ops: &ConvOperands`
/// (a `noalias` read-only argument) LLVM may keep their fields in registers
/// across stores to the output; as `&Window`/`&ConvQuant` loaded from the
/// struct they would be reloaded after every store (+1.2 % Cortex-M4
/// instructions on DS-CNN, measured with `bench/run.sh --ci`).
#[derive(Clone, Copy)]
pub(crate) struct ConvOperands<'a> {
    pub(crate) g: Window,
    pub(crate) q: ConvQuant,
    pub(crate) input: &'a [i8],
    pub(crate) filter: &'a [i8],
    pub(crate) bias: Option<&'a [i32]>,
    pub(crate) mult: &'a [i32],
    pub(crate) shift: &'a [i32],
}

impl<'a> ConvOperands<'a> {
    /// Bundles one call's operands.
    pub(crate) fn new(
        g: Window,
        q: ConvQuant,
        input: &'a [i8],
        filter: &'a [i8],
        bias: Option<&'a [i32]>,
        mult: &'a [i32],
        shift: &'a [i32],
    ) -> Self {
        Self {
            g,
            q,
            input,
            filter,
            bias,
            mult,
            shift,
        }
    }
}

#[inline(always)]
pub(crate) fn wsum(w: &[i8]) -> i32 {
    w.iter().fold(0i32, |a, &v| a.wrapping_add(v as i32))
}

#[inline(always)]
pub(crate) fn put(output: &mut [i8], i: usize, v: i8) -> KernelResult {
    *output.get_mut(i).ok_or(BAD)? = v;
    Ok(())
}

#[inline(always)]
pub(crate) fn row(s: &[i8], i: usize, len: usize) -> Result<&[i8], KernelError> {
    s.get(i..i.wrapping_add(len)).ok_or(BAD)
}

#[inline(always)]
pub(crate) fn four(s: &[i8], i: usize) -> Result<&[i8; 4], KernelError> {
    s.get(i..i.wrapping_add(4))
        .and_then(|v| v.try_into().ok())
        .ok_or(BAD)
}

/// The whole `n`-element runs of `s` in order, as `chunks_exact(n)` gives
/// them, but none when `n` is 0 and with no panic path: `chunks_exact` is not
/// always inlined (Cortex-M C API builds with `-C target-cpu`), and its
/// out-of-line copy links `panic_fmt` through its `n != 0` assertion.
#[inline(always)]
pub(crate) fn runs<T>(s: &[T], n: usize) -> impl Iterator<Item = &[T]> {
    let mut rest = s;
    core::iter::from_fn(move || {
        if n == 0 {
            return None;
        }
        let (head, tail) = rest.split_at_checked(n)?;
        rest = tail;
        Some(head)
    })
}

/// [`runs`] of a mutable slice.
#[inline(always)]
pub(crate) fn runs_mut<T>(s: &mut [T], n: usize) -> impl Iterator<Item = &mut [T]> {
    let mut rest = s;
    core::iter::from_fn(move || {
        if n == 0 {
            return None;
        }
        let (head, tail) = core::mem::take(&mut rest).split_at_mut_checked(n)?;
        rest = tail;
        Some(head)
    })
}

/// Four int8 values at `p`, any alignment.
///
/// # Safety
/// `p .. p + 4` must lie inside one live `[i8]` borrowed for `'a`.
#[inline(always)]
pub(crate) unsafe fn at4<'a>(p: *const i8) -> &'a [i8; 4] {
    // SAFETY: the caller guarantees the four bytes are in bounds of a live
    // slice; `[i8; 4]` has alignment 1.
    unsafe { &*(p as *const [i8; 4]) }
}

/// Bias (or 0) plus `offset·Σw` for one output channel.
#[inline(always)]
pub(crate) fn init(bias: Option<&[i32]>, c: usize, offset: i32, w: &[i8]) -> i32 {
    bias.and_then(|b| b.get(c).copied())
        .unwrap_or(0)
        .wrapping_add(offset.wrapping_mul(wsum(w)))
}

/// Valid tap range `[lo, hi)` of output `o` along one axis (taps are
/// contiguous: position `o·stride + k·dil − pad` increases with `k`).
#[inline(always)]
pub(crate) fn taps(
    o: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dil: usize,
    size: usize,
) -> (usize, usize) {
    let mut lo = 0;
    while lo < k && Window::tap(o, lo, stride, pad, dil, size).is_none() {
        lo += 1;
    }
    let mut hi = lo;
    while hi < k && Window::tap(o, hi, stride, pad, dil, size).is_some() {
        hi += 1;
    }
    (lo, hi)
}

/// Four lanes of `s` from `i`, zero-filled past `n` lanes (block tails).
#[inline(always)]
pub(crate) fn lanes(s: &[i8], i: usize, n: usize) -> Result<[i8; 4], KernelError> {
    if n >= 4 {
        return four(s, i).copied();
    }
    let mut v = [0i8; 4];
    for (j, d) in v.iter_mut().enumerate().take(n) {
        *d = *s.get(i + j).ok_or(BAD)?;
    }
    Ok(v)
}

/// Takes `N` values of `T` (integers or arrays of them) from the front of a
/// kernel's scratch words: what the kernels keep there instead of on the
/// stack (contents are whatever an earlier call left).
#[inline(always)]
pub(crate) fn take<'s, T: bytemuck::Pod, const N: usize>(
    scratch: &mut &'s mut [u64],
) -> Result<&'s mut [T; N], crate::error::KernelError> {
    let words = (N * core::mem::size_of::<T>()).div_ceil(8);
    let (head, tail) = core::mem::take(scratch)
        .split_at_mut_checked(words)
        .ok_or(super::BAD)?;
    *scratch = tail;
    let items: &mut [T] = bytemuck::try_cast_slice_mut(head).map_err(|_| super::BAD)?;
    items.try_into().map_err(|_| super::BAD)
}
