//! IPv4 headers (RFC 791) and their options.

use std::net::Ipv4Addr;

use crate::checksum;
use crate::error::{be16, put16, Result, WireError};

/// Protocol number of ICMP.
pub const PROTO_ICMP: u8 = 1;
/// Protocol number of IGMP.
pub const PROTO_IGMP: u8 = 2;
/// Protocol number of IP-in-IP.
pub const PROTO_IPIP: u8 = 4;
/// Protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// Protocol number of UDP.
pub const PROTO_UDP: u8 = 17;
/// Protocol number of IPv6 encapsulated in IPv4.
pub const PROTO_IPV6: u8 = 41;
/// Protocol number of GRE.
pub const PROTO_GRE: u8 = 47;
/// Protocol number of IPsec ESP.
pub const PROTO_ESP: u8 = 50;
/// Protocol number of IPsec AH.
pub const PROTO_AH: u8 = 51;
/// Protocol number of ICMPv6.
pub const PROTO_ICMPV6: u8 = 58;
/// Protocol number of SCTP.
pub const PROTO_SCTP: u8 = 132;

/// ECN codepoint: not ECN-capable transport (RFC 3168; ECT(1) is 1, ECT(0) is 2).
pub const ECN_NOT_ECT: u8 = 0;
/// ECN codepoint: congestion experienced.
pub const ECN_CE: u8 = 3;

/// Minimum (option-less) header length.
pub const HEADER_LEN: usize = 20;
/// Maximum header length (IHL 15).
pub const MAX_HEADER_LEN: usize = 60;

/// Option type: end of option list.
pub const OPT_EOL: u8 = 0;
/// Option type: no operation.
pub const OPT_NOP: u8 = 1;
/// Option type: record route.
pub const OPT_RR: u8 = 7;
/// Option type: timestamp.
pub const OPT_TS: u8 = 68;
/// Option type: security.
pub const OPT_SECURITY: u8 = 130;
/// Option type: loose source and record route.
pub const OPT_LSRR: u8 = 131;
/// Option type: stream identifier.
pub const OPT_SATID: u8 = 136;
/// Option type: strict source and record route.
pub const OPT_SSRR: u8 = 137;
/// Option type: router alert (RFC 2113).
pub const OPT_RA: u8 = 148;

/// Timestamp option flag: timestamps only.
pub const TS_ONLY: u8 = 0;
/// Timestamp option flag: address and timestamp pairs.
pub const TS_ADDR: u8 = 1;
/// Timestamp option flag: prespecified addresses.
pub const TS_PRESPEC: u8 = 3;

mod field {
    use std::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: usize = 2;
    pub const IDENT: usize = 4;
    pub const FLG_OFF: usize = 6;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: usize = 10;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
    pub const OPTIONS: usize = 20;
}

const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const OFFSET_MASK: u16 = 0x1fff;

