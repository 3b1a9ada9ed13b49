//! Ethernet, ARP and 802.1Q VLAN elements.

use sluice_core::ElementClass;

mod arp_print;
mod arp_querier;
mod arp_responder;
mod arp_table;
mod ether_encap;
mod ether_rewrite;
mod ether_vlan_encap;
mod host_ether_filter;
mod ip6_nd_advertiser;
mod ip6_nd_solicitor;
mod mark_mac_header;
mod set_vlan_anno;
mod strip_ether_vlan_header;
mod vlan;
mod vlan_decap;
mod vlan_encap;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    arp_print::CLASS,
    arp_querier::CLASS,
    arp_responder::CLASS,
    arp_table::CLASS,
    ether_encap::CLASS,
    ether_rewrite::CLASS,
    host_ether_filter::CLASS,
    ip6_nd_advertiser::CLASS,
    ip6_nd_solicitor::CLASS,
    mark_mac_header::CLASS,
    ether_vlan_encap::CLASS,
    set_vlan_anno::CLASS,
    strip_ether_vlan_header::CLASS,
    vlan_decap::CLASS,
    vlan_encap::CLASS,
];
