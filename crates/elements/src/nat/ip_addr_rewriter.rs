//! IPAddrRewriter — rewrites packets' source addresses (Basic NAT)
//!
//! Synopsis: `IPAddrRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords TIMEOUT, GUARANTEE,
//! REAP_INTERVAL, MAPPING_CAPACITY, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! Like IPRewriter (`sluice doc IPRewriter`), with mappings by address alone, for IP packets
//! of any protocol and fragment. A mapping maps source address SADDR to SADDR'; its reply
//! entry matches packets whose destination is SADDR' and gives them destination SADDR. A
//! packet is looked up by its source address, then by its destination address (replies).
//! Patterns are `SADDR DADDR` with DADDR `-`: SADDR may be an address range `A-B` or a
//! prefix `ADDR/LEN` (`#`, `?` as for ports); a pattern that changes ports or the
//! destination makes no mapping, and its packets are dropped ("pattern rewrites fields this
//! class keeps"). The IP checksum and the TCP or UDP checksum (first fragments) are updated.
//! Replies get the destination address annotation set to the restored destination. Flows
//! are guaranteed for GUARANTEE (default 5 s) after each packet, then live until TIMEOUT
//! (default 7200 s) after it.
//!
//! Arguments: `INPUTSPECi`, `TIMEOUT`, `GUARANTEE`, `REAP_INTERVAL`, `MAPPING_CAPACITY` or
//! `CAPACITY`, `REPLY_ANNO`, as above and as IPRewriter's.
//!
//! Handlers: `table` (r, one line per entry: `ADDR => ADDR' [*F R] iN expS`), and `table_size`,
//! `nmappings`, `mapping_failures`, `size`, `capacity`, `footprint_bytes`, `accesses_per_packet`,
//! `clear`, `patterns`, `patternN`, `drops`, `drop_details` as IPRewriter's.
//!
//! Threads: shared by several threads as IPRewriter is (`sluice doc IPRewriter`).
//!
//! Example: `IPAddrRewriter(pattern 198.18.0.0/24 - 0 1, drop)`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPAddrRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("ip_addr_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::Addr)),
};
