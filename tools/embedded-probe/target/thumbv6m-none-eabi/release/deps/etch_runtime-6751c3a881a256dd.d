/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/etch_runtime-6751c3a881a256dd.d: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/libetch_runtime-6751c3a881a256dd.rlib: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/libetch_runtime-6751c3a881a256dd.rmeta: /work/main/rust/etch-runtime/src/lib.rs /work/main/rust/etch-runtime/src/log.rs /work/main/rust/etch-runtime/src/backend.rs /work/main/rust/etch-runtime/src/context.rs /work/main/rust/etch-runtime/src/loader.rs /work/main/rust/etch-runtime/src/memory.rs /work/main/rust/etch-runtime/src/meta.rs /work/main/rust/etch-runtime/src/method.rs /work/main/rust/etch-runtime/src/program.rs /work/main/rust/etch-runtime/src/registry.rs /work/main/rust/etch-runtime/src/state.rs /work/main/rust/etch-runtime/src/tensor.rs

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
