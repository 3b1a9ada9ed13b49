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

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Timestamp};
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

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("count"),
                Handler::r("byte_count"),
                Handler::r("rate"),
                Handler::r("byte_rate"),
                Handler::r("bit_rate"),
                Handler::w("reset"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "byte_count" => self.bytes.to_string(),
            "rate" => self.per_sec(self.count),
            "byte_rate" => self.per_sec(self.bytes),
            "bit_rate" => self.per_sec(self.bytes * 8),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset" => {
                let ignore = self.ignore;
                *self = AverageCounter {
                    ignore,
                    ..Default::default()
                };
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
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
