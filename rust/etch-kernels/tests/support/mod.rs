//! What the bad-argument tests share: loading a single-operator program of
//! `tests/ops/` into 16-byte-aligned memory and running its "forward".
#![allow(dead_code)] // each test binary uses its own part

use std::path::Path;

use etch_runtime::{ErrorCode, Method, Program, Verification};

/// `len` bytes aligned to 16, as a `.pte` in flash or a planned arena is.
pub struct Aligned(Vec<u128>, usize);
impl Aligned {
    pub fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16) + 1], len)
    }
    pub fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

/// The bytes of `tests/ops/<name>.pte`.
pub fn program(name: &str) -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops");
    std::fs::read(dir.join(format!("{name}.pte"))).unwrap()
}

/// Loads `file` and runs "forward" on zero inputs: `Ok(())` after execute,
/// or where the run stopped, `Err((stage, code))`.
pub fn run_on_zeros(file: &[u8]) -> Result<(), (&'static str, ErrorCode)> {
    let mut a = Aligned::new(file.len());
    a.bytes_mut().copy_from_slice(file);
    let program = Program::from_bytes(a.bytes(), Verification::InternalConsistency)
        .map_err(|e| ("program", e.code))?;
    let meta = program
        .method_meta("forward")
        .map_err(|e| ("meta", e.code))?;
    let mut arena = Aligned::new(256 * 1024);
    let mut state = vec![0u8; 16 * 1024];
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let mut method = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|e| ("load", e.code))?;
    for i in 0..meta.num_inputs().map_err(|e| ("meta", e.code))? {
        let n = method.input_meta(i).map(|m| m.nbytes).unwrap_or(0);
        method
            .set_input_bytes(i, &vec![0u8; n])
            .map_err(|e| ("input", e.code))?;
    }
    method.execute().map_err(|e| ("execute", e.code))
}
