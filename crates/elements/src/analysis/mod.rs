//! Trace analysis elements.

use sluice_core::ElementClass;

mod aggregate_counter;
mod aggregate_ip;
mod aggregate_ip_flows;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    aggregate_counter::CLASS,
    aggregate_ip::CLASS,
    aggregate_ip_flows::CLASS,
];
