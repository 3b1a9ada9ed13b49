//! The IPv4 router family (RFC 1812, Figure 8 of the Click paper).

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
