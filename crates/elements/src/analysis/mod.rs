//! Trace analysis elements.

use sluice_core::ElementClass;

mod aggregate_counter;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[aggregate_counter::CLASS];
