//! IPv6 fixed headers (RFC 8200).

use std::net::Ipv6Addr;

use crate::error::{be16, be32, put16, put32, Result, WireError};

/// Length of the fixed IPv6 header.
pub const HEADER_LEN: usize = 40;

/// Next header: hop-by-hop options.
pub const NH_HOPOPTS: u8 = 0;
/// Next header: TCP.
pub const NH_TCP: u8 = 6;
/// Next header: UDP.
pub const NH_UDP: u8 = 17;
/// Next header: routing header.
pub const NH_ROUTING: u8 = 43;
/// Next header: fragment header.
pub const NH_FRAGMENT: u8 = 44;
/// Next header: ESP.
pub const NH_ESP: u8 = 50;
/// Next header: AH.
pub const NH_AH: u8 = 51;
/// Next header: ICMPv6.
pub const NH_ICMPV6: u8 = 58;
/// Next header: no next header.
pub const NH_NONE: u8 = 59;
/// Next header: destination options.
pub const NH_DSTOPTS: u8 = 60;

mod field {
    use std::ops::Range;
    pub const VER_TC_FL: usize = 0;
    pub const PAYLOAD_LEN: usize = 4;
    pub const NEXT_HEADER: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC: Range<usize> = 8..24;
    pub const DST: Range<usize> = 24..40;
    pub const PAYLOAD: usize = 40;
}

/// A zero-copy view of an IPv6 packet.
///
/// After [`Ipv6Packet::new_checked`] the header and `payload_len` bytes fit in the buffer;
/// bytes after them (padding) are excluded from [`Ipv6Packet::payload`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv6Packet<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv6Packet { buffer }
    }

    /// Wraps a buffer, checking: ≥ 40 bytes, version 6, 40 + payload length ≤ buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Lenient variant for snapped captures: a payload length past the buffer is accepted
    /// (the payload is then cut short).
    pub fn new_checked_truncated(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_header()?;
        Ok(p)
    }

    fn check_header(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if self.version() != 6 {
            return Err(WireError::BadVersion);
        }
        Ok(())
    }

    /// Performs the checks of [`Ipv6Packet::new_checked`].
    pub fn check_len(&self) -> Result<()> {
        self.check_header()?;
        if HEADER_LEN + self.payload_len() as usize > self.buffer.as_ref().len() {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Version field (6).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_TC_FL] >> 4
    }

    /// Traffic class.
    pub fn traffic_class(&self) -> u8 {
        (be16(self.buffer.as_ref(), field::VER_TC_FL) >> 4) as u8
    }

    /// Flow label (20 bits).
    pub fn flow_label(&self) -> u32 {
        be32(self.buffer.as_ref(), field::VER_TC_FL) & 0x000f_ffff
    }

    /// Payload length field.
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLOAD_LEN)
    }

    /// Next header.
    pub fn next_header(&self) -> u8 {
        self.buffer.as_ref()[field::NEXT_HEADER]
    }

    /// Hop limit.
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// Source address.
    pub fn src(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC]);
        Ipv6Addr::from(a)
    }

    /// Destination address.
    pub fn dst(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST]);
        Ipv6Addr::from(a)
    }

    /// The payload (40 to 40 + payload length, clamped to the buffer).
    pub fn payload(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (HEADER_LEN + self.payload_len() as usize).min(b.len());
        &b[field::PAYLOAD.min(end)..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Ipv6Packet<T> {
    /// Sets the version.
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_TC_FL];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Sets the traffic class.
    pub fn set_traffic_class(&mut self, tc: u8) {
        let w = be16(self.buffer.as_ref(), field::VER_TC_FL);
        put16(
            self.buffer.as_mut(),
            field::VER_TC_FL,
            (w & 0xf00f) | ((tc as u16) << 4),
        );
    }

    /// Sets the flow label (low 20 bits).
    pub fn set_flow_label(&mut self, fl: u32) {
        let w = be32(self.buffer.as_ref(), field::VER_TC_FL);
        put32(
            self.buffer.as_mut(),
            field::VER_TC_FL,
            (w & 0xfff0_0000) | (fl & 0x000f_ffff),
        );
    }

    /// Sets the payload length.
    pub fn set_payload_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::PAYLOAD_LEN, v);
    }

    /// Sets the next header.
    pub fn set_next_header(&mut self, v: u8) {
        self.buffer.as_mut()[field::NEXT_HEADER] = v;
    }

    /// Sets the hop limit.
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = v;
    }

    /// Sets the source address.
    pub fn set_src(&mut self, a: &Ipv6Addr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&a.octets());
    }

    /// Sets the destination address.
    pub fn set_dst(&mut self, a: &Ipv6Addr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&a.octets());
    }

    /// Mutable payload.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.buffer.as_ref().len();
        let end = (HEADER_LEN + self.payload_len() as usize).min(n);
        &mut self.buffer.as_mut()[field::PAYLOAD.min(end)..end]
    }
}

