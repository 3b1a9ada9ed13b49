//! Discretized Fair Queuing (the Panama router's link scheduler): DFQSched serves per-flow
//! queues one quantum per flow per scheduling cycle, with a cost per packet independent of
//! the number of flows, and sends each cycle's quanta as transmission batches; DFQDemux, on
//! the router downstream, rebuilds the flows' packets from the batches.

use sluice_core::ElementClass;

mod dfq_demux;
mod dfq_sched;
pub mod fuzzing;
mod idset;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[dfq_demux::CLASS, dfq_sched::CLASS];
