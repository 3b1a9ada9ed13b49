//! ARPQuerier — encapsulates IP packets in Ethernet headers found with ARP
//!
//! Synopsis: `ARPQuerier(IP, ETH, [keywords TIMEOUT, POLL_TIMEOUT, BROADCAST_POLL, RETRY,
//! MAX_TRIES, CAPACITY, ENTRY_PACKET_CAPACITY, ENTRY_CAPACITY, BROADCAST])`
//!
//! Ports: 2 inputs, 1 or 2 outputs, push.
//!
//! Input 0 takes IP packets whose destination IP annotation holds the next hop (set by a
//! route lookup; if it is 0.0.0.0 the IP header's destination is used). If the next hop's
//! Ethernet address is known and fresh (learned less than TIMEOUT ago), the packet leaves by
//! output 0 with an Ethernet header (source ETH, type 0x0800). Packets for 255.255.255.255 or
//! the subnet broadcast address (BROADCAST, or derived from `IP/LEN`) go to ff:ff:ff:ff:ff:ff;
//! multicast destinations go to the mapped 01:00:5e group address; neither needs ARP.
//!
//! Otherwise the packet waits in a queue for that next hop and an ARP request ("who has NEXT
//! HOP? tell IP") is sent as a broadcast frame — on output 1 if it exists, else on output 0.
//! While packets wait, the request is repeated every RETRY (default 1 s); after MAX_TRIES
//! unanswered requests (default 5) the waiting packets are dropped. Each next hop holds at most
//! ENTRY_PACKET_CAPACITY waiting packets (default 64) and all together at most CAPACITY
//! (default 2048); the table holds at most ENTRY_CAPACITY next hops (0, the default, means no
//! limit). A packet that does not fit is dropped.
//!
//! An entry in use is polled before it expires: when a packet uses an entry learned at least
//! POLL_TIMEOUT ago (default 60 s), the packet still leaves at once, and an ARP request for
//! the next hop is sent to its known Ethernet address (to the broadcast address with
//! `BROADCAST_POLL true`), at most once per RETRY. The reply refreshes the entry, so a busy
//! next hop never expires and its packets never wait.
//!
//! Input 1 takes ARP packets (Ethernet frames). Replies teach the table the sender's address
//! (unicast senders only) and release the packets waiting for it, in order. Requests refresh an
//! existing entry for their sender (gratuitous ARP) or create one when they ask for IP. Input 1
//! packets are consumed; malformed ones are counted as drops.
//!
//! Every drop is counted in `drops`, by reason in `drop_details`; packets still waiting for
//! an answer when the router stops are counted as `unresolved at stop`.
//!
//! Arguments: `IP` (address, `IP/LEN`, or AddressInfo name); `ETH`; `TIMEOUT` (seconds,
//! default 300); `POLL_TIMEOUT` (seconds, default 60); `BROADCAST_POLL` (boolean, default
//! false); `RETRY` (seconds, default 1); `MAX_TRIES` (default 5); `CAPACITY`;
//! `ENTRY_PACKET_CAPACITY`; `ENTRY_CAPACITY`; `BROADCAST` (address).
//!
//! `queries` counts every ARP request sent, polls included.
//!
//! Handlers: `table` (r): one line per next hop, `IP VALID ETH AGE PENDING`. `queries` (r),
//! `responses` (r), `drops` (r), `drop_details` (r), `length` (r, packets waiting),
//! `insert` (w, `IP ETH`), `delete` (w, `IP`), `clear` (w).
//!
//! Example: `rt[1] -> ... -> arpq :: ARPQuerier(198.18.0.1, 00:00:c0:ae:67:ef) -> Queue ->
//! ToDevice(eth0); c0[1] -> [1]arpq;`

use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};
use sluice_wire::arp::{OP_REPLY, OP_REQUEST};
use sluice_wire::ethernet::{ETHERTYPE_ARP, ETHERTYPE_IPV4};
use sluice_wire::{build_arp, ArpPacket, EtherAddr, EthernetFrame, Ipv4Packet, Ipv4Prefix};

use crate::ip::address_info;
use crate::ip::common::{details, ip_offset, EthArg, IpArg, OutBatch};

const REASONS: [&str; 7] = [
    "queue full",
    "unresolved",
    "table full",
    "bad ARP packet",
    "bad ARP sender",
    "no destination",
    "unresolved at stop",
];

struct Entry {
    eth: Option<EtherAddr>,
    updated: Timestamp,
    last_query: Timestamp,
    tries: u32,
    pending: VecDeque<Packet>,
}

/// The ARPQuerier element.
pub struct ARPQuerier {
    ip: Ipv4Addr,
    eth: EtherAddr,
    bcast: Ipv4Addr,
    timeout: Timestamp,
    poll_timeout: Timestamp,
    broadcast_poll: bool,
    retry: Timestamp,
    max_tries: u32,
    capacity: usize,
    entry_capacity: usize,
    entry_packet_capacity: usize,
    table: HashMap<Ipv4Addr, Entry>,
    pending: usize,
    queries: u64,
    responses: u64,
    drops: [u64; 7],
}

fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

impl ARPQuerier {
    /// An ARP request for `target`, sent to Ethernet address `dst`.
    fn query_frame(&self, target: Ipv4Addr, dst: EtherAddr) -> Packet {
        let mut q = Packet::new(14 + 28);
        let b = q.data_mut();
        b[0..6].copy_from_slice(&dst.0);
        b[6..12].copy_from_slice(&self.eth.0);
        b[12..14].copy_from_slice(&ETHERTYPE_ARP.to_be_bytes());
        b[14..].copy_from_slice(&build_arp(
            OP_REQUEST,
            self.eth,
            self.ip,
            EtherAddr::default(),
            target,
        ));
        q.set_mac_offset(0);
        q
    }

    fn encap(&self, mut p: Packet, dst: EtherAddr) -> Packet {
        let h = p.push_front(14);
        h[0..6].copy_from_slice(&dst.0);
        h[6..12].copy_from_slice(&self.eth.0);
        h[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        p.set_mac_offset(0);
        p
    }

    fn send_query(&mut self, target: Ipv4Addr, dst: EtherAddr, cx: &mut Cx) {
        let q = self.query_frame(target, dst);
        self.queries += 1;
        let port = if cx.noutputs() > 1 { 1 } else { 0 };
        cx.push_one(port, q);
    }

    fn next_hop(p: &Packet) -> Ipv4Addr {
        let a = p.dst_ip_anno();
        if !a.is_unspecified() {
            return a;
        }
        let off = ip_offset(p);
        match Ipv4Packet::new_checked_truncated(&p.data()[off..]) {
            Ok(ip) => ip.dst(),
            Err(_) => Ipv4Addr::UNSPECIFIED,
        }
    }

    /// Handles an IP packet: returns it with its Ethernet header when it can leave now, or
    /// `None` when it waits for ARP or was dropped. `now` is read once per batch; `last`
    /// caches the batch's last resolved next hop, so a batch for one next hop costs one
    /// table lookup.
    fn handle_ip(
        &mut self,
        p: Packet,
        now: &mut Option<Timestamp>,
        last: &mut Option<(Ipv4Addr, EtherAddr)>,
        cx: &mut Cx,
    ) -> Option<Packet> {
        let nh = Self::next_hop(&p);
        if let Some((a, eth)) = *last {
            if a == nh {
                return Some(self.encap(p, eth));
            }
        }
        if nh.is_unspecified() {
            self.drops[5] += 1;
            return None;
        }
        if nh.is_broadcast() || nh == self.bcast {
            return Some(self.encap(p, EtherAddr::BROADCAST));
        }
        if nh.is_multicast() {
            let o = nh.octets();
            return Some(self.encap(p, EtherAddr([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]])));
        }
        let now = *now.get_or_insert_with(|| cx.now());
        if let Some(e) = self.table.get_mut(&nh) {
            if let Some(eth) = e.eth {
                if now - e.updated <= self.timeout {
                    let poll =
                        now - e.updated >= self.poll_timeout && now - e.last_query >= self.retry;
                    if poll {
                        e.last_query = now;
                        let dst = if self.broadcast_poll {
                            EtherAddr::BROADCAST
                        } else {
                            eth
                        };
                        self.send_query(nh, dst, cx);
                    }
                    *last = Some((nh, eth));
                    return Some(self.encap(p, eth));
                }
            }
        } else if self.entry_capacity > 0 && self.table.len() >= self.entry_capacity {
            self.drops[2] += 1;
            return None;
        }
        let e = self.table.entry(nh).or_insert(Entry {
            eth: None,
            updated: Timestamp::ZERO,
            last_query: Timestamp::ZERO,
            tries: 0,
            pending: VecDeque::new(),
        });
        if e.pending.len() >= self.entry_packet_capacity || self.pending >= self.capacity {
            self.drops[0] += 1;
        } else {
            e.pending.push_back(p);
            self.pending += 1;
        }
        let due = e.tries == 0 || now - e.last_query >= self.retry;
        if due && !e.pending.is_empty() {
            e.tries += 1;
            e.last_query = now;
            self.send_query(nh, EtherAddr::BROADCAST, cx);
            if !cx.timer_scheduled(0) {
                cx.schedule_after(0, self.retry);
            }
        }
        None
    }

    fn learn(
        &mut self,
        ip: Ipv4Addr,
        eth: EtherAddr,
        create: bool,
        out: &mut OutBatch,
        cx: &mut Cx,
    ) {
        if !create && !self.table.contains_key(&ip) {
            return;
        }
        let now = cx.now();
        if create
            && !self.table.contains_key(&ip)
            && self.entry_capacity > 0
            && self.table.len() >= self.entry_capacity
        {
            self.drops[2] += 1;
            return;
        }
        let e = self.table.entry(ip).or_insert(Entry {
            eth: None,
            updated: now,
            last_query: Timestamp::ZERO,
            tries: 0,
            pending: VecDeque::new(),
        });
        e.eth = Some(eth);
        e.updated = now;
        e.tries = 0;
        let waiting = std::mem::take(&mut e.pending);
        self.pending -= waiting.len();
        for p in waiting {
            let q = self.encap(p, eth);
            out.add(q, cx);
        }
    }

    fn handle_arp(&mut self, p: Packet, out: &mut OutBatch, cx: &mut Cx) {
        let d = p.data();
        let Ok(eth) = EthernetFrame::new_checked(d) else {
            self.drops[3] += 1;
            return;
        };
        let arp = match ArpPacket::new_checked(eth.payload()) {
            Ok(a) if eth.ethertype() == ETHERTYPE_ARP && a.is_ether_ipv4() => a,
            _ => {
                self.drops[3] += 1;
                return;
            }
        };
        let (op, spa, sha, tpa) = (arp.op(), arp.sender_ip(), arp.sender_hw(), arp.target_ip());
        if op != OP_REPLY && op != OP_REQUEST {
            self.drops[3] += 1;
            return;
        }
        if spa.is_unspecified()
            || spa.is_broadcast()
            || spa.is_multicast()
            || spa == self.bcast
            || sha.is_group()
            || sha == EtherAddr::default()
        {
            self.drops[4] += 1;
            return;
        }
        if op == OP_REPLY {
            self.responses += 1;
            self.learn(spa, sha, true, out, cx);
        } else {
            self.learn(spa, sha, tpa == self.ip, out, cx);
        }
    }

    fn retry_timer(&mut self, cx: &mut Cx) {
        let now = cx.now();
        let mut queries = Vec::new();
        let mut dropped = 0u64;
        let mut any = false;
        let (retry, max_tries, timeout) = (self.retry, self.max_tries, self.timeout);
        self.table.retain(|ip, e| {
            if !e.pending.is_empty() {
                if now - e.last_query >= retry {
                    if e.tries >= max_tries {
                        dropped += e.pending.len() as u64;
                        e.pending.clear();
                        e.tries = 0;
                    } else {
                        e.tries += 1;
                        e.last_query = now;
                        queries.push(*ip);
                    }
                }
                any |= !e.pending.is_empty();
            }
            !e.pending.is_empty() || (e.eth.is_some() && now - e.updated <= timeout)
        });
        self.drops[1] += dropped;
        self.pending -= dropped as usize;
        queries.sort();
        for ip in queries {
            self.send_query(ip, EtherAddr::BROADCAST, cx);
        }
        if any {
            cx.schedule_after(0, self.retry);
        }
    }

    fn table_string(&self, now: Timestamp) -> String {
        let mut v: Vec<_> = self.table.iter().collect();
        v.sort_by_key(|(ip, _)| **ip);
        let mut s = String::new();
        for (ip, e) in v {
            let valid = e.eth.is_some() && now - e.updated <= self.timeout;
            s.push_str(&format!(
                "{} {} {} {:.3} {}\n",
                ip,
                valid as u8,
                e.eth.unwrap_or_default(),
                if e.eth.is_some() {
                    (now - e.updated).as_secs_f64()
                } else {
                    0.0
                },
                e.pending.len()
            ));
        }
        s
    }
}

