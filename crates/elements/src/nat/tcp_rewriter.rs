//! TCPRewriter — rewrites TCP flows' addresses and ports (NAPT)
//!
//! Synopsis: `TCPRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords TCP_TIMEOUT, TIMEOUT,
//! TCP_DONE_TIMEOUT, TCP_NODATA_TIMEOUT, TCP_GUARANTEE, GUARANTEE, REAP_INTERVAL,
//! MAPPING_CAPACITY, DST_ANNO, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! IPRewriter (`sluice doc IPRewriter`) for TCP alone: the same input specifications,
//! mappings, TCP timeouts, capacity and checksum updates. Packets that are not TCP, later
//! fragments and packets with fewer than 8 transport bytes go to the output of a `pass`
//! input and are dropped on other inputs ("not rewritable"). Not done: IPMapper input
//! specifications.
//!
//! Sequence numbers: a mapping may carry sequence-number deltas, recorded by FTPPortMapper
//! when it changes a payload's length. From its trigger on, a delta moves the sequence
//! numbers of its direction; acknowledgement numbers and SACK blocks of the other direction
//! are moved back, with the TCP checksum updated incrementally (packets whose TCP header is
//! longer than their transport bytes are not translated). A new mapping has none. Triggers
//! 2^30 behind a newer one, or behind the sequence numbers seen, are forgotten, as in Click.
//! The `table` handler shows an entry's newest delta as `seq +N`.
//!
//! Arguments: as IPRewriter's TCP ones: `INPUTSPECi`, `TCP_TIMEOUT` or `TIMEOUT` (default
//! 86400 s), `TCP_DONE_TIMEOUT` (240 s), `TCP_NODATA_TIMEOUT` (300 s), `TCP_GUARANTEE` or
//! `GUARANTEE` (5 s), `REAP_INTERVAL` (900 s), `MAPPING_CAPACITY` or `CAPACITY`, `DST_ANNO`,
//! `REPLY_ANNO`.
//!
//! Handlers: `table` (r, IPRewriter's `tcp_table`), `lookup` (r with parameter, its `tcp_lookup`),
//! and `table_size`, `nmappings`, `mapping_failures`, `size`, `capacity`, `footprint_bytes`,
//! `accesses_per_packet`, `clear`, `patterns`, `patternN`, `drops`, `drop_details` as IPRewriter's.
//!
//! Threads: shared by several threads as IPRewriter is (`sluice doc IPRewriter`).
//!
//! Example: `TCPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop)`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "TCPRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("tcp_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::Tcp)),
};
