//! CheckICMPHeader — checks the ICMP header of ICMP/IP packets
//!
//! Synopsis: `CheckICMPHeader([keywords VERBOSE, DETAILS])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects ICMP/IP packets with the network header annotation (after CheckIPHeader or
//! MarkIPHeader; without it the IP header is taken at the start). The ICMP message is
//! everything after the IP header. A packet passes to output 0 when its IP protocol is ICMP,
//! the message is at least 8 bytes and long enough for its type (error messages —
//! unreachable, source quench, redirect, time exceeded, parameter problem — quote at least
//! 28 bytes; timestamp and timestamp reply are exactly 20 bytes; information request and
//! reply exactly 8), and its checksum is right. Any other packet goes to output 1, or is
//! dropped when output 1 is not connected; either way it is counted by reason ("not ICMP",
//! "bad packet length", "bad ICMP checksum"). The first failure is reported on standard
//! error.
//!
//! Arguments: `VERBOSE` (bool, default false): report every failure. `DETAILS` (bool):
//! accepted; the per-reason counts are always kept.
//!
//! Handlers: `drops` (r): packets that failed. `drop_details` (r): `COUNT<TAB>REASON` lines.
//!
//! Example: `CheckIPHeader -> ipc :: IPClassifier(icmp, -) -> CheckICMPHeader -> ...`

use sluice_core::{drop_reasons, ElementClass, Packet};
use sluice_wire::checksum::checksum;
use sluice_wire::icmp::*;
use sluice_wire::ipv4::PROTO_ICMP;

use crate::tcpudp::header_check::{HeaderCheck, IpFields};

drop_reasons! {
    /// Why a packet fails the check (Click's order and texts).
    pub enum Reason {
        /// Not ICMP, or no IP header.
        NotProto => "not ICMP",
        /// The lengths do not fit.
        BadLength => "bad packet length",
        /// The checksum is wrong.
        BadChecksum => "bad ICMP checksum",
    }
}

fn check(p: &Packet) -> Result<(), Reason> {
    let ip = IpFields::of(p).ok_or(Reason::NotProto)?;
    if ip.proto != PROTO_ICMP {
        return Err(Reason::NotProto);
    }
    let m = &ip.bytes[ip.hl..];
    if m.len() < 8 {
        return Err(Reason::BadLength);
    }
    let fits = match m[0] {
        TYPE_UNREACH | TYPE_TIME_EXCEEDED | TYPE_PARAM_PROBLEM | TYPE_SOURCE_QUENCH
        | TYPE_REDIRECT => m.len() >= 8 + 28,
        TYPE_TIMESTAMP | TYPE_TIMESTAMP_REPLY => m.len() == 20,
        TYPE_INFO_REQUEST | TYPE_INFO_REPLY => m.len() == 8,
        _ => true,
    };
    if !fits {
        return Err(Reason::BadLength);
    }
    if checksum(m) != 0 {
        return Err(Reason::BadChecksum);
    }
    Ok(())
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckICMPHeader",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_icmp_header.rs"),
    make: || Box::new(HeaderCheck::new("ICMP", check)),
};
