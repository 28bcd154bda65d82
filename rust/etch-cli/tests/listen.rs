//! The listening test on the host: `etch listen` plays
//! tools/clips/listen/recording.wav (keywords at known times between real
//! silence and noise, made by tools/clips/make_recording.py) through the
//! streaming front end, the trained DS-CNN and the recognizer, exactly as
//! samples/keyword_spotting_live does on a board, and must detect every
//! keyword once, at these times, and nothing else. The Zephyr sample's
//! twister scenario expects the same lines.

use std::process::Command;

fn etch(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn recording_gives_every_keyword_once_and_nothing_else() {
    let (ok, out) = etch(&["listen"]);
    assert!(ok, "{out}");
    let detections: Vec<&str> = out.lines().filter(|l| l.starts_with("detected ")).collect();
    assert_eq!(
        detections,
        [
            "detected \"yes\" at 3000 ms (score 254/255)",
            "detected \"left\" at 7000 ms (score 251/255)",
            "detected \"yes\" at 11500 ms (score 212/255)",
            "detected \"right\" at 16500 ms (score 250/255)",
            "detected \"up\" at 20000 ms (score 253/255)",
            "detected \"off\" at 28000 ms (score 244/255)",
            "detected \"no\" at 32000 ms (score 249/255)",
        ]
    );
    assert!(
        out.contains("7/7 keywords detected, no false alarm"),
        "{out}"
    );
}

#[test]
fn a_stricter_threshold_misses_the_real_yes() {
    // The real Speech Commands "yes" averages 212/255: above 220 it is a miss,
    // and the check against recording.tsv must fail and say so.
    let (ok, out) = etch(&["listen", "--threshold", "220"]);
    assert!(!ok, "{out}");
    assert!(out.contains("\"yes\"  MISSED"), "{out}");
    assert!(
        out.contains("1 miss(es) or false alarm(s) over 7 keyword(s)"),
        "{out}"
    );
}

#[test]
fn wrong_format_and_bad_settings_are_refused() {
    let (ok, out) = etch(&["listen", "--every-ms", "30"]);
    assert!(!ok);
    assert!(
        out.contains("'--every-ms <N>': must be a positive multiple of 20"),
        "{out}"
    );
    let (ok, out) = etch(&["listen", "--min-count", "0"]);
    assert!(!ok);
    assert!(out.contains("recognizer settings: BadConfig"), "{out}");
    let dir = std::env::temp_dir().join("etch-listen-test");
    std::fs::create_dir_all(&dir).unwrap();
    // A valid WAV header for 8 kHz stereo audio.
    let mut wav = b"RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00".to_vec();
    wav.extend_from_slice(&8000u32.to_le_bytes());
    wav.extend_from_slice(&32000u32.to_le_bytes());
    wav.extend_from_slice(b"\x04\x00\x10\x00data\x00\x00\x00\x00");
    let path = dir.join("stereo_8k.wav");
    std::fs::write(&path, &wav).unwrap();
    let (ok, out) = etch(&["listen", path.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        out.contains("the keyword spotter needs 16000 Hz mono 16-bit PCM"),
        "{out}"
    );
}
