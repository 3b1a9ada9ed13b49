//! Fuzz target: arbitrary bytes as one packet through the router elements of
//! `sluice_elements::fuzzing::ip6_nd`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::fuzzing::ip6_nd(data);
});
