//! UDPRewriter — rewrites UDP (and TCP, DCCP) flows' addresses and ports with UDP timeouts
//!
//! Synopsis: `UDPRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords UDP_TIMEOUT, TIMEOUT,
//! UDP_STREAMING_TIMEOUT, STREAMING_TIMEOUT, UDP_GUARANTEE, GUARANTEE, REAP_INTERVAL,
//! MAPPING_CAPACITY, DST_ANNO, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! IPRewriter (`sluice doc IPRewriter`) with one map for UDP, TCP and DCCP packets, all
//! treated as UDP flows: ports of every first fragment are rewritten, the UDP or TCP
//! checksum updated when present, and flows time out as UDP flows (UDP_TIMEOUT or TIMEOUT,
//! default 300 s; UDP_STREAMING_TIMEOUT or STREAMING_TIMEOUT, default the former, once three
//! packets and a reply went through; UDP_GUARANTEE or GUARANTEE, default 5 s). Other
//! protocols, later fragments and packets with fewer than 8 transport bytes go to the
//! output of a `pass` input and are dropped on other inputs ("not rewritable").
//!
//! Arguments: `INPUTSPECi`, the timeouts above, `REAP_INTERVAL` (900 s),
//! `MAPPING_CAPACITY` or `CAPACITY`, `DST_ANNO`, `REPLY_ANNO`, as IPRewriter's.
//!
//! Handlers: `table` (r, as IPRewriter's `udp_table`), and `table_size`, `nmappings`,
//! `mapping_failures`, `size`, `capacity`, `footprint_bytes`, `accesses_per_packet`, `clear`,
//! `patterns`, `patternN`, `drops`, `drop_details` as IPRewriter's.
//!
//! Threads: shared by several threads as IPRewriter is (`sluice doc IPRewriter`).
//!
//! Example: `UDPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop, TIMEOUT 60)`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "UDPRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("udp_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::Udp)),
};
