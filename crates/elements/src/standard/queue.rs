//! Queue — stores packets in a FIFO queue (push in, pull out)
//!
//! Synopsis: `Queue([CAPACITY])`; also `SimpleQueue`, `NotifierQueue`, `FullNoteQueue`,
//! `QuickNoteQueue` with the same argument.
//!
//! Ports: 1 push input; output 0 pull, optional output 1 push. Packets pushed into a full
//! queue are dropped (drop tail) and counted; with output 1 connected, they leave there
//! instead of being freed. The first overflow prints `NAME: overflow` to standard error.
//! The queue's empty notifier lets downstream pullers (Unqueue, ToDevice, schedulers) sleep
//! while it is empty. As in Click, the notifier goes to sleep lazily: only after ten pulls in a
//! row found the queue empty, so a puller fed packet by packet is not put to sleep and woken
//! again for every packet; QuickNoteQueue's sleeps as soon as the queue is empty. Queue (and its other names FullNoteQueue and QuickNoteQueue) also has a
//! full notifier, so sources upstream (InfiniteSource, Unqueue) sleep while it is full instead
//! of feeding drops; NotifierQueue has only the empty notifier. Offers the Storage interface
//! (length and capacity) that RED finds through router context.
//!
//! Threads: as in Click, one thread may push into a Queue, SimpleQueue, NotifierQueue,
//! FullNoteQueue or QuickNoteQueue while another pulls from it. Sluice keeps both sides on one
//! thread unless StaticThreadSched places them apart; the queue then holds its packets in
//! ThreadSafeQueue's lock-free ring and has ThreadSafeQueue's handlers.
//!
//! Hot swap: a queue takes the packets of its predecessor of the same name and class, oldest
//! first; those beyond its capacity are dropped and counted. It keeps the predecessor's drop
//! counts and highwater mark too.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000): maximum packets held.
//!
//! Handlers: `length` (r), `highwater_length` (r, the most packets ever held at once),
//! `capacity` (rw; shrinking frees the packets beyond the new capacity from the tail, not
//! counted in `drops`, as in Click; `config` then shows the new CAPACITY), `drops` (r, Click's
//! count: packets that found the queue full, freed or sent to output 1, and those a hot swap
//! could not take), `reset_counts` (w, zero `drops` and set highwater to the current length),
//! `reset` (w, empty the queue: packets leave on output 1, freed if it is not connected; not
//! counted in `drops`), `drop_details` (r, the packets freed, by reason: queue full or reset
//! with output 1 not connected, beyond capacity at hot swap, beyond a reduced capacity).
//!
//! Example: `FromDevice(eth0) -> q :: Queue(200) -> ToDevice(eth1)`

use std::collections::VecDeque;
use std::sync::Arc;

use sluice_core::toolkit::OutBatch;
use sluice_core::{drop_reasons, Batch, Concurrency, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, NotifierId, Packet, SharedElement, Sharing, Table};

use crate::threads::{queue_packets, shared_queue, QueueParts};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why a queue frees a packet.
    enum Reason {
        Full => "queue full",
        Swap => "beyond capacity at hot swap",
        Shrunk => "beyond a reduced capacity",
    }
}

/// Where packets go when they arrive and what is dropped when the queue is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueMode {
    /// FIFO, drop the arriving packet (Queue, SimpleQueue).
    DropTail,
    /// FIFO, drop the head packet to make room (FrontDropQueue).
    DropFront,
    /// Input 0 FIFO dropping the arriving packet; input 1 LIFO dropping the tail packet
    /// (MixedQueue).
    Mixed,
}

/// The Queue element (also SimpleQueue, NotifierQueue, FullNoteQueue, QuickNoteQueue,
/// FrontDropQueue and MixedQueue).
pub struct Queue {
    mode: QueueMode,
    /// Offer a full notifier (drop-tail queues other than NotifierQueue).
    notify_full: bool,
    q: VecDeque<Packet>,
    capacity: usize,
    highwater: usize,
    /// Packets that found the queue full and those a hot swap could not take (Click's `drops`).
    overflow: u64,
    drops: Drops<Reason>,
    empty_note: NotifierId,
    full_note: Option<NotifierId>,
    /// The full notifier's identity even where it is not offered (NotifierQueue): a queue
    /// that becomes shared between threads signals it.
    full_id: NotifierId,
    /// One thread may push while another pulls (a drop-tail queue without output 1).
    separable: bool,
    /// Pulls in a row that found the queue empty (Click's `_sleepiness`).
    sleepiness: u32,
    /// The empty notifier sleeps as soon as the queue is empty (QuickNoteQueue).
    quick: bool,
}

