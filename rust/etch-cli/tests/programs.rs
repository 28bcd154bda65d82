//! The program-features zoo (tests/programs): every
//! `tests/programs/<name>.pte` runs each of its methods' step sequences
//! (`<name>.<method>.steps/`) through `etch run --steps`, ONE loaded method
//! executing the steps in order, against ExecuTorch's references, held to
//! the rule in `<name>.json`: "exact", or `{"ulp": N}` / `{"int_diff": N}`
//! with the reason in `why`.
//!
//! Programs etch cannot run yet are listed in `PENDING` with what they wait
//! for. The test fails when a program outside `PENDING` fails and when a
//! `PENDING` program passes (take it off the list). It prints the table
//! either way (`cargo test -p etch-cli --test programs -- --nocapture`).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;

/// Programs etch cannot run yet, and what they wait for.
const PENDING: &[(&str, &str)] = &[];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/programs")
}

/// The programs: every `.pte` in the folder, by name.
fn names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "pte").then(|| p.file_stem()?.to_str().map(String::from))?
        })
        .collect();
    names.sort();
    names
}

/// The methods with a steps folder: `<name>.<method>.steps`.
fn methods(name: &str) -> Vec<String> {
    let mut methods: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let f = e.unwrap().file_name().into_string().ok()?;
            let m = f
                .strip_prefix(&format!("{name}."))?
                .strip_suffix(".steps")?;
            Some(m.to_string())
        })
        .collect();
    methods.sort();
    methods
}

