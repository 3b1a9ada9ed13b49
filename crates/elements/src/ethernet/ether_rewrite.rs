//! EtherRewrite — rewrites the Ethernet source and destination addresses
//!
//! Synopsis: `EtherRewrite(SRC, DST)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects packets starting with an Ethernet header and
//! overwrites its source and destination addresses (the type is kept). Packets shorter than
//! 14 bytes are dropped and counted.
//!
//! Arguments:
//! - `SRC` (Ethernet address, mandatory): the new source address.
//! - `DST` (Ethernet address, mandatory): the new destination address.
//!
//! Handlers: `src` (rw), `dst` (rw), `drops`, `drop_details` (r): runt packets dropped.
//!
//! Example: `EtherRewrite(00:00:c0:4f:71:ef, 00:00:c0:ae:67:ef)`

use sluice_core::Table;
use sluice_core::{drop_reasons, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Packet};
use sluice_lang::args::Args;
use sluice_wire::EtherAddr;

drop_reasons! {
    /// Why EtherRewrite drops a packet.
    enum Reason { Runt => "runt frame" }
}

/// The EtherRewrite element.
#[derive(Default)]
pub struct EtherRewrite {
    src: EtherAddr,
    dst: EtherAddr,
    drops: Drops<Reason>,
}

impl Element for EtherRewrite {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<EtherAddr>("SRC")?;
        self.dst = args.read_mp::<EtherAddr>("DST")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < 14 {
            self.drops.count(Reason::Runt);
            return None;
        }
        let d = p.data_mut();
        d[0..6].copy_from_slice(&self.dst.0);
        d[6..12].copy_from_slice(&self.src.0);
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
    name: "EtherRewrite",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ether_rewrite.rs"),
    make: || Box::new(EtherRewrite::default()),
};
