//! RoundRobinSched — pulls from its inputs in turn
//!
//! Synopsis: `RoundRobinSched`
//!
//! Ports: any number of pull inputs, 1 pull output. Packets are taken one at a time from the
//! inputs in round-robin order, skipping empty inputs, until the pull is satisfied or a full
//! round finds every input empty; the next pull continues where this one stopped. RoundRobinSched
//! has no task and offers no notifier of its own: pullers downstream find the empty notifiers of
//! the queues behind every input through it (router context), so they sleep while all of them
//! are empty.
//!
//! Arguments: none.
//!
//! Handlers: none besides the router's.
//!
//! Example: `a :: Queue -> [0]rr :: RoundRobinSched; b :: Queue -> [1]rr; rr -> Unqueue -> ...`

use sluice_core::{Batch, Cx, Element, ElementClass};

/// The RoundRobinSched element.
#[derive(Default)]
pub struct RoundRobinSched {
    next: usize,
}

impl Element for RoundRobinSched {
    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let n = cx.ninputs();
        let mut out = Batch::new();
        if n == 0 {
            return out;
        }
        let mut misses = 0;
        while out.len() < max && misses < n {
            let i = self.next % n;
            self.next = (i + 1) % n;
            match cx.pull_one(i) {
                Some(p) => {
                    misses = 0;
                    let _ = out.push(p);
                }
                None => misses += 1,
            }
        }
        out
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RoundRobinSched",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("round_robin_sched.rs"),
    make: || Box::new(RoundRobinSched::default()),
};
