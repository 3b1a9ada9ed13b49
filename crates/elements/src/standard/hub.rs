//! Hub — sends each packet out of every output but the one matching its input
//!
//! Synopsis: `Hub()`
//!
//! Ports: any number of push inputs, as many push outputs. A packet arriving on input N
//! leaves on every output except output N, in output order (one packet at a time, as Click):
//! clones on all but the last of those outputs, the original on the last. With a single port pair, the packet has nowhere
//! to go and is dropped and counted.
//!
//! Handlers: `drops` (r).
//!
//! Example: `a -> [0]h :: Hub; b -> [1]h; h[0] -> ToDevice(eth0); h[1] -> ToDevice(eth1)`

use sluice_core::{Batch, Cx, Element, ElementClass, Handler};

/// The Hub element.
#[derive(Default)]
pub struct Hub {
    drops: u64,
}

impl Element for Hub {
    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs();
        if n < 2 {
            self.drops += batch.len() as u64;
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

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "drops").then(|| self.drops.to_string())
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
