//! GetIPAddress — sets the destination IP address annotation from packet data
//!
//! Synopsis: `GetIPAddress(OFFSET [, ANNO, *keyword* IP])`
//!
//! Ports: 1 input, 1 output, agnostic. Copies the four bytes at OFFSET from the start of the
//! packet into the destination IP address annotation (16 is the IP destination address when
//! the packet starts with its IP header). With `IP src` or `IP dst` instead of an OFFSET
//! (Sluice also takes `src` or `dst` as the OFFSET), reads that field of the IP header marked
//! by the network header annotation. Packets too short to hold the address are dropped and
//! counted.
//!
//! Arguments: one of OFFSET and IP.
//! - `OFFSET` (integer).
//! - `ANNO` (annotation name): only `DST_IP_ANNO`, the default, is supported.
//! - `IP` (`src` or `dst`).
//!
//! Handlers: `drops` (r): packets too short. `drop_details` (r): the same, by reason.
//!
//! Example: `CheckIPHeader -> GetIPAddress(16) -> StaticIPLookup(...)`

use std::net::Ipv4Addr;

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::{Args, Word};

use super::common::ip_offset;

drop_reasons! {
    /// Why GetIPAddress drops a packet.
    enum Reason { TooShort => "too short for the address" }
}

/// The GetIPAddress element.
#[derive(Default)]
pub struct GetIPAddress {
    offset: usize,
    relative_ip: bool,
    drops: Drops<Reason>,
}

impl Element for GetIPAddress {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let offset = args.read_p::<Word>("OFFSET")?;
        if let Some(Word(a)) = args.read_p::<Word>("ANNO")? {
            if !a.eq_ignore_ascii_case("DST_IP_ANNO") {
                args.error("ANNO: only DST_IP_ANNO is supported");
                return Err(());
            }
        }
        let ip = args.read::<Word>("IP")?;
        let w = match (offset, ip) {
            (Some(Word(o)), None) => o,
            (None, Some(Word(ip))) => format!("ip {ip}"),
            _ => {
                args.error("set one of OFFSET, IP");
                return Err(());
            }
        };
        match w.to_ascii_lowercase().as_str() {
            "src" | "ip src" => (self.offset, self.relative_ip) = (12, true),
            "dst" | "ip dst" => (self.offset, self.relative_ip) = (16, true),
            _ if w.starts_with("ip ") => {
                args.error("bad IP");
                return Err(());
            }
            _ => match w.parse::<usize>() {
                Ok(o) => self.offset = o,
                Err(_) => {
                    args.error("OFFSET: expected unsigned integer, 'src' or 'dst'");
                    return Err(());
                }
            },
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let base = if self.relative_ip { ip_offset(&p) } else { 0 };
        let o = base + self.offset;
        match p.data().get(o..o + 4) {
            Some(b) => {
                let a = Ipv4Addr::new(b[0], b[1], b[2], b[3]);
                p.set_dst_ip_anno(a);
                Some(p)
            }
            None => {
                self.drops.count(Reason::TooShort);
                None
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "GetIPAddress",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("get_ip_address.rs"),
    make: || Box::new(GetIPAddress::default()),
};
