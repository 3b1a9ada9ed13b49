//! SimplePullSwitch — forwards pulls to one input, without notification
//!
//! Synopsis: `SimplePullSwitch([INPUT])`
//!
//! Ports: any number of pull inputs, 1 pull output. A pull on the output is forwarded to input
//! INPUT; with INPUT -1 (or an input that does not exist) the pull returns nothing. Unlike
//! PullSwitch it has no notifier of its own: pullers downstream see the notifiers of every
//! input, whichever is selected.
//!
//! Arguments:
//! - `INPUT` (integer, default 0).
//!
//! Handlers: `switch` (rw: the input, -1 for none).
//!
//! Example: `q0 -> [0]s :: SimplePullSwitch(0); q1 -> [1]s; s -> Unqueue -> ...`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::switch::parse_output;

/// The SimplePullSwitch element.
#[derive(Default)]
pub struct SimplePullSwitch {
    input: i32,
}

impl Element for SimplePullSwitch {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.input = args.read_p("INPUT")?.unwrap_or(0);
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        match usize::try_from(self.input) {
            Ok(i) if i < cx.ninputs() => cx.pull(i, max),
            _ => Batch::new(),
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
    name: "SimplePullSwitch",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("simple_pull_switch.rs"),
    make: || Box::new(SimplePullSwitch::default()),
};
