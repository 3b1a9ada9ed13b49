//! ARP for Ethernet and IPv4 (RFC 826).

use std::net::Ipv4Addr;

use crate::addr::EtherAddr;
use crate::error::{be16, put16, Result, WireError};

/// ARP request opcode.
pub const OP_REQUEST: u16 = 1;
/// ARP reply opcode.
pub const OP_REPLY: u16 = 2;
/// RARP request opcode.
pub const OP_RREQUEST: u16 = 3;
/// RARP reply opcode.
pub const OP_RREPLY: u16 = 4;
/// Hardware type of Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;
/// Length of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = 28;

mod field {
    use std::ops::Range;
    pub const HTYPE: usize = 0;
    pub const PTYPE: usize = 2;
    pub const HLEN: usize = 4;
    pub const PLEN: usize = 5;
    pub const OPER: usize = 6;
    pub const SHA: Range<usize> = 8..14;
    pub const SPA: Range<usize> = 14..18;
    pub const THA: Range<usize> = 18..24;
    pub const TPA: Range<usize> = 24..28;
}

/// A zero-copy view of an Ethernet/IPv4 ARP packet. The address accessors assume 6-byte
/// hardware and 4-byte protocol addresses; check [`ArpPacket::is_ether_ipv4`] first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> ArpPacket<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Self {
        ArpPacket { buffer }
    }

    /// Wraps a buffer, checking it holds the 28 bytes of an Ethernet/IPv4 ARP packet.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds 28 bytes.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < PACKET_LEN {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Hardware type (1 = Ethernet).
    pub fn htype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::HTYPE)
    }

    /// Protocol type (0x0800 = IPv4).
    pub fn ptype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PTYPE)
    }

    /// Hardware address length.
    pub fn hlen(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    /// Protocol address length.
    pub fn plen(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    /// Operation code (`OP_REQUEST`, `OP_REPLY`, ...).
    pub fn op(&self) -> u16 {
        be16(self.buffer.as_ref(), field::OPER)
    }

    /// True if this is Ethernet (6-byte) over IPv4 (4-byte) ARP.
    pub fn is_ether_ipv4(&self) -> bool {
        self.htype() == HTYPE_ETHERNET
            && self.ptype() == crate::ethernet::ETHERTYPE_IPV4
            && self.hlen() == 6
            && self.plen() == 4
    }

    fn ether(&self, r: std::ops::Range<usize>) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[r]);
        EtherAddr(a)
    }

    fn ip(&self, r: std::ops::Range<usize>) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[r];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Sender hardware address.
    pub fn sender_hw(&self) -> EtherAddr {
        self.ether(field::SHA)
    }

    /// Sender protocol address.
    pub fn sender_ip(&self) -> Ipv4Addr {
        self.ip(field::SPA)
    }

    /// Target hardware address.
    pub fn target_hw(&self) -> EtherAddr {
        self.ether(field::THA)
    }

    /// Target protocol address.
    pub fn target_ip(&self) -> Ipv4Addr {
        self.ip(field::TPA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> ArpPacket<T> {
    /// Sets the hardware type.
    pub fn set_htype(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::HTYPE, v);
    }

    /// Sets the protocol type.
    pub fn set_ptype(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::PTYPE, v);
    }

    /// Sets the hardware address length.
    pub fn set_hlen(&mut self, v: u8) {
        self.buffer.as_mut()[field::HLEN] = v;
    }

    /// Sets the protocol address length.
    pub fn set_plen(&mut self, v: u8) {
        self.buffer.as_mut()[field::PLEN] = v;
    }

    /// Sets the operation code.
    pub fn set_op(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::OPER, v);
    }

    /// Sets the sender hardware address.
    pub fn set_sender_hw(&mut self, a: EtherAddr) {
        self.buffer.as_mut()[field::SHA].copy_from_slice(&a.0);
    }

    /// Sets the sender protocol address.
    pub fn set_sender_ip(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::SPA].copy_from_slice(&a.octets());
    }

    /// Sets the target hardware address.
    pub fn set_target_hw(&mut self, a: EtherAddr) {
        self.buffer.as_mut()[field::THA].copy_from_slice(&a.0);
    }

    /// Sets the target protocol address.
    pub fn set_target_ip(&mut self, a: Ipv4Addr) {
        self.buffer.as_mut()[field::TPA].copy_from_slice(&a.octets());
    }
}

/// Builds an Ethernet/IPv4 ARP packet (without the Ethernet header).
pub fn build_arp(
    op: u16,
    sha: EtherAddr,
    spa: Ipv4Addr,
    tha: EtherAddr,
    tpa: Ipv4Addr,
) -> [u8; PACKET_LEN] {
    let mut b = [0u8; PACKET_LEN];
    let mut p = ArpPacket::new_unchecked(&mut b[..]);
    p.set_htype(HTYPE_ETHERNET);
    p.set_ptype(crate::ethernet::ETHERTYPE_IPV4);
    p.set_hlen(6);
    p.set_plen(4);
    p.set_op(op);
    p.set_sender_hw(sha);
    p.set_sender_ip(spa);
    p.set_target_hw(tha);
    p.set_target_ip(tpa);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    // Who has 198.18.0.2? Tell 198.18.0.1 (00:1a:2b:3c:4d:5e).
    const REQUEST: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, // htype ptype hlen plen op
        0x00, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, 198, 18, 0, 1, // sender
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 198, 18, 0, 2, // target
    ];

    #[test]
    fn parse_and_build() {
        let p = ArpPacket::new_checked(&REQUEST[..]).unwrap();
        assert!(p.is_ether_ipv4());
        assert_eq!(p.op(), OP_REQUEST);
        assert_eq!(p.sender_hw(), EtherAddr([0, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e]));
        assert_eq!(p.sender_ip(), Ipv4Addr::new(198, 18, 0, 1));
        assert_eq!(p.target_hw(), EtherAddr([0; 6]));
        assert_eq!(p.target_ip(), Ipv4Addr::new(198, 18, 0, 2));
        let b = build_arp(
            OP_REQUEST,
            p.sender_hw(),
            p.sender_ip(),
            EtherAddr::default(),
            p.target_ip(),
        );
        assert_eq!(b, REQUEST);
        assert_eq!(
            ArpPacket::new_checked(&REQUEST[..27]).unwrap_err(),
            WireError::Truncated
        );
    }
}
