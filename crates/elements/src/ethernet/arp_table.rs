//! ARPTable — stores IP-to-Ethernet mappings that ARPQueriers share
//!
//! Synopsis: `ARPTable([keywords CAPACITY, ENTRY_CAPACITY, ENTRY_PACKET_CAPACITY,
//! CAPACITY_SLIM_FACTOR, TIMEOUT])`
//!
//! Ports: none. ARPTable is an information element: ARPQueriers that name it with their
//! `TABLE` keyword keep their next hops, and the packets waiting for them, in it instead of
//! in a table of their own, so that what one of them learns from a reply the others use at
//! once (see `sluice doc ARPQuerier`). The table is the one an ARPQuerier keeps by itself,
//! with the same limits.
//!
//! Each next hop has an entry: its Ethernet address once known, when it was last learned
//! or kept alive, and the IP packets waiting for an answer. An entry expires TIMEOUT after
//! it was learned (default 300 s; 0: entries never expire); an entry that packets still wait
//! for is kept just short of expiring. An entry holds at most ENTRY_PACKET_CAPACITY packets
//! (0, the default, means no limit; a packet beyond it is dropped). When more than CAPACITY
//! packets wait in all (default 2048; 0: no limit), the oldest waiting packets of the oldest
//! entries are dropped until only CAPACITY − CAPACITY/CAPACITY_SLIM_FACTOR (default factor
//! 2) remain. When there are more than ENTRY_CAPACITY entries (0, the default: no limit), the
//! oldest entries are removed with their packets. Every TIMEOUT, expired entries are removed
//! with their packets (by a timer of the element that added the first entry: the ARPTable
//! itself or a querier).
//!
//! Hot swap: an ARPTable whose table is still empty takes its predecessor's entries, waiting
//! packets and drop counts (its own limits stay).
//!
//! Every drop is counted in `drops`, by reason in `drop_details`; packets still waiting for
//! an answer when the router stops are counted as `unresolved at stop` (Click frees them
//! without counting).
//!
//! Arguments: `CAPACITY` (default 2048); `ENTRY_CAPACITY` (default 0);
//! `ENTRY_PACKET_CAPACITY` (default 0); `CAPACITY_SLIM_FACTOR` (default 2, not 0); `TIMEOUT`
//! (seconds, default 300).
//!
//! Handlers: `table` (r): one line per next hop, oldest first, `IP VALID ETH AGE` (AGE:
//! seconds since the entry was last learned or kept alive, measured at the last packet,
//! timer or insert). `count` (r, entries), `length` (r, packets waiting), `drops` (r),
//! `drop_details` (r), `insert` (w, `IP ETH`: the entry becomes known; as in Click, packets
//! waiting for it stay until a querier learns the address from a reply or the entry goes),
//! `delete` (w, `IP`: the entry becomes unknown), `clear` (w: drops every entry and its
//! packets).
//!
//! Example: `arpt :: ARPTable(TIMEOUT 60); ... -> q0 :: ARPQuerier(TABLE arpt, 198.18.0.1,
//! 02:00:00:00:00:01) -> ...; ... -> q1 :: ARPQuerier(TABLE arpt, 198.18.0.1,
//! 02:00:00:00:00:02) -> ...;`

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use sluice_core::handlers::details;
use sluice_core::{drop_reasons, ConfigCx, Cx, DropReason, Drops, Element, ElementClass};
use sluice_core::{Handlers, Packet, Table, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};
use sluice_wire::EtherAddr;

drop_reasons! {
    /// Why an ARPQuerier or its table drops a packet, in `drop_details` order.
    pub(super) enum Reason {
        /// Beyond ENTRY_PACKET_CAPACITY, or the oldest waiting beyond CAPACITY.
        QueueFull => "queue full",
        /// Its entry expired or was cleared.
        Expired => "expired",
        /// Its entry was removed beyond ENTRY_CAPACITY.
        TableFull => "table full",
        /// An input 1 packet too short for Ethernet ARP (a querier's).
        BadArp => "bad ARP packet",
        /// No next hop (a querier's).
        NoDest => "no destination",
        /// Still waiting when the router stopped.
        AtStop => "unresolved at stop",
    }
}

/// The reasons a table counts itself (the others are a querier's).
const TABLE_REASONS: [Reason; 4] = [
    Reason::QueueFull,
    Reason::Expired,
    Reason::TableFull,
    Reason::AtStop,
];

/// Where an entry sits in the age list: entries are kept in order of the time they were
/// last learned or kept alive, ties in the order they got there.
type AgeKey = (Timestamp, i64);

pub(super) fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

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

