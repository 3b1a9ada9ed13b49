//! Standard elements: sources, sinks, counters, queues, schedulers of packets between ports.

use sluice_core::ElementClass;

mod average_counter;
mod bandwidth_rated_unqueue;
mod counter;
mod discard;
mod infinite_source;
mod null;
mod pull_to_push;
mod queue;
mod rated_source;
mod rated_unqueue;
mod timed_source;
mod unqueue;
mod util;

pub use queue::Queue;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    average_counter::CLASS,
    bandwidth_rated_unqueue::CLASS,
    counter::CLASS,
    discard::CLASS,
    infinite_source::CLASS,
    null::CLASS,
    pull_to_push::CLASS,
    queue::CLASS,
    queue::SIMPLE_CLASS,
    rated_source::CLASS,
    rated_unqueue::CLASS,
    timed_source::CLASS,
    unqueue::CLASS,
];
