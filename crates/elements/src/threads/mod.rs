//! Scheduling and multi-threading: task shares, thread placement, queues that cross threads.

use sluice_core::ElementClass;

mod block_thread;
mod cpu_queue;
mod schedule_info;
mod shared_queue;
mod static_thread_sched;
pub mod synthetic_load;
mod thread_safe_queue;

pub(crate) use thread_safe_queue::{queue_packets, shared_queue, QueueParts};

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    block_thread::CLASS,
    schedule_info::CLASS,
    static_thread_sched::CLASS,
    synthetic_load::CLASS,
    thread_safe_queue::CLASS,
    cpu_queue::CLASS,
];
