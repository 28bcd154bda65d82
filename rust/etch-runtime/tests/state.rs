//! The method state's run-time written values (Move targets, scalar kernel
//! results), its exact size and the count of missing operators, on a program
//! built here: no exported fixture has a `MoveCall` or a kernel with a scalar
//! result.
//!
//! The program (values: v0 = Int 5, v1 = Int 0, v2 = Int 0, v3 = Bool false):
//! ```text
//! 0: test::inc(v0) -> v2      v2 = 6
//! 1: move v2 -> v1            v1 = 6
//! 2: test::inc(v1) -> v2      v2 = 7   (v2 written again: one slot)
//! 3: test::not(v3) -> v3      v3 = true
//! outputs: v2, v1, v0, v3
//! ```

use etch_pte::builder::Builder;
use etch_runtime::{
    op, ErrorCode, Kernel, KernelContext, Method, Output, Program, Result, Verification,
};

/// `bytes` in a 16-byte aligned buffer, and their length.
fn aligned(bytes: Vec<u8>) -> (Vec<u128>, usize) {
    let mut words = vec![0u128; bytes.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut words)[..bytes.len()].copy_from_slice(&bytes);
    (words, bytes.len())
}

/// The value table of [`program`] and [`jumps`]: v0 = Int 5, v1 = Int 0,
/// v2 = Int 0, v3 = Bool false.
fn four_values(fb: &mut Builder) -> usize {
    let v0 = fb.int(5);
    let v1 = fb.int(0);
    let v2 = fb.int(0);
    let v3 = fb.bool(false);
    fb.refs(&[v0, v1, v2, v3])
}

/// The program with its four instructions split into chains as `split`
/// says (instruction numbers per chain, in order).
fn program(split: &[&[usize]]) -> (Vec<u128>, usize) {
    let mut fb = Builder::default();
    let values = four_values(&mut fb);
    let kernel = |fb: &mut Builder, op: i32, args: &[i32]| {
        let a = fb.i32s(args);
        fb.kernel_call(op, a)
    };
    let i0 = kernel(&mut fb, 0, &[0, 2]);
    let i1 = fb.move_call(2, 1);
    let i2 = kernel(&mut fb, 0, &[1, 2]);
    let i3 = kernel(&mut fb, 1, &[3, 3]);
    let all = [i0, i1, i2, i3];
    let chain_io = fb.scalars(&[]);
    let mut chain_refs = Vec::new();
    for part in split {
        let instructions = fb.refs(&part.iter().map(|&k| all[k]).collect::<Vec<_>>());
        chain_refs.push(fb.chain(chain_io, instructions));
    }
    let chains = fb.refs(&chain_refs);
    let inc = fb.operator("test::inc");
    let not = fb.operator("test::not");
    let operators = fb.refs(&[inc, not]);
    aligned(fb.method_file(values, chains, operators, &[2, 1, 0, 3]))
}

fn inc(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let x = ctx.int(0)?;
    ctx.set_int(1, x + 1)
}

fn not(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let x = ctx.bool(0)?;
    ctx.set_bool(1, !x)
}

const KERNELS: [Kernel; 2] = [
    op!("test::inc(int x) -> int", inc),
    op!("test::not(bool x) -> bool", not),
];

/// `e` has `code`, and `at` when errors carry it (the `at` feature, implied
/// by `messages`; without them `Error` is the code alone).
fn assert_error(e: etch_runtime::Error, code: ErrorCode, at: u32) {
    assert_eq!(e.code, code);
    if cfg!(any(feature = "at", feature = "messages")) {
        assert_eq!(e.at(), at);
    }
}

#[test]
fn run_time_values_take_one_slot_each_and_are_written_and_read() {
    // One chain, and the same instructions over four chains (one empty):
    // the state walk numbers instructions across chains.
    let one: &[&[usize]] = &[&[0, 1, 2, 3]];
    let four: &[&[usize]] = &[&[0], &[], &[1, 2], &[3]];
    for split in [one, four] {
        run_time_values(split);
    }
}

