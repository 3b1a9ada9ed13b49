//! ICMP for IPv4 (RFC 792).

use std::net::Ipv4Addr;

use crate::checksum;
use crate::error::{be16, be32, put16, put32, Result, WireError};

/// Echo reply.
pub const TYPE_ECHO_REPLY: u8 = 0;
/// Destination unreachable.
pub const TYPE_UNREACH: u8 = 3;
/// Source quench.
pub const TYPE_SOURCE_QUENCH: u8 = 4;
/// Redirect.
pub const TYPE_REDIRECT: u8 = 5;
/// Echo request.
pub const TYPE_ECHO: u8 = 8;
/// Router advertisement.
pub const TYPE_ROUTER_ADVERT: u8 = 9;
/// Router solicitation.
pub const TYPE_ROUTER_SOLICIT: u8 = 10;
/// Time exceeded.
pub const TYPE_TIME_EXCEEDED: u8 = 11;
/// Parameter problem.
pub const TYPE_PARAM_PROBLEM: u8 = 12;
/// Timestamp request.
pub const TYPE_TIMESTAMP: u8 = 13;
/// Timestamp reply.
pub const TYPE_TIMESTAMP_REPLY: u8 = 14;
/// Information request.
pub const TYPE_INFO_REQUEST: u8 = 15;
/// Information reply.
pub const TYPE_INFO_REPLY: u8 = 16;
/// Address mask request.
pub const TYPE_MASK_REQUEST: u8 = 17;
/// Address mask reply.
pub const TYPE_MASK_REPLY: u8 = 18;

/// Unreachable code: network unreachable.
pub const UNREACH_NET: u8 = 0;
/// Unreachable code: host unreachable.
pub const UNREACH_HOST: u8 = 1;
/// Unreachable code: protocol unreachable.
pub const UNREACH_PROTOCOL: u8 = 2;
/// Unreachable code: port unreachable.
pub const UNREACH_PORT: u8 = 3;
/// Unreachable code: fragmentation needed and DF set.
pub const UNREACH_NEEDFRAG: u8 = 4;
/// Unreachable code: source route failed.
pub const UNREACH_SRCFAIL: u8 = 5;
/// Unreachable code: destination network unknown.
pub const UNREACH_NET_UNKNOWN: u8 = 6;
/// Unreachable code: destination host unknown.
pub const UNREACH_HOST_UNKNOWN: u8 = 7;
/// Unreachable code: source host isolated.
pub const UNREACH_ISOLATED: u8 = 8;
/// Unreachable code: network administratively prohibited.
pub const UNREACH_NET_PROHIB: u8 = 9;
/// Unreachable code: host administratively prohibited.
pub const UNREACH_HOST_PROHIB: u8 = 10;
/// Unreachable code: network unreachable for TOS.
pub const UNREACH_TOSNET: u8 = 11;
/// Unreachable code: host unreachable for TOS.
pub const UNREACH_TOSHOST: u8 = 12;
/// Unreachable code: communication administratively prohibited.
pub const UNREACH_FILTER_PROHIB: u8 = 13;
/// Unreachable code: host precedence violation.
pub const UNREACH_HOST_PRECEDENCE: u8 = 14;
/// Unreachable code: precedence cutoff in effect.
pub const UNREACH_PRECEDENCE_CUTOFF: u8 = 15;

/// Redirect code: for the network.
pub const REDIRECT_NET: u8 = 0;
/// Redirect code: for the host.
pub const REDIRECT_HOST: u8 = 1;
/// Redirect code: for type of service and network.
pub const REDIRECT_TOSNET: u8 = 2;
/// Redirect code: for type of service and host.
pub const REDIRECT_TOSHOST: u8 = 3;

/// Time-exceeded code: TTL exceeded in transit.
pub const TIMXCEED_TRANSIT: u8 = 0;
/// Time-exceeded code: fragment reassembly time exceeded.
pub const TIMXCEED_REASSEMBLY: u8 = 1;

/// Parameter-problem code: the pointer indicates the error.
pub const PARAMPROB_ERRATPTR: u8 = 0;
/// Parameter-problem code: a required option is missing.
pub const PARAMPROB_OPTABSENT: u8 = 1;
/// Parameter-problem code: bad length.
pub const PARAMPROB_LENGTH: u8 = 2;

/// Length of the ICMP header (type, code, checksum and the 4-byte rest of header).
pub const HEADER_LEN: usize = 8;

mod field {
    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: usize = 2;
    pub const REST: usize = 4;
    pub const IDENT: usize = 4;
    pub const SEQ: usize = 6;
    pub const MTU: usize = 6;
    pub const POINTER: usize = 4;
    pub const PAYLOAD: usize = 8;
}

