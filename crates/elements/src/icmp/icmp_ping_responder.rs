//! ICMPPingResponder — answers ICMP echo requests
//!
//! Synopsis: `ICMPPingResponder`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Input packets are IP packets (network header annotation set, or the IP header at the
//! start). An ICMP echo request (type 8, first fragment, valid lengths) is turned into an echo
//! reply in place: source and destination swapped, TTL 255, ICMP type 0, both checksums
//! recomputed, destination IP annotation set to the new destination; it leaves by output 0.
//! Every other packet goes to output 1 if connected, otherwise it is dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `replies` (r), `drops`, `drop_details` (r): non-request packets
//! dropped (output 1 unconnected).
//!
//! Example: `rt[0] -> ICMPPingResponder -> rt` (answer pings to the router itself)

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{Batch, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_wire::icmp::{TYPE_ECHO, TYPE_ECHO_REPLY};
use sluice_wire::ipv4::PROTO_ICMP;
use sluice_wire::{IcmpPacket, Ipv4Packet};

use crate::ip::common::ip_offset;

/// The ICMPPingResponder element.
#[derive(Default)]
pub struct ICMPPingResponder {
    replies: u64,
}

impl ICMPPingResponder {
    fn sort(&mut self, mut p: Packet) -> Verdict {
        let off = ip_offset(&p);
        let ok = match Ipv4Packet::new_checked(&p.data()[off..]) {
            Ok(ip) => {
                ip.protocol() == PROTO_ICMP
                    && !ip.is_fragment()
                    && IcmpPacket::new_checked(ip.payload())
                        .map(|i| i.msg_type() == TYPE_ECHO)
                        .unwrap_or(false)
            }
            Err(_) => false,
        };
        if !ok {
            return Verdict::Out(1, p);
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        let (s, d) = (ip.src(), ip.dst());
        ip.set_src(d);
        ip.set_dst(s);
        ip.set_ttl(255);
        ip.fill_checksum();
        let mut icmp = IcmpPacket::new_unchecked(ip.payload_mut());
        icmp.set_msg_type(TYPE_ECHO_REPLY);
        icmp.fill_checksum();
        p.set_dst_ip_anno(s);
        self.replies += 1;
        Verdict::Out(0, p)
    }
}

impl Element for ICMPPingResponder {
    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, _| self.sort(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, _| self.sort(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("replies", |e| e.replies)
            .unconnected_drops()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPPingResponder",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("icmp_ping_responder.rs"),
    make: || Box::new(ICMPPingResponder::default()),
};
