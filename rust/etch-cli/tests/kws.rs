//! `etch kws`: the keyword-spotting demo on the bundled clips, against
//! ExecuTorch's own reference labels for the same clips, and its error paths.

use std::path::{Path, PathBuf};
use std::process::Command;

const LABELS: [&str; 12] = [
    "down", "go", "left", "no", "off", "on", "right", "stop", "up", "yes", "silence", "unknown",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn etch(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn bundled_clips() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("tools/clips/wav"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".wav"))
        .collect();
    v.sort();
    v
}

/// (clip file stem, label) per result line of `etch kws` output.
fn results(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let clip = f.next()?;
            let label = f.next()?;
            let stem = Path::new(clip.strip_suffix(".wav")?)
                .file_name()?
                .to_str()?;
            Some((stem.to_string(), label.to_string()))
        })
        .collect()
}

/// The trained model's labels for every bundled clip, as ExecuTorch's
/// reference cortex_m ops computed them from the numpy front-end
/// (models/kws/dscnn_kws_int8io.expected.json, tools/export/kws.py).
#[test]
fn kws_labels_bundled_clips_like_executorch() {
    let json = root().join("models/kws/dscnn_kws_int8io.expected.json");
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the trained model comes from tools/export/kws.py)",
                json.display()
            )
        }))
        .unwrap();
    let feats = std::env::temp_dir().join(format!("etch-kws-features-{}", std::process::id()));
    std::fs::create_dir_all(&feats).unwrap();
    let (ok, stdout, stderr) = etch(&["kws", "--features-out", feats.to_str().unwrap()]);
    assert!(ok, "{stdout}\n{stderr}");
    assert!(
        !stdout.contains("note:"),
        "must use the trained model:\n{stdout}"
    );
    // The int8 features against the export's (numpy front-end, the model's
    // qparams): every element within one step.
    let (mut total, mut equal) = (0usize, 0usize);
    for clip in bundled_clips() {
        let stem = clip.strip_suffix(".wav").unwrap();
        let ours = std::fs::read(feats.join(format!("{stem}.input0.npy"))).unwrap();
        let theirs = std::fs::read(
            root().join(format!("models/kws/ref/dscnn_kws_int8io/{stem}.input0.npy")),
        )
        .unwrap();
        let (ours, theirs) = (&ours[ours.len() - 490..], &theirs[theirs.len() - 490..]);
        for (&a, &b) in ours.iter().zip(theirs) {
            let d = (a as i8 as i32 - b as i8 as i32).abs();
            assert!(d <= 1, "{stem}: features differ by {d} steps");
            total += 1;
            equal += (d == 0) as usize;
        }
    }
    std::fs::remove_dir_all(&feats).unwrap();
    println!("int8 features: {equal}/{total} equal to the export's, all within one step");
    assert!(equal * 1000 >= total * 999, "{equal}/{total}");
    let got = results(&stdout);
    let clips = bundled_clips();
    assert_eq!(got.len(), clips.len(), "{stdout}");
    let mut agree_with_name = 0;
    for (stem, label) in &got {
        assert!(LABELS.contains(&label.as_str()), "{stem}: {label}");
        let reference = want["clips"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["clip"] == stem.as_str())
            .unwrap_or_else(|| panic!("{stem}: not in {}", json.display()));
        assert_eq!(label, reference["top1"].as_str().unwrap(), "{stem}");
        agree_with_name += (Some(label.as_str()) == reference["label"].as_str()) as usize;
    }
    let summary = format!(
        "{agree_with_name}/{} clips labelled as their file names say",
        clips.len()
    );
    assert!(stdout.contains(&summary), "want '{summary}' in:\n{stdout}");
}

#[test]
fn kws_runs_with_an_explicit_model_and_reads_its_qparams() {
    let model = root().join("tests/fixtures/dscnn_cm_m33_int8io.pte");
    let clip = root().join("tools/clips/wav/yes_0.wav");
    let (ok, stdout, stderr) = etch(&[
        "kws",
        "--model",
        model.to_str().unwrap(),
        clip.to_str().unwrap(),
    ]);
    assert!(ok, "{stdout}\n{stderr}");
    // input0_scale / input0_zp of the fixture (etch inspect).
    assert!(
        stdout.contains("scale 0.030727779492735863, zero point -6"),
        "{stdout}"
    );
    let r = results(&stdout);
    assert_eq!(r.len(), 1, "{stdout}");
    assert_eq!(r[0].0, "yes_0");
    assert!(
        stdout.contains("clips labelled as their file names say"),
        "{stdout}"
    );
}

