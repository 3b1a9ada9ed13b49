//! Reading a packet's flow and rewriting its addresses and ports (or ICMP echo identifier),
//! and translating ICMP errors that quote a rewritten flow, with the IP, transport and ICMP
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
/// ICMP (ICMPPingRewriter's echoes, ICMPRewriter's errors).
pub const ICMP: u8 = 1;

/// ICMP echo and echo reply types.
const ECHO: u8 = 8;
const ECHO_REPLY: u8 = 0;

/// ICMP error types ICMPRewriter translates: destination unreachable, source quench,
/// redirect, time exceeded, parameter problem.
const ERRORS: [u8; 5] = [3, 4, 5, 11, 12];

/// The 16-bit big-endian word at `at`.
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

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
    /// An ICMP echo (true) or echo reply (false) first fragment of at least 6 transport
    /// bytes, and its identifier.
    pub ping: Option<(bool, u16)>,
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
    let (sport, dport) = if first_frag && t.len() >= 4 {
        (be16(t, 0), be16(t, 2))
    } else {
        (0, 0)
    };
    let tcp = (proto == TCP && first_frag && t.len() >= 18).then(|| {
        let flags = t[13];
        let payload = hl + usize::from(t[12] >> 4) * 4 < usize::from(ip.total_len());
        (flags & 4 != 0, flags & 1 != 0, flags & 2 != 0, payload)
    });
    let ping = (proto == ICMP && first_frag && t.len() >= 6)
        .then(|| t[0])
        .filter(|&ty| ty == ECHO || ty == ECHO_REPLY)
        .map(|ty| (ty == ECHO, be16(t, 4)));
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
        ping,
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

/// Writes ICMP checksum `sum` into message `m`, as 0xffff rather than 0 when the whole
/// message is zero (as Click's incremental updates do).
fn set_icmp_sum(m: &mut [u8], sum: u16) {
    let all_zero = m[..2].iter().chain(&m[4..]).all(|&b| b == 0);
    let sum = if sum == 0 && all_zero { 0xffff } else { sum };
    m[2..4].copy_from_slice(&sum.to_be_bytes());
}

/// Rewrites the ICMP echo or echo reply `h` describes: addresses to `to`'s, identifier to
/// `ident`, updating the IP and ICMP checksums incrementally.
pub fn apply_ping(p: &mut Packet, h: &Headers, to: &FlowId, ident: u16) {
    let data = &mut p.data_mut()[h.off..];
    let mut ip = Ipv4Packet::new_unchecked(&mut data[..]);
    ip.set_src_update_checksum(to.saddr);
    ip.set_dst_update_checksum(to.daddr);
    let m = &mut data[h.hl..];
    let old = be16(m, 4);
    m[4..6].copy_from_slice(&ident.to_be_bytes());
    let sum = update16(be16(m, 2), old, ident);
    set_icmp_sum(m, sum);
}

/// What an ICMP error quotes (Click's ICMPRewriter).
#[derive(Clone, Copy, Debug)]
pub struct Quoted {
    /// The quoted datagram's protocol.
    pub proto: u8,
    /// The quoted flow reversed, as a reply to it arrives: addresses, and with `transport`
    /// the ports (TCP, UDP, DCCP) or the echo identifier (ICMP, in `sport`; `dport` 0).
    pub search: FlowId,
    /// Whether the quoted ports or echo identifier were read (and are to be rewritten).
    pub transport: bool,
    /// The quoted IP header's length.
    hl: usize,
}

/// The flow an ICMP error (destination unreachable, source quench, redirect, time exceeded,
/// parameter problem) quotes, or `None` for other ICMP messages and errors without a whole
/// quoted IPv4 header. The quoted ports are read from a first fragment quoting at least 8
/// transport bytes (TCP, UDP, DCCP); an echo's identifier from one quoting 6.
pub fn quoted(p: &Packet, h: &Headers) -> Option<Quoted> {
    let m = &p.data()[h.off + h.hl..];
    if m.len() < 28 || !ERRORS.contains(&m[0]) {
        return None;
    }
    let enc = Ipv4Packet::new_checked_truncated(&m[8..]).ok()?;
    let hl = enc.header_len();
    let t = &m[8 + hl..];
    let mut search = FlowId {
        saddr: enc.dst(),
        sport: 0,
        daddr: enc.src(),
        dport: 0,
    };
    let proto = enc.protocol();
    let transport = enc.frag_offset() == 0
        && match proto {
            TCP | UDP | DCCP if t.len() >= 8 => {
                (search.sport, search.dport) = (be16(t, 2), be16(t, 0));
                true
            }
            ICMP if t.len() >= 6 && t[0] == ECHO => {
                search.sport = be16(t, 4);
                true
            }
            _ => false,
        };
    Some(Quoted {
        proto,
        search,
        transport,
        hl,
    })
}

