//! Strip — removes bytes from the front of packets
//!
//! Synopsis: `Strip(LENGTH)`
//!
//! Ports: 1 input, 1 output, agnostic. Removes LENGTH bytes from the front of each packet (the
//! bytes stay in the buffer's headroom, so Unstrip can restore them). A packet shorter than
//! LENGTH is dropped and counted.
//!
//! Arguments:
//! - `LENGTH` (integer, mandatory, at most 262144: `MAX_PACKET_LEN`): bytes to remove.
//!
//! Handlers: `length` (r), `drops`, `drop_details` (r, packets shorter than LENGTH).
//!
//! Example: `FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> ...`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, PacketLen};

drop_reasons! {
    /// Why Strip drops a packet.
    enum Reason { TooShort => "shorter than LENGTH" }
}

/// The Strip element.
#[derive(Default)]
pub struct Strip {
    len: usize,
    drops: Drops<Reason>,
}

impl Element for Strip {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.len = args.read_mp::<PacketLen>("LENGTH")?.0;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < self.len {
            self.drops.count(Reason::TooShort);
            return None;
        }
        p.pull_front(self.len);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("length", |e| e.len)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Strip",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("strip.rs"),
    make: || Box::new(Strip::default()),
};
