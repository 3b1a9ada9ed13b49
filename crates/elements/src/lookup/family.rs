//! Address families of the route tables: IPv4 addresses as `u32` and IPv6 addresses as
//! `u128`, with prefix parsing, Click's route listing format and the packet annotation a
//! lookup reads and writes.

use std::fmt::Debug;
use std::hash::Hash;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::ops::BitAnd;

use sluice_core::Packet;
use sluice_lang::args::FromArg;
use sluice_wire::{Ipv4Packet, Ipv6Packet, Ipv6Prefix};

use super::table::{mask_of, parse_prefix, Route};

/// An address family a route table can hold.
pub trait RouteAddr:
    Copy + Eq + Hash + Default + Debug + BitAnd<Output = Self> + Send + Sync + 'static
{
    /// Address width in bits.
    const BITS: u8;
    /// The address with every bit set.
    const ONES: Self;
    /// True for Click's IPv6 table, where a prefix given twice replaces its route and
    /// removing a route that is not there does nothing; Click's IPv4 tables treat both as
    /// errors (`set` replaces).
    const LENIENT_CHANGES: bool;
    /// First line of the `table` listing, when there are routes.
    const TABLE_HEADING: &'static str;
    /// The address with the bits after the first `len` cleared.
    fn masked(self, len: u8) -> Self;
    /// Parses a prefix (`ADDR/LEN` and the family's other forms); host bits are cleared.
    fn parse_prefix(s: &str) -> Result<(Self, u8), String>;
    /// Parses an address (literal or AddressInfo name).
    fn parse_addr(s: &str) -> Result<Self, String>;
    /// The address in its usual text form.
    fn show(self) -> String;
    /// One route in Click's listing format (`tabs`) or as a configuration argument.
    fn unparse_route(r: &Route<Self>, tabs: bool) -> String;
    /// The packet's destination: its annotation, or when that is unspecified the destination
    /// of the IP header at the network header (or at the data start), stored in the
    /// annotation.
    fn packet_dst(p: &mut Packet) -> Self;
    /// Sets the packet's destination annotation (to a route's gateway).
    fn set_packet_dst(p: &mut Packet, a: Self);
}

impl RouteAddr for u32 {
    const BITS: u8 = 32;
    const ONES: u32 = u32::MAX;
    const LENIENT_CHANGES: bool = false;
    const TABLE_HEADING: &'static str = "";

    #[inline]
    fn masked(self, len: u8) -> u32 {
        self & mask_of(len)
    }

    fn parse_prefix(s: &str) -> Result<(u32, u8), String> {
        parse_prefix(s)
    }

    fn parse_addr(s: &str) -> Result<u32, String> {
        Ipv4Addr::from_arg(s)
            .map(u32::from)
            .map_err(|_| format!("expected an IP address, got '{}'", s))
    }

    fn show(self) -> String {
        Ipv4Addr::from(self).to_string()
    }

    /// `ADDR/LEN GW OUT` (`-` for no gateway) separated by spaces, or for `table` by tabs,
    /// padded with a second tab after a prefix shorter than 16 characters and a gateway
    /// shorter than 8, as Click pads its columns.
    fn unparse_route(r: &Route<u32>, tabs: bool) -> String {
        let sep = if tabs { "\t" } else { " " };
        let pfx = format!("{}/{}", r.addr.show(), r.len);
        let gw = if r.gw == 0 {
            "-".to_string()
        } else {
            r.gw.show()
        };
        let pad = |field: &str, width: usize| {
            if tabs && field.len() + 1 < width {
                "\t"
            } else {
                ""
            }
        };
        format!(
            "{}{}{}{}{}{}{}",
            pfx,
            sep,
            pad(&pfx, 17),
            gw,
            sep,
            pad(&gw, 9),
            r.port
        )
    }

    #[inline]
    fn packet_dst(p: &mut Packet) -> u32 {
        let mut dst = p.dst_ip_anno();
        if dst.is_unspecified() {
            let hdr = p.network_header().unwrap_or_else(|| p.data());
            if let Ok(ip) = Ipv4Packet::new_checked(hdr) {
                dst = ip.dst();
                p.set_dst_ip_anno(dst);
            }
        }
        u32::from(dst)
    }