/// A zero-copy view of an IPv4 packet.
///
/// After [`Ipv4Packet::new_checked`] (or one of its variants) no accessor panics: the header
/// fits in the buffer and [`Ipv4Packet::payload`] is clamped to the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Wraps a buffer, checking: at least 20 bytes, version 4, IHL ≥ 5, header within the
    /// buffer, header length ≤ total length ≤ buffer length. Bytes past the total length
    /// (Ethernet padding) are allowed and excluded from [`Ipv4Packet::payload`].
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Like [`Ipv4Packet::new_checked`] but also requires total length == buffer length.
    pub fn new_checked_exact(buffer: T) -> Result<Self> {
        let p = Self::new_checked(buffer)?;
        if p.total_len() as usize != p.buffer.as_ref().len() {
            return Err(WireError::BadTotalLength);
        }
        Ok(p)
    }

    /// Lenient check for snapped captures: like [`Ipv4Packet::new_checked`] but a total
    /// length beyond the end of the buffer is accepted (the payload is then cut short).
    pub fn new_checked_truncated(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_header()?;
        Ok(p)
    }

    fn check_header(&self) -> Result<()> {
        let b = self.buffer.as_ref();
        if b.len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 4 {
            return Err(WireError::BadVersion);
        }
        let hl = self.header_len();
        if hl < HEADER_LEN {
            return Err(WireError::BadHeaderLength);
        }
        if hl > b.len() {
            return Err(WireError::Truncated);
        }
        if (self.total_len() as usize) < hl {
            return Err(WireError::BadTotalLength);
        }
        Ok(())
    }

    /// Performs the checks of [`Ipv4Packet::new_checked`].
    pub fn check_len(&self) -> Result<()> {
        self.check_header()?;
        if self.total_len() as usize > self.buffer.as_ref().len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// The whole underlying buffer.
    pub fn as_bytes(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    /// Version field (4).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// IHL field, in 32-bit words.
    pub fn ihl(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] & 0x0f
    }

    /// Header length in bytes (4 × IHL).
    pub fn header_len(&self) -> usize {
        self.ihl() as usize * 4
    }

    /// Type-of-service byte (DSCP and ECN).
    pub fn tos(&self) -> u8 {
        self.buffer.as_ref()[field::TOS]
    }

    /// DSCP (upper six bits of the TOS byte).
    pub fn dscp(&self) -> u8 {
        self.tos() >> 2
    }

    /// ECN (lower two bits of the TOS byte).
    pub fn ecn(&self) -> u8 {
        self.tos() & 3
    }

    /// Total length field.
    pub fn total_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Identification field.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    /// The 16-bit flags-and-fragment-offset word.
    pub fn flags_frag(&self) -> u16 {
        be16(self.buffer.as_ref(), field::FLG_OFF)
    }

    /// Don't-fragment flag.
    pub fn dont_frag(&self) -> bool {
        self.flags_frag() & FLAG_DF != 0
    }

    /// More-fragments flag.
    pub fn more_frags(&self) -> bool {
        self.flags_frag() & FLAG_MF != 0
    }

    /// Fragment offset in 8-byte units.
    pub fn frag_offset(&self) -> u16 {
        self.flags_frag() & OFFSET_MASK
    }

    /// True for any fragment (MF set or a nonzero offset).
    pub fn is_fragment(&self) -> bool {
        self.flags_frag() & (FLAG_MF | OFFSET_MASK) != 0
    }

    /// Time to live.
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Protocol of the payload (`PROTO_*`).
    pub fn protocol(&self) -> u8 {
        self.buffer.as_ref()[field::PROTOCOL]
    }

    /// Header checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Source address.
    pub fn src(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::SRC];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Destination address.
    pub fn dst(&self) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[field::DST];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    fn header_end(&self) -> usize {
        self.header_len()
            .clamp(HEADER_LEN, self.buffer.as_ref().len())
    }

    /// True if the header checksum verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum16(&self.buffer.as_ref()[..self.header_end()])) == 0xffff
    }

    /// The raw option bytes (between byte 20 and the header length).
    pub fn options(&self) -> &[u8] {
        &self.buffer.as_ref()[field::OPTIONS..self.header_end()]
    }

    /// Iterates over the header options.
    pub fn option_iter(&self) -> Ipv4Options<'_> {
        Ipv4Options::new(self.options())
    }

    /// The payload: from the header length to the total length (clamped to the buffer).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (self.total_len() as usize).min(b.len());
        let start = self.header_end().min(end);
        &b[start..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv4Packet<T> {
    /// Sets the version field.
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Sets the header length in bytes (must be a multiple of 4, at most 60).
    pub fn set_header_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | ((len / 4) as u8 & 0x0f);
    }

    /// Sets the TOS byte.
    pub fn set_tos(&mut self, v: u8) {
        self.buffer.as_mut()[field::TOS] = v;
    }

    /// Sets the DSCP, keeping the ECN bits.
    pub fn set_dscp(&mut self, v: u8) {
        let t = self.tos();
        self.set_tos((v << 2) | (t & 3));
    }

    /// Sets the ECN bits, keeping the DSCP.
    pub fn set_ecn(&mut self, v: u8) {
        let t = self.tos();
        self.set_tos((t & !3) | (v & 3));
    }

    /// Sets the total length.
    pub fn set_total_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets the identification.
    pub fn set_ident(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::IDENT, v);
    }

    /// Sets the whole flags-and-fragment-offset word.
    pub fn set_flags_frag(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::FLG_OFF, v);
    }

    /// Sets or clears the don't-fragment flag.
    pub fn set_dont_frag(&mut self, on: bool) {
        let w = self.flags_frag();
        self.set_flags_frag(if on { w | FLAG_DF } else { w & !FLAG_DF });
    }

    /// Sets or clears the more-fragments flag.
    pub fn set_more_frags(&mut self, on: bool) {
        let w = self.flags_frag();
        self.set_flags_frag(if on { w | FLAG_MF } else { w & !FLAG_MF });
    }

    /// Sets the fragment offset (8-byte units), keeping the flags.
    pub fn set_frag_offset(&mut self, off: u16) {
        let w = self.flags_frag();
        self.set_flags_frag((w & !OFFSET_MASK) | (off & OFFSET_MASK));
    }

    /// Sets the TTL (the checksum is not updated).
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }

    /// Sets the protocol.
    pub fn set_protocol(&mut self, v: u8) {
        self.buffer.as_mut()[field::PROTOCOL] = v;
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the source address (the checksum is not updated).
    pub fn set_src(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&a.octets());
    }

    /// Sets the destination address (the checksum is not updated).
    pub fn set_dst(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&a.octets());
    }

    /// Recomputes and stores the header checksum.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let end = self.header_end();
        let c = checksum::checksum(&self.buffer.as_ref()[..end]);
        self.set_checksum(c);
    }

    /// Decrements the TTL by one (saturating at 0), updating the checksum incrementally
    /// (RFC 1624). Returns the new TTL.
    #[inline]
    pub fn decrement_ttl(&mut self) -> u8 {
        let ttl = self.ttl();
        if ttl == 0 {
            return 0;
        }
        self.set_ttl(ttl - 1);
        // The 16-bit word holding the TTL dropped by 0x0100: RFC 1624's update adds its
        // ones'-complement negation, 0xFEFF, to the complemented checksum (one carry at most).
        let sum = (!self.checksum()) as u32 + 0xfeff;
        self.set_checksum(!((sum + (sum >> 16)) as u16));
        ttl - 1
    }

    /// Sets the TOS byte, updating the checksum incrementally.
    pub fn set_tos_update_checksum(&mut self, v: u8) {
        self.rewrite_word(field::VER_IHL, |p| p.set_tos(v));
    }

    /// Applies `change`, which alters nothing but the 16-bit word at `word`, and updates the
    /// checksum incrementally (RFC 1624).
    #[inline]
    fn rewrite_word(&mut self, word: usize, change: impl FnOnce(&mut Self)) {
        let old = be16(self.buffer.as_ref(), word);
        change(self);
        let new = be16(self.buffer.as_ref(), word);
        let c = checksum::update16(self.checksum(), old, new);
        self.set_checksum(c);
    }

    /// Sets the source address, updating the checksum incrementally.
    pub fn set_src_update_checksum(&mut self, a: Ipv4Addr) {
        let c = checksum::update32(self.checksum(), u32::from(self.src()), u32::from(a));
        self.set_src(a);
        self.set_checksum(c);
    }

    /// Sets the destination address, updating the checksum incrementally.
    pub fn set_dst_update_checksum(&mut self, a: Ipv4Addr) {
        let c = checksum::update32(self.checksum(), u32::from(self.dst()), u32::from(a));
        self.set_dst(a);
        self.set_checksum(c);
    }

    /// Mutable raw option bytes.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let end = self.header_end();
        &mut self.buffer.as_mut()[field::OPTIONS..end]
    }

    /// Mutable payload (header length to total length, clamped to the buffer).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = self.buffer.as_ref().len();
        let end = (self.total_len() as usize).min(len);
        let start = self.header_end().min(end);
        &mut self.buffer.as_mut()[start..end]
    }
}

