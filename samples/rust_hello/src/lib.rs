//! etch hello, in Rust on Zephyr: loads the smallest fixture (embedded with
//! `include_bytes!`, 16-byte aligned, in flash), runs it on the reference
//! input and compares the output bit for bit with ExecuTorch's own runtime.
//! The same flow as samples/hello, through the etch crates instead of the
//! C API.
#![no_std]

use etch_runtime::{Method, Output, Program, Verification};
use zephyr::printkln;

#[repr(C, align(16))]
struct Aligned<T: ?Sized>(T);

static MODEL: &Aligned<[u8]> = &Aligned(*include_bytes!(
    "../../../tests/fixtures/tiny_cm_m33_int8io.pte"
));
/// tiny_cm_m33_int8io.input0.npy / output0.npy without their .npy headers.
static INPUT: &[u8] = npy_data(include_bytes!(
    "../../../tests/fixtures/tiny_cm_m33_int8io.input0.npy"
));
static EXPECTED: &[u8] = npy_data(include_bytes!(
    "../../../tests/fixtures/tiny_cm_m33_int8io.output0.npy"
));

/// The data of a version-1 .npy file (header length at bytes 8..10).
const fn npy_data(npy: &'static [u8]) -> &'static [u8] {
    let header = 10 + (npy[8] as usize | (npy[9] as usize) << 8);
    npy.split_at(header).1
}

const ARENA_BYTES: usize = 1024;
const STATE_BYTES: usize = 256; // tiny_cm_m33_int8io: 232 B (its decoded kernel calls)

#[no_mangle]
extern "C" fn rust_main() {
    // Caller-owned memory: the method's state and its planned buffer.
    let mut arena = Aligned([0u8; ARENA_BYTES]);
    let mut state = [0u8; STATE_BYTES];
    match run(&mut arena.0, &mut state) {
        Ok(()) => printkln!("etch rust hello: bit-exact"),
        Err(what) => printkln!("etch rust hello: {} failed", what),
    }
}

fn run(arena: &mut [u8], state: &mut [u8]) -> Result<(), &'static str> {
    let program =
        Program::from_bytes(&MODEL.0, Verification::InternalConsistency).map_err(|_| "load")?;
    let meta = program.method_meta("forward").map_err(|_| "method_meta")?;
    let state_bytes = meta.method_state_bytes(etch_kernels::KERNELS).map_err(|_| "state size")?;
    let planned_bytes = meta
        .memory_planned_buffer_size(0)
        .map_err(|_| "plan size")?;
    printkln!(
        "etch rust hello: method forward: {} state bytes, planned buffer of {} bytes, {} kernel(s)",
        state_bytes,
        planned_bytes,
        etch_kernels::KERNELS.len()
    );
    let state = state.get_mut(..state_bytes).ok_or("state buffer")?;
    let mut planned = [arena.get_mut(..planned_bytes).ok_or("arena")?];
    let mut method = Method::load(&meta, state, &mut planned, etch_kernels::KERNELS, &[])
        .map_err(|_| "method load")?;
    method.set_input_bytes(0, INPUT).map_err(|_| "set input")?;
    method.execute().map_err(|_| "execute")?;
    match method.output(0) {
        Ok(Output::Tensor(t)) if t.data == EXPECTED => Ok(()),
        _ => Err("compare with ExecuTorch's output"),
    }
}
