//! Float math the kernels need bit-exact with the reference build: ports of
//! glibc's single-precision libm where the portable kernels call it
//! ([`expf`], [`logf`], [`powf`], [`tanhf`], [`fdlibmf`] for `erff`,
//! `log1pf`, ...), float quantization ([`quantize`]) and window geometry
//! ([`tap_range`]).

pub(crate) mod expf;
pub(crate) mod fdlibmf;
#[cfg(test)]
mod glibc_check;
pub(crate) mod logf;
pub(crate) mod powf;
pub(crate) mod quantize;
pub(crate) mod tanhf;

/// Kernel taps `[lo, hi)` of output `o` along one axis whose input position
/// `o·stride + k·dil − pad` lies in `[0, size)`, for `k` in `[0, kernel)`.
/// `dil` must be positive (positions then increase with `k`, so the valid
/// taps are contiguous). The loops over a window run over exactly these
/// taps, so their work is bounded by the input extent, never by a kernel
/// size, stride or padding read from the file; `None` when the arithmetic
/// overflows `i64` (no real model comes near) or `dil` is 0.
#[inline]
pub(crate) fn tap_range(
    o: usize,
    kernel: i64,
    stride: i64,
    dil: i64,
    pad: i64,
    size: usize,
) -> Option<(i64, i64)> {
    let base = i64::try_from(o)
        .ok()?
        .checked_mul(stride)?
        .checked_sub(pad)?;
    let size = i64::try_from(size).ok()?;
    let lo = if base >= 0 {
        0
    } else {
        (base.checked_neg()? - 1).checked_div(dil)? + 1
    };
    let hi = if base >= size {
        0
    } else {
        (size.checked_sub(base)? - 1).checked_div(dil)? + 1
    };
    let hi = hi.min(kernel.max(0));
    Some((lo.min(hi), hi))
}