/// The decoded calls of [`program`] (`decoded-calls`): a word per
/// instruction; per kernel call 2 header words and one per argument (3
/// calls of 2); 4-byte aligned inside (+ 3 B).
const CALLS: usize = if cfg!(feature = "decoded-calls") {
    (4 + 3 * 4) * 4 + 3
} else {
    0
};

fn run_time_values(split: &[&[usize]]) {
    let (words, len) = program(split);
    let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..len];
    for verification in [Verification::Minimal, Verification::InternalConsistency] {
        let program = Program::from_bytes(bytes, verification).unwrap();
        let meta = program.method_meta("forward").unwrap();
        // 4 instructions x 2 B + 3 values written at run time (v2, v1, v3;
        // v2 twice but one slot) x 13 B + the decoded calls; no delegates,
        // inputs or scratch.
        assert_eq!(
            meta.method_state_bytes(&KERNELS).unwrap(),
            4 * 2 + 3 * 13 + CALLS
        );
        assert_eq!(meta.kernel_scratch_bytes(&KERNELS).unwrap(), 0);
        assert_eq!(meta.count_missing_operators(&KERNELS).unwrap(), 0);
        assert_eq!(meta.num_instructions().unwrap(), 4);

        let mut state = vec![0u8; 47 + CALLS];
        let mut planned: [&mut [u8]; 0] = [];
        let mut method = Method::load(&meta, &mut state, &mut planned, &KERNELS, &[]).unwrap();
        // Before execute: the serialized values.
        let ints = |m: &Method<'_, '_>| -> Vec<i64> {
            (0..3)
                .map(|i| match m.output(i).unwrap() {
                    Output::Int(x) => x,
                    o => panic!("output {i}: {o:?}"),
                })
                .collect()
        };
        assert_eq!(ints(&method), [0, 0, 5]);
        assert!(matches!(method.output(3), Ok(Output::Bool(false))));
        method.execute().unwrap();
        assert_eq!(ints(&method), [7, 6, 5]);
        assert!(matches!(method.output(3), Ok(Output::Bool(true))));
        // A second run reads what the first left: v2 and v1 are rewritten
        // from v0 (same values), v3 flips back.
        method.execute().unwrap();
        assert_eq!(ints(&method), [7, 6, 5]);
        assert!(matches!(method.output(3), Ok(Output::Bool(false))));

        // One byte short: the shortfall, nothing written.
        let mut short = vec![0xa5u8; 46 + CALLS];
        let mut planned: [&mut [u8]; 0] = [];
        let e = Method::load(&meta, &mut short, &mut planned, &KERNELS, &[])
            .err()
            .unwrap();
        assert_error(e, ErrorCode::MemoryAllocationFailed, 1);
        assert!(short.iter().all(|&b| b == 0xa5));

        // Without `test::inc` (called twice): one operator missing.
        let only_not = &KERNELS[1..];
        assert_eq!(meta.count_missing_operators(only_not).unwrap(), 1);
        let mut state = vec![0u8; meta.method_state_bytes(only_not).unwrap()];
        let mut planned: [&mut [u8]; 0] = [];
        let e = Method::load(&meta, &mut state, &mut planned, only_not, &[])
            .err()
            .unwrap();
        assert_error(e, ErrorCode::OperatorMissing, 1);
        assert_eq!(meta.count_missing_operators(&[]).unwrap(), 2);
    }
}

/// An instruction of [`jumps`]' programs.
enum I {
    /// `test::inc(a) -> b`.
    Inc(i32, i32),
    /// JumpFalse on `v3` (false) to `destination`.
    JumpFalse(i32),
}

