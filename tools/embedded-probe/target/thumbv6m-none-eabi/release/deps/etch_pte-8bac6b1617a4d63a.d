/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/etch_pte-8bac6b1617a4d63a.d: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/libetch_pte-8bac6b1617a4d63a.rlib: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/libetch_pte-8bac6b1617a4d63a.rmeta: /work/main/rust/etch-pte/src/lib.rs /work/main/rust/etch-pte/src/error.rs /work/main/rust/etch-pte/src/file.rs /work/main/rust/etch-pte/src/flatbuffer.rs /work/main/rust/etch-pte/src/schema.rs /work/main/rust/etch-pte/src/tensor.rs /work/main/rust/etch-pte/src/types.rs /work/main/rust/etch-pte/src/verify.rs

/work/main/rust/etch-pte/src/lib.rs:
/work/main/rust/etch-pte/src/error.rs:
/work/main/rust/etch-pte/src/file.rs:
/work/main/rust/etch-pte/src/flatbuffer.rs:
/work/main/rust/etch-pte/src/schema.rs:
/work/main/rust/etch-pte/src/tensor.rs:
/work/main/rust/etch-pte/src/types.rs:
/work/main/rust/etch-pte/src/verify.rs:
