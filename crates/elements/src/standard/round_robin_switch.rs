//! RoundRobinSwitch — sends packets to its outputs in turn
//!
//! Synopsis: `RoundRobinSwitch`
//!
//! Ports: 1 push input, 1 or more push outputs. The first packet goes to output 0, the next to
//! output 1, and so on, wrapping around. Packets keep their order within each output.
//!
//! Arguments: none.
//!
//! Handlers: `count` (r, packets switched), `reset` (w, restart at output 0).
//!
//! Example: `src -> rr :: RoundRobinSwitch; rr[0] -> q0 :: Queue; rr[1] -> q1 :: Queue`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::PortBatches;

/// The RoundRobinSwitch element.
#[derive(Default)]
pub struct RoundRobinSwitch {
    next: usize,
    count: u64,
    outs: PortBatches,
}

impl Element for RoundRobinSwitch {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.outs = PortBatches::new(cx.noutputs());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs().max(1);
        self.count += batch.len() as u64;
        for p in batch {
            let o = self.next;
            self.next = (self.next + 1) % n;
            self.outs.add(o, p, cx);
        }
        self.outs.flush(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .action("reset", |e| {
                e.next = 0;
                e.count = 0;
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RoundRobinSwitch",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("round_robin_switch.rs"),
    make: || Box::new(RoundRobinSwitch::default()),
};
