//! StaticSwitch — sends every packet to one fixed output
//!
//! Synopsis: `StaticSwitch(K)`
//!
//! Ports: 1 push input, any number of push outputs. Every packet goes to output K; with K -1
//! (or an output that is not connected) packets are dropped and counted. Unlike Switch, K cannot
//! change while the router runs.
//!
//! Arguments:
//! - `K` (integer, mandatory).
//!
//! Handlers: `switch` (r), `drops` (r), `drop_details` (r: drops by reason).
//!
//! Example: `StaticSwitch(1)`

use sluice_core::{Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::switch::Reason;

/// The StaticSwitch element.
#[derive(Default)]
pub struct StaticSwitch {
    k: i32,
    drops: Drops<Reason>,
}

impl Element for StaticSwitch {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.k = args.read_mp("K")?;
        if self.k < -1 {
            args.error("K: must be -1 or an output number");
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        match usize::try_from(self.k) {
            Ok(k) => cx.push(k, batch),
            Err(_) => self.drops.add(Reason::Off, batch.len() as u64),
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("switch", |e| e.k)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StaticSwitch",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("static_switch.rs"),
    make: || Box::new(StaticSwitch::default()),
};
