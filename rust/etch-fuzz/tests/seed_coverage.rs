//! The CI fuzz smoke (tools/ci/fuzz-smoke.sh) seeds its load+execute run
//! with every fixture in tests/ops, tests/zoo, tests/fixtures and
//! tests/custom. This test checks what that buys: every kernel etch has
//! (`etch_kernels::KERNELS`) is called by at least one of those seeds of at
//! most `SMALL` bytes, so mutants reach each kernel quickly; except the
//! kernels of `NO_FIXTURE`, which no program exported by the pinned
//! ExecuTorch calls yet (their tests are unit tests). A kernel added without
//! a fixture fails here, and so does a `NO_FIXTURE` kernel that gained one.

use std::collections::BTreeMap;
use std::path::Path;

use etch_pte::{InstructionArgs, PteFile};

/// Largest seed counted as small (the largest smallest-seed is
/// dscnn_cm_m33_nhwc, 55,472 B, for the NHWC Cortex-M kernels;
/// `ETCH_SEED_REPORT=1` prints each kernel's smallest seed).
const SMALL: usize = 64 * 1024;

/// Kernels no fixture calls, so no seed reaches them and the smoke does not
/// fuzz them (a mutant would have to rewrite an operator name): the one
/// scalar op of dynamic-shape programs the pinned exporter never emits.
/// (Operators upstream's `to_edge` decomposes by default, such as stack,
/// roll or pixel_shuffle, have fixtures exported with `preserve_ops`:
/// tools/export/ops_*.py.)
const NO_FIXTURE: &[&str] = &[
    // The one prim op no program of tests/programs calls (the others:
    // map_f32, seq_ops_dyn_f32, seq_prim_dyn_f32, seq_symops_dyn_f32): the
    // pinned exporter writes x.numel() on a dynamic tensor as products of
    // aten::sym_size.int (docs/programs.md).
    "aten::sym_numel.default",
];

/// Operator names every plan of `bytes` calls.
fn called(bytes: &[u8]) -> Vec<String> {
    let file = PteFile::new_checked(bytes).unwrap();
    let mut out = Vec::new();
    for plan in file.program().execution_plan().unwrap().iter() {
        let plan = plan.unwrap();
        let ops = plan.operators().unwrap();
        for chain in plan.chains().unwrap().iter() {
            for instr in chain.unwrap().instructions().unwrap().iter() {
                if let InstructionArgs::KernelCall { op_index, .. } = instr.unwrap().args().unwrap()
                {
                    let op = ops.get(op_index as usize).unwrap();
                    let (name, overload) = (op.name().unwrap(), op.overload().unwrap());
                    out.push(if overload.is_empty() {
                        name.to_string()
                    } else {
                        format!("{name}.{overload}")
                    });
                }
            }
        }
    }
    out
}

#[test]
fn every_kernel_is_called_by_a_small_smoke_seed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Kernel name -> (smallest seed size, its name).
    let mut smallest: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut seeds = 0;
    for dir in [
        "tests/ops",
        "tests/zoo",
        "tests/fixtures",
        "tests/custom",
        "tests/programs",
    ] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "pte") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            seeds += 1;
            for op in called(&bytes) {
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                let e = smallest.entry(op).or_insert((usize::MAX, String::new()));
                if bytes.len() < e.0 {
                    *e = (bytes.len(), name);
                }
            }
        }
    }
    assert!(seeds >= 300, "{seeds} seeds");
    let mut missing = Vec::new();
    if std::env::var_os("ETCH_SEED_REPORT").is_some() {
        for k in etch_kernels::KERNELS {
            if let Some((len, seed)) = smallest.get(k.name) {
                eprintln!("{len:>8} {seed:<40} {}", k.name);
            }
        }
    }
    for k in etch_kernels::KERNELS {
        let known = NO_FIXTURE.contains(&k.name);
        match smallest.get(k.name) {
            Some((len, seed)) if known => missing.push(format!(
                "{}: in NO_FIXTURE but {seed} ({len} B) calls it",
                k.name
            )),
            None if known => {}
            Some((len, _)) if *len <= SMALL => {}
            Some((len, seed)) => {
                missing.push(format!("{}: smallest seed {seed} ({len} B)", k.name))
            }
            None => missing.push(format!("{}: no seed", k.name)),
        }
    }
    assert!(
        missing.is_empty(),
        "{} kernels:\n{}",
        missing.len(),
        missing.join("\n")
    );
}
