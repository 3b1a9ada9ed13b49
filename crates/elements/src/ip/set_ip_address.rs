//! SetIPAddress — sets the destination IP address annotation
//!
//! Synopsis: `SetIPAddress(ADDR)`
//!
//! Ports: 1 input, 1 output, agnostic. Sets each packet's destination IP address annotation
//! to ADDR. Nothing is dropped.
//!
//! Arguments:
//! - `ADDR` (IP address or AddressInfo name, mandatory): the address to set.
//!
//! Handlers: `addr` (rw): the address.
//!
//! Example: `SetIPAddress(198.18.0.254) -> ARPQuerier(...)`

use std::net::Ipv4Addr;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

/// The SetIPAddress element.
pub struct SetIPAddress {
    addr: Ipv4Addr,
}

impl Element for SetIPAddress {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.addr = args.read_mp::<Ipv4Addr>("ADDR")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        p.set_dst_ip_anno(self.addr);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().data("addr", |e| &mut e.addr).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetIPAddress",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_ip_address.rs"),
    make: || {
        Box::new(SetIPAddress {
            addr: Ipv4Addr::UNSPECIFIED,
        })
    },
};
