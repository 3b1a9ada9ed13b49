//! Trace I/O: pcap files (FromDump, ToDump) and IP summary dumps (FromIPSummaryDump,
//! ToIPSummaryDump).

use sluice_core::{ElementClass, Packet};

pub mod from_dump;
mod from_ip_summary_dump;
pub mod ipsumdump;
mod md5;
pub mod to_dump;
mod to_ip_summary_dump;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    from_dump::CLASS,
    from_ip_summary_dump::CLASS,
    to_dump::CLASS,
    to_ip_summary_dump::CLASS,
];

/// Where the extra-length annotation lives in `Anno::user` (bytes 12..16, little-endian),
/// until the engine has a dedicated field: the bytes a capture cut off (original length minus
/// captured length). FromDump sets it; ToDump with `EXTRA_LENGTH true` adds it back.
const EXTRA_LENGTH_ANNO: std::ops::Range<usize> = 12..16;

/// The extra-length annotation.
pub fn extra_length(p: &Packet) -> u32 {
    let u = &p.anno().user[EXTRA_LENGTH_ANNO];
    u32::from_le_bytes([u[0], u[1], u[2], u[3]])
}

/// Sets the extra-length annotation.
pub fn set_extra_length(p: &mut Packet, n: u32) {
    p.anno_mut().user[EXTRA_LENGTH_ANNO].copy_from_slice(&n.to_le_bytes());
}
