//! GetIP6Address — sets the destination IPv6 address annotation from packet data
//!
//! Synopsis: `GetIP6Address(OFFSET)`
//!
//! Ports: 1 input, 1 output, agnostic. Copies the 16 bytes at OFFSET from the start of the
//! packet into the destination IPv6 address annotation (24 is the IPv6 destination address
//! when the packet starts with its IPv6 header). Packets too short to hold the address are
//! dropped and counted.
//!
//! Arguments: `OFFSET` (unsigned, mandatory).
//!
//! Handlers: `drops` (r): packets too short. `drop_details` (r): the same, by reason.
//!
//! Example: `CheckIP6Header -> GetIP6Address(24) -> LookupIP6Route(...)`

use std::net::Ipv6Addr;

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why GetIP6Address drops a packet.
    enum Reason { TooShort => "too short for the address" }
}

/// The GetIP6Address element.
#[derive(Default)]
pub struct GetIP6Address {
    offset: usize,
    drops: Drops<Reason>,
}

impl Element for GetIP6Address {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.offset = args.read_mp("OFFSET")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let o = self.offset;
        let a = p.data().get(o..o.saturating_add(16)).map(|b| {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            Ipv6Addr::from(a)
        });
        match a {
            Some(a) => {
                p.set_dst_ip6_anno(a);
                Some(p)
            }
            None => {
                self.drops.count(Reason::TooShort);
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
    name: "GetIP6Address",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("get_ip6_address.rs"),
    make: || Box::<GetIP6Address>::default(),
};
