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
//! - `INLINE` (boolean, default false): accepted for Click's sake; Sluice's Bypass always
//!   stays in the graph (a direct call, no rewiring of its neighbours).
//!
//! Handlers: `active` (rw).
//!
//! Example: `src -> b :: Bypass -> sink; b[1] -> Print(debug) -> sink;`, then write
//! `b.active true` to turn printing on.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::discard::parse_bool;

/// The Bypass element.
#[derive(Default)]
pub struct Bypass {
    active: bool,
}

impl Element for Bypass {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.active = args.read_p("ACTIVE")?.unwrap_or(false);
        let _inline: Option<bool> = args.read("INLINE")?;
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

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("active")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "active").then(|| self.active.to_string())
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "active" => self.active = parse_bool(value)?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
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
