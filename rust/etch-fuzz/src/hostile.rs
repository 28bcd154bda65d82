//! Hostile but well-formed programs, built here at any size: many values,
//! many instructions, many chains, many operators. Every one is a valid
//! `.pte` that verifies; the point is how load and execute time grow with
//! the file (at most linearly). `etch-growth` times a series from
//! 1 KB to 1 MB (docs/robustness.md); `tests/growth.rs` asserts exact
//! outcomes.
//!
//! Built with [`etch_pte::builder`], linear in the file's size.

use etch_pte::builder::Builder;

/// A family of hostile programs, scaled by `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `n` values v1..=n and `n` instructions `move v0 -> vk`: `n` run-time
    /// written values (state slots), each written once per execute.
    Values(usize),
    /// `n` chains of one instruction each, `move v0 -> v1`.
    Chains(usize),
    /// `n` instructions `move v0 -> v1` in one chain: one slot, read and
    /// written `n` times.
    Instructions(usize),
    /// `n` operators, distinct and unregistered (`test::gone<k>`), each
    /// called by one instruction: load fails with `OperatorMissing`, at =
    /// `n`.
    Operators(usize),
}

impl Shape {
    pub fn n(self) -> usize {
        match self {
            Shape::Values(n) | Shape::Chains(n) | Shape::Instructions(n) | Shape::Operators(n) => n,
        }
    }

    pub fn with_n(self, n: usize) -> Shape {
        match self {
            Shape::Values(_) => Shape::Values(n),
            Shape::Chains(_) => Shape::Chains(n),
            Shape::Instructions(_) => Shape::Instructions(n),
            Shape::Operators(_) => Shape::Operators(n),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Shape::Values(_) => "values",
            Shape::Chains(_) => "chains",
            Shape::Instructions(_) => "instructions",
            Shape::Operators(_) => "operators",
        }
    }
}

/// The program of `shape`: values v0 = Int 7 and Int 0 for every other,
/// output v1 (which execute sets to 7).
pub fn build(shape: Shape) -> Vec<u8> {
    let mut fb = Builder::default();
    let seven = fb.int(7);
    let zero = fb.int(0);
    let n_values = match shape {
        Shape::Values(n) => n + 1,
        _ => 2,
    };
    let mut value_refs = vec![seven];
    value_refs.extend(std::iter::repeat_n(zero, n_values - 1));
    let values = fb.refs(&value_refs);
    let io = fb.scalars(&[]);
    let chain = |fb: &mut Builder, refs: &[usize]| {
        let instructions = fb.refs(refs);
        fb.chain(io, instructions)
    };
    let (chains, operators) = match shape {
        Shape::Values(n) => {
            let refs: Vec<usize> = (0..n).map(|k| fb.move_call(0, k as i32 + 1)).collect();
            (vec![chain(&mut fb, &refs)], vec![])
        }
        Shape::Chains(n) => {
            let chains = (0..n)
                .map(|_| {
                    let m = fb.move_call(0, 1);
                    chain(&mut fb, &[m])
                })
                .collect();
            (chains, vec![])
        }
        Shape::Instructions(n) => {
            let refs: Vec<usize> = (0..n).map(|_| fb.move_call(0, 1)).collect();
            (vec![chain(&mut fb, &refs)], vec![])
        }
        Shape::Operators(n) => {
            let args = fb.scalars(&[]);
            let refs: Vec<usize> = (0..n).map(|k| fb.kernel_call(k as i32, args)).collect();
            let c = chain(&mut fb, &refs);
            let ops = (0..n)
                .map(|k| fb.operator(&format!("test::gone{k}")))
                .collect();
            (vec![c], ops)
        }
    };
    let chains = fb.refs(&chains);
    let operators = fb.refs(&operators);
    fb.method_file(values, chains, operators, &[1])
}

/// The smallest `n` whose program of `shape` is at least `bytes` long.
pub fn n_for_size(shape: Shape, bytes: usize) -> usize {
    let per = build(shape.with_n(64))
        .len()
        .saturating_sub(build(shape.with_n(0)).len())
        / 64;
    let mut n = bytes.saturating_sub(build(shape.with_n(0)).len()) / per.max(1);
    while build(shape.with_n(n)).len() < bytes {
        n += 1 + n / 100;
    }
    n
}

/// What one load (and execute) of a hostile program gave, and how long
/// each step took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timed {
    /// `Ok` or the first error's code.
    pub outcome: Result<(), etch_runtime::ErrorCode>,
    /// Program::from_bytes + method_meta + method_state_bytes + Method::load.
    pub load: std::time::Duration,
    /// One execute (zero if load failed).
    pub execute: std::time::Duration,
    /// `MethodMeta::for_each_missing_operator_with` and a scratch of one bit
    /// per operator (what `etch run` calls on `OperatorMissing`).
    pub missing: std::time::Duration,
}

/// Loads `file` with `verification` and every etch kernel, executes once
/// and checks output 0 is Int 7; times each step.
pub fn load_execute_timed(file: &[u8], verification: etch_runtime::Verification) -> Timed {
    use etch_runtime::{ErrorCode, Method, Output, Program};
    use std::time::{Duration, Instant};
    let data = crate::Aligned::from_bytes(file);
    let mut t = Timed {
        outcome: Ok(()),
        load: Duration::ZERO,
        execute: Duration::ZERO,
        missing: Duration::ZERO,
    };
    let start = Instant::now();
    let result = (|| {
        let program = Program::from_bytes(data.bytes(), verification).map_err(|e| e.code)?;
        let meta = program.method_meta("forward").map_err(|e| e.code)?;
        let bytes = meta
            .method_state_bytes(etch_kernels::KERNELS)
            .map_err(|e| e.code)?;
        let mut state = vec![0u8; bytes];
        let mut planned: Vec<&mut [u8]> = Vec::new();
        let loaded = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]);
        t.load = start.elapsed();
        let s = Instant::now();
        let mut names = 0usize;
        let scratch = meta.missing_operator_scratch_bytes().map_err(|e| e.code)?;
        let mut used = vec![0u8; scratch.max(1)];
        meta.for_each_missing_operator_with(etch_kernels::KERNELS, &mut used, |_, _| names += 1)
            .map_err(|e| e.code)?;
        t.missing = s.elapsed();
        let mut method = loaded.map_err(|e| e.code)?;
        let s = Instant::now();
        method.execute().map_err(|e| e.code)?;
        t.execute = s.elapsed();
        match method.output(0) {
            Ok(Output::Int(7)) => Ok(()),
            _ => Err(ErrorCode::Internal),
        }
    })();
    if t.load == Duration::ZERO {
        t.load = start.elapsed();
    }
    t.outcome = result;
    t
}
