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

use sluice_core::{drop_reasons, ElementClass, Packet};
use sluice_wire::ipv4::PROTO_UDP;

use super::header_check::{HeaderCheck, IpFields};

drop_reasons! {
    /// Why a packet fails the check (Click's order and texts).
    pub enum Reason {
        /// Not UDP, or no IP header.
        NotProto => "not UDP",
        /// The lengths do not fit.
        BadLength => "bad packet length",
        /// The checksum is wrong.
        BadChecksum => "bad UDP checksum",
    }
}

fn check(p: &Packet) -> Result<(), Reason> {
    let ip = IpFields::of(p).ok_or(Reason::NotProto)?;
    if ip.proto != PROTO_UDP {
        return Err(Reason::NotProto);
    }
    let u = ip.bytes.get(ip.hl..ip.hl + 8).ok_or(Reason::BadLength)?;
    let len = u16::from_be_bytes([u[4], u[5]]) as usize;
    if len < 8 || ip.bytes.len() < ip.hl + len {
        return Err(Reason::BadLength);
    }
    if u[6..8] != [0, 0] && !ip.pseudo_checksum_ok(len) {
        return Err(Reason::BadChecksum);
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
    make: || Box::new(HeaderCheck::new("UDP", check)),
};
