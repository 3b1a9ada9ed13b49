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
}
