//! Fuzz target: the pcap reader (and a write/read round trip) over arbitrary bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    sluice_wire::fuzzing::pcap_reader(data);
});
