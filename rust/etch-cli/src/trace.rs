//! Per-operator traces: every instruction's output tensors, written as
//! `.npy` files (`etch run --trace DIR`) and compared with a reference
//! (`etch run --trace-compare REF.npz|DIR`) to find the first instruction
//! whose output differs.
//!
//! A kernel call's output is its last argument (the schema's return value),
//! the value ExecuTorch's debug-mode event tracer logs; a tensor list gives
//! one file per tensor. A delegate call logs every tensor argument, as
//! ExecuTorch does.

use std::path::Path;

use etch_pte::ScalarType;
use etch_runtime::{ExecutionObserver, InstructionValues, MethodMeta, Output};

use crate::host;
use crate::npy::{self, Npy};

/// One traced instruction.
pub struct Entry {
    pub index: u32,
    /// `namespace::name.overload`, or `delegate` for a delegate call.
    pub op: String,
    pub tensors: Vec<Npy>,
}

impl Entry {
    /// `ns_name`: the operator without its overload, the key that lines up
    /// an instruction with a graph node.
    fn key(&self) -> String {
        op_key(&self.op)
    }

    /// File name of tensor `k`: `007_cortex_m.quantized_conv2d.out.npy`,
    /// with `.k` before `.npy` when the output is a list.
    pub fn file_name(&self, k: usize) -> String {
        let op = self.op.replace("::", ".");
        if self.tensors.len() == 1 {
            format!("{:03}_{op}.npy", self.index)
        } else {
            format!("{:03}_{op}.{k}.npy", self.index)
        }
    }
}

/// `cortex_m::quantized_conv2d.out` -> `cortex_m_quantized_conv2d`.
fn op_key(op: &str) -> String {
    let base = op.split('.').next().unwrap_or(op);
    base.replace("::", "_")
}

/// Records every instruction's output tensors (logical C order).
pub struct Tracer {
    operators: Vec<String>,
    op: Option<u32>,
    pub entries: Vec<Entry>,
    pub error: Option<String>,
}

impl Tracer {
    pub fn new(meta: &MethodMeta<'_>) -> etch_runtime::Result<Self> {
        let mut operators = Vec::new();
        for op in meta.plan().operators()?.iter() {
            let op = op?;
            let (name, overload) = (op.name()?, op.overload()?);
            operators.push(if overload.is_empty() {
                name.to_string()
            } else {
                format!("{name}.{overload}")
            });
        }
        Ok(Tracer {
            operators,
            op: None,
            entries: Vec::new(),
            error: None,
        })
    }

    fn record(&mut self, index: u32, values: &InstructionValues<'_, '_, '_>) -> Result<(), String> {
        let err = |e: etch_runtime::Error| format!("instruction {index}: {e}");
        let (op, args) = match self.op {
            Some(op) => {
                let name = self.operators.get(op as usize).cloned().unwrap_or_default();
                (name, values.len().saturating_sub(1)..values.len())
            }
            None => ("delegate".to_string(), 0..values.len()),
        };
        let mut tensors = Vec::new();
        for i in args {
            match values.list_len(i).map_err(err)? {
                Some(n) => {
                    for j in 0..n {
                        tensors.extend(tensor(values.list_item(i, j).map_err(err)?));
                    }
                }
                None => tensors.extend(tensor(values.get(i).map_err(err)?)),
            }
        }
        self.entries.push(Entry { index, op, tensors });
        Ok(())
    }
}

fn tensor(out: Output<'_>) -> Option<Npy> {
    match out {
        Output::Tensor(t) => {
            let elem = t.dtype.element_size().unwrap_or(1);
            Some(Npy {
                dtype: t.dtype,
                shape: t.shape.sizes().iter().map(|s| s as usize).collect(),
                data: host::to_logical(t.data, &t.shape, elem),
            })
        }
        _ => None,
    }
}

impl ExecutionObserver for Tracer {
    fn before(&mut self, _index: u32, op: Option<u32>) {
        self.op = op;
    }
    fn after_values(&mut self, index: u32, values: &InstructionValues<'_, '_, '_>) {
        if self.error.is_none() {
            if let Err(e) = self.record(index, values) {
                self.error = Some(e);
            }
        }
    }
}

/// Writes every traced tensor into `dir` (created when missing).
pub fn write(dir: &str, entries: &[Entry]) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let mut files = 0;
    for e in entries {
        for (k, t) in e.tensors.iter().enumerate() {
            let path = Path::new(dir).join(e.file_name(k));
            npy::write(&path.display().to_string(), t)?;
            files += 1;
        }
    }
    Ok(files)
}

/// One reference node: a graph node of an `.npz` (`NNN_<target>`, as the
/// fixture exports write them) or an instruction of an earlier `--trace`.
pub struct Reference {
    pub label: String,
    key: String,
    pub tensors: Vec<Npy>,
}

