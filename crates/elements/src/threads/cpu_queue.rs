//! CPUQueue — one queue per thread, pulled round-robin (SMP Click's per-CPU queues)
//!
//! Synopsis: `CPUQueue([CAPACITY])`
//!
//! Ports: 1 input (push), 1 output (pull). Each worker thread pushes into its own lock-free
//! ring, so producers on different threads never touch the same queue memory; the puller
//! takes from the rings in turn, a batch at a time. Order is kept among the packets of one
//! pushing thread. Packets pushed into a full ring are dropped and counted. The queue's empty
//! notifier wakes the pulling task, on whichever thread runs it. There is no full notifier:
//! sources upstream keep running (use ThreadSafeQueue to make them wait for room).
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000, at most 16777216: `ring::MAX_CAPACITY`): packets each
//!   thread's ring holds. The rings' memory is committed as they fill, not at start.
//!
//! Handlers: `length` (r, all rings), `capacity` (r, per ring), `drops` (r), `drop_details`
//! (r, drops by reason), `reset_counts` (w).
//!
//! Hot swap: a CPUQueue takes its predecessor's packets, each thread's ring into the same
//! thread's, and its drop counts; packets beyond a smaller capacity are dropped and counted.

use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_core::ring::Ring;
use sluice_core::{Batch, ConfigCx, Cx, ElementClass, NotifierId, Packet, Table};
use sluice_lang::args::Args;

use super::shared_queue::{clear_empty, read_capacity, QueueState, SharedQueue};

/// The shared state: one ring per thread.
pub struct PerThreadRings {
    rings: Vec<Ring<Packet>>,
    capacity: usize,
    next: AtomicUsize,
    note: NotifierId,
}

impl PerThreadRings {
    fn len(&self) -> usize {
        self.rings.iter().map(|r| r.len()).sum()
    }
}

impl QueueState for PerThreadRings {
    fn table() -> Table<Self> {
        Table::<Self>::new()
            .read("length", |s| s.len())
            .read("capacity", |s| s.capacity)
            .setting()
    }

    fn configure(args: &mut Args, cx: &mut ConfigCx) -> Result<Self, ()> {
        let (capacity, note) = read_capacity(args, cx)?;
        let threads = cx.nthreads().max(1);
        let Some(rings) = (0..threads).map(|_| Ring::new(capacity)).collect() else {
            args.error(format!(
                "out of memory for {threads} rings of {capacity} packets"
            ));
            return Err(());
        };
        Ok(PerThreadRings {
            rings,
            capacity,
            next: AtomicUsize::new(0),
            note,
        })
    }

    fn push_batch(&self, batch: Batch, cx: &mut Cx) -> u64 {
        let ring = &self.rings[cx.thread() % self.rings.len()];
        let n = batch.len();
        let room = self.capacity.saturating_sub(ring.len());
        let taken = ring.push_many(&mut batch.into_iter(), n.min(room));
        if taken > 0 {
            cx.set_notifier(self.note, true);
        }
        (n - taken) as u64
    }

    fn pull_batch(&self, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        let n = self.rings.len();
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        for i in 0..n {
            let want = max - b.len();
            if want == 0 {
                break;
            }
            self.rings[(start + i) % n].pop_many(want, |p| {
                let _ = b.push(p);
            });
        }
        if b.is_empty() && self.len() == 0 {
            clear_empty(cx, self.note, || self.len() == 0);
        }
        b
    }

    fn storage(&self) -> (usize, usize) {
        (self.len(), self.capacity * self.rings.len())
    }

    /// Each old ring's packets go, in order, to the ring of the same thread (or of thread
    /// number modulo the new number of rings), as far as it has room.
    fn take_from(&self, old: &Self, cx: &mut Cx) -> u64 {
        let mut beyond = 0;
        for (i, from) in old.rings.iter().enumerate() {
            let to = &self.rings[i % self.rings.len()];
            let mut packets = Vec::with_capacity(from.len());
            from.pop_many(from.len(), |p| packets.push(p));
            let n = packets.len().min(self.capacity.saturating_sub(to.len()));
            let mut it = packets.into_iter();
            to.push_many(&mut it, n);
            beyond += it.count() as u64;
        }
        if self.len() > 0 {
            cx.set_notifier(self.note, true);
        }
        beyond
    }
}

/// The CPUQueue element.
pub type CpuQueue = SharedQueue<PerThreadRings>;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CPUQueue",
    ports: "1/1",
    processing: "h/l",
    flow: "",
    source: include_str!("cpu_queue.rs"),
    make: || Box::new(CpuQueue::default()),
};
