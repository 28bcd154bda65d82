//! A closed stdout (`etch inspect x.pte | head -1`) is a clean exit, not a
//! panic: `println!` panicked on `EPIPE` (Rust ignores `SIGPIPE`).

use std::process::Command;

/// Runs `etch` from the repository root with stdout a pipe whose reader is
/// already closed: every write fails with `BrokenPipe`.
fn into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .stdout(writer)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_stdout_ends_every_command_cleanly() {
    let m33 = "tests/fixtures/dscnn_cm_m33";
    let pte = format!("{m33}.pte");
    let input = format!("{m33}.input0.npy");
    let reference = format!("{m33}.output0.npy");
    let commands: [&[&str]; 8] = [
        &["inspect", &pte],
        &["inspect", "--json", &pte],
        &["run", &pte, "--input", &input, "--compare", &reference],
        &["run", &pte, "--input", &input, "--json"],
        &["select", &pte],
        &["select", "--format", "list", &pte],
        &["plan", &pte],
        &["ops"],
    ];
    for args in commands {
        let (code, stderr) = into_closed_pipe(args);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "etch {args:?}");
    }
}
