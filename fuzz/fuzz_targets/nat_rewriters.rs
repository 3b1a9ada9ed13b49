//! Fuzz target: arbitrary bytes as one packet through the elements of
//! `sluice_elements::fuzzing::nat_rewriters`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::fuzzing::nat_rewriters(data);
});
