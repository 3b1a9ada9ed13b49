//! ICMPv6 (RFC 4443) and neighbour discovery messages (RFC 4861).

use std::net::Ipv6Addr;

use crate::addr::EtherAddr;
use crate::checksum;
use crate::error::{be16, be32, put16, put32, Result, WireError};

/// Destination unreachable.
pub const TYPE_DST_UNREACH: u8 = 1;
/// Packet too big.
pub const TYPE_PACKET_TOO_BIG: u8 = 2;
/// Time exceeded.
pub const TYPE_TIME_EXCEEDED: u8 = 3;
/// Parameter problem.
pub const TYPE_PARAM_PROBLEM: u8 = 4;
/// Echo request.
pub const TYPE_ECHO_REQUEST: u8 = 128;
/// Echo reply.
pub const TYPE_ECHO_REPLY: u8 = 129;
/// Router solicitation.
pub const TYPE_ROUTER_SOLICIT: u8 = 133;
/// Router advertisement.
pub const TYPE_ROUTER_ADVERT: u8 = 134;
/// Neighbour solicitation.
pub const TYPE_NEIGHBOR_SOLICIT: u8 = 135;
/// Neighbour advertisement.
pub const TYPE_NEIGHBOR_ADVERT: u8 = 136;
/// Redirect.
pub const TYPE_REDIRECT: u8 = 137;

/// Neighbour-advertisement flag: sender is a router.
pub const NA_ROUTER: u32 = 0x8000_0000;
/// Neighbour-advertisement flag: solicited.
pub const NA_SOLICITED: u32 = 0x4000_0000;
/// Neighbour-advertisement flag: override.
pub const NA_OVERRIDE: u32 = 0x2000_0000;

/// NDP option: source link-layer address.
pub const NDP_OPT_SOURCE_LLADDR: u8 = 1;
/// NDP option: target link-layer address.
pub const NDP_OPT_TARGET_LLADDR: u8 = 2;
/// NDP option: prefix information.
pub const NDP_OPT_PREFIX_INFO: u8 = 3;
/// NDP option: redirected header.
pub const NDP_OPT_REDIRECTED: u8 = 4;
/// NDP option: MTU.
pub const NDP_OPT_MTU: u8 = 5;

/// Length of the basic ICMPv6 header (type, code, checksum, 4-byte message body start).
pub const HEADER_LEN: usize = 8;
/// Length of a neighbour solicitation/advertisement before its options.
pub const ND_HEADER_LEN: usize = 24;
/// Length of an NDP link-layer address option for Ethernet.
pub const NDP_LLADDR_OPT_LEN: usize = 8;

/// The all-nodes link-local multicast address, ff02::1.
pub const ALL_NODES: Ipv6Addr = Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1);

/// The solicited-node multicast address of `a`: ff02::1:ff00:0 with the low 24 bits of `a`
/// (RFC 4291 §2.7.1).
pub fn solicited_node(a: &Ipv6Addr) -> Ipv6Addr {
    let o = a.octets();
    let mut s = [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 0];
    s[13..].copy_from_slice(&o[13..]);
    Ipv6Addr::from(s)
}

/// True if `a` is a solicited-node multicast address (ff02::1:ffXX:XXXX).
pub fn is_solicited_node(a: &Ipv6Addr) -> bool {
    a.octets()[..13] == [0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff]
}

/// The Ethernet group address IPv6 multicast address `a` is sent to: 33:33 followed by the
/// low 32 bits of `a` (RFC 2464 §7).
pub fn multicast_ether(a: &Ipv6Addr) -> EtherAddr {
    let o = a.octets();
    EtherAddr([0x33, 0x33, o[12], o[13], o[14], o[15]])
}

mod field {
    use std::ops::Range;
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const REST: usize = 4;
    pub const IDENT: usize = 4;
    pub const SEQ: usize = 6;
    pub const TARGET: Range<usize> = 8..24;
    pub const PAYLOAD: usize = 8;
    pub const ND_OPTIONS: usize = 24;
    pub const REDIRECT_OPTIONS: usize = 40;
}

