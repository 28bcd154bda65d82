//! Bindings to Zephyr's DMIC API, generated from Zephyr's own header with the
//! include paths and defines of this very build (zephyr-lang-rust passes them
//! to cargo as INCLUDE_DIRS / INCLUDE_DEFINES, as its zephyr-sys does). The
//! API's functions are `static inline`: bindgen writes a C wrapper for each
//! (`dmic_read__extern`, ...), which cc compiles into this crate.

use std::env;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(env::var("OUT_DIR").unwrap());
    let zephyr_base = env::var("ZEPHYR_BASE").expect("ZEPHYR_BASE");
    let target = env::var("TARGET").unwrap();
    let includes: Vec<String> = env::var("INCLUDE_DIRS")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let defines: Vec<String> = env::var("INCLUDE_DEFINES")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    let wrappers = out.join("dmic_wrappers.c");

    let mut b = bindgen::Builder::default()
        .header("src/dmic.h")
        .clang_arg(format!("--target={target}"))
        .clang_arg("-DRUST_BINDGEN")
        .clang_arg(format!("-I{zephyr_base}/lib/libc/minimal/include"))
        .use_core()
        .allowlist_function("dmic_configure|dmic_trigger|dmic_read|dmic_build_channel_map")
        .allowlist_type("dmic_cfg|pcm_stream_cfg|dmic_trigger")
        .allowlist_var("PDM_CHAN_.*")
        .derive_default(true)
        .wrap_static_fns(true)
        .wrap_static_fns_path(&wrappers);
    for i in &includes {
        b = b.clang_arg(format!("-I{i}"));
    }
    for d in &defines {
        b = b.clang_arg(format!("-D{d}"));
    }
    b.generate()
        .expect("bindgen of <zephyr/audio/dmic.h>")
        .write_to_file(out.join("dmic.rs"))
        .unwrap();

    // The wrappers include the header by the path bindgen saw.
    let mut cc = cc::Build::new();
    cc.file(wrappers.with_extension("c"))
        .include(env::current_dir().unwrap())
        .include(format!("{zephyr_base}/lib/libc/minimal/include"));
    for i in &includes {
        cc.include(i);
    }
    for d in &defines {
        match d.split_once('=') {
            Some((k, v)) => cc.define(k, v),
            None => cc.define(d, None),
        };
    }
    cc.warnings(false).compile("dmic_wrappers");
    println!("cargo:rerun-if-changed=src/dmic.h");
}