/// A validated, option-less summary of an IPv4 header, for building packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Payload protocol.
    pub protocol: u8,
    /// Time to live.
    pub ttl: u8,
    /// TOS byte.
    pub tos: u8,
    /// Identification.
    pub ident: u16,
    /// Don't-fragment flag.
    pub dont_frag: bool,
    /// Payload length in bytes.
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Summarises a checked packet, rejecting a bad checksum. Options are ignored.
    pub fn parse<T: AsRef<[u8]>>(p: &Ipv4Packet<T>) -> Result<Ipv4Repr> {
        if !p.verify_checksum() {
            return Err(WireError::BadChecksum);
        }
        Ok(Ipv4Repr {
            src: p.src(),
            dst: p.dst(),
            protocol: p.protocol(),
            ttl: p.ttl(),
            tos: p.tos(),
            ident: p.ident(),
            dont_frag: p.dont_frag(),
            payload_len: p.total_len() as usize - p.header_len(),
        })
    }

    /// Length of the header this emits (20).
    pub fn header_len(&self) -> usize {
        HEADER_LEN
    }

    /// Total length of the packet this describes.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.payload_len
    }

    /// Writes a 20-byte header (with checksum) into the start of `p`'s buffer, which must
    /// hold at least 20 bytes. The payload is left untouched.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Ipv4Packet<T>) {
        p.set_version(4);
        p.set_header_len(HEADER_LEN);
        p.set_tos(self.tos);
        p.set_total_len(self.buffer_len().min(u16::MAX as usize) as u16);
        p.set_ident(self.ident);
        p.set_flags_frag(if self.dont_frag { FLAG_DF } else { 0 });
        p.set_ttl(self.ttl);
        p.set_protocol(self.protocol);
        p.set_src(self.src);
        p.set_dst(self.dst);
        p.fill_checksum();
    }
}

