//! The whole-file verifier and every accessor it promises cannot fail
//! (`etch_fuzz::reader`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    etch_fuzz::reader(data);
});
