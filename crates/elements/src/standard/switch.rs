//! Switch — sends packets to one output, chosen by a handler
//!
//! Synopsis: `Switch([OUTPUT])`
//!
//! Ports: 1 push input, any number of push outputs. Every packet goes to output OUTPUT; with
//! OUTPUT -1 (or an output that is not connected) packets are dropped and counted. The
//! `switch` handler changes the output while the router runs.
//!
//! Arguments:
//! - `OUTPUT` (integer, default 0).
//!
//! Handlers: `switch` (rw: the output, -1 drops), `drops` (r), `drop_details` (r: drops by
//! reason).
//!
//! Example: `s :: Switch(0); s[0] -> Discard; s[1] -> ToDevice(eth0)`, then write
//! `s.switch 1`.

use sluice_core::Table;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_lang::args::Args;

drop_reasons! {
    /// Why Switch and StaticSwitch drop a packet.
    pub(crate) enum Reason { Off => "output -1 selected" }
}

/// The Switch element.
#[derive(Default)]
pub struct Switch {
    output: i32,
    drops: Drops<Reason>,
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
        self.output = args.read_p("OUTPUT")?.unwrap_or(self.output);
        if self.output < -1 {
            args.error("OUTPUT: must be -1 or an output number");
            return Err(());
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        match usize::try_from(self.output) {
            Ok(o) => cx.push(o, batch),
            Err(_) => self.drops.add(Reason::Off, batch.len() as u64),
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("switch", |e| e.output)
            .write("switch", |e, v, cx| {
                e.output = parse_output(v, cx.noutputs())?;
                Ok(())
            })
            .drops(|e| &e.drops)
            .into()
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
