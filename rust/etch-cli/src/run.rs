//! `etch run FILE.pte [--method NAME] --input in.npy... [--output out.npy...]
//! [--compare ref.npy... [--ulp N | --int-diff N]] [--repeat N]`
//!
//! `--compare` demands bit-exact outputs unless a bound is given: `--ulp N`
//! lets float outputs differ by at most N units in the last place (NaN only
//! where the reference has NaN), `--int-diff N` lets integer outputs differ
//! by at most N.

use std::time::Instant;

use etch_pte::ScalarType;
use etch_runtime::Output;
use serde_json::{json, Map, Value};

use crate::etdump;
use crate::host::{self, Aligned, MethodMemory};
use crate::npy::{self, Npy};
use crate::trace::{self, Tracer};

/// Runs a method on .npy inputs; compares, traces, profiles.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The program (.pte).
    pub(crate) path: String,
    /// Method to run.
    #[arg(long, default_value = "forward")]
    pub(crate) method: String,
    /// Input i as .npy (logical order, the input's dtype); once per input.
    #[arg(long = "input", value_name = "IN.npy")]
    inputs: Vec<String>,
    /// Write output i as .npy; once per output.
    #[arg(long = "output", value_name = "OUT.npy")]
    outputs: Vec<String>,
    /// Compare output i with a reference .npy; exit 1 unless bit-exact (or within the bound).
    #[arg(long = "compare", value_name = "REF.npy")]
    compare: Vec<String>,
    /// Let float outputs differ by at most N units in the last place.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub(crate) ulp: u64,
    /// Let integer outputs differ by at most N.
    #[arg(long = "int-diff", value_name = "N", default_value_t = 0)]
    pub(crate) int_diff: u64,
    /// Run N times (inputs set before every run) and print the time per inference.
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: usize,
    /// Write every instruction's output tensors as .npy into DIR (created when missing).
    #[arg(long, value_name = "DIR")]
    pub(crate) trace: Option<String>,
    /// Report the first instruction whose output differs from REF (.npz of graph-node outputs or a --trace DIR).
    #[arg(long = "trace-compare", value_name = "REF")]
    trace_compare: Option<String>,
    /// Record ExecuTorch's ETDump (profiling events, ns) of every run into OUT.etdp.
    #[arg(long, value_name = "OUT.etdp")]
    etdump: Option<String>,
    /// With --etdump: every instruction's output tensor into this debug buffer.
    #[arg(long = "etdump-debug", value_name = "OUT.bin", requires = "etdump")]
    etdump_debug: Option<String>,
    /// Print etch's per-instruction profile (mean of the runs).
    #[arg(long)]
    profile: bool,
    /// Print one JSON object (outputs, comparisons, timings, files) instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Run a sequence on ONE loaded method: DIR holds <k>.input<i>.npy for steps k = 0, 1, ...
    /// (and optionally <k>.output<j>.npy references, compared as --compare does).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["inputs", "compare", "outputs", "trace_compare", "etdump", "profile", "repeat"])]
    pub(crate) steps: Option<String>,
    /// With --steps: write each step's outputs as <k>.output<j>.npy into OUT (created when missing).
    #[arg(long = "outputs", value_name = "OUT", requires = "steps")]
    pub(crate) outputs_dir: Option<String>,
}

/// How far an output may be from its reference under `--compare`.
#[derive(Clone, Copy, Default)]
pub struct Bound {
    pub ulp: u64,
    pub int_diff: u64,
}