/// v0 = Int 5, v1 = Int 0, v2 = Int 0, v3 = Bool false, the instructions
/// in the chains given; outputs v2, v1.
fn jumps(chains: &[&[I]]) -> (Vec<u128>, usize) {
    let mut fb = Builder::default();
    let values = four_values(&mut fb);
    let chain_io = fb.scalars(&[]);
    let mut chain_refs = Vec::new();
    for chain in chains {
        let mut refs = Vec::new();
        for i in chain.iter() {
            refs.push(match *i {
                I::Inc(a, b) => {
                    let args = fb.i32s(&[a, b]);
                    fb.kernel_call(0, args)
                }
                I::JumpFalse(d) => fb.jump_false(3, d),
            });
        }
        let instructions = fb.refs(&refs);
        chain_refs.push(fb.chain(chain_io, instructions));
    }
    let chains = fb.refs(&chain_refs);
    let inc = fb.operator("test::inc");
    let operators = fb.refs(&[inc]);
    aligned(fb.method_file(values, chains, operators, &[2, 1]))
}

/// A JumpFalse destination is an index in its own chain; its instruction
/// count ends the chain (the next chain runs: how the exporter's
/// `torch.cond` skips a false branch emitted last); past it or negative is
/// InvalidProgram: at load with verification, when the jump is taken
/// without it (`Verification::Minimal`).
#[test]
fn jump_destinations_are_chain_local() {
    use I::*;
    // Expected outputs, or None: InvalidProgram at the jump (instruction 0).
    type Case<'a> = (&'a [&'a [I]], Option<[i64; 2]>);
    let cases: [Case; 6] = [
        // The end of chain 0: chain 1 still runs (v1 = v2 + 1 = 1).
        (&[&[JumpFalse(2), Inc(0, 2)], &[Inc(2, 1)]], Some([0, 1])),
        // Past the end or negative.
        (&[&[JumpFalse(3), Inc(0, 2)], &[Inc(2, 1)]], None),
        (&[&[JumpFalse(7), Inc(0, 2)], &[Inc(2, 1)]], None),
        (&[&[JumpFalse(-1), Inc(0, 2)], &[Inc(2, 1)]], None),
        // Inside chain 1: its own instruction 2, not the plan's third one
        // (which would set v2 = 2 first and give v1 = 3).
        (
            &[&[Inc(1, 2)], &[JumpFalse(2), Inc(2, 2), Inc(2, 1)]],
            Some([1, 2]),
        ),
        // The end of the plan's last chain: the run ends.
        (&[&[Inc(0, 2)], &[JumpFalse(1)]], Some([6, 0])),
    ];
    for (chains, expected) in cases {
        let (words, len) = jumps(chains);
        let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..len];
        for verification in [Verification::Minimal, Verification::InternalConsistency] {
            let program = Program::from_bytes(bytes, verification);
            // Without `verify`, InternalConsistency is the minimal check.
            let verified = verification == Verification::InternalConsistency;
            if expected.is_none() && verified && cfg!(feature = "verify") {
                let e = program.err().unwrap();
                assert_eq!(e.code, ErrorCode::InvalidProgram);
                continue;
            }
            let meta = program.unwrap().method_meta("forward").unwrap();
            let mut state = vec![0u8; meta.method_state_bytes(&KERNELS).unwrap()];
            let mut planned: [&mut [u8]; 0] = [];
            let mut method = Method::load(&meta, &mut state, &mut planned, &KERNELS, &[]).unwrap();
            let Some(expected) = expected else {
                // The jump is the first instruction of the run.
                assert_error(
                    method.execute().err().unwrap(),
                    ErrorCode::InvalidProgram,
                    0,
                );
                continue;
            };
            method.execute().unwrap();
            let ints: Vec<i64> = (0..2)
                .map(|i| match method.output(i).unwrap() {
                    Output::Int(x) => x,
                    o => panic!("output {i}: {o:?}"),
                })
                .collect();
            assert_eq!(ints, expected, "{verification:?}");
        }
    }
}

fn filler(_: &mut KernelContext<'_, '_>) -> Result<()> {
    Ok(())
}