#[test]
fn kws_rejects_bad_files_and_still_runs_the_good_ones() {
    let dir = std::env::temp_dir().join(format!("etch-kws-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let junk = dir.join("junk.wav");
    std::fs::write(&junk, b"this is not a wav file").unwrap();
    // A valid 44.1 kHz stereo PCM file.
    let mut stereo = Vec::new();
    let data = [0u8; 400];
    stereo.extend_from_slice(b"RIFF");
    stereo.extend_from_slice(&(36 + data.len() as u32).to_le_bytes());
    stereo.extend_from_slice(b"WAVEfmt ");
    stereo.extend_from_slice(&16u32.to_le_bytes());
    stereo.extend_from_slice(&1u16.to_le_bytes());
    stereo.extend_from_slice(&2u16.to_le_bytes());
    stereo.extend_from_slice(&44100u32.to_le_bytes());
    stereo.extend_from_slice(&(44100u32 * 4).to_le_bytes());
    stereo.extend_from_slice(&4u16.to_le_bytes());
    stereo.extend_from_slice(&16u16.to_le_bytes());
    stereo.extend_from_slice(b"data");
    stereo.extend_from_slice(&(data.len() as u32).to_le_bytes());
    stereo.extend_from_slice(&data);
    let cd = dir.join("stereo.wav");
    std::fs::write(&cd, &stereo).unwrap();
    let good = root().join("tools/clips/wav/no_0.wav");
    let missing = dir.join("missing.wav");
    let model = root().join("tests/fixtures/dscnn_cm_m33_int8io.pte");
    let (ok, stdout, stderr) = etch(&[
        "kws",
        "--model",
        model.to_str().unwrap(),
        junk.to_str().unwrap(),
        cd.to_str().unwrap(),
        good.to_str().unwrap(),
        missing.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok, "bad clips must fail the command:\n{stdout}");
    assert!(
        stderr.contains("junk.wav: not a PCM WAV file (Ill-formed WAVE file: no RIFF tag found)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("stereo.wav: 44100 Hz, 2 channel(s), 16-bit; the keyword spotter needs 16000 Hz mono 16-bit PCM"),
        "{stderr}"
    );
    assert!(stderr.contains("missing.wav: "), "{stderr}");
    assert!(
        stderr.contains("3 of 4 clips could not be read"),
        "{stderr}"
    );
    assert_eq!(
        results(&stdout).iter().filter(|(s, _)| s == "no_0").count(),
        1,
        "{stdout}"
    );
    // Unknown option and a missing model file are errors too.
    let (ok, _, stderr) = etch(&["kws", "--bogus"]);
    assert!(
        !ok && stderr.contains("unexpected argument '--bogus'"),
        "{stderr}"
    );
    let (ok, _, stderr) = etch(&["kws", "--model", "/nonexistent.pte", good.to_str().unwrap()]);
    assert!(!ok && stderr.contains("/nonexistent.pte"), "{stderr}");
}

/// Streaming: three clips back to back, labelled every second, give exactly
/// the labels and scores of the clips run one by one (etch-frontend's
/// `Stream` features equal the whole-clip features bit for bit).
#[test]
fn kws_stream_windows_equal_the_clips() {
    let names = ["yes_0", "left_0", "right_1"];
    let mut pcm = Vec::new();
    let mut header = Vec::new();
    for n in names {
        let b = std::fs::read(root().join(format!("tools/clips/wav/{n}.wav"))).unwrap();
        // The clips are canonical 44-byte-header PCM files.
        assert_eq!(&b[36..40], b"data");
        header = b[..44].to_vec();
        pcm.extend_from_slice(&b[44..]);
    }
    header[4..8].copy_from_slice(&(36 + pcm.len() as u32).to_le_bytes());
    header[40..44].copy_from_slice(&(pcm.len() as u32).to_le_bytes());
    let long = std::env::temp_dir().join(format!("etch-kws-stream-{}.wav", std::process::id()));
    std::fs::write(&long, [header, pcm].concat()).unwrap();
    let (ok, streamed, stderr) = etch(&[
        "kws",
        "--stream",
        "--every-ms",
        "1000",
        long.to_str().unwrap(),
    ]);
    std::fs::remove_file(&long).unwrap();
    assert!(ok, "{streamed}\n{stderr}");
    let windows: Vec<(String, String)> = streamed
        .lines()
        .filter(|l| l.contains(" s  "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[2].to_string(), f[3].to_string())
        })
        .collect();
    let paths: Vec<String> = names
        .iter()
        .map(|n| {
            root()
                .join(format!("tools/clips/wav/{n}.wav"))
                .display()
                .to_string()
        })
        .collect();
    let args: Vec<&str> = ["kws"]
        .into_iter()
        .chain(paths.iter().map(String::as_str))
        .collect();
    let (ok, whole, stderr) = etch(&args);
    assert!(ok, "{whole}\n{stderr}");
    let clips: Vec<(String, String)> = whole
        .lines()
        .filter(|l| l.contains(".wav "))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f[1].to_string(), f[2].to_string())
        })
        .collect();
    assert_eq!(windows.len(), 3, "{streamed}");
    assert_eq!(
        windows, clips,
        "streamed:\n{streamed}\nwhole clips:\n{whole}"
    );
}
