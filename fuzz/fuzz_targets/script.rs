#![no_main]
//! Fuzzes Script: configuration, substitutions, functions and runs (body in sluice-elements
//! script::fuzzing).

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::script::fuzzing::script(data);
});