/// A source-route or record-route option's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteOption<'a> {
    /// The pointer byte (1-based offset within the option of the next address slot).
    pub pointer: u8,
    /// The route data (after type, length and pointer).
    pub data: &'a [u8],
}

impl<'a> RouteOption<'a> {
    /// The addresses in the route data (whole 4-byte slots only).
    pub fn addresses(&self) -> impl Iterator<Item = Ipv4Addr> + 'a {
        self.data
            .chunks_exact(4)
            .map(|c| Ipv4Addr::new(c[0], c[1], c[2], c[3]))
    }

    /// True if the pointer is past the last whole slot (route full / exhausted).
    pub fn is_full(&self) -> bool {
        self.pointer as usize > self.data.len()
    }

    /// True if the pointer is ≥ 4 and points at the start of a slot or just past the end.
    pub fn pointer_valid(&self) -> bool {
        self.pointer >= 4 && (self.pointer - 4).is_multiple_of(4)
    }
}

/// A timestamp option's body (RFC 791).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimestampOption<'a> {
    /// The pointer byte (1-based, ≥ 5).
    pub pointer: u8,
    /// The overflow count (upper four bits of the fourth byte).
    pub overflow: u8,
    /// The flags (lower four bits): `TS_ONLY`, `TS_ADDR` or `TS_PRESPEC`.
    pub flags: u8,
    /// The timestamp data (after the first four bytes).
    pub data: &'a [u8],
}

