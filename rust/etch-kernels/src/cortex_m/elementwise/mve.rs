//! [`AddLoop`] for Helium: four elements per pass, both lookups as
//! `VLDRW` gathers with the int8 values as word offsets, then CMSIS-NN's
//! vector requantization (`arm_requantize_mve`: `VQRDMULH`, the
//! `VSHR`/`VQADD` fix-up, `VRSHL`), the output offset and the activation
//! range: 14 instructions per four elements. Off target the same steps
//! run in plain Rust ([`requantize_vec`]); the bench checks the `asm!`
//! bit-exact under QEMU's Cortex-M55.
#![cfg_attr(not(any(test, feature = "mve")), allow(dead_code))]

use super::super::isa::mve::{requantize_vec, GroupConsts};
use super::super::isa::Mve;
use super::{AddLoop, AddQuant, Dsp};

impl AddLoop for Mve {
    /// Each table whose requantization the vector loop reproduces
    /// ([`GroupConsts::neg_right`]) four values per pass ([`table_loop`]:
    /// about 700 instructions a table, against some 5,000 one value at a
    /// time); the other one value at a time.
    #[inline(always)]
    fn fill_tables(t: &mut [[i32; 256]; 2], q: &AddQuant) {
        for (t, (zp, m, s)) in t.iter_mut().zip([q.a, q.b]) {
            match GroupConsts::neg_right(m, s) {
                Some(neg_right) => table_loop(t, zp, m, neg_right),
                None => super::fill_table(t, (zp, m, s)),
            }
        }
    }

    #[inline(always)]
    fn add_tables(t: &[[i32; 256]; 2], q: &AddQuant, a: &[i8], b: &[i8], out: &mut [i8]) -> bool {
        // The vector requantization is exact for a right shift of 1 to 31
        // and a multiplier other than i32::MIN; an activation range
        // outside int8 wraps in the reference's cast, which the narrowing
        // store reproduces only inside int8.
        let Some(neg_right) = GroupConsts::neg_right(q.out.1, q.out.2) else {
            return Dsp::add_tables(t, q, a, b, out);
        };
        if q.act_min < -128
            || q.act_max > 127
            || q.act_min > q.act_max
            || a.len() != out.len()
            || b.len() != out.len()
        {
            return Dsp::add_tables(t, q, a, b, out);
        }
        let k = AddConsts {
            mult: q.out.1,
            neg_right,
            out_offset: q.out.0,
            act_min: q.act_min,
            act_max: q.act_max,
        };
        quads_then_lanes(
            a,
            b,
            out,
            |aa, ba, oa| add_loop(t, &k, aa, ba, oa),
            |x, y| k.lane(t[0][x as u8 as usize].wrapping_add(t[1][y as u8 as usize])),
        )
    }
}

/// An element-wise Helium kernel over `a`, `b` and `out` of one length:
/// the whole groups of four through `quads` (one `asm!` loop, called only
/// when there is one), the last `len % 4` elements through `lane`. False
/// when the three slices cannot be split at the same point.
#[inline(always)]
pub(super) fn quads_then_lanes(
    a: &[i8],
    b: &[i8],
    out: &mut [i8],
    quads: impl FnOnce(&[i8], &[i8], &mut [i8]),
    lane: impl Fn(i8, i8) -> i32,
) -> bool {
    let main = out.len() - out.len() % 4;
    // `_checked`: `split_at` keeps a panic path at opt-level "z".
    let (Some((oa, ot)), Some((aa, at)), Some((ba, bt))) = (
        out.split_at_mut_checked(main),
        a.split_at_checked(main),
        b.split_at_checked(main),
    ) else {
        return false;
    };
    if main > 0 {
        quads(aa, ba, oa);
    }
    for ((o, &x), &y) in ot.iter_mut().zip(at).zip(bt) {
        *o = lane(x, y) as i8;
    }
    true
}

/// The output's requantization and range, as the loop takes them.
struct AddConsts {
    mult: i32,
    /// Minus the right shift (`GroupConsts::neg_right`).
    neg_right: i32,
    out_offset: i32,
    act_min: i32,
    act_max: i32,
}

impl AddConsts {
    /// One lane of the loop, instruction by instruction.
    #[inline(always)]
    fn lane(&self, s: i32) -> i32 {
        requantize_vec(
            s,
            0,
            self.mult,
            self.neg_right,
            self.out_offset,
            self.act_min,
            self.act_max,
        )
    }
}

#[cfg(not(all(target_arch = "arm", feature = "mve")))]
#[inline(always)]
fn add_loop(t: &[[i32; 256]; 2], k: &AddConsts, a: &[i8], b: &[i8], out: &mut [i8]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = k.lane(t[0][x as u8 as usize].wrapping_add(t[1][y as u8 as usize])) as i8;
    }
}