/// A zero-copy view of an ICMP message. The checksum covers the whole buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IcmpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> IcmpPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        IcmpPacket { buffer }
    }

    /// Wraps a buffer, checking it holds the 8-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds the 8-byte header.
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

    /// Message type (`TYPE_*`).
    pub fn msg_type(&self) -> u8 {
        self.buffer.as_ref()[field::TYPE]
    }

    /// Message code.
    pub fn code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// The 32-bit rest-of-header word.
    pub fn rest_of_header(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REST)
    }

    /// Echo (and timestamp/info) identifier.
    pub fn ident(&self) -> u16 {
        be16(self.buffer.as_ref(), field::IDENT)
    }

    /// Echo (and timestamp/info) sequence number.
    pub fn seq(&self) -> u16 {
        be16(self.buffer.as_ref(), field::SEQ)
    }

    /// Redirect gateway address.
    pub fn gateway(&self) -> Ipv4Addr {
        Ipv4Addr::from(self.rest_of_header())
    }

    /// Next-hop MTU of a fragmentation-needed message (RFC 1191).
    pub fn next_hop_mtu(&self) -> u16 {
        be16(self.buffer.as_ref(), field::MTU)
    }

    /// Parameter-problem pointer.
    pub fn pointer(&self) -> u8 {
        self.buffer.as_ref()[field::POINTER]
    }

    /// True for error messages (unreachable, quench, redirect, time exceeded, parameter
    /// problem), which must not be sent in response to other error messages.
    pub fn is_error(&self) -> bool {
        matches!(
            self.msg_type(),
            TYPE_UNREACH
                | TYPE_SOURCE_QUENCH
                | TYPE_REDIRECT
                | TYPE_TIME_EXCEEDED
                | TYPE_PARAM_PROBLEM
        )
    }

    /// True if the checksum over the whole buffer verifies.
    pub fn verify_checksum(&self) -> bool {
        checksum::fold(checksum::sum16(self.buffer.as_ref())) == 0xffff
    }

    /// Data after the 8-byte header (for errors: the offending IP header and 8+ bytes).
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[field::PAYLOAD..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> IcmpPacket<T> {
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

    /// Sets the whole rest-of-header word.
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

    /// Sets the redirect gateway.
    pub fn set_gateway(&mut self, a: Ipv4Addr) {
        self.set_rest_of_header(u32::from(a));
    }

    /// Sets the next-hop MTU (and clears the unused half word).
    pub fn set_next_hop_mtu(&mut self, mtu: u16) {
        self.set_rest_of_header(mtu as u32);
    }

    /// Sets the parameter-problem pointer (and clears the unused bytes).
    pub fn set_pointer(&mut self, p: u8) {
        self.set_rest_of_header((p as u32) << 24);
    }

    /// Recomputes and stores the checksum over the whole buffer.
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let c = checksum::checksum(self.buffer.as_ref());
        self.set_checksum(c);
    }

    /// Mutable data after the 8-byte header.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Echo request id 0x1234 seq 1 with "abcd"; checksum computed by hand.
    const ECHO: [u8; 12] = [
        0x08, 0x00, 0x00, 0x00, 0x12, 0x34, 0x00, 0x01, b'a', b'b', b'c', b'd',
    ];

    #[test]
    fn echo() {
        let mut b = ECHO;
        let sum = 0x0800u32 + 0x1234 + 0x0001 + 0x6162 + 0x6364;
        let expect = !crate::checksum::fold(sum);
        let mut p = IcmpPacket::new_checked(&mut b[..]).unwrap();
        assert!(!p.verify_checksum());
        p.fill_checksum();
        assert_eq!(p.checksum(), expect);
        assert!(p.verify_checksum());
        assert_eq!(p.msg_type(), TYPE_ECHO);
        assert_eq!((p.ident(), p.seq()), (0x1234, 1));
        assert_eq!(p.payload(), b"abcd");
        assert!(!p.is_error());
        p.set_msg_type(TYPE_ECHO_REPLY);
        p.fill_checksum();
        assert!(p.verify_checksum());
        assert_eq!(
            IcmpPacket::new_checked(&ECHO[..7]).unwrap_err(),
            WireError::Truncated
        );
    }

    #[test]
    fn errors() {
        let mut b = [0u8; 36];
        let mut p = IcmpPacket::new_checked(&mut b[..]).unwrap();
        p.set_msg_type(TYPE_UNREACH);
        p.set_code(UNREACH_NEEDFRAG);
        p.set_next_hop_mtu(1400);
        assert_eq!(p.next_hop_mtu(), 1400);
        assert!(p.is_error());
        p.set_msg_type(TYPE_REDIRECT);
        p.set_gateway(Ipv4Addr::new(198, 18, 0, 254));
        assert_eq!(p.gateway(), Ipv4Addr::new(198, 18, 0, 254));
        p.set_msg_type(TYPE_PARAM_PROBLEM);
        p.set_pointer(20);
        assert_eq!(p.pointer(), 20);
        assert_eq!(&b[4..8], &[20, 0, 0, 0]);
    }
}
