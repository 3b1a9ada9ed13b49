//! Switch — sends packets to one output, chosen by a handler
//!
//! Synopsis: `Switch([OUTPUT])`
//!
//! Ports: 1 push input, any number of push outputs. Every packet goes to output OUTPUT; with
//! OUTPUT -1 (or an output that does not exist) packets are dropped and counted. The `switch`
//! handler changes the output while the router runs.
//!
//! Arguments:
//! - `OUTPUT` (integer, default 0).
//!
//! Handlers: `switch` (rw: the output, -1 drops), `drops` (r).
//!
//! Example: `s :: Switch(0); s[0] -> Discard; s[1] -> ToDevice(eth0)`, then write
//! `s.switch 1`.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

/// The Switch element (also StaticSwitch).
#[derive(Default)]
pub struct Switch {
    pub(crate) output: i32,
    drops: u64,
}

/// Parses and checks an output number against `n` outputs (-1 allowed).
pub(crate) fn parse_output(v: &str, n: usize) -> Result<i32, String> {
    let k: i32 = v
        .trim()
        .parse()
        .map_err(|_| "switch: expected integer".to_string())?;
    if k < -1 || k >= n as i32 {
        return Err(format!(
            "switch: output {} out of range (0-{}, or -1)",
            k,
            n as i32 - 1
        ));
    }
    Ok(k)
}

impl Element for Switch {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.output = args.read_p("OUTPUT")?.unwrap_or(0);
        if self.output < -1 {
            args.error("OUTPUT: must be -1 or an output number");
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        if self.output >= 0 && (self.output as usize) < cx.noutputs() {
            cx.push(self.output as usize, batch);
        } else {
            self.drops += batch.len() as u64;
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("switch"), Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "switch" => self.output.to_string(),
            "drops" => self.drops.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "switch" => self.output = parse_output(value, cx.noutputs())?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Switch",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("switch.rs"),
    make: || Box::new(Switch::default()),
};
