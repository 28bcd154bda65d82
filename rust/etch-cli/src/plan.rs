//! `etch plan FILE.pte [--method NAME] [--svg OUT.svg]`: the memory plan as a
//! table (tensor, placement, lifetime in instructions) and optionally as an
//! SVG picture: x = instruction, y = offset in the planned buffer.

use std::fmt::Write as _;

use etch_pte::{InstructionArgs, PteFile, Value};

use crate::host::Aligned;
use crate::summary::{tensor_summary, TensorSummary};

struct Lifetime {
    tensor: TensorSummary,
    first: usize,
    last: usize,
}

fn lifetimes(
    file: &PteFile<'_>,
    method: &str,
) -> etch_pte::Result<(Vec<Lifetime>, usize, Vec<i64>)> {
    let plan = file.plan(method)?;
    let values = plan.values()?;
    let mut uses: Vec<Option<(usize, usize)>> = vec![None; values.len()];
    let mut touch = |v: usize, at: usize| {
        if let Some(u) = uses.get_mut(v) {
            *u = Some(match *u {
                Some((a, b)) => (a.min(at), b.max(at)),
                None => (at, at),
            });
        }
    };
    let mut n = 0;
    for chain in plan.chains()?.iter() {
        for instr in chain?.instructions()?.iter() {
            if let InstructionArgs::KernelCall { args, .. }
            | InstructionArgs::DelegateCall { args, .. } = instr?.args()?
            {
                for a in args.iter() {
                    touch(a? as usize, n);
                }
            }
            n += 1;
        }
    }
    for i in plan.inputs()?.iter() {
        touch(i? as usize, 0);
    }
    for o in plan.outputs()?.iter() {
        touch(o? as usize, n.saturating_sub(1));
    }
    let mut out = Vec::new();
    for (i, v) in values.iter().enumerate() {
        if let Value::Tensor(t) = v?.value()? {
            let ts = tensor_summary(i, &t)?;
            if ts.placement.is_some() {
                let (first, last) = uses[i].unwrap_or((0, 0));
                out.push(Lifetime {
                    tensor: ts,
                    first,
                    last,
                });
            }
        }
    }
    out.sort_by_key(|l| (l.tensor.placement, l.first));
    let sizes = plan
        .non_const_buffer_sizes()?
        .iter()
        .skip(1)
        .collect::<etch_pte::Result<Vec<_>>>()?;
    Ok((out, n, sizes))
}

fn svg(lifetimes: &[Lifetime], instructions: usize, size: i64) -> String {
    let (w, h, left, top) = (900.0, 480.0, 70.0, 20.0);
    let step = (w - left - 10.0) / instructions.max(1) as f64;
    let scale = (h - top - 30.0) / size.max(1) as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"monospace\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{left}\" y=\"14\">planned buffer (memory id 1): {size} B; x: instruction, y: byte offset</text>\n"
    );
    let palette = [
        "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    ];
    for (k, l) in lifetimes
        .iter()
        .filter(|l| l.tensor.placement.is_some_and(|p| p.0 == 1))
        .enumerate()
    {
        let (_, off) = l.tensor.placement.unwrap_or((1, 0));
        let x = left + l.first as f64 * step;
        let wdt = ((l.last - l.first + 1) as f64 * step).max(2.0);
        let y = top + off as f64 * scale;
        let hgt = (l.tensor.nbytes as f64 * scale).max(1.0);
        let _ = writeln!(
            s,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{wdt:.1}\" height=\"{hgt:.1}\" fill=\"{}\" fill-opacity=\"0.75\" stroke=\"black\" stroke-width=\"0.5\"><title>v{} {}{:?} {} B @ {}</title></rect>",
            palette[k % palette.len()], l.tensor.index, l.tensor.dtype, l.tensor.sizes, l.tensor.nbytes, off
        );
    }
    for i in 0..=instructions {
        let x = left + i as f64 * step;
        let _ = writeln!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#ddd\"/>",
            h - 25.0,
            h - 20.0
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"5\" y=\"{}\">0</text><text x=\"5\" y=\"{}\">{size}</text>",
        top + 10.0,
        h - 30.0
    );
    s.push_str("</svg>\n");
    s
}

/// Memory plan: placement and lifetime of each planned tensor.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The program (.pte).
    path: String,
    #[arg(long, default_value = "forward")]
    method: String,
    /// Draw the plan into an SVG file.
    #[arg(long = "svg", value_name = "OUT.svg")]
    svg_path: Option<String>,
}

pub fn main(a: Args) -> Result<(), String> {
    let (path, method, svg_path) = (a.path, a.method, a.svg_path);
    let bytes = Aligned::from_bytes(&crate::read_file(&path)?);
    let file = PteFile::new_checked(bytes.bytes()).map_err(|e| crate::describe(&path, e))?;
    let (lts, n, sizes) = lifetimes(&file, &method).map_err(|e| crate::describe(&path, e))?;
    for (i, s) in sizes.iter().enumerate() {
        outln!("memory id {}: {s} B", i + 1);
    }
    outln!(
        "{:>6} {:>4} {:>8} {:>8}  {:<9} tensor",
        "value",
        "mem",
        "offset",
        "bytes",
        "live"
    );
    for l in &lts {
        let (id, off) = l.tensor.placement.unwrap_or((0, 0));
        outln!(
            "{:>6} {:>4} {:>8} {:>8}  [{:>2}..{:>2}]   {}{:?}",
            format!("v{}", l.tensor.index),
            id,
            off,
            l.tensor.nbytes,
            l.first,
            l.last,
            l.tensor.dtype,
            l.tensor.sizes
        );
    }
    if let Some(p) = svg_path {
        std::fs::write(&p, svg(&lts, n, sizes.first().copied().unwrap_or(0)))
            .map_err(|e| format!("{p}: {e}"))?;
        outln!("wrote {p}");
    }
    Ok(())
}
