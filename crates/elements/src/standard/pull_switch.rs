//! PullSwitch — forwards pulls to one input, chosen by a handler
//!
//! Synopsis: `PullSwitch([INPUT])`
//!
//! Ports: any number of pull inputs, 1 pull output. A pull on the output is forwarded to input
//! INPUT; with INPUT -1 (or an input that does not exist) the pull returns nothing. Pullers
//! downstream sleep on the empty notifiers of every input's queues (found through PullSwitch).
//!
//! Arguments:
//! - `INPUT` (integer, default 0).
//!
//! Handlers: `switch` (rw: the input, -1 for none).
//!
//! Example: `q0 -> [0]ps :: PullSwitch(0); q1 -> [1]ps; ps -> Unqueue -> ...`, then write
//! `ps.switch 1`.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::switch::parse_output;

/// The PullSwitch element.
#[derive(Default)]
pub struct PullSwitch {
    input: i32,
}

impl Element for PullSwitch {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.input = args.read_p("INPUT")?.unwrap_or(0);
        if self.input < -1 {
            args.error("INPUT: must be -1 or an input number");
            return Err(());
        }
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if self.input >= 0 && (self.input as usize) < cx.ninputs() {
            cx.pull(self.input as usize, max)
        } else {
            Batch::new()
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("switch")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "switch").then(|| self.input.to_string())
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "switch" => self.input = parse_output(value, cx.ninputs())?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PullSwitch",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("pull_switch.rs"),
    make: || Box::new(PullSwitch::default()),
};
