//! `--json` on `etch run` and `etch kws`: stdout is exactly one JSON object
//! (no progress bar: stdout is not a terminal here) with the facts the text
//! output gives.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn etch(args: &[&str]) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{stdout}"));
    (
        out.status.code(),
        v,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn run_json() {
    let f = "tests/fixtures/dscnn_cm_m33_int8io";
    let (pte, input, reference) = (
        format!("{f}.pte"),
        format!("{f}.input0.npy"),
        format!("{f}.output0.npy"),
    );
    let (code, v, _) = etch(&[
        "run",
        &pte,
        "--input",
        &input,
        "--compare",
        &reference,
        "--repeat",
        "3",
        "--json",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(v["program"], pte.as_str());
    assert_eq!(v["method"], "forward");
    assert_eq!(v["runs"], 3);
    assert!(v["us_per_inference"].as_f64().unwrap() > 0.0);
    let out = &v["outputs"][0];
    assert_eq!(out["dtype"], "CHAR");
    assert_eq!(out["shape"], serde_json::json!([1, 12]));
    assert_eq!(out["compare"]["bit_exact"], true);
    assert_eq!(out["compare"]["ok"], true);
    assert_eq!(out["compare"]["elements_differing"], 0);
    assert_eq!(v["outputs"].as_array().unwrap().len(), 1);

    // A wrong reference: exit 1, the JSON still printed, with the error.
    let other = "tests/fixtures/dscnn_cm_m33_int8io.input0.npy";
    let (code, v, stderr) = etch(&["run", &pte, "--input", &input, "--compare", other, "--json"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(v["outputs"][0]["compare"]["ok"], false);
    assert_eq!(v["error"], "outputs differ from the reference");
}

#[test]
fn kws_json() {
    let model = "tests/fixtures/dscnn_cm_m33_int8io.pte";
    let dir = std::env::temp_dir().join(format!("etch-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.wav");
    std::fs::write(&junk, b"not a wav").unwrap();
    let (code, v, _) = etch(&[
        "kws",
        "--model",
        model,
        "--json",
        "tools/clips/wav/no_0.wav",
        "tools/clips/wav/yes_0.wav",
        junk.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, Some(1), "an unreadable clip fails the command");
    assert_eq!(v["model"], model);
    assert_eq!(v["input"]["dtype"], "int8");
    let clips = v["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 2);
    assert_eq!(clips[0]["clip"], "tools/clips/wav/no_0.wav");
    assert_eq!(clips[0]["expected"], "no");
    assert_eq!(clips[1]["expected"], "yes");
    for c in clips {
        assert_eq!(c["samples"], 16000);
        let label = c["label"].as_str().unwrap();
        assert!(etch_labels().contains(&label), "{label}");
        let score = c["score"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&score));
    }
    assert_eq!(v["named"], 2);
    let errors = v["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(errors[0]["error"]
        .as_str()
        .unwrap()
        .contains("junk.wav: not a PCM WAV file"));
}

fn etch_labels() -> [&'static str; 12] {
    [
        "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown",
    ]
}
