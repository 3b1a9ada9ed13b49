//! Real interfaces: AF_PACKET, AF_XDP, TUN/TAP.

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
