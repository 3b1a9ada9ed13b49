//! RatedUnqueue — pulls packets at a configurable rate and pushes them out
//!
//! Synopsis: `RatedUnqueue(RATE, [*keywords* BURST_DURATION, BURST_SIZE, BURST, ACTIVE])`
//!
//! Ports: 1 pull input, 1 push output. A token bucket filled at RATE packets per second limits
//! the pulls; each task run pulls as many packets as there are tokens (at most 32). Without
//! tokens the task sleeps on a timer until the next token; with an empty upstream it sleeps on
//! the upstream empty notifiers. Runs instantly under `--simtime`.
//!
//! Arguments:
//! - `RATE` (rate, mandatory): packets per second.
//! - `BURST_DURATION` (time, default 20 ms): bucket capacity as RATE × duration.
//! - `BURST_SIZE` or `BURST` (integer): bucket capacity in packets (overrides the duration);
//!   at least 1.
//! - `ACTIVE` (boolean, default true).
//!
//! Handlers: `rate` (rw), `count` (r), `reset` (w), `active` (rw).
//!
//! Example: `InfiniteSource -> Queue -> RatedUnqueue(1000) -> ToDevice(eth0)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, InitCx, NotifierId, BATCH_MAX};
use sluice_lang::args::{Args, Rate, Seconds};

use super::discard::parse_bool;
use super::util::{fmt_f64, TokenBucket};

/// Reads Click's token-bucket capacity keywords: BURST_DURATION (default 20 ms) and
/// BURST_SIZE / BURST (given as `size_key`).
pub(crate) fn read_burst(args: &mut Args, rate: f64, size_keys: &[&str]) -> Result<f64, ()> {
    let dur = args
        .read::<Seconds>("BURST_DURATION")?
        .map_or(0.02, |s| s.0);
    let mut cap = rate * dur;
    for k in size_keys {
        if let Some(n) = args.read::<f64>(k)? {
            cap = n;
        }
    }
    Ok(cap.max(1.0))
}

/// The RatedUnqueue element.
pub struct RatedUnqueue {
    bucket: TokenBucket,
    burst_dur: f64,
    active: bool,
    count: u64,
    notifiers: Option<Vec<NotifierId>>,
}

impl Default for RatedUnqueue {
    fn default() -> RatedUnqueue {
        RatedUnqueue {
            bucket: TokenBucket::new(0.0, 1.0),
            burst_dur: 0.02,
            active: true,
            count: 0,
            notifiers: None,
        }
    }
}

impl Element for RatedUnqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let Rate(rate) = args.read_mp::<Rate>("RATE")?;
        let cap = read_burst(args, rate, &["BURST_SIZE", "BURST"])?;
        self.burst_dur = cap / rate.max(1e-9);
        self.bucket = TokenBucket::new(rate, cap);
        self.active = args.read("ACTIVE")?.unwrap_or(true);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, self.active);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active {
            return false;
        }
        let now = cx.now();
        self.bucket.refill(now);
        if !self.bucket.has(1.0) {
            let w = self.bucket.wait_for(1.0);
            cx.schedule_timer(0, now + w);
            return false;
        }
        let n = ((self.bucket.tokens() + 1e-6).floor() as usize).clamp(1, BATCH_MAX);
        let b = cx.pull(0, n);
        let got = b.len();
        self.bucket.take(got as f64);
        self.count += got as u64;
        if got > 0 {
            cx.push(0, b);
        }
        let more = match &self.notifiers {
            Some(ns) => got > 0 || cx.any_active(ns),
            None => true,
        };
        if more {
            if self.bucket.has(1.0) {
                cx.reschedule();
            } else {
                let w = self.bucket.wait_for(1.0);
                cx.schedule_timer(0, now + w);
            }
        }
        got > 0
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.active {
            cx.reschedule();
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("rate"),
                Handler::r("count"),
                Handler::w("reset"),
                Handler::rw("active"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "rate" => fmt_f64(self.bucket.rate()),
            "count" => self.count.to_string(),
            "active" => self.active.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "rate" => {
                let Rate(r) = <Rate as sluice_lang::args::FromArg>::from_arg(value.trim())
                    .map_err(|e| format!("rate: {}", e))?;
                self.bucket.set(r, r * self.burst_dur);
            }
            "reset" => self.count = 0,
            "active" => self.active = parse_bool(value)?,
            _ => return Err(format!("no handler {}", name)),
        }
        if self.active {
            cx.reschedule();
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RatedUnqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("rated_unqueue.rs"),
    make: || Box::new(RatedUnqueue::default()),
};