    #[inline]
    fn set_packet_dst(p: &mut Packet, a: u32) {
        p.set_dst_ip_anno(Ipv4Addr::from(a));
    }
}

impl RouteAddr for u128 {
    const BITS: u8 = 128;
    const ONES: u128 = u128::MAX;
    const LENIENT_CHANGES: bool = true;
    const TABLE_HEADING: &'static str = "# Active routes\n";

    #[inline]
    fn masked(self, len: u8) -> u128 {
        if len == 0 {
            0
        } else {
            self & (u128::MAX << (128 - len as u32))
        }
    }

    /// `ADDR/LEN`, a bare address (a /128), or an AddressInfo name.
    fn parse_prefix(s: &str) -> Result<(u128, u8), String> {
        let p = Ipv6Prefix::from_arg(s.trim())
            .map_err(|_| format!("expected IPv6 prefix, got '{}'", s.trim()))?;
        let a = u128::from(p.addr);
        Ok((a.masked(p.len), p.len))
    }

    fn parse_addr(s: &str) -> Result<u128, String> {
        Ipv6Addr::from_arg(s)
            .map(u128::from)
            .map_err(|_| format!("expected an IPv6 address, got '{}'", s))
    }

    fn show(self) -> String {
        Ipv6Addr::from(self).to_string()
    }

    /// `ADDR/LEN GW OUT`, the gateway `::` when there is none, tab-separated in `table`
    /// as Click's IPv6 table lists them.
    fn unparse_route(r: &Route<u128>, tabs: bool) -> String {
        let sep = if tabs { "\t" } else { " " };
        format!(
            "{}/{}{}{}{}{}",
            r.addr.show(),
            r.len,
            sep,
            r.gw.show(),
            sep,
            r.port
        )
    }

    #[inline]
    fn packet_dst(p: &mut Packet) -> u128 {
        let mut dst = p.anno().dst_ip6;
        if dst.is_unspecified() {
            let hdr = p.network_header().unwrap_or_else(|| p.data());
            if let Ok(ip) = Ipv6Packet::new_checked(hdr) {
                dst = ip.dst();
                p.anno_mut().dst_ip6 = dst;
            }
        }
        u128::from(dst)
    }

    #[inline]
    fn set_packet_dst(p: &mut Packet, a: u128) {
        p.anno_mut().dst_ip6 = Ipv6Addr::from(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_prefixes() {
        let a = u128::from("2001:db8::".parse::<Ipv6Addr>().unwrap());
        assert_eq!(
            u128::parse_prefix("2001:db8::1/32").unwrap(),
            (a, 32),
            "host bits cleared"
        );
        assert_eq!(u128::parse_prefix("::/0").unwrap(), (0, 0));
        assert_eq!(u128::parse_prefix("2001:db8::").unwrap(), (a, 128));
        for bad in ["2001:db8::/129", "1.2.3.4/8", "", "x/8"] {
            assert!(u128::parse_prefix(bad).is_err(), "{}", bad);
        }
        assert_eq!(u128::MAX.masked(0), 0);
        assert_eq!(u128::MAX.masked(128), u128::MAX);
        assert_eq!(u128::MAX.masked(1), 1 << 127);
    }

    #[test]
    fn ipv6_routes_parse_and_print() {
        let r = Route::<u128>::parse("2001:db8:1::/48 2001:db8::2 1").unwrap();
        assert_eq!(r.unparse(true), "2001:db8:1::/48\t2001:db8::2\t1");
        let r = Route::<u128>::parse("::/0 3").unwrap();
        assert_eq!(r.unparse(true), "::/0\t::\t3");
        assert_eq!(r.unparse(false), "::/0 :: 3");
        assert!(Route::<u128>::parse("2001:db8::/32").is_err());
        assert!(Route::<u128>::parse("198.18.0.0/16 1").is_err());
    }
}
