//! TCP headers (RFC 9293).

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::checksum;
use crate::error::{be16, be32, put16, put32, Result, WireError};

/// Minimum TCP header length.
pub const HEADER_LEN: usize = 20;

/// FIN flag.
pub const FLAG_FIN: u16 = 0x001;
/// SYN flag.
pub const FLAG_SYN: u16 = 0x002;
/// RST flag.
pub const FLAG_RST: u16 = 0x004;
/// PSH flag.
pub const FLAG_PSH: u16 = 0x008;
/// ACK flag.
pub const FLAG_ACK: u16 = 0x010;
/// URG flag.
pub const FLAG_URG: u16 = 0x020;
/// ECE flag.
pub const FLAG_ECE: u16 = 0x040;
/// CWR flag.
pub const FLAG_CWR: u16 = 0x080;
/// NS flag (historic, RFC 3540).
pub const FLAG_NS: u16 = 0x100;

/// Option kind: end of option list.
pub const OPT_EOL: u8 = 0;
/// Option kind: no operation.
pub const OPT_NOP: u8 = 1;
/// Option kind: maximum segment size.
pub const OPT_MSS: u8 = 2;
/// Option kind: window scale.
pub const OPT_WSCALE: u8 = 3;
/// Option kind: SACK permitted.
pub const OPT_SACK_PERMITTED: u8 = 4;
/// Option kind: SACK blocks.
pub const OPT_SACK: u8 = 5;
/// Option kind: timestamps.
pub const OPT_TIMESTAMP: u8 = 8;

/// One parsed TCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpOption<'a> {
    /// End of option list; iteration stops after it.
    EndOfList,
    /// No operation.
    Nop,
    /// Maximum segment size.
    Mss(u16),
    /// Window scale shift count.
    WindowScale(u8),
    /// SACK permitted.
    SackPermitted,
    /// SACK blocks (pairs of 32-bit sequence numbers, raw).
    Sack(&'a [u8]),
    /// Timestamps: value and echo reply.
    Timestamp {
        /// TSval.
        value: u32,
        /// TSecr.
        echo: u32,
    },
    /// Any other option: its kind and the bytes after the length byte.
    Unknown {
        /// Option kind byte.
        kind: u8,
        /// Option data.
        data: &'a [u8],
    },
}

/// Iterator over TCP options; yields `Err(WireError::BadOption)` once for a malformed
/// option (length < 2, wrong length for its kind, or overrunning the header), then stops.
#[derive(Clone, Debug)]
pub struct TcpOptions<'a> {
    data: &'a [u8],
    done: bool,
}

impl<'a> TcpOptions<'a> {
    /// Iterates over raw option bytes.
    pub fn new(data: &'a [u8]) -> Self {
        TcpOptions { data, done: false }
    }
}

impl<'a> Iterator for TcpOptions<'a> {
    type Item = Result<TcpOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.data.is_empty() {
            return None;
        }
        let d = self.data;
        match d[0] {
            OPT_EOL => {
                self.done = true;
                return Some(Ok(TcpOption::EndOfList));
            }
            OPT_NOP => {
                self.data = &d[1..];
                return Some(Ok(TcpOption::Nop));
            }
            _ => {}
        }
        let len = d.get(1).map_or(0, |l| *l as usize);
        let expect = match d[0] {
            OPT_MSS => Some(4),
            OPT_WSCALE => Some(3),
            OPT_SACK_PERMITTED => Some(2),
            OPT_TIMESTAMP => Some(10),
            _ => None,
        };
        if len < 2 || len > d.len() || expect.is_some_and(|e| e != len) {
            self.done = true;
            return Some(Err(WireError::BadOption));
        }
        let body = &d[2..len];
        self.data = &d[len..];
        Some(Ok(match d[0] {
            OPT_MSS => TcpOption::Mss(be16(body, 0)),
            OPT_WSCALE => TcpOption::WindowScale(body[0]),
            OPT_SACK_PERMITTED => TcpOption::SackPermitted,
            OPT_SACK => TcpOption::Sack(body),
            OPT_TIMESTAMP => TcpOption::Timestamp {
                value: be32(body, 0),
                echo: be32(body, 4),
            },
            kind => TcpOption::Unknown { kind, data: body },
        }))
    }
}

mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const OFF_FLAGS: usize = 12;
    pub const WINDOW: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
    pub const OPTIONS: usize = 20;
}