/// A zero-copy view of an ICMPv6 message; the checksum covers the whole buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Icmpv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Icmpv6Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Icmpv6Packet { buffer }
    }

    /// Wraps a buffer, checking it holds 8 bytes, and 24 for neighbour solicitations and
    /// advertisements (40 for redirects).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Performs the checks of [`Icmpv6Packet::new_checked`].
    pub fn check_len(&self) -> Result<()> {
        let n = self.buffer.as_ref().len();
        if n < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let need = match self.msg_type() {
            TYPE_NEIGHBOR_SOLICIT | TYPE_NEIGHBOR_ADVERT => ND_HEADER_LEN,
            TYPE_REDIRECT => field::REDIRECT_OPTIONS,
            _ => HEADER_LEN,
        };
        if n < need {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Message type (`TYPE_*`).
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// True for error messages (types below 128, RFC 4443 §2.1).
    pub fn is_error(&self) -> bool {
        self.msg_type() < 128
    }

    /// Message code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The 32-bit word after the checksum (MTU, pointer, or NA flags).
    pub fn rest_of_header(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REST)
    }

    /// Echo identifier.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    /// Echo sequence number.
    pub fn seq(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SEQ)
    }

    /// Packet-too-big MTU.
    pub fn mtu(&self) -> u32 {
        self.rest_of_header()
    }

    /// Parameter-problem pointer.
    pub fn pointer(&self) -> u32 {
        self.rest_of_header()
    }

    /// Neighbour-advertisement flags (`NA_*`).
    pub fn na_flags(&self) -> u32 {
        self.rest_of_header() & 0xe000_0000
    }

    /// Target address of a neighbour solicitation/advertisement or redirect; `None` for
    /// other types or when the buffer is too short.
    pub fn target(&self) -> Option<Ipv6Addr> {
        match self.msg_type() {
            TYPE_NEIGHBOR_SOLICIT | TYPE_NEIGHBOR_ADVERT | TYPE_REDIRECT => {
                let s = self.buffer.as_ref().get(field::TARGET)?;
                let mut a = [0u8; 16];
                a.copy_from_slice(s);
                Some(Ipv6Addr::from(a))
            }
            _ => None,
        }
    }

    /// Data after the 8-byte header.
    pub fn payload(&self) -> &[u8] {
        self.buffer.as_ref().get(field::PAYLOAD..).unwrap_or(&[])
    }

    /// The neighbour-discovery options of RS/RA/NS/NA/redirect messages (empty for others).
    pub fn ndp_options(&self) -> NdpOptions<'_> {
        let start = match self.msg_type() {
            TYPE_ROUTER_SOLICIT => 8,
            TYPE_ROUTER_ADVERT => 16,
            TYPE_NEIGHBOR_SOLICIT | TYPE_NEIGHBOR_ADVERT => field::ND_OPTIONS,
            TYPE_REDIRECT => field::REDIRECT_OPTIONS,
            _ => usize::MAX,
        };
        NdpOptions::new(self.buffer.as_ref().get(start..).unwrap_or(&[]))
    }

    /// True if the checksum verifies over the IPv6 pseudo-header.
    pub fn verify_checksum(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        let s = checksum::pseudo_header_v6(src, dst, crate::ipv6::NH_ICMPV6, b.len() as u32)
            + checksum::sum16(b);
        checksum::fold(s) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Icmpv6Packet<T> {
    /// Sets the type.
    pub fn set_msg_type(&mut self, v: u8) {
        self.buffer.as_mut()[field::TYPE] = v;
    }

    /// Sets the code.
    pub fn set_code(&mut self, v: u8) {
        self.buffer.as_mut()[field::CODE] = v;
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the 32-bit word after the checksum.
    pub fn set_rest_of_header(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::REST, v);
    }

    /// Sets the echo identifier.
    pub fn set_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::IDENT, v);
    }

    /// Sets the echo sequence number.
    pub fn set_seq(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SEQ, v);
    }

    /// Sets the target address (the buffer must hold 24 bytes).
    pub fn set_target(&mut self, a: &Ipv6Addr) {
        self.buffer.as_mut()[field::TARGET].copy_from_slice(&a.octets());
    }

    /// Computes and stores the checksum over the IPv6 pseudo-header.
    pub fn fill_checksum(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let p = checksum::pseudo_header_v6(src, dst, crate::ipv6::NH_ICMPV6, b.len() as u32);
        let c = checksum::finish(p + checksum::sum16(b));
        self.set_checksum(c);
    }

    /// Mutable data after the 8-byte header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        self.buffer
            .as_mut()
            .get_mut(field::PAYLOAD..)
            .unwrap_or(&mut [])
    }
}

