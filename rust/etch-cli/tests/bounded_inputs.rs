//! `.npy`/`.npz` readers are bounded by what the program can hold
//! (its largest tensor; twice the sum of its tensors for an archive) before
//! they allocate. A shape product that overflows panicked inside `npyz` in
//! the debug CLI; `--trace-compare` inflated an `.npz` without a cap (a
//! 200 KB file took 431 MB). Both are now exact errors, from small files
//! built here.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
        .display()
        .to_string()
}

fn etch(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn tmp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("etch-bounded-{}-{name}", std::process::id()))
}

/// A v1 `.npy` with `header` as its dict and `data` after it.
fn npy_with(header: &str, data: &[u8]) -> Vec<u8> {
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    b.extend_from_slice(data);
    b
}

#[test]
fn an_overflowing_npy_shape_is_an_error_not_a_panic() {
    let pte = fixture("dscnn_cm_m33.pte");
    let path = tmp("overflow.npy");
    let header =
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }\n";
    std::fs::write(&path, npy_with(header, &[0; 64])).unwrap();
    let p = path.display().to_string();
    for args in [
        &["run", &pte, "--input", &p][..],
        &[
            "run",
            &pte,
            "--input",
            &fixture("dscnn_cm_m33.input0.npy"),
            "--compare",
            &p,
        ][..],
    ] {
        let (code, stderr) = etch(args);
        assert_eq!(
            (code, stderr.as_str()),
            (
                Some(1),
                format!("error: {p}: bad .npy header: shape product overflows\n").as_str()
            ),
            "{args:?}"
        );
    }
    // Declared within usize but over the program's largest tensor
    // (DS-CNN M33: 8,000 bytes, its 1x64x25x5 int8 activations): refused before npyz allocates.
    let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 4097), }\n";
    std::fs::write(&path, npy_with(header, &[0; 4 * 4097])).unwrap();
    let (code, stderr) = etch(&["run", &pte, "--input", &p]);
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(1),
            format!("error: {p}: 16388 bytes of data, more than the 8000 the program can hold\n")
                .as_str()
        )
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_deflate_bomb_npz_stops_at_the_programs_size() {
    let pte = fixture("tiny_cm_m0.pte");
    // One member: 64 MB of zeros declared and deflated to ~64 KB.
    let path = tmp("bomb.npz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("000_bomb.npy", opts).unwrap();
    let n = 16 << 20;
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}\n");
    zip.write_all(&npy_with(&header, &[])).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        zip.write_all(&zeros).unwrap();
    }
    zip.finish().unwrap();
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 200_000, "{size}");
    let p = path.display().to_string();
    let t = std::time::Instant::now();
    let (code, stderr) = etch(&[
        "run",
        &pte,
        "--input",
        &fixture("tiny_cm_m0.input0.npy"),
        "--trace-compare",
        &p,
    ]);
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
    // tiny_cm_m0's largest tensor: 512 bytes (its 32x16 int8 weights).
    assert_eq!(
        (code, stderr.as_str()),
        (
            Some(1),
            format!("error: {p}: 000_bomb.npy: inflates past the 512 bytes the program can hold\n")
                .as_str()
        )
    );
    let _ = std::fs::remove_file(&path);
}
