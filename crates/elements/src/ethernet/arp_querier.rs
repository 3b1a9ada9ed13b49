//! ARPQuerier — encapsulates IP packets in Ethernet headers found with ARP
//!
//! Synopsis: `ARPQuerier(IP, ETH, [keywords TABLE, TIMEOUT, POLL_TIMEOUT, BROADCAST_POLL,
//! CAPACITY, ENTRY_CAPACITY, ENTRY_PACKET_CAPACITY, CAPACITY_SLIM_FACTOR, BROADCAST])`
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
//! The table is the querier's own unless `TABLE` names an ARPTable element (`sluice doc
//! ARPTable`): then the next hops and their waiting packets are kept there, shared with the
//! other queriers that name it (what one learns from a reply, the others use at once), the
//! limits are the ARPTable's, and CAPACITY, ENTRY_CAPACITY, ENTRY_PACKET_CAPACITY,
//! CAPACITY_SLIM_FACTOR and TIMEOUT configure nothing, as in Click. The handlers `table`,
//! `count`, `length`, `insert`, `delete` and `clear` then act on the shared table.
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
//! predecessor's counters and, when both have their own tables, its table and waiting
//! packets (a shared table moves with its ARPTable).
//!
//! Every drop is counted in `drops`, by reason in `drop_details`; packets still waiting for
//! an answer when the router stops are counted as `unresolved at stop` (Click frees them
//! without counting). With TABLE, the drops the table's limits cause (queue full, expired,
//! table full, unresolved at stop) are the ARPTable's to count, in its own `drops`.
//!
//! Arguments: `IP` (address, `IP/LEN`, or AddressInfo name); `ETH`; `TABLE` (an ARPTable
//! element's name; default: a table of the querier's own); `TIMEOUT` (seconds, default
//! 300); `POLL_TIMEOUT` (seconds, default 60); `BROADCAST_POLL` (boolean, default false);
//! `CAPACITY` (default 2048); `ENTRY_CAPACITY` (default 0); `ENTRY_PACKET_CAPACITY` (default
//! 0); `CAPACITY_SLIM_FACTOR` (default 2, not 0); `BROADCAST` (address).
//!
//! Handlers: `table` (r): one line per next hop, oldest first, `IP VALID ETH AGE` (AGE:
//! seconds since the entry was last learned or kept alive, measured at the last packet or
//! timer). `stats` (r: `N packets killed`, `N ARP queries sent`; a shared table's drops
//! included, as in Click), `queries` (r), `responses` (r), `drops` (r), `drop_details` (r),
//! `count` (r, entries), `length` (r, packets waiting), `broadcast` (rw), `ipaddr` (rw),
//! `insert` (w, `IP ETH`), `delete` (w, `IP`: the entry becomes unknown), `clear` (w: drops
//! every entry and its packets, and zeroes `queries`, `responses` and `drops`; a shared
//! table's drop count stays).
//!
//! Example: `rt[1] -> ... -> arpq :: ARPQuerier(198.18.0.1, 00:00:c0:ae:67:ef) -> Queue ->
//! ToDevice(eth0); c0[1] -> [1]arpq;` Two interfaces of one host sharing a table:
//! `arpt :: ARPTable; ... -> ARPQuerier(TABLE arpt, 198.18.0.1, 02:00:00:00:00:01) -> ...;
//! ... -> ARPQuerier(TABLE arpt, 198.18.0.2, 02:00:00:00:00:02) -> ...;`

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};

use sluice_core::{Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, InitCx, Packet};
use sluice_core::{Table, Timestamp};
use sluice_lang::args::{Args, FromArg, Seconds, Word};
use sluice_wire::arp::{OP_REPLY, OP_REQUEST};
use sluice_wire::ethernet::{ETHERTYPE_ARP, ETHERTYPE_IPV4};
use sluice_wire::{build_arp, ArpPacket, EtherAddr, EthernetFrame, Ipv4Packet, Ipv4Prefix};

use super::arp_table::{lock, parse_insert, secs, ARPTable, ArpTable, Reason};
use crate::ip::address_info;
use crate::ip::common::ip_offset;

/// The querier's table: its own, or an ARPTable element's (TABLE).
enum QuerierTable {
    Own(ArpTable),
    Shared(Arc<Mutex<ArpTable>>),
}

