//! Route lookup elements: LinearIPLookup, StaticIPLookup, LookupIPRoute, RadixIPLookup,
//! DirectIPLookup, RangeIPLookup for IPv4 and LookupIP6Route for IPv6. The route table, the
//! address families and the lookup structures are shared (`table`, `family`, `radix`,
//! `dir24`, `range`, `trie6`, and the route cache `route_cache`); the element files are thin.

use sluice_core::ElementClass;

pub mod dir24;
mod direct_ip_lookup;
pub mod element;
pub mod family;
mod linear_ip_lookup;
mod lookup_ip6_route;
mod lookup_ip_route;
pub mod radix;
mod radix_ip_lookup;
pub mod range;
mod range_ip_lookup;
pub mod route_cache;
mod static_ip_lookup;
pub mod table;
pub mod trie6;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    direct_ip_lookup::CLASS,
    linear_ip_lookup::CLASS,
    lookup_ip6_route::CLASS,
    lookup_ip_route::CLASS,
    radix_ip_lookup::CLASS,
    range_ip_lookup::CLASS,
    static_ip_lookup::CLASS,
];
