//! Queue — stores packets in a FIFO queue (push in, pull out)
//!
//! Synopsis: `Queue([CAPACITY])`, `SimpleQueue([CAPACITY])`
//!
//! Ports: 1 input (push), 1 output (pull). Packets pushed into a full queue are dropped (drop
//! tail) and counted. The queue's empty notifier lets downstream pullers (Unqueue, ToDevice,
//! schedulers) sleep while it is empty. Offers the Storage interface (length and capacity) that
//! RED finds through router context. A drop-tail queue also has a full notifier, so sources
//! upstream (InfiniteSource, Unqueue) sleep while it is full instead of feeding drops.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000): maximum packets held.
//!
//! Handlers: `length` (r), `highwater_length` (r), `capacity` (rw), `drops` (r),
//! `reset_counts` (w, zero drops and highwater), `reset` (w, drop every queued packet).

use std::collections::VecDeque;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, NotifierId, Packet};
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

/// The Queue element (also SimpleQueue, FrontDropQueue and MixedQueue).
pub struct Queue {
    mode: QueueMode,
    q: VecDeque<Packet>,
    capacity: usize,
    highwater: usize,
    drops: u64,
    empty_note: NotifierId,
    full_note: Option<NotifierId>,
}

impl Default for Queue {
    fn default() -> Queue {
        Queue {
            mode: QueueMode::DropTail,
            q: VecDeque::new(),
            capacity: 1000,
            highwater: 0,
            drops: 0,
            empty_note: 0,
            full_note: None,
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
        if self.mode == QueueMode::DropTail {
            let full = cx.new_notifier(true);
            cx.provide_full_notifier(full);
            self.full_note = Some(full);
        }
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let was_empty = self.q.is_empty();
        let lifo = port == 1 && self.mode == QueueMode::Mixed;
        for p in batch {
            if self.q.len() < self.capacity {
                if lifo {
                    self.q.push_front(p);
                } else {
                    self.q.push_back(p);
                }
            } else if self.capacity == 0 {
                self.drops += 1;
            } else if lifo {
                self.q.pop_back();
                self.drops += 1;
                self.q.push_front(p);
            } else if self.mode == QueueMode::DropFront {
                self.q.pop_front();
                self.drops += 1;
                self.q.push_back(p);
            } else {
                self.drops += 1;
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
        if self.q.is_empty() {
            cx.set_notifier(self.empty_note, false);
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
                while self.q.len() > self.capacity {
                    self.q.pop_back();
                    self.drops += 1;
                }
            }
            "reset_counts" => {
                self.drops = 0;
                self.highwater = self.q.len();
            }
            "reset" => {
                self.q.clear();
                cx.set_notifier(self.empty_note, false);
            }
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Queue",
    ports: "1/1",
    processing: "h/l",
    flow: "",
    source: include_str!("queue.rs"),
    make: || Box::new(Queue::default()),
};

/// `SimpleQueue`: the same queue under Click's other name.
pub const SIMPLE_CLASS: ElementClass = ElementClass {
    name: "SimpleQueue",
    ..CLASS
};
