//! Network address and port translation: Click's IPRewriter family, with ICMPPingRewriter,
//! ICMPRewriter, FTPPortMapper and the mappers.

use sluice_core::ElementClass;

pub(crate) mod flow_table;
mod ftp_port_mapper;
mod icmp_ping_rewriter;
mod icmp_rewriter;
mod ip_addr_pair_rewriter;
mod ip_addr_rewriter;
mod ip_rewriter;
mod ip_rewriter_patterns;
mod mapper;
pub(crate) mod rewrite;
mod rewriter;
mod round_robin_ip_mapper;
mod source_ip_hash_mapper;
pub(crate) mod spec;
mod tcp_rewriter;
mod tcp_seq;
mod udp_rewriter;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    ftp_port_mapper::CLASS,
    icmp_ping_rewriter::CLASS,
    icmp_rewriter::CLASS,
    ip_addr_pair_rewriter::CLASS,
    ip_addr_rewriter::CLASS,
    ip_rewriter::CLASS,
    ip_rewriter_patterns::CLASS,
    round_robin_ip_mapper::CLASS,
    source_ip_hash_mapper::CLASS,
    tcp_rewriter::CLASS,
    udp_rewriter::CLASS,
];
