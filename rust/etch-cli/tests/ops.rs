//! Every single-operator program in `tests/ops/` (exported by
//! `tools/export/ops.py` with ExecuTorch's own runtime as the reference) runs
//! through `etch run --compare`, held to the rule `ops.json` gives it:
//! bit-exact, or within a stated ulp / integer bound whose reason is recorded
//! beside it.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;

fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops")
}

/// `etch run` arguments for one program: inputs, references, bound.
fn run_args(dir: &Path, name: &str, entry: &Value) -> Vec<String> {
    let n = |key: &str| {
        entry[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{name}: {key}"))
    };
    let mut args = vec![
        "run".into(),
        dir.join(format!("{name}.pte")).display().to_string(),
    ];
    for i in 0..n("inputs") {
        args.push("--input".into());
        args.push(
            dir.join(format!("{name}.input{i}.npy"))
                .display()
                .to_string(),
        );
    }
    for i in 0..n("outputs") {
        args.push("--compare".into());
        args.push(
            dir.join(format!("{name}.output{i}.npy"))
                .display()
                .to_string(),
        );
    }
    args.extend(support::rule_flags(name, entry));
    args
}

#[test]
fn every_single_operator_program_matches_executorch() {
    let dir = ops_dir();
    let manifest: Value = match std::fs::read_to_string(dir.join("ops.json")) {
        Ok(text) => serde_json::from_str(&text).unwrap(),
        Err(_) => return, // no single-operator programs committed yet
    };
    let entries = manifest.as_object().unwrap();
    // Every committed program is in the manifest, and the other way round.
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pte"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut names: Vec<String> = entries.keys().cloned().collect();
    names.sort();
    assert_eq!(
        files, names,
        "tests/ops/*.pte and ops.json list different programs"
    );

    let mut failed = Vec::new();
    for (name, entry) in entries {
        let (ok, stdout, stderr) = support::etch(&run_args(&dir, name, entry));
        let text = stdout + &stderr;
        println!(
            "{name} ({}): {}",
            entry["rule"],
            text.trim().replace('\n', "; ")
        );
        if !ok {
            failed.push(name.clone());
        }
    }
    assert!(failed.is_empty(), "not matching ExecuTorch: {failed:?}");
}
