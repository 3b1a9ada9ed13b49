//! Address types shared by the configuration language and the elements.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A 48-bit Ethernet address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct EtherAddr(pub [u8; 6]);

impl EtherAddr {
    /// The broadcast address `ff:ff:ff:ff:ff:ff`.
    pub const BROADCAST: EtherAddr = EtherAddr([0xff; 6]);

    /// True for the broadcast address.
    pub fn is_broadcast(&self) -> bool {
        self.0 == [0xff; 6]
    }

    /// True for group (multicast or broadcast) addresses.
    pub fn is_group(&self) -> bool {
        self.0[0] & 1 != 0
    }
}

impl fmt::Display for EtherAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0;
        write!(
            f,
            "{:02X}-{:02X}-{:02X}-{:02X}-{:02X}-{:02X}",
            a[0], a[1], a[2], a[3], a[4], a[5]
        )
    }
}

impl fmt::Debug for EtherAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for EtherAddr {
    type Err = ();

    /// Parses six hex octets separated by `:` or `-` (`00:1a:2B:3c:4d:5e`).
    fn from_str(s: &str) -> Result<Self, ()> {
        let sep = if s.contains(':') { ':' } else { '-' };
        let mut out = [0u8; 6];
        let mut n = 0;
        for part in s.split(sep) {
            if n == 6 || part.is_empty() || part.len() > 2 {
                return Err(());
            }
            out[n] = u8::from_str_radix(part, 16).map_err(|_| ())?;
            n += 1;
        }
        if n == 6 {
            Ok(EtherAddr(out))
        } else {
            Err(())
        }
    }
}

/// An IPv4 prefix: address and prefix length (the address is kept masked).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Ipv4Prefix {
    /// Network address, with host bits cleared.
    pub addr: Ipv4Addr,
    /// Prefix length, 0..=32.
    pub len: u8,
}

impl Ipv4Prefix {
    /// Builds a prefix, clearing host bits.
    pub fn new(addr: Ipv4Addr, len: u8) -> Ipv4Prefix {
        let len = len.min(32);
        Ipv4Prefix {
            addr: Ipv4Addr::from(u32::from(addr) & Self::mask_of(len)),
            len,
        }
    }

    /// The netmask for a prefix length as a host-order integer.
    pub fn mask_of(len: u8) -> u32 {
        if len == 0 {
            0
        } else {
            u32::MAX << (32 - len.min(32) as u32)
        }
    }

    /// The netmask as a host-order integer.
    pub fn mask(&self) -> u32 {
        Self::mask_of(self.len)
    }

    /// True if `a` lies inside this prefix.
    pub fn contains(&self, a: Ipv4Addr) -> bool {
        u32::from(a) & self.mask() == u32::from(self.addr)
    }

    /// Prefix length of a contiguous netmask, or `None` for a non-contiguous one.
    pub fn mask_to_len(mask: u32) -> Option<u8> {
        let len = mask.leading_ones();
        (Self::mask_of(len as u8) == mask).then_some(len as u8)
    }
}

impl fmt::Display for Ipv4Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv4Prefix {
    type Err = ();

    /// Parses `A.B.C.D/LEN`, `A.B.C.D/MASK`, or a bare address (a /32).
    fn from_str(s: &str) -> Result<Self, ()> {
        let (a, l) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr = parse_ipv4_loose(a).ok_or(())?;
        let len = match l {
            None => 32,
            Some(l) if l.contains('.') => {
                Self::mask_to_len(u32::from(parse_ipv4_loose(l).ok_or(())?)).ok_or(())?
            }
            Some(l) => {
                let n: u8 = l.parse().map_err(|_| ())?;
                if n > 32 {
                    return Err(());
                }
                n
            }
        };
        Ok(Ipv4Prefix::new(addr, len))
    }
}

/// Parses a dotted-quad IPv4 address; also accepts Click's short forms `18.26.4` (trailing
/// zero octets omitted) only when used as a prefix network part.
fn parse_ipv4_loose(s: &str) -> Option<Ipv4Addr> {
    if let Ok(a) = s.parse::<Ipv4Addr>() {
        return Some(a);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.is_empty() || parts.len() > 4 || parts.iter().any(|p| p.is_empty()) {
        return None;
    }
    let mut o = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        o[i] = p.parse().ok()?;
    }
    Some(Ipv4Addr::from(o))
}

/// An IPv6 prefix: address and prefix length (the address is kept masked).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Ipv6Prefix {
    /// Network address, with host bits cleared.
    pub addr: Ipv6Addr,
    /// Prefix length, 0..=128.
    pub len: u8,
}

impl Ipv6Prefix {
    /// Builds a prefix, clearing host bits.
    pub fn new(addr: Ipv6Addr, len: u8) -> Ipv6Prefix {
        let len = len.min(128);
        Ipv6Prefix {
            addr: Ipv6Addr::from(u128::from(addr) & Self::mask_of(len)),
            len,
        }
    }

    /// The netmask for a prefix length as an integer.
    pub fn mask_of(len: u8) -> u128 {
        if len == 0 {
            0
        } else {
            u128::MAX << (128 - len.min(128) as u32)
        }
    }

    /// True if `a` lies inside this prefix.
    pub fn contains(&self, a: Ipv6Addr) -> bool {
        u128::from(a) & Self::mask_of(self.len) == u128::from(self.addr)
    }
}

impl fmt::Display for Ipv6Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv6Prefix {
    type Err = ();

    /// Parses `ADDR/LEN` or a bare address (a /128).
    fn from_str(s: &str) -> Result<Self, ()> {
        let (a, l) = match s.split_once('/') {
            Some((a, l)) => (a, Some(l)),
            None => (s, None),
        };
        let addr: Ipv6Addr = a.parse().map_err(|_| ())?;
        let len = match l {
            None => 128,
            Some(l) => {
                let n: u8 = l.parse().map_err(|_| ())?;
                if n > 128 {
                    return Err(());
                }
                n
            }
        };
        Ok(Ipv6Prefix::new(addr, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ether_roundtrip() {
        let e: EtherAddr = "00:1a:2B:3c:4d:5e".parse().unwrap();
        assert_eq!(e.0, [0, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e]);
        assert_eq!(e.to_string(), "00-1A-2B-3C-4D-5E");
        assert_eq!("00-1A-2B-3C-4D-5E".parse::<EtherAddr>(), Ok(e));
        assert!("00:1a:2b:3c:4d".parse::<EtherAddr>().is_err());
        assert!("00:1a:2b:3c:4d:5e:6f".parse::<EtherAddr>().is_err());
    }

    #[test]
    fn prefixes() {
        let p: Ipv4Prefix = "18.26.4.9/24".parse().unwrap();
        assert_eq!(p.to_string(), "18.26.4.0/24");
        let q: Ipv4Prefix = "18.26.4.0/255.255.255.0".parse().unwrap();
        assert_eq!(p, q);
        assert!(p.contains("18.26.4.200".parse().unwrap()));
        assert!(!p.contains("18.26.5.1".parse().unwrap()));
        assert!("1.2.3.4/255.0.255.0".parse::<Ipv4Prefix>().is_err());
        assert!("1.2.3.4/33".parse::<Ipv4Prefix>().is_err());
        let z: Ipv4Prefix = "0.0.0.0/0".parse().unwrap();
        assert!(z.contains("198.18.0.1".parse().unwrap()));
        let s: Ipv6Prefix = "2001:db8::1/32".parse().unwrap();
        assert_eq!(s.to_string(), "2001:db8::/32");
    }
}