#[cfg(all(target_arch = "arm", feature = "mve"))]
#[inline(always)]
fn add_loop(t: &[[i32; 256]; 2], k: &AddConsts, a: &[i8], b: &[i8], out: &mut [i8]) {
    // SAFETY: the caller checked `a`, `b` and `out` of one length, a
    // non-zero multiple of 4: pass i reads a[4i .. 4i + 4] and b[4i .. 4i +
    // 4] (zero-extending byte loads), gathers words a[4i + l] (0..255) of
    // table 0 and b[4i + l] of table 1 (`t` is two arrays of 256 words,
    // 4-aligned) and writes out[4i .. 4i + 4]. No stack; q0–q3, q6, q7
    // (d0–d7, d12–d15), lr and flags are clobbered.
    unsafe {
        core::arch::asm!(
            "vdup.32 q6, {lo}",
            "vdup.32 q7, {hi}",
            "wls lr, {n}, 3f",
            "2:",
            "vldrb.u32 q0, [r0], #4",
            "vldrb.u32 q1, [r1], #4",
            "vldrw.u32 q2, [{ta}, q0, uxtw #2]",
            "vldrw.u32 q3, [{tb}, q1, uxtw #2]",
            "vadd.i32 q2, q2, q3",
            "vqrdmulh.s32 q2, q2, {m}",
            "vshr.s32 q3, q2, #31",
            "vqadd.s32 q2, q2, q3",
            "vrshl.s32 q2, {nr}",
            "vadd.i32 q2, q2, {oo}",
            "vmax.s32 q2, q2, q6",
            "vmin.s32 q2, q2, q7",
            "vstrb.32 q2, [r2], #4",
            "le lr, 2b",
            "3:",
            // Low registers: the widening loads and the narrowing store
            // encode Rn in 3 bits.
            inout("r0") a.as_ptr() => _,
            inout("r1") b.as_ptr() => _,
            inout("r2") out.as_mut_ptr() => _,
            n = in(reg) out.len() / 4,
            ta = in(reg) t[0].as_ptr(),
            tb = in(reg) t[1].as_ptr(),
            m = in(reg) k.mult,
            nr = in(reg) k.neg_right,
            oo = in(reg) k.out_offset,
            lo = in(reg) k.act_min,
            hi = in(reg) k.act_max,
            out("lr") _,
            out("d0") _, out("d1") _, out("d2") _, out("d3") _,
            out("d4") _, out("d5") _, out("d6") _, out("d7") _,
            out("d12") _, out("d13") _, out("d14") _, out("d15") _,
            options(nostack),
        );
    }
}

/// `t[i] = requant(((i as i8) − zp) << 20)` for `i < 256`: the 256 int8
/// values in table order (0..=127, then −128..=−1) from `VIDUP` and a
/// sign extension, then `arm_requantize_mve`'s steps (`VQRDMULH`, the
/// `VSHR`/`VQADD` fix-up, `VRSHL`); `neg_right` as
/// [`GroupConsts::neg_right`] admits it.
#[cfg(all(target_arch = "arm", feature = "mve"))]
#[inline(always)]
fn table_loop(t: &mut [i32; 256], zp: i32, mult: i32, neg_right: i32) {
    // SAFETY: 64 passes of one 16-byte store each write t[0..256] (1,024
    // bytes, `t` is 4-aligned). No memory is read. No stack; q0, q1, r2,
    // lr and flags are clobbered.
    unsafe {
        core::arch::asm!(
            "movs r2, #0",
            "mov lr, #64",
            "dls lr, lr",
            "2:",
            "vidup.u32 q0, r2, #1",
            "vshl.i32 q0, q0, #24",
            "vshr.s32 q0, q0, #24",
            "vsub.i32 q0, q0, {zp}",
            "vshl.i32 q0, q0, #20",
            "vqrdmulh.s32 q0, q0, {m}",
            "vshr.s32 q1, q0, #31",
            "vqadd.s32 q0, q0, q1",
            "vrshl.s32 q0, {nr}",
            "vstrw.32 q0, [{t}], #16",
            "le lr, 2b",
            t = inout(reg) t.as_mut_ptr() => _,
            zp = in(reg) zp,
            m = in(reg) mult,
            nr = in(reg) neg_right,
            // An even register: VIDUP's base.
            out("r2") _,
            out("lr") _,
            out("d0") _, out("d1") _, out("d2") _, out("d3") _,
            options(nostack),
        );
    }
}

/// [`table_loop`] off target, lane by lane from the instructions'
/// definitions ([`requantize_vec`] with no offset and no clamp).
#[cfg(not(all(target_arch = "arm", feature = "mve")))]
#[inline(always)]
fn table_loop(t: &mut [i32; 256], zp: i32, mult: i32, neg_right: i32) {
    for (i, d) in t.iter_mut().enumerate() {
        let x = ((i as u8 as i8) as i32).wrapping_sub(zp).wrapping_shl(20);
        *d = requantize_vec(x, 0, mult, neg_right, 0, i32::MIN, i32::MAX);
    }
}
