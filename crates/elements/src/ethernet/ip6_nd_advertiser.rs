//! IP6NDAdvertiser — answers IPv6 neighbour solicitations for configured addresses
//!
//! Synopsis: `IP6NDAdvertiser(IP6/LEN ETH, IP6 IP6/LEN ... ETH, ..., [keywords ROUTER])`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Input packets are Ethernet frames holding IPv6 neighbour solicitations (RFC 4861 §4.3).
//! A solicitation is valid (RFC 4861 §7.1.1) when: its IPv6 header is complete and directly
//! followed by the ICMPv6 message; its hop limit is 255; its checksum verifies; its code is
//! 0; it is at least 24 bytes long; its target is not multicast; every option has a non-zero
//! length inside the message; and, when its source is `::` (duplicate address detection,
//! DAD), it goes to a solicited-node multicast address and has no source link-layer
//! address option.
//!
//! For a valid solicitation whose target matches an entry (the most specific one wins),
//! IP6NDAdvertiser emits on output 0 a solicited neighbour advertisement (RFC 4861 §7.2.4)
//! from the target address and the entry's Ethernet address, with hop limit 255, the target
//! link-layer address option (the entry's Ethernet address) and a correct checksum. It goes
//! to the soliciting node — to the Ethernet address of the solicitation's source link-layer
//! option, else to the frame's Ethernet source — with the Solicited flag; this answers
//! multicast solicitations (address resolution) and unicast ones (neighbour unreachability
//! detection) alike. A DAD probe (source `::`) is answered to all-nodes ff02::1
//! (33:33:00:00:00:01) without the Solicited flag, telling the prober the address is taken.
//! The Router flag is set unless `ROUTER false` (Click always sets it). The Override flag is
//! set for /128 entries (the node's own addresses) and clear for shorter prefixes (proxy
//! entries, whose real owner's advertisement must win; Click never sets it).
//!
//! Everything else — frames that are not neighbour solicitations, malformed or invalid ones,
//! solicitations for unknown targets — goes to output 1 if connected, otherwise is dropped;
//! all are counted by reason in `drops` / `drop_details` (the router-wide `drops` lists
//! those dropped).
//!
//! Configuration: hosts reach a router by its global address (a static route) or by its
//! link-local address (the default route router advertisements give, and the address hosts
//! check with unicast solicitations). List both for each interface, each as a /128: the
//! global address and the link-local address, which is fe80:: followed by the EUI-64
//! interface identifier of the Ethernet address (02:00:00:00:00:01 gives
//! fe80::ff:fe00:1; the universal/local bit flips) or the one the configuration assigns.
//!
//! Arguments:
//! - `IP6... ETH` (any number of arguments, words in any order): one or more IPv6 addresses
//!   or `IP6/LEN` prefixes and one Ethernet address, as in Click. A bare address is a /128.
//!   AddressInfo names are accepted: a name stands for its IPv6 address and, when no other
//!   Ethernet address is given, for its Ethernet address too.
//! - `ROUTER` (bool, default true): set the Router flag in advertisements.
//!
//! Handlers: `table` (r): one `IP6/LEN ETH` line per entry, most specific first. `replies`
//! (r). `drops` (r). `drop_details` (r).
//!
//! Example: `c :: Classifier(12/86dd 20/3a 54/87, ...); c[0] -> IP6NDAdvertiser(
//! 2001:db8:1::1 fe80::ff:fe00:1 02:00:00:00:00:01, ROUTER true) -> Queue -> ToDevice(eth0);`

