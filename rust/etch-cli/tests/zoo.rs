//! The model zoo (tests/zoo, exported by tools/export/zoo.py): every program
//! of zoo.json runs through `etch run --compare` on its input0 against
//! ExecuTorch's reference output0, held to the program's rule: "exact", or
//! `{"ulp": N}` / `{"int_diff": N}` with the reason in `why`.
//!
//! Programs etch cannot run yet are listed in `PENDING`. The test fails when
//! a program outside `PENDING` fails, and when a `PENDING` program passes (take
//! it off the list). It prints the model × path table either way
//! (`cargo test -p etch-cli --test zoo -- --nocapture`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;

/// Programs etch cannot run yet, with what they wait for (missing operators,
/// or what fails). Keep it current: the test fails when one of these passes.
const PENDING: &[&str] = &[];

fn zoo_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/zoo")
}

/// Runs one program by its rule: whether it passed, and a table cell
/// (exact, the measured bound, the missing operators, or the error).
fn run(name: &str, entry: &Value) -> (bool, String) {
    let file = |suffix: &str| {
        zoo_dir()
            .join(format!("{name}.{suffix}"))
            .display()
            .to_string()
    };
    let mut args = vec![
        "run".to_string(),
        file("pte"),
        "--input".into(),
        file("input0.npy"),
        "--compare".into(),
        file("output0.npy"),
    ];
    args.extend(support::rule_flags(name, entry));
    let (ok, stdout, stderr) = support::etch(&args);
    // "... at most N ulp ..." / "... at most N steps ..."
    let bound = || {
        stdout
            .split("at most ")
            .nth(1)
            .and_then(|r| r.split([',', '(']).next())
            .map_or(String::new(), |b| b.trim().to_string())
    };
    let cell = if ok && stdout.contains("bit-exact") {
        "exact".to_string()
    } else if ok {
        bound()
    } else if let Some(ops) = stderr.split("missing: ").nth(1) {
        format!("missing({})", ops.trim())
    } else if stdout.contains("differ") {
        format!("differs by {}", bound())
    } else {
        let last = stderr.trim().lines().last().unwrap_or("").to_string();
        format!("error({})", last.rsplit(".pte: ").next().unwrap_or(&last))
    };
    (ok, cell)
}

#[test]
fn every_zoo_program_matches_executorch_by_its_rule() {
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(zoo_dir().join("zoo.json")).unwrap())
            .unwrap();
    let programs = index["programs"].as_array().unwrap();
    assert!(
        programs.len() >= 45,
        "the zoo has {} programs",
        programs.len()
    );
    let names: Vec<&str> = programs
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for p in PENDING {
        assert!(names.contains(p), "PENDING names {p}, which zoo.json lacks");
    }

    // model (in zoo.json order) -> path -> cell
    let mut table: BTreeMap<(usize, &str), BTreeMap<&str, String>> = BTreeMap::new();
    let mut paths: Vec<&str> = Vec::new();
    let mut unexpected = Vec::new();
    for (i, p) in programs.iter().enumerate() {
        let (name, model, path) = (
            p["name"].as_str().unwrap(),
            p["model"].as_str().unwrap(),
            p["path"].as_str().unwrap(),
        );
        let (passes, mut cell) = run(name, p);
        let pending = PENDING.contains(&name);
        if pending && passes {
            unexpected.push(format!("{name} passes ({cell}): take it off PENDING"));
        } else if !pending && !passes {
            unexpected.push(format!("{name}: {cell}, rule {}", p["rule"]));
            cell = format!("FAIL {cell}");
        } else if pending {
            cell = format!("pending: {cell}");
        }
        if !paths.contains(&path) {
            paths.push(path);
        }
        let row = table.keys().find(|(_, m)| *m == model).map_or(i, |k| k.0);
        table.entry((row, model)).or_default().insert(path, cell);
    }

    println!("| model | {} |", paths.join(" | "));
    println!("|---|{}", "---|".repeat(paths.len()));
    for ((_, model), cells) in &table {
        let row: Vec<&str> = paths
            .iter()
            .map(|p| cells.get(p).map_or("(not exported)", String::as_str))
            .collect();
        println!("| {model} | {} |", row.join(" | "));
    }
    assert!(
        unexpected.is_empty(),
        "{} unexpected:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}
