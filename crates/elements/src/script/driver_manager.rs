//! DriverManager — decides when the router stops, by a script stepped by stop events
//!
//! Synopsis: `DriverManager(INSTRUCTIONS...)`
//!
//! Ports: none. A Script of type DRIVER (see `sluice doc Script` for the instructions and
//! substitutions). Driver stop events (raised by `STOP true` sources, FromDump at the end of
//! its file, or `stop` in other scripts) no longer stop the router; instead each one releases
//! a `wait_stop` (or `pause`) in this script. Stop events that arrive while the script is not
//! waiting for one are ignored. The router stops when the script ends or runs `stop`.
//!
//! Extra instructions: `wait_stop [N]` waits for N stop events (default 1); `wait_time TIME`
//! is `wait TIME`. `print c.count` prints the handler's value.
//!
//! Arguments:
//! - `INSTRUCTIONS` (any number, one instruction each): Script's instructions, substitutions
//!   and functions, and the extra ones above. With none the script is `wait_stop, stop`: the
//!   router stops at the first stop event, as without a DriverManager.
//! - `TYPE` (keyword, default `DRIVER`): the script type, as for Script.
//!
//! Handlers: Script's: `step`, `goto`, `run`, `set`, `get`, `position`, `done`, the functions
//! (`add`, ...) and the `export`ed variables.
//!
//! Example: stop after both sources are done, then print a count:
//! `DriverManager(wait_stop 2, read c.count, stop)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table};
use sluice_lang::args::Args;

use super::script::{Script, ScriptType};

/// The DriverManager element.
pub struct DriverManager(Script);

impl Default for DriverManager {
    fn default() -> DriverManager {
        DriverManager(Script::new(ScriptType::Driver, "DriverManager"))
    }
}

impl Element for DriverManager {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.0.configure_insns(args, (0, 0))
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.0.initialize_script(cx);
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.0.timer(cx);
    }

    fn driver_stop_event(&mut self, cx: &mut Cx) {
        self.0.stop_event(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.0, self.0.table())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DriverManager",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("driver_manager.rs"),
    make: || Box::new(DriverManager::default()),
};
