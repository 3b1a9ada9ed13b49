//! DecIP6HLIM — decrements the IPv6 hop limit, emits expired packets on output 1
//!
//! Synopsis: `DecIP6HLIM`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IPv6 packets with the network header annotation (or starting with their IPv6
//! header). A packet whose hop limit is 0 or 1 has expired: it goes, unchanged, to output 1
//! (typically an `ICMP6Error(ADDR, 3, 0)`, time exceeded in transit), or is dropped if output
//! 1 is not connected. Other packets get their hop limit decremented (IPv6 has no header
//! checksum to update) and leave by output 0. Packets too short to hold an IPv6 header are
//! dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `drops` (r): expired packets, sent to output 1 or dropped (Click's count).
//! `drop_details` (r): packets dropped, by reason (too short; expired with output 1
//! unconnected).
//!
//! Example: `CheckIP6Header -> dt :: DecIP6HLIM -> ...; dt[1] -> ICMP6Error(2001:db8::1, 3,
//! 0) -> ...`

use sluice_core::{drop_reasons, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_core::{toolkit::Verdict, Table};
use sluice_wire::ipv6::HEADER_LEN;
use sluice_wire::Ipv6Packet;

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why DecIP6HLIM drops a packet.
    enum Reason { Malformed => "too short for an IPv6 header" }
}

/// The DecIP6HLIM element.
#[derive(Default)]
pub struct DecIP6HLIM {
    expired: u64,
    drops: Drops<Reason>,
}

impl Element for DecIP6HLIM {
    fn action(&mut self, mut p: Packet, _cx: &mut Cx) -> Verdict {
        let off = ip_offset(&p);
        if p.len() < off + HEADER_LEN {
            self.drops.count(Reason::Malformed);
            return Verdict::Gone;
        }
        let mut ip = Ipv6Packet::new_unchecked(&mut p.data_mut()[off..]);
        let hlim = ip.hop_limit();
        if hlim <= 1 {
            self.expired += 1;
            return Verdict::Out(1, p);
        }
        ip.set_hop_limit(hlim - 1);
        Verdict::Out(0, p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.expired)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DecIP6HLIM",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("dec_ip6_hlim.rs"),
    make: || Box::<DecIP6HLIM>::default(),
};
