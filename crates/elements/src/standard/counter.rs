//! Counter — counts packets and bytes passing through
//!
//! Synopsis: `Counter([COUNT_CALL N HANDLER])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass through unchanged.
//!
//! Arguments:
//! - `COUNT_CALL` (`N HANDLER [VALUE]`): when the packet count reaches N, write VALUE to the
//!   write handler HANDLER (e.g. `COUNT_CALL 1000 stop`).
//!
//! Handlers:
//! - `count` (r): packets counted. `byte_count` (r): bytes counted.
//! - `rate` (r): packets per second over the last second of arrivals; `byte_rate`, `bit_rate` (r).
//! - `reset` / `reset_counts` (w): zero the counters.

use sluice_core::{Batch, Concurrency, ConfigCx, Cx, Element, ElementClass, Handler, Timestamp};
use sluice_lang::args::{split_words, Args};

const WINDOW: i64 = 1_000_000_000;

/// The Counter element.
#[derive(Default)]
pub struct Counter {
    count: u64,
    bytes: u64,
    win_start: Timestamp,
    win_count: u64,
    win_bytes: u64,
    rate: f64,
    byte_rate: f64,
    count_call: Option<(u64, String, String)>,
}

impl Counter {
    fn account(&mut self, batch: &Batch, cx: &mut Cx) {
        self.count += batch.len() as u64;
        self.bytes += batch.byte_len() as u64;
        let now = cx.now();
        let dt = (now - self.win_start).0;
        if dt >= WINDOW {
            if self.win_start != Timestamp::ZERO {
                let secs = dt as f64 / 1e9;
                self.rate = (self.count - self.win_count) as f64 / secs;
                self.byte_rate = (self.bytes - self.win_bytes) as f64 / secs;
            }
            self.win_start = now;
            self.win_count = self.count;
            self.win_bytes = self.bytes;
        }
        if let Some((n, h, v)) = &self.count_call {
            if self.count >= *n {
                let (h, v) = (h.clone(), v.clone());
                self.count_call = None;
                if let Err(e) = cx.write_handler(&h, &v) {
                    eprintln!("{}: COUNT_CALL {}: {}", cx.name(), h, e);
                }
            }
        }
    }

    fn reset(&mut self) {
        self.count = 0;
        self.bytes = 0;
        self.rate = 0.0;
        self.byte_rate = 0.0;
        self.win_start = Timestamp::ZERO;
    }
}

impl Element for Counter {
    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(cc) = args.read::<String>("COUNT_CALL")? {
            let w = split_words(&cc);
            match (w.first().and_then(|n| n.parse::<u64>().ok()), w.get(1)) {
                (Some(n), Some(h)) => self.count_call = Some((n, h.clone(), w[2..].join(" "))),
                _ => {
                    args.error("COUNT_CALL: expected 'N HANDLER [VALUE]'");
                    return Err(());
                }
            }
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.account(&batch, cx);
        cx.push(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        if !b.is_empty() {
            self.account(&b, cx);
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
                Handler::w("reset_counts"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "byte_count" => self.bytes.to_string(),
            "rate" => format!("{:.0}", self.rate),
            "byte_rate" => format!("{:.0}", self.byte_rate),
            "bit_rate" => format!("{:.0}", self.byte_rate * 8.0),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset" | "reset_counts" => {
                self.reset();
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Counter",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("counter.rs"),
    make: || Box::new(Counter::default()),
};
