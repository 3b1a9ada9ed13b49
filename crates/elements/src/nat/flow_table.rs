//! The rewriters' flow table (Click's mapping maps and flow heap): each flow has two entries,
//! its original flow and its reply flow as they arrive, each found by its flow identifier in
//! the map of its rewriter. Flows expire; a table has a capacity, and several rewriters may
//! share one table (MAPPING_CAPACITY naming another rewriter). Flows whose guarantee has not
//! run out are never evicted to make room: a new flow is refused instead (admission control).

use std::collections::HashMap;

use ahash::RandomState;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, MutexGuard};

use sluice_core::{Footprint, Timestamp};

use super::tcp_seq::SeqDeltas;

/// A flow identifier: source and destination address and port (ports are 0 for the
/// address-only rewriters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlowId {
    /// Source address.
    pub saddr: Ipv4Addr,
    /// Source port.
    pub sport: u16,
    /// Destination address.
    pub daddr: Ipv4Addr,
    /// Destination port.
    pub dport: u16,
}

impl FlowId {
    /// The flow in the other direction.
    pub fn reverse(&self) -> FlowId {
        FlowId {
            saddr: self.daddr,
            sport: self.dport,
            daddr: self.saddr,
            dport: self.sport,
        }
    }
}

impl fmt::Display for FlowId {
    /// Click's `(SADDR, SPORT, DADDR, DPORT)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, {}, {})",
            self.saddr, self.sport, self.daddr, self.dport
        )
    }
}

/// How a flow's state sets its timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// TCP state: both sides done (FIN or RST), data seen both ways, or neither.
    Tcp,
    /// UDP state: streaming (three packets, one of them a reply) or not.
    Udp,
    /// No state: one timeout.
    Plain,
}

/// The timeouts of one kind of flow of one rewriter.
#[derive(Clone, Copy, Debug)]
pub struct Policy {
    /// How the flow's state is tracked.
    pub kind: Kind,
    /// The timeout of a flow without data both ways (TCP), not streaming (UDP), or any.
    pub timeout: Timestamp,
    /// TCP flows with data both ways; UDP streaming flows.
    pub long: Timestamp,
    /// TCP flows both of whose sides are done.
    pub done: Timestamp,
    /// How long after each packet a flow is kept come what may (0: best effort at once).
    pub guarantee: Timestamp,
}

/// TCP state bits: forward side done, reply side done; data seen forward, in reply.
const FWD_DONE: u8 = 1;
const BOTH_DONE: u8 = 3;
const FWD_DATA: u8 = 4;
const BOTH_DATA: u8 = 12;

impl Policy {
    /// The best-effort timeout of a flow in state `tflags`.
    fn timeout_for(&self, tflags: u8) -> Timestamp {
        match self.kind {
            Kind::Tcp if tflags & BOTH_DONE == BOTH_DONE => self.done,
            Kind::Tcp if tflags & BOTH_DATA == BOTH_DATA => self.long,
            Kind::Udp if tflags > 6 => self.long,
            _ => self.timeout,
        }
    }
}

/// Where a flow came from: its rewriter (owner), map and input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The rewriter's number in the table.
    pub owner: u32,
    /// The rewriter's map (IPRewriter: 0 TCP, 1 UDP).
    pub map: u8,
    /// The input whose specification made the flow.
    pub input: u32,
}

/// A mapping: the flow and its reply.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The keys of the two entries: the original flow, and the reply flow as it arrives
    /// (the reverse of the rewritten flow).
    pub ids: [FlowId; 2],
    /// The output of each direction.
    pub outputs: [usize; 2],
    /// Who made it.
    pub origin: Origin,
    /// Tracked state (see [`Kind`]).
    pub tflags: u8,
    /// REPLY_ANNO: the annotation byte of the flow's first packet, given to replies.
    pub reply_anno: u8,
    /// TCPRewriter's sequence-number deltas (FTPPortMapper's payload length changes).
    pub seq: SeqDeltas,
    expiry: Timestamp,
    guaranteed: bool,
    place: usize,
}

impl Flow {
    /// A flow from `id` rewritten to `rewritten`, sent to `outputs` (forward, reply).
    pub fn new(origin: Origin, id: FlowId, rewritten: FlowId, outputs: [usize; 2]) -> Flow {
        Flow {
            ids: [id, rewritten.reverse()],
            outputs,
            origin,
            tflags: 0,
            reply_anno: 0,
            seq: SeqDeltas::default(),
            expiry: Timestamp::ZERO,
            guaranteed: false,
            place: 0,
        }
    }

