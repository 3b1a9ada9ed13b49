//! Ethernet and ARP elements.

use sluice_core::ElementClass;

mod arp_print;
mod arp_querier;
mod arp_responder;
mod ether_encap;
mod ether_rewrite;
mod host_ether_filter;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    arp_print::CLASS,
    arp_querier::CLASS,
    arp_responder::CLASS,
    ether_encap::CLASS,
    ether_rewrite::CLASS,
    host_ether_filter::CLASS,
];
