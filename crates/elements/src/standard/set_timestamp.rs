//! SetTimestamp — sets packets' timestamp annotations
//!
//! Synopsis: `SetTimestamp([TIMESTAMP])`
//!
//! Ports: 1 input, 1 output, agnostic. Sets each packet's timestamp annotation to TIMESTAMP,
//! or, without it, to the current router time (simulated under `--simtime`).
//!
//! Arguments:
//! - `TIMESTAMP` (`SEC.FRAC`, seconds since the epoch): a fixed timestamp.
//!
//! Handlers: `timestamp` (rw: the fixed timestamp, or `now`).
//!
//! Example: `FromDevice(eth0) -> SetTimestamp -> ToDump(f.pcap)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table, Timestamp};
use sluice_lang::args::Args;

use super::time_filter::parse_timestamp;

/// The SetTimestamp element.
#[derive(Default)]
pub struct SetTimestamp {
    fixed: Option<Timestamp>,
}

/// Parses a TIMESTAMP: `None` (the current time) when empty or `now`.
fn parse_value(v: &str) -> Result<Option<Timestamp>, String> {
    let v = v.trim();
    if v.is_empty() || v.eq_ignore_ascii_case("now") {
        return Ok(None);
    }
    parse_timestamp(v)
        .map(Some)
        .ok_or_else(|| "TIMESTAMP: expected timestamp".to_string())
}

impl Element for SetTimestamp {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(s) = args.read_p::<String>("TIMESTAMP")? {
            self.fixed = parse_value(&s).map_err(|e| args.error(e))?;
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        let t = self.fixed.unwrap_or_else(|| cx.now());
        p.set_timestamp(t);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("timestamp", |e| {
                e.fixed.map_or("now".into(), |t| t.to_string())
            })
            .write("timestamp", |e, v, _| {
                e.fixed = parse_value(v)?;
                Ok(())
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetTimestamp",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_timestamp.rs"),
    make: || Box::new(SetTimestamp::default()),
};