/// Length of the fragment header.
pub const FRAG_HEADER_LEN: usize = 8;

/// A fragment header (RFC 8200 §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv6FragRepr {
    /// Next header of the fragmentable part.
    pub next_header: u8,
    /// Fragment offset, in 8-octet units.
    pub offset: u16,
    /// More Fragments flag.
    pub more: bool,
    /// Identification.
    pub ident: u32,
}

impl Ipv6FragRepr {
    /// Parses the fragment header at the start of `b`.
    pub fn parse(b: &[u8]) -> Result<Self> {
        if b.len() < FRAG_HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let w = be16(b, 2);
        Ok(Ipv6FragRepr {
            next_header: b[0],
            offset: w >> 3,
            more: w & 1 != 0,
            ident: be32(b, 4),
        })
    }

    /// Writes the header into the first [`FRAG_HEADER_LEN`] bytes of `b` (reserved fields
    /// zero; `offset` keeps its low 13 bits). Panics if `b` is shorter.
    pub fn emit(&self, b: &mut [u8]) {
        b[0] = self.next_header;
        b[1] = 0;
        put16(b, 2, ((self.offset & 0x1fff) << 3) | self.more as u16);
        put32(b, 4, self.ident);
    }
}

/// Where an IPv6 packet divides for fragmentation (RFC 8200 §4.5), from [`frag_split`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragSplit {
    /// Length of the unfragmentable part: the IPv6 header and the extension headers that
    /// nodes on the path process (up to the last Routing header, else the Hop-by-Hop Options
    /// header), or everything before the fragment header of a packet that has one.
    pub unfrag_len: usize,
    /// Offset of the Next Header byte that names the first header after the unfragmentable
    /// part (6 for the IPv6 header's own).
    pub next_header_at: usize,
    /// The packet's fragment header, if it already is a fragment; its fragmentable part then
    /// starts after that header, at `unfrag_len + FRAG_HEADER_LEN`.
    pub fragment: Option<Ipv6FragRepr>,
}

