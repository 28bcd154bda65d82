//! End-to-end checks of the `etch` binary against every committed fixture:
//! `inspect --json` must agree with what ExecuTorch's own deserializer said
//! when the fixture was exported (`<name>.expected.json`).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod support;
use support::etch;

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pte"))
        .collect();
    v.sort();
    assert_eq!(v.len(), 23, "expected the 23 committed fixtures");
    v
}

fn expected(pte: &Path) -> Value {
    let p = pte.with_extension("expected.json");
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

#[test]
fn inspect_json_matches_executorch_deserializer() {
    for pte in fixtures() {
        let name = pte.file_name().unwrap().to_string_lossy().into_owned();
        let (ok, stdout, stderr) = etch(&["inspect", "--json", pte.to_str().unwrap()]);
        assert!(ok, "{name}: {stderr}");
        let got: Value = serde_json::from_str(&stdout).unwrap();
        let want = expected(&pte);
        assert_eq!(got["file_size"], want["file_size"], "{name}");
        let (gm, wm) = (
            got["methods"].as_array().unwrap(),
            want["methods"].as_array().unwrap(),
        );
        assert_eq!(gm.len(), wm.len(), "{name}: method count");
        for (g, w) in gm.iter().zip(wm) {
            let m = format!("{name}:{}", w["name"]);
            assert_eq!(g["name"], w["name"], "{m}");
            assert_eq!(g["instructions"], w["instructions"], "{m}");
            assert_eq!(g["values"], w["values"], "{m}");
            assert_eq!(g["planned_buffers"], w["planned_buffers"], "{m}");
            let ops = |v: &Value| -> Vec<(String, String, u64)> {
                v.as_array()
                    .unwrap()
                    .iter()
                    .map(|o| {
                        (
                            o["name"].as_str().unwrap().to_string(),
                            o["overload"].as_str().unwrap().to_string(),
                            o["count"].as_u64().unwrap(),
                        )
                    })
                    .collect()
            };
            assert_eq!(ops(&g["operators"]), ops(&w["operators"]), "{m}");
            for key in ["inputs", "outputs"] {
                let (gi, wi) = (g[key].as_array().unwrap(), w[key].as_array().unwrap());
                assert_eq!(gi.len(), wi.len(), "{m} {key}");
                for (a, b) in gi.iter().zip(wi) {
                    if b.get("dtype").is_some() {
                        assert_eq!(a["dtype"], b["dtype"], "{m} {key}");
                        assert_eq!(a["sizes"], b["sizes"], "{m} {key}");
                        assert_eq!(a["dim_order"], b["dim_order"], "{m} {key}");
                    } else {
                        assert_eq!(a["kind"], b["kind"], "{m} {key}");
                    }
                }
            }
        }
    }
}

#[test]
fn inspect_rejects_a_corrupt_file_with_the_code() {
    let pte = &fixtures()[0];
    let mut bytes = std::fs::read(pte).unwrap();
    bytes[4..8].copy_from_slice(b"XXXX");
    let tmp = std::env::temp_dir().join(format!("etch-corrupt-{}.pte", std::process::id()));
    std::fs::write(&tmp, &bytes).unwrap();
    let (ok, stdout, stderr) = etch(&["inspect", tmp.to_str().unwrap()]);
    std::fs::remove_file(&tmp).ok();
    assert!(!ok);
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "one-line error: {stderr}");
    assert!(stderr.contains("InvalidProgram (0x23)"), "{stderr}");
}

#[test]
fn run_compare_is_bit_exact_for_every_fixture() {
    // The delegated program needs its backend (see run_names_the_missing_backend).
    for pte in fixtures()
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("xnnpack"))
    {
        let stem = pte.with_extension("");
        let input = format!("{}.input0.npy", stem.display());
        let reference = format!("{}.output0.npy", stem.display());
        let (ok, stdout, stderr) = etch(&[
            "run",
            pte.to_str().unwrap(),
            "--input",
            &input,
            "--compare",
            &reference,
        ]);
        assert!(ok, "{}: {stderr}", pte.display());
        assert!(stdout.contains("bit-exact"), "{stdout}");
    }
}

/// The memory plan reuses input bytes for later tensors: every run must set
/// the inputs again (runs 2..N used to compute on what run 1 left there).
#[test]
fn run_repeat_sets_the_inputs_before_every_run() {
    let mut checked = 0;
    for pte in fixtures()
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("xnnpack"))
    {
        let stem = pte.with_extension("");
        let input = format!("{}.input0.npy", stem.display());
        let reference = format!("{}.output0.npy", stem.display());
        let (ok, stdout, stderr) = etch(&[
            "run",
            pte.to_str().unwrap(),
            "--input",
            &input,
            "--compare",
            &reference,
            "--repeat",
            "3",
        ]);
        assert!(ok, "{}: {stdout}{stderr}", pte.display());
        assert!(stdout.contains("3 inferences"), "{stdout}");
        assert!(stdout.contains("bit-exact"), "{stdout}");
        checked += 1;
    }
    assert_eq!(checked, 22);
}