    /// What a packet of direction `dir` (0 forward, 1 reply) becomes.
    pub fn rewritten(&self, dir: usize) -> FlowId {
        self.ids[1 - dir].reverse()
    }

    /// Tracks TCP state for a packet of direction `dir` with these flags and payload.
    pub fn track_tcp(&mut self, dir: usize, rst: bool, fin: bool, syn: bool, payload: bool) {
        if rst {
            self.tflags |= BOTH_DONE;
        } else if fin {
            self.tflags |= FWD_DONE << dir;
        } else if syn || payload {
            self.tflags &= !(FWD_DONE << dir);
        }
        if payload {
            self.tflags |= FWD_DATA << dir;
        }
    }

    /// Tracks UDP state (packet count, replies seen) for a packet of direction `dir`.
    pub fn track_udp(&mut self, dir: usize) {
        if dir == 1 {
            self.tflags |= 1;
        }
        if self.tflags < 6 {
            self.tflags += 2;
        }
    }
}

/// Identifies an entry in the table's map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    owner: u32,
    map: u8,
    id: FlowId,
}

impl Hash for Key {
    /// Two words (addresses; ports, owner and map) rather than a write per field: the
    /// lookup is on every packet's path.
    fn hash<H: Hasher>(&self, h: &mut H) {
        let id = &self.id;
        h.write_u64(u64::from(u32::from(id.saddr)) << 32 | u64::from(u32::from(id.daddr)));
        h.write_u64(
            u64::from(id.sport) << 48
                | u64::from(id.dport) << 32
                | u64::from(self.owner) << 8
                | u64::from(self.map),
        );
    }
}

/// What a rewriter registers in a table.
#[derive(Debug, Default)]
struct Owner {
    /// The timeouts of each of its maps.
    policies: Vec<Policy>,
    /// Live flows made by each input.
    counts: Vec<u64>,
}

/// The flows of one or more rewriters.
#[derive(Debug)]
pub struct FlowTable {
    flows: Vec<Option<Flow>>,
    free: Vec<usize>,
    /// Entries by key, hashed with a key of the table's own (aHash): senders cannot choose
    /// flow identifiers that collide.
    map: HashMap<Key, (usize, usize), RandomState>,
    /// Best-effort and guaranteed flows, each a min-heap of (key, flow) by key. A flow's key
    /// is its expiry when it was placed; a packet renews only the flow's expiry, so the key may
    /// be earlier (never later), and the root is settled (its key brought up to its expiry and
    /// sifted down) before it is read: a settled root has the earliest expiry of its heap.
    heaps: [Vec<(Timestamp, usize)>; 2],
    capacity: u64,
    owners: Vec<Owner>,
}

/// A table shared by the rewriters that use it.
pub type SharedTable = Arc<Mutex<FlowTable>>;

/// Locks a shared table or mapper (a panic elsewhere leaves it usable).
pub fn lock<T>(t: &Mutex<T>) -> MutexGuard<'_, T> {
    t.lock().unwrap_or_else(|e| e.into_inner())
}

impl FlowTable {
    /// An empty table holding at most `capacity` flows.
    pub fn new(capacity: u64) -> FlowTable {
        FlowTable {
            flows: Vec::new(),
            free: Vec::new(),
            map: HashMap::with_hasher(RandomState::new()),
            heaps: [Vec::new(), Vec::new()],
            capacity,
            owners: Vec::new(),
        }
    }

    /// Registers a rewriter with its maps' policies and its number of inputs; returns its
    /// owner number.
    pub fn register(&mut self, policies: Vec<Policy>, ninputs: usize) -> u32 {
        self.owners.push(Owner {
            policies,
            counts: vec![0; ninputs],
        });
        (self.owners.len() - 1) as u32
    }

    /// Hot swap: when both tables serve one rewriter only, takes `old`'s flows (their
    /// entries, expiries and counts) in place of this table's, keeping this table's capacity
    /// (evicting beyond it) and its rewriter's policies. Returns whether it did.
    pub fn take_flows(&mut self, old: &mut FlowTable, now: Timestamp) -> bool {
        if self.owners.len() != 1 || old.owners.len() != 1 {
            return false;
        }
        let (capacity, policies) = (self.capacity, std::mem::take(&mut self.owners[0].policies));
        std::mem::swap(self, old);
        self.owners[0].policies = policies;
        self.set_capacity(capacity, now);
        true
    }

