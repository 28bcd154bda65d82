//! Embeds the benchmark model, its input and its reference output (raw bytes
//! from the fixture's `.npy` files) and puts memory.x on the linker path.
use std::{env, fs, path::PathBuf};

fn npy_data(path: &str) -> Vec<u8> {
    let b = fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + hlen..].to_vec()
}

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let model = env::var("ETCH_BENCH_MODEL").unwrap_or_else(|_| "dscnn_cm_m33_int8io".into());
    let dir = "../../tests/fixtures";
    fs::copy(format!("{dir}/{model}.pte"), out.join("model.pte")).unwrap();
    fs::write(out.join("input.bin"), npy_data(&format!("{dir}/{model}.input0.npy"))).unwrap();
    fs::write(out.join("expected.bin"), npy_data(&format!("{dir}/{model}.output0.npy"))).unwrap();
    fs::write(out.join("model_name.txt"), &model).unwrap();
    // Armv8-M Mainline runs on MPS2 AN505, whose secure memory map differs.
    let target = env::var("TARGET").unwrap_or_default();
    let memory = if target.starts_with("thumbv8m") { "memory-an505.x" } else { "memory-mps2.x" };
    fs::copy(memory, out.join("memory.x")).unwrap();
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-env-changed=ETCH_BENCH_MODEL");
    println!("cargo:rerun-if-changed=memory-mps2.x");
    println!("cargo:rerun-if-changed=memory-an505.x");
    println!("cargo:rerun-if-changed={dir}/{model}.pte");
}
