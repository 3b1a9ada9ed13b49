//! Suppressor — passes or suppresses packets port by port
//!
//! Synopsis: `Suppressor`
//!
//! Ports: any number of inputs, the same number of outputs, agnostic; input *i* flows to
//! output *i*. While port *i* is active (the default) packets pass; while it is suppressed,
//! packets pushed into input *i* are dropped and counted, and pulls from output *i* return
//! nothing (a puller downstream then polls: Suppressor offers no notifier of its own).
//!
//! Arguments: none.
//!
//! Handlers: `reset` (w, make every port active), `drops`, `drop_details` (r: packets pushed
//! into a suppressed input), `activeN` (rw, for each port N in use below 64: whether port N
//! passes packets).
//!
//! Example: `s :: Suppressor; a -> [0]s[0] -> x; b -> [1]s[1] -> y`, then write
//! `s.active1 false`.

use sluice_core::Table;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why Suppressor drops a packet.
    enum Reason { Suppressed => "input suppressed" }
}

/// Adds to table `$t` the handlers `activeN` (whether port N passes packets) for the ports N
/// listed that are below `$n`.
macro_rules! active_handlers {
    ($t:ident, $n:expr, $($i:literal)*) => {$(
        if $i < $n {
            $t = $t
                .read(concat!("active", $i), |e| !e.suppressed[$i])
                .write_as(concat!("active", $i), |e, active: bool| e.suppressed[$i] = !active);
        }
    )*};
}

/// The Suppressor element.
#[derive(Default)]
pub struct Suppressor {
    suppressed: Vec<bool>,
    drops: Drops<Reason>,
}

impl Element for Suppressor {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.suppressed = vec![false; cx.ninputs().max(cx.noutputs())];
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        if self.suppressed.get(port).copied().unwrap_or(false) {
            self.drops.add(Reason::Suppressed, batch.len() as u64);
        } else {
            cx.push(port, batch);
        }
    }

    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        if self.suppressed.get(port).copied().unwrap_or(false) {
            Batch::new()
        } else {
            cx.pull(port, max)
        }
    }

    fn handler_table(&self) -> Handlers {
        let n = self.suppressed.len();
        let mut t = Table::<Self>::new()
            .action("reset", |e| e.suppressed.fill(false))
            .drops(|e| &e.drops);
        active_handlers!(t, n,
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
            32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60
            61 62 63);
        t.into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Suppressor",
    ports: "-/=",
    processing: "a/a",
    flow: "#/#",
    source: include_str!("suppressor.rs"),
    make: || Box::new(Suppressor::default()),
};
