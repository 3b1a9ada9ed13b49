//! RoundRobinIPMapper — gives the rewriters' new mappings its patterns in turn
//!
//! Synopsis: `RoundRobinIPMapper(PATTERN1, ..., PATTERNn)`
//!
//! Ports: none.
//!
//! A mapper for IPRewriter, TCPRewriter, UDPRewriter, ICMPPingRewriter, IPAddrRewriter and
//! IPAddrPairRewriter, with Click 2.1's semantics: an input specification that is this
//! element's name (`IPRewriter(rr, drop)`) asks it for each new mapping of that input.
//! Each PATTERN is `SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT` (or a pattern of the rewriter's
//! form, or the name of an IPRewriterPatterns pattern, then FOUTPUT ROUTPUT; see `sluice doc
//! IPRewriter`). The patterns are tried in round-robin order, starting after the last one
//! tried: the first that finds a free value makes the mapping, sent to its FOUTPUT (replies
//! to its ROUTPUT). When none does, the rewriter drops the packet ("no free port or
//! address", counted in its `mapping_failures`). Several rewriters may share one mapper (and
//! its turn); each pattern keeps its own allocation position. The outputs must exist on every
//! rewriter using the mapper.
//!
//! Arguments: `PATTERNi`, at least one (one alone draws a warning).
//!
//! Handlers: none of its own.
//!
//! Example: `rr :: RoundRobinIPMapper(198.18.0.1 - 198.19.0.1 - 0 1,
//! 198.18.0.1 - 198.19.0.2 - 0 1); rw :: IPRewriter(rr, drop);`

use sluice_core::ElementClass;

use super::mapper::{IPMapper, MapperClass};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RoundRobinIPMapper",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("round_robin_ip_mapper.rs"),
    make: || Box::new(IPMapper::new(MapperClass::RoundRobin)),
};
