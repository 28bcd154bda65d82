//! The instruction sets every cortex_m operator module provides its inner
//! loops for, with identical integer results: [`Scalar`] (plain Rust, with
//! Thumb-2 `asm!` loops on Armv7-M/Armv8-M Mainline and Armv6-M `asm!`
//! loops; Cortex-M0/M3 and the host), [`Dsp`] (`SXTB16` + `SMLAD`/`SMLAxy`,
//! Armv7E-M and Armv8-M Mainline; emulated off-target, see [`dsp`]),
//! [`Mve`] (Helium, [`mve`]) and [`X86`] (SSE2 on x86-64 hosts, `x86`).
//! Each operator module (`conv`, `depthwise`) declares a trait of the
//! building blocks its loop structures need and implements it for all four,
//! in its `scalar.rs`, `dsp.rs`, `mve.rs` and `x86.rs`; this module's
//! `dsp.rs`, `mve.rs` and `x86.rs` hold the instructions and loops those
//! share.
//!
//! Every building block returns raw sums `Σ x·w` of int8 values (no
//! offsets): the kernels fold `input_offset` in as `offset·Σw`, which is the
//! same integer modulo 2^32 as CMSIS-NN's `Σ (x + offset)·w`. Lengths: the
//! common prefix of the slices.

pub mod dsp;
pub(crate) mod mve;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
pub(crate) mod x86;

#[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
#[inline(always)]
pub(crate) fn prefix(s: &[i8], n: usize) -> &[i8] {
    s.get(..n).unwrap_or(&[])
}

#[inline(always)]
pub(crate) fn mac(acc: i32, x: i8, w: i8) -> i32 {
    acc.wrapping_add((x as i32) * (w as i32))
}

/// Plain Rust; LLVM turns it into `ldrsb` + `mla` (or `smlabb`).
pub(crate) struct Scalar;

/// `SXTB16` unpacks four int8 values of a word into two words of int16
/// lanes (bytes 0,2 and 1,3); `SMLAD` multiplies and accumulates two lanes
/// at once. Byte order inside a word does not matter for sums as long as
/// `x` and `w` are unpacked alike.
#[cfg_attr(not(any(test, feature = "dsp")), allow(dead_code))]
pub(crate) struct Dsp;

/// Helium (`mve`, Cortex-M55/M85): layer kernels of its own where MVE pays
/// (pointwise convolution: `VMLADAV` over 16 lanes, vector requantization,
/// [`mve`]), [`Dsp`]'s building blocks elsewhere.
#[cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]
pub(crate) struct Mve;

/// x86-64 hosts: layer kernels for the pointwise and depthwise
/// convolutions (`x86`): AVX2 where CPUID reports it at run time, else
/// SSE2 (`PMADDWD`, baseline on every x86-64 CPU); [`Scalar`]'s building
/// blocks elsewhere.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[cfg_attr(any(feature = "dsp", not(test)), allow(dead_code))]
pub(crate) struct X86;
