//! IPv4 route lookup elements: LinearIPLookup, StaticIPLookup, LookupIPRoute, RadixIPLookup,
//! DirectIPLookup, RangeIPLookup. The route table and lookup structures are shared (`table`,
//! `radix`, `dir24`, `range`); the element files are thin.

use sluice_core::ElementClass;

pub mod dir24;
mod direct_ip_lookup;
pub mod element;
mod linear_ip_lookup;
mod lookup_ip_route;
pub mod radix;
mod radix_ip_lookup;
pub mod range;
mod range_ip_lookup;
mod static_ip_lookup;
pub mod table;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    direct_ip_lookup::CLASS,
    linear_ip_lookup::CLASS,
    lookup_ip_route::CLASS,
    radix_ip_lookup::CLASS,
    range_ip_lookup::CLASS,
    static_ip_lookup::CLASS,
];
