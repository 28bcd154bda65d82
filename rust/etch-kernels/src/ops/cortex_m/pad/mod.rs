//! `cortex_m::pad`: `arm_pad_s8`, constant padding in physical (NHWC)
//! order.

use super::*;

/// `pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *,
/// Tensor(a!) out)` → `arm_pad_s8`: pads in physical (NHWC) order.
pub const PAD_OUT: Kernel = op!(PAD, pad_out);

const PAD: &str = "cortex_m::pad.out(Tensor input, int[] pre_pad, int[] post_pad, int pad_value, *, Tensor(a!) out) -> Tensor(a!)";

/// Physical dims, outermost first, padded to rank 4.
#[inline(never)]
fn phys(s: &etch_runtime::Shape) -> [usize; 4] {
    let mut d = [1usize; 4];
    let order = s.dim_order();
    let off = 4usize.saturating_sub(order.len());
    for (slot, &o) in d.iter_mut().skip(off).zip(order) {
        *slot = s.size(o as isize);
    }
    d
}

fn pad_out(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    const S: &str = PAD;
    let pre = ctx.int_list(arg!(S, pre_pad))?;
    let post = ctx.int_list(arg!(S, post_pad))?;
    let value = ctx.int(arg!(S, pad_value))?;
    let value = i8::try_from(value).map_err(|_| bad("pad value"))?;
    let (mut ins, mut outs) = ([None], [TensorViewMut::empty()]);
    ctx.io_into(arg!(S, [input]), arg!(S, [out]), &mut ins, &mut outs)?;
    let ([x], [out]) = (ins, &mut outs);
    let x = required(x, arg!(S, input))?;
    let (din, dout) = (phys(&x.shape), phys(&out.shape));
    let mut pre4 = [0usize; 4];
    for (k, slot) in pre4.iter_mut().enumerate() {
        let (a, b) = (pre.get_or(k, 0), post.get_or(k, 0));
        let (Ok(a), Ok(b)) = (usize::try_from(a), usize::try_from(b)) else {
            return Err(bad("negative padding"));
        };
        if din[k].checked_add(a).and_then(|d| d.checked_add(b)) != Some(dout[k]) {
            return Err(bad("pad output shape"));
        }
        *slot = a;
    }
    let (x, out) = (x.as_i8()?, out.as_i8_mut()?);
    let (Ok(x), Ok(out)) = (
        bytemuck::try_cast_slice::<i8, u8>(x),
        bytemuck::try_cast_slice_mut::<i8, u8>(out),
    ) else {
        return Err(bad("pad bytes"));
    };
    pad_bytes(din, dout, pre4, value as u8, x, out)
}

/// `arm_pad_s8` on bytes: `x` (physical sizes `din`, outermost first) into
/// `out` (`dout` = `din` + `pre` + post padding, checked by the caller),
/// the padding set to `value`. Inlined into its one caller (flash).
#[inline(always)]
fn pad_bytes(
    mut din: [usize; 4],
    mut dout: [usize; 4],
    mut pre4: [usize; 4],
    value: u8,
    x: &[u8],
    out: &mut [u8],
) -> Result<()> {
    // No padding (equal lengths of checked shapes): one copy, nothing to
    // fill (DS-CNN's pad before its global pool pads by zero).
    if x.len() == out.len() {
        bytes::copy_bytes(out, x);
        return Ok(());
    }
    out.fill(value);
    if x.is_empty() {
        // Nothing to copy (the other input sizes may be huge).
        return Ok(());
    }
    // An unpadded innermost dimension merged into the next: one copy per
    // contiguous run of the input (DS-CNN's H/W pad: one per row of W·C).
    if din[3] == dout[3] {
        pre4 = [0, pre4[0], pre4[1], pre4[2] * dout[3]];
        din = [1, din[0], din[1], din[2] * din[3]];
        dout = [1, dout[0], dout[1], dout[2] * dout[3]];
    }
    // Copy the innermost runs of the input into place.
    // (Non-empty input: every size is at least 1.)
    let (row, plane, cols) = (din[3], (din[1] * din[2]).max(1), din[2].max(1));
    for (r, s) in crate::cortex_m::common::runs(x, row).enumerate() {
        let (a, b, c) = (r / plane, r % plane / cols, r % cols);
        let dst =
            (((a + pre4[0]) * dout[1] + b + pre4[1]) * dout[2] + c + pre4[2]) * dout[3] + pre4[3];
        let Some(d) = out.get_mut(dst..dst + row) else {
            return Err(bad("pad index"));
        };
        bytes::copy_bytes(d, s);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
