//! `etch run FILE.pte [--method M] --steps DIR [--outputs OUT] [--ulp N]
//! [--int-diff N] [--trace TDIR] [--json]`: a sequence of executions of ONE
//! loaded method, as a stream runs on a device. DIR holds `<k>.input<i>.npy`
//! for steps k = 0, 1, 2, ... (until the first k without `<k>.input0.npy`;
//! a method without inputs needs `<k>.output0.npy`), and optionally
//! `<k>.output<j>.npy` references. The method is loaded once; state (its
//! mutable buffers) carries from one step to the next. Each step's outputs
//! are written into OUT as `<k>.output<j>.npy` when given and compared with
//! the references present (exit 1 on a mismatch); `--trace` writes one
//! folder per step (`TDIR/<k>/`).

use std::path::Path;

use serde_json::{json, Map, Value};

use crate::host::{self, Aligned, MethodMemory};
use crate::run::{self, Args, Bound};
use crate::trace::{self, Tracer};

/// One step's files: its inputs (one per input) and the references present
/// (output j for j = 0.. while they exist).
type Step = (Vec<String>, Vec<String>);

/// The steps in `dir`, in order.
fn steps(dir: &str, n_inputs: usize) -> Result<Vec<Step>, String> {
    let file = |k: usize, what: &str, i: usize| Path::new(dir).join(format!("{k}.{what}{i}.npy"));
    if !Path::new(dir).is_dir() {
        return Err(format!("{dir}: not a directory"));
    }
    let mut out = Vec::new();
    for k in 0.. {
        let first = if n_inputs > 0 {
            file(k, "input", 0)
        } else {
            file(k, "output", 0)
        };
        if !first.exists() {
            break;
        }
        let mut inputs = Vec::new();
        for i in 0..n_inputs {
            let p = file(k, "input", i);
            if !p.exists() {
                return Err(format!("{}: missing (step {k} has input0)", p.display()));
            }
            inputs.push(p.display().to_string());
        }
        let mut refs = Vec::new();
        for j in 0.. {
            let p = file(k, "output", j);
            if !p.exists() {
                break;
            }
            refs.push(p.display().to_string());
        }
        out.push((inputs, refs));
    }
    if out.is_empty() {
        return Err(format!("{dir}: no steps (expected 0.input0.npy)"));
    }
    Ok(out)
}

pub fn main(a: Args) -> Result<(), String> {
    let json = a.json;
    let say = |line: String| {
        if !json {
            outln!("{line}");
        }
    };
    let mut report = Map::new();
    report.insert("program".into(), json!(a.path));
    report.insert("method".into(), json!(a.method));
    let result = run_steps(&a, &say, &mut report);
    if json {
        if let Err(e) = &result {
            report.insert("error".into(), json!(e));
        }
        outln!(
            "{}",
            serde_json::to_string_pretty(&Value::Object(report)).unwrap_or_default()
        );
    }
    result
}

fn run_steps(
    a: &Args,
    say: &dyn Fn(String),
    report: &mut Map<String, Value>,
) -> Result<(), String> {
    let dir = a.steps.as_deref().unwrap_or_default();
    let bound = Bound {
        ulp: a.ulp,
        int_diff: a.int_diff,
    };
    let bytes = Aligned::from_bytes(&crate::read_file(&a.path)?);
    let program = host::load_program(&a.path, &bytes)?;
    // Inputs and references may be no larger than what the program holds.
    let cap = crate::npy::Cap::of_program(bytes.bytes(), &a.method)?;
    let err = |e| crate::describe(&a.path, e);
    let meta = program.method_meta(&a.method).map_err(err)?;
    let mut mem = MethodMemory::for_meta(&meta).map_err(err)?;
    let mut planned: Vec<&mut [u8]> = mem.planned.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut method = host::load_method(&meta, &mut mem.state, &mut planned)?;
    let n_inputs = method.num_inputs().map_err(err)?;
    let list = steps(dir, n_inputs)?;
    if let Some(out) = &a.outputs_dir {
        std::fs::create_dir_all(out).map_err(|e| format!("{out}: {e}"))?;
    }
    report.insert("steps_dir".into(), json!(dir));
    let mut entries = Vec::new();
    let mut mismatch = false;
    for (k, (inputs, refs)) in list.iter().enumerate() {
        for (i, path) in inputs.iter().enumerate() {
            let bytes = run::input_bytes(&mut method, i, path, cap.array, &err)?;
            method.set_input_bytes(i, &bytes).map_err(err)?;
        }
        let mut entry = json!({"step": k, "inputs": inputs});
        if let Some(tdir) = &a.trace {
            let mut tracer = Tracer::new(&meta).map_err(err)?;
            method
                .execute_observed(&mut tracer)
                .map_err(|e| format!("step {k}: {}", err(e)))?;
            if let Some(e) = tracer.error {
                return Err(e);
            }
            let step_dir = Path::new(tdir).join(k.to_string()).display().to_string();
            let files = trace::write(&step_dir, &tracer.entries)?;
            say(format!(
                "step {k}: trace: {files} tensors of {} instructions written to {step_dir}",
                tracer.entries.len()
            ));
            entry["trace"] = json!({"dir": step_dir, "tensors": files});
        } else {
            method
                .execute()
                .map_err(|e| format!("step {k}: {}", err(e)))?;
        }
        let n_outputs = method.num_outputs().map_err(err)?;
        let written: Vec<String> = match &a.outputs_dir {
            Some(out) => (0..n_outputs)
                .map(|j| {
                    Path::new(out)
                        .join(format!("{k}.output{j}.npy"))
                        .display()
                        .to_string()
                })
                .collect(),
            None => Vec::new(),
        };
        let step_say = |line: String| say(format!("step {k}: {line}"));
        let (outputs, bad) =
            run::outputs_report(&method, &written, refs, bound, cap.array, &step_say, &err)?;
        mismatch |= bad;
        entry["outputs"] = Value::Array(outputs);
        entry["ok"] = json!(!bad);
        entries.push(entry);
    }
    say(format!(
        "{} steps of '{}' on one loaded method: {}",
        list.len(),
        a.method,
        if mismatch {
            "outputs differ from the references"
        } else {
            "every reference matched"
        }
    ));
    report.insert("steps".into(), Value::Array(entries));
    if mismatch {
        return Err("outputs differ from the reference".into());
    }
    Ok(())
}