/// The state stores a kernel's index + 1 in 16 bits: 65,535 kernels are
/// indexed (the last at 65,534 runs), one more is rejected with
/// `RegistrationExceedingMaxKernels` (0x15) before anything is written;
/// stored as `as u16`, index 65,536 became kernel 0.
#[test]
fn kernel_slices_longer_than_the_state_indexes_are_rejected() {
    let (words, len) = program(&[&[0, 1, 2, 3]]);
    let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..len];
    let program = Program::from_bytes(bytes, Verification::Minimal).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let filler = op!("test::filler() -> ()", filler);

    // 65,535 kernels, `inc` and `not` the last two (indices 65,533 and 65,534).
    let mut kernels = vec![filler; usize::from(u16::MAX) - 2];
    kernels.extend_from_slice(&KERNELS);
    assert_eq!(kernels.len(), 65_535);
    assert_eq!(
        meta.method_state_bytes(&kernels).unwrap(),
        4 * 2 + 3 * 13 + CALLS
    );
    let mut state = vec![0u8; 47 + CALLS];
    let mut planned: [&mut [u8]; 0] = [];
    let mut method = Method::load(&meta, &mut state, &mut planned, &kernels, &[]).unwrap();
    method.execute().unwrap();
    assert!(matches!(method.output(0), Ok(Output::Int(7))));
    assert!(matches!(method.output(3), Ok(Output::Bool(true))));

    // `not` moved to the front and `inc` to index 65,536.
    let mut kernels = vec![KERNELS[1]];
    kernels.extend(std::iter::repeat_n(filler, 65_535));
    kernels.push(KERNELS[0]);
    assert_eq!(kernels.len(), 65_537);
    let e = meta.method_state_bytes(&kernels).err().unwrap();
    assert_error(e, ErrorCode::RegistrationExceedingMaxKernels, 65_537);
    assert_eq!(ErrorCode::RegistrationExceedingMaxKernels as u32, 0x15);
    let mut state = vec![0xa5u8; 44];
    let mut planned: [&mut [u8]; 0] = [];
    let e = Method::load(&meta, &mut state, &mut planned, &kernels, &[])
        .err()
        .unwrap();
    assert_error(e, ErrorCode::RegistrationExceedingMaxKernels, 65_537);
    assert!(state.iter().all(|&b| b == 0xa5));
}

/// What the hostile programs of [`hostile`] repeat.
#[derive(Clone, Copy)]
enum H {
    /// `n` instructions `move v0 -> v(k+1)`, and then `move v0 -> v1`
    /// again if `true`: n (+ 1) run-time written values.
    Moves(usize, bool),
    /// `n` instructions, instruction k calling operator k, every operator
    /// `test::gone` (not registered).
    Missing(usize),
    /// `m` chains sharing one chain whose instructions are `k` times the
    /// same `move v0 -> v1`: m x k instructions from m + k offsets.
    Aliased(usize, usize),
}

/// A program made to make the state walk slow; values v0 = Int 7, then
/// Int 0 as many times as instructions write (one table, many offsets);
/// output v1.
fn hostile(h: H) -> (Vec<u128>, usize) {
    let mut fb = Builder::default();
    let seven = fb.int(7);
    let zero = fb.int(0);
    let n_values = match h {
        H::Moves(n, _) => n + 1,
        _ => 2,
    };
    let mut value_refs = vec![seven];
    value_refs.extend(std::iter::repeat_n(zero, n_values - 1));
    let values = fb.refs(&value_refs);
    let chain_io = fb.scalars(&[]);
    let chain = |fb: &mut Builder, refs: &[usize]| {
        let instructions = fb.refs(refs);
        fb.chain(chain_io, instructions)
    };
    let (chain_refs, n_ops) = match h {
        H::Moves(n, again) => {
            let mut refs: Vec<usize> = (0..n).map(|k| fb.move_call(0, k as i32 + 1)).collect();
            if again {
                refs.push(fb.move_call(0, 1));
            }
            (vec![chain(&mut fb, &refs)], 1)
        }
        H::Missing(n) => {
            let args = fb.scalars(&[]);
            let refs: Vec<usize> = (0..n).map(|k| fb.kernel_call(k as i32, args)).collect();
            (vec![chain(&mut fb, &refs)], n)
        }
        H::Aliased(m, k) => {
            let one = fb.move_call(0, 1);
            let c = chain(&mut fb, &vec![one; k]);
            (vec![c; m], 1)
        }
    };
    let chains = fb.refs(&chain_refs);
    let gone = fb.operator("test::gone");
    let operators = fb.refs(&vec![gone; n_ops]);
    aligned(fb.method_file(values, chains, operators, &[1]))
}

