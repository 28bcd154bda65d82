/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/etch_pte-9ab915d093ad0708.d: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/libetch_pte-9ab915d093ad0708.rlib: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/libetch_pte-9ab915d093ad0708.rmeta: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/rust/etch-pte/src/lib.rs:
/work/main/rust/etch-pte/src/error.rs:
/work/main/rust/etch-pte/src/file.rs:
/work/main/rust/etch-pte/src/flatbuffer.rs:
/work/main/rust/etch-pte/src/schema.rs:
/work/main/rust/etch-pte/src/tensor.rs:
/work/main/rust/etch-pte/src/types.rs:
/work/main/rust/etch-pte/src/verify.rs:
