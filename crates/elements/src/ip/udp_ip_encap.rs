//! UDPIPEncap — encapsulates packets in static UDP/IP headers
//!
//! Synopsis: `UDPIPEncap(SRC, SPORT, DST, DPORT [, CHECKSUM])`
//!
//! Ports: 1 input, 1 output, agnostic. Prepends an 8-byte UDP header from port SPORT to port
//! DPORT and, in front of it, a 20-byte IPv4 header from SRC to DST with protocol UDP, TOS 0,
//! TTL 250, no flags, an identification counting up from 0 (one per packet), the total length
//! of the result and a correct checksum. The UDP length covers the header and the whole
//! original packet; the UDP checksum (over the IPv4 pseudo-header) is computed when CHECKSUM
//! is true and left 0 otherwise. Sets the network header annotation, the transport header
//! annotation (the UDP header) and the destination IP annotation (to the destination used).
//! Nothing is dropped. `Strip(28)` removes the encapsulation at the receiver.
//!
//! Arguments:
//! - `SRC`: source address (or AddressInfo name).
//! - `SPORT`, `DPORT`: source and destination ports (0–65535, or a service name such as
//!   `domain` or `www`).
//! - `DST`: destination address (or AddressInfo name), or `DST_ANNO` to use each packet's
//!   destination IP annotation.
//! - `CHECKSUM` (bool, default true): compute the UDP checksum.
//!
//! Handlers: `src` (rw), `sport` (rw), `dst` (rw, an address or `DST_ANNO`), `dport` (rw).
//!
//! Example: `UDPIPEncap(198.18.0.1, 1234, 198.19.0.2, 4789)` tunnels frames over UDP.

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::ipv4::{HEADER_LEN, PROTO_UDP};
use sluice_wire::udp::HEADER_LEN as UDP_HEADER_LEN;
use sluice_wire::UdpPacket;
use std::net::Ipv4Addr;

use super::common::{ipv4_header, push_ipv4_header, Endpoints, PortArg};

/// TTL of the IPv4 header.
const TTL: u8 = 250;

/// The UDPIPEncap element.
pub struct UDPIPEncap {
    ends: Endpoints,
    sport: PortArg,
    dport: PortArg,
    checksum: bool,
    id: u16,
}

impl Default for UDPIPEncap {
    fn default() -> Self {
        UDPIPEncap {
            ends: Endpoints::UNSPECIFIED,
            sport: PortArg(0),
            dport: PortArg(0),
            checksum: true,
            id: 0,
        }
    }
}

impl Element for UDPIPEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.ends.src = args.read_mp::<Ipv4Addr>("SRC")?;
        self.sport = args.read_mp("SPORT")?;
        self.ends.dst = args.read_mp("DST")?;
        self.dport = args.read_mp("DPORT")?;
        self.checksum = args.read_p("CHECKSUM")?.unwrap_or(self.checksum);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let (src, dst) = (self.ends.src, self.ends.dst_of(&p));
        let ip = ipv4_header(PROTO_UDP, src, dst, TTL, self.id);
        self.id = self.id.wrapping_add(1);
        push_ipv4_header(&mut p, ip, UDP_HEADER_LEN);
        let len = (p.len() - HEADER_LEN).min(u16::MAX as usize) as u16;
        let mut udp = UdpPacket::new_unchecked(&mut p.data_mut()[HEADER_LEN..]);
        udp.set_src_port(self.sport.0);
        udp.set_dst_port(self.dport.0);
        udp.set_len(len);
        if self.checksum {
            udp.fill_checksum_v4(src, dst);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("src", |e| &mut e.ends.src)
            .data("sport", |e| &mut e.sport)
            .data("dst", |e| &mut e.ends.dst)
            .data("dport", |e| &mut e.dport)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "UDPIPEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("udp_ip_encap.rs"),
    make: || Box::<UDPIPEncap>::default(),
};
