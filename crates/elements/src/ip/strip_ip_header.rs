//! StripIPHeader — strips the IP header from the front of packets
//!
//! Synopsis: `StripIPHeader`
//!
//! Ports: 1 input, 1 output, agnostic. Removes everything up to the end of the IP header
//! marked by the network header annotation (or the IP header at the start of the packet), so
//! the packet starts at its transport header; the annotations are kept, so `Unstrip` can
//! restore the header. Packets whose header does not fit are dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `drops` (r): packets dropped. `drop_details` (r): the same, by reason.
//!
//! Example: `CheckIPHeader -> StripIPHeader -> Print`

use sluice_core::{drop_reasons, Cx, Drops, Element, ElementClass, Handlers, Packet, Table};

use super::common::ip_offset;

drop_reasons! {
    /// Why StripIPHeader drops a packet.
    enum Reason { BadHeader => "bad IP header length" }
}

/// The StripIPHeader element.
#[derive(Default)]
pub struct StripIPHeader {
    drops: Drops<Reason>,
}

impl Element for StripIPHeader {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        let hl = p.data().get(off).map(|b| ((b & 0x0f) as usize) * 4);
        match hl {
            Some(hl) if hl >= 20 && off + hl <= p.len() => {
                p.set_network_offset(off as isize);
                p.pull_front(off + hl);
                p.set_transport_offset(0);
                Some(p)
            }
            _ => {
                self.drops.count(Reason::BadHeader);
                None
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StripIPHeader",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("strip_ip_header.rs"),
    make: || Box::new(StripIPHeader::default()),
};
