//! TCP and UDP elements: header checks and checksums.

use sluice_core::ElementClass;

mod check_tcp_header;
mod check_udp_header;
pub(crate) mod header_check;
mod set_tcp_checksum;
mod set_udp_checksum;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    check_tcp_header::CLASS,
    check_udp_header::CLASS,
    set_tcp_checksum::CLASS,
    set_udp_checksum::CLASS,
];
