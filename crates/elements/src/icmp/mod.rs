//! ICMP elements.

use sluice_core::ElementClass;

mod check_icmp_header;
mod icmp6_error;
mod icmp6_ping_responder;
mod icmp_error;
mod icmp_ping_responder;
mod icmp_ping_source;

pub(crate) use icmp_error::read_type_code;
pub use icmp_error::{parse_code, parse_type};

/// Classes of this family.
pub const CLASSES: &[ElementClass] = &[
    check_icmp_header::CLASS,
    icmp6_error::CLASS,
    icmp6_ping_responder::CLASS,
    icmp_error::CLASS,
    icmp_ping_responder::CLASS,
    icmp_ping_source::CLASS,
    icmp_ping_source::ALIAS,
];
