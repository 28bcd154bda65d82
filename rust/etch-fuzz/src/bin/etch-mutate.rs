//! The stable mutation driver: mutates seed files deterministically and runs
//! each mutant through `etch_fuzz::load_execute` (verification off and on)
//! or `etch_fuzz::reader`, timing every run.
//!
//! ```text
//! etch-mutate [--target load|reader] [--iters N] [--seed S] [--max-ms MS]
//!             [--out DIR] SEED_FILE_OR_DIR...
//! ```
//!
//! Exits 1 if any run took longer than its limit (judged by the fastest of
//! three runs, since wall time on a shared machine includes time spent
//! descheduled; the mutant is saved as `DIR/slow-<seed>-<iter>.pte`): the
//! limit is `--max-ms` (default 100) plus `--max-x` (default 4) times the
//! unmutated seed's own run (a 1 MB zoo model executes for tens of ms; a
//! mutant may do a few times its seed's work, not unboundedly more). A panic
//! saves the mutant as `DIR/crash-<seed>-<iter>.pte` and aborts. Prints
//! executions, exec/s and the slowest run. Build with `--release` (or the
//! `fuzz` profile) for figures. A closed stdout or stderr (`| head`) is no
//! panic: the summary is written with `writeln!` and a failed write ignored.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use etch_fuzz::mutate::{mutate, Rng};
use etch_runtime::Verification;

static CURRENT: Mutex<Option<(PathBuf, Vec<u8>)>> = Mutex::new(None);

/// `eprintln!` that ignores a closed stderr instead of panicking.
macro_rules! say {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

fn usage() -> ! {
    say!(
        "usage: etch-mutate [--target load|reader] [--iters N] [--seed S] [--max-ms MS] [--max-x X] [--out DIR] SEED..."
    );
    std::process::exit(2)
}

/// One run of `target` over `data`; whether it was accepted.
fn run_once(target: &str, data: &[u8], v: Verification) -> bool {
    match target {
        "load" => etch_fuzz::load_execute(data, v).is_ok(),
        _ => etch_fuzz::reader(data),
    }
}

/// The fastest of three unmutated runs of each seed, verification on (the
/// slower setting), as a basis for each seed's time limit.
fn seed_times(target: &str, corpus: &[(String, Vec<u8>)]) -> Vec<Duration> {
    corpus
        .iter()
        .map(|(_, bytes)| {
            (0..3)
                .map(|_| {
                    let t = Instant::now();
                    run_once(target, bytes, Verification::InternalConsistency);
                    t.elapsed()
                })
                .min()
                .unwrap_or(Duration::ZERO)
        })
        .collect()
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
    let (mut target, mut iters, mut seed, mut max_ms, mut max_x) =
        ("load".to_string(), 100_000u64, 1u64, 100u64, 4u32);
    let mut out = PathBuf::from("target/etch-mutate");
    let mut files = Vec::new();
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--target" => target = val(),
            "--iters" => iters = val().parse().unwrap_or_else(|_| usage()),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--max-ms" => max_ms = val().parse().unwrap_or_else(|_| usage()),
            "--max-x" => max_x = val().parse().unwrap_or_else(|_| usage()),
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
                say!("etch-mutate: panic; input saved to {}", path.display());
            }
        }
        default_hook(info);
    }));

    let base_limit = Duration::from_millis(max_ms);
    let limits: Vec<Duration> = seed_times(&target, &corpus)
        .into_iter()
        .map(|t| base_limit + t * max_x)
        .collect();
    let mut rng = Rng::new(seed);
    let (start, mut last) = (Instant::now(), Instant::now());
    let (mut runs, mut slow, mut ok, mut accepted) = (0u64, 0u64, 0u64, 0u64);
    let mut slowest = (Duration::ZERO, String::new());
    for iter in 0..iters {
        let pick = rng.below(corpus.len());
        let ((name, base), limit) = (&corpus[pick], limits[pick]);
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
                say!(
                    "etch-mutate: {what} took {dt:?} (limit {limit:?}); saved {}",
                    path.display()
                );
            }
        };
        match target.as_str() {
            "load" => {
                for v in [Verification::Minimal, Verification::InternalConsistency] {
                    timed(&format!("{v:?}"), &mut || run_once("load", &data, v));
                }
            }
            _ => timed("reader", &mut || {
                run_once("reader", &data, Verification::Minimal)
            }),
        }
        accepted = ok;
        if last.elapsed() > Duration::from_secs(30) {
            last = Instant::now();
            let secs = start.elapsed().as_secs_f64();
            say!(
                "etch-mutate: {runs} runs, {:.0}/s, slowest {:?}",
                runs as f64 / secs,
                slowest.0
            );
        }
    }
    let secs = start.elapsed().as_secs_f64();
    let summary = writeln!(
        std::io::stdout().lock(),
        "etch-mutate: target {target}, seed {seed}, {} seed files, {iters} mutants, {runs} runs ({accepted} ran to the end) in {secs:.1} s ({:.0} runs/s); slowest {:.2} ms: {}; over the limit ({max_ms} ms + {max_x} x the seed's run): {slow}; panics: 0",
        corpus.len(),
        runs as f64 / secs,
        slowest.0.as_secs_f64() * 1e3,
        slowest.1
    );
    // A closed stdout (`| head`) loses only this line: no panic, and the
    // exit code still says whether a run was slow.
    drop(summary);
    if slow > 0 {
        std::process::exit(1);
    }
}
