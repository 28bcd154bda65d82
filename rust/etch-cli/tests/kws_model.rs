//! The trained MLPerf Tiny keyword-spotting programs (models/kws, made by
//! tools/export/kws.py) against ExecuTorch's reference: every committed clip's
//! MFCC input must give bit-exactly the reference scores, the top-1 label the
//! export recorded, and the int8 programs must expose their I/O quantization.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const LABELS: [&str; 12] = [
    "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown",
];
const PROGRAMS: [&str; 3] = [
    "dscnn_kws_int8io",
    "dscnn_kws_float_io",
    "dscnn_kws_m55_int8io",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn kws_dir() -> PathBuf {
    repo().join("models/kws")
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

fn expected(name: &str) -> Value {
    let p = kws_dir().join(format!("{name}.expected.json"));
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn clips(want: &Value) -> Vec<(String, String, String)> {
    want["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["clip"].as_str().unwrap().to_string(),
                c["label"].as_str().unwrap().to_string(),
                c["top1"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Index of the largest of the 12 scores at the end of a `[1, 12]` .npy
/// (int8 or float32); the first of equal maxima, like numpy's argmax.
fn argmax_npy(bytes: &[u8], float: bool) -> usize {
    let scores: Vec<f32> = if float {
        bytes[bytes.len() - 48..]
            .chunks(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect()
    } else {
        bytes[bytes.len() - 12..]
            .iter()
            .map(|&b| b as i8 as f32)
            .collect()
    };
    let mut best = 0;
    for (i, &s) in scores.iter().enumerate() {
        if s > scores[best] {
            best = i;
        }
    }
    best
}

#[test]
fn labels_file_is_the_mlperf_order() {
    let text = std::fs::read_to_string(kws_dir().join("labels.txt")).unwrap();
    assert_eq!(text.lines().collect::<Vec<_>>(), LABELS);
}

#[test]
fn every_committed_clip_has_a_reference_per_program() {
    let mut wavs: Vec<String> = std::fs::read_dir(repo().join("tools/clips/wav"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".wav").map(str::to_string))
        .collect();
    wavs.sort();
    assert_eq!(wavs.len(), 34, "the committed clip set");
    for name in PROGRAMS {
        let mut refs: Vec<String> = clips(&expected(name)).into_iter().map(|c| c.0).collect();
        refs.sort();
        assert_eq!(refs, wavs, "{name}");
        for (clip, label, top1) in clips(&expected(name)) {
            assert!(LABELS.contains(&label.as_str()) && LABELS.contains(&top1.as_str()));
            assert_eq!(clip.rsplit_once('_').unwrap().0, label);
        }
    }
}

#[test]
fn kws_programs_are_bit_exact_on_every_committed_clip() {
    let out_dir = std::env::temp_dir().join(format!("etch-kws-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    for name in PROGRAMS {
        let pte = kws_dir().join(format!("{name}.pte"));
        let float = name.contains("float");
        for (clip, _, top1) in clips(&expected(name)) {
            let base = kws_dir().join("ref").join(name).join(&clip);
            let input = format!("{}.input0.npy", base.display());
            let reference = format!("{}.output0.npy", base.display());
            let got = out_dir.join(format!("{name}.{clip}.npy"));
            let (ok, stdout, stderr) = etch(&[
                "run",
                pte.to_str().unwrap(),
                "--input",
                &input,
                "--output",
                got.to_str().unwrap(),
                "--compare",
                &reference,
            ]);
            assert!(ok, "{name} {clip}: {stdout}{stderr}");
            assert!(stdout.contains("bit-exact"), "{name} {clip}: {stdout}");
            let label = LABELS[argmax_npy(&std::fs::read(&got).unwrap(), float)];
            assert_eq!(label, top1, "{name} {clip}");
        }
    }
    std::fs::remove_dir_all(&out_dir).ok();
}

#[test]
fn a_wrong_reference_is_not_bit_exact() {
    let name = PROGRAMS[0];
    let pte = kws_dir().join(format!("{name}.pte"));
    let dir = kws_dir().join("ref").join(name);
    // yes_0's input against down_0's scores.
    let (ok, stdout, _) = etch(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        dir.join("yes_0.input0.npy").to_str().unwrap(),
        "--compare",
        dir.join("down_0.output0.npy").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stdout.contains("elements differ"), "{stdout}");
}

#[test]
fn int8_programs_expose_their_io_quantization() {
    for name in PROGRAMS.iter().filter(|n| n.ends_with("int8io")) {
        let pte = kws_dir().join(format!("{name}.pte"));
        let io = &expected(name)["io_qparams"];
        for key in ["input0_scale", "output0_scale"] {
            let (ok, stdout, stderr) = etch(&["run", pte.to_str().unwrap(), "--method", key]);
            assert!(ok, "{name} {key}: {stderr}");
            let v: f64 = stdout
                .trim()
                .strip_prefix("output 0: Double ")
                .unwrap_or_else(|| panic!("{name} {key}: {stdout}"))
                .parse()
                .unwrap();
            assert_eq!(v, io[key].as_f64().unwrap(), "{name} {key}");
        }
        for key in [
            "input0_zp",
            "output0_zp",
            "input0_quant_min",
            "input0_quant_max",
        ] {
            let (ok, stdout, stderr) = etch(&["run", pte.to_str().unwrap(), "--method", key]);
            assert!(ok, "{name} {key}: {stderr}");
            assert_eq!(
                stdout.trim(),
                format!("output 0: Int {}", io[key].as_i64().unwrap()),
                "{name} {key}"
            );
        }
    }
}

#[test]
fn inspect_matches_the_exporters_facts() {
    for name in PROGRAMS {
        let pte = kws_dir().join(format!("{name}.pte"));
        let (ok, stdout, stderr) = etch(&["inspect", "--json", pte.to_str().unwrap()]);
        assert!(ok, "{name}: {stderr}");
        let got: Value = serde_json::from_str(&stdout).unwrap();
        let want = expected(name);
        assert_eq!(got["file_size"], want["file_size"], "{name}");
        let (g, w) = (&got["methods"][0], &want["methods"][0]);
        assert_eq!(g["name"], "forward");
        for key in ["instructions", "values", "planned_buffers"] {
            assert_eq!(g[key], w[key], "{name} {key}");
        }
        let ops = |v: &Value| -> Vec<(String, u64)> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    (
                        o["name"].as_str().unwrap().to_string(),
                        o["count"].as_u64().unwrap(),
                    )
                })
                .collect()
        };
        assert_eq!(ops(&g["operators"]), ops(&w["operators"]), "{name}");
    }
}
