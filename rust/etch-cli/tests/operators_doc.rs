//! What tools/gen-ops.py writes is fresh: docs/operators.md is what `etch
//! ops --markdown` generates from the kernels, the fixture programs and
//! tools/export/portable_ops.txt, and the operator features of etch-kernels'
//! and etch-ffi's Cargo.toml are the ones the `KERNELS` lists declare.
//! Adding a kernel or a fixture program without regenerating fails here.

use std::path::Path;
use std::process::Command;

#[test]
fn operators_md_is_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(["ops", "--markdown", "--root"])
        .arg(&root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = String::from_utf8(out.stdout).unwrap();
    let committed = std::fs::read_to_string(root.join("docs/operators.md")).unwrap_or_default();
    if generated != committed {
        let first = generated
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(generated.lines().count().min(committed.lines().count()));
        panic!(
            "docs/operators.md is stale (first difference at line {}): regenerate it with\n  \
             tools/gen-ops.py",
            first + 1
        );
    }
}

#[test]
fn operator_features_are_fresh() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new("python3")
        .arg(root.join("tools/gen-ops.py"))
        .arg("--check")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
