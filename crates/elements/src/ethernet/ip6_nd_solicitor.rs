//! IP6NDSolicitor — encapsulates IPv6 packets in Ethernet headers found with neighbour discovery
//!
//! Synopsis: `IP6NDSolicitor(IP, ETH, [keywords TIMEOUT, POLL_TIMEOUT, RETRANSMIT,
//! MAX_SOLICIT, CAPACITY, ENTRY_PACKET_CAPACITY])`
//!
//! Ports: 2 inputs, 1 or 2 outputs, push.
//!
//! Input 0 takes IPv6 packets whose destination IPv6 annotation holds the next hop (set by a
//! route lookup; if it is `::` the IPv6 header's destination is used). If the next hop's
//! Ethernet address is known and its entry has not expired (it was confirmed at most TIMEOUT
//! ago), the packet leaves by output 0 with an Ethernet header (source ETH, type 0x86dd).
//! Multicast next hops go to their mapped 33:33 group address (RFC 2464 §7) without neighbour
//! discovery. Packets with no next hop at all are dropped.
//!
//! Otherwise the packet waits in the next hop's entry, and a neighbour solicitation (RFC 4861
//! §7.2.2) for it is sent — on output 1 if it exists, else on output 0 — from IP to the
//! target's solicited-node multicast address (Ethernet 33:33:ff:…), hop limit 255, with a
//! source link-layer address option holding ETH. Unanswered solicitations are repeated every
//! RETRANSMIT (default 1 s); RETRANSMIT after the MAX_SOLICIT-th (default 3, RFC 4861's
//! MAX_MULTICAST_SOLICIT) the next hop is given up: its waiting packets are dropped as
//! unresolved and the entry removed, so that the next packet for it starts again. Packets
//! arriving meanwhile only wait (Click sends a solicitation for each).
//!
//! An entry in use is checked before it expires (neighbour unreachability detection, RFC 4861
//! §7.3): when a packet uses an entry confirmed at least POLL_TIMEOUT ago (default 60 s; 0:
//! never), the packet still leaves at once, after a solicitation sent to the next hop's own
//! address and known Ethernet address, at most one per RETRANSMIT. A solicited advertisement
//! confirms the entry, so a busy next hop never expires and its packets never wait. Entries
//! expire TIMEOUT after they were last confirmed (default 120 s, as in Click; 0: never).
//!
//! Limits: an entry holds at most ENTRY_PACKET_CAPACITY packets (0, the default, means no
//! limit) and all entries together at most CAPACITY (default 2048; 0: no limit); a packet
//! beyond either is dropped. Click keeps one packet per next hop, dropping the older.
//!
//! Input 1 takes neighbour advertisements (Ethernet frames). A valid advertisement (RFC 4861
//! §7.1.2: hop limit 255, checksum, code 0, target not multicast, Solicited flag clear when
//! sent to a multicast address, well-formed options) for a next hop in the table updates it
//! as RFC 4861 §7.2.5 says: a next hop waiting for an answer learns the target link-layer
//! address (solicited or not) and its packets leave, in order; for a known next hop, a
//! different address replaces the known one only when the Override flag is set, and a
//! solicited advertisement confirms the entry. Advertisements without a target link-layer
//! address teach no address. Advertisements for next hops not in the table are ignored;
//! everything on input 1 is consumed, and what is not a valid advertisement is counted as a
//! drop.
//!
//! Hot swap: an IP6NDSolicitor with the same IP and ETH takes its predecessor's table,
//! waiting packets and counters.
//!
//! Every drop is counted in `drops`, by reason in `drop_details`; packets still waiting when
//! the router stops are counted as `unresolved at stop` (Click frees them without counting).
//!
//! Arguments: `IP` (IPv6 address, or AddressInfo name), `ETH` (Ethernet address); `TIMEOUT`,
//! `POLL_TIMEOUT`, `RETRANSMIT` (seconds; RETRANSMIT not 0); `MAX_SOLICIT` (at least 1);
//! `CAPACITY`; `ENTRY_PACKET_CAPACITY`.
//!
//! Handlers: `table` (r): one line per next hop, in address order, `IP VALID ETH AGE` (VALID
//! 1 once its address is known and the entry has not expired; ETH 00-00-00-00-00-00 while
//! unknown; AGE: seconds since the entry was confirmed or created, measured at the last
//! packet, timer or write). `stats` (r: `N packets killed`, `N ND Solicitation Message
//! sent`, as in Click), `queries` (r: solicitations sent), `responses` (r: valid
//! advertisements received), `count` (r, entries), `length` (r, packets waiting), `drops`
//! (r), `drop_details` (r), `insert` (w, `IP ETH`: the next hop becomes known, its packets
//! leave), `delete` (w, `IP`: the entry goes, its packets are dropped as cleared), `clear`
//! (w: every entry goes, likewise).
//!
//! Example: `c :: Classifier(12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -); rt[1]
//! -> nds :: IP6NDSolicitor(2001:db8:1::1, 02:00:00:00:00:01) -> Queue -> ToDevice(eth0);
//! c[1] -> [1]nds;`

