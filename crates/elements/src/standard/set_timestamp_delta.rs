//! SetTimestampDelta — replaces packet timestamps with deltas
//!
//! Synopsis: `SetTimestampDelta([*keywords* TYPE])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets with a zero timestamp pass unchanged. Other
//! packets get their timestamp replaced by a delta: with TYPE RANGE, the timestamp minus the
//! first nonzero timestamp seen (so the first such packet gets 0); with TYPE NOW, the current
//! time minus the timestamp. Nothing is dropped.
//!
//! Arguments:
//! - `TYPE` (`RANGE` or `NOW`, default RANGE). Click's `FIRST` (relative to a first-timestamp
//!   annotation) is refused: Sluice packets carry no such annotation.
//!
//! Handlers: `first` (r, the first nonzero timestamp seen, or 0), `reset` (w, forget it: the
//! next nonzero timestamp becomes the new origin).
//!
//! Example: `FromDump(trace.pcap) -> SetTimestampDelta -> ToIPSummaryDump(-, FIELDS timestamp)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table, Timestamp};
use sluice_lang::args::{Args, Word};

/// The SetTimestampDelta element.
#[derive(Default)]
pub struct SetTimestampDelta {
    now: bool,
    first: Timestamp,
}

impl Element for SetTimestampDelta {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        match args.read::<Word>("TYPE")?.map(|w| w.0) {
            None => {}
            Some(t) if t == "RANGE" => {}
            Some(t) if t == "NOW" => self.now = true,
            Some(t) if t == "FIRST" => {
                args.error("TYPE FIRST needs a first-timestamp annotation, which Sluice packets do not carry");
                return Err(());
            }
            Some(_) => {
                args.error("bad TYPE");
                return Err(());
            }
        }
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        let t = p.timestamp();
        if t != Timestamp::ZERO {
            let d = if self.now {
                cx.now() - t
            } else {
                if self.first == Timestamp::ZERO {
                    self.first = t;
                }
                t - self.first
            };
            p.set_timestamp(d);
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("first", |e| e.first)
            .action("reset", |e| e.first = Timestamp::ZERO)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "SetTimestampDelta",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("set_timestamp_delta.rs"),
    make: || Box::new(SetTimestampDelta::default()),
};