/// Distance of two floats in units in the last place (the number of
/// representable values between them); 0 for equal values and for NaN vs NaN,
/// `u64::MAX` for NaN vs a number. `key` maps a value's sign-magnitude bit
/// pattern onto one monotonic integer line (so -0.0 and +0.0 meet at 0).
fn ulp_distance(x: f64, y: f64, key: fn(f64) -> i64) -> u64 {
    if x.is_nan() || y.is_nan() {
        return if x.is_nan() && y.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    key(x).abs_diff(key(y))
}

fn f32_key(v: f64) -> i64 {
    let b = (v as f32).to_bits() as i32 as i64;
    if b < 0 {
        i32::MIN as i64 - b
    } else {
        b
    }
}

fn f64_key(v: f64) -> i64 {
    let b = v.to_bits() as i64;
    if b < 0 {
        i64::MIN - b
    } else {
        b
    }
}

/// Largest distance of `a` from `b` in the unit the bound uses (ulp for
/// floats, absolute difference for integers), and whether `bound` holds.
pub fn within(a: &Npy, b: &Npy, bound: Bound) -> (u64, bool) {
    let elem = a.dtype.element_size().unwrap_or(1);
    let mut worst = 0u64;
    for (x, y) in a.data.chunks(elem).zip(b.data.chunks(elem)) {
        let d = match a.dtype {
            ScalarType::FLOAT => {
                let f = |b: &[u8]| f32::from_le_bytes(b.try_into().unwrap()) as f64;
                ulp_distance(f(x), f(y), f32_key)
            }
            ScalarType::DOUBLE => {
                let f = |b: &[u8]| f64::from_le_bytes(b.try_into().unwrap());
                ulp_distance(f(x), f(y), f64_key)
            }
            _ => {
                let (p, q) = (int_value(a.dtype, x), int_value(a.dtype, y));
                p.abs_diff(q)
            }
        };
        worst = worst.max(d);
    }
    let limit = match a.dtype {
        ScalarType::FLOAT | ScalarType::DOUBLE => bound.ulp,
        _ => bound.int_diff,
    };
    (worst, worst <= limit)
}

fn int_value(dtype: ScalarType, b: &[u8]) -> i64 {
    match dtype {
        ScalarType::CHAR => b[0] as i8 as i64,
        ScalarType::SHORT => i16::from_le_bytes(b.try_into().unwrap()) as i64,
        ScalarType::INT => i32::from_le_bytes(b.try_into().unwrap()) as i64,
        ScalarType::LONG => i64::from_le_bytes(b.try_into().unwrap()),
        _ => b[0] as i64,
    }
}

/// Largest absolute difference and number of differing elements.
pub fn diff(a: &Npy, b: &Npy) -> (f64, usize) {
    let elem = a.dtype.element_size().unwrap_or(1);
    let value = |bytes: &[u8]| -> f64 {
        match a.dtype {
            ScalarType::FLOAT => f32::from_le_bytes(bytes.try_into().unwrap()) as f64,
            ScalarType::DOUBLE => f64::from_le_bytes(bytes.try_into().unwrap()),
            ScalarType::CHAR => bytes[0] as i8 as f64,
            ScalarType::BYTE | ScalarType::BOOL => bytes[0] as f64,
            ScalarType::SHORT => i16::from_le_bytes(bytes.try_into().unwrap()) as f64,
            ScalarType::INT => i32::from_le_bytes(bytes.try_into().unwrap()) as f64,
            ScalarType::LONG => i64::from_le_bytes(bytes.try_into().unwrap()) as f64,
            _ => 0.0,
        }
    };
    let mut max = 0.0f64;
    let mut differ = 0;
    for (x, y) in a.data.chunks(elem).zip(b.data.chunks(elem)) {
        if x != y {
            differ += 1;
            let d = (value(x) - value(y)).abs();
            max = if d.is_nan() {
                f64::INFINITY
            } else {
                max.max(d)
            };
        }
    }
    (max, differ)
}

pub fn main(a: Args) -> Result<(), String> {
    if a.steps.is_some() {
        return crate::steps::main(a);
    }
    let json = a.json;
    // Text lines go to stdout unless --json; the JSON report collects the
    // same facts and is printed at the end (also when outputs differ).
    let say = |line: String| {
        if !json {
            outln!("{line}");
        }
    };
    let mut report = Map::new();
    report.insert("program".into(), json!(a.path));
    report.insert("method".into(), json!(a.method));
    let result = run(&a, &say, &mut report);
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

/// Input `i` of `method` read from the `.npy` at `path` (at most `cap`
/// bytes), checked against the method's input and laid out in its dim
/// order: the bytes `set_input_bytes` takes. One place for `run` and
/// `run --steps`. A bounded dynamic input (`DYNAMIC_BOUND`) takes smaller
/// sizes of its rank: the method's input is resized to them first, as
/// ExecuTorch's `set_input` does; a static one only its own sizes.
pub fn input_bytes(
    method: &mut etch_runtime::Method<'_, '_>,
    i: usize,
    path: &str,
    cap: usize,
    err: &dyn Fn(etch_runtime::Error) -> String,
) -> Result<Vec<u8>, String> {
    let info = method.input_meta(i).map_err(err)?;
    let input = npy::read(path, cap)?;
    if input.dtype != info.dtype {
        return Err(format!(
            "{path}: dtype {} but input {i} is {}",
            input.dtype.name(),
            info.dtype.name()
        ));
    }
    let sizes: Vec<usize> = info.shape.sizes().iter().map(|s| s as usize).collect();
    let actual: Vec<u32> = input.shape.iter().map(|&s| s as u32).collect();
    if input.shape.len() > 16 || input.shape.iter().any(|&s| s > i32::MAX as usize) {
        return Err(format!(
            "{path}: shape {:?} but input {i} is {sizes:?}",
            input.shape
        ));
    }
    // Resized every time: an earlier step may have set other sizes.
    method
        .resize_input(i, etch_runtime::Sizes::new(&actual))
        .map_err(|e| {
            format!(
                "{path}: shape {:?} but input {i} is {}{sizes:?}: {}",
                input.shape,
                if info.is_dynamic { "at most " } else { "" },
                err(e)
            )
        })?;
    let shape = etch_runtime::Shape::new(&actual, info.shape.dim_order()).map_err(err)?;
    let elem = info.dtype.element_size().unwrap_or(1);
    Ok(host::to_physical(&input.data, &shape, elem))
}

fn run(a: &Args, say: &dyn Fn(String), report: &mut Map<String, Value>) -> Result<(), String> {
    let bound = Bound {
        ulp: a.ulp,
        int_diff: a.int_diff,
    };
    let bytes = Aligned::from_bytes(&crate::read_file(&a.path)?);
    let program = host::load_program(&a.path, &bytes)?;
    let err = |e| crate::describe(&a.path, e);
    let meta = program.method_meta(&a.method).map_err(err)?;
    // What the program can hold bounds every .npy/.npz read below: an
    // array larger than its largest tensor is refused before allocating.
    let cap = npy::Cap::of_program(bytes.bytes(), &a.method)?;
    let mut mem = MethodMemory::for_meta(&meta).map_err(err)?;
    let mut planned: Vec<&mut [u8]> = mem.planned.iter_mut().map(|b| b.bytes_mut()).collect();
    let mut method = host::load_method(&meta, &mut mem.state, &mut planned)?;

    let n_inputs = method.num_inputs().map_err(err)?;
    if a.inputs.len() != n_inputs {
        return Err(format!(
            "method '{}' takes {n_inputs} inputs, {} given",
            a.method,
            a.inputs.len()
        ));
    }
    // The memory plan may reuse an input's bytes for later tensors, so the
    // inputs are set again before every run.
    let mut inputs = Vec::with_capacity(n_inputs);
    for (i, path) in a.inputs.iter().enumerate() {
        inputs.push(input_bytes(&mut method, i, path, cap.array, &err)?);
    }

    let mut trace_mismatch = false;
    if a.trace.is_some() || a.trace_compare.is_some() {
        // One traced run; the timed runs below are not observed.
        let mut tracer = Tracer::new(&meta).map_err(err)?;
        for (i, bytes) in inputs.iter().enumerate() {
            method.set_input_bytes(i, bytes).map_err(err)?;
        }
        method.execute_observed(&mut tracer).map_err(err)?;
        if let Some(e) = tracer.error {
            return Err(e);
        }
        if let Some(dir) = &a.trace {
            let files = trace::write(dir, &tracer.entries)?;
            say(format!(
                "trace: {files} tensors of {} instructions written to {dir}",
                tracer.entries.len()
            ));
            report.insert(
                "trace".into(),
                json!({"dir": dir, "tensors": files, "instructions": tracer.entries.len()}),
            );
        }
        if let Some(reference) = &a.trace_compare {
            let refs = trace::load_reference(reference, cap)?;
            let c = trace::compare(&tracer.entries, &refs, 8);
            let text = trace::report(&c, reference);
            say(text.trim_end_matches('\n').to_string());
            trace_mismatch = !c.differing.is_empty();
            report.insert(
                "trace_compare".into(),
                json!({"reference": reference, "differs": trace_mismatch, "report": text}),
            );
        }
    }

    if a.etdump.is_some() || a.profile {
        let runs = a.repeat.max(1);
        let mut set_inputs = |m: &mut etch_runtime::Method<'_, '_>| -> Result<(), String> {
            for (i, bytes) in inputs.iter().enumerate() {
                m.set_input_bytes(i, bytes).map_err(err)?;
            }
            Ok(())
        };
        let rec = etdump::record(
            &mut method,
            &meta,
            &mut set_inputs,
            runs,
            a.etdump_debug.is_some(),
            &err,
        )?;
        if let Some(path) = &a.etdump {
            std::fs::write(path, &rec.etdump).map_err(|e| format!("{path}: {e}"))?;
            say(format!(
                "etdump: {runs} runs, {} bytes written to {path} (times in ns)",
                rec.etdump.len()
            ));
            let mut e = json!({"path": path, "bytes": rec.etdump.len(), "runs": runs});
            if let Some(debug) = &a.etdump_debug {
                e["debug_path"] = json!(debug);
                e["debug_bytes"] = json!(rec.debug.len());
            }
            report.insert("etdump".into(), e);
        }
        if let Some(path) = &a.etdump_debug {
            std::fs::write(path, &rec.debug).map_err(|e| format!("{path}: {e}"))?;
            say(format!(
                "etdump: {} bytes of intermediate outputs written to {path}",
                rec.debug.len()
            ));
        }
        if a.profile {
            say(format!("profile (us, mean of {runs} runs):"));
            let mut rows = Vec::new();
            for row in &rec.profile {
                let mean = row.ns.iter().sum::<u64>() as f64 / row.ns.len().max(1) as f64;
                say(format!(
                    "  {:>4}  {:<48} {:>10.3}",
                    row.index,
                    row.op,
                    mean / 1e3
                ));
                rows.push(json!({"instruction": row.index, "operator": row.op, "us": mean / 1e3}));
            }
            let total = rec.total_ns.iter().sum::<u64>() as f64 / rec.total_ns.len().max(1) as f64;
            say(format!(
                "  {:>4}  {:<48} {:>10.3}",
                "",
                "Method::execute",
                total / 1e3
            ));
            report.insert(
                "profile".into(),
                json!({"runs": runs, "instructions": rows, "execute_us": total / 1e3}),
            );
        }
    }

    let bar = crate::progress(a.repeat.max(1) as u64, "runs");
    let start = Instant::now();
    for _ in 0..a.repeat.max(1) {
        for (i, bytes) in inputs.iter().enumerate() {
            method.set_input_bytes(i, bytes).map_err(err)?;
        }
        method.execute().map_err(err)?;
        bar.inc(1);
    }
    let elapsed = start.elapsed();
    bar.finish_and_clear();
    let us = elapsed.as_secs_f64() * 1e6 / a.repeat.max(1) as f64;
    if a.repeat > 1 {
        say(format!("{} inferences, {us:.1} us per inference", a.repeat));
    }
    report.insert("runs".into(), json!(a.repeat.max(1)));
    report.insert("us_per_inference".into(), json!(us));
    let (outputs, mismatch) =
        outputs_report(&method, &a.outputs, &a.compare, bound, cap.array, say, &err)?;
    report.insert("outputs".into(), Value::Array(outputs));
    if mismatch {
        return Err("outputs differ from the reference".into());
    }
    if trace_mismatch {
        return Err("the trace differs from the reference".into());
    }
    Ok(())
}

/// Every output of `method` after a run: written to `outputs[i]` when
/// given, compared with `compare[i]` when given (within `bound`), else
/// previewed; one text line each through `say`. Returns the JSON entries
/// and whether a comparison failed. One place for `etch run` and each
/// step of `--steps`.
pub fn outputs_report(
    method: &etch_runtime::Method<'_, '_>,
    outputs_to: &[String],
    compare: &[String],
    bound: Bound,
    max: usize,
    say: &dyn Fn(String),
    err: &dyn Fn(etch_pte::Error) -> String,
) -> Result<(Vec<Value>, bool), String> {
    let mut outputs = Vec::new();
    let mut mismatch = false;
    for i in 0..method.num_outputs().map_err(err)? {
        let out = match method.output(i).map_err(err)? {
            Output::Tensor(t) => {
                let elem = t.dtype.element_size().unwrap_or(1);
                Npy {
                    dtype: t.dtype,
                    shape: t.shape.sizes().iter().map(|s| s as usize).collect(),
                    data: host::to_logical(t.data, &t.shape, elem),
                }
            }
            Output::Int(v) => {
                say(format!("output {i}: Int {v}"));
                outputs.push(json!({"index": i, "kind": "Int", "value": v}));
                continue;
            }
            Output::Double(v) => {
                say(format!("output {i}: Double {v:?}"));
                outputs.push(json!({"index": i, "kind": "Double", "value": v}));
                continue;
            }
            Output::Bool(v) => {
                say(format!("output {i}: Bool {v}"));
                outputs.push(json!({"index": i, "kind": "Bool", "value": v}));
                continue;
            }
            Output::None => {
                say(format!("output {i}: None"));
                outputs.push(json!({"index": i, "kind": "None"}));
                continue;
            }
        };
        let mut entry = json!({
            "index": i,
            "kind": "Tensor",
            "dtype": out.dtype.name(),
            "shape": out.shape,
        });
        if let Some(path) = outputs_to.get(i) {
            npy::write(path, &out)?;
            entry["written_to"] = json!(path);
        }
        if let Some(path) = compare.get(i) {
            let reference = npy::read(path, max)?;
            if reference.dtype != out.dtype || reference.shape != out.shape {
                say(format!(
                    "output {i}: {}{:?} but reference {path} is {}{:?}",
                    out.dtype.name(),
                    out.shape,
                    reference.dtype.name(),
                    reference.shape
                ));
                entry["compare"] = json!({
                    "reference": path,
                    "ok": false,
                    "reference_dtype": reference.dtype.name(),
                    "reference_shape": reference.shape,
                });
                outputs.push(entry);
                mismatch = true;
                continue;
            }
            let (max, differ) = diff(&out, &reference);
            let (worst, ok) = within(&out, &reference, bound);
            let unit = match out.dtype {
                ScalarType::FLOAT | ScalarType::DOUBLE => "ulp",
                _ => "steps",
            };
            if differ == 0 {
                say(format!(
                    "output {i}: bit-exact with {path} (max abs diff 0)"
                ));
            } else if ok {
                say(format!(
                "output {i}: within bound of {path}: {differ} elements differ, at most {worst} {unit} (max abs diff {max})"
            ));
            } else {
                say(format!(
                "output {i}: {differ} elements differ from {path}, at most {worst} {unit}, max abs diff {max}"
            ));
                mismatch = true;
            }
            entry["compare"] = json!({
                "reference": path,
                "ok": ok,
                "bit_exact": differ == 0,
                "elements_differing": differ,
                "max_abs_diff": max,
                "max_distance": worst,
                "unit": unit,
            });
        } else if outputs_to.get(i).is_none() {
            say(format!(
                "output {i}: {}{:?} {}",
                out.dtype.name(),
                out.shape,
                preview(&out)
            ));
        }
        entry["preview"] = json!(preview(&out));
        outputs.push(entry);
    }
    Ok((outputs, mismatch))
}

fn preview(t: &Npy) -> String {
    let elem = t.dtype.element_size().unwrap_or(1);
    let items: Vec<String> = t
        .data
        .chunks(elem)
        .take(16)
        .map(|b| match t.dtype {
            ScalarType::FLOAT => format!("{}", f32::from_le_bytes(b.try_into().unwrap())),
            ScalarType::CHAR => format!("{}", b[0] as i8),
            _ => format!("{b:?}"),
        })
        .collect();
    format!(
        "[{}{}]",
        items.join(", "),
        if t.data.len() / elem > 16 {
            ", ..."
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Npy {
        Npy {
            dtype: ScalarType::FLOAT,
            shape: vec![v.len()],
            data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    #[test]
    fn ulp_bound() {
        let one_up = f32::from_bits(1.0f32.to_bits() + 1);
        let (a, b) = (f32s(&[1.0, -0.0, f32::NAN]), f32s(&[one_up, 0.0, f32::NAN]));
        assert_eq!(within(&a, &b, Bound::default()), (1, false));
        assert_eq!(
            within(
                &a,
                &b,
                Bound {
                    ulp: 1,
                    int_diff: 0
                }
            ),
            (1, true)
        );
        // Across zero: the smallest positive and negative subnormals are 2 apart.
        let tiny = f32s(&[f32::from_bits(1)]);
        let neg_tiny = f32s(&[-f32::from_bits(1)]);
        assert_eq!(within(&tiny, &neg_tiny, Bound::default()).0, 2);
        // NaN against a number never passes.
        let nan = f32s(&[f32::NAN]);
        let bound = Bound {
            ulp: 1000,
            int_diff: 0,
        };
        assert!(!within(&nan, &f32s(&[0.0]), bound).1);
    }

    #[test]
    fn int_bound() {
        let i8s = |v: &[i8]| Npy {
            dtype: ScalarType::CHAR,
            shape: vec![v.len()],
            data: v.iter().map(|&x| x as u8).collect(),
        };
        let (a, b) = (i8s(&[-128, 5]), i8s(&[-127, 5]));
        assert_eq!(within(&a, &b, Bound::default()), (1, false));
        assert_eq!(
            within(
                &a,
                &b,
                Bound {
                    ulp: 0,
                    int_diff: 1
                }
            ),
            (1, true)
        );
    }
}
