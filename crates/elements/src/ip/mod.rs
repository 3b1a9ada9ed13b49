//! The IPv4 router family (RFC 1812, Figure 8 of the Click paper).

use sluice_core::ElementClass;

pub mod address_info;
pub mod check_ip_header;
pub mod common;
mod dec_ip_ttl;
mod drop_broadcasts;
mod fix_ip_src;
mod get_ip_address;
mod icmp_ip_encap;
mod ip_encap;
mod ip_fragmenter;
mod ip_gw_options;
mod ip_mirror;
mod ip_print;
mod ip_reassembler;
mod mark_ip_ce;
mod mark_ip_header;
mod set_ip_address;
mod set_ip_checksum;
mod set_ip_dscp;
mod store_ip_address;
mod strip_ip_header;
mod udp_ip_encap;
mod unstrip_ip_header;

pub use ip_gw_options::process_options;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    address_info::CLASS,
    check_ip_header::CLASS,
    check_ip_header::CLASS2,
    dec_ip_ttl::CLASS,
    drop_broadcasts::CLASS,
    fix_ip_src::CLASS,
    get_ip_address::CLASS,
    icmp_ip_encap::CLASS,
    ip_encap::CLASS,
    ip_fragmenter::CLASS,
    ip_gw_options::CLASS,
    ip_mirror::CLASS,
    ip_print::CLASS,
    ip_reassembler::CLASS,
    mark_ip_ce::CLASS,
    mark_ip_header::CLASS,
    set_ip_address::CLASS,
    set_ip_checksum::CLASS,
    set_ip_dscp::CLASS,
    store_ip_address::CLASS,
    strip_ip_header::CLASS,
    unstrip_ip_header::CLASS,
    udp_ip_encap::CLASS,
];