/// Failed pulls after which the empty notifier sleeps (Click's `SLEEPINESS_TRIGGER`, sleeping
/// on the pull after).
const SLEEPINESS_TRIGGER: u32 = 9;

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            mode: QueueMode::DropTail,
            notify_full: true,
            q: VecDeque::new(),
            capacity: 1000,
            highwater: 0,
            overflow: 0,
            drops: Drops::default(),
            empty_note: 0,
            full_note: None,
            full_id: 0,
            separable: false,
            sleepiness: 0,
            quick: false,
        }
    }
}

impl Queue {
    /// Hot swap: takes a predecessor's packets, oldest first, as far as there is room (the
    /// rest is dropped and counted), and its highwater mark.
    fn adopt(&mut self, packets: impl Iterator<Item = Packet>, highwater: usize, cx: &mut Cx) {
        self.highwater = highwater;
        let mut beyond = 0;
        for p in packets {
            if self.q.len() < self.capacity {
                self.q.push_back(p);
            } else {
                beyond += 1;
            }
        }
        self.overflow += beyond;
        self.drops.add(Reason::Swap, beyond);
        self.highwater = self.highwater.max(self.q.len());
        if !self.q.is_empty() {
            cx.set_notifier(self.empty_note, true);
        }
        if let Some(full) = self.full_note {
            cx.set_notifier(full, self.q.len() < self.capacity);
        }
    }

    /// A queue with the given arrival and drop policy.
    pub(crate) fn with_mode(mode: QueueMode) -> Queue {
        Queue {
            mode,
            ..Queue::default()
        }
    }

    /// Packets queued now.
    pub fn len(&self) -> usize {
        self.q.len()
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// Maximum packets held.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
}

impl Element for Queue {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.capacity = args.read_p("CAPACITY")?.unwrap_or(self.capacity);
        self.q = VecDeque::with_capacity(self.capacity.min(1 << 16));
        self.empty_note = cx.new_notifier(false);
        cx.provide_empty_notifier(self.empty_note);
        self.separable = self.mode == QueueMode::DropTail && cx.noutputs() == 1;
        self.full_id = cx.new_notifier(true);
        if self.mode == QueueMode::DropTail && self.notify_full {
            cx.provide_full_notifier(self.full_id);
            self.full_note = Some(self.full_id);
        }
        Ok(())
    }

    fn concurrency(&self) -> Concurrency {
        if self.separable {
            Concurrency::Separable
        } else {
            Concurrency::Exclusive
        }
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<Queue>() else {
            return;
        };
        self.overflow += old.overflow;
        self.drops.take(&mut old.drops);
        self.adopt(old.q.drain(..), old.highwater, cx);
    }

    fn take_shared_state(&mut self, old: &dyn SharedElement, cx: &mut Cx) {
        let Some((packets, highwater, full, swap)) = queue_packets(old) else {
            return;
        };
        self.overflow += full + swap;
        self.drops.add(Reason::Full, full);
        self.drops.add(Reason::Swap, swap);
        self.adopt(packets.into_iter(), highwater, cx);
    }

