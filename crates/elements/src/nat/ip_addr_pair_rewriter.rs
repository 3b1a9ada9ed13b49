//! IPAddrPairRewriter — rewrites packets' source and destination address pairs
//!
//! Synopsis: `IPAddrPairRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords TIMEOUT, GUARANTEE,
//! REAP_INTERVAL, MAPPING_CAPACITY, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! Like IPRewriter (`sluice doc IPRewriter`), with flows identified by the (SADDR, DADDR)
//! pair alone, for IP packets of any protocol and fragment: a mapping rewrites both
//! addresses as its pattern (`SADDR DADDR`, either `-`; SADDR may be a range) says, and its
//! reply entry restores them. A pattern that changes ports makes no mapping, and its
//! packets are dropped ("pattern rewrites fields this class keeps"). The IP checksum and the
//! TCP or UDP checksum (first fragments) are updated, and the destination address
//! annotation is set. Flows are guaranteed for GUARANTEE (default 5 s) after each packet,
//! then live until TIMEOUT (default 7200 s) after it.
//!
//! Arguments: `INPUTSPECi`, `TIMEOUT`, `GUARANTEE`, `REAP_INTERVAL`, `MAPPING_CAPACITY` or
//! `CAPACITY`, `REPLY_ANNO`, as above and as IPRewriter's.
//!
//! Handlers: `table` (r, one line per entry: `(SADDR, DADDR) => (SADDR', DADDR') [*F R] iN expS`),
//! and `table_size`, `nmappings`, `mapping_failures`, `size`, `capacity`, `footprint_bytes`,
//! `accesses_per_packet`, `clear`, `patterns`, `patternN`, `drops`, `drop_details` as IPRewriter's.
//!
//! Threads: shared by several threads as IPRewriter is (`sluice doc IPRewriter`).
//!
//! Example: `IPAddrPairRewriter(pattern 198.18.0.1 - 0 1, drop)`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPAddrPairRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("ip_addr_pair_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::AddrPair)),
};
