//! Fuzz target: records of DFQ transmission batches into a DFQDemux
//! (`sluice_elements::dfq::fuzzing::demux`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_elements::dfq::fuzzing::demux(data);
});
