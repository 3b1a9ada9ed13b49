//! StripToNetworkHeader — strips everything before the network header
//!
//! Synopsis: `StripToNetworkHeader`
//!
//! Ports: 1 input, 1 output, agnostic. Moves the start of each packet to its network header
//! (set by MarkIPHeader, CheckIPHeader, …); the stripped bytes stay in the headroom.
//! Packets without a network header pass unchanged and are counted in `unmarked`.
//!
//! Arguments: none.
//!
//! Handlers: `unmarked` (r).
//!
//! Example: `... -> CheckIPHeader(14) -> StripToNetworkHeader -> IPPrint -> ...`

use sluice_core::{Cx, Element, ElementClass, Handlers, Packet, Table};

/// The StripToNetworkHeader element.
#[derive(Default)]
pub struct StripToNetworkHeader {
    unmarked: u64,
}

impl Element for StripToNetworkHeader {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        match p.network_offset() {
            Some(off) if off > 0 => {
                p.strip_to_network_header();
            }
            Some(_) => {}
            None => self.unmarked += 1,
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("unmarked", |e| e.unmarked).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StripToNetworkHeader",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("strip_to_network_header.rs"),
    make: || Box::new(StripToNetworkHeader::default()),
};
