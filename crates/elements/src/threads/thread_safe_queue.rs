//! ThreadSafeQueue — a FIFO queue that threads can share (push on one, pull on another)
//!
//! Synopsis: `ThreadSafeQueue([CAPACITY])`
//!
//! Ports: 1 input (push), 1 output (pull). Like Queue, but the packets live in a lock-free
//! ring, so producers on several threads and a consumer on another move packets without
//! locks; each push or pull of a batch is one atomic claim of ring slots. When only one thread
//! pushes and one pulls, the router gives it a single-producer ring, whose sides read each
//! other's position about once per batch. When the queue fills
//! from empty its notifier wakes the pulling task, on whichever thread runs it. Packets pushed
//! into a full queue are dropped and counted; sources upstream sleep on its full notifier until
//! it has drained to half its capacity. (CPUQueue keeps one ring per pushing thread.)
//!
//! Queue batching (SMP Click §4.6): with `BATCH n`, the puller sees the queue empty until n
//! packets have built up or the oldest of them has waited LATENCY, so packets cross between
//! processors in groups and the queue's shared state moves between caches less often.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000, at most 16777216: `ring::MAX_CAPACITY`): maximum
//!   packets held (rounded up to a power of two internally; the limit enforced is CAPACITY).
//!   The ring's memory is committed as it fills, not at start.
//! - `BATCH` (integer, default 1): packets that must build up before the puller sees any.
//! - `LATENCY` (time, default 20us): longest a packet waits for a batch to build up.
//!   (Batching is off under `--simtime`, whose clock stands still while tasks run.)
//!
//! Hot swap: a ThreadSafeQueue takes the packets, drop counts and highwater length of its
//! predecessor of the same name, whether one thread or several used it (packets beyond its
//! capacity are dropped and counted).
//!
//! Handlers: `length` (r), `highwater_length` (r), `capacity` (r), `drops` (r),
//! `drop_details` (r, drops by reason), `reset_counts` (w).

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::Arc;

use sluice_core::ring::{Ring, SpscRing};
use sluice_core::{Batch, ConfigCx, Cx, ElementClass, NotifierId, Packet, Table};
use sluice_core::{SharedElement, Sharing, Timestamp};
use sluice_lang::args::{Args, Seconds};

use super::shared_queue::{
    clear_empty, read_capacity, share, shared_state, QueueState, SharedQueue,
};

/// The packet ring: multi-producer in general, single-producer/single-consumer when the
/// router says only one thread pushes and one pulls (cheaper: no per-slot sequence numbers,
/// each side reads the other's position about once per batch).
enum PacketRing {
    Multi(Ring<Packet>),
    Single(SpscRing<Packet>),
}

