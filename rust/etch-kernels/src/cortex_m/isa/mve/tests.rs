extern crate std;
use super::gather::window_sum16;
use super::*;
use crate::cortex_m::arith::requantize;
use crate::cortex_m::testutil::Rng;

/// The vector requantization equals `arm_nn_requantize` wherever
/// [`GroupConsts::neg_right`] admits a channel, ties and extremes
/// included.
#[test]
fn vector_requantization_equals_arm_nn_requantize() {
    let mut r = Rng(0x55);
    let special = [
        i32::MIN,
        i32::MIN + 1,
        -1,
        0,
        1,
        i32::MAX,
        1 << 30,
        -(1 << 30),
    ];
    for shift in -40..=3 {
        let mut mults: std::vec::Vec<i32> = special.to_vec();
        mults.extend((0..8).map(|_| r.range(1 << 30, i32::MAX as i64) as i32));
        mults.extend((0..4).map(|_| r.next() as i32));
        for &m in &mults {
            let Some(nr) = GroupConsts::neg_right(m, shift) else {
                assert!(!(-31..=-1).contains(&shift) || m == i32::MIN);
                continue;
            };
            let c = GroupConsts {
                kernel_sum: [0; 4],
                mult: [m; 4],
                neg_right: [nr; 4],
                out_offset: [0; 4],
                act_min: [i32::MIN; 4],
                act_max: [i32::MAX; 4],
            };
            let mut accs: std::vec::Vec<i32> = special.to_vec();
            accs.extend((0..200).map(|_| r.next() as i32));
            let rsh = (-shift) as u32;
            for k in -3i64..3 {
                let tie = ((2 * k + 1) << (rsh - 1)) << 31;
                accs.push((tie / (m as i64).max(1)) as i32);
            }
            for &acc in &accs {
                assert_eq!(
                    requantize_lane(acc, &c, 0),
                    requantize(acc, m, shift),
                    "acc {acc} mult {m} shift {shift}"
                );
            }
        }
    }
}

/// `avg_pool_s8` (16-channel sums here with `mve`) against a plain
/// reference: DS-CNN's global pool and random windows of 16 to 40
/// channels (tails of fewer than 16 take the eight-channel SXTAB16 loop,
/// then one channel at a time).
#[test]
fn avg_pool_matches_reference_on_wide_channels() {
    use crate::cortex_m::pool::avg_pool_s8;
    use crate::cortex_m::testutil::{geometry, ref_pos};
    let mut r = Rng(0xa7a7);
    let mut cases = std::vec![(
        geometry((25, 5, 64), 64, (25, 5), (1, 1), (0, 0)),
        (-128, 127)
    )];
    for _ in 0..40 {
        let c = r.range(16, 40) as usize;
        let k = (r.range(1, 4) as usize, r.range(1, 4) as usize);
        let p = (
            r.range(0, k.0 as i64 - 1) as usize,
            r.range(0, k.1 as i64 - 1) as usize,
        );
        let s = (r.range(1, 2) as usize, r.range(1, 2) as usize);
        let g = geometry(
            (
                r.range(k.0 as i64, 7) as usize,
                r.range(k.1 as i64, 7) as usize,
                c,
            ),
            c,
            k,
            s,
            p,
        );
        cases.push((g, (r.range(-128, 0) as i32, r.range(0, 127) as i32)));
    }
    for (g, act) in cases {
        let (i, o) = (g.input, g.output);
        let x = r.i8s(i.elements().unwrap());
        let mut got = std::vec![0i8; o.elements().unwrap()];
        avg_pool_s8(&g, act, &x, &mut got).unwrap();
        let mut want = std::vec![];
        for oy in 0..o.h {
            for ox in 0..o.w {
                for ch in 0..o.c {
                    let (mut sum, mut n) = (0i64, 0i64);
                    for ky in 0..g.kernel.0 {
                        for kx in 0..g.kernel.1 {
                            if let (Some(y), Some(xx)) = (
                                ref_pos(oy, ky, g.stride.0, g.padding.0, 1, i.h),
                                ref_pos(ox, kx, g.stride.1, g.padding.1, 1, i.w),
                            ) {
                                sum += x[(y * i.w + xx) * i.c + ch] as i64;
                                n += 1;
                            }
                        }
                    }
                    let m = if sum > 0 {
                        (sum + n / 2) / n
                    } else {
                        (sum - n / 2) / n
                    };
                    want.push(m.clamp(act.0 as i64, act.1 as i64) as i8);
                }
            }
        }
        assert_eq!(got, want, "{g:?}");
    }
    // Bounds of the vector sum.
    let x = [1i8; 64];
    let mut sums = [7; 16];
    window_sum16(&x, 0, 2, 3, 24, 8, &mut sums).unwrap(); // last 24 + 16 + 16 = 56
    assert_eq!(sums, [6; 16]);
    assert!(window_sum16(&x, 9, 2, 3, 24, 8, &mut sums).is_err());
    assert!(window_sum16(&x, 0, 0, 3, 24, 8, &mut sums).is_err());
    assert_eq!(sum_s8(&x[..32]).unwrap(), 32);
    assert!(sum_s8(&x[..33]).is_err());
}