/// A neighbour solicitation or advertisement (RFC 4861 §4.3, §4.4): the fields NDP uses,
/// with the link-layer address option that belongs to the message (source link-layer
/// address in a solicitation, target link-layer address in an advertisement).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NeighborRepr {
    /// [`TYPE_NEIGHBOR_SOLICIT`] or [`TYPE_NEIGHBOR_ADVERT`].
    pub msg_type: u8,
    /// Advertisement flags (`NA_*`); zero in a solicitation.
    pub flags: u32,
    /// The target address.
    pub target: Ipv6Addr,
    /// The link-layer address option's address, if the message has one.
    pub lladdr: Option<EtherAddr>,
}

impl NeighborRepr {
    /// The link-layer option type of a message of type `msg_type`.
    fn lladdr_kind(msg_type: u8) -> u8 {
        if msg_type == TYPE_NEIGHBOR_SOLICIT {
            NDP_OPT_SOURCE_LLADDR
        } else {
            NDP_OPT_TARGET_LLADDR
        }
    }

    /// Reads a solicitation or advertisement: `Unsupported` for another type, `Truncated`
    /// when shorter than 24 bytes, `BadOption` when an option has length zero, overruns the
    /// message, or is a link-layer option too short for an Ethernet address. The first
    /// link-layer option of the right kind is kept; other options are skipped.
    pub fn parse<T: AsRef<[u8]>>(p: &Icmpv6Packet<T>) -> Result<NeighborRepr> {
        let msg_type = p.msg_type();
        if msg_type != TYPE_NEIGHBOR_SOLICIT && msg_type != TYPE_NEIGHBOR_ADVERT {
            return Err(WireError::Unsupported);
        }
        p.check_len()?;
        let kind = Self::lladdr_kind(msg_type);
        let mut lladdr = None;
        for o in p.ndp_options() {
            let o = o?;
            if o.kind == kind {
                let a = o.link_layer_addr().ok_or(WireError::BadOption)?;
                lladdr.get_or_insert(a);
            }
        }
        Ok(NeighborRepr {
            msg_type,
            flags: if msg_type == TYPE_NEIGHBOR_ADVERT {
                p.na_flags()
            } else {
                0
            },
            target: p.target().ok_or(WireError::Truncated)?,
            lladdr,
        })
    }

    /// The message's length: 24 bytes, and 8 more with a link-layer option.
    pub fn buffer_len(&self) -> usize {
        ND_HEADER_LEN + self.lladdr.map_or(0, |_| NDP_LLADDR_OPT_LEN)
    }

    /// Writes the message in the first [`NeighborRepr::buffer_len`] bytes of `buf` (code 0,
    /// checksum zero: see [`emit_ipv6_icmp`]); `Truncated` if `buf` is too short.
    pub fn emit(&self, buf: &mut [u8]) -> Result<()> {
        let b = buf
            .get_mut(..self.buffer_len())
            .ok_or(WireError::Truncated)?;
        b.fill(0);
        b[field::TYPE] = self.msg_type;
        put32(b, field::REST, self.flags & 0xe000_0000);
        b[field::TARGET].copy_from_slice(&self.target.octets());
        if let Some(a) = self.lladdr {
            let o = &mut b[field::ND_OPTIONS..];
            o[0] = Self::lladdr_kind(self.msg_type);
            o[1] = (NDP_LLADDR_OPT_LEN / 8) as u8;
            o[2..8].copy_from_slice(&a.0);
        }
        Ok(())
    }
}

