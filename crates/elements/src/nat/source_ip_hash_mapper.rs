//! SourceIPHashMapper — gives the rewriters' new mappings a pattern chosen by source address
//!
//! Synopsis: `SourceIPHashMapper(NNODES SEED, PATTERN1 ID1, ..., PATTERNn IDn)`
//!
//! Ports: none.
//!
//! A mapper like RoundRobinIPMapper (`sluice doc RoundRobinIPMapper`), with Click 2.1's
//! semantics, that picks the pattern by consistent hashing of the packet's source address,
//! so that a source keeps its server when servers are added or removed. Each pattern is a
//! server with ID (a number 0–65535): the ring has NNODES points per server, drawn from
//! Click's random number generator (glibc's `random`) seeded with SEED, so the same
//! configuration maps each address as Click does. The hash of a source address selects the
//! first point at or above it (the tree's root when there is none, as in Click); its server's
//! rank among the distinct IDs, in increasing order, is the pattern used (give IDs in
//! increasing order so that rank and pattern agree). Only that pattern is tried: when it has
//! no free value, the rewriter drops the packet ("no free port or address").
//!
//! Arguments:
//! - `NNODES SEED`: points per server (1–4096) and the generator's seed (an integer).
//! - `PATTERNi IDi`: a pattern with its outputs, as RoundRobinIPMapper's, then the server
//!   ID. At least one (one alone draws a warning).
//!
//! Handlers: none of its own.
//!
//! Example: `sh :: SourceIPHashMapper(32 1, - - 198.19.0.1 - 0 1 0, - - 198.19.0.2 - 0 1 1);
//! rw :: IPRewriter(sh, drop);`

use sluice_core::ElementClass;

use super::mapper::{IPMapper, MapperClass};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SourceIPHashMapper",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("source_ip_hash_mapper.rs"),
    make: || Box::new(IPMapper::new(MapperClass::SourceHash)),
};