    /// The flow and direction whose entry is `id` in map `map` of `owner`.
    pub fn get(&self, owner: u32, map: u8, id: &FlowId) -> Option<(usize, usize)> {
        self.map
            .get(&Key {
                owner,
                map,
                id: *id,
            })
            .copied()
    }

    /// Whether `owner`'s map has an entry for `id`.
    pub fn contains(&self, owner: u32, map: u8, id: &FlowId) -> bool {
        self.get(owner, map, id).is_some()
    }

    /// Flow `i`.
    pub fn flow(&self, i: usize) -> &Flow {
        self.flows[i].as_ref().expect("live flow")
    }

    /// Flow `i`, to change.
    pub fn flow_mut(&mut self, i: usize) -> &mut Flow {
        self.flows[i].as_mut().expect("live flow")
    }

    /// Bytes of the flows, the map and the expiry heaps, as allocated now; a packet reads a
    /// bucket of the map and its flow.
    pub fn footprint(&self) -> Footprint {
        let entry = std::mem::size_of::<(Key, (usize, usize))>() + 1;
        let heaps: usize = self.heaps.iter().map(|h| h.capacity()).sum();
        Footprint {
            bytes: (self.flows.capacity() * std::mem::size_of::<Option<Flow>>()
                + self.map.capacity() * entry
                + heaps * std::mem::size_of::<(Timestamp, usize)>()) as u64,
            accesses: 2.0,
        }
    }

    /// Number of flows (of every rewriter sharing the table).
    pub fn size(&self) -> usize {
        self.heaps[0].len() + self.heaps[1].len()
    }

    /// The capacity.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Live flows of `owner`, by input.
    pub fn counts(&self, owner: u32) -> &[u64] {
        &self.owners[owner as usize].counts
    }

    fn policy(&self, f: &Flow) -> &Policy {
        &self.owners[f.origin.owner as usize].policies[f.origin.map as usize]
    }

    /// When a guaranteed flow becomes best effort, it expires this much later.
    fn best_effort_expiry(&self, f: &Flow) -> Timestamp {
        let p = self.policy(f);
        f.expiry + p.timeout_for(f.tflags) - p.guarantee
    }

    /// The expiry the `table` handler shows: a guaranteed flow's best-effort expiry.
    pub fn shown_expiry(&self, i: usize) -> Timestamp {
        let f = self.flow(i);
        if f.guaranteed {
            self.best_effort_expiry(f)
        } else {
            f.expiry
        }
    }

    /// Adds `flow`, made at `now`; returns its number, or `None` when the table is full of
    /// guaranteed flows (or the new flow would expire first), as in Click.
    pub fn add(&mut self, mut flow: Flow, now: Timestamp) -> Option<usize> {
        let (guaranteed, expiry) = self.expiry_after(&flow, now);
        (flow.guaranteed, flow.expiry) = (guaranteed, expiry);
        let o = flow.origin;
        let i = match self.free.pop() {
            Some(i) => i,
            None => {
                self.flows.push(None);
                self.flows.len() - 1
            }
        };
        let keys = flow.ids.map(|id| Key {
            owner: o.owner,
            map: o.map,
            id,
        });
        self.flows[i] = Some(flow);
        self.map.insert(keys[0], (i, 0));
        if let Some((old, _)) = self.map.insert(keys[1], (i, 1)) {
            if old != i {
                self.destroy(old);
            }
        }
        self.heap_push(guaranteed as usize, i);
        self.owners[o.owner as usize].counts[o.input as usize] += 1;
        if self.size() as u64 > self.capacity {
            self.shift_guarantees(now);
            let victim = self.first(0).unwrap_or(i);
            self.destroy(victim);
            if victim == i {
                return None;
            }
        }
        Some(i)
    }

    /// Whether a flow touched at `now` is guaranteed, and its expiry.
    fn expiry_after(&self, f: &Flow, now: Timestamp) -> (bool, Timestamp) {
        let p = self.policy(f);
        if p.guarantee > Timestamp::ZERO {
            (true, now + p.guarantee)
        } else {
            (false, now + p.timeout_for(f.tflags))
        }
    }

    /// Renews flow `i`'s expiry after a packet at `now`: in place when it stays in its heap
    /// and does not expire earlier (the heap's key for it then stays as it was).
    pub fn touch(&mut self, i: usize, now: Timestamp) {
        let (guaranteed, expiry) = self.expiry_after(self.flow(i), now);
        let f = self.flow(i);
        let h = f.guaranteed as usize;
        if guaranteed == f.guaranteed && expiry >= self.heaps[h][f.place].0 {
            self.flow_mut(i).expiry = expiry;
        } else {
            self.change_expiry(i, guaranteed, expiry);
        }
    }

