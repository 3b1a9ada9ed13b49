//! Hub — sends each packet out of every output but the one matching its input
//!
//! Synopsis: `Hub()`
//!
//! Ports: any number of push inputs, as many push outputs. A packet arriving on input N
//! leaves on every output except output N, in output order (one packet at a time, as Click):
//! clones on all but the last of those outputs, the original on the last. With a single port
//! pair, the packet has nowhere to go and is dropped and counted.
//!
//! Arguments: none.
//!
//! Handlers: `drops`, `drop_details` (r).
//!
//! Example: `a -> [0]h :: Hub; b -> [1]h; h[0] -> ToDevice(eth0); h[1] -> ToDevice(eth1)`

use sluice_core::{drop_reasons, Batch, Cx, Drops, Element, ElementClass, Handlers, Table};

drop_reasons! {
    /// Why Hub drops a packet.
    enum Reason { NoOtherOutput => "no other output" }
}

/// The Hub element.
#[derive(Default)]
pub struct Hub {
    drops: Drops<Reason>,
}

impl Element for Hub {
    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs();
        if n < 2 {
            self.drops.add(Reason::NoOtherOutput, batch.len() as u64);
            return;
        }
        let last = if port + 1 == n { n - 2 } else { n - 1 };
        for mut p in batch {
            for o in (0..last).filter(|&o| o != port) {
                cx.push_one(o, p.clone_packet());
            }
            cx.push_one(last, p);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Hub",
    ports: "-/=",
    processing: "h/h",
    flow: "",
    source: include_str!("hub.rs"),
    make: || Box::new(Hub::default()),
};
