//! `etch run --etdump OUT.etdp [--etdump-debug OUT.bin] [--profile]` on every
//! fixture: a size-prefixed ETDump flatbuffer (`ED00`) and a debug buffer
//! holding every instruction's output. That ExecuTorch's Inspector reads the
//! files is checked outside CI by tools/etdump/test_inspector.py.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str, ext: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../tests/fixtures/{name}.{ext}"))
        .display()
        .to_string()
}

fn etch(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("etch-etdump-{}-{name}", std::process::id()))
}

#[test]
fn etdump_of_every_fixture() {
    let mut names: Vec<String> = std::fs::read_dir(fixture("", "").trim_end_matches('.'))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pte"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.contains("xnnpack"))
        .collect();
    names.sort();
    assert_eq!(names.len(), 22);
    for name in names {
        let (etdp, dbg, trace) = (
            tmp(&format!("{name}.etdp")),
            tmp(&format!("{name}.bin")),
            tmp(&name),
        );
        let (ok, stdout, stderr) = etch(&[
            "run",
            &fixture(&name, "pte"),
            "--input",
            &fixture(&name, "input0.npy"),
            "--etdump",
            etdp.to_str().unwrap(),
            "--etdump-debug",
            dbg.to_str().unwrap(),
            "--trace",
            trace.to_str().unwrap(),
            "--repeat",
            "2",
            "--compare",
            &fixture(&name, "output0.npy"),
        ]);
        assert!(ok, "{name}: {stdout}{stderr}");
        let bytes = std::fs::read(&etdp).unwrap();
        assert!(
            stdout.contains(&format!("etdump: 2 runs, {} bytes written", bytes.len())),
            "{name}: {stdout}"
        );
        // Size prefix, root offset, file identifier, as ETDumpGen writes it.
        assert_eq!(
            u32::from_le_bytes(bytes[..4].try_into().unwrap()) as usize,
            bytes.len() - 4
        );
        assert_eq!(&bytes[8..12], b"ED00", "{name}");
        // The debug buffer holds each traced tensor (16-byte aligned) for both
        // runs, and the program outputs.
        let debug = std::fs::read(&dbg).unwrap();
        let mut traced: Vec<Vec<u8>> = std::fs::read_dir(&trace)
            .unwrap()
            .map(|e| {
                let b = std::fs::read(e.unwrap().path()).unwrap();
                let h = u16::from_le_bytes([b[8], b[9]]) as usize;
                b[10 + h..].to_vec()
            })
            .collect();
        traced.sort();
        for t in &traced {
            let found = debug
                .chunks(16)
                .enumerate()
                .filter(|(i, _)| debug[i * 16..].starts_with(t))
                .count();
            assert!(found >= 2, "{name}: a traced tensor appears {found} times");
        }
        for p in [&etdp, &dbg] {
            std::fs::remove_file(p).unwrap();
        }
        std::fs::remove_dir_all(&trace).unwrap();
    }
}

#[test]
fn profile_lists_every_instruction() {
    let (ok, stdout, stderr) = etch(&[
        "run",
        &fixture("dscnn_cm_m33", "pte"),
        "--input",
        &fixture("dscnn_cm_m33", "input0.npy"),
        "--profile",
    ]);
    assert!(ok, "{stderr}");
    let rows: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("profile"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .collect();
    assert_eq!(rows.len(), 17, "{stdout}");
    assert!(rows[1].contains("cortex_m::quantized_depthwise_conv2d.out"));
    assert!(rows[16].contains("Method::execute"));
}

#[test]
fn etdump_debug_needs_etdump() {
    let (ok, _, stderr) = etch(&[
        "run",
        &fixture("tiny_cm_m0", "pte"),
        "--input",
        &fixture("tiny_cm_m0", "input0.npy"),
        "--etdump-debug",
        "x.bin",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("--etdump-debug <OUT.bin>") && stderr.contains("--etdump <OUT.etdp>"),
        "{stderr}"
    );
}
