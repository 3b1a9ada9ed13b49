//! MarkMACHeader — sets the MAC header annotation
//!
//! Synopsis: `MarkMACHeader([OFFSET, LENGTH])`
//!
//! Ports: 1 input, 1 output, agnostic. Marks the MAC header OFFSET bytes into each packet.
//! With a LENGTH, the network header is marked LENGTH bytes after it, as Click's
//! `set_mac_header(p, len)` does. Offsets past the packet's end are clamped to it.
//!
//! Arguments:
//! - `OFFSET` (integer, default 0).
//! - `LENGTH` (integer, default 0: the network header is left alone).
//!
//! Handlers: none besides the router's.
//!
//! Example: `FromDump(trace.pcap) -> MarkMACHeader(0, 14) -> Strip(14) -> ...`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;

/// The MarkMACHeader element.
#[derive(Default)]
pub struct MarkMACHeader {
    offset: u32,
    length: u32,
}

impl Element for MarkMACHeader {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.offset = args.read_p("OFFSET")?.unwrap_or(0);
        self.length = args.read_p("LENGTH")?.unwrap_or(0);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.set_mac_offset(self.offset as isize);
        if self.length > 0 {
            p.set_network_offset(self.offset as isize + self.length as isize);
        }
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "MarkMACHeader",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("mark_mac_header.rs"),
    make: || Box::new(MarkMACHeader::default()),
};
