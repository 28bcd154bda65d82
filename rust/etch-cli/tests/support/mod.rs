//! Helpers shared by the integration tests (`mod support;`): running the
//! `etch` binary, and a manifest entry's comparison rule as `etch run` flags.

#![allow(dead_code)] // each test crate uses its own subset

use std::ffi::OsStr;
use std::process::Command;

use serde_json::Value;

/// Runs the `etch` binary: (success, stdout, stderr).
pub fn etch<S: AsRef<OsStr>>(args: &[S]) -> (bool, String, String) {
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

/// `etch run --compare` bound flags for a manifest entry's `rule`: `"exact"`
/// (none), `{"ulp": N}` or `{"int_diff": N}`. A non-exact rule must give its
/// reason in `why`.
pub fn rule_flags(name: &str, entry: &Value) -> Vec<String> {
    let mut args = Vec::new();
    match &entry["rule"] {
        Value::String(s) if s == "exact" => {}
        Value::Object(rule) => {
            assert!(
                entry["why"].as_str().is_some_and(|w| !w.is_empty()),
                "{name}: a non-exact rule needs its reason"
            );
            for (key, flag) in [("ulp", "--ulp"), ("int_diff", "--int-diff")] {
                if let Some(v) = rule.get(key) {
                    args.push(flag.into());
                    args.push(v.as_u64().unwrap().to_string());
                }
            }
        }
        other => panic!("{name}: unknown rule {other}"),
    }
    args
}
