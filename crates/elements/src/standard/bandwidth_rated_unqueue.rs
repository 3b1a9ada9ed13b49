//! BandwidthRatedUnqueue — pulls packets at a configurable bandwidth and pushes them out
//!
//! Synopsis: `BandwidthRatedUnqueue(RATE, [*keywords* BURST_DURATION, BURST_BYTES, ACTIVE])`
//!
//! Ports: 1 pull input, 1 push output. A token bucket filled at RATE bytes per second limits
//! the pulls: while the bucket holds a positive number of bytes the task pulls one packet and
//! takes its length (the bucket may go into debt by at most one packet). Without tokens the
//! task sleeps on a timer; with an empty upstream it sleeps on the upstream empty notifiers.
//! Runs instantly under `--simtime`.
//!
//! Arguments:
//! - `RATE` (bandwidth, mandatory): `10Mbps`, `1MBps`, or plain bytes per second.
//! - `BURST_DURATION` (time, default 20 ms): bucket capacity as RATE × duration.
//! - `BURST_BYTES` / `BURST_SIZE` (integer): bucket capacity in bytes.
//! - `ACTIVE` (boolean, default true).
//!
//! Handlers: `rate` (rw, bytes/s; accepts bandwidth units), `count` (r), `byte_count` (r),
//! `reset` (w), `active` (rw).
//!
//! Example: `Queue -> BandwidthRatedUnqueue(1Mbps) -> ToDevice(eth0)`

use sluice_core::{
    Batch, ConfigCx, Cx, Element, ElementClass, Handler, InitCx, NotifierId, BATCH_MAX,
};
use sluice_lang::args::{Args, Bandwidth};

use super::discard::parse_bool;
use super::rated_unqueue::read_burst;
use super::util::{fmt_f64, TokenBucket};

/// The BandwidthRatedUnqueue element.
pub struct BandwidthRatedUnqueue {
    bucket: TokenBucket,
    burst_dur: f64,
    active: bool,
    count: u64,
    bytes: u64,
    notifiers: Option<Vec<NotifierId>>,
}

impl Default for BandwidthRatedUnqueue {
    fn default() -> BandwidthRatedUnqueue {
        BandwidthRatedUnqueue {
            bucket: TokenBucket::new(0.0, 1.0),
            burst_dur: 0.02,
            active: true,
            count: 0,
            bytes: 0,
            notifiers: None,
        }
    }
}

impl Element for BandwidthRatedUnqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let Bandwidth(rate) = args.read_mp::<Bandwidth>("RATE")?;
        let cap = read_burst(args, rate, &["BURST_SIZE", "BURST_BYTES"])?;
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
        let mut out = Batch::new();
        let mut empty = false;
        while out.len() < BATCH_MAX && self.bucket.tokens() > 1e-6 {
            match cx.pull_one(0) {
                Some(p) => {
                    self.bucket.take(p.len() as f64);
                    self.bytes += p.len() as u64;
                    let _ = out.push(p);
                }
                None => {
                    empty = true;
                    break;
                }
            }
        }
        let got = out.len();
        self.count += got as u64;
        if got > 0 {
            cx.push(0, out);
        }
        let more = match &self.notifiers {
            Some(ns) => !empty || got > 0 || cx.any_active(ns),
            None => true,
        };
        if more {
            if self.bucket.tokens() > 1e-6 {
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
                Handler::r("byte_count"),
                Handler::w("reset"),
                Handler::rw("active"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "rate" => fmt_f64(self.bucket.rate()),
            "count" => self.count.to_string(),
            "byte_count" => self.bytes.to_string(),
            "active" => self.active.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        match name {
            "rate" => {
                let Bandwidth(r) =
                    <Bandwidth as sluice_lang::args::FromArg>::from_arg(value.trim())
                        .map_err(|e| format!("rate: {}", e))?;
                self.bucket.set(r, r * self.burst_dur);
            }
            "reset" => {
                self.count = 0;
                self.bytes = 0;
            }
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
    name: "BandwidthRatedUnqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("bandwidth_rated_unqueue.rs"),
    make: || Box::new(BandwidthRatedUnqueue::default()),
};
