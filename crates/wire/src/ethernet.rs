//! Ethernet II frames and 802.1Q VLAN tags.

use crate::addr::EtherAddr;
use crate::error::{be16, put16, Result, WireError};

/// EtherType of IPv4.
pub const ETHERTYPE_IPV4: u16 = 0x0800;
/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// EtherType of IPv6.
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
/// EtherType of an 802.1Q VLAN tag.
pub const ETHERTYPE_VLAN: u16 = 0x8100;
/// EtherType of an 802.1ad service (QinQ) tag.
pub const ETHERTYPE_QINQ: u16 = 0x88a8;

/// Length of the Ethernet header (no VLAN tag).
pub const HEADER_LEN: usize = 14;
/// Length of an 802.1Q tag (TCI plus inner EtherType).
pub const VLAN_TAG_LEN: usize = 4;

mod field {
    use std::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: usize = 12;
    pub const PAYLOAD: usize = 14;
    pub const VLAN_TCI: usize = 14;
    pub const VLAN_TYPE: usize = 16;
}

/// A zero-copy view of an Ethernet II frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    /// Wraps a buffer without checking its length.
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Wraps a buffer, checking that it holds at least the 14-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let f = Self::new_unchecked(buffer);
        f.check_len()?;
        Ok(f)
    }

    /// Checks that the buffer holds the header.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Destination address.
    pub fn dst(&self) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::DST]);
        EtherAddr(a)
    }

    /// Source address.
    pub fn src(&self) -> EtherAddr {
        let mut a = [0; 6];
        a.copy_from_slice(&self.buffer.as_ref()[field::SRC]);
        EtherAddr(a)
    }

    /// EtherType (the outer one when the frame is VLAN-tagged).
    pub fn ethertype(&self) -> u16 {
        be16(self.buffer.as_ref(), field::ETHERTYPE)
    }

    /// For an 802.1Q/802.1ad tagged frame with the full tag present: `(tci, inner ethertype)`.
    pub fn vlan(&self) -> Option<(u16, u16)> {
        let b = self.buffer.as_ref();
        let t = self.ethertype();
        if (t == ETHERTYPE_VLAN || t == ETHERTYPE_QINQ) && b.len() >= HEADER_LEN + VLAN_TAG_LEN {
            Some((be16(b, field::VLAN_TCI), be16(b, field::VLAN_TYPE)))
        } else {
            None
        }
    }

    /// Everything after the 14-byte header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    /// Sets the destination address.
    pub fn set_dst(&mut self, a: EtherAddr) {
        self.buffer.as_mut()[field::DST].copy_from_slice(&a.0);
    }

    /// Sets the source address.
    pub fn set_src(&mut self, a: EtherAddr) {
        self.buffer.as_mut()[field::SRC].copy_from_slice(&a.0);
    }

    /// Sets the EtherType.
    pub fn set_ethertype(&mut self, t: u16) {
        put16(self.buffer.as_mut(), field::ETHERTYPE, t);
    }

    /// Mutable access to everything after the 14-byte header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FRAME: [u8; 18] = [
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // dst
        0x00, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e, // src
        0x08, 0x06, // ARP
        0xaa, 0xbb, 0xcc, 0xdd,
    ];

    #[test]
    fn parse() {
        let f = EthernetFrame::new_checked(&FRAME[..]).unwrap();
        assert!(f.dst().is_broadcast());
        assert_eq!(f.src(), EtherAddr([0, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e]));
        assert_eq!(f.ethertype(), ETHERTYPE_ARP);
        assert_eq!(f.payload(), &[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(f.vlan(), None);
        assert_eq!(
            EthernetFrame::new_checked(&FRAME[..13]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn vlan_and_setters() {
        let mut b = FRAME;
        let mut f = EthernetFrame::new_checked(&mut b[..]).unwrap();
        f.set_ethertype(ETHERTYPE_VLAN);
        f.set_dst(EtherAddr([2, 0, 0, 0, 0, 1]));
        f.set_src(EtherAddr::BROADCAST);
        f.payload_mut().copy_from_slice(&[0x20, 0x05, 0x86, 0xdd]);
        assert_eq!(f.vlan(), Some((0x2005, ETHERTYPE_IPV6)));
        assert_eq!(&b[..6], &[2, 0, 0, 0, 0, 1]);
        let short = EthernetFrame::new_checked(&b[..16]).unwrap();
        assert_eq!(short.vlan(), None);
    }
}