/// Walks the extension headers of `packet` (an IPv6 header and its payload, nothing after)
/// to find its unfragmentable part. Errors if the packet is shorter than an IPv6 header or an
/// extension header runs past its end.
pub fn frag_split(packet: &[u8]) -> Result<FragSplit> {
    if packet.len() < HEADER_LEN {
        return Err(WireError::Truncated);
    }
    let mut split = FragSplit {
        unfrag_len: HEADER_LEN,
        next_header_at: field::NEXT_HEADER,
        fragment: None,
    };
    let (mut pos, mut nh_at) = (HEADER_LEN, field::NEXT_HEADER);
    loop {
        match packet[nh_at] {
            nh @ (NH_HOPOPTS | NH_ROUTING | NH_DSTOPTS) => {
                let len = match packet.get(pos + 1) {
                    Some(&l) => (l as usize + 1) * 8,
                    None => return Err(WireError::Truncated),
                };
                if pos + len > packet.len() {
                    return Err(WireError::Truncated);
                }
                if nh != NH_DSTOPTS {
                    split.unfrag_len = pos + len;
                    split.next_header_at = pos;
                }
                nh_at = pos;
                pos += len;
            }
            NH_FRAGMENT => {
                let f = Ipv6FragRepr::parse(&packet[pos..])?;
                split.unfrag_len = pos;
                split.next_header_at = nh_at;
                split.fragment = Some(f);
                return Ok(split);
            }
            _ => return Ok(split),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2001:db8::1 -> 2001:db8::2, tc 0xb8, flow 0x12345, ICMPv6, hop limit 64, 4 bytes.
    const PKT: [u8; 44] = [
        0x6b, 0x81, 0x23, 0x45, 0x00, 0x04, 58, 64, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, //
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, //
        1, 2, 3, 4,
    ];

    #[test]
    fn parse_and_set() {
        let p = Ipv6Packet::new_checked(&PKT[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0xb8);
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 4);
        assert_eq!(p.next_header(), NH_ICMPV6);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src(), "2001:db8::1".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.dst(), "2001:db8::2".parse::<Ipv6Addr>().unwrap());
        assert_eq!(p.payload(), &[1, 2, 3, 4]);

        let mut b = PKT;
        let mut q = Ipv6Packet::new_checked(&mut b[..]).unwrap();
        q.set_traffic_class(0x01);
        q.set_flow_label(0xfffff);
        assert_eq!(
            (q.version(), q.traffic_class(), q.flow_label()),
            (6, 1, 0xfffff)
        );
        q.set_hop_limit(1);
        q.set_next_header(NH_UDP);
        q.set_src(&Ipv6Addr::LOCALHOST);
        assert_eq!(q.src(), Ipv6Addr::LOCALHOST);
        q.payload_mut()[0] = 9;
        assert_eq!(b[40], 9);
    }

    #[test]
    fn checks() {
        assert_eq!(
            Ipv6Packet::new_checked(&PKT[..39]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Ipv6Packet::new_checked(&PKT[..43]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Ipv6Packet::new_checked_truncated(&PKT[..43])
                .unwrap()
                .payload(),
            &[1, 2, 3]
        );
        let mut b = PKT;
        b[0] = 0x4b;
        assert_eq!(
            Ipv6Packet::new_checked(&b[..]).unwrap_err(),
            WireError::BadVersion
        );
    }

    #[test]
    fn fragment_header_round_trip() {
        let f = Ipv6FragRepr {
            next_header: NH_UDP,
            offset: 0x1fff,
            more: true,
            ident: 0xdead_beef,
        };
        let mut b = [0xffu8; 8];
        f.emit(&mut b);
        assert_eq!(b, [17, 0, 0xff, 0xf9, 0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Ipv6FragRepr::parse(&b), Ok(f));
        assert_eq!(Ipv6FragRepr::parse(&b[..7]), Err(WireError::Truncated));
    }

    /// An IPv6 header whose next header is `nh`, followed by `rest`.
    fn with_headers(nh: u8, rest: &[u8]) -> Vec<u8> {
        let mut v = PKT[..40].to_vec();
        v[6] = nh;
        v[4..6].copy_from_slice(&(rest.len() as u16).to_be_bytes());
        v.extend_from_slice(rest);
        v
    }

    #[test]
    fn unfragmentable_part() {
        // No extension headers: the IPv6 header alone.
        let p = with_headers(NH_UDP, &[0; 8]);
        let s = frag_split(&p).unwrap();
        assert_eq!((s.unfrag_len, s.next_header_at, s.fragment), (40, 6, None));
        // Hop-by-hop (8), destination options (16), routing (8), destination options (8), UDP.
        let mut rest = vec![NH_DSTOPTS, 0, 0, 0, 0, 0, 0, 0];
        rest.extend_from_slice(&[NH_ROUTING, 1]);
        rest.extend_from_slice(&[0; 14]);
        rest.extend_from_slice(&[NH_DSTOPTS, 0, 0, 0, 0, 0, 0, 0]);
        rest.extend_from_slice(&[NH_UDP, 0, 0, 0, 0, 0, 0, 0]);
        rest.extend_from_slice(&[0; 8]);
        let p = with_headers(NH_HOPOPTS, &rest);
        let s = frag_split(&p).unwrap();
        assert_eq!((s.unfrag_len, s.next_header_at), (72, 64));
        // Hop-by-hop then a fragment header: the packet already is a fragment.
        let mut rest = vec![NH_FRAGMENT, 0, 0, 0, 0, 0, 0, 0];
        rest.extend_from_slice(&[NH_UDP, 0, 0, 0x11, 0, 0, 0, 9]);
        let p = with_headers(NH_HOPOPTS, &rest);
        let s = frag_split(&p).unwrap();
        assert_eq!((s.unfrag_len, s.next_header_at), (48, 40));
        assert_eq!(
            s.fragment,
            Some(Ipv6FragRepr {
                next_header: NH_UDP,
                offset: 2,
                more: true,
                ident: 9
            })
        );
        // Extension headers running past the end.
        assert_eq!(
            frag_split(&with_headers(NH_HOPOPTS, &[NH_UDP])),
            Err(WireError::Truncated)
        );
        assert_eq!(
            frag_split(&with_headers(NH_HOPOPTS, &[NH_UDP, 1, 0, 0, 0, 0, 0, 0])),
            Err(WireError::Truncated)
        );
        assert_eq!(
            frag_split(&with_headers(NH_FRAGMENT, &[NH_UDP, 0, 0])),
            Err(WireError::Truncated)
        );
        assert_eq!(frag_split(&PKT[..39]), Err(WireError::Truncated));
    }
}