/// One parsed IPv4 option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv4OptionKind<'a> {
    /// End of option list (type 0); iteration stops after it.
    EndOfList,
    /// No operation (type 1).
    Nop,
    /// Record route (type 7).
    RecordRoute(RouteOption<'a>),
    /// Loose source and record route (type 131).
    LooseSourceRoute(RouteOption<'a>),
    /// Strict source and record route (type 137).
    StrictSourceRoute(RouteOption<'a>),
    /// Internet timestamp (type 68).
    Timestamp(TimestampOption<'a>),
    /// Router alert (type 148) with its 16-bit value.
    RouterAlert(u16),
    /// Any other option: its type and the bytes after the length byte.
    Unknown {
        /// Option type byte.
        kind: u8,
        /// Option data after type and length.
        data: &'a [u8],
    },
}

/// An IPv4 option with its position in the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Option<'a> {
    /// Offset of the option's type byte from the start of the IP header.
    pub offset: usize,
    /// Length of the option in bytes (1 for EOL and NOP).
    pub len: usize,
    /// The parsed option.
    pub kind: Ipv4OptionKind<'a>,
}

/// Iterator over IPv4 options. Yields `Err(WireError::BadOption)` once for a malformed
/// option (length < 2, too short for its type, or overrunning the header) and then stops;
/// [`Ipv4Options::offset`] then tells where (from the start of the IP header).
#[derive(Clone, Debug)]
pub struct Ipv4Options<'a> {
    data: &'a [u8],
    pos: usize,
    done: bool,
}

impl<'a> Ipv4Options<'a> {
    /// Iterates over raw option bytes (those after the fixed 20-byte header).
    pub fn new(data: &'a [u8]) -> Self {
        Ipv4Options {
            data,
            pos: 0,
            done: false,
        }
    }

    /// Offset, from the start of the IP header, of the next (or offending) option.
    pub fn offset(&self) -> usize {
        HEADER_LEN + self.pos
    }

    fn fail(&mut self) -> Option<Result<Ipv4Option<'a>>> {
        self.done = true;
        Some(Err(WireError::BadOption))
    }
}

impl<'a> Iterator for Ipv4Options<'a> {
    type Item = Result<Ipv4Option<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.data.len() {
            return None;
        }
        let rest = &self.data[self.pos..];
        let offset = HEADER_LEN + self.pos;
        let kind = rest[0];
        if kind == OPT_EOL || kind == OPT_NOP {
            if kind == OPT_EOL {
                self.done = true;
            }
            self.pos += 1;
            let k = if kind == OPT_EOL {
                Ipv4OptionKind::EndOfList
            } else {
                Ipv4OptionKind::Nop
            };
            return Some(Ok(Ipv4Option {
                offset,
                len: 1,
                kind: k,
            }));
        }
        if rest.len() < 2 {
            return self.fail();
        }
        let len = rest[1] as usize;
        if len < 2 || len > rest.len() {
            return self.fail();
        }
        let body = &rest[2..len];
        let parsed = match kind {
            OPT_RR | OPT_LSRR | OPT_SSRR => {
                if len < 3 {
                    return self.fail();
                }
                let r = RouteOption {
                    pointer: body[0],
                    data: &body[1..],
                };
                match kind {
                    OPT_RR => Ipv4OptionKind::RecordRoute(r),
                    OPT_LSRR => Ipv4OptionKind::LooseSourceRoute(r),
                    _ => Ipv4OptionKind::StrictSourceRoute(r),
                }
            }
            OPT_TS => {
                if len < 4 {
                    return self.fail();
                }
                Ipv4OptionKind::Timestamp(TimestampOption {
                    pointer: body[0],
                    overflow: body[1] >> 4,
                    flags: body[1] & 0x0f,
                    data: &body[2..],
                })
            }
            OPT_RA => {
                if len != 4 {
                    return self.fail();
                }
                Ipv4OptionKind::RouterAlert(be16(body, 0))
            }
            _ => Ipv4OptionKind::Unknown { kind, data: body },
        };
        self.pos += len;
        Some(Ok(Ipv4Option {
            offset,
            len,
            kind: parsed,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_decrement_matches_the_general_incremental_update() {
        let mut b = [0u8; 20];
        b[0] = 0x45;
        for ttl in [1u8, 2, 64, 128, 255] {
            for proto in [0u8, 6, 17, 255] {
                for hc in 0..=0xffffu16 {
                    b[8] = ttl;
                    b[9] = proto;
                    b[10..12].copy_from_slice(&hc.to_be_bytes());
                    let old = u16::from_be_bytes([ttl, proto]);
                    let new = u16::from_be_bytes([ttl - 1, proto]);
                    let want = checksum::update16(hc, old, new);
                    let mut p = Ipv4Packet::new_unchecked(&mut b[..]);
                    assert_eq!(p.decrement_ttl(), ttl - 1);
                    assert_eq!(
                        p.checksum(),
                        want,
                        "ttl {ttl} proto {proto} checksum {hc:#x}"
                    );
                }
            }
        }
    }

    // 192.168.0.1 -> 192.168.0.199, UDP, total length 0x73 (header + 95 bytes).
    const HDR: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    fn packet() -> Vec<u8> {
        let mut v = HDR.to_vec();
        v.resize(0x73, 0xab);
        v
    }

    #[test]
    fn repr_round_trip() {
        let b = packet();
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        let r = Ipv4Repr::parse(&p).unwrap();
        assert_eq!(r.payload_len, 0x73 - 20);
        assert_eq!(r.protocol, PROTO_UDP);
        let mut out = vec![0u8; r.buffer_len()];
        r.emit(&mut Ipv4Packet::new_unchecked(&mut out[..]));
        assert_eq!(&out[..20], &HDR[..]);
        let mut bad = b.clone();
        bad[11] ^= 1;
        let p = Ipv4Packet::new_checked(&bad[..]).unwrap();
        assert_eq!(Ipv4Repr::parse(&p), Err(WireError::BadChecksum));
    }

    #[test]
    fn parse_fields() {
        let b = packet();
        let p = Ipv4Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.tos(), 0);
        assert_eq!(p.total_len(), 0x73);
        assert_eq!(p.ident(), 0);
        assert!(p.dont_frag());
        assert!(!p.more_frags());
        assert_eq!(p.frag_offset(), 0);
        assert!(!p.is_fragment());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), PROTO_UDP);
        assert_eq!(p.checksum(), 0xb861);
        assert_eq!(p.src(), Ipv4Addr::new(192, 168, 0, 1));
        assert_eq!(p.dst(), Ipv4Addr::new(192, 168, 0, 199));
        assert!(p.verify_checksum());
        assert_eq!(p.payload().len(), 0x73 - 20);
        assert_eq!(p.option_iter().count(), 0);
    }

