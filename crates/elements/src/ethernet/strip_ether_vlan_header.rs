//! StripEtherVLANHeader — removes an 802.1Q or plain Ethernet header
//!
//! Synopsis: `StripEtherVLANHeader([NATIVE_VLAN])`
//!
//! Ports: 1 input, output 0 agnostic, optional push output 1. A frame of type 0x8100 (with a
//! whole 18-byte header) gets its TCI stored in the VLAN TCI annotation and loses its 18-byte
//! header. Any other frame of at least 14 bytes is taken to be on NATIVE_VLAN: the annotation
//! is set to NATIVE_VLAN and the 14-byte header is removed; if NATIVE_VLAN is negative, such
//! frames leave on output 1 instead, or are dropped and counted when output 1 is not
//! connected. Frames shorter than 14 bytes are dropped and counted.
//!
//! Arguments:
//! - `NATIVE_VLAN` (integer up to 0xFFF, default 0; negative: untagged frames are refused).
//!
//! Handlers: `drops`, `drop_details` (r): packets dropped (runt frames; untagged frames with
//! output 1 unconnected).
//!
//! Example: `FromDevice(eth0) -> StripEtherVLANHeader(-1) -> CheckIPHeader -> ...`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;

use super::vlan::TPID_8021Q;

drop_reasons! {
    /// Why StripEtherVLANHeader drops a packet.
    enum Reason { Runt => "runt frame" }
}

/// The StripEtherVLANHeader element.
#[derive(Default)]
pub struct StripEtherVLANHeader {
    native: Option<u16>,
    drops: Drops<Reason>,
}

impl Element for StripEtherVLANHeader {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let n: i64 = args.read_p("NATIVE_VLAN")?.unwrap_or(0);
        if n > 0xFFF {
            args.error("bad NATIVE_VLAN");
            return Err(());
        }
        self.native = (n >= 0).then_some(n as u16);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        let d = p.data();
        if d.len() >= 18 && u16::from_be_bytes([d[12], d[13]]) == TPID_8021Q {
            p.anno_mut().vlan_tci = u16::from_be_bytes([d[14], d[15]]);
            p.pull_front(18);
            Some(p)
        } else if d.len() < 14 {
            self.drops.count(Reason::Runt);
            None
        } else if let Some(n) = self.native {
            p.anno_mut().vlan_tci = n;
            p.pull_front(14);
            Some(p)
        } else {
            cx.push_one(1, p);
            None
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StripEtherVLANHeader",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("strip_ether_vlan_header.rs"),
    make: || Box::new(StripEtherVLANHeader::default()),
};
