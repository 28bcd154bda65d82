//! Host tests of the Helium depthwise loops against the plain reference.

extern crate std;
use std::{vec, vec::Vec};

use super::super::super::testutil::*;
use super::super::DEPTHWISE_SCRATCH_WORDS;
use super::*;
use crate::cortex_m::ConvQuant;

/// `depthwise_with::<Mve>` on the layer (its channel multiplier 1).
fn mve_depthwise(l: &Layer) -> Vec<i8> {
    let mut got = vec![0i8; l.want.len()];
    super::super::depthwise_with::<Mve>(
        &l.g,
        &l.q,
        1,
        &l.x,
        &l.w,
        Some(&l.bias),
        &l.mult,
        &l.shift,
        &mut got,
        &mut scratch(),
    )
    .unwrap();
    got
}

/// The plane kernel (host: its instructions emulated, see
/// `cortex_m::mve`) against the reference: DS-CNN's 3×3 layers and
/// random windows that fit; shapes it refuses fall back with the same
/// result and leave the output untouched.
#[test]
fn mve_planar_matches_reference() {
    let mut r = Rng(0x3a55);
    let mut shapes = vec![
        geometry((25, 5, 64), 64, (3, 3), (1, 1), (1, 1)),
        geometry((25, 5, 8), 8, (3, 3), (1, 1), (1, 1)),
        geometry((4, 4, 16), 16, (3, 3), (1, 1), (0, 0)),
    ];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let k = (r.range(1, 3) as usize, r.range(1, 4) as usize);
        let p = random_padding(&mut r, k);
        let c = 8 * r.range(1, 3) as usize;
        let stride = if r.range(0, 9) == 0 { 2 } else { 1 };
        let g = geometry(
            (
                r.range(k.0 as i64, 9) as usize,
                r.range(k.1 as i64, 7) as usize,
                c,
            ),
            c,
            k,
            (stride, 1),
            p,
        );
        if let Some(g) = dilate_or_batch(&mut r, g, 1) {
            shapes.push(g);
        }
    }
    let mut taken = 0;
    for (case, g) in shapes.iter().enumerate() {
        let refuse = case % 9 == 8;
        let l = Layer::random(&mut r, *g, Some(1), refuse.then_some(3));
        assert_eq!(mve_depthwise(&l), l.want, "{g:?} case {case}");
        let mut scratch = scratch();
        if let Some(direct) = l.direct(|ops, out| planar(ops, out, &mut scratch)) {
            assert!(!refuse, "{g:?}: a refused requantization");
            assert_eq!(direct, l.want, "{g:?} case {case} (plane loop)");
            taken += 1;
        }
    }
    assert!(taken >= 20, "the plane loop ran {taken} shapes");
    // DS-CNN's layer is one the plane loop takes.
    let g = &shapes[0];
    let x = r.i8s(g.input.elements().unwrap());
    let w = r.i8s(9 * 64);
    let (mult, shift) = (vec![1 << 30; 64], vec![-7; 64]);
    let q = ConvQuant {
        input_offset: 3,
        output_offset: -1,
        act_min: -128,
        act_max: 127,
    };
    let ops = ConvOperands::new(*g, q, &x, &w, None, &mult, &shift);
    let mut out = vec![0i8; g.output.elements().unwrap()];
    let mut scratch = vec![0u64; DEPTHWISE_SCRATCH_WORDS];
    assert!(planar(&ops, &mut out, &mut scratch).is_some());
}

