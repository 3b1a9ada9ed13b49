//! SetIPChecksum — sets the IPv4 header checksum
//!
//! Synopsis: `SetIPChecksum()`
//!
//! Ports: 1 input, 1 output, agnostic.
//!
//! Expects IP packets with the network header annotation (or the IP header at the start).
//! Recomputes the header checksum over the header length the header states and writes it.
//! A packet shorter than 20 bytes, with a header length below 20 or past the packet's end is
//! dropped and counted (the first such drop prints `SetIPChecksum: bad input packet`).
//! Elements that change IP headers (DecIPTTL, SetIPDSCP, …) already update the checksum:
//! this element is for headers written by other means.
//!
//! Handlers: `drops` (r): packets dropped as malformed.
//!
//! Example: `FromDump(crafted.pcap) -> Strip(14) -> SetIPChecksum -> ToDump(fixed.pcap, ENCAP IP)`

use sluice_core::{Cx, Element, ElementClass, Handler, Packet};
use sluice_wire::ipv4::HEADER_LEN;
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

/// The SetIPChecksum element.
#[derive(Default)]
pub struct SetIPChecksum {
    drops: u64,
}

impl Element for SetIPChecksum {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        let header = &mut p.data_mut()[off..];
        let hl = header.first().map_or(0, |b| ((b & 0x0f) as usize) * 4);
        if header.len() < HEADER_LEN || hl < HEADER_LEN || hl > header.len() {
            self.drops += 1;
            if self.drops == 1 {
                eprintln!("SetIPChecksum: bad input packet");
            }
            return None;
        }
        Ipv4Packet::new_unchecked(&mut header[..hl]).fill_checksum();
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "drops").then(|| self.drops.to_string())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetIPChecksum",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_ip_checksum.rs"),
    make: || Box::new(SetIPChecksum::default()),
};
