//! ARPResponder — answers ARP queries for configured addresses (including proxy ARP)
//!
//! Synopsis: `ARPResponder(IP ETH, IP/LEN ETH, IP IP2/LEN ... ETH, ...)`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Each argument lists IP addresses or prefixes followed by one Ethernet address (an
//! AddressInfo name may stand for both: `ARPResponder(eth0)` answers for eth0's address).
//! Input packets are Ethernet frames holding ARP packets. For an Ethernet/IPv4 ARP request
//! whose target address matches an entry (the longest matching prefix wins), ARPResponder
//! emits on output 0 a reply frame from that entry's Ethernet address to the requester:
//! "TARGET is at ETH". A prefix entry answers for a whole subnet, which is proxy ARP.
//!
//! Everything else — frames that are not ARP requests, malformed ARP, requests for unknown
//! addresses — goes to output 1 if connected, otherwise is dropped; all are counted in
//! `drops` / `drop_details`.
//!
//! Handlers: `table` (r): one `PREFIX ETH` line per entry. `replies` (r). `drops` (r).
//! `drop_details` (r). `add` (w): `IP[/LEN] ETH`. `remove` (w): `IP[/LEN]`.
//!
//! Example: `ARPResponder(198.18.0.1 00:00:c0:ae:67:ef, 198.19.0.0/16 00:00:c0:ae:67:ef)`

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::arp::{OP_REPLY, OP_REQUEST};
use sluice_wire::ethernet::ETHERTYPE_ARP;
use sluice_wire::{build_arp, ArpPacket, EtherAddr, EthernetFrame, Ipv4Prefix};

use crate::ip::address_info;
use crate::ip::common::{details, pull_sorted, push_sorted, EthArg, Verdict};

const REASONS: [&str; 3] = ["not an ARP request", "malformed ARP", "unknown target"];

/// The ARPResponder element.
#[derive(Default)]
pub struct ARPResponder {
    entries: Vec<(Ipv4Prefix, EtherAddr)>,
    replies: u64,
    drops: [u64; 3],
}

/// Parses one `ADDR... ETH` argument.
fn parse_entry(s: &str) -> Result<Vec<(Ipv4Prefix, EtherAddr)>, String> {
    let w = split_words(s);
    if w.len() == 1 {
        // An AddressInfo name for both addresses.
        let ip = address_info::lookup_ip(&w[0]);
        let eth = address_info::lookup_eth(&w[0]);
        return match (ip, eth) {
            (Some(ip), Some(eth)) => Ok(vec![(Ipv4Prefix::new(ip, 32), eth)]),
            _ => Err(format!("expected 'IP ETH', got '{}'", s)),
        };
    }
    let eth = EthArg::from_arg(&w[w.len() - 1])?.0;
    let mut out = Vec::new();
    for a in &w[..w.len() - 1] {
        let pfx = if let Ok(ip) = a.parse::<Ipv4Addr>() {
            Ipv4Prefix::new(ip, 32)
        } else if let Some(ip) = address_info::lookup_ip(a).filter(|_| !a.ends_with(":net")) {
            Ipv4Prefix::new(ip, 32)
        } else {
            crate::ip::common::PrefixArg::from_arg(a)?.0
        };
        out.push((pfx, eth));
    }
    Ok(out)
}

impl ARPResponder {
    /// The Ethernet address answering for `ip`, by longest prefix.
    pub fn lookup(&self, ip: Ipv4Addr) -> Option<EtherAddr> {
        self.entries
            .iter()
            .filter(|(p, _)| p.contains(ip))
            .max_by_key(|(p, _)| p.len)
            .map(|(_, e)| *e)
    }

    fn action(&mut self, p: Packet) -> Verdict {
        let d = p.data();
        let Ok(eth) = EthernetFrame::new_checked(d) else {
            self.drops[1] += 1;
            return Verdict::Out(1, p);
        };
        if eth.ethertype() != ETHERTYPE_ARP {
            self.drops[0] += 1;
            return Verdict::Out(1, p);
        }
        let arp = match ArpPacket::new_checked(eth.payload()) {
            Ok(a) if a.is_ether_ipv4() => a,
            _ => {
                self.drops[1] += 1;
                return Verdict::Out(1, p);
            }
        };
        if arp.op() != OP_REQUEST {
            self.drops[0] += 1;
            return Verdict::Out(1, p);
        }
        let target = arp.target_ip();
        let Some(me) = self.lookup(target) else {
            self.drops[2] += 1;
            return Verdict::Out(1, p);
        };
        let (sha, spa) = (arp.sender_hw(), arp.sender_ip());
        let mut q = Packet::new(14 + 28);
        *q.anno_mut() = *p.anno();
        {
            let b = q.data_mut();
            b[0..6].copy_from_slice(&sha.0);
            b[6..12].copy_from_slice(&me.0);
            b[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
            b[14..].copy_from_slice(&build_arp(OP_REPLY, me, target, sha, spa));
        }
        q.set_mac_offset(0);
        self.replies += 1;
        Verdict::Out(0, q)
    }
}

impl Element for ARPResponder {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for a in args.rest() {
            match parse_entry(&a) {
                Ok(v) => self.entries.extend(v),
                Err(e) => {
                    args.error(e);
                    ok = false;
                }
            }
        }
        if ok {
            Ok(())
        } else {
            Err(())
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, _| self.action(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, _| self.action(p)).0
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("table"),
                Handler::r("replies"),
                Handler::r("drops"),
                Handler::r("drop_details"),
                Handler::w("add"),
                Handler::w("remove"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "table" => self
                .entries
                .iter()
                .map(|(p, e)| format!("{} {}\n", p, e))
                .collect(),
            "replies" => self.replies.to_string(),
            "drops" => self.drops.iter().sum::<u64>().to_string(),
            "drop_details" => details(&REASONS, &self.drops),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "add" => {
                let e = parse_entry(v)?;
                for (p, a) in e {
                    self.entries.retain(|(q, _)| *q != p);
                    self.entries.push((p, a));
                }
                Ok(())
            }
            "remove" => {
                let p = if let Ok(ip) = v.trim().parse::<Ipv4Addr>() {
                    Ipv4Prefix::new(ip, 32)
                } else {
                    crate::ip::common::PrefixArg::from_arg(v)?.0
                };
                let n = self.entries.len();
                self.entries.retain(|(q, _)| *q != p);
                if self.entries.len() == n {
                    return Err(format!("no entry for {}", p));
                }
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ARPResponder",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("arp_responder.rs"),
    make: || Box::new(ARPResponder::default()),
};
