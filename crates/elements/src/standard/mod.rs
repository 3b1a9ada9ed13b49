//! Standard elements: sources, sinks, counters, queues, schedulers of packets between ports.

use sluice_core::ElementClass;

mod counter;
mod discard;
mod infinite_source;
mod null;
mod queue;
mod unqueue;

pub use queue::Queue;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    counter::CLASS,
    discard::CLASS,
    infinite_source::CLASS,
    null::CLASS,
    queue::CLASS,
    queue::SIMPLE_CLASS,
    unqueue::CLASS,
];
