//! FixIPSrc — sets the IP source address if the fix-IP-source annotation is set
//!
//! Synopsis: `FixIPSrc(IPADDR)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects IP packets with the network header annotation
//! (or starting with their IP header). When a packet's fix-IP-source annotation is set (by
//! ICMPError, so the error's source becomes the address of the interface it leaves by, as RFC
//! 1812 §4.3.2.4 asks), clears the annotation, sets the source address to IPADDR and
//! recomputes the header checksum. Other packets pass unchanged. Annotated packets too short
//! to hold an IP header are dropped and counted.
//!
//! Handlers: `fixed` (r): packets rewritten. `drops` (r): malformed packets dropped.
//!
//! Example: `IPGWOptions(198.18.0.1) -> FixIPSrc(198.18.0.1) -> DecIPTTL -> ...`

use std::net::Ipv4Addr;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::common::{ip_offset, IpArg};

/// The FixIPSrc element.
pub struct FixIPSrc {
    addr: Ipv4Addr,
    fixed: u64,
    drops: u64,
}

impl Element for FixIPSrc {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.addr = args.read_mp::<IpArg>("IPADDR")?.0;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if !p.anno().fix_ip_src {
            return Some(p);
        }
        p.anno_mut().fix_ip_src = false;
        let off = ip_offset(&p);
        let ok = Ipv4Packet::new_checked_truncated(&p.data()[off..]).is_ok();
        if !ok {
            self.drops += 1;
            return None;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        ip.set_src(self.addr);
        ip.fill_checksum();
        self.fixed += 1;
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("fixed"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "fixed" => Some(self.fixed.to_string()),
            "drops" => Some(self.drops.to_string()),
            _ => None,
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "FixIPSrc",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("fix_ip_src.rs"),
    make: || {
        Box::new(FixIPSrc {
            addr: Ipv4Addr::UNSPECIFIED,
            fixed: 0,
            drops: 0,
        })
    },
};
