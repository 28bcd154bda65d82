//! Embeds the benchmark model, its input and its reference output (the
//! program's `.npy` files laid out in the tensors' dim orders, which
//! `.expected.json` records), sizes the static arena to the program's
//! planned buffer and puts memory.x on the linker path.
//!
//! `ETCH_BENCH_MODEL`: a program of tests/fixtures, tests/zoo or bench/models, by name
//! (default `dscnn_cm_m33_int8io`). `ETCH_BENCH_MEMORY`: the memory map
//! (`memory-<board>.x`; default by target: AN505 for Armv8-M, else MPS2).
use std::{env, fs, path::Path, path::PathBuf};

/// An `.npy` file's data (C order) with its shape and element size.
fn npy(path: &str) -> (Vec<u8>, Vec<usize>, usize) {
    let b = fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap();
    let elem = descr[2..].split('\'').next().unwrap().parse().unwrap();
    let shape = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape.split(',').filter_map(|d| d.trim().parse().ok()).collect();
    (b[10 + hlen..].to_vec(), shape, elem)
}

/// The integers of the first `"key": [...]` list after `after` in `text`.
fn int_list(text: &str, after: &str, key: &str) -> Vec<usize> {
    let rest = &text[text.find(after).unwrap_or_else(|| panic!("no {after}"))..];
    let rest = &rest[rest.find(key).unwrap_or_else(|| panic!("no {key} after {after}"))..];
    let list = rest[rest.find('[').unwrap() + 1..].split(']').next().unwrap();
    list.split(',').filter_map(|d| d.trim().parse().ok()).collect()
}

/// `.npy` data (logical C order) laid out in `dim_order`, as the program's
/// tensor holds it (the DS-CNN input's order moves a size-1 dim only; the
/// image models' inputs are channels-last).
fn physical(path: &str, dim_order: &[usize]) -> Vec<u8> {
    let (data, shape, elem) = npy(path);
    assert_eq!(shape.len(), dim_order.len(), "{path}: rank");
    // Physical strides (in elements) of each logical dim.
    let mut stride = vec![0; shape.len()];
    let mut s = 1;
    for &d in dim_order.iter().rev() {
        stride[d] = s;
        s *= shape[d];
    }
    let mut out = vec![0u8; data.len()];
    for (k, src) in data.chunks_exact(elem).enumerate() {
        let (mut rem, mut at) = (k, 0);
        for d in (0..shape.len()).rev() {
            at += rem % shape[d] * stride[d];
            rem /= shape[d];
        }
        out[at * elem..(at + 1) * elem].copy_from_slice(src);
    }
    out
}

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let model = env::var("ETCH_BENCH_MODEL").unwrap_or_else(|_| "dscnn_cm_m33_int8io".into());
    let dir = ["../../tests/fixtures", "../../tests/zoo", "../models"]
        .into_iter()
        .find(|d| Path::new(&format!("{d}/{model}.pte")).exists())
        .unwrap_or_else(|| panic!("{model}.pte is in none of tests/fixtures, tests/zoo, bench/models"));
    fs::copy(format!("{dir}/{model}.pte"), out.join("model.pte")).unwrap();
    let json = format!("{dir}/{model}.expected.json");
    let facts = fs::read_to_string(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    let (input, output) = (format!("{dir}/{model}.input0.npy"), format!("{dir}/{model}.output0.npy"));
    let input = physical(&input, &int_list(&facts, "\"inputs\"", "\"dim_order\""));
    let output = physical(&output, &int_list(&facts, "\"outputs\"", "\"dim_order\""));
    fs::write(out.join("input.bin"), input).unwrap();
    fs::write(out.join("expected.bin"), output).unwrap();
    fs::write(out.join("model_name.txt"), &model).unwrap();
    // The arena is exactly what the program plans (rounded up to 16 B).
    let arena = (int_list(&facts, "\"planned_buffers\"", "")[0] + 15) & !15;
    fs::write(out.join("arena.rs"), format!("const ARENA_BYTES: usize = {arena};\n")).unwrap();
    // Armv8-M Mainline runs on MPS2 AN505 unless told otherwise (the
    // Cortex-M55 on MPS3 AN547): their secure memory maps differ.
    let target = env::var("TARGET").unwrap_or_default();
    let default = if target.starts_with("thumbv8m") { "memory-an505.x" } else { "memory-mps2.x" };
    let memory = env::var("ETCH_BENCH_MEMORY").unwrap_or_else(|_| default.into());
    fs::copy(&memory, out.join("memory.x")).unwrap_or_else(|e| panic!("{memory}: {e}"));
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rerun-if-env-changed=ETCH_BENCH_MODEL");
    println!("cargo:rerun-if-env-changed=ETCH_BENCH_MEMORY");
    println!("cargo:rerun-if-changed={memory}");
    println!("cargo:rerun-if-changed={dir}/{model}.pte");
    println!("cargo:rerun-if-changed={dir}/{model}.expected.json");
}
