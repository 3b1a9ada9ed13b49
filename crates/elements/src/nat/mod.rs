//! Network address and port translation: Click's IPRewriter family.

use sluice_core::ElementClass;

pub(crate) mod flow_table;
mod ip_addr_pair_rewriter;
mod ip_addr_rewriter;
mod ip_rewriter;
mod ip_rewriter_patterns;
pub(crate) mod rewrite;
mod rewriter;
pub(crate) mod spec;
mod tcp_rewriter;
mod udp_rewriter;

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    ip_addr_pair_rewriter::CLASS,
    ip_addr_rewriter::CLASS,
    ip_rewriter::CLASS,
    ip_rewriter_patterns::CLASS,
    tcp_rewriter::CLASS,
    udp_rewriter::CLASS,
];
