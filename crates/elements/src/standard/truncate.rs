//! Truncate — limits packet length
//!
//! Synopsis: `Truncate(LENGTH [, *keywords* EXTRA_LENGTH])`
//!
//! Ports: 1 input, 1 output, agnostic. Shortens each packet longer than LENGTH bytes to its
//! first LENGTH bytes; shorter packets pass unchanged. Nothing is dropped.
//!
//! Arguments:
//! - `LENGTH` (integer, mandatory).
//! - `EXTRA_LENGTH` (boolean, default true): accepted for Click compatibility; Sluice packets
//!   carry no extra-length annotation, so it changes nothing.
//!
//! Handlers: `nbytes` (rw, LENGTH).
//!
//! Example: `FromDevice(eth0) -> Truncate(96) -> ToDump(headers.pcap)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

/// The Truncate element.
#[derive(Default)]
pub struct Truncate {
    nbytes: usize,
}

impl Element for Truncate {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.nbytes = args.read_mp("LENGTH")?;
        args.read::<bool>("EXTRA_LENGTH")?;
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if p.len() > self.nbytes {
            p.take(p.len() - self.nbytes);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("nbytes", |e| &mut e.nbytes)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Truncate",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("truncate.rs"),
    make: || Box::new(Truncate::default()),
};
