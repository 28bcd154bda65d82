//! `etch-mutate` as CI runs it: a closed stdout (`etch-mutate ... | head -1`)
//! is no panic (`println!` panicked on `EPIPE`: Rust ignores `SIGPIPE`), and
//! the exit code still says whether a run was slow.

use std::process::Command;

fn mutate_into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = Command::new(env!("CARGO_BIN_EXE_etch-mutate"))
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
fn a_closed_stdout_is_a_clean_exit() {
    let out = std::env::temp_dir().join(format!("etch-mutate-pipe-{}", std::process::id()));
    let out = out.to_str().unwrap();
    for target in ["load", "reader"] {
        let (code, stderr) = mutate_into_closed_pipe(&[
            "--target",
            target,
            "--iters",
            "20",
            "--max-ms",
            "60000",
            "--out",
            out,
            "tests/ops/abs_f32.pte",
        ]);
        assert_eq!((code, stderr.as_str()), (Some(0), ""), "{target}");
    }
    // A limit no run can meet: exit 1 even though the summary is lost.
    let (code, stderr) = mutate_into_closed_pipe(&[
        "--iters",
        "1",
        "--max-ms",
        "0",
        "--max-x",
        "0",
        "--out",
        out,
        "tests/ops/abs_f32.pte",
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("limit 0ns"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let _ = std::fs::remove_dir_all(out);
}
