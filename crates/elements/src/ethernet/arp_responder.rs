//! ARPResponder — answers ARP queries for configured addresses (including proxy ARP)
//!
//! Synopsis: `ARPResponder(IP ETH, IP/LEN ETH, IP IP2/LEN ... ETH, ...)`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Input packets are Ethernet frames holding ARP packets. For an Ethernet/IPv4 ARP request
//! whose target address matches an entry (the first match in lookup order wins),
//! ARPResponder emits on output 0 a reply frame from that entry's Ethernet address to the
//! requester: "TARGET is at ETH". A prefix entry answers for a whole subnet, which is proxy
//! ARP.
//!
//! Everything else — frames that are not ARP requests, malformed ARP, requests for unknown
//! addresses — goes to output 1 if connected, otherwise is dropped; all are counted in
//! `drops` / `drop_details` (the router-wide `drops` lists those dropped).
//!
//! Arguments:
//! - `IP... ETH` (any number of arguments, words in any order): one or more IP addresses or
//!   `IP/LEN` prefixes and one Ethernet address; ARPResponder answers for those addresses
//!   with that Ethernet address. An AddressInfo name stands for its IP address (a /32) and,
//!   when no other Ethernet address is given, for its Ethernet address too:
//!   `ARPResponder(r0)` answers for r0's address; `r0:ipnet` names r0's prefix. Entries are
//!   kept most specific first; a later entry for the same prefix replaces an earlier one.
//!
//! Handlers: `table` (r): one `ADDR/LEN ETH` line per entry, in lookup order (Ethernet
//! addresses as `00-01-02-03-04-05`). `lookup ADDR` (r with parameter): the Ethernet address
//! answering for ADDR, or nothing. `replies` (r). `drops` (r). `drop_details` (r). `add`
//! (w): an argument as in the configuration. `remove` (w): `IP[/LEN]`; an error if absent.
//! `config` (rw): writing a new configuration replaces every entry (the old ones stay if it
//! has an error); a prefix given more than once is reported as a warning, the last one kept.
//!
//! Example: `ARPResponder(198.18.0.1 00:00:c0:ae:67:ef, 198.19.0.0/16 00:00:c0:ae:67:ef)`

use std::net::Ipv4Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::{split_args, split_words, Args, FromArg};
use sluice_wire::arp::{OP_REPLY, OP_REQUEST};
use sluice_wire::ethernet::ETHERTYPE_ARP;
use sluice_wire::{build_arp, ArpPacket, EtherAddr, EthernetFrame, Ipv4Prefix};

drop_reasons! {
    /// Why ARPResponder does not answer a packet.
    enum Reason {
        NotRequest => "not an ARP request",
        Malformed => "malformed ARP",
        UnknownTarget => "unknown target",
    }
}

/// The ARPResponder element.
#[derive(Default)]
pub struct ARPResponder {
    entries: Vec<(Ipv4Prefix, EtherAddr)>,
    replies: u64,
    /// Packets not answered, by reason, whether sent to output 1 or dropped there (the
    /// `drops` handlers; the router counts those dropped).
    unanswered: Drops<Reason>,
}

/// Parses one `ADDR... ETH` argument (words in any order, as Click's ARPResponder does).
fn parse_entry(s: &str) -> Result<Vec<(Ipv4Prefix, EtherAddr)>, String> {
    let w = split_words(s);
    let mut pfx = Vec::new();
    let mut eth = None;
    for a in &w {
        if let Ok(p) = Ipv4Prefix::from_arg(a) {
            pfx.push(p);
        } else if let Ok(e) = EtherAddr::from_arg(a) {
            if eth.replace(e).is_some() {
                return Err("more than one ETH".into());
            }
        } else {
            return Err("expected IP/MASK ETH".into());
        }
    }
    // A word that is both an IP and an Ethernet address (an AddressInfo name).
    let eth = eth.or_else(|| w.iter().find_map(|a| EtherAddr::from_arg(a).ok()));
    match (pfx.is_empty(), eth) {
        (true, _) => Err("missing IP/MASK".into()),
        (false, None) => Err("missing ETH".into()),
        (false, Some(e)) => Ok(pfx.into_iter().map(|p| (p, e)).collect()),
    }
}

impl ARPResponder {
    /// Adds entries keeping Click's order: an entry goes before the first entry whose prefix
    /// covers it; an entry for a prefix already present replaces that one.
    fn insert(&mut self, v: Vec<(Ipv4Prefix, EtherAddr)>) {
        for (p, e) in v {
            if let Some(x) = self.entries.iter_mut().find(|(q, _)| *q == p) {
                x.1 = e;
            } else {
                let at = self
                    .entries
                    .iter()
                    .position(|(q, _)| q.contains(p.addr))
                    .unwrap_or(self.entries.len());
                self.entries.insert(at, (p, e));
            }
        }
    }

