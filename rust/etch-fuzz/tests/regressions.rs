//! Replays `regressions/`: every input that ever failed, with the exact
//! outcome `regressions/expected.txt` gives it (verification off, then on),
//! through the same functions the fuzzers call. A file in the directory
//! without an expectation, or an expectation without its file, fails too.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use etch_fuzz::{load_execute, reader, Outcome};
use etch_runtime::Verification;

fn show(o: &Outcome) -> String {
    match o {
        Ok(()) => "Ok".into(),
        Err((stage, code)) => format!("{stage:?}:{code:?}"),
    }
}

#[test]
fn every_past_failure_gives_its_expected_outcome() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions");
    let manifest = std::fs::read_to_string(dir.join("expected.txt")).unwrap();
    let mut expected = BTreeMap::new();
    for line in manifest
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 3, "expected.txt: {line}");
        expected.insert(f[0].to_string(), [f[1].to_string(), f[2].to_string()]);
    }
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != "expected.txt")
        .collect();
    files.sort();
    assert_eq!(
        files,
        expected.keys().cloned().collect::<Vec<_>>(),
        "regressions/ and expected.txt list different files"
    );
    for (name, want) in &expected {
        let bytes = std::fs::read(dir.join(name)).unwrap();
        let t = Instant::now();
        reader(&bytes);
        let got = [Verification::Minimal, Verification::InternalConsistency]
            .map(|v| show(&load_execute(&bytes, v)));
        assert_eq!(&got, want, "{name}");
        assert!(
            t.elapsed() < Duration::from_secs(2),
            "{name}: {:?}",
            t.elapsed()
        );
    }
    assert!(expected.len() >= 8);
}
