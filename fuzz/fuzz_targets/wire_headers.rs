//! Fuzz target: every header view of `sluice-wire` over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_wire::fuzzing::wire_headers(data);
});