/// The state walk's time on files made to make it slow: each outcome exact,
/// each well under 2 s (a debug build: 22 to 25 ms for the 96 KB files.
/// Before the look-back budget and the instruction cap, they took 0.43 to
/// 0.56 s, quadratic in their size, and `Aliased` did not finish in 500 s).
#[test]
fn hostile_programs_load_in_bounded_time() {
    use std::time::{Duration, Instant};
    let timed = |h: H, f: &dyn Fn(&[u8], Verification)| {
        let (words, len) = hostile(h);
        let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..len];
        for verification in [Verification::Minimal, Verification::InternalConsistency] {
            let t = Instant::now();
            f(bytes, verification);
            let took = t.elapsed();
            eprintln!("{len} B, {verification:?}: {took:?}");
            assert!(took < Duration::from_secs(2), "{verification:?}: {took:?}");
        }
    };
    let run = |bytes: &[u8], v: Verification, n: usize, slots: usize| {
        let program = Program::from_bytes(bytes, v).unwrap();
        let meta = program.method_meta("forward").unwrap();
        assert_eq!(meta.num_instructions().unwrap(), n);
        assert_eq!(
            meta.method_state_bytes(&KERNELS).unwrap(),
            n * 2 + slots * 13
        );
        let mut state = vec![0u8; n * 2 + slots * 13];
        let mut planned: [&mut [u8]; 0] = [];
        let mut method = Method::load(&meta, &mut state, &mut planned, &KERNELS, &[]).unwrap();
        assert!(matches!(method.output(0), Ok(Output::Int(0))));
        method.execute().unwrap();
        assert!(matches!(method.output(0), Ok(Output::Int(7))));
    };
    // 2,000 distinct written values: one slot each.
    timed(H::Moves(2_000, false), &|b, v| run(b, v, 2_000, 2_000));
    // v1 written again after them: the look-back budget (one instruction
    // per program byte) ran out long before, so v1 gets a second, spare
    // slot (found second, never read).
    timed(H::Moves(2_000, true), &|b, v| run(b, v, 2_001, 2_001));
    // Early enough, the duplicate is found: 20 slots for 21 writes.
    timed(H::Moves(20, true), &|b, v| run(b, v, 21, 20));
    // 2,000 distinct missing operators.
    timed(H::Missing(2_000), &|b, v| {
        let program = Program::from_bytes(b, v).unwrap();
        let meta = program.method_meta("forward").unwrap();
        assert_eq!(meta.count_missing_operators(&KERNELS).unwrap(), 2_000);
        let mut state = vec![0u8; meta.method_state_bytes(&KERNELS).unwrap()];
        let mut planned: [&mut [u8]; 0] = [];
        let e = Method::load(&meta, &mut state, &mut planned, &KERNELS, &[])
            .err()
            .unwrap();
        assert_error(e, ErrorCode::OperatorMissing, 2_000);
    });
    // 4,000 chains sharing 4,000 instructions: 16 million instructions in
    // a 32 KB file. The verifier gives up (its budget); without it, the
    // walk stops at the first instruction past the program's words.
    let len = hostile(H::Aliased(4_000, 4_000)).1;
    timed(H::Aliased(4_000, 4_000), &|b, v| {
        let program = Program::from_bytes(b, v);
        // Without `verify`, InternalConsistency is the minimal check.
        if v == Verification::InternalConsistency && cfg!(feature = "verify") {
            let e = program.err().unwrap();
            assert_eq!(e.code, ErrorCode::InvalidProgram);
            return;
        }
        let meta = program.unwrap().method_meta("forward").unwrap();
        let e = meta.method_state_bytes(&KERNELS).err().unwrap();
        assert_error(e, ErrorCode::InvalidProgram, (len / 4) as u32);
    });
}

