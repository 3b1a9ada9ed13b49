//! PrioSched — pulls from the highest-priority input that has packets
//!
//! Synopsis: `PrioSched`
//!
//! Ports: any number of pull inputs, 1 pull output. A pull tries input 0 first, then input 1,
//! and so on, and returns the packets of the first input that has any: input 0 has strict
//! priority. PrioSched has no task and offers no notifier of its own: pullers downstream find
//! the empty notifiers of the queues behind every input through it (router context), so they
//! sleep while all of them are empty.
//!
//! Arguments: none.
//!
//! Handlers: none besides the router's.
//!
//! Example: `hi :: Queue -> [0]ps :: PrioSched; lo :: Queue -> [1]ps; ps -> ToDevice(eth0)`

use sluice_core::{Batch, Cx, Element, ElementClass};

/// The PrioSched element.
#[derive(Default)]
pub struct PrioSched;

impl Element for PrioSched {
    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        for i in 0..cx.ninputs() {
            let b = cx.pull(i, max);
            if !b.is_empty() {
                return b;
            }
        }
        Batch::new()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PrioSched",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("prio_sched.rs"),
    make: || Box::new(PrioSched),
};
