//! [`DepthwiseMac`] for Helium: [`Dsp`]'s building blocks for now (the
//! depthwise loops have no MVE kernels yet).

use super::super::mac::{Dsp, Mve};
use super::{DepthwiseMac, Taps};
use crate::error::KernelError;

impl DepthwiseMac for Mve {
    const PACKED_DEPTHWISE: bool = true;

    #[inline(always)]
    fn dw_block(
        taps: &Taps<'_>,
        j: usize,
        w: &[u32],
        init: [i32; 4],
    ) -> Result<[i32; 4], KernelError> {
        Dsp::dw_block(taps, j, w, init)
    }

    #[inline(always)]
    fn dw_row(
        taps: &Taps<'_>,
        w: &[u32],
        init: &[i32],
        out: &mut [i32],
        blocks: usize,
    ) -> Result<(), KernelError> {
        Dsp::dw_row(taps, w, init, out, blocks)
    }

    #[inline(always)]
    fn mul4(acc: [i32; 4], x: &[i8; 4], w: &[i8; 4]) -> [i32; 4] {
        Dsp::mul4(acc, x, w)
    }
}
