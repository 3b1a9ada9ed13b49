//! TCP and UDP elements: header checks, checksums and the fast UDP benchmark sources.

use sluice_core::ElementClass;

mod check_tcp_header;
mod check_udp_header;
mod fast_source;
mod fast_udp_flows;
mod fast_udp_source;
pub(crate) mod header_check;
mod set_tcp_checksum;
mod set_udp_checksum;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    check_tcp_header::CLASS,
    check_udp_header::CLASS,
    fast_udp_flows::CLASS,
    fast_udp_source::CLASS,
    set_tcp_checksum::CLASS,
    set_udp_checksum::CLASS,
];
