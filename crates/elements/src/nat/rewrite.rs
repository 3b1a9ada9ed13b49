//! Reading a packet's flow and rewriting its addresses and ports, with the IP and transport
//! checksums updated incrementally (RFC 1624).

use std::net::Ipv4Addr;

use sluice_core::Packet;
use sluice_wire::checksum::{update16, update32};
use sluice_wire::Ipv4Packet;

use super::flow_table::FlowId;
use crate::ip::common::ip_offset;

/// IP protocol numbers the rewriters know.
pub const TCP: u8 = 6;
/// UDP.
pub const UDP: u8 = 17;
/// DCCP (UDPRewriter rewrites its ports too).
pub const DCCP: u8 = 33;

/// What the rewriters need of a packet's headers.
#[derive(Clone, Copy, Debug)]
pub struct Headers {
    /// Offset of the IP header.
    pub off: usize,
    /// IP header length.
    pub hl: usize,
    /// IP protocol.
    pub proto: u8,
    /// Not a second or later fragment.
    pub first_frag: bool,
    /// Bytes from the transport header to the end of the packet.
    pub tlen: usize,
    /// Addresses and (first fragments with 4 transport bytes) ports.
    pub id: FlowId,
    /// A TCP first fragment of at least 18 transport bytes: RST, FIN, SYN, has payload.
    pub tcp: Option<(bool, bool, bool, bool)>,
}

/// Reads the headers of an IP packet (at its network header annotation, else at 0); `None`
/// when there is no valid IP header.
pub fn parse(p: &Packet) -> Option<Headers> {
    let off = ip_offset(p);
    let ip = Ipv4Packet::new_checked_truncated(&p.data()[off..]).ok()?;
    let hl = ip.header_len();
    let proto = ip.protocol();
    let first_frag = ip.frag_offset() == 0;
    let t = &ip.as_bytes()[hl..];
    let be = |i: usize| u16::from_be_bytes([t[i], t[i + 1]]);
    let (sport, dport) = if first_frag && t.len() >= 4 {
        (be(0), be(2))
    } else {
        (0, 0)
    };
    let tcp = (proto == TCP && first_frag && t.len() >= 18).then(|| {
        let flags = t[13];
        let payload = hl + usize::from(t[12] >> 4) * 4 < usize::from(ip.total_len());
        (flags & 4 != 0, flags & 1 != 0, flags & 2 != 0, payload)
    });
    Some(Headers {
        off,
        hl,
        proto,
        first_frag,
        tlen: t.len(),
        id: FlowId {
            saddr: ip.src(),
            sport,
            daddr: ip.dst(),
            dport,
        },
        tcp,
    })
}

/// Which transport fields a rewrite changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortMode {
    /// TCPRewriter's TCP flows: ports (and the TCP checksum) only with 18 transport bytes.
    Tcp,
    /// UDPRewriter's flows: ports of any first fragment; the TCP or UDP checksum as present.
    Any,
    /// Addresses only; the TCP or UDP checksum follows them.
    None,
}

/// Rewrites the packet `h` describes to flow `to`: addresses, then (first fragments) ports as
/// `mode` says, updating the checksums incrementally. A UDP checksum of 0 (none) stays 0.
pub fn apply(p: &mut Packet, h: &Headers, to: &FlowId, mode: PortMode) {
    let data = &mut p.data_mut()[h.off..];
    let mut ip = Ipv4Packet::new_unchecked(&mut data[..]);
    ip.set_src_update_checksum(to.saddr);
    ip.set_dst_update_checksum(to.daddr);
    if !h.first_frag || (mode == PortMode::Tcp && h.tlen < 18) {
        return;
    }
    let t = &mut data[h.hl..];
    let ports = mode != PortMode::None && h.tlen >= 4;
    if ports {
        t[0..2].copy_from_slice(&to.sport.to_be_bytes());
        t[2..4].copy_from_slice(&to.dport.to_be_bytes());
    }
    let at = match h.proto {
        TCP if h.tlen >= 18 => 16,
        UDP if h.tlen >= 8 && t[6..8] != [0, 0] => 6,
        _ => return,
    };
    let addr = |a: Ipv4Addr| u32::from(a);
    let mut sum = u16::from_be_bytes([t[at], t[at + 1]]);
    sum = update32(sum, addr(h.id.saddr), addr(to.saddr));
    sum = update32(sum, addr(h.id.daddr), addr(to.daddr));
    if ports {
        sum = update16(sum, h.id.sport, to.sport);
        sum = update16(sum, h.id.dport, to.dport);
    }
    if h.proto == UDP && sum == 0 {
        sum = 0xffff;
    }
    t[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}
