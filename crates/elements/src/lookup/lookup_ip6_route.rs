//! LookupIP6Route — IPv6 route lookup
//!
//! Synopsis: `LookupIP6Route(DST1/MASK1 [GW1] OUT1, DST2/MASK2 [GW2] OUT2, ...)`
//!
//! Ports: 1 input, any number of outputs, push.
//!
//! Each packet is looked up by its destination IPv6 address annotation (set by
//! GetIP6Address; when the annotation is `::`, the destination of the IPv6 header at the
//! network header, or at the data start, is used and stored in the annotation). The longest
//! matching route decides the output port; if the route has a gateway other than `::`, the
//! annotation is set to the gateway. Packets matching no route are dropped and counted in
//! `drops` and `drop_details`. A batch is looked up at once, then one sub-batch per output is
//! pushed.
//!
//! Arguments: routes `DST/LEN [GW] OUT` (a bare address is a /128; `::/0` is the default
//! route; GW `::` means none). As in Click, a prefix given twice keeps its last route; OUT
//! must be an existing output.
//!
//! Unlike Click's linear table, the routes are held in a multibit trie (a 2^16-entry root,
//! then 8-bit levels; a /48 takes at most five memory accesses): a full IPv6 Internet table
//! (168K prefixes) loads in a fraction of a second and is searched tens of millions of times
//! a second on one core.
//!
//! Hot swap: with the same configured routes, the new element keeps the running table,
//! including routes changed through the handlers since.
//!
//! Handlers:
//! - `table` (r): `# Active routes` then one `DST/LEN<TAB>GW<TAB>OUT` line per route (Click's
//!   listing).
//! - `size` (r): the number of routes (cheap to read for a full table).
//! - `footprint_bytes`, `accesses_per_packet` (r): bytes of the structure that lookups read,
//!   and its cache lines a lookup reads on average over uniformly spread addresses (the
//!   footprint `sluice plan` places the element by).
//! - `lookup ADDR` (r, takes a parameter): the route for ADDR as `OUT GW` (or `OUT` without
//!   gateway, `-1` for no route), e.g. `READ rt.lookup 2001:db8::7`.
//! - `add` (w): add routes `DST/LEN [GW] OUT` (comma-separated), replacing a route for the
//!   same prefix. `set` (w): the same. `remove` (w): remove routes by `DST/LEN` (a prefix
//!   with no route is ignored, as in Click).
//! - `ctrl` (w): one `add ROUTE`, `set ROUTE` or `remove DST/LEN` per line, applied all or
//!   none. `flush` (w): remove every route.
//! - `drops` (r): packets with no route. `drop_details` (r): the same, by reason.
//!   `reset_counts` (w).
//!
//! Example — the router's own address, two interfaces, a default route:
//! ```text
//! rt :: LookupIP6Route(2001:db8:1::1/128 0, 2001:db8:1::/64 1, 2001:db8:2::/64 2,
//!                      ::/0 2001:db8:2::fe 2);
//! ```

use sluice_core::ElementClass;

use super::element::LookupElem;
use super::trie6::Trie6;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "LookupIP6Route",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("lookup_ip6_route.rs"),
    make: || Box::new(LookupElem::<Trie6>::new(true)),
};
