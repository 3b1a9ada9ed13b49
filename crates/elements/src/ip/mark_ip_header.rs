//! MarkIPHeader — sets the IP header annotation
//!
//! Synopsis: `MarkIPHeader([OFFSET])`
//!
//! Ports: 1 input, 1 output, agnostic. Marks the bytes at OFFSET (default 0) from the start
//! of the packet as its IP header (the network header offset; the transport header follows
//! the IP header length when at least one byte of header is present). The packet is not
//! checked: use CheckIPHeader for that. Nothing is dropped.
//!
//! Arguments: `OFFSET` (unsigned, default 0).
//!
//! Handlers: none besides the router's.
//!
//! Example: `FromDump(f.pcap) -> MarkIPHeader(14) -> IPPrint -> Discard`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;

/// The MarkIPHeader element.
#[derive(Default)]
pub struct MarkIPHeader {
    offset: usize,
}

impl Element for MarkIPHeader {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.offset = args.read_p::<usize>("OFFSET")?.unwrap_or(0);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = self.offset;
        p.set_network_offset(off as isize);
        let hl = p.data().get(off).map(|b| ((b & 0x0f) as usize) * 4);
        if let Some(hl) = hl {
            p.set_transport_offset((off + hl) as isize);
        }
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "MarkIPHeader",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("mark_ip_header.rs"),
    make: || Box::new(MarkIPHeader::default()),
};