/// The channel-group kernel (host: its instructions emulated) against
/// the reference: VWW's MobileNet layers (8 to 256 channels, stride 1
/// and 2) and random windows (stride, padding, dilation, batch, up to
/// 25 taps, chunks of channels); shapes and requantizations it refuses
/// leave the output untouched.
#[test]
fn mve_channel_groups_match_reference() {
    let mut r = Rng(0xc8a5);
    let mut shapes = vec![
        geometry((48, 48, 8), 8, (3, 3), (1, 1), (1, 1)),
        geometry((48, 48, 16), 16, (3, 3), (2, 2), (1, 1)),
        geometry((6, 6, 128), 128, (3, 3), (1, 1), (1, 1)),
        geometry((6, 6, 256), 256, (3, 3), (2, 2), (0, 0)),
        geometry((3, 3, 256), 256, (3, 3), (1, 1), (1, 1)),
        geometry((7, 7, 72), 72, (5, 5), (1, 1), (2, 2)),
        geometry((5, 5, 12), 12, (3, 3), (1, 1), (1, 1)),
    ];
    for _ in 0..if cfg!(miri) { 2 } else { 40 } {
        let k = (r.range(1, 5) as usize, r.range(1, 5) as usize);
        let p = random_padding(&mut r, k);
        let c = 8 * r.range(1, 20) as usize;
        let s = (r.range(1, 3) as usize, r.range(1, 3) as usize);
        let g = geometry(
            (
                r.range(k.0 as i64, 9) as usize,
                r.range(k.1 as i64, 9) as usize,
                c,
            ),
            c,
            k,
            s,
            p,
        );
        if let Some(g) = dilate_or_batch(&mut r, g, 0) {
            shapes.push(g);
        }
    }
    let mut taken = 0;
    for (case, g) in shapes.iter().enumerate() {
        let refuse = case % 9 == 8;
        let l = Layer::random(&mut r, *g, Some(1), refuse.then_some(3));
        assert_eq!(mve_depthwise(&l), l.want, "{g:?} case {case}");
        let mut scratch = scratch();
        match l.direct(|ops, out| channel_groups(ops, out, &mut scratch)) {
            None => assert!(
                refuse || g.output.c % 8 != 0,
                "{g:?}: refused a shape it takes"
            ),
            Some(direct) => {
                assert!(
                    !refuse && g.output.c % 8 == 0,
                    "{g:?}: took a refused shape"
                );
                assert_eq!(direct, l.want, "{g:?} case {case} (channel groups)");
                taken += 1;
            }
        }
    }
    assert!(taken >= 30, "the channel-group loop ran {taken} shapes");
    // A zero stride (a corrupt program): refused, not a division by zero.
    let mut g = geometry((5, 5, 8), 8, (3, 3), (1, 1), (1, 1));
    g.stride.1 = 0;
    let l = Layer::random(&mut r, g, Some(1), None);
    assert!(l
        .direct(|ops, out| channel_groups(ops, out, &mut scratch()))
        .is_none());
    // Bounds of the pixel block.
    let lim = PlaneLimits::default();
    let run = [0i8; 16];
    let mut taps = Taps::new(16);
    taps.push(&run).unwrap();
    let taps = Runs::Taps(&taps);
    let (w, k, mut out) = ([0i8; 32], [-1i32; 48], [0i8; 16]);
    assert!(dw_groups(&taps, &w, &k, &lim, &mut out, 2, 16).is_ok());
    assert!(dw_groups(&taps, &w, &k, &lim, &mut out, 0, 16).is_err());
    assert!(dw_groups(&taps, &w, &k, &lim, &mut out, 3, 24).is_err());
    assert!(dw_groups(&taps, &w[..15], &k, &lim, &mut out, 2, 16).is_err());
    assert!(dw_groups(&taps, &w, &k[..47], &lim, &mut out, 2, 16).is_err());
    assert!(dw_groups(&taps, &w, &k, &lim, &mut out[..15], 2, 16).is_err());
    let empty = Taps::new(16);
    assert!(dw_groups(&Runs::Taps(&empty), &w, &k, &lim, &mut out, 2, 16).is_err());
    // Interior runs: base + farthest offset + 8·groups inside the input.
    let input = [0i8; 40];
    let at = |base, offs| Runs::Interior {
        input: &input,
        base,
        offs,
        pixels: 1,
        step: 0,
    };
    assert!(dw_groups(&at(4, &[0, 20]), &w[..32], &k, &lim, &mut out, 1, 8).is_ok());
    assert!(dw_groups(&at(12, &[0, 20]), &w, &k, &lim, &mut out, 1, 8).is_ok());
    assert!(dw_groups(&at(13, &[0, 20]), &w, &k, &lim, &mut out, 1, 8).is_err());
    assert!(dw_groups(&at(usize::MAX, &[0, 20]), &w, &k, &lim, &mut out, 1, 8).is_err());
    // Several pixels: the last one's runs and outputs inside.
    let row = |base, pixels, step| Runs::Interior {
        input: &input,
        base,
        offs: &[0, 20],
        pixels,
        step,
    };
    assert!(dw_groups(&row(0, 2, 12), &w, &k, &lim, &mut out, 1, 8).is_ok());
    assert!(dw_groups(&row(0, 2, 13), &w, &k, &lim, &mut out, 1, 8).is_err());
    assert!(dw_groups(&row(0, 0, 4), &w, &k, &lim, &mut out, 1, 8).is_err());
    assert!(dw_groups(&row(0, 2, 4), &w, &k, &lim, &mut out, 1, 9).is_err());
    assert!(dw_groups(&row(0, 2, 4), &w, &k, &lim, &mut out, 1, 7).is_err());
}

