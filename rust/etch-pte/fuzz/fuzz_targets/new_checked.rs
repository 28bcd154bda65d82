//! Fuzzes the whole-file verifier and, on files it accepts, every accessor
//! the verifier promises cannot fail.
#![no_main]

use etch_pte::{PteFile, Value};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let checked = PteFile::new_checked(data);
    let unchecked = PteFile::new_unchecked(data).and_then(|f| etch_pte::verify::verify(&f));
    assert_eq!(checked.is_ok(), unchecked.is_ok());
    if let Ok(file) = checked {
        // After new_checked, reading values and instructions must not fail.
        for plan in file.program().execution_plan().unwrap().iter() {
            let plan = plan.unwrap();
            for v in plan.values().unwrap().iter() {
                if let Value::Tensor(t) = v.unwrap().value().unwrap() {
                    etch_pte::tensor::nbytes(&t).unwrap();
                }
            }
            for c in plan.chains().unwrap().iter() {
                for i in c.unwrap().instructions().unwrap().iter() {
                    i.unwrap().args().unwrap();
                }
            }
        }
    }
});