#[test]
fn gathers_check_their_bounds_and_pack_rows() {
    let plane = [3i8; 40];
    let offs = GatherOffsets::<32>::new([0, 1, 9, 20].into_iter(), 1).unwrap();
    let mut dst = [0i8; 48];
    // Windows at 0, 4, 8: the last reads 8 + 20 = 28.
    assert!(gather_windows(&plane, 0, 4, 3, &offs, &mut dst).is_ok());
    assert_eq!(dst[32..36], [3; 4]);
    assert!(gather_windows(&plane, 12, 4, 3, &offs, &mut dst).is_err()); // 40 > 39
    assert!(gather_windows(&plane, 0, 4, 4, &offs, &mut dst).is_err()); // dst short
    assert!(gather_windows(&plane, 0, 4, 0, &offs, &mut dst).is_err());
    assert!(GatherOffsets::<32>::new([0, 256].into_iter(), 1).is_none());
    assert!(GatherOffsets::<32>::new(0..17, 1).is_none());
    assert!(GatherOffsets::<32>::new(0..3, 3).is_none()); // 48 lanes > 32
                                                          // Taps 0..20 of column 1 of a [20, 3] weight tensor.
    let w: std::vec::Vec<i8> = (0..60).map(|v| v as i8 - 30).collect();
    let mut packed = [0x55i8; 128];
    let sum = pack_col(&w, 1, 3, 20, 2, &mut packed).unwrap();
    for t in 0..32 {
        let want = if t < 20 { w[1 + 3 * t] } else { 0 };
        assert_eq!(packed[64 * (t / 16) + t % 16], want, "tap {t}");
    }
    assert_eq!(sum, (0..20).map(|t| w[1 + 3 * t] as i32).sum::<i32>());
    assert!(pack_col(&w, 3, 3, 20, 2, &mut packed).is_err()); // 3 + 57 = 60
    assert!(pack_col(&w, 1, 3, 20, 1, &mut packed).is_err()); // 20 > 16
    assert!(pack_col(&w, 1, 3, 20, 2, &mut packed[..79]).is_err());
    assert!(pack_col(&w, 1, 3, 0, 2, &mut packed).is_err());
}

#[test]
fn gemm_x4_checks_its_bounds() {
    let c = GroupConsts {
        neg_right: [-1; 4],
        ..GroupConsts::default()
    };
    let mut out = [0i8; 8];
    let (x, w) = ([0i8; 32], [0i8; 64]);
    assert!(gemm_x4(&x, 1, &w, &c, 2, &mut out, 4).is_ok());
    assert!(gemm_x4(&x, 1, &w, &c, 2, &mut out, 5).is_err()); // out too short
    assert!(gemm_x4(&x, 1, &w, &c, 3, &mut out, 2).is_err()); // x too short
    assert!(gemm_x4(&x, 2, &w, &c, 1, &mut out, 4).is_err()); // packed too short
    assert!(gemm_x4(&x, 0, &w, &c, 1, &mut out, 4).is_err());
    assert!(gemm_x4(&x, 1, &w, &c, 0, &mut out, 4).is_err());
}
