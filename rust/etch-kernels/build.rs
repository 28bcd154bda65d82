//! `etch_thumb2`: the target has Thumb-2 (Armv7-M, Armv7E-M, Armv8-M
//! Mainline), so the scalar kernels may use `ldrsb` with writeback and `mla`
//! in `asm!`. Stable Rust exposes no Arm target features to `cfg`, so the
//! target name decides. `etch_v6m`: Armv6-M (Cortex-M0/M0+/M1), whose
//! scalar kernels have `asm!` loops of their own.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(etch_thumb2)");
    println!("cargo::rustc-check-cfg=cfg(etch_v6m)");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.starts_with("thumbv7") || target.starts_with("thumbv8m.main") {
        println!("cargo::rustc-cfg=etch_thumb2");
    }
    if target.starts_with("thumbv6m") {
        println!("cargo::rustc-cfg=etch_v6m");
    }
}
