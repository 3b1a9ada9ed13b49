//! Fuzz target: arbitrary records of frames into a spanning-tree switch
//! (`sluice_elements::etherswitch::fuzzing::bpdu`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::etherswitch::fuzzing::bpdu(data);
});
