//! The stable mutation driver: mutates seed files deterministically and runs
//! each mutant through `etch_fuzz::load_execute` (verification off and on)
//! or `etch_fuzz::reader`, timing every run.
//!
//! ```text
//! etch-mutate [--target load|reader] [--iters N] [--seed S] [--max-ms MS]
//!             [--out DIR] SEED_FILE_OR_DIR...
//! ```
//!
//! Exits 1 if any run took longer than `--max-ms` (default 100; judged by
//! the fastest of three runs, since wall time on a shared machine includes
//! time spent descheduled; the mutant is saved as
//! `DIR/slow-<seed>-<iter>.pte`); a panic saves the mutant as
//! `DIR/crash-<seed>-<iter>.pte` and aborts. Prints executions, exec/s and
//! the slowest run. Build with `--release` for figures.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use etch_fuzz::mutate::{mutate, Rng};
use etch_runtime::Verification;

static CURRENT: Mutex<Option<(PathBuf, Vec<u8>)>> = Mutex::new(None);

fn usage() -> ! {
    eprintln!(
        "usage: etch-mutate [--target load|reader] [--iters N] [--seed S] [--max-ms MS] [--out DIR] SEED..."
    );
    std::process::exit(2)
}

fn seeds(paths: &[String]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if path.is_dir() {
            let mut entries: Vec<_> = std::fs::read_dir(path)
                .unwrap_or_else(|e| panic!("{p}: {e}"))
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect();
            entries.sort();
            for e in entries {
                out.push((e.display().to_string(), std::fs::read(&e).unwrap()));
            }
        } else {
            out.push((
                p.clone(),
                std::fs::read(path).unwrap_or_else(|e| panic!("{p}: {e}")),
            ));
        }
    }
    out
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut target, mut iters, mut seed, mut max_ms) =
        ("load".to_string(), 100_000u64, 1u64, 100u64);
    let mut out = PathBuf::from("target/etch-mutate");
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--target" => target = val(),
            "--iters" => iters = val().parse().unwrap_or_else(|_| usage()),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--max-ms" => max_ms = val().parse().unwrap_or_else(|_| usage()),
            "--out" => out = PathBuf::from(val()),
            s if s.starts_with("--") => usage(),
            _ => files.push(a),
        }
    }
    if !matches!(target.as_str(), "load" | "reader") {
        usage();
    }
    let corpus = seeds(&files);
    if corpus.is_empty() {
        usage();
    }
    std::fs::create_dir_all(&out).unwrap();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if let Ok(guard) = CURRENT.try_lock() {
            if let Some((path, bytes)) = guard.as_ref() {
                let _ = std::fs::write(path, bytes);
                eprintln!("etch-mutate: panic; input saved to {}", path.display());
            }
        }
        default_hook(info);
    }));

    let limit = Duration::from_millis(max_ms);
    let mut rng = Rng::new(seed);
    let (start, mut last) = (Instant::now(), Instant::now());
    let (mut runs, mut slow, mut ok, mut accepted) = (0u64, 0u64, 0u64, 0u64);
    let mut slowest = (Duration::ZERO, String::new());
    for iter in 0..iters {
        let (name, base) = &corpus[rng.below(corpus.len())];
        let mut data = base.clone();
        let rounds = if rng.below(8) == 0 {
            4 + rng.below(12)
        } else {
            1
        };
        for _ in 0..rounds {
            mutate(&mut data, &mut rng);
        }
        let crash = out.join(format!("crash-{seed}-{iter}.pte"));
        *CURRENT.lock().unwrap() = Some((crash, data.clone()));
        let mut timed = |what: &str, f: &mut dyn FnMut() -> bool| {
            let t = Instant::now();
            let good = f();
            let mut dt = t.elapsed();
            // The machine is shared: a run over the limit is timed twice
            // more and judged by its fastest run (wall time includes time
            // spent descheduled).
            for _ in 0..2 {
                if dt <= limit {
                    break;
                }
                let t = Instant::now();
                f();
                dt = dt.min(t.elapsed());
            }
            runs += 1;
            ok += good as u64;
            if dt > slowest.0 {
                slowest = (dt, format!("iter {iter} ({what}, from {name})"));
            }
            if dt > limit {
                slow += 1;
                let path = out.join(format!("slow-{seed}-{iter}.pte"));
                std::fs::write(&path, &data).unwrap();
                eprintln!("etch-mutate: {what} took {dt:?}; saved {}", path.display());
            }
        };
        match target.as_str() {
            "load" => {
                for v in [Verification::Minimal, Verification::InternalConsistency] {
                    timed(&format!("{v:?}"), &mut || {
                        etch_fuzz::load_execute(&data, v).is_ok()
                    });
                }
            }
            _ => timed("reader", &mut || etch_fuzz::reader(&data)),
        }
        accepted = ok;
        if last.elapsed() > Duration::from_secs(30) {
            last = Instant::now();
            let secs = start.elapsed().as_secs_f64();
            eprintln!(
                "etch-mutate: {runs} runs, {:.0}/s, slowest {:?}",
                runs as f64 / secs,
                slowest.0
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "etch-mutate: target {target}, seed {seed}, {} seed files, {iters} mutants, {runs} runs ({accepted} ran to the end) in {secs:.1} s ({:.0} runs/s); slowest {:.2} ms: {}; over {max_ms} ms: {slow}; panics: 0",
        corpus.len(),
        runs as f64 / secs,
        slowest.0.as_secs_f64() * 1e3,
        slowest.1
    );
    if slow > 0 {
        std::process::exit(1);
    }
}
