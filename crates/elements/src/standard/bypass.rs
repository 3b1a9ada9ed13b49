//! Bypass — switches a packet stream onto an optional path
//!
//! Synopsis: `Bypass([ACTIVE, *keywords* INLINE])`
//!
//! Ports: 1 or 2 inputs, 1 or 2 outputs, agnostic. Normally Bypass acts like Null: push
//! packets leave on output 0 and pulls go to input 0. While ACTIVE is true, a push Bypass
//! emits packets received on input 0 on output 1 and a pull Bypass forwards pulls of output
//! 0 to input 1 (when that port exists; otherwise port 0 is used). The second input (push)
//! or output (pull) reconnects the bypass path: packets pushed into input 1 leave on output
//! 0, pulls of output 1 go to input 0, active or not.
//!
//! Arguments:
//! - `ACTIVE` (boolean, default false).
//! - `INLINE` (boolean, default false): if true, Bypass stays in the path and is called for
//!   every packet. Otherwise, as in Click, it takes itself out: the elements that call it are
//!   wired straight to the peers it currently forwards to, and rewired when `active`
//!   changes, so chains and loops of Bypasses cost nothing and never call an element
//!   re-entrantly.
//!
//! Handlers: `active` (rw).
//!
//! Example: `src -> b :: Bypass -> sink; b[1] -> Print(debug) -> sink;`, then write
//! `b.active true` to turn printing on.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx};
use sluice_core::{PassThrough, Table};
use sluice_lang::args::Args;
use sluice_lang::args::FromArg;

/// The Bypass element.
#[derive(Default)]
pub struct Bypass {
    active: bool,
    inline: bool,
}

impl Bypass {
    /// Wires the callers to the ports this state forwards to (Click's `fix`).
    fn fix(&self, cx: &mut Cx) {
        if self.inline {
            return;
        }
        let (nin, nout) = (cx.ninputs(), cx.noutputs());
        let active = |port: usize, n: usize| usize::from(self.active && port == 0 && n > 1);
        cx.pass_through(Some(PassThrough {
            push: (0..nin).map(|p| Some(active(p, nout))).collect(),
            pull: (0..nout).map(|p| Some(active(p, nin))).collect(),
        }));
    }
}

impl Element for Bypass {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        args.read_into("INLINE", &mut self.inline)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.fix(cx);
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let o = usize::from(self.active && port == 0 && cx.noutputs() > 1);
        cx.push(o, batch);
    }

    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        let i = usize::from(self.active && port == 0 && cx.ninputs() > 1);
        cx.pull(i, max)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                let active = bool::from_arg(v)?;
                if active != e.active {
                    e.active = active;
                    e.fix(cx);
                }
                Ok(())
            })
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Bypass",
    ports: "1-2/1-2",
    processing: "a/a",
    flow: "",
    source: include_str!("bypass.rs"),
    make: || Box::new(Bypass::default()),
};
