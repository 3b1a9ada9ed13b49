//! CheckLength — sends packets longer than a length to output 1
//!
//! Synopsis: `CheckLength(LENGTH)`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, but output 1 is push. Packets of at most LENGTH
//! bytes go to output 0. Longer ones go to output 1 if it exists, or are dropped and counted
//! (reason "pushed to an unconnected output").
//!
//! Arguments: `LENGTH` (unsigned, mandatory).
//!
//! Handlers: `length` (rw). `drops`, `drop_details` (r): long packets dropped when there is
//! no output 1.
//!
//! Example: `cl :: CheckLength(1500) -> ToDevice(eth0); cl[1] -> ICMP6Error(2001:db8::1, 2, 0)
//! -> ...` answers packets too big for the link.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::{pull_split, push_split};

/// The CheckLength element.
#[derive(Default)]
pub struct CheckLength {
    max: usize,
}

impl Element for CheckLength {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.max = args.read_mp("LENGTH")?;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let max = self.max;
        push_split(batch, cx, |p, _| p.len() <= max);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let len = self.max;
        pull_split(max, cx, |p, _| p.len() <= len)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("length", |e| &mut e.max)
            .unconnected_drops()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckLength",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("check_length.rs"),
    make: || Box::<CheckLength>::default(),
};
