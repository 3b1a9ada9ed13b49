//! RangeIPLookup — IPv4 route lookup by binary search over address ranges
//!
//! Synopsis: `RangeIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
//!
//! Ports: 1 input, any number of outputs, push.
//!
//! Each packet is looked up by its destination IP address annotation (when the annotation is
//! 0.0.0.0, the destination of the IP header at the network header, or at the data start, is
//! used and stored in the annotation). The longest matching route decides the output port; if
//! the route has a gateway, the annotation is set to the gateway. Packets matching no route
//! are dropped and counted in `drops` and `drop_details`.
//!
//! Arguments: routes `ADDR/MASK [GW] OUT` (also `ADDR MASK [GW] OUT`; abbreviated networks such
//! as `18.26.4/24` and `0/0` work). A prefix may appear only once; OUT must be an existing
//! output.
//!
//! The routes are flattened into ranges of addresses with the same next hop; a lookup indexes
//! the range lists by the top 16 address bits and binary-searches the few ranges of that /16.
//! Updates go through a DIR-24-8 table (about 64 MiB, as DirectIPLookup) from which the
//! touched /16s are recomputed. Any number of ranges fits (Click's RangeIPLookup fails past
//! 262,144).
//!
//! Hot swap: with the same configured routes, the new element keeps the running table,
//! including routes changed through the handlers since.
//!
//! Handlers:
//! - `table` (r): the routes, one `ADDR/MASK<TAB>GW<TAB>OUT` line each (`-` for no gateway).
//! - `size` (r): the number of routes (cheap to read for a full table).
//! - `footprint_bytes`, `accesses_per_packet` (r): bytes of the structure that lookups read,
//!   and its cache lines a lookup reads on average over uniformly spread addresses (the
//!   footprint `sluice plan` places the element by).
//! - `lookup ADDR` (r, takes a parameter): the route for address ADDR as `OUT GW` (or `OUT`
//!   without gateway, `-1` for no route).
//! - `add` (w): add routes `ADDR/MASK [GW] OUT` (comma-separated); fails if the prefix exists.
//! - `set` (w): add or replace routes. `remove` (w): remove routes by `ADDR/MASK`.
//! - `ctrl` (w): one `add ROUTE`, `set ROUTE` or `remove ADDR/MASK` per line, applied all or
//!   none (a failing line undoes the ones before it).
//! - `flush` (w): remove every route.
//! - `drops` (r): packets with no route. `drop_details` (r): the same, by reason.
//!   `reset_counts` (w).
//!
//! Example: `rt :: RangeIPLookup(18.26.4.24/32 0, 18.26.4/24 1, 0/0 18.26.4.1 1);`

use sluice_core::ElementClass;

use super::element::LookupElem;
use super::range::Ranges;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RangeIPLookup",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("range_ip_lookup.rs"),
    make: || Box::new(LookupElem::<Ranges>::new(true)),
};