/// Updates checksum `sum` for the 16-bit words of `old` that became those of `new` (a
/// trailing odd byte is the high byte of its word).
pub(super) fn update_words(mut sum: u16, old: &[u8], new: &[u8]) -> u16 {
    for (o, n) in old.chunks(2).zip(new.chunks(2)) {
        let word = |c: &[u8]| u16::from_be_bytes([c[0], c.get(1).copied().unwrap_or(0)]);
        if o != n {
            sum = update16(sum, word(o), word(n));
        }
    }
    sum
}

/// Rewrites quoted transport header `t` of `q` to the reverse of flow `to`: ports (and the
/// TCP checksum with 18 bytes, a UDP checksum that is present), or the echo identifier and
/// its ICMP checksum.
fn rewrite_quoted_transport(t: &mut [u8], q: &Quoted, to: &FlowId) {
    if q.proto == ICMP {
        let old = be16(t, 4);
        t[4..6].copy_from_slice(&to.dport.to_be_bytes());
        let sum = update16(be16(t, 2), old, to.dport);
        set_icmp_sum(t, sum);
        return;
    }
    t[0..2].copy_from_slice(&to.dport.to_be_bytes());
    t[2..4].copy_from_slice(&to.sport.to_be_bytes());
    let at = match q.proto {
        TCP if t.len() >= 18 => 16,
        UDP if t[6..8] != [0, 0] => 6,
        _ => return,
    };
    let (old, addr) = (&q.search, |a: Ipv4Addr| u32::from(a));
    let mut sum = be16(t, at);
    sum = update32(sum, addr(old.daddr), addr(to.daddr));
    sum = update32(sum, addr(old.saddr), addr(to.saddr));
    sum = update16(sum, old.dport, to.dport);
    sum = update16(sum, old.sport, to.sport);
    if q.proto == UDP && sum == 0 {
        sum = 0xffff;
    }
    t[at..at + 2].copy_from_slice(&sum.to_be_bytes());
}

/// Translates ICMP error `p` (headers `h`, quoting `q`) into one about the flow a reply
/// rewritten to `to` belongs to: the quoted source becomes `to.daddr`, the quoted destination
/// `to.saddr`, the quoted ports `to.dport` and `to.sport` (an echo's identifier `to.dport`),
/// and the outer destination `to.daddr` when it was the quoted source. The outer IP, quoted
/// IP, quoted transport and ICMP checksums are updated incrementally. Returns whether the
/// outer destination changed.
pub fn translate_error(p: &mut Packet, h: &Headers, q: &Quoted, to: &FlowId) -> bool {
    let data = &mut p.data_mut()[h.off..];
    let mut ip = Ipv4Packet::new_unchecked(&mut data[..]);
    let outer = ip.dst() == q.search.daddr;
    if outer {
        ip.set_dst_update_checksum(to.daddr);
    }
    let m = &mut data[h.hl..];
    // What may change: the quoted IP header and the first 18 quoted transport bytes.
    let end = m.len().min(8 + q.hl + 18);
    let mut before = [0u8; 60 + 18];
    before[..end - 8].copy_from_slice(&m[8..end]);
    let enc = &mut m[8..];
    let mut eip = Ipv4Packet::new_unchecked(&mut enc[..]);
    eip.set_src_update_checksum(to.daddr);
    eip.set_dst_update_checksum(to.saddr);
    if q.transport {
        rewrite_quoted_transport(&mut enc[q.hl..], q, to);
    }
    let sum = update_words(be16(m, 2), &before[..end - 8], &m[8..end]);
    m[2..4].copy_from_slice(&sum.to_be_bytes());
    outer
}
