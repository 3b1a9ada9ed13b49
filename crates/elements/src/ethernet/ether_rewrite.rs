//! EtherRewrite — rewrites the Ethernet source and destination addresses
//!
//! Synopsis: `EtherRewrite(SRC, DST)`
//!
//! Ports: 1 input, 1 output, agnostic. Expects packets starting with an Ethernet header and
//! overwrites its source and destination addresses (the type is kept). Packets shorter than
//! 14 bytes are dropped and counted.
//!
//! Handlers: `src` (rw), `dst` (rw), `drops` (r).
//!
//! Example: `EtherRewrite(00:00:c0:4f:71:ef, 00:00:c0:ae:67:ef)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::EtherAddr;

use crate::ip::common::EthArg;

/// The EtherRewrite element.
#[derive(Default)]
pub struct EtherRewrite {
    src: EtherAddr,
    dst: EtherAddr,
    drops: u64,
}

impl Element for EtherRewrite {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<EthArg>("SRC")?.0;
        self.dst = args.read_mp::<EthArg>("DST")?.0;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() < 14 {
            self.drops += 1;
            return None;
        }
        let d = p.data_mut();
        d[0..6].copy_from_slice(&self.dst.0);
        d[6..12].copy_from_slice(&self.src.0);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("src"), Handler::rw("dst"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "src" => self.src.to_string(),
            "dst" => self.dst.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "src" => self.src = EthArg::from_arg(v)?.0,
            "dst" => self.dst = EthArg::from_arg(v)?.0,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
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