    fn change_expiry(&mut self, i: usize, guaranteed: bool, expiry: Timestamp) {
        let f = self.flow(i);
        let (h, place) = (f.guaranteed as usize, f.place);
        self.heap_remove(h, place);
        let f = self.flow_mut(i);
        (f.guaranteed, f.expiry) = (guaranteed, expiry);
        self.heap_push(guaranteed as usize, i);
    }

    /// Moves flows whose guarantee has run out to the best-effort heap.
    fn shift_guarantees(&mut self, now: Timestamp) {
        while let Some(i) = self.first(1) {
            if self.flow(i).expiry > now {
                break;
            }
            let e = self.best_effort_expiry(self.flow(i));
            self.change_expiry(i, false, e);
        }
    }

    /// Removes expired flows, then the earliest to expire (best effort first) while there
    /// are more than the capacity, or all flows with `clear_all`.
    pub fn shrink(&mut self, now: Timestamp, clear_all: bool) {
        self.shift_guarantees(now);
        while let Some(i) = self.first(0) {
            if self.flow(i).expiry > now {
                break;
            }
            self.destroy(i);
        }
        let cap = if clear_all { 0 } else { self.capacity };
        while self.size() as u64 > cap {
            let h = self.heaps[0].is_empty() as usize;
            let i = self.first(h).expect("a flow beyond the capacity");
            self.destroy(i);
        }
    }

    /// Sets the capacity, removing flows beyond it.
    pub fn set_capacity(&mut self, capacity: u64, now: Timestamp) {
        self.capacity = capacity;
        self.shrink(now, false);
    }

