//! Helpers shared by the IPv4 router elements: address, port and protocol arguments that
//! understand AddressInfo and service names, and the IPv4 header of the encapsulating
//! elements with their `src` and `dst` handlers.

use std::fmt;
use std::net::Ipv4Addr;

use sluice_core::{Handlers, Packet, Table};
use sluice_lang::args::{split_words, FromArg};
use sluice_wire::ipv4::HEADER_LEN;
use sluice_wire::{Ipv4Packet, Ipv4Repr};

/// A destination address argument that may also be `DST_ANNO`, meaning each packet's
/// destination IP annotation (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DstArg(pub Option<Ipv4Addr>);

impl FromArg for DstArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        if s.trim() == "DST_ANNO" {
            return Ok(DstArg(None));
        }
        Ipv4Addr::from_arg(s).map(|a| DstArg(Some(a)))
    }
}

impl fmt::Display for DstArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(a) => a.fmt(f),
            None => f.write_str("DST_ANNO"),
        }
    }
}

/// A space-separated list of IPv4 addresses (names allowed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpList(pub Vec<Ipv4Addr>);

impl FromArg for IpList {
    fn from_arg(s: &str) -> Result<Self, String> {
        let mut v = Vec::new();
        for w in split_words(s) {
            v.push(Ipv4Addr::from_arg(&w)?);
        }
        Ok(IpList(v))
    }
}

/// True for the limited broadcast address, class D multicast or class E addresses, which
/// are never valid sources.
pub fn is_martian_src(a: Ipv4Addr) -> bool {
    a.is_broadcast() || a.is_multicast() || a.octets()[0] >= 240
}

/// Offset of the IP header in the packet data: the network header annotation, or 0.
#[inline]
pub fn ip_offset(p: &Packet) -> usize {
    match p.network_offset() {
        Some(o) if o >= 0 && (o as usize) <= p.len() => o as usize,
        _ => 0,
    }
}

/// Well-known TCP/UDP service names and their ports (a subset of `/etc/services`).
const SERVICES: &[(&str, u16)] = &[
    ("echo", 7),
    ("discard", 9),
    ("daytime", 13),
    ("chargen", 19),
    ("ftp-data", 20),
    ("ftp", 21),
    ("ssh", 22),
    ("telnet", 23),
    ("smtp", 25),
    ("domain", 53),
    ("dns", 53),
    ("bootps", 67),
    ("bootpc", 68),
    ("tftp", 69),
    ("finger", 79),
    ("www", 80),
    ("http", 80),
    ("pop3", 110),
    ("sunrpc", 111),
    ("auth", 113),
    ("nntp", 119),
    ("ntp", 123),
    ("netbios-ns", 137),
    ("netbios-dgm", 138),
    ("netbios-ssn", 139),
    ("snmp", 161),
    ("snmp-trap", 162),
    ("irc", 194),
    ("imap3", 220),
    ("https", 443),
    ("rip", 520),
    ("route", 520),
    ("imaps", 993),
    ("pop3s", 995),
];

/// The port of a well-known service name (`www`, `domain`, `ssh`, …).
pub fn service_port(name: &str) -> Option<u16> {
    sluice_lang::names::lookup_port(name, None)
        .or_else(|| SERVICES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p))
}

/// A TCP/UDP port: a number (0–65535) or a well-known service name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortArg(pub u16);

impl FromArg for PortArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match service_port(&t.to_ascii_lowercase()) {
            Some(p) => Ok(PortArg(p)),
            None => u16::from_arg(t)
                .map(PortArg)
                .map_err(|_| "expected port number or service name".into()),
        }
    }
}

impl fmt::Display for PortArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A protocol number or name (`tcp`, `udp`, `icmp`, `ipip`, `gre`, `esp`, `ah`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtoArg(pub u8);

impl FromArg for ProtoArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        use sluice_wire::ipv4::*;
        let t = s.trim().to_ascii_lowercase();
        Ok(ProtoArg(match t.as_str() {
            "icmp" => PROTO_ICMP,
            "igmp" => PROTO_IGMP,
            "ipip" => PROTO_IPIP,
            "tcp" => PROTO_TCP,
            "udp" => PROTO_UDP,
            "ipv6" => PROTO_IPV6,
            "gre" => PROTO_GRE,
            "esp" => PROTO_ESP,
            "ah" => PROTO_AH,
            "icmp6" | "ipv6-icmp" => PROTO_ICMPV6,
            "sctp" => PROTO_SCTP,
            _ => {
                return u8::from_arg(s)
                    .map(ProtoArg)
                    .map_err(|_| "expected IP protocol".into())
            }
        }))
    }
}

/// The source and destination of an encapsulating element's IPv4 header, with their `src`
/// and `dst` handlers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address, or each packet's destination IP annotation.
    pub dst: DstArg,
}

impl Endpoints {
    /// Both unspecified.
    pub const UNSPECIFIED: Endpoints = Endpoints {
        src: Ipv4Addr::UNSPECIFIED,
        dst: DstArg(None),
    };

    /// The destination of packet `p`.
    pub fn dst_of(&self, p: &Packet) -> Ipv4Addr {
        self.dst.0.unwrap_or(p.dst_ip_anno())
    }

    /// The `src` and `dst` handlers, for an element to [`Table::nest`].
    pub fn table() -> Handlers {
        Table::<Endpoints>::new()
            .data("src", |e| &mut e.src)
            .data("dst", |e| &mut e.dst)
            .into()
    }
}

/// An option-less IPv4 header from `src` to `dst` carrying `protocol`, with TOS 0, no flags,
/// identification `ident` and TTL `ttl`, for [`push_ipv4_header`].
pub fn ipv4_header(protocol: u8, src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, ident: u16) -> Ipv4Repr {
    Ipv4Repr {
        src,
        dst,
        protocol,
        ttl,
        tos: 0,
        ident,
        dont_frag: false,
        payload_len: 0,
    }
}

/// Prepends `transport` zero bytes, for the caller to fill with a transport header, and in
/// front of them the 20-byte IPv4 header `ip` (total length and checksum filled in). Sets the
/// network and transport header annotations and the destination IP annotation to `ip.dst`.
pub fn push_ipv4_header(p: &mut Packet, ip: Ipv4Repr, transport: usize) {
    let payload_len = transport + p.len();
    let h = p.push_front(HEADER_LEN + transport);
    h[HEADER_LEN..].fill(0);
    Ipv4Repr { payload_len, ..ip }.emit(&mut Ipv4Packet::new_unchecked(&mut h[..]));
    p.set_network_offset(0);
    p.set_transport_offset(HEADER_LEN as isize);
    p.set_dst_ip_anno(ip.dst);
}
