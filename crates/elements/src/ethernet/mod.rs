//! Ethernet and ARP elements.

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