#[test]
fn run_compare_fails_on_a_different_reference() {
    let dir = fixture_dir();
    let pte = dir.join("tiny_cm_m0.pte");
    // The M0 program's input compared against another model's output.
    let (ok, stdout, _) = etch(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        dir.join("tiny_cm_m0.input0.npy").to_str().unwrap(),
        "--compare",
        dir.join("tiny_portable_pt.output0.npy").to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(stdout.contains("elements differ"), "{stdout}");
}

#[test]
fn inspect_prints_the_exact_method_state_bytes() {
    for pte in fixtures() {
        let (_, stdout, _) = etch(&["inspect", "--json", pte.to_str().unwrap()]);
        let got: Value = serde_json::from_str(&stdout).unwrap();
        let bytes = std::fs::read(&pte).unwrap();
        let aligned: Vec<u128> = {
            let mut v = vec![0u128; bytes.len().div_ceil(16)];
            bytemuck::cast_slice_mut::<u128, u8>(&mut v)[..bytes.len()].copy_from_slice(&bytes);
            v
        };
        let data = &bytemuck::cast_slice::<u128, u8>(&aligned)[..bytes.len()];
        let program = etch_runtime::Program::from_bytes(
            data,
            etch_runtime::Verification::InternalConsistency,
        )
        .unwrap();
        for m in got["methods"].as_array().unwrap() {
            let meta = program.method_meta(m["name"].as_str().unwrap()).unwrap();
            assert_eq!(
                m["method_state_bytes"].as_u64().unwrap() as usize,
                meta.method_state_bytes(etch_kernels::KERNELS).unwrap()
            );
            let scratch = m["kernel_scratch_bytes"].as_u64().unwrap() as usize;
            assert_eq!(
                scratch,
                meta.kernel_scratch_bytes(etch_kernels::KERNELS).unwrap()
            );
            // The DS-CNN fixtures' depthwise kernels keep 2,688 B there.
            if pte.to_str().unwrap().contains("dscnn_cm") && m["name"] == "forward" {
                assert_eq!(scratch, 2688, "{}", pte.display());
            }
            assert_eq!(
                m["decoded_call_bytes"].as_u64().unwrap() as usize,
                meta.decoded_call_bytes(etch_kernels::KERNELS).unwrap()
            );
        }
    }
}

/// The MLPerf Tiny autoencoder (10 `cortex_m::quantized_linear` calls, the
/// benchmark's program): its decoded calls, counted by hand. Per call: 2
/// header words and 13 entries (12 schema arguments and the return value);
/// 3 words for each of its 4 static tensors (input, weights, bias, out; the
/// return value shares `out`'s, `kernel_sum` is None): sizes, data place,
/// byte size; 4 for `requantize_multipliers` (length, one entry, the 31-bit
/// multiplier in two words); `requantize_shifts` and the Ints fit their
/// entries. 31 words x 10 calls + 10 (one per instruction) = 320 words,
/// 1,280 B + 3 B of alignment. The method state: 2 B per instruction, 1 B
/// of input flags, the calls and the kernel scratch (+ 7 B of alignment).
#[test]
fn inspect_states_the_decoded_calls_exactly() {
    let pte = fixture_dir().join("../../bench/models/autoencoder_cm_m33_int8io.pte");
    let (ok, stdout, stderr) = etch(&["inspect", "--json", pte.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let got: Value = serde_json::from_str(&stdout).unwrap();
    let m = &got["methods"][0];
    assert_eq!(m["instructions"], 10);
    assert_eq!(m["decoded_call_bytes"], 1283);
    let scratch = m["kernel_scratch_bytes"].as_u64().unwrap();
    let aligned = if scratch > 0 { scratch + 7 } else { 0 };
    assert_eq!(m["method_state_bytes"], 10 * 2 + 1 + 1283 + aligned);
    let (ok, text, _) = etch(&["inspect", pte.to_str().unwrap()]);
    assert!(ok);
    assert!(
        text.contains(&format!(
            "kernel scratch {scratch} B and decoded kernel calls 1283 B of it"
        )),
        "{text}"
    );
}

#[test]
fn run_names_the_missing_backend() {
    let pte = fixture_dir().join("tiny_xnnpack_delegate.pte");
    let input = fixture_dir().join("tiny_xnnpack_delegate.input0.npy");
    let (ok, _, stderr) = etch(&[
        "run",
        pte.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("NotFound (0x20)") && stderr.contains("XnnpackBackend"),
        "{stderr}"
    );
}

#[test]
fn select_lists_exactly_the_operators_of_dscnn() {
    let pte = fixture_dir().join("dscnn_cm_m33.pte");
    let (ok, stdout, stderr) = etch(&["select", "--format", "list", pte.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let want = [
        "cortex_m::dequantize_per_tensor.out",
        "cortex_m::pad.out",
        "cortex_m::quantize_per_tensor.out",
        "cortex_m::quantized_avg_pool2d.out",
        "cortex_m::quantized_conv2d.out",
        "cortex_m::quantized_depthwise_conv2d.out",
        "cortex_m::quantized_linear.out",
        "dim_order_ops::_clone_dim_order.out",
    ];
    assert_eq!(stdout.lines().collect::<Vec<_>>(), want);
    let (_, cargo, _) = etch(&["select", pte.to_str().unwrap()]);
    assert_eq!(
        cargo.trim(),
        "features = [\"op-cortex_m-dequantize_per_tensor-out\", \"op-cortex_m-pad-out\", \
         \"op-cortex_m-quantize_per_tensor-out\", \"op-cortex_m-quantized_avg_pool2d-out\", \
         \"op-cortex_m-quantized_conv2d-out\", \"op-cortex_m-quantized_depthwise_conv2d-out\", \
         \"op-cortex_m-quantized_linear-out\", \"op-dim_order_ops-_clone_dim_order-out\", \
         \"dtype-f32\", \"dtype-i32\", \"dtype-i8\", \"dtype-u8\"]"
    );
}

/// The README's main command.
#[test]
fn demo_runs_the_bundled_model_bit_exactly() {
    let (ok, stdout, stderr) = etch(&["demo"]);
    assert!(ok, "{stderr}");
    assert!(
        stdout.contains("method state:") && stdout.contains("bit-exact"),
        "{stdout}"
    );
}
