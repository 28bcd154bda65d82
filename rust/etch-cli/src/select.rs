//! `etch select FILE.pte... [--format cargo|kconfig|list]`: the kernels (and
//! element types) a set of models needs, as cargo features of `etch-kernels`,
//! a Kconfig fragment, or a plain list.

use std::collections::BTreeSet;

use etch_pte::{InstructionArgs, PteFile, ScalarType, Value};

use crate::host::Aligned;

/// The cargo feature selecting operator `ns::name.overload`.
pub fn op_feature(op: &str) -> String {
    let (ns, rest) = op.split_once("::").unwrap_or(("", op));
    let (name, overload) = rest.split_once('.').unwrap_or((rest, ""));
    format!("op-{ns}-{name}-{overload}")
}

/// The cargo feature selecting an element type, if etch-kernels has one.
pub fn dtype_feature(t: ScalarType) -> Option<&'static str> {
    Some(match t {
        ScalarType::FLOAT => "dtype-f32",
        ScalarType::CHAR => "dtype-i8",
        ScalarType::BYTE => "dtype-u8",
        ScalarType::SHORT => "dtype-i16",
        ScalarType::INT => "dtype-i32",
        ScalarType::LONG => "dtype-i64",
        ScalarType::BOOL => "dtype-bool",
        _ => return None,
    })
}

#[derive(Default)]
pub struct Selection {
    /// `ns::name.overload` of every operator some instruction calls.
    pub ops: BTreeSet<String>,
    pub dtypes: BTreeSet<&'static str>,
    /// Backend ids of the programs' delegates (`XnnpackBackend`, ...).
    pub delegates: BTreeSet<String>,
}

/// Calls `f(op, None)` for every kernel call of `file`'s methods (`op` as
/// `ns::name.overload`), then `f(op, Some(dtype feature))` for each of its
/// tensor arguments whose element type has a feature.
pub fn visit(
    file: &PteFile<'_>,
    f: &mut dyn FnMut(&str, Option<&'static str>),
) -> etch_pte::Result<()> {
    for plan in file.program().execution_plan()?.iter() {
        let plan = plan?;
        let values = plan.values()?;
        let operators = plan.operators()?;
        for chain in plan.chains()?.iter() {
            for instr in chain?.instructions()?.iter() {
                let InstructionArgs::KernelCall { op_index, args } = instr?.args()? else {
                    continue;
                };
                let op = operators.get(op_index as usize)?;
                let (name, overload) = (op.name()?, op.overload()?);
                let op = if overload.is_empty() {
                    name.to_string()
                } else {
                    format!("{name}.{overload}")
                };
                f(&op, None);
                for a in args.iter() {
                    if let Value::Tensor(t) = values.get(a? as usize)?.value()? {
                        if let Some(d) = dtype_feature(t.scalar_type()?) {
                            f(&op, Some(d));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Adds what `file`'s methods call to `sel`.
pub fn collect(file: &PteFile<'_>, sel: &mut Selection) -> etch_pte::Result<()> {
    for plan in file.program().execution_plan()?.iter() {
        for d in plan?.delegates()?.iter() {
            sel.delegates.insert(d?.id()?.to_string());
        }
    }
    visit(file, &mut |op, dtype| match dtype {
        None => {
            sel.ops.insert(op.to_string());
        }
        Some(d) => {
            sel.dtypes.insert(d);
        }
    })
}

/// The operators and dtypes the programs need (selective build).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The programs (.pte).
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output form.
    #[arg(long, default_value = "cargo", value_parser = ["cargo", "kconfig", "list"])]
    format: String,
    /// A delegate backend the application registers itself (repeatable);
    /// any other delegate in the programs is an error, since the program
    /// would fail at run time with NotFound (0x20).
    #[arg(long = "allow-delegate", value_name = "BACKEND")]
    allow_delegates: Vec<String>,
}

pub fn main(a: Args) -> Result<(), String> {
    let (format, paths) = (a.format, a.paths);
    let allowed = a.allow_delegates;
    let mut sel = Selection::default();
    for path in &paths {
        let bytes = Aligned::from_bytes(&crate::read_file(path)?);
        let file = PteFile::new_checked(bytes.bytes()).map_err(|e| crate::describe(path, e))?;
        collect(&file, &mut sel).map_err(|e| crate::describe(path, e))?;
    }
    let unknown: Vec<&String> = sel
        .ops
        .iter()
        .filter(|op| {
            let (n, o) = op.split_once('.').unwrap_or((op, ""));
            etch_runtime::registry::find(etch_kernels::KERNELS, n, o).is_none()
        })
        .collect();
    if !unknown.is_empty() {
        let list: Vec<&str> = unknown.iter().map(|s| s.as_str()).collect();
        return Err(format!("etch has no kernel for: {}", list.join(", ")));
    }
    let foreign: Vec<&str> = sel
        .delegates
        .iter()
        .filter(|d| !allowed.contains(d))
        .map(String::as_str)
        .collect();
    if !foreign.is_empty() {
        return Err(format!(
            "the program delegates to {}: etch has no such backend, so it would fail at run time \
             with NotFound (0x20). Export without that partitioner (etch runs the portable and \
             cortex_m operators), or pass --allow-delegate NAME if your application registers \
             the backend itself",
            foreign.join(", ")
        ));
    }
    match format.as_str() {
        "list" => {
            for op in &sel.ops {
                outln!("{op}");
            }
        }
        "cargo" => {
            let feats: Vec<String> = sel
                .ops
                .iter()
                .map(|op| format!("\"{}\"", op_feature(op)))
                .chain(sel.dtypes.iter().map(|d| format!("\"{d}\"")))
                .collect();
            outln!("features = [{}]", feats.join(", "));
        }
        "kconfig" => {
            let ops: Vec<&str> = sel.ops.iter().map(String::as_str).collect();
            outln!("CONFIG_ETCH_OPS=\"{}\"", ops.join(","));
            let dtypes: Vec<&str> = sel.dtypes.iter().copied().collect();
            outln!("CONFIG_ETCH_DTYPES=\"{}\"", dtypes.join(","));
        }
        f => return Err(format!("unknown format '{f}' (cargo, kconfig or list)")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feature_names() {
        assert_eq!(op_feature("aten::add.out"), "op-aten-add-out");
        assert_eq!(
            op_feature("dim_order_ops::_clone_dim_order.out"),
            "op-dim_order_ops-_clone_dim_order-out"
        );
    }

    /// Every kernel in the registry has a feature of that name in
    /// etch-kernels' Cargo.toml, so `select` output always builds.
    #[test]
    fn every_kernel_has_its_feature() {
        let toml = include_str!("../../etch-kernels/Cargo.toml");
        assert!(!etch_kernels::KERNELS.is_empty());
        for k in etch_kernels::KERNELS {
            let f = op_feature(k.name);
            assert!(toml.contains(&format!("\n{f} = []")), "no feature {f}");
        }
        // And every operator feature selects a kernel.
        let features: Vec<&str> = toml
            .lines()
            .filter(|l| l.starts_with("op-") && l.ends_with("= []"))
            .map(|l| l.trim_end_matches("= []").trim())
            .collect();
        assert_eq!(features.len(), etch_kernels::KERNELS.len());
        for f in features {
            assert!(
                etch_kernels::KERNELS
                    .iter()
                    .any(|k| op_feature(k.name) == f),
                "feature {f} selects no kernel"
            );
        }
    }
}