impl QuerierTable {
    /// The table, for the duration of a batch: directly when it is the querier's own, else
    /// under the shared table's lock (taken once per batch on the hot path).
    #[inline]
    fn get(&mut self) -> TableRef<'_> {
        match self {
            QuerierTable::Own(t) => TableRef::Own(t),
            QuerierTable::Shared(t) => TableRef::Shared(lock(t)),
        }
    }

    /// Reads the table (handlers).
    fn read<R>(&self, f: impl FnOnce(&ArpTable) -> R) -> R {
        match self {
            QuerierTable::Own(t) => f(t),
            QuerierTable::Shared(t) => f(&lock(t)),
        }
    }
}

/// The table while a querier uses it (the shared table stays locked until this is dropped).
enum TableRef<'a> {
    Own(&'a mut ArpTable),
    Shared(MutexGuard<'a, ArpTable>),
}

impl TableRef<'_> {
    #[inline]
    fn get(&mut self) -> &mut ArpTable {
        match self {
            TableRef::Own(t) => t,
            TableRef::Shared(t) => t,
        }
    }
}

/// What the packets of one pass (a batch, or the packets a reply releases) share while the
/// table is held.
#[derive(Default)]
struct Pass {
    /// The time, read once, at the first packet that needs it.
    now: Option<Timestamp>,
    /// The pass's last resolved next hop and its address (no poll can be due for it again
    /// within the pass), so that a batch for one next hop costs one table lookup.
    last: Option<(Ipv4Addr, EtherAddr)>,
    /// ARP queries, sent once the table is released.
    queries: Vec<Packet>,
    /// Packets dropped for want of a next hop, counted once the table is released.
    no_dest: u64,
}

/// What the querier is apart from its table: addresses, settings and counters.
struct Querier {
    ip: Ipv4Addr,
    eth: EtherAddr,
    bcast: Ipv4Addr,
    /// Poll entries in use this long after they were learned; zero: never.
    poll_timeout: Timestamp,
    broadcast_poll: bool,
    queries: u64,
    responses: u64,
}

impl Querier {
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

    /// Makes an ARP query; it is sent once the table is released.
    fn query(&mut self, target: Ipv4Addr, dst: EtherAddr, ts: Timestamp, pass: &mut Pass) {
        pass.queries.push(self.query_frame(target, dst, ts));
        self.queries += 1;
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
    /// `None` when it waits for ARP or was dropped.
    fn handle_ip(
        &mut self,
        t: &mut ArpTable,
        p: Packet,
        pass: &mut Pass,
        cx: &mut Cx,
    ) -> Option<Packet> {
        let nh = Self::next_hop(&p);
        if let Some((a, eth)) = pass.last {
            if a == nh {
                return Some(self.encap(p, eth));
            }
        }
        let now = *pass.now.get_or_insert_with(|| cx.now());
        t.last_now = now;
        if let Some((eth, poll)) = t.lookup(nh, now, self.poll_timeout) {
            if poll {
                let dst = if self.broadcast_poll {
                    EtherAddr::BROADCAST
                } else {
                    eth
                };
                self.query(nh, dst, p.timestamp(), pass);
            }
            pass.last = Some((nh, eth));
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
            pass.no_dest += 1;
            return None;
        }
        if let Some(ts) = t.append(nh, p, now, cx) {
            self.query(nh, EtherAddr::BROADCAST, ts, pass);
        }
        None
    }

    /// Learns `ip` at `eth` (a reply or `insert`) and handles the packets that waited for
    /// it, in order: those that leave go to `out`.
    fn learn(
        &mut self,
        t: &mut ArpTable,
        ip: Ipv4Addr,
        eth: EtherAddr,
        out: &mut Vec<Batch>,
        pass: &mut Pass,
        cx: &mut Cx,
    ) {
        let now = cx.now();
        pass.now = Some(now);
        t.insert(ip, eth, now, cx);
        let mut b = Batch::new();
        for p in t.take_waiting(ip) {
            if let Some(q) = self.handle_ip(t, p, pass, cx) {
                if let Err(q) = b.push(q) {
                    out.push(std::mem::take(&mut b));
                    let _ = b.push(q);
                }
            }
        }
        if !b.is_empty() {
            out.push(b);
        }
    }
}

/// The ARPQuerier element.
pub struct ARPQuerier {
    q: Querier,
    table: QuerierTable,
    /// TABLE: the ARPTable element's name, and its index if the name was found.
    table_elem: Option<(String, Option<usize>)>,
    /// With a shared table (whose drops are the ARPTable's), the querier's drops; its own
    /// table counts them otherwise.
    drops: Drops<Reason>,
}

impl ARPQuerier {
    /// The querier's drops by reason: its own table's, or its own with a shared table.
    fn drops(&self) -> &Drops<Reason> {
        match &self.table {
            QuerierTable::Own(t) => &t.drops,
            QuerierTable::Shared(_) => &self.drops,
        }
    }

