#![no_main]
//! Fuzzes classifier compilation and classification (body in sluice-elements classify::fuzzing).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::classify::fuzzing::classifier(data);
});
