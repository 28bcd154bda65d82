//! Host tests of `cortex_m::pad`'s copy loop.

extern crate std;
use super::*;
use std::vec::Vec;

/// `pad_bytes` against a plain per-element reference: every dimension
/// padded alone and in pairs, no padding, and an empty input.
#[test]
fn pad_bytes_matches_reference() {
    let din = [2usize, 3, 4, 5];
    let pads: [[(usize, usize); 4]; 6] = [
        [(0, 0); 4],
        [(0, 0), (0, 0), (0, 0), (1, 2)],
        [(0, 0), (0, 0), (2, 1), (0, 0)],
        [(0, 0), (1, 1), (0, 0), (0, 0)],
        [(1, 0), (0, 0), (0, 0), (0, 0)],
        [(0, 0), (1, 2), (2, 0), (0, 3)],
    ];
    for p in pads {
        let dout: [usize; 4] = core::array::from_fn(|k| din[k] + p[k].0 + p[k].1);
        let pre: [usize; 4] = core::array::from_fn(|k| p[k].0);
        let x: Vec<u8> = (0..din.iter().product::<usize>())
            .map(|i| i as u8)
            .collect();
        let mut out = std::vec![0u8; dout.iter().product()];
        pad_bytes(din, dout, pre, 0xEE, &x, &mut out).unwrap();
        let mut want = std::vec![0xEEu8; out.len()];
        for a in 0..din[0] {
            for b in 0..din[1] {
                for c in 0..din[2] {
                    for d in 0..din[3] {
                        let src = ((a * din[1] + b) * din[2] + c) * din[3] + d;
                        let dst = (((a + pre[0]) * dout[1] + b + pre[1]) * dout[2] + c + pre[2])
                            * dout[3]
                            + d
                            + pre[3];
                        want[dst] = x[src];
                    }
                }
            }
        }
        assert_eq!(out, want, "padding {p:?}");
    }
    let mut out = [0u8; 6];
    pad_bytes([1, 0, 1, 1], [1, 2, 1, 3], [0, 1, 0, 1], 7, &[], &mut out).unwrap();
    assert_eq!(out, [7; 6]);
}
