//! FixIPSrc — sets the IP source address if the fix-IP-source annotation is set
//!
//! Synopsis: `FixIPSrc(IPADDR)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects IP packets with the network header annotation
//! (or starting with their IP header). When a packet's fix-IP-source annotation is set (by
//! ICMPError, so the error's source becomes the address of the interface it leaves by, as RFC
//! 1812 §4.3.2.4 asks), clears the annotation, sets the source address to IPADDR and
//! recomputes the header checksum. Other packets pass unchanged. Annotated packets without a
//! valid IP header are dropped and counted.
//!
//! Arguments:
//! - `IPADDR` (IP address, mandatory): the source address written into annotated packets.
//!
//! Handlers: `fixed` (r): packets rewritten. `drops` (r): malformed packets dropped.
//! `drop_details` (r): the same, by reason.
//!
//! Example: `IPGWOptions(198.18.0.1) -> FixIPSrc(198.18.0.1) -> DecIPTTL -> ...`

use std::net::Ipv4Addr;

use sluice_core::toolkit::push_sorted_or_pass;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table};
use sluice_lang::args::Args;
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

drop_reasons! {
    /// Why FixIPSrc drops a packet.
    enum Reason { BadHeader => "bad IP header" }
}

/// The FixIPSrc element.
pub struct FixIPSrc {
    addr: Ipv4Addr,
    fixed: u64,
    drops: Drops<Reason>,
}

impl Element for FixIPSrc {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.addr = args.read_mp::<Ipv4Addr>("IPADDR")?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        // Packets without the annotation pass untouched.
        let plain = |p: &Packet| !p.anno().fix_ip_src;
        push_sorted_or_pass(batch, cx, plain, |p, cx| self.action(p, cx));
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if !p.anno().fix_ip_src {
            return Some(p);
        }
        p.anno_mut().fix_ip_src = false;
        let off = ip_offset(&p);
        if Ipv4Packet::new_checked_truncated(&p.data()[off..]).is_err() {
            self.drops.count(Reason::BadHeader);
            return None;
        }
        let mut ip = Ipv4Packet::new_unchecked(&mut p.data_mut()[off..]);
        ip.set_src(self.addr);
        ip.fill_checksum();
        self.fixed += 1;
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("fixed", |e| e.fixed)
            .drops(|e| &e.drops)
            .into()
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
            drops: Drops::default(),
        })
    },
};
