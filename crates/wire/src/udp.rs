//! UDP (RFC 768).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::checksum;
use crate::error::{be16, put16, Result, WireError};

/// Length of the UDP header.
pub const HEADER_LEN: usize = 8;

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const LENGTH: usize = 4;
    pub const CHECKSUM: usize = 6;
    pub const PAYLOAD: usize = 8;
}

/// A zero-copy view of a UDP datagram.
///
/// After [`UdpPacket::new_checked`], `8 ≤ len() ≤ buffer length`; bytes past `len()` are
/// ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    /// Wraps a buffer, checking the header fits and 8 ≤ length field ≤ buffer length.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Performs the checks of [`UdpPacket::new_checked`].
    pub fn check_len(&self) -> Result<()> {
        let n = self.buffer.as_ref().len();
        if n < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let l = self.len() as usize;
        if l < HEADER_LEN {
            return Err(WireError::BadTotalLength);
        }
        if l > n {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Source port.
    pub fn src_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SRC_PORT)
    }

    /// Destination port.
    pub fn dst_port(&self) -> u16 {
        be16(self.buffer.as_ref(), field::DST_PORT)
    }

    /// Length field (header plus payload).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::LENGTH)
    }

    /// Checksum field (0 = none, IPv4 only).
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    fn datagram(&self) -> &[u8] {
        let b = self.buffer.as_ref();
        let end = (self.len() as usize).clamp(HEADER_LEN.min(b.len()), b.len());
        &b[..end]
    }

    /// Payload: from byte 8 to the length field.
    pub fn payload(&self) -> &[u8] {
        let d = self.datagram();
        &d[field::PAYLOAD.min(d.len())..]
    }

    /// True if the checksum verifies over the IPv4 pseudo-header; a zero checksum (none
    /// computed) is accepted.
    pub fn verify_checksum_v4(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        if self.checksum() == 0 {
            return true;
        }
        let d = self.datagram();
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::PROTO_UDP, d.len() as u16)
            + checksum::sum16(d);
        checksum::fold(s) == 0xffff
    }

    /// True if the checksum verifies over the IPv6 pseudo-header (zero is invalid in IPv6).
    pub fn verify_checksum_v6(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        let d = self.datagram();
        let s = checksum::pseudo_header_v6(src, dst, crate::ipv4::PROTO_UDP, d.len() as u32)
            + checksum::sum16(d);
        self.checksum() != 0 && checksum::fold(s) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> UdpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT, v);
    }

    /// Sets the length field.
    pub fn set_len(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::LENGTH, v);
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    fn fill_with(&mut self, pseudo: u32) {
        self.set_checksum(0);
        let c = checksum::finish(pseudo + checksum::sum16(self.datagram()));
        // A computed zero is sent as all ones (RFC 768).
        self.set_checksum(if c == 0 { 0xffff } else { c });
    }

    /// Computes and stores the checksum over the IPv4 pseudo-header.
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        let l = self.datagram().len() as u16;
        self.fill_with(checksum::pseudo_header_v4(
            src,
            dst,
            crate::ipv4::PROTO_UDP,
            l,
        ));
    }

    /// Computes and stores the checksum over the IPv6 pseudo-header.
    pub fn fill_checksum_v6(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        let l = self.datagram().len() as u32;
        self.fill_with(checksum::pseudo_header_v6(
            src,
            dst,
            crate::ipv4::PROTO_UDP,
            l,
        ));
    }

    /// Mutable payload (byte 8 to the length field).
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.buffer.as_ref().len();
        let end = (self.len() as usize).clamp(HEADER_LEN.min(n), n);
        let start = field::PAYLOAD.min(end);
        &mut self.buffer.as_mut()[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 10.0.0.1:1234 -> 10.0.0.2:5678 "hi", checksum verified with scapy-style arithmetic.
    const DGRAM: [u8; 10] = [0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0x00, 0x00, b'h', b'i'];

    #[test]
    fn parse_and_checksum() {
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 0, 2);
        let mut b = DGRAM.to_vec();
        b.push(0); // padding beyond the length field is ignored
        let mut u = UdpPacket::new_checked(&mut b[..]).unwrap();
        assert_eq!((u.src_port(), u.dst_port(), u.len()), (1234, 5678, 10));
        assert_eq!(u.payload(), b"hi");
        assert!(u.verify_checksum_v4(src, dst)); // zero = not computed
        u.fill_checksum_v4(src, dst);
        // Sum: 0a00+0001+0a00+0002+0011+000a + 04d2+162e+000a+6869 = 0x9791 -> ~ = 0x686e
        assert_eq!(u.checksum(), 0x686e);
        assert!(u.verify_checksum_v4(src, dst));
        assert!(!u.verify_checksum_v4(src, Ipv4Addr::new(10, 0, 0, 3)));
        let a: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let c: Ipv6Addr = "2001:db8::2".parse().unwrap();
        assert!(!u.verify_checksum_v6(&a, &c));
        u.fill_checksum_v6(&a, &c);
        assert!(u.verify_checksum_v6(&a, &c));
        u.payload_mut()[0] = b'H';
        assert_eq!(b[8], b'H');
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            UdpPacket::new_checked(&DGRAM[..7]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            UdpPacket::new_checked(&DGRAM[..9]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = DGRAM;
        b[5] = 7;
        assert_eq!(
            UdpPacket::new_checked(&b[..]).unwrap_err(),
            WireError::BadTotalLength
        );
    }
}
