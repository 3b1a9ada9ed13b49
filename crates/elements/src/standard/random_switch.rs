//! RandomSwitch — sends each packet to a random output
//!
//! Synopsis: `RandomSwitch()`
//!
//! Ports: 1 push input, one or more push outputs. Each packet leaves on an output chosen
//! uniformly at random (RandomSeed makes the choices repeatable). Nothing is dropped.
//!
//! Arguments: none.
//!
//! Handlers: none besides the router's.
//!
//! Example: `src -> rs :: RandomSwitch; rs[0] -> q0 :: Queue; rs[1] -> q1 :: Queue`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass};
use sluice_lang::args::Args;

use super::util::{random_u32, PortBatches};

/// The RandomSwitch element.
#[derive(Default)]
pub struct RandomSwitch {
    outs: PortBatches,
}

impl Element for RandomSwitch {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.outs = PortBatches::new(cx.noutputs());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs() as u64;
        for p in batch {
            let o = (random_u32() as u64 * n) >> 32;
            self.outs.add(o as usize, p, cx);
        }
        self.outs.flush(cx);
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RandomSwitch",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("random_switch.rs"),
    make: || Box::new(RandomSwitch::default()),
};
