//! Quality-of-service elements: schedulers that share a link or the processor between classes
//! of traffic, and meters that sort packets by the rate at which they arrive.

use sluice_core::ElementClass;

mod bandwidth_meter;
mod cpu_sched;
mod drr_sched;
mod meter;
mod rate_ewma;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    bandwidth_meter::CLASS,
    cpu_sched::CLASS,
    drr_sched::CLASS,
    meter::CLASS,
];
