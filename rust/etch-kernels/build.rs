//! `etch_thumb2`: the target has Thumb-2 (Armv7-M, Armv7E-M, Armv8-M
//! Mainline), so the scalar kernels may use `ldrsb` with writeback and `mla`
//! in `asm!`. Stable Rust exposes no Arm target features to `cfg`, so the
//! target name decides.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(etch_thumb2)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv7") || target.starts_with("thumbv8m.main") {
        println!("cargo::rustc-cfg=etch_thumb2");
    }
}
