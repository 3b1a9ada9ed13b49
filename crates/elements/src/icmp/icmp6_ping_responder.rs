//! ICMP6PingResponder — answers ICMPv6 echo requests
//!
//! Synopsis: `ICMP6PingResponder`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Sluice's own element (Click has no IPv6 ping responder): the IPv6 counterpart of
//! ICMPPingResponder. Input packets are IPv6 packets (network header annotation set, or the
//! IPv6 header at the start). An ICMPv6 echo request (type 128, RFC 4443 §4.1) directly
//! after the fixed IPv6 header, with a valid checksum, from a unicast source to a unicast
//! destination, is turned into an echo reply in place: source and destination swapped, hop
//! limit 255, ICMPv6 type 129, checksum recomputed, destination IPv6 annotation set to the
//! new destination; it leaves by output 0.
//!
//! Every other packet goes to output 1 if connected, otherwise it is dropped and counted by
//! reason: not an echo request (including requests behind extension headers, such as
//! fragments), bad IPv6 header, bad ICMPv6 checksum, bad source address (`::` or multicast),
//! multicast destination (a reply must come from a unicast address of the interface, which
//! the responder does not know, RFC 4443 §4.2).
//!
//! Arguments: none.
//!
//! Handlers: `replies` (r), `drops`, `drop_details` (r): packets not answered and dropped
//! (output 1 unconnected).
//!
//! Example: `rt[0] -> ICMP6PingResponder -> rt` (answer pings to the router itself)

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::Table;
use sluice_core::{drop_reasons, Batch, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_wire::icmpv6::{TYPE_ECHO_REPLY, TYPE_ECHO_REQUEST};
use sluice_wire::ipv6::NH_ICMPV6;
use sluice_wire::{Icmpv6Packet, Ipv6Packet};

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why a packet is not answered.
    enum Reason {
        NotEcho => "not an echo request",
        BadHeader => "bad IPv6 header",
        BadChecksum => "bad ICMPv6 checksum",
        BadSource => "bad source address",
        Multicast => "multicast destination",
    }
}

/// Why IPv6 packet `b` gets no reply, if so.
fn refuse(b: &[u8]) -> Option<Reason> {
    let Ok(ip) = Ipv6Packet::new_checked(b) else {
        return Some(Reason::BadHeader);
    };
    if ip.next_header() != NH_ICMPV6 {
        return Some(Reason::NotEcho);
    }
    let m = match Icmpv6Packet::new_checked(ip.payload()) {
        Ok(m) if m.msg_type() == TYPE_ECHO_REQUEST && m.code() == 0 => m,
        _ => return Some(Reason::NotEcho),
    };
    let (src, dst) = (ip.src(), ip.dst());
    if !m.verify_checksum(&src, &dst) {
        return Some(Reason::BadChecksum);
    }
    if src.is_unspecified() || src.is_multicast() {
        return Some(Reason::BadSource);
    }
    if dst.is_multicast() {
        return Some(Reason::Multicast);
    }
    None
}

/// The ICMP6PingResponder element.
#[derive(Default)]
pub struct ICMP6PingResponder {
    replies: u64,
    /// Packets not answered and dropped (output 1 unconnected), by reason.
    drops: Drops<Reason>,
}

impl ICMP6PingResponder {
    fn sort(&mut self, mut p: Packet, cx: &Cx) -> Verdict {
        let off = ip_offset(&p);
        if let Some(r) = refuse(&p.data()[off..]) {
            if cx.noutputs() < 2 {
                self.drops.count(r);
                return Verdict::Gone;
            }
            return Verdict::Out(1, p);
        }
        let mut ip = Ipv6Packet::new_unchecked(&mut p.data_mut()[off..]);
        let (s, d) = (ip.src(), ip.dst());
        ip.set_src(&d);
        ip.set_dst(&s);
        ip.set_hop_limit(255);
        let mut m = Icmpv6Packet::new_unchecked(ip.payload_mut());
        m.set_msg_type(TYPE_ECHO_REPLY);
        m.fill_checksum(&d, &s);
        p.set_dst_ip6_anno(s);
        self.replies += 1;
        Verdict::Out(0, p)
    }
}

impl Element for ICMP6PingResponder {
    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, cx| self.sort(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.sort(p, cx))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("replies", |e| e.replies)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMP6PingResponder",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("icmp6_ping_responder.rs"),
    make: || Box::new(ICMP6PingResponder::default()),
};
