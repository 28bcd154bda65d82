//! The command line itself (clap): `--help` for every command, `--version`,
//! argument errors, output directories created when missing.

use std::path::Path;
use std::process::Command;

fn etch(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_command_has_help() {
    // (command, options its help must list)
    let commands: [(&str, &[&str]); 7] = [
        ("demo", &[]),
        ("inspect", &["<PATH>", "--json"]),
        (
            "kws",
            &[
                "[CLIPS]...",
                "--model <FILE.pte>",
                "--features-out <DIR>",
                "--stream",
                "--every-ms <N>",
            ],
        ),
        (
            "run",
            &[
                "<PATH>",
                "--method <METHOD>",
                "--input <IN.npy>",
                "--output <OUT.npy>",
                "--compare <REF.npy>",
                "--ulp <N>",
                "--int-diff <N>",
                "--repeat <N>",
                "--trace <DIR>",
                "--trace-compare <REF>",
                "--etdump <OUT.etdp>",
                "--etdump-debug <OUT.bin>",
                "--profile",
            ],
        ),
        (
            "listen",
            &[
                "[WAV]",
                "--model <FILE.pte>",
                "--expect <FILE.tsv>",
                "--every-ms <N>",
                "--window-ms <N>",
                "--min-count <N>",
                "--threshold <N>",
                "--refractory-ms <N>",
            ],
        ),
        (
            "select",
            &[
                "<PATHS>...",
                "--format <FORMAT>",
                "[possible values: cargo, kconfig, list]",
            ],
        ),
        ("plan", &["<PATH>", "--method <METHOD>", "--svg <OUT.svg>"]),
    ];
    let (code, top, _) = etch(&["--help"]);
    assert_eq!(code, Some(0));
    for (cmd, options) in commands {
        assert!(
            top.contains(&format!("\n  {cmd} ")),
            "etch --help lists {cmd}: {top}"
        );
        for args in [[cmd, "--help"], ["help", cmd]] {
            let (code, stdout, stderr) = etch(&args);
            assert_eq!(code, Some(0), "{args:?}: {stderr}");
            assert!(
                stdout.contains(&format!("Usage: etch {cmd}")),
                "{args:?}: {stdout}"
            );
            for o in options {
                assert!(stdout.contains(o), "{args:?} lists {o}: {stdout}");
            }
        }
    }
}

#[test]
fn version() {
    let (code, stdout, _) = etch(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(stdout.trim(), format!("etch {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn argument_errors_exit_2_and_point_to_help() {
    for args in [
        &["run"][..],
        &["run", "x.pte", "--bogus"],
        &["run", "x.pte", "--repeat", "many"],
        &["select", "x.pte", "--format", "yaml"],
        &["kws", "--every-ms", "30"],
        &["listen", "--every-ms", "0"],
        &["listen", "--threshold", "256"],
        &["run", "x.pte", "--etdump-debug", "d.bin"],
        &["frobnicate"],
    ] {
        let (code, stdout, stderr) = etch(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty());
        assert!(
            stderr.starts_with("error: ") && stderr.contains("--help"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn kws_features_out_creates_the_directory() {
    let dir = std::env::temp_dir().join(format!("etch-cli-{}/a/b", std::process::id()));
    let clip = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/clips/wav/down_0.wav");
    let (code, stdout, stderr) = etch(&[
        "kws",
        clip.to_str().unwrap(),
        "--features-out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(dir.join("down_0.input0.npy").is_file(), "{stdout}");
    std::fs::remove_dir_all(dir.parent().unwrap().parent().unwrap()).unwrap();
}
