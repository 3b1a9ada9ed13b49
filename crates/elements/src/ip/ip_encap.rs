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
//! Handlers: `src` (rw), `dst` (rw).
//!
//! Example: `IPEncap(ipip, 198.18.0.1, 198.19.0.1)` for an IP-in-IP tunnel.

use std::net::Ipv4Addr;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::Ipv4Packet;

use super::common::{IpArg, ProtoArg};

/// The IPEncap element.
pub struct IPEncap {
    proto: u8,
    src: Ipv4Addr,
    dst: Option<Ipv4Addr>,
    tos: u8,
    ttl: u8,
    df: bool,
    id: u16,
}

impl Element for IPEncap {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.proto = args.read_mp::<ProtoArg>("PROTO")?.0;
        self.src = args.read_mp::<IpArg>("SRC")?.0;
        let d: String = args.read_mp("DST")?;
        self.dst = if d.trim() == "DST_ANNO" {
            None
        } else {
            match IpArg::from_arg(&d) {
                Ok(a) => Some(a.0),
                Err(e) => {
                    args.error(format!("DST: {}", e));
                    return Err(());
                }
            }
        };
        self.tos = args.read::<u8>("TOS")?.unwrap_or(0);
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
        self.ttl = args.read::<u8>("TTL")?.unwrap_or(250);
        self.df = args.read::<bool>("DF")?.unwrap_or(false);
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let total = (p.len() + 20).min(u16::MAX as usize) as u16;
        let dst = self.dst.unwrap_or(p.dst_ip_anno());
        self.id = self.id.wrapping_add(1);
        let h = p.push_front(20);
        let mut ip = Ipv4Packet::new_unchecked(&mut h[..]);
        ip.set_version(4);
        ip.set_header_len(20);
        ip.set_tos(self.tos);
        ip.set_total_len(total);
        ip.set_ident(self.id);
        ip.set_flags_frag(if self.df { 0x4000 } else { 0 });
        ip.set_ttl(self.ttl);
        ip.set_protocol(self.proto);
        ip.set_src(self.src);
        ip.set_dst(dst);
        ip.fill_checksum();
        p.set_network_offset(0);
        p.set_transport_offset(20);
        p.set_dst_ip_anno(dst);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("src"), Handler::rw("dst")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "src" => Some(self.src.to_string()),
            "dst" => Some(self.dst.map_or("DST_ANNO".into(), |d| d.to_string())),
            _ => None,
        }
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "src" => self.src = IpArg::from_arg(v)?.0,
            "dst" => self.dst = Some(IpArg::from_arg(v)?.0),
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPEncap",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip_encap.rs"),
    make: || {
        Box::new(IPEncap {
            proto: 0,
            src: Ipv4Addr::UNSPECIFIED,
            dst: None,
            tos: 0,
            ttl: 250,
            df: false,
            id: 0,
        })
    },
};
