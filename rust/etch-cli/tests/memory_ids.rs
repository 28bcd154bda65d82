//! Programs whose planned memory is split over several memory ids
//! (tests/memory, tools/export/memory_ids.py: ExecuTorch 1.5.1's
//! MemoryPlanningPass with a `memory_planning_algo` that gives each tensor
//! an id by its role). Each runs its step sequence on ONE loaded method,
//! one planned buffer per memory id, bit-exact against ExecuTorch's own
//! runtime; the memory plan is the one the exporter recorded: the sizes
//! per id, the graph's inputs and outputs in the "io" id, the mutable
//! state in the "state" id, everything else in id 1.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/memory")
}

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

fn entry(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{name}.json"))).unwrap())
        .unwrap()
}

#[test]
fn every_program_runs_bit_exact_with_one_buffer_per_memory_id() {
    let names = names();
    assert_eq!(names, ["lstm_placed_f32", "mlp_placed_f32"]);
    for name in &names {
        let pte = dir().join(format!("{name}.pte")).display().to_string();
        let steps = dir()
            .join(format!("{name}.forward.steps"))
            .display()
            .to_string();
        let (ok, stdout, stderr) = support::etch(&["run", &pte, "--steps", &steps, "--json"]);
        assert!(ok, "{name}: {stdout}{stderr}");
        let report: Value = serde_json::from_str(&stdout).unwrap();
        let steps = report["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 4, "{name}");
        for s in steps {
            let outputs = s["outputs"].as_array().unwrap();
            assert!(!outputs.is_empty(), "{name}");
            for o in outputs {
                assert_eq!(o["compare"]["ok"], true, "{name}: {o}");
                assert_eq!(o["compare"]["max_distance"], 0, "{name}: {o}");
            }
        }
    }
}

#[test]
fn memory_plan_is_the_exporters() {
    for name in names() {
        let e = entry(&name);
        let (ok, stdout, stderr) = support::etch(&[
            "inspect",
            &dir().join(format!("{name}.pte")).display().to_string(),
            "--json",
        ]);
        assert!(ok, "{name}: {stderr}");
        let facts: Value = serde_json::from_str(&stdout).unwrap();
        let m = &facts["methods"][0];
        // One planned buffer per memory id, sized as ExecuTorch planned them.
        assert_eq!(
            m["planned_buffers"], e["methods"][0]["planned_buffers"],
            "{name}"
        );
        let ids = &e["memory_ids"];
        let n = ids.as_object().unwrap().len();
        assert!(n >= 2, "{name}");
        assert_eq!(m["planned_buffers"].as_array().unwrap().len(), n, "{name}");
        for t in m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .chain(m["outputs"].as_array().unwrap())
        {
            assert_eq!(t["memory_id"], ids["io"], "{name}: {t}");
        }
        let state = m["mutable_buffers"].as_array().unwrap();
        assert_eq!(
            state.len(),
            e["buffers"].as_array().unwrap().len(),
            "{name}"
        );
        for t in state {
            assert_eq!(t["memory_id"], ids["state"], "{name}: {t}");
        }
        // Every other planned tensor is an activation, in id 1.
        let io_or_state: Vec<&Value> = m["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .chain(m["outputs"].as_array().unwrap())
            .chain(state)
            .map(|t| &t["value"])
            .collect();
        let mut activations = 0;
        for t in m["planned_tensors"].as_array().unwrap() {
            if !io_or_state.contains(&&t["value"]) {
                assert_eq!(t["memory_id"], ids["activations"], "{name}: {t}");
                activations += 1;
            }
        }
        assert!(activations >= 3, "{name}: {activations} activations");
    }
}

/// The state lives in its own memory id (3) and carries over from one
/// execution to the next: step 1 run first, on a freshly loaded method
/// (h and c at their initial values), does not give step 1's reference,
/// which ExecuTorch computed after step 0.
#[test]
fn state_in_its_own_memory_id_carries_over() {
    let name = "lstm_placed_f32";
    assert_eq!(entry(name)["memory_ids"]["state"], 3);
    let src = dir().join(format!("{name}.forward.steps"));
    let tmp = std::env::temp_dir().join(format!("etch-memory-ids-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(src.join("1.input0.npy"), tmp.join("0.input0.npy")).unwrap();
    std::fs::copy(src.join("1.output0.npy"), tmp.join("0.output0.npy")).unwrap();
    let pte = dir().join(format!("{name}.pte")).display().to_string();
    let (ok, stdout, _) =
        support::etch(&["run", &pte, "--steps", &tmp.display().to_string(), "--json"]);
    std::fs::remove_dir_all(&tmp).unwrap();
    assert!(!ok, "step 1 without step 0 matched: {stdout}");
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        report["steps"][0]["outputs"][0]["compare"]["ok"], false,
        "{stdout}"
    );
}
