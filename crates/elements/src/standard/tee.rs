//! Tee — duplicates packets to every output
//!
//! Synopsis: `Tee([N])`
//!
//! Ports: 1 push input, 1 or more push outputs (N if given). Each packet is sent to every
//! output: outputs 0 … N-2 get clones (sharing the data copy-on-write, so a change made
//! downstream of one output is never seen on another), the last output gets the original.
//! Clones are pushed first, in output order.
//!
//! Arguments:
//! - `N` (integer): number of outputs; an error if the configuration uses another number.
//!
//! Handlers: `count` (r, packets received).
//!
//! Example: `src -> t :: Tee(2); t[0] -> Print(a) -> Discard; t[1] -> Queue -> ...`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

/// Reads Tee's optional N and checks it against the outputs in use.
pub(crate) fn check_n(args: &mut Args, have: usize) -> Result<(), ()> {
    if let Some(n) = args.read_p::<usize>("N")? {
        if n != have {
            args.error(format!("{} outputs implies {} arms", have, have));
            return Err(());
        }
    }
    Ok(())
}

/// Clones every packet of `b` into a new batch.
pub(crate) fn clone_batch(b: &mut Batch) -> Batch {
    let mut c = Batch::new();
    for p in b.iter_mut() {
        let _ = c.push(p.clone_packet());
    }
    c
}

/// The Tee element.
#[derive(Default)]
pub struct Tee {
    count: u64,
}

impl Element for Tee {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        check_n(args, cx.noutputs())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.count += batch.len() as u64;
        let last = cx.noutputs().saturating_sub(1);
        for o in 0..last {
            let c = clone_batch(&mut batch);
            cx.push(o, c);
        }
        cx.push(last, batch);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("count", |e| e.count).into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Tee",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("tee.rs"),
    make: || Box::new(Tee::default()),
};
