//! IPEncap — encapsulates packets in a static IP header
//!
//! Synopsis: `IPEncap(PROTO, SRC, DST, [keywords TOS, DSCP, ECT, CE, TTL, DF])`
//!
//! Ports: 1 input, 1 output, agnostic. Prepends a 20-byte IPv4 header with protocol PROTO,
//! source SRC and destination DST, a fresh identification per packet (counting up), the
//! total length of the result and a correct checksum. Sets the network header annotation and
//! the destination IP annotation (to DST). Nothing is dropped.
//!
//! Arguments:
//! - `PROTO`: protocol number or name (`udp`, `tcp`, `icmp`, `ipip`, `gre`, …).
//! - `SRC`, `DST`: addresses (or AddressInfo names); DST may be `DST_ANNO` to use each
//!   packet's destination annotation.
//! - `TOS` (0–255, default 0) or `DSCP` (0–63) with `ECT`/`CE` (bool); `TTL` (default 250);
//!   `DF` (bool, default false).
//!
//! Handlers: `src` (rw), `dst` (rw, an address or `DST_ANNO`).
//!
//! Example: `IPEncap(ipip, 198.18.0.1, 198.19.0.1)` for an IP-in-IP tunnel.

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Repr;
use std::net::Ipv4Addr;

use super::common::{ipv4_header, push_ipv4_header, Endpoints, ProtoArg};

/// The IPEncap element.
pub struct IPEncap {
    proto: u8,
    ends: Endpoints,
    tos: u8,
    ttl: u8,
    df: bool,
    id: u16,
}

impl Default for IPEncap {
    fn default() -> Self {
        IPEncap {
            proto: 0,
            ends: Endpoints::UNSPECIFIED,
            tos: 0,
            ttl: 250,
            df: false,
            id: 0,
        }
    }
}

impl Element for IPEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.proto = args.read_mp::<ProtoArg>("PROTO")?.0;
        self.ends.src = args.read_mp::<Ipv4Addr>("SRC")?;
        self.ends.dst = args.read_mp("DST")?;
        args.read_into("TOS", &mut self.tos)?;
        if let Some(d) = args.read::<u8>("DSCP")? {
            if d > 63 {
                args.error("DSCP: must be between 0 and 63");
                return Err(());
            }
            self.tos = (d << 2) | (self.tos & 3);
        }
        if args.read::<bool>("ECT")?.unwrap_or(false) {
            self.tos = (self.tos & !3) | 2;
        }
        if args.read::<bool>("CE")?.unwrap_or(false) {
            self.tos |= 3;
        }
        args.read_into("TTL", &mut self.ttl)?;
        args.read_into("DF", &mut self.df)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        self.id = self.id.wrapping_add(1);
        let (src, dst) = (self.ends.src, self.ends.dst_of(&p));
        let ip = Ipv4Repr {
            tos: self.tos,
            dont_frag: self.df,
            ..ipv4_header(self.proto, src, dst, self.ttl, self.id)
        };
        push_ipv4_header(&mut p, ip, 0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.ends, Endpoints::table())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip_encap.rs"),
    make: || Box::<IPEncap>::default(),
};
