//! Idle — a source that never sends and a sink that drops
//!
//! Synopsis: `Idle`
//!
//! Ports: any number of inputs and outputs, agnostic. Idle never pushes a packet and answers
//! every pull with nothing; its outputs carry an always-empty notifier, so pullers downstream
//! (Unqueue, Discard, ToDevice) sleep instead of polling. Packets pushed into Idle are dropped
//! and counted; a pull input is never pulled.
//!
//! Arguments: none.
//!
//! Handlers: `drops`, `drop_details` (r, packets pushed in and dropped).
//!
//! Example: `Idle -> Queue -> ToDevice(eth0)` (an unused input); `FromDevice(eth1) -> Idle`.

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, Table};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why Idle drops a packet.
    enum Reason { PushedIn => "pushed into Idle" }
}

/// The Idle element.
#[derive(Default)]
pub struct Idle {
    drops: Drops<Reason>,
}

impl Element for Idle {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let n = cx.new_notifier(false);
        cx.provide_idle_notifier(n);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        self.drops.add(Reason::PushedIn, batch.len() as u64);
    }

    fn pull(&mut self, _port: usize, _max: usize, _cx: &mut Cx) -> Batch {
        Batch::new()
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Idle",
    ports: "-/-",
    processing: "a/a",
    flow: "x/y",
    source: include_str!("idle.rs"),
    make: || Box::new(Idle::default()),
};
