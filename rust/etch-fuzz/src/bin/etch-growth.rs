//! Times the hostile program families of `etch_fuzz::hostile` from 1 KB to
//! 1 MB: load (program, meta, state size, `Method::load`), one execute, and
//! `for_each_missing_operator`; the fastest of three runs each, with
//! verification on. Prints a Markdown table (docs/robustness.md).
//!
//! ```text
//! cargo run --release -p etch-fuzz --bin etch-growth [FAMILY [KB]]
//! ```
//!
//! `FAMILY` (values, chains, instructions, operators) and `KB` select one
//! family or one row (for a profiler).

use std::io::Write as _;
use std::time::Duration;

use etch_fuzz::hostile::{build, load_execute_timed, n_for_size, Shape, Timed};
use etch_runtime::Verification;

fn fastest(file: &[u8]) -> Timed {
    let mut best = load_execute_timed(file, Verification::InternalConsistency);
    for _ in 0..2 {
        let t = load_execute_timed(file, Verification::InternalConsistency);
        best.load = best.load.min(t.load);
        best.execute = best.execute.min(t.execute);
        best.missing = best.missing.min(t.missing);
    }
    best
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let family = args.first().cloned();
    let only_kb: Option<usize> = args.get(1).and_then(|k| k.parse().ok());
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "| family | n | bytes | outcome | load ms | execute ms | missing-operator names ms |\n|---|---:|---:|---|---:|---:|---:|"
    );
    for shape in [
        Shape::Values(0),
        Shape::Chains(0),
        Shape::Instructions(0),
        Shape::Operators(0),
    ] {
        if family.as_deref().is_some_and(|f| f != shape.name()) {
            continue;
        }
        for kb in [1usize, 4, 16, 64, 256, 1024] {
            if only_kb.is_some_and(|k| k != kb) {
                continue;
            }
            let n = n_for_size(shape, kb * 1024);
            let file = build(shape.with_n(n));
            let t = fastest(&file);
            let outcome = match t.outcome {
                Ok(()) => "Ok".to_string(),
                Err(c) => format!("{c:?}"),
            };
            let _ = writeln!(
                out,
                "| {} | {n} | {} | {outcome} | {} | {} | {} |",
                shape.name(),
                file.len(),
                ms(t.load),
                ms(t.execute),
                ms(t.missing)
            );
        }
    }
}