impl PacketRing {
    fn len(&self) -> usize {
        match self {
            PacketRing::Multi(r) => r.len(),
            PacketRing::Single(r) => r.len(),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A length the producer can read cheaply; never below the true length.
    fn producer_len(&self) -> usize {
        match self {
            PacketRing::Multi(r) => r.len(),
            PacketRing::Single(r) => r.producer_len(),
        }
    }

    /// A length the consumer can read cheaply; never above the true length.
    fn consumer_len(&self) -> usize {
        match self {
            PacketRing::Multi(r) => r.len(),
            PacketRing::Single(r) => r.consumer_len(),
        }
    }

    fn push_many(&self, items: &mut impl Iterator<Item = Packet>, max: usize) -> usize {
        match self {
            PacketRing::Multi(r) => r.push_many(items, max),
            PacketRing::Single(r) => r.push_many(items, max),
        }
    }

    fn pop_many(&self, max: usize, f: impl FnMut(Packet)) -> usize {
        match self {
            PacketRing::Multi(r) => r.pop_many(max, f),
            PacketRing::Single(r) => r.pop_many(max, f),
        }
    }
}

/// The shared state: ring, counters and empty notifier.
pub struct QueueCore {
    ring: PacketRing,
    capacity: usize,
    highwater: AtomicUsize,
    note: NotifierId,
    /// Active while there is room; producers sleep on it.
    full: NotifierId,
    /// Queue batching: packets to build up before a pull sees any, and the longest wait.
    batch: usize,
    latency: Timestamp,
    /// When the queue last became non-empty (nanoseconds on the router clock).
    since: AtomicI64,
}

impl QueueCore {
    /// An empty queue of `capacity` packets with the given empty and full notifiers, without
    /// queue batching; `None` if the ring's memory cannot be had.
    pub(crate) fn new(capacity: usize, note: NotifierId, full: NotifierId) -> Option<QueueCore> {
        Some(QueueCore {
            batch: 1,
            latency: Timestamp::from_secs_f64(20e-6),
            since: AtomicI64::new(0),
            ring: PacketRing::Multi(Ring::new(capacity)?),
            capacity,
            highwater: AtomicUsize::new(0),
            note,
            full,
        })
    }

    /// Takes over the packets and highwater length of a queue that served one thread (no
    /// more packets than the capacity).
    fn adopt(&self, packets: Vec<Packet>, highwater: usize) {
        let n = packets.len().min(self.capacity);
        self.ring.push_many(&mut packets.into_iter(), n);
        self.highwater.store(highwater, Ordering::Relaxed);
    }
}

impl QueueState for QueueCore {
    fn table() -> Table<Self> {
        Table::<Self>::new()
            .read("length", |s| s.ring.len())
            .read("highwater_length", |s| s.highwater.load(Ordering::Relaxed))
            .read("capacity", |s| s.capacity)
    }

    fn configure(args: &mut Args, cx: &mut ConfigCx) -> Result<Self, ()> {
        let (capacity, note) = read_capacity(args, cx)?;
        let full = cx.new_notifier(true);
        cx.provide_full_notifier(full);
        let Some(mut core) = QueueCore::new(capacity, note, full) else {
            args.error(format!("out of memory for {capacity} packets"));
            return Err(());
        };
        core.batch = args.read("BATCH")?.unwrap_or(1).clamp(1, capacity);
        let latency: Seconds = args.read("LATENCY")?.unwrap_or(Seconds(20e-6));
        core.latency = Timestamp::from_secs_f64(latency.0);
        Ok(core)
    }

    fn push_batch(&self, batch: Batch, cx: &mut Cx) -> u64 {
        let n = batch.len();
        if self.batch > 1 && self.ring.is_empty() {
            self.since.store(cx.now().0, Ordering::Relaxed);
        }
        // One look at the consumer-written head per batch: the length after the push is
        // taken as the length before plus what went in.
        let mut before = self.ring.producer_len();
        if self.capacity.saturating_sub(before) < n {
            before = self.ring.len();
        }
        let room = self.capacity.saturating_sub(before);
        let mut it = batch.into_iter();
        let taken = self.ring.push_many(&mut it, n.min(room));
        let len = before + taken;
        if len > self.highwater.load(Ordering::Relaxed) {
            self.highwater.fetch_max(len, Ordering::Relaxed);
        }
        if taken > 0 {
            cx.set_notifier(self.note, true);
        }
        if len >= self.capacity {
            cx.set_notifier(self.full, false);
            if self.ring.len() <= self.capacity / 2 {
                cx.set_notifier(self.full, true);
            }
        }
        (n - taken) as u64
    }

    fn pull_batch(&self, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        // Under simulated time the clock stands still while tasks run, so no batch would ever
        // time out: batching is off there.
        if self.batch > 1 && !cx.is_simulated() {
            let len = self.ring.len();
            if len > 0
                && len < self.batch
                && cx.now().0 - self.since.load(Ordering::Relaxed) < self.latency.0
            {
                return b;
            }
        }
        self.ring.pop_many(max, |p| {
            let _ = b.push(p);
        });
        if self.ring.consumer_len() == 0 && self.ring.is_empty() {
            clear_empty(cx, self.note, || self.ring.is_empty());
        }
        // Producers sleeping on a full queue are woken once it has drained to half, so a
        // cross-thread wake-up moves many packets, not one batch.
        if self.ring.consumer_len() <= self.capacity / 2 {
            cx.set_notifier(self.full, true);
        }
        b
    }

    fn take_from(&self, old: &Self, cx: &mut Cx) -> u64 {
        let mut packets = Vec::new();
        old.ring.pop_many(old.ring.len(), |p| packets.push(p));
        let n = packets
            .len()
            .min(self.capacity.saturating_sub(self.ring.len()));
        let mut it = packets.into_iter();
        self.ring.push_many(&mut it, n);
        if n > 0 {
            cx.set_notifier(self.note, true);
        }
        let highwater = old.highwater.load(Ordering::Relaxed).max(self.ring.len());
        self.highwater.fetch_max(highwater, Ordering::Relaxed);
        it.count() as u64
    }

    fn storage(&self) -> (usize, usize) {
        (self.ring.len(), self.capacity)
    }

    fn reset(&self) {
        self.highwater.store(self.ring.len(), Ordering::Relaxed);
    }

    fn specialise(mut self, sharing: Sharing) -> Self {
        if sharing.producers <= 1 && sharing.consumers <= 1 && self.ring.is_empty() {
            // Short of memory for the second ring, the first one serves as well.
            if let Some(r) = SpscRing::new(self.capacity) {
                self.ring = PacketRing::Single(r);
            }
        }
        self
    }
}

/// What a queue that served one thread holds, to become a queue that threads share.
pub(crate) struct QueueParts {
    /// Its packets, head first.
    pub packets: Vec<Packet>,
    /// Its capacity.
    pub capacity: usize,
    /// Its drop count (counted as "queue full").
    pub drops: u64,
    /// The most packets it held.
    pub highwater: usize,
    /// Its empty notifier.
    pub note: NotifierId,
    /// Its full notifier.
    pub full: NotifierId,
}

/// The thread-safe form of a queue that served one thread: ThreadSafeQueue's state holding
/// the same packets and counts and signalling the same notifiers.
pub(crate) fn shared_queue(parts: QueueParts, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
    let core = QueueCore::new(parts.capacity, parts.note, parts.full)?.specialise(sharing);
    core.adopt(parts.packets, parts.highwater);
    Some(share(core, parts.drops))
}

/// What a Queue takes at hot swap from its predecessor's thread-safe form (whose threads
/// have stopped): its packets, oldest first (the predecessor is left empty), its highwater
/// mark, and its drops (queue full, beyond capacity at hot swap).
pub(crate) fn queue_packets(old: &dyn SharedElement) -> Option<(Vec<Packet>, usize, u64, u64)> {
    let (core, full, swap) = shared_state::<QueueCore>(old)?;
    let mut packets = Vec::with_capacity(core.ring.len());
    core.ring.pop_many(core.ring.len(), |p| packets.push(p));
    Some((packets, core.highwater.load(Ordering::Relaxed), full, swap))
}

/// The ThreadSafeQueue element.
pub type ThreadSafeQueue = SharedQueue<QueueCore>;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ThreadSafeQueue",
    ports: "1/1",
    processing: "h/l",
    flow: "",
    source: include_str!("thread_safe_queue.rs"),
    make: || Box::new(ThreadSafeQueue::default()),
};
