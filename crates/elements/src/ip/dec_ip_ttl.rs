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
//! Handlers: `drops` (r): expired packets (sent to output 1 or dropped). `malformed` (r):
//! packets too short, dropped. `active` (rw).
//!
//! Example: `dt :: DecIPTTL -> IPFragmenter(1500) -> ...; dt[1] -> ICMPError(198.18.0.1,
//! timeexceeded) -> rt;`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::common::{ip_offset, parse_bool, pull_sorted, push_sorted, Verdict};

/// The DecIPTTL element.
pub struct DecIPTTL {
    active: bool,
    multicast: bool,
    expired: u64,
    malformed: u64,
}

impl DecIPTTL {
    fn action(&mut self, mut p: Packet) -> Verdict {
        if !self.active {
            return Verdict::Out(0, p);
        }
        let off = ip_offset(&p);
        if p.len() < off + 20 {
            self.malformed += 1;
            return Verdict::Gone;
        }
        let ip = Ipv4Packet::new_unchecked(&p.data()[off..]);
        if !self.multicast && ip.dst().is_multicast() {
            return Verdict::Out(0, p);
        }
        if ip.ttl() <= 1 {
            self.expired += 1;
            return Verdict::Out(1, p);
        }
        Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]).decrement_ttl();
        Verdict::Out(0, p)
    }
}

impl Element for DecIPTTL {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.active = args.read::<bool>("ACTIVE")?.unwrap_or(true);
        self.multicast = args.read::<bool>("MULTICAST")?.unwrap_or(true);
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        // Fast path: every packet is a complete IP header with TTL > 1, so each is
        // decremented in place and the batch leaves as it came.
        if self.active
            && batch.iter().all(|p| {
                let off = ip_offset(p);
                p.len() >= off + 20 && p.data()[off + 8] > 1
            })
        {
            for p in batch.iter_mut() {
                let off = ip_offset(p);
                let multicast = p.data()[off + 16] >= 224 && p.data()[off + 16] < 240;
                if self.multicast || !multicast {
                    Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]).decrement_ttl();
                }
            }
            cx.push(0, batch);
            return;
        }
        push_sorted(batch, cx, |p, _| self.action(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, _| self.action(p)).0
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("drops"),
                Handler::r("malformed"),
                Handler::rw("active"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "drops" => Some(self.expired.to_string()),
            "malformed" => Some(self.malformed.to_string()),
            "active" => Some(self.active.to_string()),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "active" => {
                self.active = parse_bool(v)?;
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
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
            malformed: 0,
        })
    },
};
