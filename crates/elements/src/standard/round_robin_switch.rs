//! RoundRobinSwitch — sends packets to its outputs in turn
//!
//! Synopsis: `RoundRobinSwitch`
//!
//! Ports: 1 push input, 1 or more push outputs. The first packet goes to output 0, the next to
//! output 1, and so on, wrapping around. Packets keep their order within each output.
//!
//! Handlers: `count` (r, packets switched), `reset` (w, restart at output 0).
//!
//! Example: `src -> rr :: RoundRobinSwitch; rr[0] -> q0 :: Queue; rr[1] -> q1 :: Queue`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::util::PortBatches;

/// The RoundRobinSwitch element.
pub struct RoundRobinSwitch {
    next: usize,
    count: u64,
    outs: PortBatches,
}

impl Default for RoundRobinSwitch {
    fn default() -> RoundRobinSwitch {
        RoundRobinSwitch {
            next: 0,
            count: 0,
            outs: PortBatches::new(0),
        }
    }
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

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("count"), Handler::w("reset")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "count").then(|| self.count.to_string())
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset" => {
                self.next = 0;
                self.count = 0;
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
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
