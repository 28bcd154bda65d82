//! Corrupted programs through the whole runtime: loaded *without*
//! verification (`Verification::Minimal`), so every malformed offset, index,
//! shape and argument reaches the loader and the kernels. Each case must end
//! in an error or a result, never a panic or an out-of-bounds access (none of
//! etch-pte, etch-runtime or the kernels has `unsafe`, so out of bounds would
//! be a panic here).

use std::path::Path;

use etch_runtime::{Method, Program, Verification};

struct Aligned(Vec<u128>, usize);
impl Aligned {
    fn new(len: usize) -> Self {
        Aligned(vec![0; len.div_ceil(16) + 1], len)
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

/// Loads and runs "forward" with fixed, generous buffers; returns whether it
/// got as far as a successful execute.
fn try_run(file: &[u8], verification: Verification) -> bool {
    let mut a = Aligned::new(file.len());
    a.bytes_mut().copy_from_slice(file);
    let Ok(program) = Program::from_bytes(a.bytes(), verification) else {
        return false;
    };
    let Ok(meta) = program.method_meta("forward") else {
        return false;
    };
    let mut arena = Aligned::new(32 * 1024);
    // DS-CNN's method state is 4,331 B with its decoded kernel calls.
    let mut state = vec![0u8; 16 * 1024];
    let mut planned: Vec<&mut [u8]> = vec![arena.bytes_mut()];
    let Ok(mut method) = Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[])
    else {
        return false;
    };
    method.set_instruction_limit(10_000);
    let input = vec![0x11u8; method.input_meta(0).map(|i| i.nbytes).unwrap_or(0)];
    let _ = method.set_input_bytes(0, &input);
    let ok = method.execute().is_ok();
    let _ = method.output(0);
    ok
}

#[test]
fn corrupted_programs_never_panic_in_the_runtime() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    let mut cases = 0;
    let mut ran = 0;
    for name in [
        "tiny_portable_pc",
        "tiny_cm_m55",
        "tiny_cm_m0_int8io",
        "dscnn_cm_m33",
    ] {
        let bytes = std::fs::read(dir.join(format!("{name}.pte"))).unwrap();
        assert!(
            try_run(&bytes, Verification::Minimal),
            "{name} runs unmodified"
        );
        let mut a = Aligned::new(bytes.len());
        a.bytes_mut().copy_from_slice(&bytes);
        let program_size = Program::from_bytes(a.bytes(), Verification::InternalConsistency)
            .unwrap()
            .file()
            .program_size();
        // Every byte of the small programs; every 13th of DS-CNN's (each
        // run that survives executes the whole model).
        let step = if program_size > 8000 { 13 } else { 1 };
        let mut buf = bytes.clone();
        for pos in (0..program_size).step_by(step) {
            for flip in [0xffu8, 0x01, 0x80] {
                let orig = buf[pos];
                buf[pos] = orig ^ flip;
                cases += 1;
                if try_run(&buf, Verification::Minimal) {
                    ran += 1;
                }
                buf[pos] = orig;
            }
        }
    }
    // Many corruptions only change a value (a scale, a size): those still run.
    assert!(
        ran > 0 && ran < cases,
        "{ran} of {cases} corrupted programs ran"
    );
}

#[test]
fn the_fuzz_corpus_never_panics_in_the_runtime() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../etch-pte/fuzz/corpus/new_checked");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let bytes = std::fs::read(e.unwrap().path()).unwrap();
        try_run(&bytes, Verification::Minimal);
        try_run(&bytes, Verification::InternalConsistency);
        n += 1;
    }
    assert!(n >= 100);
}