use std::collections::{HashMap, VecDeque};
use std::net::Ipv6Addr;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};
use sluice_wire::ethernet::{ETHERTYPE_IPV6, HEADER_LEN as ETH_LEN};
use sluice_wire::icmpv6::*;
use sluice_wire::ipv6::{HEADER_LEN as IP6_LEN, NH_ICMPV6};
use sluice_wire::{EtherAddr, EthernetFrame, Ipv6Packet};

use crate::ip::common::ip_offset;

drop_reasons! {
    /// Why IP6NDSolicitor drops a packet.
    enum Reason {
        /// Beyond ENTRY_PACKET_CAPACITY or CAPACITY.
        QueueFull => "queue full",
        /// No advertisement after MAX_SOLICIT solicitations.
        Unresolved => "unresolved",
        /// Its entry was deleted or cleared.
        Cleared => "cleared",
        /// No next hop.
        NoDest => "no destination",
        /// Input 1: not a neighbour advertisement.
        NotAdvert => "not a neighbour advertisement",
        /// Input 1: too short, or with malformed options.
        Malformed => "malformed advertisement",
        /// Input 1: hop limit not 255.
        BadHopLimit => "hop limit not 255",
        /// Input 1: bad ICMPv6 checksum.
        BadChecksum => "bad ICMPv6 checksum",
        /// Input 1: fails another check of RFC 4861 §7.1.2.
        Invalid => "invalid advertisement",
        /// Still waiting when the router stopped.
        AtStop => "unresolved at stop",
    }
}

fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

/// One next hop.
struct Entry {
    /// Its Ethernet address, once known.
    eth: Option<EtherAddr>,
    /// When it was last confirmed (or created, while unknown).
    live_at: Timestamp,
    /// Solicitations sent since then.
    solicits: u32,
    /// When the last solicitation was sent.
    solicit_at: Timestamp,
    /// Packets waiting for the address, oldest first.
    pending: VecDeque<Packet>,
}

/// A valid neighbour advertisement.
struct Advert {
    target: Ipv6Addr,
    lladdr: Option<EtherAddr>,
    solicited: bool,
    override_: bool,
}

/// Reads and validates a neighbour advertisement frame (RFC 4861 §7.1.2).
fn parse_advert(d: &[u8]) -> Result<Advert, Reason> {
    let eth = EthernetFrame::new_checked(d).map_err(|_| Reason::Malformed)?;
    if eth.ethertype() != ETHERTYPE_IPV6 {
        return Err(Reason::NotAdvert);
    }
    let ip = Ipv6Packet::new_checked(eth.payload()).map_err(|_| Reason::Malformed)?;
    if ip.next_header() != NH_ICMPV6 || ip.payload().first() != Some(&TYPE_NEIGHBOR_ADVERT) {
        return Err(Reason::NotAdvert);
    }
    let m = Icmpv6Packet::new_unchecked(ip.payload());
    let na = NeighborRepr::parse(&m).map_err(|_| Reason::Malformed)?;
    if ip.hop_limit() != 255 {
        return Err(Reason::BadHopLimit);
    }
    if !m.verify_checksum(&ip.src(), &ip.dst()) {
        return Err(Reason::BadChecksum);
    }
    let solicited = na.flags & NA_SOLICITED != 0;
    if m.code() != 0 || na.target.is_multicast() || (ip.dst().is_multicast() && solicited) {
        return Err(Reason::Invalid);
    }
    Ok(Advert {
        target: na.target,
        lladdr: na.lladdr,
        solicited,
        override_: na.flags & NA_OVERRIDE != 0,
    })
}

