//! Active queue management: elements that drop packets before the queues they watch
//! overflow (RED, AdaptiveRED).

use sluice_core::ElementClass;

mod adaptive_red;
mod red;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[red::CLASS, adaptive_red::CLASS];