    #[test]
    fn length_checks() {
        let b = packet();
        assert_eq!(
            Ipv4Packet::new_checked(&b[..19]).unwrap_err(),
            WireError::Truncated
        );
        // Truncated payload: strict fails, lenient accepts and clamps.
        assert_eq!(
            Ipv4Packet::new_checked(&b[..50]).unwrap_err(),
            WireError::Truncated
        );
        let p = Ipv4Packet::new_checked_truncated(&b[..50]).unwrap();
        assert_eq!(p.payload().len(), 30);
        // Ethernet padding is fine, but not for the exact variant.
        let mut padded = b.clone();
        padded.extend_from_slice(&[0; 6]);
        let p = Ipv4Packet::new_checked(&padded[..]).unwrap();
        assert_eq!(p.payload().len(), 0x73 - 20);
        assert_eq!(
            Ipv4Packet::new_checked_exact(&padded[..]).unwrap_err(),
            WireError::BadTotalLength
        );
        assert!(Ipv4Packet::new_checked_exact(&b[..]).is_ok());
        let mut bad = b.clone();
        bad[0] = 0x65;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::BadVersion
        );
        bad[0] = 0x44;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::BadHeaderLength
        );
        bad[0] = 0x4f;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..40]).unwrap_err(),
            WireError::Truncated
        );
        let mut bad = b.clone();
        bad[2] = 0;
        bad[3] = 19;
        assert_eq!(
            Ipv4Packet::new_checked(&bad[..]).unwrap_err(),
            WireError::BadTotalLength
        );
    }

    #[test]
    fn setters_and_checksum() {
        let mut b = packet();
        let mut p = Ipv4Packet::new_checked(&mut b[..]).unwrap();
        p.set_dscp(46);
        p.set_ecn(1);
        assert_eq!(p.tos(), 0xb9);
        p.set_ident(0x1234);
        p.set_dont_frag(false);
        p.set_more_frags(true);
        p.set_frag_offset(100);
        assert!(p.more_frags() && !p.dont_frag() && p.frag_offset() == 100);
        p.set_protocol(PROTO_TCP);
        p.fill_checksum();
        assert!(p.verify_checksum());
        assert_eq!(p.decrement_ttl(), 63);
        assert!(p.verify_checksum());
        p.set_src_update_checksum(Ipv4Addr::new(198, 18, 0, 1));
        p.set_dst_update_checksum(Ipv4Addr::new(198, 19, 255, 254));
        assert!(p.verify_checksum());
        p.set_tos_update_checksum(0xbb);
        assert_eq!((p.dscp(), p.ecn()), (46, ECN_CE));
        assert!(p.verify_checksum());
        let c = p.checksum();
        p.fill_checksum();
        assert_eq!(c, p.checksum());
        p.payload_mut()[0] = 7;
        assert_eq!(b[20], 7);
    }

    #[test]
    fn options() {
        // IHL 15: NOP, RR (len 11, ptr 8, one address filled), TS (len 12, flags 1,
        // overflow 2), RA, EOL, padding.
        let mut h = vec![
            0x4f, 0, 0, 60, 0, 0, 0, 0, 64, 1, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2,
        ];
        h.extend_from_slice(&[OPT_NOP]);
        h.extend_from_slice(&[OPT_RR, 11, 8, 1, 2, 3, 4, 0, 0, 0, 0]);
        h.extend_from_slice(&[OPT_TS, 12, 5, 0x21, 0, 0, 0, 0, 0, 0, 0, 0]);
        h.extend_from_slice(&[OPT_RA, 4, 0, 0]);
        h.extend_from_slice(&[OPT_EOL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(h.len(), 60);
        let p = Ipv4Packet::new_checked(&h[..]).unwrap();
        let opts: Vec<_> = p.option_iter().collect::<Result<_>>().unwrap();
        assert_eq!(opts.len(), 5);
        assert_eq!(opts[0].kind, Ipv4OptionKind::Nop);
        match opts[1].kind {
            Ipv4OptionKind::RecordRoute(r) => {
                assert_eq!(opts[1].offset, 21);
                assert_eq!(r.pointer, 8);
                assert!(r.pointer_valid());
                assert!(!r.is_full());
                let a: Vec<_> = r.addresses().collect();
                assert_eq!(a, [Ipv4Addr::new(1, 2, 3, 4), Ipv4Addr::new(0, 0, 0, 0)]);
            }
            k => panic!("{k:?}"),
        }
        match opts[2].kind {
            Ipv4OptionKind::Timestamp(t) => {
                assert_eq!((t.pointer, t.overflow, t.flags), (5, 2, TS_ADDR));
                assert_eq!(t.data.len(), 8);
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(opts[3].kind, Ipv4OptionKind::RouterAlert(0));
        assert_eq!(opts[4].kind, Ipv4OptionKind::EndOfList);
    }

    #[test]
    fn malformed_options() {
        for (opts, bad_at) in [
            (&[OPT_NOP, OPT_RR, 0, 0][..], 21),        // zero length
            (&[OPT_RR, 9, 4, 0][..], 20),              // overruns the header
            (&[OPT_NOP, OPT_NOP, OPT_NOP, 7][..], 23), // no length byte
            (&[OPT_TS, 3, 0, 0][..], 20),              // too short for a timestamp
            (&[OPT_RA, 3, 0, 0][..], 20),              // wrong router-alert length
            (&[OPT_LSRR, 2, 0, 0][..], 20),            // no pointer byte
        ] {
            let mut it = Ipv4Options::new(opts);
            let mut saw_err = false;
            for o in it.by_ref() {
                if o.is_err() {
                    saw_err = true;
                    break;
                }
            }
            assert!(saw_err, "{opts:?}");
            assert_eq!(it.offset(), bad_at, "{opts:?}");
            assert!(it.next().is_none());
        }
        // Unknown options are skipped by length.
        let v: Vec<_> = Ipv4Options::new(&[OPT_SECURITY, 4, 1, 2])
            .collect::<Result<_>>()
            .unwrap();
        assert_eq!(
            v[0].kind,
            Ipv4OptionKind::Unknown {
                kind: OPT_SECURITY,
                data: &[1, 2]
            }
        );
    }
}
