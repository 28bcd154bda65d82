/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/etch_embedded_probe-87d09993ae4236f6.d: src/lib.rs

/work/main/tools/embedded-probe/target/thumbv6m-none-eabi/release/deps/libetch_embedded_probe-87d09993ae4236f6.a: src/lib.rs

src/lib.rs:
