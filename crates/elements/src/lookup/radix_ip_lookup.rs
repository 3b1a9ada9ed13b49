//! RadixIPLookup — IPv4 route lookup in a multibit trie
//!
//! Synopsis: `RadixIPLookup(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ..., [CACHE K])`
//!
//! Ports: 1 input, any number of outputs, push.
//!
//! Each packet is looked up by its destination IP address annotation (when the annotation is
//! 0.0.0.0, the destination of the IP header at the network header, or at the data start, is
//! used and stored in the annotation). The longest matching route decides the output port; if
//! the route has a gateway, the annotation is set to the gateway. Packets matching no route
//! are dropped and counted in `drops` and `drop_details`. A batch is looked up at once, then
//! one sub-batch per output is pushed.
//!
//! Arguments: routes `ADDR/MASK [GW] OUT` (also `ADDR MASK [GW] OUT`; abbreviated networks such
//! as `18.26.4/24` and `0/0` work). A prefix may appear only once; OUT must be an existing
//! output. `CACHE K` (0 to 20, default 0: none; a Sluice extension) puts an aggregate route
//! cache of 2^K entries in front of the table (Panama's, 003_*; the paper's 1024 entries are
//! `CACHE 10`): K address bits chosen from the table's structure index it, and each entry holds
//! the largest address block around a looked-up address in which the answer cannot differ, so
//! one entry answers a whole aggregate. Route changes empty exactly the entries they could
//! affect; the bits are chosen again after many changes. See `route_cache.rs`.
//!
//! The table is a multibit trie: 2^16 root slots, then 4-bit levels (at most five steps per
//! lookup, three up to /24). Updates touch one node. A full Internet table (565K prefixes)
//! loads in a fraction of a second.
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
//!   without gateway, `-1` for no route), e.g. `READ rt.lookup 198.18.1.7`.
//! - `add` (w): add routes `ADDR/MASK [GW] OUT` (comma-separated); fails if the prefix exists.
//! - `set` (w): add or replace routes. `remove` (w): remove routes by `ADDR/MASK`.
//! - `ctrl` (w): one `add ROUTE`, `set ROUTE` or `remove ADDR/MASK` per line, applied all or
//!   none (a failing line undoes the ones before it).
//! - `flush` (w): remove every route.
//! - `drops` (r): packets with no route. `drop_details` (r): the same, by reason.
//!   `reset_counts` (w): zeroes these and the cache counters.
//! - `cache_hits`, `cache_misses` (r): lookups answered by the route cache and lookups that
//!   went to the table (the hit ratio is `cache_hits / (cache_hits + cache_misses)`).
//!   `cache_invalidations` (r): cache entries emptied by route changes, by a new choice of
//!   index bits, or by `flush`. `cache_bits` (r): the index bits, as address bit positions
//!   from 0 (most significant) to 31, most significant index bit first; empty without cache.
//!
//! Example — local host, local net, default route via a gateway:
//! ```text
//! rt :: RadixIPLookup(18.26.4.24/32 0, 18.26.4.255/32 0, 18.26.4/24 1, 0/0 18.26.4.1 1);
//! ```
//! With a 1024-entry route cache: `RadixIPLookup(..., CACHE 10)`.

use sluice_core::ElementClass;

use super::element::LookupElem;
use super::radix::Radix;
use super::route_cache::Cached;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RadixIPLookup",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("radix_ip_lookup.rs"),
    make: || Box::new(LookupElem::<Cached<Radix>>::new(true)),
};
