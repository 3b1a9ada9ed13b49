//! IP6Mirror — swaps the source and destination of IPv6 packets
//!
//! Synopsis: `IP6Mirror`
//!
//! Ports: 1 input, 1 output, agnostic.
//!
//! Expects IPv6 packets with the network header annotation (or the IPv6 header at the
//! start). Swaps the IPv6 source and destination addresses and, when the next header right
//! after the IPv6 header is TCP or UDP and the packet holds its first 8 bytes, the source and
//! destination ports. Checksums stay valid: swapping fields does not change them. Packets too
//! short for an IPv6 header are dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `drops` (r), `drop_details` (r).
//!
//! Example: `CheckIP6Header -> IP6Mirror -> ...` answers each packet to its sender.

use sluice_core::Table;
use sluice_core::{drop_reasons, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_wire::ipv6::{HEADER_LEN, NH_TCP, NH_UDP};
use sluice_wire::Ipv6Packet;

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why IP6Mirror drops a packet.
    enum Reason { TooShort => "too short for an IPv6 header" }
}

/// The IP6Mirror element.
#[derive(Default)]
pub struct IP6Mirror {
    drops: Drops<Reason>,
}

impl Element for IP6Mirror {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        if p.len() < off + HEADER_LEN {
            self.drops.count(Reason::TooShort);
            return None;
        }
        let b = &mut p.data_mut()[off..];
        let mut ip = Ipv6Packet::new_unchecked(&mut *b);
        let (src, dst, nh) = (ip.src(), ip.dst(), ip.next_header());
        ip.set_src(&dst);
        ip.set_dst(&src);
        if (nh == NH_TCP || nh == NH_UDP) && b.len() >= HEADER_LEN + 8 {
            let t = &mut b[HEADER_LEN..];
            let sport = [t[0], t[1]];
            t.copy_within(2..4, 0);
            t[2..4].copy_from_slice(&sport);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6Mirror",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip6_mirror.rs"),
    make: || Box::<IP6Mirror>::default(),
};