/// The IP6NDSolicitor element.
pub struct IP6NDSolicitor {
    ip: Ipv6Addr,
    eth: EtherAddr,
    /// Entry lifetime after a confirmation; zero: entries never expire.
    timeout: Timestamp,
    /// Probe entries in use this long after they were confirmed; zero: never.
    poll_timeout: Timestamp,
    retransmit: Timestamp,
    max_solicit: u32,
    capacity: usize,
    entry_packet_capacity: usize,
    table: HashMap<Ipv6Addr, Entry, ahash::RandomState>,
    /// Packets waiting in all entries.
    pending: usize,
    /// When timer 0 fires, if it is scheduled.
    timer_at: Option<Timestamp>,
    /// The earliest time the timer is needed by, noted while the packets of a push are handled.
    wake: Option<Timestamp>,
    /// The time of the last packet, timer or write (read handlers get no clock).
    last_now: Timestamp,
    queries: u64,
    responses: u64,
    drops: Drops<Reason>,
}

impl IP6NDSolicitor {
    /// A solicitation for `target`: to its solicited-node address, or for a probe to the
    /// target itself at its known Ethernet address.
    fn solicitation(&self, target: &Ipv6Addr, probe: Option<EtherAddr>, ts: Timestamp) -> Packet {
        let ns = NeighborRepr {
            msg_type: TYPE_NEIGHBOR_SOLICIT,
            flags: 0,
            target: *target,
            lladdr: Some(self.eth),
        };
        let (dst, dst_eth) = match probe {
            Some(eth) => (*target, eth),
            None => {
                let s = solicited_node(target);
                (s, multicast_ether(&s))
            }
        };
        let mut q = Packet::new(ETH_LEN + IP6_LEN + ns.buffer_len());
        {
            let b = q.data_mut();
            b[0..6].copy_from_slice(&dst_eth.0);
            b[6..12].copy_from_slice(&self.eth.0);
            b[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
            // Sized above for this message: neither step can fail.
            let _ = ns.emit(&mut b[ETH_LEN + IP6_LEN..]);
            let _ = emit_ipv6_icmp(&mut b[ETH_LEN..], &self.ip, &dst, 255);
        }
        q.set_mac_offset(0);
        q.set_network_offset(ETH_LEN as isize);
        q.set_timestamp(ts);
        q
    }

    fn encap(&self, mut p: Packet, dst: EtherAddr) -> Packet {
        let h = p.push_front(ETH_LEN);
        h[0..6].copy_from_slice(&dst.0);
        h[6..12].copy_from_slice(&self.eth.0);
        h[12..14].copy_from_slice(&ETHERTYPE_IPV6.to_be_bytes());
        p.set_mac_offset(0);
        p
    }

    fn next_hop(p: &Packet) -> Ipv6Addr {
        let a = p.dst_ip6_anno();
        if !a.is_unspecified() {
            return a;
        }
        match Ipv6Packet::new_checked_truncated(&p.data()[ip_offset(p)..]) {
            Ok(ip) => ip.dst(),
            Err(_) => Ipv6Addr::UNSPECIFIED,
        }
    }

    fn expired(&self, e: &Entry, now: Timestamp) -> bool {
        self.timeout != Timestamp::ZERO && now >= e.live_at + self.timeout
    }

    /// Notes that timer 0 must fire by `at`.
    fn wake_by(&mut self, at: Timestamp) {
        if self.wake.is_none_or(|w| at < w) {
            self.wake = Some(at);
        }
    }

    /// Schedules timer 0 for the time noted by [`IP6NDSolicitor::wake_by`], unless it fires
    /// earlier already.
    fn sync_timer(&mut self, cx: &mut Cx) {
        if let Some(at) = self.wake.take() {
            if self.timer_at.is_none_or(|t| at < t) {
                cx.schedule_timer(0, at);
                self.timer_at = Some(at);
            }
        }
    }

    /// When an entry next needs the timer: a retransmission, or its expiry.
    fn due(&self, e: &Entry) -> Option<Timestamp> {
        match e.eth {
            None => Some(e.solicit_at + self.retransmit),
            Some(_) if self.timeout != Timestamp::ZERO => Some(e.live_at + self.timeout),
            Some(_) => None,
        }
    }

    /// Handles an IPv6 packet: returns it with its Ethernet header when it can leave now, or
    /// `None` when it waits or was dropped. Solicitations to send go to `queries`.
    fn handle_ip(
        &mut self,
        p: Packet,
        now: Timestamp,
        queries: &mut Vec<Packet>,
        last: &mut Option<(Ipv6Addr, EtherAddr)>,
    ) -> Option<Packet> {
        let nh = Self::next_hop(&p);
        if let Some((a, eth)) = *last {
            if a == nh {
                return Some(self.encap(p, eth));
            }
        }
        if nh.is_multicast() {
            return Some(self.encap(p, multicast_ether(&nh)));
        }
        if nh.is_unspecified() {
            self.drops.count(Reason::NoDest);
            return None;
        }
        let (timeout, poll, retransmit) = (self.timeout, self.poll_timeout, self.retransmit);
        if let Some(e) = self.table.get_mut(&nh) {
            let live = timeout == Timestamp::ZERO || now < e.live_at + timeout;
            if let (Some(eth), true) = (e.eth, live) {
                let probe = poll != Timestamp::ZERO
                    && now >= e.live_at + poll
                    && now >= e.solicit_at + retransmit;
                if probe {
                    (e.solicit_at, e.solicits) = (now, e.solicits + 1);
                    queries.push(self.solicitation(&nh, Some(eth), p.timestamp()));
                    self.queries += 1;
                }
                *last = Some((nh, eth));
                return Some(self.encap(p, eth));
            }
        }
        let e = self.table.entry(nh).or_insert_with(|| Entry {
            eth: None,
            live_at: now,
            solicits: 0,
            solicit_at: now,
            pending: VecDeque::new(),
        });
        if e.eth.is_some() {
            // Expired: the next hop is unknown again.
            (e.eth, e.live_at, e.solicits) = (None, now, 0);
        }
        let full = (self.entry_packet_capacity > 0
            && e.pending.len() >= self.entry_packet_capacity)
            || (self.capacity > 0 && self.pending >= self.capacity);
        let ts = p.timestamp();
        if full {
            self.drops.count(Reason::QueueFull);
        } else {
            e.pending.push_back(p);
            self.pending += 1;
        }
        let first = e.solicits == 0;
        if first {
            (e.solicits, e.solicit_at) = (1, now);
            queries.push(self.solicitation(&nh, None, ts));
            self.queries += 1;
            self.wake_by(now + retransmit);
        }
        None
    }

    /// Learns what advertisement (or `insert`) `a` says; `create` makes an entry for a
    /// target not in the table. The packets it releases go to `out`.
    fn learn(&mut self, a: &Advert, create: bool, now: Timestamp, out: &mut Batch, cx: &mut Cx) {
        if create && !self.table.contains_key(&a.target) {
            self.table.insert(
                a.target,
                Entry {
                    eth: None,
                    live_at: now,
                    solicits: 0,
                    solicit_at: now,
                    pending: VecDeque::new(),
                },
            );
        }
        let Some(e) = self.table.get_mut(&a.target) else {
            return;
        };
        let was_unknown = e.eth.is_none();
        match (e.eth, a.lladdr) {
            (None, None) => return,
            (None, Some(l)) => e.eth = Some(l),
            (Some(cur), Some(l)) if l != cur => {
                if !a.override_ {
                    return;
                }
                e.eth = Some(l);
            }
            (Some(_), _) => {}
        }
        let Some(eth) = e.eth else {
            return;
        };
        // Learning an address, or a solicited answer, confirms the entry.
        if a.solicited || was_unknown {
            (e.live_at, e.solicits) = (now, 0);
        }
        let waiting = std::mem::take(&mut e.pending);
        self.pending -= waiting.len();
        let due = self.due(&self.table[&a.target]);
        if let Some(at) = due {
            self.wake_by(at);
        }
        for p in waiting {
            let q = self.encap(p, eth);
            if let Err(q) = out.push(q) {
                cx.push(0, std::mem::take(out));
                let _ = out.push(q);
            }
        }
    }

    /// Handles an input 1 packet.
    fn handle_advert(&mut self, p: Packet, cx: &mut Cx) {
        let a = match parse_advert(p.data()) {
            Ok(a) => a,
            Err(r) => {
                self.drops.count(r);
                return;
            }
        };
        self.responses += 1;
        let now = cx.now();
        self.last_now = now;
        let mut out = Batch::new();
        self.learn(&a, false, now, &mut out, cx);
        self.sync_timer(cx);
        if !out.is_empty() {
            cx.push(0, out);
        }
    }

    /// Removes the entry of `ip` (all entries with `None`), dropping its packets as cleared.
    fn remove(&mut self, ip: Option<Ipv6Addr>) {
        let gone: Vec<Entry> = match ip {
            Some(ip) => self.table.remove(&ip).into_iter().collect(),
            None => self.table.drain().map(|(_, e)| e).collect(),
        };
        for e in gone {
            self.pending -= e.pending.len();
            self.drops.add(Reason::Cleared, e.pending.len() as u64);
        }
    }

    /// The `table` handler.
    fn table_string(&self) -> String {
        let now = self.last_now;
        let mut v: Vec<_> = self.table.iter().collect();
        v.sort_by_key(|(ip, _)| **ip);
        v.iter()
            .map(|(ip, e)| {
                let valid = e.eth.is_some() && !self.expired(e, now);
                let eth = e.eth.unwrap_or_default();
                format!("{} {} {} {}\n", ip, valid as u8, eth, now - e.live_at)
            })
            .collect()
    }

    /// The `insert` handler.
    fn insert(&mut self, v: &str, cx: &mut Cx) -> Result<(), String> {
        let w = split_words(v);
        if w.len() != 2 {
            return Err("expected 'IP ETH'".into());
        }
        let a = Advert {
            target: Ipv6Addr::from_arg(&w[0])?,
            lladdr: Some(EtherAddr::from_arg(&w[1])?),
            solicited: true,
            override_: true,
        };
        let now = cx.now();
        self.last_now = now;
        let mut out = Batch::new();
        self.learn(&a, true, now, &mut out, cx);
        self.sync_timer(cx);
        if !out.is_empty() {
            cx.push(0, out);
        }
        Ok(())
    }
}

impl Element for IP6NDSolicitor {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        for (key, slot) in [
            ("TIMEOUT", &mut self.timeout),
            ("POLL_TIMEOUT", &mut self.poll_timeout),
            ("RETRANSMIT", &mut self.retransmit),
        ] {
            if let Some(Seconds(s)) = args.read(key)? {
                *slot = secs(s);
            }
        }
        args.read_into("MAX_SOLICIT", &mut self.max_solicit)?;
        args.read_into("CAPACITY", &mut self.capacity)?;
        args.read_into("ENTRY_PACKET_CAPACITY", &mut self.entry_packet_capacity)?;
        self.ip = args.read_mp("IP")?;
        self.eth = args.read_mp("ETH")?;
        if self.retransmit <= Timestamp::ZERO {
            args.error("RETRANSMIT must be positive");
            return Err(());
        }
        if self.max_solicit == 0 {
            args.error("MAX_SOLICIT must be at least 1");
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, cx: &mut Cx) {
        if port == 1 {
            for p in batch {
                self.handle_advert(p, cx);
            }
            return;
        }
        let now = cx.now();
        self.last_now = now;
        let mut queries = Vec::new();
        // The next hop just resolved: the rest of a batch usually goes to it as well.
        let mut last = None;
        batch.filter_map(|p| self.handle_ip(p, now, &mut queries, &mut last));
        self.sync_timer(cx);
        for q in queries {
            cx.push_one(cx.noutputs() - 1, q);
        }
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        self.last_now = now;
        self.timer_at = None;
        let (mut failed, mut expired, mut resend) = (Vec::new(), Vec::new(), Vec::new());
        for (ip, e) in &self.table {
            if self.due(e).is_some_and(|d| d > now) {
                continue;
            }
            match e.eth {
                None if e.solicits >= self.max_solicit => failed.push(*ip),
                None => resend.push(*ip),
                Some(_) if self.expired(e, now) => expired.push(*ip),
                Some(_) => {}
            }
        }
        for ip in failed {
            if let Some(e) = self.table.remove(&ip) {
                self.pending -= e.pending.len();
                self.drops.add(Reason::Unresolved, e.pending.len() as u64);
            }
        }
        for ip in expired {
            self.table.remove(&ip);
        }
        for ip in resend {
            let ts = match self.table.get_mut(&ip) {
                Some(e) => {
                    (e.solicits, e.solicit_at) = (e.solicits + 1, now);
                    e.pending.front().map_or(now, Packet::timestamp)
                }
                None => continue,
            };
            let q = self.solicitation(&ip, None, ts);
            self.queries += 1;
            cx.push_one(cx.noutputs() - 1, q);
        }
        if let Some(at) = self.table.values().filter_map(|e| self.due(e)).min() {
            self.wake_by(at);
            self.sync_timer(cx);
        }
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<IP6NDSolicitor>() else {
            return;
        };
        if (old.ip, old.eth) != (self.ip, self.eth) {
            return;
        }
        self.table = std::mem::take(&mut old.table);
        self.pending = std::mem::take(&mut old.pending);
        (self.queries, self.responses) = (old.queries, old.responses);
        self.last_now = old.last_now;
        self.drops.take(&mut old.drops);
        if let Some(at) = self.table.values().filter_map(|e| self.due(e)).min() {
            self.wake_by(at);
            self.sync_timer(cx);
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        self.drops.add(Reason::AtStop, self.pending as u64);
        self.pending = 0;
        for e in self.table.values_mut() {
            e.pending.clear();
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", IP6NDSolicitor::table_string)
            .read("stats", |e| {
                format!(
                    "{} packets killed\n{} ND Solicitation Message sent\n",
                    e.drops.total(),
                    e.queries
                )
            })
            .read("queries", |e| e.queries)
            .read("responses", |e| e.responses)
            .read("count", |e| e.table.len())
            .read("length", |e| e.pending)
            .drops(|e| &e.drops)
            .write("insert", IP6NDSolicitor::insert)
            .write("delete", |e, v, cx| {
                let ip = Ipv6Addr::from_arg(v)?;
                e.last_now = cx.now();
                e.remove(Some(ip));
                Ok(())
            })
            .action("clear", |e| e.remove(None))
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6NDSolicitor",
    ports: "2/1-2",
    processing: "h/h",
    flow: "xy/x",
    source: include_str!("ip6_nd_solicitor.rs"),
    make: || {
        Box::new(IP6NDSolicitor {
            ip: Ipv6Addr::UNSPECIFIED,
            eth: EtherAddr::default(),
            timeout: secs(120.0),
            poll_timeout: secs(60.0),
            retransmit: secs(1.0),
            max_solicit: 3,
            capacity: 2048,
            entry_packet_capacity: 0,
            table: HashMap::default(),
            pending: 0,
            timer_at: None,
            wake: None,
            last_now: Timestamp::ZERO,
            queries: 0,
            responses: 0,
            drops: Drops::default(),
        })
    },
};