/// Completes an IPv6 packet in `buf` around the ICMPv6 message in `buf[40..]`: writes the
/// fixed IPv6 header (traffic class and flow label 0, next header ICMPv6, hop limit
/// `hop_limit`, payload length the rest of `buf`) and fills the message's checksum.
/// `Truncated` if `buf` is shorter than 48 bytes, `BadTotalLength` if the message is longer
/// than 65535 bytes.
pub fn emit_ipv6_icmp(buf: &mut [u8], src: &Ipv6Addr, dst: &Ipv6Addr, hop_limit: u8) -> Result<()> {
    use crate::ipv6::{Ipv6Packet, HEADER_LEN as IP6_LEN, NH_ICMPV6};
    if buf.len() < IP6_LEN + HEADER_LEN {
        return Err(WireError::Truncated);
    }
    let plen = u16::try_from(buf.len() - IP6_LEN).map_err(|_| WireError::BadTotalLength)?;
    let (h, msg) = buf.split_at_mut(IP6_LEN);
    h[..4].copy_from_slice(&[0x60, 0, 0, 0]);
    let mut ip = Ipv6Packet::new_unchecked(h);
    ip.set_payload_len(plen);
    ip.set_next_header(NH_ICMPV6);
    ip.set_hop_limit(hop_limit);
    ip.set_src(src);
    ip.set_dst(dst);
    Icmpv6Packet::new_unchecked(msg).fill_checksum(src, dst);
    Ok(())
}

/// One neighbour-discovery option: its type and the bytes after type and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NdpOption<'a> {
    /// Option type (`NDP_OPT_*`).
    pub kind: u8,
    /// Option data after the two-byte type/length prefix.
    pub data: &'a [u8],
}

impl NdpOption<'_> {
    /// The Ethernet address of a source/target link-layer address option.
    pub fn link_layer_addr(&self) -> Option<EtherAddr> {
        match self.kind {
            NDP_OPT_SOURCE_LLADDR | NDP_OPT_TARGET_LLADDR if self.data.len() >= 6 => {
                let mut a = [0u8; 6];
                a.copy_from_slice(&self.data[..6]);
                Some(EtherAddr(a))
            }
            _ => None,
        }
    }
}

/// Iterator over NDP options; yields `Err(WireError::BadOption)` once for a zero length or
/// an option overrunning the message, then stops.
#[derive(Clone, Debug)]
pub struct NdpOptions<'a> {
    data: &'a [u8],
    done: bool,
}

impl<'a> NdpOptions<'a> {
    /// Iterates over raw option bytes.
    pub fn new(data: &'a [u8]) -> Self {
        NdpOptions { data, done: false }
    }
}