/// An ARP table (Click's ARPTable): next hops, their Ethernet addresses and the packets
/// waiting for them, with limits on entries and packets. An ARPQuerier owns one, or shares
/// an ARPTable element's.
///
/// Methods that may add an entry take the context of the element calling them and schedule
/// its timer 0, when the table has a TIMEOUT, for [`ArpTable::expire`].
pub(super) struct ArpTable {
    /// Entry lifetime; zero: entries never expire.
    pub(super) timeout: Timestamp,
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
    /// The time of the last packet, timer or write (read handlers get no clock).
    pub(super) last_now: Timestamp,
    /// Drops by reason: the table's, and in a querier's own table the querier's too.
    pub(super) drops: Drops<Reason>,
}

impl Default for ArpTable {
    fn default() -> ArpTable {
        ArpTable {
            timeout: secs(300.0),
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
            drops: Drops::default(),
        }
    }
}

impl ArpTable {
    /// Reads the table's keywords (TIMEOUT, CAPACITY, ENTRY_PACKET_CAPACITY, ENTRY_CAPACITY,
    /// CAPACITY_SLIM_FACTOR); see [`ArpTable::check`].
    pub(super) fn read_config(&mut self, args: &mut Args) -> Result<(), ()> {
        if let Some(Seconds(s)) = args.read("TIMEOUT")? {
            self.timeout = secs(s);
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
        if let Some(n) = args.read::<usize>("CAPACITY_SLIM_FACTOR")? {
            self.slim_factor = n;
        }
        Ok(())
    }

    /// Rejects the settings a table cannot work with.
    pub(super) fn check(&self, args: &mut Args) -> Result<(), ()> {
        if self.slim_factor == 0 {
            args.error("CAPACITY_SLIM_FACTOR cannot be zero");
            return Err(());
        }
        Ok(())
    }

    /// Entries.
    pub(super) fn count(&self) -> usize {
        self.table.len()
    }

    /// Packets waiting.
    pub(super) fn length(&self) -> usize {
        self.pending
    }

    /// `drop_details` of the table's own reasons.
    fn drop_details(&self) -> String {
        details(TABLE_REASONS.map(|r| (Reason::NAMES[r.index()], self.drops.get(r))))
    }

    fn expired(&self, e: &Entry, now: Timestamp) -> bool {
        self.timeout != Timestamp::ZERO && e.live_at + self.timeout < now
    }

    fn known(&self, e: &Entry, now: Timestamp) -> bool {
        e.known && !self.expired(e, now)
    }

    /// Looks up a known next hop: its address and whether to poll it first (when it was
    /// learned at least `poll_timeout` ago, non-zero, and the entry allows a query now).
    #[inline]
    pub(super) fn lookup(
        &mut self,
        nh: Ipv4Addr,
        now: Timestamp,
        poll_timeout: Timestamp,
    ) -> Option<(EtherAddr, bool)> {
        let e = self.table.get(&nh)?;
        if !self.known(e, now) {
            return None;
        }
        let poll_due =
            poll_timeout != Timestamp::ZERO && now >= e.live_at + poll_timeout && e.allow_poll(now);
        let e = self.table.get_mut(&nh)?;
        if poll_due {
            e.mark_poll(now);
        }
        Some((e.eth, poll_due))
    }

    /// Drops every packet of `e` (removed from the table) for `reason`.
    fn kill_entry(&mut self, e: Entry, reason: Reason) {
        self.pending -= e.pending.len();
        self.drops.add(reason, e.pending.len() as u64);
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
                Reason::Expired
            } else if over {
                Reason::TableFull
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
                        self.drops.count(Reason::QueueFull);
                    }
                }
            }
        }
    }

    /// The expiry timer: removes expired entries with their packets. Returns when to run
    /// again, `None` once the table is empty.
    pub(super) fn expire(&mut self, now: Timestamp) -> Option<Timestamp> {
        self.last_now = now;
        self.slim(now, 0, 0);
        (!self.table.is_empty()).then(|| self.timeout + secs(1.0))
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

    /// Queues `p` for next hop `nh` (not known), as Click's ARPTable::append_query. Returns
    /// the timestamp for an ARP query when the entry allows one now (the caller sends it).
    pub(super) fn append(
        &mut self,
        nh: Ipv4Addr,
        p: Packet,
        now: Timestamp,
        cx: &mut Cx,
    ) -> Option<Timestamp> {
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
            self.drops.count(Reason::QueueFull);
            return None;
        }
        if self.capacity > 0 && self.pending + 1 > self.capacity {
            self.slim(now, 0, 1);
        }
        let ts = p.timestamp();
        let Some(e) = self.table.get_mut(&nh) else {
            self.drops.count(Reason::TableFull);
            return None;
        };
        e.pending.push_back(p);
        self.pending += 1;
        if e.allow_poll(now) {
            e.mark_poll(now);
            return Some(ts);
        }
        None
    }

    /// Learns `ip` at `eth` (unknown if `eth` is the broadcast address): a reply or an
    /// `insert`. The packets waiting for it stay; see [`ArpTable::take_waiting`].
    pub(super) fn insert(&mut self, ip: Ipv4Addr, eth: EtherAddr, now: Timestamp, cx: &mut Cx) {
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
        self.set_age(ip, key);
    }

    /// Takes the packets waiting for `ip`, oldest first.
    pub(super) fn take_waiting(&mut self, ip: Ipv4Addr) -> VecDeque<Packet> {
        let Some(e) = self.table.get_mut(&ip) else {
            return VecDeque::new();
        };
        let waiting = std::mem::take(&mut e.pending);
        self.pending -= waiting.len();
        waiting
    }

    /// The `delete` handler: `ip`'s entry becomes unknown (its packets stay).
    pub(super) fn delete(&mut self, ip: Ipv4Addr, now: Timestamp, cx: &mut Cx) {
        self.ensure(ip, now, cx);
        if let Some(e) = self.table.get_mut(&ip) {
            e.eth = EtherAddr::BROADCAST;
            e.known = false;
            e.live_at = now;
        }
    }

    /// Drops every entry and its packets.
    pub(super) fn clear(&mut self) {
        for (_, e) in std::mem::take(&mut self.table) {
            self.drops.add(Reason::Expired, e.pending.len() as u64);
        }
        self.age.clear();
        self.pending = 0;
    }

    /// When the router stops: the waiting packets are dropped as unresolved.
    pub(super) fn stop(&mut self) {
        self.drops.add(Reason::AtStop, self.pending as u64);
        self.pending = 0;
        for e in self.table.values_mut() {
            e.pending.clear();
        }
    }

    /// Hot swap: takes `old`'s entries, waiting packets and drop counts, keeping this
    /// table's limits.
    pub(super) fn take_entries(&mut self, old: &mut ArpTable) {
        self.table = std::mem::take(&mut old.table);
        self.age = std::mem::take(&mut old.age);
        (self.seq_after, self.seq_before) = (old.seq_after, old.seq_before);
        self.pending = std::mem::take(&mut old.pending);
        self.last_now = old.last_now;
        self.drops.take(&mut old.drops);
    }

    /// The `table` handler.
    pub(super) fn table_string(&self) -> String {
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

/// Locks a shared table (a panic elsewhere leaves it usable).
pub(super) fn lock(t: &Mutex<ArpTable>) -> MutexGuard<'_, ArpTable> {
    t.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Parses the `insert` handler's `IP ETH`.
pub(super) fn parse_insert(v: &str) -> Result<(Ipv4Addr, EtherAddr), String> {
    let w = split_words(v);
    if w.len() != 2 {
        return Err("expected 'IP ETH'".into());
    }
    Ok((Ipv4Addr::from_arg(&w[0])?, EtherAddr::from_arg(&w[1])?))
}

/// The ARPTable element.
#[derive(Default)]
pub struct ARPTable {
    table: Arc<Mutex<ArpTable>>,
}

impl ARPTable {
    /// The table, for the ARPQueriers that name this element.
    pub(super) fn shared(&self) -> Arc<Mutex<ArpTable>> {
        self.table.clone()
    }
}

impl Element for ARPTable {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let mut t = ArpTable::default();
        t.read_config(args)?;
        t.check(args)?;
        self.table = Arc::new(Mutex::new(t));
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<ARPTable>() else {
            return;
        };
        if Arc::ptr_eq(&self.table, &old.table) {
            return;
        }
        let mut t = lock(&self.table);
        // Click reports a "late take_state" when the new table has entries already.
        if t.count() > 0 {
            return;
        }
        t.take_entries(&mut lock(&old.table));
        if t.timeout != Timestamp::ZERO && t.count() > 0 {
            cx.schedule_after(0, t.timeout);
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        if let Some(after) = lock(&self.table).expire(now) {
            cx.schedule_after(0, after);
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        lock(&self.table).stop();
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", |e| lock(&e.table).table_string())
            .read("count", |e| lock(&e.table).count())
            .read("length", |e| lock(&e.table).length())
            .read("drops", |e| lock(&e.table).drops.total())
            .read("drop_details", |e| lock(&e.table).drop_details())
            .write("insert", |e, v, cx| {
                let (ip, eth) = parse_insert(v)?;
                let now = cx.now();
                lock(&e.table).insert(ip, eth, now, cx);
                Ok(())
            })
            .write("delete", |e, v, cx| {
                let ip = Ipv4Addr::from_arg(v)?;
                let now = cx.now();
                lock(&e.table).delete(ip, now, cx);
                Ok(())
            })
            .action("clear", |e| lock(&e.table).clear())
            .drop_counts(|e| {
                let t = lock(&e.table);
                TABLE_REASONS
                    .map(|r| (Reason::NAMES[r.index()], t.drops.get(r)))
                    .to_vec()
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ARPTable",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("arp_table.rs"),
    make: || Box::<ARPTable>::default(),
};
