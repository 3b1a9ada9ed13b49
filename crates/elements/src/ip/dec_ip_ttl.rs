//! DecIPTTL — decrements the IP time-to-live, emits expired packets on output 1
//!
//! Synopsis: `DecIPTTL([keywords ACTIVE, MULTICAST])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects IP packets with the network header annotation (or starting with their IP header).
//! A packet whose TTL is 0 or 1 has expired: it goes, unchanged, to output 1 (typically an
//! `ICMPError(ADDR, timeexceeded)`), or is dropped if output 1 is not connected. Other packets
//! get their TTL decremented and the header checksum updated incrementally (RFC 1624) and
//! leave by output 0. Packets too short to hold an IP header are dropped and counted.
//!
//! Arguments:
//! - `ACTIVE` (bool, default true): when false, packets pass unchanged.
//! - `MULTICAST` (bool, default true): when false, multicast packets pass unchanged.
//!
//! Handlers: `drops` (r): expired packets, sent to output 1 or dropped (Click's count).
//! `drop_details` (r): packets dropped, by reason (too short; expired with output 1
//! unconnected). `active` (rw).
//!
//! Example: `dt :: DecIPTTL -> IPFragmenter(1500) -> ...; dt[1] -> ICMPError(198.18.0.1,
//! timeexceeded) -> rt;`

use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_core::{toolkit::Verdict, Table};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why DecIPTTL drops a packet.
    enum Reason { Malformed => "too short for an IP header" }
}

/// The DecIPTTL element.
pub struct DecIPTTL {
    active: bool,
    multicast: bool,
    expired: u64,
    drops: Drops<Reason>,
}

impl Element for DecIPTTL {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("ACTIVE", &mut self.active)?;
        args.read_into("MULTICAST", &mut self.multicast)
    }

    fn action(&mut self, mut p: Packet, _cx: &mut Cx) -> Verdict {
        let off = ip_offset(&p);
        if !self.active {
            return Verdict::Out(0, p);
        } else if p.len() < off + 20 {
            self.drops.count(Reason::Malformed);
            return Verdict::Gone;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        if !self.multicast && ip.dst().is_multicast() {
            return Verdict::Out(0, p);
        } else if ip.ttl() <= 1 {
            self.expired += 1;
            return Verdict::Out(1, p);
        }
        ip.decrement_ttl();
        Verdict::Out(0, p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("drops", |e| e.expired)
            .data("active", |e| &mut e.active)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DecIPTTL",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("dec_ip_ttl.rs"),
    make: || {
        Box::new(DecIPTTL {
            active: true,
            multicast: true,
            expired: 0,
            drops: Drops::default(),
        })
    },
};
