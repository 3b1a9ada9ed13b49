//! PullTee — duplicates pulled packets to push outputs
//!
//! Synopsis: `PullTee([N])`
//!
//! Ports: 1 pull input; output 0 is pull, outputs 1 … N-1 are push. When output 0 is pulled,
//! PullTee pulls from its input, pushes a clone of every packet to each of outputs 1 … N-1
//! (copy-on-write: changes downstream stay independent) and returns the originals on output 0.
//!
//! Arguments:
//! - `N` (integer): number of outputs; an error if the configuration uses another number.
//!
//! Handlers: `count` (r, packets pulled).
//!
//! Example: `q :: Queue -> t :: PullTee -> ToDevice(eth0); t[1] -> ToDump(copy.pcap)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::tee::{check_n, clone_batch};

/// The PullTee element.
#[derive(Default)]
pub struct PullTee {
    count: u64,
}

impl Element for PullTee {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        check_n(args, cx.noutputs())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = cx.pull(0, max);
        if b.is_empty() {
            return b;
        }
        self.count += b.len() as u64;
        for o in 1..cx.noutputs() {
            let c = clone_batch(&mut b);
            cx.push(o, c);
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("count", |e| e.count).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PullTee",
    ports: "1/1-",
    processing: "l/lh",
    flow: "",
    source: include_str!("pull_tee.rs"),
    make: || Box::new(PullTee::default()),
};
