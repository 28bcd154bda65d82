//! `etch run FILE.pte [--method NAME] --input in.npy... [--output out.npy...]
//! [--compare ref.npy...] [--repeat N]`

use std::time::Instant;

use etch_pte::ScalarType;
use etch_runtime::Output;

use crate::host::{self, Aligned, MethodMemory};
use crate::npy::{self, Npy};
use crate::trace::{self, Tracer};

struct Args {
    path: String,
    method: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    compare: Vec<String>,
    repeat: usize,
    trace: Option<String>,
    trace_compare: Option<String>,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        path: String::new(),
        method: "forward".into(),
        inputs: vec![],
        outputs: vec![],
        compare: vec![],
        repeat: 1,
        trace: None,
        trace_compare: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{arg} needs a value"));
        match arg.as_str() {
            "--method" => a.method = value()?,
            "--input" => a.inputs.push(value()?),
            "--output" => a.outputs.push(value()?),
            "--compare" => a.compare.push(value()?),
            "--trace" => a.trace = Some(value()?),
            "--trace-compare" => a.trace_compare = Some(value()?),
            "--repeat" => a.repeat = value()?.parse().map_err(|_| "--repeat needs a number")?,
            _ if a.path.is_empty() && !arg.starts_with("--") => a.path = arg.clone(),
            _ => return Err(format!("unexpected argument '{arg}'")),
        }
    }
    if a.path.is_empty() {
        return Err("run needs a FILE.pte".into());
    }
    Ok(a)
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

pub fn main(args: &[String]) -> Result<(), String> {
    let a = parse(args)?;
    let bytes = Aligned::from_bytes(&crate::read_file(&a.path)?);
    let program = host::load_program(&a.path, &bytes)?;
    let err = |e| crate::describe(&a.path, e);
    let meta = program.method_meta(&a.method).map_err(err)?;
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
        let input = npy::read(path)?;
        let info = method.input_meta(i).map_err(err)?;
        if input.dtype != info.dtype {
            return Err(format!(
                "{path}: dtype {} but input {i} is {}",
                input.dtype.name(),
                info.dtype.name()
            ));
        }
        let sizes: Vec<usize> = info.shape.sizes().iter().map(|&s| s as usize).collect();
        if input.shape != sizes {
            return Err(format!(
                "{path}: shape {:?} but input {i} is {:?}",
                input.shape, sizes
            ));
        }
        let elem = info.dtype.element_size().unwrap_or(1);
        inputs.push(host::to_physical(&input.data, &info.shape, elem));
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
            println!(
                "trace: {files} tensors of {} instructions written to {dir}",
                tracer.entries.len()
            );
        }
        if let Some(reference) = &a.trace_compare {
            let refs = trace::load_reference(reference)?;
            let c = trace::compare(&tracer.entries, &refs, 8);
            print!("{}", trace::report(&c, reference));
            trace_mismatch = !c.differing.is_empty();
        }
    }

    let start = Instant::now();
    for _ in 0..a.repeat.max(1) {
        for (i, bytes) in inputs.iter().enumerate() {
            method.set_input_bytes(i, bytes).map_err(err)?;
        }
        method.execute().map_err(err)?;
    }
    let elapsed = start.elapsed();
    if a.repeat > 1 {
        println!(
            "{} inferences, {:.1} us per inference",
            a.repeat,
            elapsed.as_secs_f64() * 1e6 / a.repeat as f64
        );
    }

    let mut mismatch = false;
    for i in 0..method.num_outputs().map_err(err)? {
        let out = match method.output(i).map_err(err)? {
            Output::Tensor(t) => {
                let elem = t.dtype.element_size().unwrap_or(1);
                Npy {
                    dtype: t.dtype,
                    shape: t.shape.sizes().iter().map(|&s| s as usize).collect(),
                    data: host::to_logical(t.data, &t.shape, elem),
                }
            }
            Output::Int(v) => {
                println!("output {i}: Int {v}");
                continue;
            }
            Output::Double(v) => {
                println!("output {i}: Double {v:?}");
                continue;
            }
            Output::Bool(v) => {
                println!("output {i}: Bool {v}");
                continue;
            }
            Output::None => {
                println!("output {i}: None");
                continue;
            }
        };
        if let Some(path) = a.outputs.get(i) {
            npy::write(path, &out)?;
        }
        if let Some(path) = a.compare.get(i) {
            let reference = npy::read(path)?;
            if reference.dtype != out.dtype || reference.shape != out.shape {
                println!(
                    "output {i}: {}{:?} but reference {path} is {}{:?}",
                    out.dtype.name(),
                    out.shape,
                    reference.dtype.name(),
                    reference.shape
                );
                mismatch = true;
                continue;
            }
            let (max, differ) = diff(&out, &reference);
            if differ == 0 {
                println!("output {i}: bit-exact with {path} (max abs diff 0)");
            } else {
                println!("output {i}: {differ} elements differ from {path}, max abs diff {max}");
                mismatch = true;
            }
        } else if a.outputs.get(i).is_none() {
            println!(
                "output {i}: {}{:?} {}",
                out.dtype.name(),
                out.shape,
                preview(&out)
            );
        }
    }
    if mismatch {
        return Err("outputs differ from the reference".into());
    }
    if trace_mismatch {
        return Err("the trace differs from the reference".into());
    }
    Ok(())
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
