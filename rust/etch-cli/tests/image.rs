//! `etch image wrap` / `check`: the image a device's update takes, and the
//! refusals a damaged one gets.

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

fn tmp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("etch-image-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).to_string_lossy().into_owned()
}

#[test]
fn wrap_then_check() {
    let out = tmp("tiny.etim");
    let pte = "tests/fixtures/tiny_cm_m33_int8io.pte";
    let (ok, text) = etch(&["image", "wrap", pte, "-o", &out, "--sequence", "5"]);
    assert!(ok, "{text}");
    // sha256sum tests/fixtures/tiny_cm_m33_int8io.pte
    let sha = "1603e325e3eea134f9ac214a0c1619329e411823db2ecbfc052294384a787154";
    assert!(
        text.contains(&format!(
            "5472 B (.pte 5408 B at offset 64), generation 5, sha256 {sha}"
        )),
        "{text}"
    );
    let img = std::fs::read(&out).unwrap();
    assert_eq!(&img[..4], b"ETIM");
    assert_eq!(
        &img[64..],
        std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/tiny_cm_m33_int8io.pte"
        ))
        .unwrap()
    );
    let (ok, text) = etch(&["image", "check", &out]);
    assert!(ok, "{text}");
    assert!(
        text.contains(&format!(
            "ok: generation 5, .pte 5408 B, sha256 {sha}, program verified"
        )),
        "{text}"
    );

    // The refusals.
    let bad = tmp("bad.etim");
    let mut b = img.clone();
    b[1000] ^= 1;
    std::fs::write(&bad, &b).unwrap();
    let (ok, text) = etch(&["image", "check", &bad]);
    assert!(
        !ok && text.contains("the .pte's SHA-256 differs from the header's"),
        "{text}"
    );
    std::fs::write(&bad, &img[..3000]).unwrap();
    let (ok, text) = etch(&["image", "check", &bad]);
    assert!(
        !ok && text.contains(
            "truncated: fewer bytes than the header says (header: 5408 B of .pte, file: 3000 B"
        ),
        "{text}"
    );
    let (ok, text) = etch(&["image", "check", &out, "--slot-size", "4096"]);
    assert!(!ok && text.contains("longer than the slot"), "{text}");
    let (ok, text) = etch(&["image", "check", pte]);
    assert!(
        !ok && text.contains("not an etch model image (bad magic)"),
        "{text}"
    );
    // Only programs are wrapped.
    let (ok, text) = etch(&["image", "wrap", "tests/fixtures/README.md", "-o", &bad]);
    assert!(!ok, "{text}");

    // The shell lines: begin with the length, data lines of base64, finish.
    let (ok, text) = etch(&["image", "shell", &out, "--chunk", "100"]);
    assert!(ok, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2 + 5472_usize.div_ceil(100), "{text}");
    assert_eq!(lines[0], "etch model begin 5472");
    assert!(
        lines[1].starts_with("etch model data RVRJTQEAQAA"),
        "{}",
        lines[1]
    );
    assert_eq!(lines.last(), Some(&"etch model finish"));
    let (ok, text) = etch(&["image", "shell", pte]);
    assert!(!ok && text.contains("bad magic"), "{text}");
}
