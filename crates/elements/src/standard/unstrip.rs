//! Unstrip — puts bytes back on the front of packets
//!
//! Synopsis: `Unstrip(LENGTH)`
//!
//! Ports: 1 input, 1 output, agnostic. Moves the start of each packet back by LENGTH bytes,
//! restoring bytes removed earlier by Strip (or exposing headroom; if the headroom is too small
//! the packet is moved to a larger buffer and the new bytes are zero).
//!
//! Arguments:
//! - `LENGTH` (integer, mandatory, at most 262144: `MAX_PACKET_LEN`): bytes to put back.
//!
//! Handlers: `length` (r).
//!
//! Example: `... -> Strip(14) -> CheckIPHeader -> Unstrip(14) -> Queue -> ToDevice(eth0)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::{Args, PacketLen};

/// The Unstrip element.
#[derive(Default)]
pub struct Unstrip {
    len: usize,
}

impl Element for Unstrip {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.len = args.read_mp::<PacketLen>("LENGTH")?.0;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.headroom() >= self.len {
            p.unstrip(self.len);
        } else {
            p.push_front(self.len).fill(0);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("length", |e| e.len).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Unstrip",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("unstrip.rs"),
    make: || Box::new(Unstrip::default()),
};
