//! CMSIS-NN arithmetic as pure functions over NHWC int8 slices: what the
//! `cortex_m::*` adapters in `ops::cortex_m` call, and what the tests below
//! check against plain i64 reference loops.
//!
//! One module per operator ([`conv`](conv_s8), [`depthwise`](depthwise_conv_s8),
//! fully connected, pooling), each holding its ISA variants side by side:
//! `scalar.rs` (plain Rust, Thumb-2 and Armv6-M `asm!`), `dsp.rs`
//! (`SXTB16`/`SMLAD`), `mve.rs` (Helium) and `x86.rs` (SSE2 on x86-64
//! hosts); [`isa`] holds what the variants share per instruction set, and
//! [`arith`](self) CMSIS-NN's scalar requantization.
//!
//! Every function validates its slice lengths against the geometry first and
//! returns `KernelError::InvalidArgument` on mismatch; inner loops use checked
//! slicing, so nothing can panic.

use crate::error::KernelError;
use arith::requantize;

pub(crate) mod arith;
pub(crate) mod common;
mod conv;
mod depthwise;
mod elementwise;
mod fully_connected;
pub mod isa;
mod pool;
mod requant;
#[cfg(test)]
mod testutil;

pub use conv::{conv_s8, conv_s8_in, CONV_SCRATCH_BYTES};
pub use depthwise::{depthwise_conv_s8, depthwise_conv_s8_in, DEPTHWISE_SCRATCH_BYTES};
pub use elementwise::{add_s8, mul_s8, AddQuant, MulQuant, ADD_SCRATCH_BYTES};
pub use fully_connected::{
    fully_connected_s8, FcEncoding, FcParams, FC_MAX_IN_FEATURES, FC_SCRATCH_BYTES,
};
pub use pool::{avg_pool_s8, max_pool_s8};

/// The multiply-accumulate implementation this build runs: Helium layer
/// kernels with `mve` (Cortex-M55/M85), `SXTB16`/`SMLAD` with `dsp`
/// (Armv7E-M, Armv8-M Mainline), SSE2 layer kernels on x86-64 with SSE2 (AVX2
/// ones where CPUID reports it at run time),
/// plain Rust otherwise. Chosen by `target_feature`, not the architecture
/// alone: Zephyr's Rust target for native_sim/native/64,
/// `x86_64-unknown-none`, has no SSE (soft float), and SSE2 intrinsics there
/// abort LLVM ("Do not know how to split the result of this operator!").
#[cfg(feature = "mve")]
type Active = isa::Mve;
#[cfg(all(feature = "dsp", not(feature = "mve")))]
type Active = isa::Dsp;
#[cfg(all(not(feature = "dsp"), target_arch = "x86_64", target_feature = "sse2"))]
type Active = isa::X86;
#[cfg(all(
    not(feature = "dsp"),
    not(all(target_arch = "x86_64", target_feature = "sse2"))
))]
type Active = isa::Scalar;

/// NHWC sizes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Nhwc {
    pub n: usize,
    pub h: usize,
    pub w: usize,
    pub c: usize,
}

impl Nhwc {
    /// All sizes 0: what a window's fields hold before its tensors are read.
    pub const ZERO: Nhwc = Nhwc {
        n: 0,
        h: 0,
        w: 0,
        c: 0,
    };

    /// Element count, if it fits `usize`.
    pub fn elements(&self) -> Option<usize> {
        self.n
            .checked_mul(self.h)?
            .checked_mul(self.w)?
            .checked_mul(self.c)
    }
}

/// Geometry and quantization of a CMSIS-NN convolution or pooling window.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub input: Nhwc,
    pub output: Nhwc,
    /// Kernel (height, width).
    pub kernel: (usize, usize),
    pub stride: (usize, usize),
    pub padding: (usize, usize),
    pub dilation: (usize, usize),
}

impl Window {
    /// Input position of output `o`, kernel tap `k` along one axis, if inside
    /// the input. Taps in the padding contribute nothing: CMSIS-NN pads with
    /// the input zero point, whose offset-corrected value is 0.
    #[inline]
    pub fn tap(
        o: usize,
        k: usize,
        stride: usize,
        pad: usize,
        dil: usize,
        size: usize,
    ) -> Option<usize> {
        // Checked: stride and dilation come from the file.
        let pos = o
            .checked_mul(stride)?
            .checked_add(k.checked_mul(dil)?)?
            .checked_sub(pad)?;
        (pos < size).then_some(pos)
    }

    /// Whether the kernels' unchecked position arithmetic is safe for this
    /// geometry: along each axis the farthest tap position
    /// `(o − 1)·stride + (k − 1)·dilation`, plus one more stride and
    /// dilation (the loops step one past their last tap), fits `usize`.
    /// Stride, dilation and padding are file-supplied and may be anything
    /// up to 2^63 (32-bit `usize` on the device makes smaller values
    /// overflow too).
    pub fn positions_fit(&self) -> bool {
        let axis = |o: usize, k: usize, s: usize, d: usize| {
            o.saturating_sub(1)
                .checked_mul(s)
                .zip(k.saturating_sub(1).checked_mul(d))
                .and_then(|(a, b)| a.checked_add(b))
                .and_then(|v| v.checked_add(s))
                .and_then(|v| v.checked_add(d))
                .is_some()
        };
        axis(self.output.h, self.kernel.0, self.stride.0, self.dilation.0)
            && axis(self.output.w, self.kernel.1, self.stride.1, self.dilation.1)
    }

    /// The checks every window kernel makes after its length checks:
    /// `Ok(true)` when the output is empty (nothing to compute: the kernel
    /// returns without looping over sizes that may be huge, since a tensor
    /// with one zero dimension has zero bytes whatever its others are);
    /// an error when the input is empty under a non-empty output (an
    /// implausible window whose other sizes would bound no work) or when
    /// positions could overflow ([`Window::positions_fit`]).
    pub(crate) fn check_work(&self, input: &[i8]) -> Result<bool, KernelError> {
        if self.output.elements() == Some(0) {
            return Ok(true);
        }
        if input.is_empty() || self.kernel.0 == 0 || self.kernel.1 == 0 || !self.positions_fit() {
            return Err(BAD);
        }
        Ok(false)
    }
}

/// Output quantization of a convolution: offsets and activation range.
#[derive(Clone, Copy, Debug)]
pub struct ConvQuant {
    pub input_offset: i32,
    pub output_offset: i32,
    pub act_min: i32,
    pub act_max: i32,
}

impl ConvQuant {
    /// `arm_nn_requantize`, `+ output_offset`, then `MAX(act_min)`, `MIN(act_max)`.
    #[inline]
    pub fn finish(&self, acc: i32, mult: i32, shift: i32) -> i8 {
        let v = requantize(acc, mult, shift).wrapping_add(self.output_offset);
        v.max(self.act_min).min(self.act_max) as i8
    }
}

const BAD: KernelError = KernelError::InvalidArgument;