/// The operator key of an `.npz` array name: `011_<EdgeOpOverload:
/// cortex_m_quantized_conv2d_default>: schema = ...` -> `cortex_m_quantized_conv2d`.
fn npz_key(name: &str) -> String {
    let target = name.split_once('_').map_or(name, |(_, t)| t);
    match target
        .strip_prefix("<EdgeOpOverload: ")
        .and_then(|t| t.split('>').next())
    {
        // Edge targets end in `_<overload>` (`default`, `Tensor`, ...).
        Some(edge) => edge
            .rsplit_once('_')
            .map_or(edge, |(base, _)| base)
            .to_string(),
        None => target.to_string(),
    }
}

/// Loads a reference: an `.npz` of graph-node outputs or a `--trace` directory.
/// Refused past `cap` (what the program's tensors can hold) before reading
/// more.
pub fn load_reference(path: &str, cap: npy::Cap) -> Result<Vec<Reference>, String> {
    let p = Path::new(path);
    if p.is_dir() {
        let mut files: Vec<String> = std::fs::read_dir(p)
            .map_err(|e| format!("{path}: {e}"))?
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".npy"))
            .collect();
        files.sort();
        let mut refs: Vec<Reference> = Vec::new();
        let mut left = cap.total;
        for f in files {
            // 007_cortex_m.quantized_conv2d.out[.k].npy
            let Some((index, op)) = f.trim_end_matches(".npy").split_once('_') else {
                continue;
            };
            let mut parts = op.split('.');
            let key = match (parts.next(), parts.next()) {
                (Some(ns), Some(name)) => format!("{ns}_{name}"),
                (Some(name), None) => name.to_string(),
                _ => continue,
            };
            let label = format!("{index}_{op}");
            let t = npy::read(&p.join(&f).display().to_string(), cap.array.min(left))?;
            left -= t.data.len();
            match refs.last_mut() {
                Some(last) if last.label.split('_').next() == Some(index) => last.tensors.push(t),
                _ => refs.push(Reference {
                    label,
                    key,
                    tensors: vec![t],
                }),
            }
        }
        Ok(refs)
    } else {
        Ok(npy::read_npz(path, cap)?
            .into_iter()
            .filter(|(name, _)| !name.contains("<function alloc"))
            .map(|(name, t)| Reference {
                key: npz_key(&name),
                label: name
                    .split(": schema")
                    .next()
                    .unwrap_or(&name)
                    .replace("<EdgeOpOverload: ", "")
                    .replace('>', ""),
                tensors: vec![t],
            })
            .collect())
    }
}

/// Element `i` of a tensor as a number.
fn value(t: &Npy, i: usize) -> f64 {
    let size = t.dtype.element_size().unwrap_or(1);
    let Some(b) = t.data.get(i * size..(i + 1) * size) else {
        return f64::NAN;
    };
    let arr = |b: &[u8]| -> [u8; 8] {
        let mut a = [0u8; 8];
        a[..b.len()].copy_from_slice(b);
        a
    };
    let a = arr(b);
    match t.dtype {
        ScalarType::FLOAT => f32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
        ScalarType::DOUBLE => f64::from_le_bytes(a),
        ScalarType::CHAR => a[0] as i8 as f64,
        ScalarType::BYTE | ScalarType::BOOL => a[0] as f64,
        ScalarType::SHORT => i16::from_le_bytes([a[0], a[1]]) as f64,
        ScalarType::INT => i32::from_le_bytes([a[0], a[1], a[2], a[3]]) as f64,
        ScalarType::LONG => i64::from_le_bytes(a) as f64,
        _ => f64::NAN,
    }
}

/// The logical index (one per dimension) of flat element `i`.
fn unravel(shape: &[usize], mut i: usize) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        let s = shape[d].max(1);
        idx[d] = i % s;
        i /= s;
    }
    idx
}

/// How one traced tensor differs from its reference.
pub struct Difference {
    /// Instead of element differences: dtype or shape mismatch.
    pub mismatch: Option<String>,
    pub count: usize,
    pub numel: usize,
    pub max_abs: f64,
    /// (index, got, want) of the first differing elements.
    pub first: Vec<(Vec<usize>, f64, f64)>,
}

/// Compares two tensors bit for bit; `None` when identical.
pub fn difference(got: &Npy, want: &Npy, show: usize) -> Option<Difference> {
    if got.dtype != want.dtype || got.shape != want.shape {
        return Some(Difference {
            mismatch: Some(format!(
                "{}{:?} but the reference is {}{:?}",
                got.dtype.name(),
                got.shape,
                want.dtype.name(),
                want.shape
            )),
            count: 0,
            numel: 0,
            max_abs: 0.0,
            first: vec![],
        });
    }
    let size = got.dtype.element_size().unwrap_or(1);
    let numel = got.data.len() / size;
    let mut d = Difference {
        mismatch: None,
        count: 0,
        numel,
        max_abs: 0.0,
        first: vec![],
    };
    for (i, (x, y)) in got
        .data
        .chunks(size)
        .zip(want.data.chunks(size))
        .enumerate()
    {
        if x != y {
            d.count += 1;
            let (a, b) = (value(got, i), value(want, i));
            let diff = (a - b).abs();
            d.max_abs = if diff.is_nan() {
                f64::INFINITY
            } else {
                d.max_abs.max(diff)
            };
            if d.first.len() < show {
                d.first.push((unravel(&got.shape, i), a, b));
            }
        }
    }
    (d.count > 0).then_some(d)
}

