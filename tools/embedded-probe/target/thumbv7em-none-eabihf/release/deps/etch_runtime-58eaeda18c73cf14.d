/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/etch_runtime-58eaeda18c73cf14.d: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/libetch_runtime-58eaeda18c73cf14.rlib: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

/work/main/tools/embedded-probe/target/thumbv7em-none-eabihf/release/deps/libetch_runtime-58eaeda18c73cf14.rmeta: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

/work/main/rust/etch-runtime/src/lib.rs:
/work/main/rust/etch-runtime/src/log.rs:
/work/main/rust/etch-runtime/src/backend.rs:
/work/main/rust/etch-runtime/src/context.rs:
/work/main/rust/etch-runtime/src/loader.rs:
/work/main/rust/etch-runtime/src/memory.rs:
/work/main/rust/etch-runtime/src/meta.rs:
/work/main/rust/etch-runtime/src/method.rs:
/work/main/rust/etch-runtime/src/program.rs:
/work/main/rust/etch-runtime/src/registry.rs:
/work/main/rust/etch-runtime/src/state.rs:
/work/main/rust/etch-runtime/src/tensor.rs:
