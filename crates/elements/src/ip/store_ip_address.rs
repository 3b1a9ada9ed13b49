//! StoreIPAddress — stores an IP address into the packet
//!
//! Synopsis: `StoreIPAddress(OFFSET)` or `StoreIPAddress(ADDR, OFFSET)`
//!
//! Ports: 1 input, 1 output, agnostic. Writes the destination IP address annotation (or ADDR,
//! if given) into each packet at OFFSET. When OFFSET names a field of the IP header, the IP
//! header checksum is updated incrementally (RFC 1624). Packets too short for the write are
//! dropped and counted.
//!
//! Arguments:
//! - `ADDR` (IP address, optional; only as the first of two arguments): the address to
//!   store. Without it, each packet's destination IP address annotation is stored.
//! - `OFFSET` (mandatory): an unsigned byte offset from the start of the packet data, or
//!   `src` / `dst` (also `ip src` / `ip dst`): the source or destination address field of the
//!   IP header marked by the network header annotation (or at the start of the packet).
//!
//! Handlers: `drops` (r): packets too short. `drop_details` (r): the same, by reason.
//!
//! Example: `StoreIPAddress(198.18.0.9, dst)`

use std::net::Ipv4Addr;

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why StoreIPAddress drops a packet.
    enum Reason { TooShort => "too short for the address" }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Offset(usize),
    Src,
    Dst,
}

/// The StoreIPAddress element.
pub struct StoreIPAddress {
    addr: Option<Ipv4Addr>,
    target: Target,
    drops: Drops<Reason>,
}

fn parse_target(s: &str) -> Option<Target> {
    match s.trim().to_ascii_lowercase().as_str() {
        "src" | "ip src" => Some(Target::Src),
        "dst" | "ip dst" => Some(Target::Dst),
        t => t.parse().ok().map(Target::Offset),
    }
}

impl Element for StoreIPAddress {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let rest = args.rest();
        let (addr, off) = match rest.len() {
            1 => (None, &rest[0]),
            2 => match Ipv4Addr::from_arg(&rest[0]) {
                Ok(a) => (Some(a), &rest[1]),
                Err(e) => {
                    args.error(format!("ADDR: {}", e));
                    return Err(());
                }
            },
            _ => {
                args.error("expected 'OFFSET' or 'ADDR, OFFSET'");
                return Err(());
            }
        };
        match parse_target(off) {
            Some(t) => self.target = t,
            None => {
                args.error("OFFSET: expected unsigned integer, 'src' or 'dst'");
                return Err(());
            }
        }
        self.addr = addr;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let a = self.addr.unwrap_or(p.dst_ip_anno());
        match self.target {
            Target::Offset(o) => {
                if p.len() < o + 4 {
                    self.drops.count(Reason::TooShort);
                    return None;
                }
                p.data_mut()[o..o + 4].copy_from_slice(&a.octets());
            }
            Target::Src | Target::Dst => {
                let off = ip_offset(&p);
                if p.len() < off + 20 {
                    self.drops.count(Reason::TooShort);
                    return None;
                }
                let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
                if self.target == Target::Src {
                    ip.set_src_update_checksum(a);
                } else {
                    ip.set_dst_update_checksum(a);
                }
            }
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StoreIPAddress",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("store_ip_address.rs"),
    make: || {
        Box::new(StoreIPAddress {
            addr: None,
            target: Target::Offset(0),
            drops: Drops::default(),
        })
    },
};
