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
//! Arguments: none.
//!
//! Handlers: `drops` (r): packets dropped as malformed. `drop_details` (r): the same, by
//! reason.
//!
//! Example: `FromDump(crafted.pcap) -> Strip(14) -> SetIPChecksum -> ToDump(fixed.pcap, ENCAP IP)`

use sluice_core::{drop_reasons, Cx, Drops, Element, ElementClass, Handlers, Packet, Table};
use sluice_wire::ipv4::HEADER_LEN;
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why SetIPChecksum drops a packet.
    enum Reason { BadHeader => "bad IP header" }
}

/// The SetIPChecksum element.
#[derive(Default)]
pub struct SetIPChecksum {
    drops: Drops<Reason>,
}

impl Element for SetIPChecksum {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        let header = &mut p.data_mut()[off..];
        let hl = header.first().map_or(0, |b| ((b & 0x0f) as usize) * 4);
        if header.len() < HEADER_LEN || hl < HEADER_LEN || hl > header.len() {
            self.drops.count(Reason::BadHeader);
            if self.drops.total() == 1 {
                eprintln!("SetIPChecksum: bad input packet");
            }
            return None;
        }
        Ipv4Packet::new_unchecked(&mut header[..hl]).fill_checksum();
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
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
