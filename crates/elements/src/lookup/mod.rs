//! IPv4 route lookup elements.

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