/// Runs every method's steps of `name` by its rule: whether all passed, and
/// a table cell.
fn run(name: &str, entry: &Value) -> (bool, String) {
    let pte = dir().join(format!("{name}.pte")).display().to_string();
    let mut cells = Vec::new();
    let mut all = true;
    let methods = methods(name);
    assert!(
        !methods.is_empty(),
        "{name}: no <name>.<method>.steps folder"
    );
    for m in &methods {
        let steps = dir()
            .join(format!("{name}.{m}.steps"))
            .display()
            .to_string();
        let mut args = vec![
            "run".to_string(),
            pte.clone(),
            "--method".into(),
            m.clone(),
            "--steps".into(),
            steps,
            "--json".into(),
        ];
        args.extend(support::rule_flags(name, entry));
        let (ok, stdout, _stderr) = support::etch(&args);
        all &= ok;
        let report: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        let n = report["steps"].as_array().map_or(0, |s| s.len());
        let cell = if ok {
            // The largest distance over every step's outputs.
            let worst = report["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|s| s["outputs"].as_array().cloned().unwrap_or_default())
                .filter_map(|o| o["compare"]["max_distance"].as_u64())
                .max()
                .unwrap_or(0);
            // Every step of a passing run compared at least one output.
            let compared = report["steps"].as_array().is_some_and(|steps| {
                steps.iter().all(|s| {
                    s["outputs"]
                        .as_array()
                        .is_some_and(|o| o.iter().any(|o| o["compare"]["ok"] == true))
                })
            });
            assert!(compared, "{name}.{m}: a step without a reference output");
            if worst == 0 {
                format!("{m}: exact ({n} steps)")
            } else {
                format!("{m}: within {worst} ({n} steps)")
            }
        } else {
            let e = report["error"].as_str().unwrap_or("?");
            format!("{m}: FAILED {}", e.rsplit(".pte: ").next().unwrap_or(e))
        };
        cells.push(cell);
    }
    (all, cells.join("; "))
}

#[test]
fn every_program_runs_its_steps_on_one_loaded_method() {
    let names = names();
    assert!(
        names.len() >= 10,
        "tests/programs has {} programs",
        names.len()
    );
    let mut failures = Vec::new();
    let mut table = Vec::new();
    for name in &names {
        let json = dir().join(format!("{name}.json"));
        let entry: Value = serde_json::from_str(
            &std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{}: {e}", json.display())),
        )
        .unwrap();
        let (ok, cell) = run(name, &entry);
        let pending = PENDING.iter().find(|(n, _)| n == name);
        table.push(format!(
            "{name:<24} {:<6} {:<9} {cell}{}",
            entry["dtype"].as_str().unwrap_or("?"),
            entry["path"].as_str().unwrap_or("?"),
            pending.map_or(String::new(), |(_, why)| format!(" [pending: {why}]"))
        ));
        match (ok, pending) {
            (false, None) => failures.push(format!("{name}: {cell}")),
            (true, Some(_)) => failures.push(format!("{name} passes: take it off PENDING")),
            _ => {}
        }
    }
    println!("{}", table.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A program's state is carried from one execution to the next and
/// nowhere else: the running sum's step 1 run on a freshly loaded method
/// (state = the program's initial value) differs from the reference of step
/// 1, which ran after step 0.
#[test]
fn state_carries_over_between_steps() {
    let tmp = std::env::temp_dir().join(format!("etch-programs-{}", std::process::id()));
    let steps = tmp.join("steps");
    std::fs::create_dir_all(&steps).unwrap();
    let src = dir().join("running_sum_f32.forward.steps");
    std::fs::copy(src.join("1.input0.npy"), steps.join("0.input0.npy")).unwrap();
    std::fs::copy(src.join("1.output0.npy"), steps.join("0.output0.npy")).unwrap();
    let pte = dir().join("running_sum_f32.pte");
    let (ok, stdout, _) = support::etch(&[
        "run".as_ref(),
        pte.as_os_str(),
        "--steps".as_ref(),
        steps.as_os_str(),
    ]);
    assert!(
        !ok,
        "step 1 alone matched the reference made after step 0:\n{stdout}"
    );
    assert!(stdout.contains("elements differ"), "{stdout}");
    // The whole sequence, with its outputs written: every reference matches
    // and the written outputs are the references, byte for byte.
    let out = tmp.join("out");
    let (ok, stdout, stderr) = support::etch(&[
        "run".as_ref(),
        pte.as_os_str(),
        "--steps".as_ref(),
        src.as_os_str(),
        "--outputs".as_ref(),
        out.as_os_str(),
    ]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("4 steps of 'forward' on one loaded method: every reference matched"));
    for k in 0..4 {
        // The data: the last 1 x 8 f32 of each file (the headers' padding
        // may differ).
        let f = format!("{k}.output0.npy");
        let (a, b) = (
            std::fs::read(out.join(&f)).unwrap(),
            std::fs::read(src.join(&f)).unwrap(),
        );
        assert_eq!(a[a.len() - 32..], b[b.len() - 32..], "{f}");
    }
    std::fs::remove_dir_all(&tmp).unwrap();
}

/// `--steps` with `--trace DIR` writes one folder per step.
#[test]
fn steps_trace_writes_one_folder_per_step() {
    let tmp = std::env::temp_dir().join(format!("etch-programs-trace-{}", std::process::id()));
    let pte = dir().join("running_sum_f32.pte");
    let src = dir().join("running_sum_f32.forward.steps");
    let (ok, stdout, stderr) = support::etch(&[
        "run".as_ref(),
        pte.as_os_str(),
        "--steps".as_ref(),
        src.as_os_str(),
        "--trace".as_ref(),
        tmp.as_os_str(),
    ]);
    assert!(ok, "{stdout}{stderr}");
    for k in 0..4 {
        let step = tmp.join(k.to_string());
        let mut files: Vec<String> = std::fs::read_dir(&step)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        // add, mul, copy_: one output each.
        assert_eq!(files.len(), 3, "step {k}: {files:?}");
        assert!(files.iter().any(|f| f.contains("aten.copy_")), "{files:?}");
    }
    assert!(!tmp.join("4").exists());
    std::fs::remove_dir_all(&tmp).unwrap();
}
