//! AdjustTimestamp — shifts packets' timestamp annotations
//!
//! Synopsis: `AdjustTimestamp(TIME [, keywords ALL])`
//!
//! Ports: 1 input, 1 output, agnostic. Adds TIME (which may be negative, e.g. `-1.5s`) to each
//! packet's timestamp annotation. A zero timestamp (no timestamp) is left alone unless ALL is
//! true, as in Click.
//!
//! Arguments:
//! - `TIME` (signed time, mandatory).
//! - `ALL` (boolean, default false): adjust zero timestamps too.
//!
//! Handlers: `time` (rw).
//!
//! Example: `FromDump(f.pcap) -> AdjustTimestamp(-3600) -> ToDump(g.pcap)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table, Timestamp};
use sluice_lang::args::{Args, FromArg, Seconds};

/// Parses a signed time (`-1.5s`, `20ms`).
pub(crate) fn parse_signed_time(v: &str) -> Result<Timestamp, String> {
    let v = v.trim();
    let (neg, rest) = match v.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let Seconds(s) = Seconds::from_arg(rest).map_err(|_| "expected time".to_string())?;
    let t = Timestamp::from_secs_f64(s);
    Ok(if neg { Timestamp(-t.0) } else { t })
}

/// The AdjustTimestamp element.
#[derive(Default)]
pub struct AdjustTimestamp {
    delta: Timestamp,
    all: bool,
}

impl Element for AdjustTimestamp {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let s: String = args.read_mp("TIME")?;
        self.delta = parse_signed_time(&s).map_err(|e| args.error(format!("TIME: {}", e)))?;
        args.read_into("ALL", &mut self.all)
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        let t = p.timestamp();
        if t != Timestamp::ZERO || self.all {
            p.set_timestamp(t + self.delta);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("time", |e| e.delta)
            .write("time", |e, v, _| parse_signed_time(v).map(|t| e.delta = t))
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AdjustTimestamp",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("adjust_timestamp.rs"),
    make: || Box::new(AdjustTimestamp::default()),
};
