//! The golden ETDump of the DS-CNN fixture (`dscnn_cm_m33_int8io`, its
//! input0), recorded with a clock that advances by one per reading: the
//! files in `tests/c-api/etdump/` that the C API's test
//! (`tests/c-api/etdump.c`, run by `tools/ci/c-api.sh`) must reproduce byte
//! for byte through `etch_method_execute_etdump*`. A change to the writer
//! fails here first; `ETCH_BLESS=1 cargo test -p etch-etdump --test golden`
//! rewrites the files after a deliberate change.

use std::cell::Cell;
use std::path::PathBuf;

use etch_etdump::EtDumpObserver;
use etch_runtime::{Method, Program, Verification};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The raw payload of a C-order `.npy` file.
fn npy_payload(raw: &[u8]) -> &[u8] {
    assert_eq!(&raw[..6], b"\x93NUMPY");
    let start = if raw[6] == 1 {
        10 + u16::from_le_bytes([raw[8], raw[9]]) as usize
    } else {
        12 + u32::from_le_bytes(raw[8..12].try_into().unwrap()) as usize
    };
    &raw[start..]
}

/// FNV-1a, 64 bits (the C test computes the same over its debug buffer).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// (ETDump, debug buffer) of one run with the counting clock.
fn record(debug: bool) -> (Vec<u8>, Vec<u8>) {
    let fx = root().join("tests/fixtures");
    let pte = std::fs::read(fx.join("dscnn_cm_m33_int8io.pte")).unwrap();
    let mut aligned = vec![0u128; pte.len().div_ceil(16)];
    bytemuck::cast_slice_mut::<u128, u8>(&mut aligned)[..pte.len()].copy_from_slice(&pte);
    let bytes = &bytemuck::cast_slice::<u128, u8>(&aligned)[..pte.len()];
    let program = Program::from_bytes(bytes, Verification::InternalConsistency).unwrap();
    let meta = program.method_meta("forward").unwrap();
    let mut state = vec![0u8; meta.method_state_bytes(etch_kernels::KERNELS).unwrap()];
    let mut planned_mem: Vec<Vec<u128>> = (0..meta.num_memory_planned_buffers().unwrap())
        .map(|i| vec![0u128; meta.memory_planned_buffer_size(i).unwrap().div_ceil(16)])
        .collect();
    let mut planned: Vec<&mut [u8]> = planned_mem
        .iter_mut()
        .map(|b| bytemuck::cast_slice_mut::<u128, u8>(b))
        .collect();
    let mut method =
        Method::load(&meta, &mut state, &mut planned, etch_kernels::KERNELS, &[]).unwrap();
    let input = std::fs::read(fx.join("dscnn_cm_m33_int8io.input0.npy")).unwrap();
    method.set_input_bytes(0, npy_payload(&input)).unwrap();

    let ticks = Cell::new(0u64);
    let clock = || {
        let t = ticks.get();
        ticks.set(t + 1);
        t
    };
    let mut etdump = vec![0u8; 64 * 1024];
    let mut debug_buf = vec![0u8; 256 * 1024];
    let mut obs: EtDumpObserver<'_, '_, '_, _> = EtDumpObserver::new(&mut etdump, &meta, clock);
    if debug {
        obs = obs.with_intermediate_outputs(&mut debug_buf);
    }
    obs.execute(&mut method).unwrap();
    let (file, dbg) = obs.finish().unwrap();
    (file.to_vec(), dbg.to_vec())
}

fn check(name: &str, got: &[u8]) {
    let path = root().join("tests/c-api/etdump").join(name);
    if std::env::var_os("ETCH_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read(&path).unwrap_or_default();
    assert!(
        got == want.as_slice(),
        "{name}: the writer's output ({} B) differs from {} ({} B); after a deliberate change, \
         ETCH_BLESS=1 cargo test -p etch-etdump --test golden",
        got.len(),
        path.display(),
        want.len()
    );
}

#[test]
fn dscnn_profile_golden() {
    let (etdp, debug) = record(false);
    assert!(debug.is_empty());
    assert_eq!(&etdp[8..12], b"ED00");
    assert_eq!(
        u32::from_le_bytes(etdp[..4].try_into().unwrap()) as usize,
        etdp.len() - 4
    );
    check("dscnn_cm_m33_int8io.etdp", &etdp);
}

#[test]
fn dscnn_debug_golden() {
    let (etdp, debug) = record(true);
    check("dscnn_cm_m33_int8io.debug.etdp", &etdp);
    // The debug buffer by length and hash (the tensors themselves are
    // checked against ExecuTorch by the CLI's trace tests).
    let summary = format!("{} {:016x}\n", debug.len(), fnv1a(&debug));
    check("dscnn_cm_m33_int8io.debug.txt", summary.as_bytes());
}