/// A zero-copy view of a TCP segment; the buffer is the whole segment (the IP payload),
/// which is what the checksum covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> TcpPacket<T> {
    /// Wraps a buffer without checking it.
    pub const fn new_unchecked(buffer: T) -> Self {
        TcpPacket { buffer }
    }

    /// Wraps a buffer, checking: ≥ 20 bytes, data offset ≥ 5 and within the buffer.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Performs the checks of [`TcpPacket::new_checked`].
    pub fn check_len(&self) -> Result<()> {
        let n = self.buffer.as_ref().len();
        if n < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let h = self.header_len();
        if h < HEADER_LEN {
            return Err(WireError::BadHeaderLength);
        }
        if h > n {
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

    /// Sequence number.
    pub fn seq(&self) -> u32 {
        be32(self.buffer.as_ref(), field::SEQ)
    }

    /// Acknowledgement number.
    pub fn ack(&self) -> u32 {
        be32(self.buffer.as_ref(), field::ACK)
    }

    /// Data offset in 32-bit words.
    pub fn data_offset(&self) -> u8 {
        self.buffer.as_ref()[field::OFF_FLAGS] >> 4
    }

    /// Header length in bytes (4 × data offset).
    pub fn header_len(&self) -> usize {
        self.data_offset() as usize * 4
    }

    /// The nine flag bits (`FLAG_*`).
    pub fn flags(&self) -> u16 {
        be16(self.buffer.as_ref(), field::OFF_FLAGS) & 0x01ff
    }

    /// True if every bit of `flag` is set.
    pub fn has_flags(&self, flag: u16) -> bool {
        self.flags() & flag == flag
    }

    /// SYN flag.
    pub fn syn(&self) -> bool {
        self.has_flags(FLAG_SYN)
    }

    /// ACK flag.
    pub fn ack_flag(&self) -> bool {
        self.has_flags(FLAG_ACK)
    }

    /// FIN flag.
    pub fn fin(&self) -> bool {
        self.has_flags(FLAG_FIN)
    }

    /// RST flag.
    pub fn rst(&self) -> bool {
        self.has_flags(FLAG_RST)
    }

    /// Window size.
    pub fn window(&self) -> u16 {
        be16(self.buffer.as_ref(), field::WINDOW)
    }

    /// Checksum field.
    pub fn checksum(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CHECKSUM)
    }

    /// Urgent pointer.
    pub fn urgent(&self) -> u16 {
        be16(self.buffer.as_ref(), field::URGENT)
    }

    fn header_end(&self) -> usize {
        let n = self.buffer.as_ref().len();
        self.header_len().clamp(HEADER_LEN.min(n), n)
    }

    /// Raw option bytes.
    pub fn options(&self) -> &[u8] {
        let e = self.header_end();
        &self.buffer.as_ref()[field::OPTIONS.min(e)..e]
    }

    /// Iterates over the parsed options.
    pub fn option_iter(&self) -> TcpOptions<'_> {
        TcpOptions::new(self.options())
    }

    /// Segment data after the header.
    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[self.header_end()..]
    }

    /// True if the checksum verifies over the IPv4 pseudo-header.
    pub fn verify_checksum_v4(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        let b = self.buffer.as_ref();
        let s = checksum::pseudo_header_v4(src, dst, crate::ipv4::PROTO_TCP, b.len() as u16)
            + checksum::sum16(b);
        checksum::fold(s) == 0xffff
    }

    /// True if the checksum verifies over the IPv6 pseudo-header.
    pub fn verify_checksum_v6(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        let b = self.buffer.as_ref();
        let s = checksum::pseudo_header_v6(src, dst, crate::ipv4::PROTO_TCP, b.len() as u32)
            + checksum::sum16(b);
        checksum::fold(s) == 0xffff
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> TcpPacket<T> {
    /// Sets the source port.
    pub fn set_src_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::SRC_PORT, v);
    }

    /// Sets the destination port.
    pub fn set_dst_port(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::DST_PORT, v);
    }

    /// Sets the sequence number.
    pub fn set_seq(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::SEQ, v);
    }

    /// Sets the acknowledgement number.
    pub fn set_ack(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::ACK, v);
    }

    /// Sets the header length in bytes (a multiple of 4, at most 60).
    pub fn set_header_len(&mut self, len: usize) {
        let b = &mut self.buffer.as_mut()[field::OFF_FLAGS];
        *b = (*b & 0x0f) | (((len / 4) as u8) << 4);
    }

    /// Sets the nine flag bits, keeping the data offset.
    pub fn set_flags(&mut self, flags: u16) {
        let w = be16(self.buffer.as_ref(), field::OFF_FLAGS);
        put16(
            self.buffer.as_mut(),
            field::OFF_FLAGS,
            (w & 0xfe00) | (flags & 0x01ff),
        );
    }

    /// Sets the window.
    pub fn set_window(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::WINDOW, v);
    }

    /// Sets the checksum field.
    pub fn set_checksum(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::CHECKSUM, v);
    }

    /// Sets the urgent pointer.
    pub fn set_urgent(&mut self, v: u16) {
        put16(self.buffer.as_mut(), field::URGENT, v);
    }

    /// Computes and stores the checksum over the IPv4 pseudo-header.
    pub fn fill_checksum_v4(&mut self, src: Ipv4Addr, dst: Ipv4Addr) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let p = checksum::pseudo_header_v4(src, dst, crate::ipv4::PROTO_TCP, b.len() as u16);
        let c = checksum::finish(p + checksum::sum16(b));
        self.set_checksum(c);
    }

    /// Computes and stores the checksum over the IPv6 pseudo-header.
    pub fn fill_checksum_v6(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let b = self.buffer.as_ref();
        let p = checksum::pseudo_header_v6(src, dst, crate::ipv4::PROTO_TCP, b.len() as u32);
        let c = checksum::finish(p + checksum::sum16(b));
        self.set_checksum(c);
    }

    /// Mutable raw option bytes.
    pub fn options_mut(&mut self) -> &mut [u8] {
        let e = self.header_end();
        &mut self.buffer.as_mut()[field::OPTIONS.min(e)..e]
    }

    /// Mutable segment data.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let e = self.header_end();
        &mut self.buffer.as_mut()[e..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // SYN 10.0.0.1:40000 -> 10.0.0.2:80, seq 1, data offset 6 with an MSS option.
    const SYN: [u8; 24] = [
        0x9c, 0x40, 0x00, 0x50, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x60, 0x02, 0xfa,
        0xf0, 0x00, 0x00, 0x00, 0x00, 0x02, 0x04, 0x05, 0xb4,
    ];

    #[test]
    fn parse_and_checksum() {
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(10, 0, 0, 2);
        let mut b = SYN;
        let mut t = TcpPacket::new_checked(&mut b[..]).unwrap();
        assert_eq!((t.src_port(), t.dst_port()), (40000, 80));
        assert_eq!((t.seq(), t.ack()), (1, 0));
        assert_eq!(t.header_len(), 24);
        assert!(t.syn() && !t.ack_flag() && !t.fin() && !t.rst());
        assert_eq!(t.flags(), FLAG_SYN);
        assert_eq!(t.window(), 0xfaf0);
        assert_eq!(t.options(), &[2, 4, 5, 0xb4]);
        let o: Vec<_> = t.option_iter().collect();
        assert_eq!(o, [Ok(TcpOption::Mss(1460))]);
        assert!(t.payload().is_empty());
        t.fill_checksum_v4(src, dst);
        assert!(t.verify_checksum_v4(src, dst));
        // Sum by hand: pseudo 0a00+0001+0a00+0002+0006+0018, header words.
        let words: u32 = [
            0x0a00u32, 0x0001, 0x0a00, 0x0002, 0x0006, 0x0018, 0x9c40, 0x0050, 0x0000, 0x0001,
            0x6002, 0xfaf0, 0x0204, 0x05b4,
        ]
        .iter()
        .sum();
        assert_eq!(t.checksum(), !crate::checksum::fold(words));
        t.set_flags(FLAG_SYN | FLAG_ACK | FLAG_NS);
        assert_eq!(t.header_len(), 24);
        assert!(t.has_flags(FLAG_SYN | FLAG_ACK));
        let a: Ipv6Addr = "2001:db8::1".parse().unwrap();
        t.fill_checksum_v6(&a, &a);
        assert!(t.verify_checksum_v6(&a, &a));
        assert!(!t.verify_checksum_v4(src, dst));
    }

    #[test]
    fn options() {
        let raw = [
            1, 3, 3, 7, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 5, 10, 1, 2, 3, 4, 5, 6, 7, 8, 0,
        ];
        let o: Vec<_> = TcpOptions::new(&raw).collect::<Result<_>>().unwrap();
        assert_eq!(
            o,
            [
                TcpOption::Nop,
                TcpOption::WindowScale(7),
                TcpOption::SackPermitted,
                TcpOption::Timestamp { value: 1, echo: 2 },
                TcpOption::Sack(&[1, 2, 3, 4, 5, 6, 7, 8]),
                TcpOption::EndOfList,
            ]
        );
        for bad in [&[2, 0][..], &[2, 3, 0][..], &[5, 20, 0, 0][..], &[9][..]] {
            let v: Vec<_> = TcpOptions::new(bad).collect();
            assert_eq!(v, [Err(WireError::BadOption)], "{bad:?}");
        }
    }

    #[test]
    fn bad_offsets() {
        assert_eq!(
            TcpPacket::new_checked(&SYN[..19]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            TcpPacket::new_checked(&SYN[..22]).unwrap_err(),
            WireError::Truncated
        );
        let mut b = SYN;
        b[12] = 0x40;
        assert_eq!(
            TcpPacket::new_checked(&b[..]).unwrap_err(),
            WireError::BadHeaderLength
        );
    }
}
