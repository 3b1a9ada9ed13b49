//! LookupIPRoute — static IPv4 routing table (old name of StaticIPLookup)
//!
//! Synopsis: `LookupIPRoute(ADDR1/MASK1 [GW1] OUT1, ADDR2/MASK2 [GW2] OUT2, ...)`
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
//! output.
//!
//! Same as StaticIPLookup: a linear search, no run-time route changes.
//!
//! Handlers:
//! - `table` (r): the routes, one `ADDR/MASK<TAB>GW<TAB>OUT` line each (`-` for no gateway).
//! - `size` (r): the number of routes (cheap to read for a full table).
//! - `footprint_bytes`, `accesses_per_packet` (r): bytes of the structure that lookups read,
//!   and its cache lines a lookup reads on average over uniformly spread addresses (the
//!   footprint `sluice plan` places the element by).
//! - `lookup ADDR` (r, takes a parameter): the route for address ADDR as `OUT GW` (or `OUT`
//!   without gateway, `-1` for no route), e.g. `READ rt.lookup 198.18.1.7`.
//! - `drops` (r): packets with no route. `drop_details` (r): the same, by reason.
//!   `reset_counts` (w).
//!
//! Example — local host, local net, default route via a gateway:
//! ```text
//! rt :: LookupIPRoute(18.26.4.24/32 0, 18.26.4.255/32 0, 18.26.4/24 1, 0/0 18.26.4.1 1);
//! ```

use sluice_core::ElementClass;

use super::element::LookupElem;
use super::table::Linear;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "LookupIPRoute",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("lookup_ip_route.rs"),
    make: || Box::new(LookupElem::<Linear>::new(false)),
};
