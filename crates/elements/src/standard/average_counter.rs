//! AverageCounter — measures the average packet and byte rate
//!
//! Synopsis: `AverageCounter([IGNORE])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass through unchanged. The element counts
//! packets and bytes and reports the average rate between the first and the latest packet
//! counted.
//!
//! Arguments:
//! - `IGNORE` (time, default 0): packets arriving during the first IGNORE seconds after the
//!   first packet are passed on but not counted.
//!
//! Handlers: `count` (r), `byte_count` (r), `rate` (r, packets/s), `byte_rate` (r),
//! `bit_rate` (r), `reset` (w).
//!
//! Example: `FromDump(f.pcap) -> a :: AverageCounter -> Discard`, then read `a.rate`.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table, Timestamp};
use sluice_lang::args::{Args, Seconds};

/// The AverageCounter element.
#[derive(Default)]
pub struct AverageCounter {
    ignore: Timestamp,
    count: u64,
    bytes: u64,
    first: Option<Timestamp>,
    last: Timestamp,
}

impl AverageCounter {
    fn account(&mut self, b: &Batch, now: Timestamp) {
        let first = *self.first.get_or_insert(now);
        if now - first < self.ignore {
            return;
        }
        self.count += b.len() as u64;
        self.bytes += b.byte_len() as u64;
        self.last = now;
    }

    fn secs(&self) -> f64 {
        match self.first {
            Some(f) => (self.last - (f + self.ignore)).0.max(0) as f64 * 1e-9,
            None => 0.0,
        }
    }

    fn per_sec(&self, v: u64) -> String {
        let s = self.secs();
        if s <= 0.0 {
            "0".into()
        } else {
            format!("{:.0}", v as f64 / s)
        }
    }

    fn reset(&mut self) {
        *self = AverageCounter {
            ignore: self.ignore,
            ..Default::default()
        };
    }
}

impl Element for AverageCounter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(Seconds(s)) = args.read_p::<Seconds>("IGNORE")? {
            self.ignore = Timestamp::from_secs_f64(s);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.account(&batch, cx.now());
        cx.push(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        if !b.is_empty() {
            self.account(&b, cx.now());
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("byte_count", |e| e.bytes)
            .read("rate", |e| e.per_sec(e.count))
            .read("byte_rate", |e| e.per_sec(e.bytes))
            .read("bit_rate", |e| e.per_sec(e.bytes * 8))
            .action("reset", AverageCounter::reset)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AverageCounter",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("average_counter.rs"),
    make: || Box::new(AverageCounter::default()),
};
