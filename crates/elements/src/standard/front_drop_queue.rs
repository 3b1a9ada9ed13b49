//! FrontDropQueue — a FIFO queue that drops from the front when full
//!
//! Synopsis: `FrontDropQueue([CAPACITY])`
//!
//! Ports: 1 push input; output 0 pull, optional output 1 push. Like Queue, except that when a
//! packet arrives at a full queue, the packet at the head (the oldest) is dropped and counted
//! to make room (it leaves on output 1 if connected), and the new packet is appended. Offers
//! an empty notifier and the Storage interface like Queue.
//!
//! Arguments:
//! - `CAPACITY` (integer, default 1000).
//!
//! Handlers: `length` (r), `highwater_length` (r), `capacity` (rw), `drops` (r),
//! `reset_counts` (w), `reset` (w), `drop_details` (r), as for Queue (`sluice doc Queue`).
//!
//! Example: `src -> FrontDropQueue(100) -> Unqueue -> ...` (keeps the newest 100 packets)

use sluice_core::ElementClass;

use super::queue::{Queue, QueueMode};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FrontDropQueue",
    ports: "1/1-2",
    processing: "h/lh",
    flow: "",
    source: include_str!("front_drop_queue.rs"),
    make: || Box::new(Queue::with_mode(QueueMode::DropFront)),
};
