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
//! first; those beyond its capacity are dropped and counted.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000): maximum packets held.
//!
//! Handlers: `length` (r), `highwater_length` (r, the most packets ever held at once),
//! `capacity` (rw; shrinking frees the packets beyond the new capacity from the tail, without
//! counting them as drops, as in Click; `config` then shows the new CAPACITY), `drops` (r), `reset_counts` (w, zero drops and set highwater to
//! the current length), `reset` (w, empty the queue: packets leave on output 1 if connected,
//! otherwise they are freed; not counted as drops).
//!
//! Example: `FromDevice(eth0) -> q :: Queue(200) -> ToDevice(eth1)`

use std::collections::VecDeque;
use std::sync::Arc;

use sluice_core::{
    Batch, Concurrency, ConfigCx, Cx, Element, ElementClass, Handler, NotifierId, Packet,
    SharedElement, Sharing,
};

use crate::threads::{shared_queue, QueueParts};
use sluice_lang::args::Args;

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
    drops: u64,
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
            drops: 0,
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

    /// Removes the packet at the head (drop-from-front, used by RED placed after a queue).
    pub fn drop_front(&mut self) -> Option<Packet> {
        let p = self.q.pop_front();
        if p.is_some() {
            self.drops += 1;
        }
        p
    }
}

impl Element for Queue {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.capacity = args.read_p("CAPACITY")?.unwrap_or(1000);
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
        let room = self.capacity.saturating_sub(self.q.len());
        let n = old.q.len();
        self.q.extend(old.q.drain(..n.min(room)));
        self.drops += old.q.len() as u64;
        old.q.clear();
        self.highwater = self.highwater.max(self.q.len());
        if !self.q.is_empty() {
            cx.set_notifier(self.empty_note, true);
        }
        if let Some(full) = self.full_note {
            cx.set_notifier(full, self.q.len() < self.capacity);
        }
    }

    fn into_shared(self: Box<Self>, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        shared_queue(
            QueueParts {
                packets: self.q.into_iter().collect(),
                capacity: self.capacity,
                drops: self.drops,
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
        let mut dropped = Batch::new();
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
            if self.drops == 0 && self.capacity > 0 {
                eprintln!("{}: overflow", cx.name());
            }
            self.drops += 1;
            if let Some(d) = out {
                if cx.noutputs() > 1 {
                    if let Err(d) = dropped.push(d) {
                        cx.push(1, std::mem::take(&mut dropped));
                        let _ = dropped.push(d);
                    }
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
        if !dropped.is_empty() {
            cx.push(1, dropped);
        }
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

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("length"),
                Handler::r("highwater_length"),
                Handler::rw("capacity"),
                Handler::r("drops"),
                Handler::w("reset_counts"),
                Handler::w("reset"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "length" => self.q.len().to_string(),
            "highwater_length" => self.highwater.to_string(),
            "capacity" => self.capacity.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "capacity" => {
                self.capacity = value
                    .trim()
                    .parse()
                    .map_err(|_| "capacity: expected unsigned integer".to_string())?;
                self.q.truncate(self.capacity);
                if let Some(full) = self.full_note {
                    cx.set_notifier(full, self.q.len() < self.capacity);
                }
                cx.reconfigure_keyword(0, "CAPACITY", value.trim());
            }
            "reset_counts" => {
                self.drops = 0;
                self.highwater = self.q.len();
            }
            "reset" => {
                let mut out = Batch::new();
                while let Some(p) = self.q.pop_front() {
                    if cx.noutputs() > 1 {
                        if let Err(p) = out.push(p) {
                            cx.push(1, std::mem::take(&mut out));
                            let _ = out.push(p);
                        }
                    }
                }
                cx.set_notifier(self.empty_note, false);
                if let Some(full) = self.full_note {
                    cx.set_notifier(full, true);
                }
                if !out.is_empty() {
                    cx.push(1, out);
                }
            }
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
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
