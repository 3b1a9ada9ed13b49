//! StaticSwitch — sends every packet to one fixed output
//!
//! Synopsis: `StaticSwitch(K)`
//!
//! Ports: 1 push input, any number of push outputs. Every packet goes to output K; with K -1
//! (or an output that does not exist) packets are dropped and counted. Unlike Switch, K cannot
//! change while the router runs.
//!
//! Arguments:
//! - `K` (integer, mandatory).
//!
//! Handlers: `switch` (r), `drops` (r).
//!
//! Example: `StaticSwitch(1)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

/// The StaticSwitch element.
#[derive(Default)]
pub struct StaticSwitch {
    k: i32,
    drops: u64,
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
        if self.k >= 0 && (self.k as usize) < cx.noutputs() {
            cx.push(self.k as usize, batch);
        } else {
            self.drops += batch.len() as u64;
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("switch"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "switch" => self.k.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        })
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
