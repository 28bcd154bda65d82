//! `etch inspect FILE.pte [--json]`.

use serde_json::{json, Value as Json};

use crate::summary::{summarize, FileSummary, IoSummary, TensorSummary};

/// Header, segments, methods, operators, memory plan and state bytes of a program.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The program (.pte).
    path: String,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

pub fn main(a: Args) -> Result<(), String> {
    let (path, json_out) = (a.path, a.json);
    let bytes = crate::read_file(&path)?;
    let file = etch_pte::PteFile::new_checked(&bytes).map_err(|e| crate::describe(&path, e))?;
    let summary = summarize(&file).map_err(|e| crate::describe(&path, e))?;
    if json_out {
        outln!(
            "{}",
            serde_json::to_string_pretty(&to_json(&summary)).unwrap_or_default()
        );
    } else {
        print_text(&path, &summary);
    }
    Ok(())
}

fn tensor_json(t: &TensorSummary) -> Json {
    json!({
        "value": t.index,
        "dtype": t.dtype,
        "sizes": t.sizes,
        "dim_order": t.dim_order,
        "nbytes": t.nbytes,
        "memory_id": t.placement.map(|p| p.0),
        "offset": t.placement.map(|p| p.1),
        "mutable": t.mutable.is_some(),
    })
}

fn io_json(io: &IoSummary) -> Json {
    match io {
        IoSummary::Tensor(t) => tensor_json(t),
        IoSummary::Scalar { kind, value } => json!({ "kind": kind, "value": value }),
    }
}

pub fn to_json(s: &FileSummary) -> Json {
    let methods: Vec<Json> = s
        .methods
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "values": m.values,
                "value_kinds": m.value_kinds.iter().map(|(k, n)| (k.to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
                "chains": m.chains,
                "instructions": m.instructions,
                "operators": m.operators.iter().map(|o| json!({"name": o.name, "overload": o.overload, "count": o.count})).collect::<Vec<_>>(),
                "delegates": m.delegates,
                "inputs": m.inputs.iter().map(io_json).collect::<Vec<_>>(),
                "outputs": m.outputs.iter().map(io_json).collect::<Vec<_>>(),
                "planned_buffers": m.planned_buffers,
                "method_state_bytes": m.method_state_bytes,
                "kernel_scratch_bytes": m.kernel_scratch_bytes,
                "decoded_call_bytes": m.decoded_call_bytes,
                "planned_tensors": m.planned_tensors.iter().map(tensor_json).collect::<Vec<_>>(),
                "mutable_buffers": mutable(m).map(tensor_json).collect::<Vec<_>>(),
                "mutable_state_bytes": mutable(m).map(|t| t.nbytes).sum::<usize>(),
            })
        })
        .collect();
    json!({
        "file_size": s.file_size,
        "program_size": s.program_size,
        "segment_base_offset": s.segment_base_offset,
        "segments": s.segments.iter().map(|(o, n)| json!({"offset": o, "size": n})).collect::<Vec<_>>(),
        "constant_buffers": s.constant_buffers,
        "constant_bytes": s.constant_bytes,
        "unused_constant_buffers": s.unused_constant_buffers,
        "unused_constant_bytes": s.unused_constant_bytes,
        "methods": methods,
    })
}

/// The planned tensors holding mutable state (initialised from the
/// program at load and by `Method::reset_state`).
fn mutable(m: &crate::summary::MethodSummary) -> impl Iterator<Item = &TensorSummary> {
    m.planned_tensors.iter().filter(|t| t.mutable.is_some())
}

fn shape(t: &TensorSummary) -> String {
    let sizes: Vec<String> = t.sizes.iter().map(|s| s.to_string()).collect();
    let order: Vec<String> = t.dim_order.iter().map(|s| s.to_string()).collect();
    format!(
        "{}[{}] dim_order [{}]",
        t.dtype,
        sizes.join(","),
        order.join(",")
    )
}

fn io_line(io: &IoSummary) -> String {
    match io {
        IoSummary::Tensor(t) => {
            let place = match t.placement {
                Some((id, off)) => format!("planned mem {id} @ {off}"),
                None => "not planned".to_string(),
            };
            format!("v{} {} ({} B, {})", t.index, shape(t), t.nbytes, place)
        }
        IoSummary::Scalar { kind, value } => format!("{kind} {value}"),
    }
}

fn print_text(path: &str, s: &FileSummary) {
    outln!("{path}: {} bytes", s.file_size);
    outln!(
        "  program {} B, segment base offset {}",
        s.program_size,
        s.segment_base_offset
    );
    for (i, (off, size)) in s.segments.iter().enumerate() {
        outln!("  segment {i}: offset {off}, {size} B");
    }
    outln!(
        "  constants: {} buffers, {} B; {} buffers ({} B) used by no instruction",
        s.constant_buffers,
        s.constant_bytes,
        s.unused_constant_buffers.len(),
        s.unused_constant_bytes
    );
    for m in &s.methods {
        let kinds: Vec<String> = m
            .value_kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        outln!("method '{}':", m.name);
        outln!("  values: {} ({})", m.values, kinds.join(", "));
        outln!("  chains: {}, instructions: {}", m.chains, m.instructions);
        for (i, io) in m.inputs.iter().enumerate() {
            outln!("  input {i}: {}", io_line(io));
        }
        for (i, io) in m.outputs.iter().enumerate() {
            outln!("  output {i}: {}", io_line(io));
        }
        outln!("  operators:");
        for o in &m.operators {
            let full = if o.overload.is_empty() {
                o.name.clone()
            } else {
                format!("{}.{}", o.name, o.overload)
            };
            outln!("    {full:<50} x{}", o.count);
        }
        for d in &m.delegates {
            outln!("  delegate: {d}");
        }
        outln!(
            "  method state: {} B (exact, for Method::load; kernel scratch {} B and decoded kernel calls {} B of it)",
            m.method_state_bytes,
            m.kernel_scratch_bytes,
            m.decoded_call_bytes
        );
        let state: Vec<&TensorSummary> = mutable(m).collect();
        outln!(
            "  mutable state: {} buffers, {} B in planned memory (initial values from the program at load; Method::reset_state)",
            state.len(),
            state.iter().map(|t| t.nbytes).sum::<usize>()
        );
        for t in &state {
            if let Some((id, off)) = t.placement {
                outln!(
                    "      mem {id} [{off:>7} .. {:>7}) v{} {}",
                    off + t.nbytes as u64,
                    t.index,
                    shape(t)
                );
            }
        }
        outln!("  memory plan:");
        for (i, b) in m.planned_buffers.iter().enumerate() {
            outln!("    memory id {}: {b} B", i + 1);
        }
        for t in &m.planned_tensors {
            if let Some((id, off)) = t.placement {
                outln!(
                    "      mem {id} [{off:>7} .. {:>7}) v{} {}{}",
                    off + t.nbytes as u64,
                    t.index,
                    shape(t),
                    if t.mutable.is_some() {
                        " (mutable state)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
}
