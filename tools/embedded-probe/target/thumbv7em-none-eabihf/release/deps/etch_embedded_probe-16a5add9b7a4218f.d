/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/etch_embedded_probe-16a5add9b7a4218f.d: src/lib.rs

/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/libetch_embedded_probe-16a5add9b7a4218f.a: src/lib.rs

src/lib.rs:
