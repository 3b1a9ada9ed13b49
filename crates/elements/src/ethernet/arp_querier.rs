//! ARPQuerier — encapsulates IP packets in Ethernet headers found with ARP
//!
//! Synopsis: `ARPQuerier(IP, ETH, [keywords TIMEOUT, POLL_TIMEOUT, BROADCAST_POLL, CAPACITY,
//! ENTRY_CAPACITY, ENTRY_PACKET_CAPACITY, CAPACITY_SLIM_FACTOR, BROADCAST])`
//!
//! Ports: 2 inputs, 1 or 2 outputs, push.
//!
//! Input 0 takes IP packets whose destination IP annotation holds the next hop (set by a
//! route lookup; if it is 0.0.0.0 the IP header's destination is used). If the next hop's
//! Ethernet address is known and its entry has not expired (it was learned at most TIMEOUT
//! ago), the packet leaves by output 0 with an Ethernet header (source ETH, type 0x0800).
//! Packets for 255.255.255.255 or the subnet broadcast address (BROADCAST, or derived from
//! `IP/LEN`) go to ff:ff:ff:ff:ff:ff; multicast destinations go to the mapped 01:00:5e group
//! address; neither needs ARP.
//!
//! Otherwise the packet waits in the next hop's entry, and an ARP request ("who has NEXT HOP?
//! tell IP", with the packet's timestamp) is broadcast — on output 1 if it exists, else on
//! output 0 — if the entry allows a query now: queries for one next hop are at least 0.1 s
//! apart, and 2 s apart once 10 have gone unanswered. There are no other retries: each
//! packet that arrives for an unanswered next hop may send one, as in Click. An entry that
//! waits keeps itself from expiring.
//!
//! Limits, as in Click's ARPTable: an entry holds at most ENTRY_PACKET_CAPACITY packets (0,
//! the default, means no limit; a packet beyond it is dropped). When more than CAPACITY
//! packets wait in all (default 2048; 0: no limit), the oldest waiting packets of the oldest
//! entries are dropped until only CAPACITY − CAPACITY/CAPACITY_SLIM_FACTOR (default factor
//! 2) remain. When there are more than ENTRY_CAPACITY entries (0, the default: no limit), the
//! oldest entries are removed with their packets. Every TIMEOUT (default 300 s; 0: entries
//! never expire) expired entries are removed with their packets.
//!
//! An entry in use is polled before it expires: when a packet uses an entry learned at least
//! POLL_TIMEOUT ago (default 60 s; 0: never poll), the packet still leaves at once, after an
//! ARP request for the next hop sent to its known Ethernet address (to the broadcast address
//! with `BROADCAST_POLL true`), as often as the entry allows queries. The reply refreshes the
//! entry, so a busy next hop never expires and its packets never wait.
//!
//! Input 1 takes ARP packets (Ethernet frames). Replies from a unicast sender teach the table
//! the sender's address and release the packets waiting for it, in order; requests and
//! other packets are consumed. Input 1 packets shorter than an Ethernet ARP packet are
//! counted as drops.
//!
//! Hot swap: an ARPQuerier with the same IP, ETH and broadcast address takes its
//! predecessor's table, waiting packets and counters.
//!
//! Every drop is counted in `drops`, by reason in `drop_details`; packets still waiting for
//! an answer when the router stops are counted as `unresolved at stop` (Click frees them
//! without counting).
//!
//! Arguments: `IP` (address, `IP/LEN`, or AddressInfo name); `ETH`; `TIMEOUT` (seconds,
//! default 300); `POLL_TIMEOUT` (seconds, default 60); `BROADCAST_POLL` (boolean, default
//! false); `CAPACITY` (default 2048); `ENTRY_CAPACITY` (default 0); `ENTRY_PACKET_CAPACITY`
//! (default 0); `CAPACITY_SLIM_FACTOR` (default 2, not 0); `BROADCAST` (address).
//!
//! Handlers: `table` (r): one line per next hop, oldest first, `IP VALID ETH AGE` (AGE:
//! seconds since the entry was last learned or kept alive, measured at the last packet or
//! timer). `stats` (r: `N packets killed`, `N ARP queries sent`), `queries` (r), `responses`
//! (r), `drops` (r), `drop_details` (r), `count` (r, entries), `length` (r, packets waiting),
//! `broadcast` (rw), `ipaddr` (rw), `insert` (w, `IP ETH`), `delete` (w, `IP`: the entry
//! becomes unknown), `clear` (w: drops every entry and its packets, and zeroes `queries`,
//! `responses` and `drops`).
//!
//! Example: `rt[1] -> ... -> arpq :: ARPQuerier(198.18.0.1, 00:00:c0:ae:67:ef) -> Queue ->
//! ToDevice(eth0); c0[1] -> [1]arpq;`

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};
use sluice_wire::arp::{OP_REPLY, OP_REQUEST};
use sluice_wire::ethernet::{ETHERTYPE_ARP, ETHERTYPE_IPV4};
use sluice_wire::{build_arp, ArpPacket, EtherAddr, EthernetFrame, Ipv4Packet, Ipv4Prefix};

use crate::ip::address_info;
use crate::ip::common::{details, ip_offset, EthArg, IpArg};

const REASONS: [&str; 6] = [
    "queue full",
    "expired",
    "table full",
    "bad ARP packet",
    "no destination",
    "unresolved at stop",
];
const QUEUE_FULL: usize = 0;
const EXPIRED: usize = 1;
const TABLE_FULL: usize = 2;
const BAD_ARP: usize = 3;
const NO_DEST: usize = 4;
const AT_STOP: usize = 5;

/// Where an entry sits in the age list: entries are kept in order of the time they were
/// last learned or kept alive, ties in the order they got there.
type AgeKey = (Timestamp, i64);

struct Entry {
    eth: EtherAddr,
    known: bool,
    live_at: Timestamp,
    polled_at: Timestamp,
    polls: u8,
    age: AgeKey,
    pending: VecDeque<Packet>,
}

impl Entry {
    /// Whether a query may be sent now: 0.1 s after the last, 2 s once 10 went unanswered.
    fn allow_poll(&self, now: Timestamp) -> bool {
        let gap = if self.polls >= 10 { 2.0 } else { 0.1 };
        now >= self.polled_at + Timestamp::from_secs_f64(gap)
    }

    fn mark_poll(&mut self, now: Timestamp) {
        self.polled_at = now;
        self.polls = self.polls.saturating_add(1);
    }
}

/// The ARPQuerier element.
pub struct ARPQuerier {
    ip: Ipv4Addr,
    eth: EtherAddr,
    bcast: Ipv4Addr,
    /// Entry lifetime; zero: entries never expire.
    timeout: Timestamp,
    /// Poll entries in use this long after they were learned; zero: never.
    poll_timeout: Timestamp,
    broadcast_poll: bool,
    capacity: usize,
    entry_capacity: usize,
    entry_packet_capacity: usize,
    slim_factor: usize,
    table: HashMap<Ipv4Addr, Entry>,
    age: BTreeMap<AgeKey, Ipv4Addr>,
    /// Counter giving age-list ties their order (up for "after", down for "before").
    seq_after: i64,
    seq_before: i64,
    pending: usize,
    /// The time of the last packet or timer (read handlers get no clock).
    last_now: Timestamp,
    queries: u64,
    responses: u64,
    drops: [u64; 6],
}

fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

impl ARPQuerier {
    /// An ARP request for `target`, sent to Ethernet address `dst`, stamped `ts`.
    fn query_frame(&self, target: Ipv4Addr, dst: EtherAddr, ts: Timestamp) -> Packet {
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
        q.set_network_offset(14);
        q.set_timestamp(ts);
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

    fn send_query(&mut self, target: Ipv4Addr, dst: EtherAddr, ts: Timestamp, cx: &mut Cx) {
        let q = self.query_frame(target, dst, ts);
        self.queries += 1;
        cx.push_one(cx.noutputs() - 1, q);
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

    fn expired(&self, e: &Entry, now: Timestamp) -> bool {
        self.timeout != Timestamp::ZERO && e.live_at + self.timeout < now
    }

    fn known(&self, e: &Entry, now: Timestamp) -> bool {
        e.known && !self.expired(e, now)
    }

    /// Looks up a known next hop: its address and whether to poll it first.
    fn lookup(&mut self, nh: Ipv4Addr, now: Timestamp) -> Option<(EtherAddr, bool)> {
        let e = self.table.get(&nh)?;
        if !self.known(e, now) {
            return None;
        }
        let poll_due = self.poll_timeout != Timestamp::ZERO
            && now >= e.live_at + self.poll_timeout
            && e.allow_poll(now);
        let e = self.table.get_mut(&nh)?;
        if poll_due {
            e.mark_poll(now);
        }
        Some((e.eth, poll_due))
    }

    /// Drops every packet of `e` (removed from the table) for `reason`.
    fn kill_entry(&mut self, e: Entry, reason: usize) {
        self.pending -= e.pending.len();
        self.drops[reason] += e.pending.len() as u64;
    }

    /// Click's slim: removes expired entries (and the oldest ones beyond ENTRY_CAPACITY) with
    /// their packets, then drops the oldest waiting packets while more than CAPACITY wait.
    /// `extra` counts entries or packets about to be added.
    fn slim(&mut self, now: Timestamp, extra_entries: usize, extra_packets: usize) {
        while let Some((&key, &ip)) = self.age.iter().next() {
            let e = &self.table[&ip];
            let over =
                self.entry_capacity > 0 && self.table.len() + extra_entries > self.entry_capacity;
            let reason = if self.expired(e, now) {
                EXPIRED
            } else if over {
                TABLE_FULL
            } else {
                break;
            };
            self.age.remove(&key);
            if let Some(e) = self.table.remove(&ip) {
                self.kill_entry(e, reason);
            }
        }
        if self.capacity > 0 && self.pending + extra_packets > self.capacity {
            let keep = (self.capacity - self.capacity / self.slim_factor).max(1);
            let ips: Vec<Ipv4Addr> = self.age.values().copied().collect();
            for ip in ips {
                if self.pending + extra_packets <= keep {
                    break;
                }
                if let Some(e) = self.table.get_mut(&ip) {
                    while self.pending + extra_packets > keep && e.pending.pop_front().is_some() {
                        self.pending -= 1;
                        self.drops[QUEUE_FULL] += 1;
                    }
                }
            }
        }
    }

    /// Moves `ip`'s entry to a new place in the age list.
    fn set_age(&mut self, ip: Ipv4Addr, key: AgeKey) {
        if let Some(e) = self.table.get_mut(&ip) {
            self.age.remove(&e.age);
            e.age = key;
            self.age.insert(key, ip);
        }
    }

    /// The entry for `ip`, created (as Click's ARPTable::ensure does) if missing.
    fn ensure(&mut self, ip: Ipv4Addr, now: Timestamp, cx: &mut Cx) {
        if self.table.contains_key(&ip) {
            return;
        }
        if self.entry_capacity > 0 && self.table.len() >= self.entry_capacity {
            self.slim(now, 1, 0);
        }
        self.seq_after += 1;
        let age = (now, self.seq_after);
        self.table.insert(
            ip,
            Entry {
                eth: EtherAddr::BROADCAST,
                known: false,
                live_at: now,
                polled_at: now - secs(1.0),
                polls: 0,
                age,
                pending: VecDeque::new(),
            },
        );
        self.age.insert(age, ip);
        if self.timeout != Timestamp::ZERO && !cx.timer_scheduled(0) {
            cx.schedule_after(0, self.timeout);
        }
    }

    /// Queues `p` for next hop `nh`, sending a query if the entry allows one.
    fn append_query(&mut self, nh: Ipv4Addr, p: Packet, now: Timestamp, cx: &mut Cx) {
        self.ensure(nh, now, cx);
        // A next hop still in use is kept just short of expiring.
        if self.timeout != Timestamp::ZERO {
            let min_live = now - self.timeout;
            if self.table[&nh].live_at < min_live {
                self.seq_before -= 1;
                let key = (min_live, self.seq_before);
                if let Some(e) = self.table.get_mut(&nh) {
                    e.live_at = min_live;
                }
                self.set_age(nh, key);
            }
        }
        if self.entry_packet_capacity > 0
            && self.table[&nh].pending.len() >= self.entry_packet_capacity
        {
            self.drops[QUEUE_FULL] += 1;
            return;
        }
        if self.capacity > 0 && self.pending + 1 > self.capacity {
            self.slim(now, 0, 1);
        }
        let ts = p.timestamp();
        let Some(e) = self.table.get_mut(&nh) else {
            self.drops[TABLE_FULL] += 1;
            return;
        };
        e.pending.push_back(p);
        self.pending += 1;
        if e.allow_poll(now) {
            e.mark_poll(now);
            self.send_query(nh, EtherAddr::BROADCAST, ts, cx);
        }
    }

    /// Handles an IP packet: returns it with its Ethernet header when it can leave now, or
    /// `None` when it waits for ARP or was dropped. `now` is read once per batch; `last`
    /// caches the batch's last resolved next hop (no poll can be due for it again within
    /// the batch), so a batch for one next hop costs one table lookup.
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
        let now = *now.get_or_insert_with(|| cx.now());
        self.last_now = now;
        if let Some((eth, poll)) = self.lookup(nh, now) {
            if poll {
                let dst = if self.broadcast_poll {
                    EtherAddr::BROADCAST
                } else {
                    eth
                };
                self.send_query(nh, dst, p.timestamp(), cx);
            }
            *last = Some((nh, eth));
            return Some(self.encap(p, eth));
        }
        if nh.is_broadcast() || nh == self.bcast {
            return Some(self.encap(p, EtherAddr::BROADCAST));
        }
        if nh.is_multicast() {
            let o = nh.octets();
            return Some(self.encap(p, EtherAddr([0x01, 0x00, 0x5e, o[1] & 0x7f, o[2], o[3]])));
        }
        if nh.is_unspecified() {
            self.drops[NO_DEST] += 1;
            return None;
        }
        self.append_query(nh, p, now, cx);
        None
    }

    /// Learns `ip` at `eth` (a reply or `insert`) and sends the packets that waited for it.
    fn learn(&mut self, ip: Ipv4Addr, eth: EtherAddr, cx: &mut Cx) {
        let now = cx.now();
        self.last_now = now;
        self.ensure(ip, now, cx);
        self.seq_after += 1;
        let key = (now, self.seq_after);
        let Some(e) = self.table.get_mut(&ip) else {
            return;
        };
        e.eth = eth;
        e.known = !eth.is_broadcast();
        e.live_at = now;
        e.polls = 0;
        e.polled_at = now - secs(1.0);
        let waiting = std::mem::take(&mut e.pending);
        self.set_age(ip, key);
        self.pending -= waiting.len();
        let mut out = Batch::new();
        for p in waiting {
            let mut n = None;
            let mut last = None;
            if let Some(q) = self.handle_ip(p, &mut n, &mut last, cx) {
                if out.push(q).is_err() {
                    cx.push(0, std::mem::take(&mut out));
                }
            }
        }
        if !out.is_empty() {
            cx.push(0, out);
        }
    }

    fn handle_arp(&mut self, p: Packet, cx: &mut Cx) {
        let d = p.data();
        let (Ok(eth), true) = (EthernetFrame::new_checked(d), d.len() >= 14 + 28) else {
            self.drops[BAD_ARP] += 1;
            return;
        };
        self.responses += 1;
        let Ok(arp) = ArpPacket::new_checked(eth.payload()) else {
            return;
        };
        let sha = arp.sender_hw();
        if eth.ethertype() == ETHERTYPE_ARP
            && arp.is_ether_ipv4()
            && arp.op() == OP_REPLY
            && !sha.is_group()
        {
            self.learn(arp.sender_ip(), sha, cx);
        }
    }

    /// Drops every entry and its packets.
    fn clear(&mut self) {
        for (_, e) in std::mem::take(&mut self.table) {
            self.drops[EXPIRED] += e.pending.len() as u64;
        }
        self.age.clear();
        self.pending = 0;
    }

    fn table_string(&self) -> String {
        let now = self.last_now;
        let mut s = String::new();
        for ip in self.age.values() {
            let e = &self.table[ip];
            s.push_str(&format!(
                "{} {} {} {}\n",
                ip,
                self.known(e, now) as u8,
                e.eth,
                now - e.live_at
            ));
        }
        s
    }
}

impl Element for ARPQuerier {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        // Keywords first, as in Click: `ARPQuerier(TIMEOUT 1s, IP, ETH)` is allowed.
        if let Some(Seconds(s)) = args.read("TIMEOUT")? {
            self.timeout = secs(s);
        }
        if let Some(Seconds(s)) = args.read("POLL_TIMEOUT")? {
            self.poll_timeout = secs(s);
        }
        self.broadcast_poll = args.read("BROADCAST_POLL")?.unwrap_or(false);
        if let Some(n) = args.read::<usize>("CAPACITY")? {
            self.capacity = n;
        }
        if let Some(n) = args.read::<usize>("ENTRY_PACKET_CAPACITY")? {
            self.entry_packet_capacity = n;
        }
        if let Some(n) = args.read::<usize>("ENTRY_CAPACITY")? {
            self.entry_capacity = n;
        }
        if let Some(n) = args.read::<usize>("CAPACITY_SLIM_FACTOR")? {
            if n == 0 {
                args.error("CAPACITY_SLIM_FACTOR cannot be zero");
                return Err(());
            }
            self.slim_factor = n;
        }
        let bcast = args.read::<IpArg>("BROADCAST")?;
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
        self.bcast = match bcast {
            Some(b) => b.0,
            None => match len {
                Some(l) if l < 31 => Ipv4Addr::from(u32::from(addr) | !Ipv4Prefix::mask_of(l)),
                _ => Ipv4Addr::BROADCAST,
            },
        };
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
        for p in batch {
            self.handle_arp(p, cx);
        }
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<ARPQuerier>() else {
            return;
        };
        if (old.ip, old.eth, old.bcast) != (self.ip, self.eth, self.bcast) {
            return;
        }
        self.table = std::mem::take(&mut old.table);
        self.age = std::mem::take(&mut old.age);
        (self.seq_after, self.seq_before) = (old.seq_after, old.seq_before);
        self.pending = std::mem::take(&mut old.pending);
        self.last_now = old.last_now;
        (self.queries, self.responses, self.drops) = (old.queries, old.responses, old.drops);
        if self.timeout != Timestamp::ZERO && !self.table.is_empty() {
            cx.schedule_after(0, self.timeout);
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        self.last_now = now;
        self.slim(now, 0, 0);
        if !self.table.is_empty() {
            cx.schedule_after(0, self.timeout + secs(1.0));
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        self.drops[AT_STOP] += self.pending as u64;
        self.pending = 0;
        for e in self.table.values_mut() {
            e.pending.clear();
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("table"),
                Handler::r("stats"),
                Handler::r("queries"),
                Handler::r("responses"),
                Handler::r("drops"),
                Handler::r("drop_details"),
                Handler::r("count"),
                Handler::r("length"),
                Handler::rw("broadcast"),
                Handler::rw("ipaddr"),
                Handler::w("insert"),
                Handler::w("delete"),
                Handler::w("clear"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        let drops: u64 = self.drops.iter().sum();
        Some(match name {
            "table" => self.table_string(),
            "stats" => format!(
                "{} packets killed\n{} ARP queries sent\n",
                drops, self.queries
            ),
            "queries" => self.queries.to_string(),
            "responses" => self.responses.to_string(),
            "drops" => drops.to_string(),
            "drop_details" => details(&REASONS, &self.drops),
            "count" => self.table.len().to_string(),
            "length" => self.pending.to_string(),
            "broadcast" => self.bcast.to_string(),
            "ipaddr" => self.ip.to_string(),
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
                self.learn(ip, eth, cx);
            }
            "delete" => {
                let ip = IpArg::from_arg(v)?.0;
                let now = cx.now();
                self.ensure(ip, now, cx);
                if let Some(e) = self.table.get_mut(&ip) {
                    e.eth = EtherAddr::BROADCAST;
                    e.known = false;
                    e.live_at = now;
                }
            }
            "clear" => {
                self.clear();
                self.queries = 0;
                self.responses = 0;
                self.drops = [0; 6];
            }
            "broadcast" => self.bcast = IpArg::from_arg(v)?.0,
            "ipaddr" => self.ip = IpArg::from_arg(v)?.0,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
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
            capacity: 2048,
            entry_capacity: 0,
            entry_packet_capacity: 0,
            slim_factor: 2,
            table: HashMap::new(),
            age: BTreeMap::new(),
            seq_after: 0,
            seq_before: 0,
            pending: 0,
            last_now: Timestamp::ZERO,
            queries: 0,
            responses: 0,
            drops: [0; 6],
        })
    },
};