fn half(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let x = ctx.int(0)?;
    ctx.set_double(1, x as f64 / 2.0)
}

/// Writes whether its argument is now a Double of 2.5.
fn is_two_and_a_half(ctx: &mut KernelContext<'_, '_>) -> Result<()> {
    let yes = ctx.kind(0)? == etch_pte::ValueKind::Double && ctx.double(0)? == 2.5;
    ctx.set_bool(1, yes)
}

/// A run-time write gives a value its kind, as ExecuTorch's kernels assign
/// a whole EValue (`executorch_prim::truediv.Scalar` writes a Double into
/// a value the emitter declares an Int): outputs, Moves and later kernels
/// see the Double. Values as in [`four_values`]:
/// ```text
/// 0: test::half(v0) -> v2                 v2 = Double 2.5 (declared Int)
/// 1: move v2 -> v1                        v1 = Double 2.5 (declared Int)
/// 2: test::is_two_and_a_half(v1) -> v3    v3 = true
/// outputs: v2, v1, v0, v3
/// ```
#[test]
fn a_scalar_takes_the_kind_its_writer_gives_it() {
    let mut fb = Builder::default();
    let values = four_values(&mut fb);
    let a0 = fb.i32s(&[0, 2]);
    let i0 = fb.kernel_call(0, a0);
    let i1 = fb.move_call(2, 1);
    let a2 = fb.i32s(&[1, 3]);
    let i2 = fb.kernel_call(1, a2);
    let chain_io = fb.scalars(&[]);
    let instructions = fb.refs(&[i0, i1, i2]);
    let chain = fb.chain(chain_io, instructions);
    let chains = fb.refs(&[chain]);
    let o0 = fb.operator("test::half");
    let o1 = fb.operator("test::is_two_and_a_half");
    let operators = fb.refs(&[o0, o1]);
    let (words, len) = aligned(fb.method_file(values, chains, operators, &[2, 1, 0, 3]));
    let bytes = &bytemuck::cast_slice::<u128, u8>(&words)[..len];
    let kernels = [
        op!("test::half(int a) -> Scalar", half),
        op!(
            "test::is_two_and_a_half(Scalar a) -> bool",
            is_two_and_a_half
        ),
    ];
    let program = Program::from_bytes(bytes, Verification::Minimal).unwrap();
    let meta = program.method_meta("forward").unwrap();
    // 3 instructions x 2 B + 3 values written at run time x 13 B.
    let need = meta.method_state_bytes(&kernels).unwrap();
    let calls = if cfg!(feature = "decoded-calls") {
        need - 3 * 2 - 3 * 13
    } else {
        0
    };
    assert_eq!(need, 3 * 2 + 3 * 13 + calls);
    let mut state = vec![0u8; need];
    let mut planned: [&mut [u8]; 0] = [];
    let mut method = Method::load(&meta, &mut state, &mut planned, &kernels, &[]).unwrap();
    // Before execute: the declared kinds.
    assert!(matches!(method.output(0), Ok(Output::Int(0))));
    assert!(matches!(method.output(3), Ok(Output::Bool(false))));
    for _ in 0..2 {
        method.execute().unwrap();
        assert!(matches!(method.output(0), Ok(Output::Double(2.5))));
        assert!(matches!(method.output(1), Ok(Output::Double(2.5))));
        assert!(matches!(method.output(2), Ok(Output::Int(5))));
        assert!(matches!(method.output(3), Ok(Output::Bool(true))));
    }
}
