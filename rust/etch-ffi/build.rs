//! Registry capacity from `ETCH_KERNEL_REGISTRY_SIZE` (Kconfig
//! `CONFIG_ETCH_KERNEL_REGISTRY_SIZE`): 0 or unset = exactly the selected
//! kernels. A capacity below the selection fails here, naming the number
//! needed; `src/registry.rs` repeats the check as a const assertion.
use std::{env, fs, path::PathBuf};

fn main() {
    println!("cargo:rerun-if-env-changed=ETCH_KERNEL_REGISTRY_SIZE");
    println!("cargo:rerun-if-changed=build.rs");
    let raw = env::var("ETCH_KERNEL_REGISTRY_SIZE").unwrap_or_default();
    let raw = raw.trim();
    let capacity: usize = if raw.is_empty() {
        0
    } else {
        raw.parse().unwrap_or_else(|_| {
            panic!("ETCH_KERNEL_REGISTRY_SIZE={raw:?} is not a number (0 = exactly the selected kernels)")
        })
    };
    // One kernel per selected operator feature (etch-kernels' `KERNELS`).
    let selected = env::vars()
        .filter(|(k, _)| k.starts_with("CARGO_FEATURE_OP_"))
        .count();
    if capacity != 0 && capacity < selected {
        panic!(
            "ETCH_KERNEL_REGISTRY_SIZE={capacity} is smaller than the {selected} selected kernels: \
             set it to at least {selected} (CONFIG_ETCH_KERNEL_REGISTRY_SIZE={selected}), or 0 for exactly the selection"
        );
    }
    let out = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    fs::write(
        out.join("config.rs"),
        format!(
            "/// `ETCH_KERNEL_REGISTRY_SIZE` at build time (0 = exact).\n\
             pub const REGISTRY_SIZE: usize = {capacity};\n\
             /// Operator features selected (what build.rs checked against).\n\
             pub const SELECTED_OPS: usize = {selected};\n"
        ),
    )
    .expect("write config.rs");
}
