//! The IPv6 family: header checks, hop limit, addresses and annotations, printing,
//! encapsulation and source-side fragmentation.

use sluice_core::ElementClass;

mod check_ip6_header;
mod common;
mod dec_ip6_hlim;
mod get_ip6_address;
mod ip6_encap;
mod ip6_fragmenter;
mod ip6_mirror;
mod ip6_print;
mod mark_ip6_header;
mod set_ip6_address;
mod set_ip6_dscp;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    check_ip6_header::CLASS,
    dec_ip6_hlim::CLASS,
    get_ip6_address::CLASS,
    ip6_encap::CLASS,
    ip6_fragmenter::CLASS,
    ip6_mirror::CLASS,
    ip6_print::CLASS,
    mark_ip6_header::CLASS,
    set_ip6_address::CLASS,
    set_ip6_dscp::CLASS,
];
