//! CheckTCPHeader — checks the TCP header of TCP/IP packets
//!
//! Synopsis: `CheckTCPHeader([keywords VERBOSE, DETAILS])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! Expects TCP/IP packets with the network header annotation (after CheckIPHeader or
//! MarkIPHeader; without it the IP header is taken at the start). A packet passes to output
//! 0 when its IP protocol is TCP, its TCP header length is at least 20 and within the IP
//! payload, the packet holds the whole IP datagram, and the TCP checksum over the pseudo
//! header and the IP payload is right. Any other packet goes to output 1, or is dropped when
//! output 1 is not connected; either way it is counted by reason ("not TCP", "bad packet
//! length", "bad TCP checksum"). The first failure is reported on standard error.
//!
//! Arguments: `VERBOSE` (bool, default false): report every failure. `DETAILS` (bool):
//! accepted; the per-reason counts are always kept.
//!
//! Handlers: `drops` (r): packets that failed. `drop_details` (r): `COUNT<TAB>REASON` lines.
//!
//! Example: `CheckIPHeader -> ipc :: IPClassifier(tcp, -) -> CheckTCPHeader -> ...`

use sluice_core::{drop_reasons, ElementClass, Packet};
use sluice_wire::ipv4::PROTO_TCP;

use super::header_check::{HeaderCheck, IpFields};

drop_reasons! {
    /// Why a packet fails the check (Click's order and texts).
    pub enum Reason {
        /// Not TCP, or no IP header.
        NotProto => "not TCP",
        /// The lengths do not fit.
        BadLength => "bad packet length",
        /// The checksum is wrong.
        BadChecksum => "bad TCP checksum",
    }
}

fn check(p: &Packet) -> Result<(), Reason> {
    let ip = IpFields::of(p).ok_or(Reason::NotProto)?;
    if ip.proto != PROTO_TCP {
        return Err(Reason::NotProto);
    }
    let len = ip.total.checked_sub(ip.hl).ok_or(Reason::BadLength)?;
    if len < 20 || ip.bytes.len() < ip.total {
        return Err(Reason::BadLength);
    }
    let off = ((ip.bytes[ip.hl + 12] >> 4) as usize) * 4;
    if off < 20 || len < off {
        return Err(Reason::BadLength);
    }
    if !ip.pseudo_checksum_ok(len) {
        return Err(Reason::BadChecksum);
    }
    Ok(())
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckTCPHeader",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_tcp_header.rs"),
    make: || Box::new(HeaderCheck::new("TCP", check)),
};
