//! Fuzz target: FromDump's record handling (pcap parsing, link-layer header offsets,
//! annotations) over arbitrary bytes. Must never panic; damaged files end with an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for force_ip in [false, true] {
        let parsed = sluice_elements::io::from_dump::parse_pcap(data, force_ip);
        for p in &parsed.packets {
            let _ = p.network_header();
            let _ = sluice_elements::io::extra_length(p);
        }
    }
});
