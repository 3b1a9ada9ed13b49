//! IPMirror — swaps the source and destination of IP packets
//!
//! Synopsis: `IPMirror([DST_ANNO])`
//!
//! Ports: 1 input, 1 output, agnostic.
//!
//! Expects IP packets with the network header annotation (or the IP header at the start).
//! Swaps the IP source and destination addresses; in first fragments of TCP and UDP packets
//! also the source and destination ports, and in TCP the sequence and acknowledgement
//! numbers (when the packet holds them). Checksums stay valid: swapping fields does not
//! change them. With DST_ANNO the destination IP annotation becomes the new destination.
//! Packets too short for an IP header are dropped and counted in `drops` and `drop_details`.
//!
//! Arguments: `DST_ANNO` (bool, default true).
//!
//! Handlers: `drops` (r), `drop_details` (r).
//!
//! Example: `FromIPSummaryDump(in, STOP true) -> IPMirror -> ToIPSummaryDump(-, FIELDS src dst)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;
use sluice_wire::ipv4::{PROTO_TCP, PROTO_UDP};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why IPMirror drops a packet.
    enum Reason { TooShort => "too short for an IP header" }
}

/// The IPMirror element.
pub struct IPMirror {
    dst_anno: bool,
    drops: Drops<Reason>,
}

impl Default for IPMirror {
    fn default() -> Self {
        IPMirror {
            dst_anno: true,
            drops: Drops::default(),
        }
    }
}

impl Element for IPMirror {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.dst_anno = args.read_p("DST_ANNO")?.unwrap_or(self.dst_anno);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let off = ip_offset(&p);
        if p.len() < off + 20 {
            self.drops.count(Reason::TooShort);
            return None;
        }
        let b = &mut p.data_mut()[off..];
        let mut ip = Ipv4Packet::new_unchecked(&mut *b);
        let (src, dst) = (ip.src(), ip.dst());
        ip.set_src(dst);
        ip.set_dst(src);
        let (proto, hl, first) = (ip.protocol(), ip.header_len(), ip.frag_offset() == 0);
        if (proto == PROTO_TCP || proto == PROTO_UDP) && first && b.len() >= hl + 8 {
            let t = &mut b[hl..];
            let (s, d) = ([t[0], t[1]], [t[2], t[3]]);
            t[0..2].copy_from_slice(&d);
            t[2..4].copy_from_slice(&s);
            if proto == PROTO_TCP && t.len() >= 12 {
                let seq: [u8; 4] = [t[4], t[5], t[6], t[7]];
                t.copy_within(8..12, 4);
                t[8..12].copy_from_slice(&seq);
            }
        }
        if self.dst_anno {
            p.set_dst_ip_anno(src);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPMirror",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip_mirror.rs"),
    make: || Box::<IPMirror>::default(),
};
