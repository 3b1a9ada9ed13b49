//! MixedQueue — a queue with a FIFO input and a LIFO input
//!
//! Synopsis: `MixedQueue([CAPACITY])`
//!
//! Ports: 2 push inputs; output 0 pull, optional output 1 push (where dropped packets go when
//! connected). Packets arriving on input 0 are appended at the tail
//! (first in, first out); when the queue is full they are dropped. Packets arriving on input 1
//! are put at the head, to leave next (last in, first out); when the queue is full the packet at
//! the tail is dropped to make room. Every drop is counted. Offers an empty notifier and the
//! Storage interface like Queue.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000).
//!
//! Handlers: `length` (r), `highwater_length` (r), `capacity` (rw), `drops` (r),
//! `reset_counts` (w), `reset` (w), `drop_details` (r), as for Queue (`sluice doc Queue`).
//!
//! Example: `bulk -> [0]mq :: MixedQueue; urgent -> [1]mq; mq -> Unqueue -> ...`

use sluice_core::ElementClass;

use super::queue::{Queue, QueueMode};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "MixedQueue",
    ports: "2/1-2",
    processing: "h/lh",
    flow: "",
    source: include_str!("mixed_queue.rs"),
    make: || Box::new(Queue::with_mode(QueueMode::Mixed)),
};