impl Element for ARPQuerier {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let ip: String = args.read_mp("IP")?;
        let t = ip.trim();
        let (addr, len) = if let Some((a, l)) = t.split_once('/') {
            match (IpArg::from_arg(a), l.parse::<u8>()) {
                (Ok(a), Ok(l)) if l <= 32 => (a.0, Some(l)),
                _ => {
                    args.error("IP: expected IP address");
                    return Err(());
                }
            }
        } else {
            // A name means its address (a /32), else its prefix, as in Click's IPPrefixArg.
            match IpArg::from_arg(t) {
                Ok(a) => (a.0, Some(32)),
                Err(e) => match sluice_lang::names::lookup_net(t) {
                    Some((a, l)) => (a, Some(l)),
                    None => {
                        args.error(format!("IP: {}", e));
                        return Err(());
                    }
                },
            }
        };
        self.ip = addr;
        // ETH may be omitted when IP is an AddressInfo name with an Ethernet address.
        let eth = match args.read_p::<EthArg>("ETH")? {
            Some(e) => e.0,
            None => match address_info::lookup_eth(t) {
                Some(e) => e,
                None => {
                    args.error("missing mandatory ETH argument");
                    return Err(());
                }
            },
        };
        self.eth = eth;
        self.bcast = match args.read::<IpArg>("BROADCAST")? {
            Some(b) => b.0,
            None => match len {
                Some(l) if l < 31 => Ipv4Addr::from(u32::from(addr) | !Ipv4Prefix::mask_of(l)),
                _ => Ipv4Addr::BROADCAST,
            },
        };
        if let Some(Seconds(s)) = args.read("TIMEOUT")? {
            self.timeout = secs(s);
        }
        if let Some(Seconds(s)) = args.read("POLL_TIMEOUT")? {
            self.poll_timeout = secs(s);
        }
        self.broadcast_poll = args.read("BROADCAST_POLL")?.unwrap_or(false);
        if let Some(Seconds(s)) = args.read("RETRY")? {
            self.retry = secs(s.max(0.001));
        }
        if let Some(n) = args.read::<u32>("MAX_TRIES")? {
            self.max_tries = n.max(1);
        }
        if let Some(n) = args.read::<usize>("CAPACITY")? {
            self.capacity = n;
        }
        if let Some(n) = args.read::<usize>("ENTRY_PACKET_CAPACITY")? {
            self.entry_packet_capacity = n;
        }
        if let Some(n) = args.read::<usize>("ENTRY_CAPACITY")? {
            self.entry_capacity = n;
        }
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, cx: &mut Cx) {
        if port == 0 {
            // In place: packets that leave now keep their slots; ARP queries (if any) are
            // pushed as they are made, before the batch.
            let mut now = None;
            let mut last = None;
            batch.filter_map(|p| self.handle_ip(p, &mut now, &mut last, cx));
            if !batch.is_empty() {
                cx.push(0, batch);
            }
            return;
        }
        let mut out = OutBatch::new(0);
        for p in batch {
            self.handle_arp(p, &mut out, cx);
        }
        out.flush(cx);
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.retry_timer(cx);
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        self.drops[6] += self.pending as u64;
        self.pending = 0;
        for e in self.table.values_mut() {
            e.pending.clear();
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("table"),
                Handler::r("queries"),
                Handler::r("responses"),
                Handler::r("drops"),
                Handler::r("drop_details"),
                Handler::r("length"),
                Handler::w("insert"),
                Handler::w("delete"),
                Handler::w("clear"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            // Ages are measured at the last packet or timer (read handlers get no clock).
            "table" => self.table_string(
                self.table
                    .values()
                    .map(|e| e.updated.max(e.last_query))
                    .max()
                    .unwrap_or_default(),
            ),
            "queries" => self.queries.to_string(),
            "responses" => self.responses.to_string(),
            "drops" => self.drops.iter().sum::<u64>().to_string(),
            "drop_details" => details(&REASONS, &self.drops),
            "length" => self.pending.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, v: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "insert" => {
                let w = split_words(v);
                if w.len() != 2 {
                    return Err("expected 'IP ETH'".into());
                }
                let ip = IpArg::from_arg(&w[0])?.0;
                let eth = EthArg::from_arg(&w[1])?.0;
                let mut out = OutBatch::new(0);
                self.learn(ip, eth, true, &mut out, cx);
                out.flush(cx);
                Ok(())
            }
            "delete" => {
                let ip = IpArg::from_arg(v)?.0;
                match self.table.remove(&ip) {
                    Some(e) => {
                        self.pending -= e.pending.len();
                        self.drops[1] += e.pending.len() as u64;
                        Ok(())
                    }
                    None => Err(format!("no entry for {}", ip)),
                }
            }
            "clear" => {
                let n: usize = self.table.values().map(|e| e.pending.len()).sum();
                self.drops[1] += n as u64;
                self.pending = 0;
                self.table.clear();
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ARPQuerier",
    ports: "2/1-2",
    processing: "h/h",
    flow: "xy/x",
    source: include_str!("arp_querier.rs"),
    make: || {
        Box::new(ARPQuerier {
            ip: Ipv4Addr::UNSPECIFIED,
            eth: EtherAddr::default(),
            bcast: Ipv4Addr::BROADCAST,
            timeout: secs(300.0),
            poll_timeout: secs(60.0),
            broadcast_poll: false,
            retry: secs(1.0),
            max_tries: 5,
            capacity: 2048,
            entry_capacity: 0,
            entry_packet_capacity: 64,
            table: HashMap::new(),
            pending: 0,
            queries: 0,
            responses: 0,
            drops: [0; 7],
        })
    },
};
