//! MarkIP6Header — sets the IPv6 header annotation
//!
//! Synopsis: `MarkIP6Header([OFFSET])`
//!
//! Ports: 1 input, 1 output, agnostic. Marks the bytes at OFFSET (default 0) from the start
//! of the packet as its IPv6 header (the network header annotation), and the bytes 40 later
//! as its transport header when the packet is that long. The packet is not checked and not
//! trimmed: use CheckIP6Header for that. Nothing is dropped.
//!
//! Arguments: `OFFSET` (unsigned, default 0).
//!
//! Handlers: none besides the router's.
//!
//! Example: `FromDump(f.pcap) -> MarkIP6Header(14) -> IP6Print -> Discard`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Packet};
use sluice_lang::args::Args;
use sluice_wire::ipv6::HEADER_LEN;

/// The MarkIP6Header element.
#[derive(Default)]
pub struct MarkIP6Header {
    offset: usize,
}

impl Element for MarkIP6Header {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.offset = args.read_p("OFFSET")?.unwrap_or(0);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = self.offset;
        p.set_network_offset(off as isize);
        if p.len() >= off + HEADER_LEN {
            p.set_transport_offset((off + HEADER_LEN) as isize);
        }
        Some(p)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "MarkIP6Header",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("mark_ip6_header.rs"),
    make: || Box::<MarkIP6Header>::default(),
};
