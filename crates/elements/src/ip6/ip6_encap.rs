//! IP6Encap — encapsulates packets in a static IPv6 header
//!
//! Synopsis: `IP6Encap(PROTO, SRC, DST, [keywords HLIM, CLASS])`
//!
//! Ports: 1 input, 1 output, agnostic. Prepends a 40-byte IPv6 header with next header
//! PROTO, source SRC, destination DST, traffic class CLASS, flow label 0, hop limit HLIM and
//! the payload length of the packet it wraps. Sets the network header annotation (the
//! transport header annotation just after it) and the destination IPv6 annotation (to DST).
//! With DST `DST_ANNO` the destination is each packet's destination IPv6 annotation, unless
//! that is `::`; the header's destination (and the annotation) is then `::`. Packets longer
//! than 65,535 bytes, which a payload length cannot describe, are dropped and counted.
//!
//! Arguments:
//! - `PROTO`: next header, a number or a name (`udp`, `tcp`, `icmp6`, `ipip` for IPv4 in
//!   IPv6, `ipv6`, `gre`, …).
//! - `SRC`: address (or AddressInfo name).
//! - `DST`: address, AddressInfo name or `DST_ANNO`.
//! - `HLIM` (0–255, default 250): hop limit.
//! - `CLASS` (0–255, default 0): traffic class.
//!
//! Handlers: `src` (rw), `dst` (rw, an address or `DST_ANNO`). `drops` (r): packets too long.
//! `drop_details` (r): the same, by reason.
//!
//! Example: `IP6Encap(ipip, 2001:db8:1::2, 2001:db8:2::2, HLIM 20)` for IPv4 in IPv6.

use std::fmt;
use std::net::Ipv6Addr;

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::ipv6::HEADER_LEN;
use sluice_wire::Ipv6Packet;

use super::common::Ip6;
use crate::ip::common::ProtoArg;

drop_reasons! {
    /// Why IP6Encap drops a packet.
    enum Reason { TooLong => "too long for an IPv6 payload length" }
}

/// A destination argument that may also be `DST_ANNO` (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Dst6(Option<Ip6>);

impl FromArg for Dst6 {
    fn from_arg(s: &str) -> Result<Self, String> {
        if s.trim() == "DST_ANNO" {
            return Ok(Dst6(None));
        }
        Ip6::from_arg(s)
            .map(|a| Dst6(Some(a)))
            .map_err(|_| "DST argument should be IP address or 'DST_ANNO'".into())
    }
}

impl fmt::Display for Dst6 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(a) => a.fmt(f),
            None => f.write_str("DST_ANNO"),
        }
    }
}

/// The IP6Encap element.
pub struct IP6Encap {
    proto: u8,
    src: Ip6,
    dst: Dst6,
    hlim: u8,
    class: u8,
    drops: Drops<Reason>,
}

impl Default for IP6Encap {
    fn default() -> Self {
        IP6Encap {
            proto: 0,
            src: Ip6(Ipv6Addr::UNSPECIFIED),
            dst: Dst6(None),
            hlim: 250,
            class: 0,
            drops: Drops::default(),
        }
    }
}

impl Element for IP6Encap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.proto = args.read_mp::<ProtoArg>("PROTO")?.0;
        self.src = args.read_mp("SRC")?;
        self.dst = args.read_mp("DST")?;
        args.read_into("HLIM", &mut self.hlim)?;
        args.read_into("CLASS", &mut self.class)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let Ok(plen) = u16::try_from(p.len()) else {
            self.drops.count(Reason::TooLong);
            return None;
        };
        let dst = match self.dst.0 {
            Some(a) => a.0,
            None => p.dst_ip6_anno(),
        };
        let h = p.push_front(HEADER_LEN);
        h.fill(0);
        let mut ip = Ipv6Packet::new_unchecked(h);
        ip.set_version(6);
        ip.set_traffic_class(self.class);
        ip.set_payload_len(plen);
        ip.set_next_header(self.proto);
        ip.set_hop_limit(self.hlim);
        ip.set_src(&self.src.0);
        ip.set_dst(&dst);
        p.set_network_offset(0);
        p.set_transport_offset(HEADER_LEN as isize);
        p.set_dst_ip6_anno(dst);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("src", |e| &mut e.src)
            .data("dst", |e| &mut e.dst)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IP6Encap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip6_encap.rs"),
    make: || Box::<IP6Encap>::default(),
};
