//! docs/operators.md is what `etch ops --markdown` generates from the
//! kernels, the fixture programs and tools/export/portable_ops.txt: adding a
//! kernel or a fixture program without regenerating it fails here.

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
             cargo run -p etch-cli -- ops --markdown > docs/operators.md",
            first + 1
        );
    }
}
