//! UnstripIPHeader — restores the IP header stripped from the front of packets
//!
//! Synopsis: `UnstripIPHeader`
//!
//! Ports: 1 input, 1 output, agnostic. If the network header annotation lies before the
//! packet's data (after StripIPHeader, say), moves the data start back to it; other packets
//! pass unchanged.
//!
//! Arguments: none.
//!
//! Handlers: none besides the router's.
//!
//! Example: `CheckIPHeader -> StripIPHeader -> ... -> UnstripIPHeader -> EtherEncap(...)`

use sluice_core::{Cx, Element, ElementClass, Packet};

/// The UnstripIPHeader element.
#[derive(Default)]
pub struct UnstripIPHeader;

impl Element for UnstripIPHeader {
    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if let Some(off) = p.network_offset().filter(|&o| o < 0) {
            p.unstrip(off.unsigned_abs());
        }
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "UnstripIPHeader",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("unstrip_ip_header.rs"),
    make: || Box::new(UnstripIPHeader),
};
