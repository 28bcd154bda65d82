//! The hostile program families of `etch_fuzz::hostile` (many values,
//! chains, instructions, operators) at 1 KB and 64 KB: exact outcomes, and
//! each run well under a generous bound in this debug build (the timed
//! series from 1 KB to 1 MB, release, is `etch-growth`, docs/robustness.md).
//! Before this was tested, execute read and wrote run-time values by a linear scan
//! of the slots (O(instructions x slots)) and `for_each_missing_operator`
//! walked every instruction per operator (O(operators x instructions)).

use std::time::{Duration, Instant};

use etch_fuzz::hostile::{build, load_execute_timed, n_for_size, Shape};
use etch_runtime::{ErrorCode, Method, Program, Verification};

const BOTH: [Verification; 2] = [Verification::Minimal, Verification::InternalConsistency];

#[test]
fn hostile_families_give_exact_outcomes_in_bounded_time() {
    for kb in [1usize, 64] {
        for shape in [
            Shape::Values(0),
            Shape::Chains(0),
            Shape::Instructions(0),
            Shape::Operators(0),
        ] {
            let n = n_for_size(shape, kb * 1024);
            let shape = shape.with_n(n);
            let file = build(shape);
            assert!(
                file.len() >= kb * 1024 && file.len() < kb * 1024 * 102 / 100 + 256,
                "{shape:?}"
            );
            for v in BOTH {
                let t = Instant::now();
                let got = load_execute_timed(&file, v);
                let took = t.elapsed();
                let want = match shape {
                    Shape::Operators(_) => Err(ErrorCode::OperatorMissing),
                    _ => Ok(()),
                };
                assert_eq!(got.outcome, want, "{shape:?} {v:?}");
                assert!(took < Duration::from_secs(10), "{shape:?} {v:?}: {took:?}");
            }
            // The state each needs, exactly: 2 B per instruction, 13 B per
            // run-time written value (index, payload and kind: 13 B).
            let data = etch_fuzz::Aligned::from_bytes(&file);
            let program =
                Program::from_bytes(data.bytes(), Verification::InternalConsistency).unwrap();
            let meta = program.method_meta("forward").unwrap();
            let kernels = etch_kernels::KERNELS;
            let state = meta.method_state_bytes(kernels).unwrap();
            match shape {
                Shape::Values(n) => assert_eq!(state, 2 * n + 13 * n, "{shape:?}"),
                Shape::Chains(n) | Shape::Instructions(n) => {
                    assert_eq!(meta.num_instructions().unwrap(), n);
                    // One slot for v1 while the look-back budget lasts,
                    // then spare ones: between 1 and n.
                    let slots = (state - 2 * n) / 13;
                    assert!((1..=n).contains(&slots), "{shape:?}: {slots} slots");
                }
                Shape::Operators(n) => {
                    let mut names = Vec::new();
                    let missing = meta
                        .for_each_missing_operator(kernels, |name, _| names.push(name.to_string()))
                        .unwrap();
                    assert_eq!(missing, n);
                    assert_eq!(names.len(), n);
                    assert_eq!(names[0], "test::gone0");
                    assert_eq!(names[n - 1], format!("test::gone{}", n - 1));
                    let mut buf = vec![0u8; state];
                    let mut planned: Vec<&mut [u8]> = Vec::new();
                    let e = Method::load(&meta, &mut buf, &mut planned, kernels, &[])
                        .err()
                        .unwrap();
                    assert_eq!(e.code, ErrorCode::OperatorMissing);
                }
            }
        }
    }
}

/// More operators than the missing-operator walk's window (1,024): each
/// named once, in order, whichever window it falls in.
#[test]
fn missing_operators_past_one_window_are_each_named_once() {
    let n = 2_500;
    let file = build(Shape::Operators(n));
    let data = etch_fuzz::Aligned::from_bytes(&file);
    let program = Program::from_bytes(data.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut names = Vec::new();
    let missing = meta
        .for_each_missing_operator(etch_kernels::KERNELS, |name, _| {
            names.push(name.to_string())
        })
        .unwrap();
    assert_eq!(missing, n);
    let want: Vec<String> = (0..n).map(|k| format!("test::gone{k}")).collect();
    assert_eq!(names, want);
}

/// The caller's scratch decides the window: one bit per operator (one pass),
/// a 1-byte scratch (windows of 8 operators) and the stack window all name
/// the same operators in the same order; an empty scratch is refused.
#[test]
fn missing_operators_with_scratch_name_the_same_in_one_pass() {
    let n = 2_500;
    let file = build(Shape::Operators(n));
    let data = etch_fuzz::Aligned::from_bytes(&file);
    let program = Program::from_bytes(data.bytes(), Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let bytes = meta.missing_operator_scratch_bytes().unwrap();
    assert_eq!(bytes, n.div_ceil(8));
    let want: Vec<String> = (0..n).map(|k| format!("test::gone{k}")).collect();
    for len in [bytes, 1] {
        let mut scratch = vec![0xffu8; len];
        let mut names = Vec::new();
        let missing = meta
            .for_each_missing_operator_with(etch_kernels::KERNELS, &mut scratch, |name, _| {
                names.push(name.to_string())
            })
            .unwrap();
        assert_eq!(missing, n, "scratch of {len} B");
        assert_eq!(names, want, "scratch of {len} B");
    }
    let err = meta
        .for_each_missing_operator_with(etch_kernels::KERNELS, &mut [], |_, _| {})
        .unwrap_err();
    assert_eq!(err.code, etch_runtime::ErrorCode::InvalidArgument);
}
