//! `etch run --trace DIR` and `--trace-compare REF`: every fixture traced,
//! the Cortex-M fixtures lined up with the reference graph's intermediate
//! outputs (`<name>.intermediates.npz`), and two exports compared.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn fixture(name: &str, ext: &str) -> String {
    fixture_dir()
        .join(format!("{name}.{ext}"))
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
    let d = std::env::temp_dir().join(format!("etch-trace-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The fixtures etch can run (the delegated one needs its backend).
fn runnable() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pte"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|n| !n.contains("xnnpack"))
        .collect();
    v.sort();
    v
}

/// Number of KernelCalls of `forward`, from ExecuTorch's deserializer.
fn kernel_calls(name: &str) -> u64 {
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture(name, "expected.json")).unwrap())
            .unwrap();
    let m = j["methods"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "forward")
        .unwrap();
    m["operators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["count"].as_u64().unwrap())
        .sum()
}

fn npy_data(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + hlen..].to_vec()
}

#[test]
fn trace_writes_every_instruction_of_every_fixture() {
    let fixtures = runnable();
    assert_eq!(fixtures.len(), 22);
    for name in fixtures {
        // A nested directory that does not exist yet.
        let dir = tmp(&name).join("nested");
        let (ok, stdout, stderr) = etch(&[
            "run",
            &fixture(&name, "pte"),
            "--input",
            &fixture(&name, "input0.npy"),
            "--trace",
            dir.to_str().unwrap(),
            "--compare",
            &fixture(&name, "output0.npy"),
        ]);
        assert!(ok, "{name}: {stdout}{stderr}");
        let calls = kernel_calls(&name);
        // max_pool2d_with_indices returns two tensors (values, indices).
        let tensors = calls + name.starts_with("fzoo") as u64;
        assert!(
            stdout.contains(&format!(
                "trace: {tensors} tensors of {calls} instructions written"
            )),
            "{name}: {stdout}"
        );
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert_eq!(files.len() as u64, tensors, "{name}");
        // The last instruction writes the method's output.
        assert_eq!(
            npy_data(files.last().unwrap()),
            npy_data(Path::new(&fixture(&name, "output0.npy"))),
            "{name}: {}",
            files.last().unwrap().display()
        );
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }
}

#[test]
fn trace_compare_lines_up_with_the_reference_graph() {
    let mut checked = 0;
    for name in runnable() {
        let npz = fixture(&name, "intermediates.npz");
        if !Path::new(&npz).exists() {
            continue;
        }
        let (ok, stdout, stderr) = etch(&[
            "run",
            &fixture(&name, "pte"),
            "--input",
            &fixture(&name, "input0.npy"),
            "--trace-compare",
            &npz,
        ]);
        checked += 1;
        if name.starts_with("zoo") {
            // ExecuTorch's eager quantized_avg_pool2d rounds .5 to even; the
            // device kernel (CMSIS-NN arm_avgpool_s8) rounds away from zero.
            assert!(!ok, "{name}");
            assert!(
                stdout.contains(
                    "trace: first difference at instruction 21 \
                     (cortex_m::quantized_avg_pool2d.out), \
                     reference 026_cortex_m_quantized_avg_pool2d_default\n  \
                     13 of 100 elements differ, max abs diff 1\n  \
                     at [0, 0, 0, 3]: etch -13, reference -12\n"
                ),
                "{name}: {stdout}"
            );
            assert!(stderr.contains("the trace differs from the reference"));
        } else {
            assert!(ok, "{name}: {stdout}{stderr}");
            let calls = kernel_calls(&name);
            assert!(
                stdout.contains(&format!("trace: all {calls} compared instructions match")),
                "{name}: {stdout}"
            );
            assert!(!stdout.contains("no reference node"), "{name}: {stdout}");
        }
    }
    assert_eq!(checked, 17);
}

/// The README's walk-through: where does the per-channel export first differ
/// from the per-tensor one?
#[test]
fn trace_compare_finds_the_first_difference_between_two_exports() {
    let dir = tmp("pt");
    let (ok, _, stderr) = etch(&[
        "run",
        &fixture("dscnn_portable_pt", "pte"),
        "--input",
        &fixture("dscnn_portable_pt", "input0.npy"),
        "--trace",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{stderr}");
    let (ok, stdout, stderr) = etch(&[
        "run",
        &fixture("dscnn_portable_pc", "pte"),
        "--input",
        &fixture("dscnn_portable_pc", "input0.npy"),
        "--trace-compare",
        dir.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok);
    assert!(
        stdout.contains(
            "trace: first difference at instruction 12 (aten::convolution.out), \
             reference 012_aten.convolution.out\n  7875 of 8000 elements differ"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("trace: 10 instructions have no reference node: instruction 0 (quantized_decomposed::dequantize_per_channel.out)"),
        "{stdout}"
    );
    assert!(stderr.contains("the trace differs from the reference"));
}

#[test]
fn trace_compare_rejects_a_missing_or_corrupt_reference() {
    let (ok, _, stderr) = etch(&[
        "run",
        &fixture("tiny_cm_m0", "pte"),
        "--input",
        &fixture("tiny_cm_m0", "input0.npy"),
        "--trace-compare",
        &fixture("tiny_cm_m0", "pte"),
    ]);
    assert!(!ok);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("tiny_cm_m0.pte"),
        "{stderr}"
    );
}