#[test]
fn plane_blocks_check_their_bounds() {
    let k = PlaneConsts {
        neg_right: -1,
        ..PlaneConsts::default()
    };
    let lim = PlaneLimits::default();
    let mut p = [0i8; 32];
    assert!(dw_plane_channel(&mut p, 4, &k, &lim).is_ok()); // 4·4 + 14 = 30
    assert!(dw_plane_channel(&mut p, 5, &k, &lim).is_err());
    assert!(dw_plane_channel(&mut p, 0, &k, &lim).is_err());
    let src = [1i8; 64];
    let mut planes = [0i8; 64];
    // 2 rows of 3 pixels, 8 bytes apart: reads up to (6 − 1)·8 + 8 = 48.
    assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 0, 4, 7).is_ok());
    assert!(dw_plane_in(&src, 12, 2, 3, &mut planes, 0, 0, 4, 7).is_err());
    assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 0, 2, 7).is_err()); // w > s
    assert!(dw_plane_in(&src, 8, 2, 3, &mut planes, 0, 9, 4, 7).is_err()); // past the planes
    assert!(dw_plane_in(&src, 8, 2, 3, &mut planes[..63], 0, 0, 4, 7).is_err());
    // Window weights: lanes 0, 1 and 7 from offsets 0, 2 and 9.
    let taps = PlaneTaps::new([(0, 0), (1, 2), (7, 9)].into_iter()).unwrap();
    let f: Vec<i8> = (1..=12).collect();
    let mut k = PlaneConsts::default();
    assert_eq!(plane_weights(&taps, &f, 2, &mut k).unwrap(), 3 + 5 + 12);
    let mut w0 = [0i8; 16];
    (w0[0], w0[1], w0[7]) = (3, 5, 12);
    assert_eq!(k.w0, w0);
    assert_eq!(k.w1[..], [&[0][..], &w0[..15]].concat()[..]);
    assert!(plane_weights(&taps, &f, 3, &mut k).is_err()); // 3 + 9 = 12
    assert!(PlaneTaps::new([(0, 0), (0, 2)].into_iter()).is_none());
    assert!(PlaneTaps::new([(16, 0)].into_iter()).is_none());
    assert!(PlaneTaps::new([(1, 65536)].into_iter()).is_none());
    let mut dst = [0i8; 48];
    assert!(dw_plane_out(&planes, 4, 2, 3, 7, &mut dst, 8).is_ok());
    assert!(dw_plane_out(&planes, 4, 2, 3, 7, &mut dst[..47], 8).is_err());
    assert!(dw_plane_out(&planes[..55], 4, 2, 3, 7, &mut dst, 8).is_err());
    assert!(dw_plane_out(&planes, 4, 0, 3, 7, &mut dst, 8).is_err());
}
