//! CheckUDPHeader — checks the UDP header of UDP/IP packets
//!
//! Synopsis: `CheckUDPHeader([keywords VERBOSE, DETAILS])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects UDP/IP packets with the network header annotation (after CheckIPHeader or
//! MarkIPHeader; without it the IP header is taken at the start). A packet passes to output
//! 0 when its IP protocol is UDP, the UDP length is at least 8 and the packet holds that
//! many bytes after the IP header, and the UDP checksum, unless zero (none computed), is
//! right over the pseudo header and the UDP length. Any other packet goes to output 1, or is
//! dropped when output 1 is not connected; either way it is counted by reason ("not UDP",
//! "bad packet length", "bad UDP checksum"). The first failure is reported on standard
//! error.
//!
//! Arguments: `VERBOSE` (bool, default false): report every failure. `DETAILS` (bool):
//! accepted; the per-reason counts are always kept.
//!
//! Handlers: `drops` (r): packets that failed. `drop_details` (r): `COUNT<TAB>REASON` lines.
//!
//! Example: `CheckIPHeader -> ipc :: IPClassifier(udp, -) -> CheckUDPHeader -> ...`

use sluice_core::{ElementClass, Packet};
use sluice_wire::ipv4::PROTO_UDP;

use super::header_check::{HeaderCheck, IpFields, BAD_CHECKSUM, BAD_LENGTH, NOT_PROTO};

fn check(p: &Packet) -> Result<(), usize> {
    let ip = IpFields::of(p).ok_or(NOT_PROTO)?;
    if ip.proto != PROTO_UDP {
        return Err(NOT_PROTO);
    }
    let u = ip.bytes.get(ip.hl..ip.hl + 8).ok_or(BAD_LENGTH)?;
    let len = u16::from_be_bytes([u[4], u[5]]) as usize;
    if len < 8 || ip.bytes.len() < ip.hl + len {
        return Err(BAD_LENGTH);
    }
    if u[6..8] != [0, 0] && !ip.pseudo_checksum_ok(len) {
        return Err(BAD_CHECKSUM);
    }
    Ok(())
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckUDPHeader",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_udp_header.rs"),
    make: || {
        Box::new(HeaderCheck::new(
            "UDP",
            ["not UDP", "bad packet length", "bad UDP checksum"],
            check,
        ))
    },
};