/// The outcome of lining a trace up with a reference.
pub struct Comparison {
    /// Traced instructions that had a reference node and were compared.
    pub compared: usize,
    /// Traced instructions with no reference node of the same operator.
    pub unmatched: Vec<String>,
    /// (instruction, reference label, tensor k, difference), in order.
    pub differing: Vec<(String, String, usize, Difference)>,
}

/// Lines the trace up with the reference in order (an instruction matches
/// the next reference node of the same operator; reference nodes with no
/// instruction, such as views, are skipped) and compares each pair.
pub fn compare(entries: &[Entry], refs: &[Reference], show: usize) -> Comparison {
    let mut c = Comparison {
        compared: 0,
        unmatched: vec![],
        differing: vec![],
    };
    let mut cursor = 0;
    for e in entries {
        let name = format!("instruction {} ({})", e.index, e.op);
        let key = e.key();
        let Some(j) = refs[cursor.min(refs.len())..]
            .iter()
            .position(|r| r.key == key)
            .map(|j| j + cursor)
        else {
            c.unmatched.push(name);
            continue;
        };
        cursor = j + 1;
        c.compared += 1;
        for (k, (got, want)) in e.tensors.iter().zip(&refs[j].tensors).enumerate() {
            if let Some(d) = difference(got, want, show) {
                c.differing
                    .push((name.clone(), refs[j].label.clone(), k, d));
            }
        }
    }
    c
}

/// The human-readable report of a comparison.
pub fn report(c: &Comparison, reference: &str) -> String {
    let mut s = String::new();
    match c.differing.first() {
        None => s.push_str(&format!(
            "trace: all {} compared instructions match {reference}\n",
            c.compared
        )),
        Some((name, label, k, d)) => {
            let which = if *k > 0 {
                format!(" output {k}")
            } else {
                String::new()
            };
            s.push_str(&format!(
                "trace: first difference at {name}{which}, reference {label}\n"
            ));
            match &d.mismatch {
                Some(m) => s.push_str(&format!("  {m}\n")),
                None => {
                    s.push_str(&format!(
                        "  {} of {} elements differ, max abs diff {}\n",
                        d.count, d.numel, d.max_abs
                    ));
                    for (idx, got, want) in &d.first {
                        s.push_str(&format!("  at {idx:?}: etch {got}, reference {want}\n"));
                    }
                }
            }
            if c.differing.len() > 1 {
                s.push_str(&format!(
                    "  ({} later instruction outputs differ too)\n",
                    c.differing.len() - 1
                ));
            }
        }
    }
    if !c.unmatched.is_empty() {
        s.push_str(&format!(
            "trace: {} instructions have no reference node: {}\n",
            c.unmatched.len(),
            c.unmatched.join(", ")
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npz_names_give_the_operator_key() {
        assert_eq!(
            npz_key("011_<EdgeOpOverload: cortex_m_quantized_conv2d_default>: schema = x"),
            "cortex_m_quantized_conv2d"
        );
        assert_eq!(
            npz_key("003_<EdgeOpOverload: dim_order_ops__clone_dim_order_default>: schema"),
            "dim_order_ops__clone_dim_order"
        );
        assert_eq!(
            op_key("dim_order_ops::_clone_dim_order.out"),
            "dim_order_ops__clone_dim_order"
        );
        assert_eq!(op_key("aten::add.out"), "aten_add");
        assert_eq!(
            npz_key("010_<EdgeOpOverload: aten_add_Tensor>: schema"),
            "aten_add"
        );
    }

    #[test]
    fn difference_lists_the_first_elements() {
        let t = |v: &[i8]| Npy {
            dtype: ScalarType::CHAR,
            shape: vec![2, 3],
            data: v.iter().map(|&x| x as u8).collect(),
        };
        assert!(difference(&t(&[1, 2, 3, 4, 5, 6]), &t(&[1, 2, 3, 4, 5, 6]), 4).is_none());
        let d = difference(&t(&[1, 2, 3, 4, 5, 6]), &t(&[1, 2, 0, 4, 5, -6]), 4).unwrap();
        assert_eq!((d.count, d.numel, d.max_abs), (2, 6, 12.0));
        assert_eq!(
            d.first,
            vec![(vec![0, 2], 3.0, 0.0), (vec![1, 2], 6.0, -6.0)]
        );
    }
}