    fn into_shared(self: Box<Self>, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        shared_queue(
            QueueParts {
                packets: self.q.into_iter().collect(),
                capacity: self.capacity,
                drops: self.overflow,
                highwater: self.highwater,
                note: self.empty_note,
                full: self.full_id,
            },
            sharing,
        )
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let was_empty = self.q.is_empty();
        let lifo = port == 1 && self.mode == QueueMode::Mixed;
        let mut spill = OutBatch::new(1);
        for p in batch {
            let out = if self.q.len() < self.capacity {
                if lifo {
                    self.q.push_front(p);
                } else {
                    self.q.push_back(p);
                }
                continue;
            } else if self.capacity == 0 {
                Some(p)
            } else if lifo {
                let old = self.q.pop_back();
                self.q.push_front(p);
                old
            } else if self.mode == QueueMode::DropFront {
                let old = self.q.pop_front();
                self.q.push_back(p);
                old
            } else {
                Some(p)
            };
            if self.overflow == 0 && self.capacity > 0 {
                eprintln!("{}: overflow", cx.name());
            }
            self.overflow += 1;
            if let Some(d) = out {
                if cx.noutputs() > 1 {
                    spill.add(d, cx);
                } else {
                    self.drops.count(Reason::Full);
                }
            }
        }
        self.highwater = self.highwater.max(self.q.len());
        if was_empty && !self.q.is_empty() {
            cx.set_notifier(self.empty_note, true);
        }
        if let Some(full) = self.full_note {
            if self.q.len() >= self.capacity {
                cx.set_notifier(full, false);
            }
        }
        spill.flush(cx);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = Batch::new();
        for _ in 0..max {
            match self.q.pop_front() {
                Some(p) => {
                    let _ = b.push(p);
                }
                None => break,
            }
        }
        if !b.is_empty() {
            self.sleepiness = 0;
        }
        if self.quick && self.q.is_empty() {
            cx.set_notifier(self.empty_note, false);
        } else if b.is_empty() {
            if self.sleepiness >= SLEEPINESS_TRIGGER {
                cx.set_notifier(self.empty_note, false);
            } else {
                self.sleepiness += 1;
            }
        }
        if let Some(full) = self.full_note {
            if self.q.len() < self.capacity {
                cx.set_notifier(full, true);
            }
        }
        b
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some((self.q.len(), self.capacity))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("length", |e| e.q.len())
            .read("highwater_length", |e| e.highwater)
            .read("capacity", |e| e.capacity)
            .write("capacity", |e, v, cx| {
                e.capacity = v
                    .trim()
                    .parse()
                    .map_err(|_| "capacity: expected unsigned integer".to_string())?;
                let freed = e.q.len().saturating_sub(e.capacity);
                e.q.truncate(e.capacity);
                e.drops.add(Reason::Shrunk, freed as u64);
                if let Some(full) = e.full_note {
                    cx.set_notifier(full, e.q.len() < e.capacity);
                }
                cx.reconfigure_keyword(0, "CAPACITY", v.trim());
                Ok(())
            })
            .read("drops", |e| e.overflow)
            .action("reset_counts", |e| {
                e.overflow = 0;
                e.highwater = e.q.len();
            })
            .write("reset", |e, _, cx| {
                let mut out = OutBatch::new(1);
                for p in e.q.drain(..) {
                    out.add(p, cx);
                }
                cx.set_notifier(e.empty_note, false);
                if let Some(full) = e.full_note {
                    cx.set_notifier(full, true);
                }
                out.flush(cx);
                Ok(())
            })
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Queue",
    ports: "1/1-2",
    processing: "h/lh",
    flow: "",
    source: include_str!("queue.rs"),
    make: || Box::new(Queue::default()),
};

/// `SimpleQueue`: the same queue under Click's other name.
pub const SIMPLE_CLASS: ElementClass = ElementClass {
    name: "SimpleQueue",
    ..CLASS
};

/// `FullNoteQueue`: Click's old name of Queue.
pub const FULL_NOTE_CLASS: ElementClass = ElementClass {
    name: "FullNoteQueue",
    ..CLASS
};

/// `QuickNoteQueue`: Queue whose empty notifier sleeps as soon as the queue is empty.
pub const QUICK_NOTE_CLASS: ElementClass = ElementClass {
    name: "QuickNoteQueue",
    make: || {
        Box::new(Queue {
            quick: true,
            ..Queue::default()
        })
    },
    ..CLASS
};

/// `NotifierQueue`: a queue with an empty notifier but no full notifier.
pub const NOTIFIER_CLASS: ElementClass = ElementClass {
    name: "NotifierQueue",
    make: || {
        Box::new(Queue {
            notify_full: false,
            ..Queue::default()
        })
    },
    ..CLASS
};
