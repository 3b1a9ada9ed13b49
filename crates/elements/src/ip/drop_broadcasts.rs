//! DropBroadcasts — drops link-level broadcast and multicast packets
//!
//! Synopsis: `DropBroadcasts`
//!
//! Ports: 1 input, 1 output, agnostic. Drops packets whose packet type annotation says they
//! arrived as link-level broadcast or multicast (set by FromDevice, FromDump with Ethernet
//! input, or HostEtherFilter); a router must not forward those (RFC 1812 §5.3.4). Other
//! packets pass unchanged.
//!
//! Arguments: none.
//!
//! Handlers: `drops` (r): packets dropped. `drop_details` (r): the same, by reason.
//!
//! Example: `rt[1] -> DropBroadcasts -> PaintTee(1) -> ...`

use sluice_core::Table;
use sluice_core::{drop_reasons, Cx, Drops, Element, ElementClass, Handlers, Packet, PacketType};

drop_reasons! {
    /// Why DropBroadcasts drops a packet.
    enum Reason { Broadcast => "link-level broadcast or multicast" }
}

/// The DropBroadcasts element.
#[derive(Default)]
pub struct DropBroadcasts {
    drops: Drops<Reason>,
}

impl Element for DropBroadcasts {
    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        match p.anno().packet_type {
            PacketType::Broadcast | PacketType::Multicast => {
                self.drops.count(Reason::Broadcast);
                None
            }
            _ => Some(p),
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
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
