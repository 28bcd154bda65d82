//! Program load, Method::load with every kernel (`etch_kernels::KERNELS`),
//! inputs, execute and outputs, with verification off and then on
//! (`etch_fuzz::load_execute_both`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    etch_fuzz::load_execute_both(data);
});