impl<'a> Iterator for NdpOptions<'a> {
    type Item = Result<NdpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.data.is_empty() {
            return None;
        }
        let d = self.data;
        let len = d.get(1).map_or(0, |l| *l as usize * 8);
        if len == 0 || len > d.len() {
            self.done = true;
            return Some(Err(WireError::BadOption));
        }
        self.data = &d[len..];
        Some(Ok(NdpOption {
            kind: d[0],
            data: &d[2..len],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbour_solicitation() {
        // NS for 2001:db8::2 with a source link-layer address option.
        let mut b = vec![135, 0, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&"2001:db8::2".parse::<Ipv6Addr>().unwrap().octets());
        b.extend_from_slice(&[1, 1, 0x00, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e]);
        let src: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let dst: Ipv6Addr = "ff02::1:ff00:2".parse().unwrap();
        let mut p = Icmpv6Packet::new_checked(&mut b[..]).unwrap();
        p.fill_checksum(&src, &dst);
        assert!(p.verify_checksum(&src, &dst));
        assert!(!p.verify_checksum(&src, &Ipv6Addr::LOCALHOST));
        assert_eq!(p.target(), Some("2001:db8::2".parse().unwrap()));
        let opts: Vec<_> = p.ndp_options().collect::<Result<_>>().unwrap();
        assert_eq!(opts.len(), 1);
        assert_eq!(
            opts[0].link_layer_addr(),
            Some(EtherAddr([0, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e]))
        );
        assert_eq!(
            Icmpv6Packet::new_checked(&b[..23]).unwrap_err(),
            WireError::Truncated
        );
        // A zero-length option is an error, not a loop.
        let mut z = b.clone();
        z[25] = 0;
        let p = Icmpv6Packet::new_checked(&z[..]).unwrap();
        let v: Vec<_> = p.ndp_options().collect();
        assert_eq!(v, [Err(WireError::BadOption)]);
    }

    #[test]
    fn echo_and_errors() {
        let mut b = [128u8, 0, 0, 0, 0x12, 0x34, 0, 7, b'x'];
        let mut p = Icmpv6Packet::new_checked(&mut b[..]).unwrap();
        assert_eq!((p.ident(), p.seq()), (0x1234, 7));
        assert_eq!(p.target(), None);
        assert_eq!(p.payload(), b"x");
        assert_eq!(p.ndp_options().count(), 0);
        p.set_msg_type(TYPE_PACKET_TOO_BIG);
        p.set_rest_of_header(1280);
        assert_eq!(p.mtu(), 1280);
        p.set_msg_type(TYPE_NEIGHBOR_ADVERT);
        p.set_rest_of_header(NA_SOLICITED | NA_OVERRIDE | 5);
        assert_eq!(p.na_flags(), NA_SOLICITED | NA_OVERRIDE);
        // Too short for an NA now that the type says so.
        assert_eq!(
            Icmpv6Packet::new_checked(&b[..]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn addresses() {
        let a: Ipv6Addr = "2001:db8::12:3456:789a".parse().unwrap();
        let s = solicited_node(&a);
        assert_eq!(s, "ff02::1:ff56:789a".parse::<Ipv6Addr>().unwrap());
        assert!(is_solicited_node(&s));
        assert!(!is_solicited_node(&ALL_NODES));
        assert_eq!(
            multicast_ether(&s),
            EtherAddr([0x33, 0x33, 0xff, 0x56, 0x78, 0x9a])
        );
    }

    #[test]
    fn neighbour_repr_round_trip() {
        let na = NeighborRepr {
            msg_type: TYPE_NEIGHBOR_ADVERT,
            flags: NA_ROUTER | NA_SOLICITED | 0x1234,
            target: "fe80::1".parse().unwrap(),
            lladdr: Some(EtherAddr([2, 0, 0, 0, 0, 1])),
        };
        let mut b = vec![0xaau8; 40 + na.buffer_len()];
        assert_eq!(na.buffer_len(), 32);
        na.emit(&mut b[40..]).unwrap();
        let src: Ipv6Addr = "fe80::1".parse().unwrap();
        emit_ipv6_icmp(&mut b, &src, &ALL_NODES, 255).unwrap();
        let ip = crate::Ipv6Packet::new_checked(&b[..]).unwrap();
        assert_eq!(
            (ip.version(), ip.payload_len(), ip.hop_limit()),
            (6, 32, 255)
        );
        assert_eq!((ip.next_header(), ip.dst()), (58, ALL_NODES));
        let m = Icmpv6Packet::new_checked(ip.payload()).unwrap();
        assert!(m.verify_checksum(&src, &ALL_NODES));
        let back = NeighborRepr::parse(&m).unwrap();
        assert_eq!(back.flags, NA_ROUTER | NA_SOLICITED);
        assert_eq!((back.target, back.lladdr), (na.target, na.lladdr));
        // An NS reads the source link-layer option, not the target one.
        let mut ns = b[40..].to_vec();
        ns[0] = TYPE_NEIGHBOR_SOLICIT;
        let p = Icmpv6Packet::new_checked(&ns[..]).unwrap();
        assert_eq!(NeighborRepr::parse(&p).unwrap().lladdr, None);
        ns[24] = NDP_OPT_SOURCE_LLADDR;
        ns[25] = 0;
        let p = Icmpv6Packet::new_checked(&ns[..]).unwrap();
        assert_eq!(NeighborRepr::parse(&p), Err(WireError::BadOption));
        assert_eq!(
            NeighborRepr::parse(&Icmpv6Packet::new_unchecked(&b[40..60])),
            Err(WireError::Truncated)
        );
        assert_eq!(
            emit_ipv6_icmp(&mut [0u8; 47], &src, &src, 1),
            Err(WireError::Truncated)
        );
        assert_eq!(na.emit(&mut [0u8; 31]), Err(WireError::Truncated));
    }
}