    /// The Ethernet address answering for `ip`: the first matching entry.
    pub fn lookup(&self, ip: Ipv4Addr) -> Option<EtherAddr> {
        self.entries
            .iter()
            .find(|(p, _)| p.contains(ip))
            .map(|(_, e)| *e)
    }

    /// The `config` write handler: replaces every entry by those of configuration `v`,
    /// keeping the old ones if it has an error; warns of a prefix given more than once.
    fn reconfigure(&mut self, v: &str, cx: &mut Cx) -> Result<(), String> {
        let mut fresh = ARPResponder::default();
        let mut seen = Vec::new();
        let mut warnings = Vec::new();
        for (i, a) in split_args(v).iter().enumerate() {
            let entries = parse_entry(a).map_err(|e| format!("argument {i}: {e}"))?;
            for (p, _) in &entries {
                if seen.contains(p) {
                    warnings.push(format!("multiple entries for {p}"));
                }
                seen.push(*p);
            }
            fresh.insert(entries);
        }
        if !warnings.is_empty() {
            eprintln!("While calling '{}.config {}':", cx.name(), v.trim());
            for w in warnings {
                eprintln!("  warning: {w}");
            }
        }
        self.entries = fresh.entries;
        Ok(())
    }

    fn action(&mut self, p: Packet) -> Verdict {
        let d = p.data();
        let Ok(eth) = EthernetFrame::new_checked(d) else {
            self.unanswered.count(Reason::Malformed);
            return Verdict::Out(1, p);
        };
        if eth.ethertype() != ETHERTYPE_ARP {
            self.unanswered.count(Reason::NotRequest);
            return Verdict::Out(1, p);
        }
        let arp = match ArpPacket::new_checked(eth.payload()) {
            Ok(a) if a.is_ether_ipv4() => a,
            _ => {
                self.unanswered.count(Reason::Malformed);
                return Verdict::Out(1, p);
            }
        };
        if arp.op() != OP_REQUEST {
            self.unanswered.count(Reason::NotRequest);
            return Verdict::Out(1, p);
        }
        let target = arp.target_ip();
        let Some(me) = self.lookup(target) else {
            self.unanswered.count(Reason::UnknownTarget);
            return Verdict::Out(1, p);
        };
        let (sha, spa) = (arp.sender_hw(), arp.sender_ip());
        let mut q = Packet::new(14 + 28);
        // As in Click, the reply keeps only the query's device and VLAN annotations.
        q.anno_mut().device = p.anno().device;
        q.anno_mut().vlan_tci = p.anno().vlan_tci;
        {
            let b = q.data_mut();
            b[0..6].copy_from_slice(&sha.0);
            b[6..12].copy_from_slice(&me.0);
            b[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
            b[14..].copy_from_slice(&build_arp(OP_REPLY, me, target, sha, spa));
        }
        q.set_mac_offset(0);
        q.set_network_offset(14);
        self.replies += 1;
        Verdict::Out(0, q)
    }
}

impl Element for ARPResponder {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut ok = true;
        for (i, a) in args.rest().iter().enumerate() {
            match parse_entry(a) {
                Ok(v) => self.insert(v),
                Err(e) => {
                    args.error(format!("argument {i}: {e}"));
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
        pull_sorted(max, cx, |p, _| self.action(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", |e| {
                e.entries
                    .iter()
                    .map(|(p, a)| format!("{} {}\n", p, a))
                    .collect::<String>()
            })
            .read_param("lookup", |e, param| {
                let a = Ipv4Addr::from_arg(param).map_err(|_| "expected IP address")?;
                Ok(e.lookup(a).map(|a| a.to_string()).unwrap_or_default())
            })
            .read("replies", |e| e.replies)
            .read("drops", |e| e.unanswered.total())
            .read("drop_details", |e| e.unanswered.details())
            .write("add", |e, v, _| parse_entry(v).map(|x| e.insert(x)))
            .write("remove", |e, v, _| {
                let p = Ipv4Prefix::from_arg(v).map_err(|_| "expected IP/MASK")?;
                let n = e.entries.len();
                e.entries.retain(|(q, _)| *q != p);
                if e.entries.len() == n {
                    return Err(format!("{} not found", p));
                }
                Ok(())
            })
            .write("config", ARPResponder::reconfigure)
            .into()
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
