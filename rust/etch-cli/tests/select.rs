//! `etch select` refuses programs it could not run: operators without a
//! kernel, and delegates to backends etch does not have (the Zephyr build
//! calls it, so such a program fails the build, naming the delegate).

use std::process::Command;

fn select(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_etch"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .arg("select")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn a_foreign_delegate_is_refused_by_name() {
    let pte = "tests/fixtures/tiny_xnnpack_delegate.pte";
    let (ok, out) = select(&[pte]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("the program delegates to XnnpackBackend: etch has no such backend"),
        "{out}"
    );
    // An application that registers the backend itself may say so.
    let (ok, out) = select(&[pte, "--allow-delegate", "XnnpackBackend"]);
    assert!(ok, "{out}");
    assert!(out.starts_with("features = ["), "{out}");
}

#[test]
fn programs_without_delegates_select_as_before() {
    let (ok, out) = select(&["tests/fixtures/tiny_cm_m33.pte", "--format", "list"]);
    assert!(ok, "{out}");
    assert!(out.contains("cortex_m::quantized_linear.out"), "{out}");
}
