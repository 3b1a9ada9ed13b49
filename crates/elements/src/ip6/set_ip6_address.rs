//! SetIP6Address — sets the destination IPv6 address annotation
//!
//! Synopsis: `SetIP6Address(IPADDR)`
//!
//! Ports: 1 input, 1 output, agnostic. Sets each packet's destination IPv6 address
//! annotation to IPADDR. Nothing is dropped.
//!
//! Arguments:
//! - `IPADDR` (IPv6 address or AddressInfo name, mandatory): the address to set.
//!
//! Handlers: `addr` (rw): the address.
//!
//! Example: `SetIP6Address(2001:db8::fe) -> IP6NDSolicitor(...)`

use std::net::Ipv6Addr;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

use super::common::Ip6;

/// The SetIP6Address element.
pub struct SetIP6Address {
    addr: Ip6,
}

impl Element for SetIP6Address {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.addr = args.read_mp("IPADDR")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.set_dst_ip6_anno(self.addr.0);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().data("addr", |e| &mut e.addr).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetIP6Address",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_ip6_address.rs"),
    make: || {
        Box::new(SetIP6Address {
            addr: Ip6(Ipv6Addr::UNSPECIFIED),
        })
    },
};
