//! `etch`: the host tool for ExecuTorch programs.
//!
//! ```text
//! etch inspect FILE.pte [--json]
//! ```

mod etdump;
mod host;
mod inspect;
mod kws;
mod listen;
mod npy;
mod plan;
mod run;
mod select;
mod summary;
mod trace;

use std::process::ExitCode;

const USAGE: &str = "usage:
  etch demo                          run the bundled DS-CNN (cortex_m, M33 encoding) bit-exactly
  etch inspect FILE.pte [--json]     header, segments, methods, operators, memory plan
  etch kws [CLIP.wav...] [--model FILE.pte] [--features-out DIR] [--stream [--every-ms N]]
                                     keyword spotting: MFCC front-end + DS-CNN on 16 kHz WAV clips
                                     (default: the bundled clips and models/kws/dscnn_kws_int8io.pte);
                                     --stream: 20 ms hops, the last second labelled every N ms (500)
  etch listen [FILE.wav] [--model FILE.pte] [--every-ms N] [--window-ms N] [--min-count N]
              [--threshold N] [--refractory-ms N] [--expect FILE.tsv]
                                     a board listening: streaming front end, inference every N ms,
                                     posterior averaging, threshold, refractory period -> detections
                                     (default: the listening test's recording, checked against its .tsv)
  etch run FILE.pte [--method NAME] --input IN.npy... [--output OUT.npy...]
           [--compare REF.npy...] [--repeat N] [--trace DIR] [--trace-compare REF.npz|DIR]
                                     run a method; --compare exits 1 unless bit-exact;
                                     --trace writes every instruction's outputs as .npy;
                                     --trace-compare reports the first instruction that differs
  etch select FILE.pte... [--format cargo|kconfig|list]
                                     operators and dtypes the models need (selective build)
  etch plan FILE.pte [--method NAME] [--svg OUT.svg]
                                     memory plan: placement and lifetime of each tensor";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("inspect") => inspect::main(&args[1..]),
        Some("demo") => demo(),
        Some("kws") => kws::main(&args[1..]),
        Some("listen") => listen::main(&args[1..]),
        Some("run") => run::main(&args[1..]),
        Some("select") => select::main(&args[1..]),
        Some("plan") => plan::main(&args[1..]),
        Some("-h") | Some("--help") | Some("help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(format!("unknown command '{other}'\n{USAGE}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::FAILURE
        }
    }
}

/// The host demo until the keyword-spotting front end lands: inspect the
/// bundled DS-CNN keyword-spotting program, run it, compare bit-exactly with
/// ExecuTorch's reference output and time it.
fn demo() -> Result<(), String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/");
    let name = "dscnn_cm_m33";
    let pte = format!("{dir}{name}.pte");
    println!("== etch inspect {name}.pte");
    inspect::main(std::slice::from_ref(&pte))?;
    println!("\n== etch run {name}.pte (1000 inferences, compared with ExecuTorch's reference)");
    run::main(&[
        pte,
        "--input".into(),
        format!("{dir}{name}.input0.npy"),
        "--compare".into(),
        format!("{dir}{name}.output0.npy"),
        "--repeat".into(),
        "1000".into(),
    ])
}

/// Reads a file, with the path in the error message.
pub fn read_file(path: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{path}: {e}"))
}

/// One-line error text for a format/runtime error.
pub fn describe(path: &str, e: etch_pte::Error) -> String {
    format!("{path}: {e}")
}