use std::net::Ipv6Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::ethernet::{ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use sluice_wire::icmpv6::*;
use sluice_wire::ipv6::{HEADER_LEN as IP6_LEN, NH_ICMPV6};
use sluice_wire::{EtherAddr, EthernetFrame, Ipv6Packet, Ipv6Prefix};

drop_reasons! {
    /// Why IP6NDAdvertiser does not answer a packet.
    enum Reason {
        NotSolicitation => "not a neighbour solicitation",
        Malformed => "malformed solicitation",
        BadHopLimit => "hop limit not 255",
        BadChecksum => "bad ICMPv6 checksum",
        Invalid => "invalid solicitation",
        UnknownTarget => "unknown target",
    }
}

/// One entry: the prefix answered for and the Ethernet address that answers.
type Entry = (Ipv6Prefix, EtherAddr);

/// Parses one `ADDR... ETH` argument (words in any order, as Click's IP6NDAdvertiser does).
fn parse_entry(s: &str) -> Result<Vec<Entry>, String> {
    let w = split_words(s);
    let mut pfx = Vec::new();
    let mut eth = None;
    for a in &w {
        if let Ok(p) = Ipv6Prefix::from_arg(a) {
            pfx.push(p);
        } else if let Ok(e) = EtherAddr::from_arg(a) {
            if eth.replace(e).is_some() {
                return Err("more than one Ethernet address".into());
            }
        } else {
            return Err("expected 'IP6/LEN ETH'".into());
        }
    }
    // A word that is both an IPv6 and an Ethernet address (an AddressInfo name).
    let eth = eth.or_else(|| w.iter().find_map(|a| EtherAddr::from_arg(a).ok()));
    match (pfx.is_empty(), eth) {
        (true, _) => Err("no IPv6 address".into()),
        (false, None) => Err("no Ethernet address".into()),
        (false, Some(e)) => Ok(pfx.into_iter().map(|p| (p, e)).collect()),
    }
}

/// A valid solicitation: what the answer needs.
struct Solicitation {
    src: Ipv6Addr,
    target: Ipv6Addr,
    /// Where the answer goes at the link level.
    reply_to: EtherAddr,
}

/// Reads and validates a neighbour solicitation frame (RFC 4861 §7.1.1).
fn parse(d: &[u8]) -> Result<Solicitation, Reason> {
    let eth = EthernetFrame::new_checked(d).map_err(|_| Reason::Malformed)?;
    if eth.ethertype() != ETHERTYPE_IPV6 {
        return Err(Reason::NotSolicitation);
    }
    let ip = Ipv6Packet::new_checked(eth.payload()).map_err(|_| Reason::Malformed)?;
    if ip.next_header() != NH_ICMPV6 || ip.payload().first() != Some(&TYPE_NEIGHBOR_SOLICIT) {
        return Err(Reason::NotSolicitation);
    }
    let m = Icmpv6Packet::new_unchecked(ip.payload());
    let ns = NeighborRepr::parse(&m).map_err(|_| Reason::Malformed)?;
    if ip.hop_limit() != 255 {
        return Err(Reason::BadHopLimit);
    }
    let (src, dst) = (ip.src(), ip.dst());
    if !m.verify_checksum(&src, &dst) {
        return Err(Reason::BadChecksum);
    }
    let dad = src.is_unspecified();
    if m.code() != 0
        || ns.target.is_multicast()
        || src.is_multicast()
        || (dad && (!is_solicited_node(&dst) || ns.lladdr.is_some()))
    {
        return Err(Reason::Invalid);
    }
    Ok(Solicitation {
        src,
        target: ns.target,
        reply_to: if dad {
            multicast_ether(&ALL_NODES)
        } else {
            ns.lladdr.unwrap_or(eth.src())
        },
    })
}

/// The IP6NDAdvertiser element.
pub struct IP6NDAdvertiser {
    /// Entries, most specific first.
    entries: Vec<Entry>,
    router: bool,
    replies: u64,
    /// Packets not answered, by reason, whether sent to output 1 or dropped there.
    unanswered: Drops<Reason>,
}

impl IP6NDAdvertiser {
    /// Adds entries, keeping them most specific first; an entry for a prefix already present
    /// replaces that one.
    fn insert(&mut self, v: Vec<Entry>) {
        for (p, e) in v {
            if let Some(x) = self.entries.iter_mut().find(|(q, _)| *q == p) {
                x.1 = e;
            } else {
                let at = self.entries.partition_point(|(q, _)| q.len >= p.len);
                self.entries.insert(at, (p, e));
            }
        }
    }

    /// The entry answering for `a`: the most specific match.
    fn lookup(&self, a: Ipv6Addr) -> Option<&Entry> {
        self.entries.iter().find(|(p, _)| p.contains(a))
    }

    /// The advertisement answering solicitation `ns` with entry `(pfx, me)`.
    fn answer(&self, ns: &Solicitation, pfx: &Ipv6Prefix, me: EtherAddr) -> Packet {
        let dad = ns.src.is_unspecified();
        let mut flags = if dad { 0 } else { NA_SOLICITED };
        if self.router {
            flags |= NA_ROUTER;
        }
        if pfx.len == 128 {
            flags |= NA_OVERRIDE;
        }
        let na = NeighborRepr {
            msg_type: TYPE_NEIGHBOR_ADVERT,
            flags,
            target: ns.target,
            lladdr: Some(me),
        };
        let dst = if dad { ALL_NODES } else { ns.src };
        let mut q = Packet::new(ETH_LEN + IP6_LEN + na.buffer_len());
        {
            let b = q.data_mut();
            b[0..6].copy_from_slice(&ns.reply_to.0);
            b[6..12].copy_from_slice(&me.0);
            b[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
            // Sized above for this message: neither step can fail.
            let _ = na.emit(&mut b[ETH_LEN + IP6_LEN..]);
            let _ = emit_ipv6_icmp(&mut b[ETH_LEN..], &ns.target, &dst, 255);
        }
        q.set_mac_offset(0);
        q.set_network_offset(ETH_LEN as isize);
        q.set_dst_ip6_anno(dst);
        q
    }

    fn action(&mut self, p: Packet) -> Verdict {
        let found = parse(p.data()).and_then(|ns| match self.lookup(ns.target) {
            Some(&(pfx, me)) => Ok((ns, pfx, me)),
            None => Err(Reason::UnknownTarget),
        });
        match found {
            Ok((ns, pfx, me)) => {
                let mut q = self.answer(&ns, &pfx, me);
                // As ARPResponder does, the answer keeps the query's device and VLAN.
                q.anno_mut().device = p.anno().device;
                q.anno_mut().vlan_tci = p.anno().vlan_tci;
                self.replies += 1;
                Verdict::Out(0, q)
            }
            Err(r) => {
                self.unanswered.count(r);
                Verdict::Out(1, p)
            }
        }
    }
}

impl Element for IP6NDAdvertiser {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("ROUTER", &mut self.router)?;
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
            .read("replies", |e| e.replies)
            .read("drops", |e| e.unanswered.total())
            .read("drop_details", |e| e.unanswered.details())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6NDAdvertiser",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("ip6_nd_advertiser.rs"),
    make: || {
        Box::new(IP6NDAdvertiser {
            entries: Vec::new(),
            router: true,
            replies: 0,
            unanswered: Drops::default(),
        })
    },
};
