//! Counter — counts packets and bytes passing through
//!
//! Synopsis: `Counter([*keywords* COUNT_CALL, BYTE_COUNT_CALL])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass through unchanged.
//!
//! Arguments:
//! - `COUNT_CALL` (`N HANDLER [VALUE]`): when the packet count reaches N, write VALUE to the
//!   write handler HANDLER, before that packet leaves (the packets before it have left). Fires
//!   once, again after a reset.
//! - `BYTE_COUNT_CALL` (`N HANDLER [VALUE]`): the same when the byte count reaches or
//!   exceeds N.
//!
//! Handlers:
//! - `count` (r): packets counted. `byte_count` (r): bytes counted.
//! - `rate` (r): packets per second over the last second of arrivals; `byte_rate`, `bit_rate` (r).
//! - `reset` / `reset_counts` (w): zero the counters and re-arm the calls.
//! - `count_call` (rw): reads N of COUNT_CALL (empty without one); writing `N HANDLER [VALUE]`
//!   replaces it. `byte_count_call` (w): the same for BYTE_COUNT_CALL.
//!
//! Example: `... -> c :: Counter(COUNT_CALL 1000 stop) -> ...` (stop after 1000 packets)

use sluice_core::Timestamp;
use sluice_core::{Batch, Concurrency, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{split_words, Args};

const WINDOW: i64 = 1_000_000_000;

/// A COUNT_CALL or BYTE_COUNT_CALL: the count that fires it and the handler call.
struct Trigger {
    at: u64,
    handler: String,
    value: String,
    fired: bool,
}

impl Trigger {
    /// Parses `N HANDLER [VALUE]`.
    fn parse(what: &str, s: &str) -> Result<Trigger, String> {
        let w = split_words(s);
        match (w.first().and_then(|n| n.parse::<u64>().ok()), w.get(1)) {
            (Some(at), Some(h)) => Ok(Trigger {
                at,
                handler: h.clone(),
                value: w[2..].join(" "),
                fired: false,
            }),
            _ => Err(format!("{}: expected 'N HANDLER [VALUE]'", what)),
        }
    }

    /// Calls the handler once.
    fn fire(&mut self, what: &str, cx: &mut Cx) {
        self.fired = true;
        if let Err(e) = cx.write_handler(&self.handler, &self.value) {
            eprintln!("{}: {} {}: {}", cx.name(), what, self.handler, e);
        }
    }
}

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
    count_call: Option<Trigger>,
    byte_count_call: Option<Trigger>,
}

impl Counter {
    /// True if a call is still to fire.
    fn armed(&self) -> bool {
        self.count_call.as_ref().is_some_and(|t| !t.fired)
            || self.byte_count_call.as_ref().is_some_and(|t| !t.fired)
    }

    /// Counts one packet of `len` bytes; true if a call is due now.
    fn count_one(&mut self, len: usize) -> bool {
        self.count += 1;
        self.bytes += len as u64;
        self.count_call
            .as_ref()
            .is_some_and(|t| !t.fired && self.count == t.at)
            || self
                .byte_count_call
                .as_ref()
                .is_some_and(|t| !t.fired && self.bytes >= t.at)
    }

    /// Fires the calls that are due.
    fn fire_due(&mut self, cx: &mut Cx) {
        if let Some(t) = &mut self.count_call {
            if !t.fired && self.count == t.at {
                t.fire("COUNT_CALL", cx);
            }
        }
        if let Some(t) = &mut self.byte_count_call {
            if !t.fired && self.bytes >= t.at {
                t.fire("BYTE_COUNT_CALL", cx);
            }
        }
    }

    /// Updates the rate window after counting.
    fn update_rate(&mut self, cx: &Cx) {
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
    }

    fn reset(&mut self) {
        self.count = 0;
        self.bytes = 0;
        self.rate = 0.0;
        self.byte_rate = 0.0;
        self.win_start = Timestamp::ZERO;
        for t in [&mut self.count_call, &mut self.byte_count_call]
            .into_iter()
            .flatten()
        {
            t.fired = false;
        }
    }
}

impl Element for Counter {
    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        for (key, slot) in [
            ("COUNT_CALL", &mut self.count_call),
            ("BYTE_COUNT_CALL", &mut self.byte_count_call),
        ] {
            if let Some(cc) = args.read::<String>(key)? {
                *slot = Some(Trigger::parse(key, &cc).map_err(|e| args.error(e))?);
            }
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        if !self.armed() {
            self.count += batch.len() as u64;
            self.bytes += batch.byte_len() as u64;
            self.update_rate(cx);
            cx.push(0, batch);
            return;
        }
        let mut pending = Batch::new();
        for p in batch {
            if self.count_one(p.len()) {
                if !pending.is_empty() {
                    cx.push(0, std::mem::take(&mut pending));
                }
                self.fire_due(cx);
            }
            let _ = pending.push(p);
        }
        self.update_rate(cx);
        if !pending.is_empty() {
            cx.push(0, pending);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        if !b.is_empty() {
            for p in b.iter() {
                if self.count_one(p.len()) {
                    self.fire_due(cx);
                }
            }
            self.update_rate(cx);
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("byte_count", |e| e.bytes)
            .read("rate", |e| format!("{:.0}", e.rate))
            .read("bit_rate", |e| format!("{:.0}", e.byte_rate * 8.0))
            .read("byte_rate", |e| format!("{:.0}", e.byte_rate))
            .action("reset", Counter::reset)
            .action("reset_counts", Counter::reset)
            .read("count_call", |e| {
                e.count_call
                    .as_ref()
                    .map_or(String::new(), |t| t.at.to_string())
            })
            .write("count_call", |e, v, _| {
                Trigger::parse("count_call", v).map(|t| e.count_call = Some(t))
            })
            .setting()
            .write("byte_count_call", |e, v, _| {
                Trigger::parse("byte_count_call", v).map(|t| e.byte_count_call = Some(t))
            })
            .into()
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
