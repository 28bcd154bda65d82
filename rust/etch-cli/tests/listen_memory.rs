//! `etch listen` streams the WAV hop by hop, as a board does: its
//! memory does not depend on the recording's length (it read the whole
//! recording first: 22.7 MB for ten minutes). Two recordings, 10 s and
//! 160 s (recording.wav tiled; 5 MB of samples), must peak within 1 MB of
//! each other. This file holds one test so that the peak resident set of
//! this process's children (getrusage) is only these runs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `seconds` of tools/clips/listen/recording.wav, repeated.
fn tiled(seconds: usize) -> PathBuf {
    let mut reader =
        hound::WavReader::open(root().join("tools/clips/listen/recording.wav")).unwrap();
    let spec = reader.spec();
    let one: Vec<i16> = reader.samples::<i16>().map(Result::unwrap).collect();
    let path =
        std::env::temp_dir().join(format!("etch-listen-{}-{seconds}s.wav", std::process::id()));
    let mut w = hound::WavWriter::create(&path, spec).unwrap();
    for &s in one.iter().cycle().take(seconds * 16000) {
        w.write_sample(s).unwrap();
    }
    w.finalize().unwrap();
    path
}

/// Runs `etch listen` over `wav` (one inference every 2 s: the front end
/// still sees every hop) and returns the children's peak RSS in KB so far.
fn listen_peak_kb(wav: &Path) -> (String, i64) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .current_dir(root())
        .args(["listen", wav.to_str().unwrap(), "--every-ms", "2000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // SAFETY: getrusage writes one `rusage` into the zeroed struct we own.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    assert_eq!(
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) },
        0
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        usage.ru_maxrss as i64,
    )
}

#[test]
fn listen_memory_does_not_grow_with_the_recording() {
    let (short, long) = (tiled(10), tiled(160));
    let (out_short, peak_short) = listen_peak_kb(&short);
    let (out_long, peak_long) = listen_peak_kb(&long);
    assert!(out_short.contains("(10.0 s)"), "{out_short}");
    assert!(out_long.contains("(160.0 s)"), "{out_long}");
    // The peak of both runs is the long one's if it is higher.
    assert!(
        peak_long - peak_short < 1024,
        "10 s: {peak_short} KB, 160 s: {peak_long} KB"
    );
    let _ = std::fs::remove_file(short);
    let _ = std::fs::remove_file(long);
}
