//! What etch's fuzzing runs, as plain functions: the cargo-fuzz targets in
//! `fuzz/` (nightly, libFuzzer + AddressSanitizer), the stable mutation
//! driver `etch-mutate` (release builds, for long campaigns and the CI
//! smoke) and the regression corpus (`regressions/`, replayed by
//! `cargo test`) all call these, so a failure found by one replays
//! identically in the others.
//!
//! Each function returns an outcome and never panics on any input: a panic,
//! an abort, a sanitizer report or a run over the time limit is a bug in
//! etch, not in the input.

use etch_runtime::{ErrorCode, Method, Program, Verification};

pub mod hostile;
pub mod mutate;

/// Where a run stopped.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Stage {
    Program,
    Meta,
    Load,
    Input,
    Execute,
    Output,
}

/// `Ok` after every output was read, or the stage and code of the first error.
pub type Outcome = Result<(), (Stage, ErrorCode)>;

/// Most bytes the harness gives one planned buffer or the method state: a
/// file asking for more fails at load with `MemoryAllocationFailed`, as it
/// would on a device without that much RAM.
pub const MAX_BUFFER: usize = 1 << 20;

/// Instructions per `execute` (a mutated jump can loop; a real run of the
/// largest fixture takes a few hundred).
pub const INSTRUCTION_LIMIT: u32 = 10_000;

/// 16-byte aligned bytes (programs and planned buffers must be).
pub struct Aligned(Vec<u128>, usize);

impl Aligned {
    pub fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16)], len)
    }
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut a = Aligned::new(bytes.len());
        a.bytes_mut().copy_from_slice(bytes);
        a
    }
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.0).get(..self.1).unwrap_or(&[])
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        bytemuck::cast_slice_mut(&mut self.0)
            .get_mut(..self.1)
            .unwrap_or(&mut [])
    }
}

/// Loads `file` with `verification` and every kernel etch has
/// (`etch_kernels::KERNELS`: kernels added later are fuzzed without a change
/// here), gives each planned buffer and the state exactly the bytes the
/// method asks for, sets every input to a fixed pattern, executes once and
/// reads every output.
pub fn load_execute(file: &[u8], verification: Verification) -> Outcome {
    let data = Aligned::from_bytes(file);
    let program =
        Program::from_bytes(data.bytes(), verification).map_err(|e| (Stage::Program, e.code))?;
    let name = program.method_name(0).map_err(|e| (Stage::Meta, e.code))?;
    let meta = program
        .method_meta(name)
        .map_err(|e| (Stage::Meta, e.code))?;
    let too_big = (Stage::Load, ErrorCode::MemoryAllocationFailed);
    let state_len = meta
        .method_state_bytes(etch_kernels::KERNELS)
        .map_err(|e| (Stage::Meta, e.code))?;
    if state_len > MAX_BUFFER {
        return Err(too_big);
    }
    let mut state = vec![0u8; state_len];
    let buffers = meta
        .num_memory_planned_buffers()
        .map_err(|e| (Stage::Meta, e.code))?;
    let mut arenas = Vec::new();
    for i in 0..buffers.min(etch_runtime::MAX_MEMORY_IDS + 1) {
        let len = meta
            .memory_planned_buffer_size(i)
            .map_err(|e| (Stage::Meta, e.code))?;
        if len > MAX_BUFFER {
            return Err(too_big);
        }
        arenas.push(Aligned::new(len));
    }
    let mut planned: Vec<&mut [u8]> = arenas.iter_mut().map(Aligned::bytes_mut).collect();
    let mut method = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|e| (Stage::Load, e.code))?;
    method.set_instruction_limit(INSTRUCTION_LIMIT);
    let inputs = method.num_inputs().map_err(|e| (Stage::Input, e.code))?;
    for i in 0..inputs {
        let info = method.input_meta(i).map_err(|e| (Stage::Input, e.code))?;
        if info.nbytes > MAX_BUFFER {
            return Err((Stage::Input, ErrorCode::MemoryAllocationFailed));
        }
        let bytes: Vec<u8> = (0..info.nbytes)
            .map(|k| (k as u8).wrapping_mul(37) ^ 0x11)
            .collect();
        method
            .set_input_bytes(i, &bytes)
            .map_err(|e| (Stage::Input, e.code))?;
    }
    method.execute().map_err(|e| (Stage::Execute, e.code))?;
    let outputs = method.num_outputs().map_err(|e| (Stage::Output, e.code))?;
    for i in 0..outputs {
        method.output(i).map_err(|e| (Stage::Output, e.code))?;
    }
    Ok(())
}

/// [`load_execute`] with verification off, then on: both outcomes.
pub fn load_execute_both(file: &[u8]) -> [Outcome; 2] {
    [
        load_execute(file, Verification::Minimal),
        load_execute(file, Verification::InternalConsistency),
    ]
}

/// The reader alone: the whole-file verifier, its agreement with the
/// unchecked parse plus verification, and on accepted files every accessor
/// the verifier promises cannot fail. Returns whether the file was accepted.
/// A broken promise panics (that is what the fuzzer looks for).
pub fn reader(data: &[u8]) -> bool {
    use etch_pte::{PteFile, Value};
    let checked = PteFile::new_checked(data);
    let unchecked = PteFile::new_unchecked(data).and_then(|f| etch_pte::verify::verify(&f));
    assert_eq!(
        checked.is_ok(),
        unchecked.is_ok(),
        "new_checked disagrees with verify"
    );
    let Ok(file) = checked else {
        return false;
    };
    let plans = file.program().execution_plan().expect("verified: plans");
    for plan in plans.iter() {
        let plan = plan.expect("verified: plan");
        for v in plan.values().expect("verified: values").iter() {
            if let Value::Tensor(t) = v
                .expect("verified: value")
                .value()
                .expect("verified: value")
            {
                etch_pte::tensor::nbytes(&t).expect("verified: nbytes");
            }
        }
        for c in plan.chains().expect("verified: chains").iter() {
            let c = c.expect("verified: chain");
            for i in c.instructions().expect("verified: instructions").iter() {
                i.expect("verified: instruction")
                    .args()
                    .expect("verified: args");
            }
        }
    }
    true
}
