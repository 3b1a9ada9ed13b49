//! Trace I/O: pcap files (FromDump, ToDump).

use sluice_core::ElementClass;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[];
