//! `etch`: the host tool for ExecuTorch programs.
//!
//! ```text
//! etch inspect FILE.pte [--json]
//! ```

/// `println!` through a locked stdout that never panics: a closed stdout
/// (`etch inspect x.pte | head -1`) ends the process cleanly (status 0),
/// another write error with status 1; `println!` panicked on `EPIPE`.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let r = writeln!(std::io::stdout().lock(), $($arg)*);
        if let Err(e) = r {
            crate::stdout_failed(e)
        }
    }};
}

/// `print!` as [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let r = write!(std::io::stdout().lock(), $($arg)*);
        if let Err(e) = r {
            crate::stdout_failed(e)
        }
    }};
}

mod etdump;
mod host;
mod image;
mod inspect;
mod kws;
mod listen;
mod npy;
mod ops;
mod plan;
mod run;
mod select;
mod steps;
mod summary;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// etch: inspect, run, debug and size ExecuTorch programs on the host.
#[derive(Parser, Debug)]
#[command(name = "etch", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the bundled DS-CNN fixture (cortex_m, M33) 1000 times, bit-exact check.
    Demo,
    /// Header, segments, methods, operators, memory plan and state bytes.
    Inspect(inspect::Args),
    /// Keyword spotting on 16 kHz WAV clips (MFCC front end + DS-CNN).
    Kws(kws::Args),
    /// A board listening: streaming keyword recognition on a recording.
    Listen(listen::Args),
    /// Run a method; compare, trace (--trace, --trace-compare), profile, ETDump.
    Run(run::Args),
    /// Operators and dtypes the programs need (selective build features).
    Select(select::Args),
    /// Memory plan: placement and lifetime of each tensor.
    Plan(plan::Args),
    /// The operators etch implements (--markdown: docs/operators.md).
    Ops(ops::Args),
    /// Model images for flash slots: wrap a .pte, check an image.
    Image(image::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Demo => demo(),
        Command::Inspect(a) => inspect::main(a),
        Command::Kws(a) => kws::main(a),
        Command::Listen(a) => listen::main(a),
        Command::Run(a) => run::main(a),
        Command::Select(a) => select::main(a),
        Command::Plan(a) => plan::main(a),
        Command::Ops(a) => ops::main(a),
        Command::Image(a) => image::main(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// Ends the process after a failed write to stdout: a reader that went
/// away (`BrokenPipe`) is a clean exit, as for `cat`; anything else is an
/// error. Nothing is left to write, so nothing is lost by not unwinding.
fn stdout_failed(e: std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing to stdout: {e}");
    std::process::exit(1)
}

/// Parses one command line of `etch` (for commands that run others).
fn command(args: &[&str]) -> Result<Command, String> {
    Cli::try_parse_from(std::iter::once("etch").chain(args.iter().copied()))
        .map(|c| c.command)
        .map_err(|e| e.to_string())
}

/// The host demo until the keyword-spotting front end lands: inspect the
/// bundled DS-CNN keyword-spotting program, run it, compare bit-exactly with
/// ExecuTorch's reference output and time it.
fn demo() -> Result<(), String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
    let name = "dscnn_cm_m33";
    let pte = format!("{dir}{name}.pte");
    outln!("== etch inspect {name}.pte");
    if let Command::Inspect(a) = command(&["inspect", &pte])? {
        inspect::main(a)?;
    }
    outln!("\n== etch run {name}.pte (1000 inferences, compared with ExecuTorch's reference)");
    let input = format!("{dir}{name}.input0.npy");
    let reference = format!("{dir}{name}.output0.npy");
    match command(&[
        "run",
        &pte,
        "--input",
        &input,
        "--compare",
        &reference,
        "--repeat",
        "1000",
    ])? {
        Command::Run(a) => run::main(a),
        _ => Ok(()),
    }
}

/// A progress bar for `len` steps of `what`, drawn on stderr only when
/// stdout is a terminal (pipes, files and tests see nothing).
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() || len < 2 {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
        "{{bar:40}} {{pos}}/{{len}} {what} ({{elapsed}}, {{eta}} left)"
    )) {
        bar.set_style(style);
    }
    bar
}

/// Reads a file, with the path in the error message.
pub fn read_file(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{path}: {e}"))
}

/// One-line error text for a format/runtime error.
pub fn describe(path: &str, e: etch_pte::Error) -> String {
    format!("{path}: {e}")
}