    /// The querier's drops, to count one.
    fn drops_mut(&mut self) -> &mut Drops<Reason> {
        match &mut self.table {
            QuerierTable::Own(t) => &mut t.drops,
            QuerierTable::Shared(_) => &mut self.drops,
        }
    }

    /// Ends a pass once the table is released: counts its drops, pushes its queries, then
    /// `out`.
    fn finish(&mut self, pass: Pass, out: impl IntoIterator<Item = Batch>, cx: &mut Cx) {
        self.drops_mut().add(Reason::NoDest, pass.no_dest);
        for q in pass.queries {
            cx.push_one(cx.noutputs() - 1, q);
        }
        for b in out {
            if !b.is_empty() {
                cx.push(0, b);
            }
        }
    }

    /// Learns `ip` at `eth` and sends the packets that waited for it.
    fn learn(&mut self, ip: Ipv4Addr, eth: EtherAddr, cx: &mut Cx) {
        let (mut out, mut pass) = (Vec::new(), Pass::default());
        let mut table = self.table.get();
        self.q.learn(table.get(), ip, eth, &mut out, &mut pass, cx);
        drop(table);
        self.finish(pass, out, cx);
    }

    fn handle_arp(&mut self, p: Packet, cx: &mut Cx) {
        let d = p.data();
        let (Ok(eth), true) = (EthernetFrame::new_checked(d), d.len() >= 14 + 28) else {
            self.drops_mut().count(Reason::BadArp);
            return;
        };
        self.q.responses += 1;
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
}

impl Element for ARPQuerier {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        // Keywords first, as in Click: `ARPQuerier(TIMEOUT 1s, IP, ETH)` is allowed.
        let mut own = ArpTable::default();
        own.read_config(args)?;
        if let Some(Seconds(s)) = args.read("POLL_TIMEOUT")? {
            self.q.poll_timeout = secs(s);
        }
        self.q.broadcast_poll = args.read("BROADCAST_POLL")?.unwrap_or(false);
        // With TABLE, the table's keywords are the ARPTable's: these configure nothing.
        self.table_elem = args
            .read::<Word>("TABLE")?
            .map(|w| (w.0.clone(), cx.find_element(&w.0)));
        if self.table_elem.is_none() {
            own.check(args)?;
            self.table = QuerierTable::Own(own);
        }
        let bcast = args.read::<Ipv4Addr>("BROADCAST")?;
        let ip: String = args.read_mp("IP")?;
        let t = ip.trim();
        let (addr, len) = if let Some((a, l)) = t.split_once('/') {
            match (Ipv4Addr::from_arg(a), l.parse::<u8>()) {
                (Ok(a), Ok(l)) if l <= 32 => (a, Some(l)),
                _ => {
                    args.error("IP: expected IP address");
                    return Err(());
                }
            }
        } else {
            // A name means its address (a /32), else its prefix, as in Click's IPPrefixArg.
            match Ipv4Addr::from_arg(t) {
                Ok(a) => (a, Some(32)),
                Err(e) => match sluice_lang::names::lookup_net(t) {
                    Some((a, l)) => (a, Some(l)),
                    None => {
                        args.error(format!("IP: {}", e));
                        return Err(());
                    }
                },
            }
        };
        self.q.ip = addr;
        // ETH may be omitted when IP is an AddressInfo name with an Ethernet address.
        let eth = match args.read_p::<EtherAddr>("ETH")? {
            Some(e) => e,
            None => match address_info::lookup_eth(t) {
                Some(e) => e,
                None => {
                    args.error("missing mandatory ETH argument");
                    return Err(());
                }
            },
        };
        self.q.eth = eth;
        self.q.bcast = match bcast {
            Some(b) => b,
            None => match len {
                Some(l) if l < 31 => Ipv4Addr::from(u32::from(addr) | !Ipv4Prefix::mask_of(l)),
                _ => Ipv4Addr::BROADCAST,
            },
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let Some((name, idx)) = &self.table_elem else {
            return Ok(());
        };
        let Some(idx) = *idx else {
            return Err(format!("TABLE: '{}' does not name an element", name));
        };
        let shared = cx
            .element(idx)
            .and_then(|e| e.as_any().downcast_ref::<ARPTable>())
            .map(ARPTable::shared)
            .ok_or_else(|| {
                format!(
                    "TABLE: '{}' is not an ARPTable (element type mismatch)",
                    name
                )
            })?;
        self.table = QuerierTable::Shared(shared);
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, cx: &mut Cx) {
        if port == 0 {
            // In place: packets that leave now keep their slots; ARP queries (if any) are
            // pushed once the table is released, before the batch.
            let mut pass = Pass::default();
            let mut table = self.table.get();
            let (q, t) = (&mut self.q, table.get());
            batch.filter_map(|p| q.handle_ip(t, p, &mut pass, cx));
            drop(table);
            self.finish(pass, [batch], cx);
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
        let (q, o) = (&mut self.q, &old.q);
        if (o.ip, o.eth, o.bcast) != (q.ip, q.eth, q.bcast) {
            return;
        }
        (q.queries, q.responses) = (o.queries, o.responses);
        // A shared table moves with its ARPTable; the querier keeps only its counters.
        if let (QuerierTable::Own(t), QuerierTable::Own(o)) = (&mut self.table, &mut old.table) {
            t.take_entries(o);
            if t.timeout != Timestamp::ZERO && t.count() > 0 {
                cx.schedule_after(0, t.timeout);
            }
        } else {
            self.drops_mut().take(old.drops_mut());
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        if let Some(after) = self.table.get().get().expire(now) {
            cx.schedule_after(0, after);
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        // A shared table's packets are its ARPTable's to count.
        if let QuerierTable::Own(t) = &mut self.table {
            t.stop();
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", |e| e.table.read(ArpTable::table_string))
            .read("stats", |e| {
                // As in Click, a shared table's drops too.
                let shared = match &e.table {
                    QuerierTable::Shared(t) => lock(t).drops.total(),
                    QuerierTable::Own(_) => 0,
                };
                let drops = e.drops().total() + shared;
                format!(
                    "{} packets killed\n{} ARP queries sent\n",
                    drops, e.q.queries
                )
            })
            .read("queries", |e| e.q.queries)
            .read("responses", |e| e.q.responses)
            .drops(ARPQuerier::drops)
            .read("count", |e| e.table.read(ArpTable::count))
            .read("length", |e| e.table.read(ArpTable::length))
            .data("broadcast", |e| &mut e.q.bcast)
            .data("ipaddr", |e| &mut e.q.ip)
            .write("insert", |e, v, cx| {
                let (ip, eth) = parse_insert(v)?;
                e.learn(ip, eth, cx);
                Ok(())
            })
            .write("delete", |e, v, cx| {
                let ip = Ipv4Addr::from_arg(v)?;
                let now = cx.now();
                e.table.get().get().delete(ip, now, cx);
                Ok(())
            })
            .action("clear", |e| {
                e.table.get().get().clear();
                e.drops_mut().reset();
                e.q.queries = 0;
                e.q.responses = 0;
            })
            .into()
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
            q: Querier {
                ip: Ipv4Addr::UNSPECIFIED,
                eth: EtherAddr::default(),
                bcast: Ipv4Addr::BROADCAST,
                poll_timeout: secs(60.0),
                broadcast_poll: false,
                queries: 0,
                responses: 0,
            },
            table: QuerierTable::Own(ArpTable::default()),
            table_elem: None,
            drops: Drops::default(),
        })
    },
};