    /// Removes every flow that `input` of `owner` made.
    pub fn remove_input(&mut self, owner: u32, input: u32) {
        let doomed: Vec<usize> = self
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.as_ref().map(|f| (i, f.origin)))
            .filter(|(_, o)| o.owner == owner && o.input == input)
            .map(|(i, _)| i)
            .collect();
        for i in doomed {
            self.destroy(i);
        }
    }

    /// Removes flow `i`: its heap place, its entries (those still pointing at it), its count.
    fn destroy(&mut self, i: usize) {
        let f = self.flows[i].take().expect("live flow");
        self.heap_remove(f.guaranteed as usize, f.place);
        for (dir, id) in f.ids.iter().enumerate() {
            let k = Key {
                owner: f.origin.owner,
                map: f.origin.map,
                id: *id,
            };
            if self.map.get(&k) == Some(&(i, dir)) {
                self.map.remove(&k);
            }
        }
        self.owners[f.origin.owner as usize].counts[f.origin.input as usize] -= 1;
        self.free.push(i);
    }

    /// The entries of `owner`'s map `map`, sorted by flow identifier: (flow, direction).
    pub fn entries(&self, owner: u32, map: u8) -> Vec<(usize, usize)> {
        let mut v: Vec<(FlowId, (usize, usize))> = self
            .map
            .iter()
            .filter(|(k, _)| k.owner == owner && k.map == map)
            .map(|(k, e)| (k.id, *e))
            .collect();
        v.sort_by_key(|(id, _)| (id.saddr, id.sport, id.daddr, id.dport));
        v.into_iter().map(|(_, e)| e).collect()
    }

    /// The flow of heap `h` that expires first, its root settled.
    fn first(&mut self, h: usize) -> Option<usize> {
        loop {
            let &(key, i) = self.heaps[h].first()?;
            let expiry = self.flow(i).expiry;
            if key >= expiry {
                return Some(i);
            }
            self.heaps[h][0].0 = expiry;
            self.sift_down(h, 0);
        }
    }

    fn set_place(&mut self, h: usize, pos: usize) {
        let i = self.heaps[h][pos].1;
        self.flow_mut(i).place = pos;
    }

    fn heap_push(&mut self, h: usize, i: usize) {
        let key = self.flow(i).expiry;
        self.heaps[h].push((key, i));
        let pos = self.heaps[h].len() - 1;
        self.set_place(h, pos);
        self.sift_up(h, pos);
    }

    fn heap_remove(&mut self, h: usize, pos: usize) {
        let last = self.heaps[h].len() - 1;
        self.heaps[h].swap(pos, last);
        self.heaps[h].pop();
        if pos < last {
            self.set_place(h, pos);
            let pos = self.sift_up(h, pos);
            self.sift_down(h, pos);
        }
    }

    fn sift_up(&mut self, h: usize, mut pos: usize) -> usize {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            if self.heaps[h][pos].0 >= self.heaps[h][parent].0 {
                break;
            }
            self.heaps[h].swap(pos, parent);
            self.set_place(h, pos);
            self.set_place(h, parent);
            pos = parent;
        }
        pos
    }

    fn sift_down(&mut self, h: usize, mut pos: usize) {
        let n = self.heaps[h].len();
        loop {
            let mut least = pos;
            for c in [2 * pos + 1, 2 * pos + 2] {
                if c < n && self.heaps[h][c].0 < self.heaps[h][least].0 {
                    least = c;
                }
            }
            if least == pos {
                return;
            }
            self.heaps[h].swap(pos, least);
            self.set_place(h, pos);
            self.set_place(h, least);
            pos = least;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: i64) -> Timestamp {
        Timestamp::from_parts(s, 0)
    }

    fn policy(guarantee: i64) -> Policy {
        Policy {
            kind: Kind::Plain,
            timeout: secs(10),
            long: secs(10),
            done: secs(10),
            guarantee: secs(guarantee),
        }
    }

    fn id(n: u8) -> FlowId {
        FlowId {
            saddr: Ipv4Addr::new(198, 18, 0, n),
            sport: 1,
            daddr: Ipv4Addr::new(198, 19, 0, 1),
            dport: 2,
        }
    }

    fn origin(owner: u32) -> Origin {
        Origin {
            owner,
            map: 0,
            input: 0,
        }
    }

    #[test]
    fn full_table_refuses_guaranteed_then_evicts_best_effort() {
        let mut t = FlowTable::new(2);
        let o = t.register(vec![policy(5)], 1);
        for n in 1..=2 {
            assert!(t
                .add(Flow::new(origin(o), id(n), id(n), [0, 1]), secs(n as i64))
                .is_some());
        }
        assert!(t
            .add(Flow::new(origin(o), id(3), id(3), [0, 1]), secs(3))
            .is_none());
        assert_eq!(t.size(), 2);
        // After flow 1's guarantee ends, it is the one evicted.
        let i = t
            .add(Flow::new(origin(o), id(4), id(4), [0, 1]), secs(7))
            .unwrap();
        assert!(t.get(o, 0, &id(1)).is_none());
        assert!(t.get(o, 0, &id(2)).is_some());
        assert_eq!(t.get(o, 0, &id(4)), Some((i, 0)));
        t.shrink(secs(100), false);
        assert_eq!(t.size(), 0);
        assert_eq!(t.counts(o), &[0]);
    }

    #[test]
    fn owners_sharing_a_table_share_its_capacity() {
        let mut t = FlowTable::new(1);
        let a = t.register(vec![policy(0)], 1);
        let b = t.register(vec![policy(0)], 1);
        t.add(Flow::new(origin(a), id(1), id(1), [0, 1]), secs(1))
            .unwrap();
        t.add(Flow::new(origin(b), id(1), id(1), [0, 1]), secs(2))
            .unwrap();
        assert!(!t.contains(a, 0, &id(1)));
        assert!(t.contains(b, 0, &id(1)));
    }

    #[test]
    fn renewed_flows_expire_and_are_evicted_by_their_renewed_expiry() {
        let mut t = FlowTable::new(3);
        let o = t.register(vec![policy(0)], 1);
        let f: Vec<usize> = (1..=3)
            .map(|n| {
                t.add(Flow::new(origin(o), id(n), id(n), [0, 1]), secs(n as i64))
                    .unwrap()
            })
            .collect();
        // Flows 1 and 2 renewed (in place: their heap keys stay at 11 and 12).
        t.touch(f[0], secs(20));
        t.touch(f[1], secs(15));
        t.shrink(secs(14), false);
        assert_eq!(t.size(), 2, "only flow 3 (expiry 13) has expired");
        assert!(!t.contains(o, 0, &id(3)));
        // Full: a new flow evicts the one that expires first by its renewed expiry (flow 2,
        // 25), not the heap's stale root.
        t.add(Flow::new(origin(o), id(4), id(4), [0, 1]), secs(16))
            .unwrap();
        t.add(Flow::new(origin(o), id(5), id(5), [0, 1]), secs(17))
            .unwrap();
        assert_eq!(t.size(), 3);
        assert!(t.contains(o, 0, &id(1)) && !t.contains(o, 0, &id(2)));
        t.shrink(secs(29), false);
        assert_eq!(t.size(), 1, "flows 4 (26) and 5 (27) expired, 1 (30) not");
        assert!(t.contains(o, 0, &id(1)));
    }
}
