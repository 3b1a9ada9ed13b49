//! DropBroadcasts — drops link-level broadcast and multicast packets
//!
//! Synopsis: `DropBroadcasts`
//!
//! Ports: 1 input, 1 output, agnostic. Drops packets whose packet type annotation says they
//! arrived as link-level broadcast or multicast (set by FromDevice, FromDump with Ethernet
//! input, or HostEtherFilter); a router must not forward those (RFC 1812 §5.3.4). Other
//! packets pass unchanged.
//!
//! Handlers: `drops` (r): packets dropped.
//!
//! Example: `rt[1] -> DropBroadcasts -> PaintTee(1) -> ...`

use sluice_core::{Cx, Element, ElementClass, Handler, Packet, PacketType};

/// The DropBroadcasts element.
#[derive(Default)]
pub struct DropBroadcasts {
    drops: u64,
}

impl Element for DropBroadcasts {
    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        match p.anno().packet_type {
            PacketType::Broadcast | PacketType::Multicast => {
                self.drops += 1;
                None
            }
            _ => Some(p),
        }
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
    name: "DropBroadcasts",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("drop_broadcasts.rs"),
    make: || Box::new(DropBroadcasts::default()),
};
