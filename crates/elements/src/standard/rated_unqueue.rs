//! RatedUnqueue, BandwidthRatedUnqueue — pull packets at a configurable rate and push them out
//!
//! Synopsis: `RatedUnqueue(RATE, [*keywords* BURST_DURATION, BURST_SIZE, BURST, ACTIVE])`,
//! `BandwidthRatedUnqueue(RATE, [*keywords* BURST_DURATION, BURST_BYTES, BURST_SIZE, ACTIVE])`
//!
//! Ports: 1 pull input, 1 push output. A token bucket filled at RATE limits the pulls; each task
//! run pulls what the tokens allow (at most 32 packets). Without tokens the task sleeps on a
//! timer until the next token; with an empty upstream it sleeps on the upstream empty
//! notifiers. Runs instantly under `--simtime`.
//!
//! RatedUnqueue counts packets: RATE is packets per second, and a run pulls as many packets
//! as there are whole tokens. BandwidthRatedUnqueue counts bytes: RATE is a bandwidth
//! (`10Mbps`, `1MBps`, or plain bytes per second); while the bucket holds Click's threshold of
//! 131,072 bytes (the capacity holds the threshold on top of the burst) the task pulls one
//! packet and takes its length.
//!
//! The bucket is Click's, bit for bit: whole tokens per second, refilled once per
//! millisecond by a whole fraction of the capacity. A rate that does not fit the millisecond
//! runs slow exactly as in Click (`RatedUnqueue(100, BURST_SIZE 1)` sends one packet every
//! 11 ms).
//!
//! Arguments:
//! - `RATE` (mandatory): packets per second, or a bandwidth for BandwidthRatedUnqueue.
//! - `BURST_DURATION` (time, default 20 ms): bucket capacity as RATE × duration.
//! - `BURST_SIZE` or `BURST` (RatedUnqueue, packets), `BURST_BYTES` or `BURST_SIZE`
//!   (BandwidthRatedUnqueue, bytes): bucket capacity instead of the duration (not both); at
//!   least 1.
//! - `ACTIVE` (boolean, default true).
//!
//! Handlers: `rate` (rw; packets/s, or bytes/s accepting bandwidth units), `count` (r),
//! `byte_count` (r, BandwidthRatedUnqueue), `reset` (w), `active` (rw).
//!
//! Example: `InfiniteSource -> Queue -> RatedUnqueue(1000) -> ToDevice(eth0)`,
//! `Queue -> BandwidthRatedUnqueue(1Mbps) -> ToDevice(eth0)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Table, BATCH_MAX};
use sluice_lang::args::Args;

use super::util::{read_burst, Burst, Sender, SenderTable, Sending, TokenBucket, Unit};

/// The RatedUnqueue and BandwidthRatedUnqueue elements.
pub struct RatedUnqueue {
    unit: Unit,
    bucket: TokenBucket,
    burst: Burst,
    sending: Sending,
    bytes: u64,
    notifiers: Option<Vec<NotifierId>>,
}

impl RatedUnqueue {
    fn new(unit: Unit) -> RatedUnqueue {
        RatedUnqueue {
            unit,
            bucket: TokenBucket::new(0, 1),
            burst: Burst::Millis(20),
            sending: Sending::default(),
            bytes: 0,
            notifiers: None,
        }
    }
}

impl Sender for RatedUnqueue {
    fn zero_other_counts(&mut self) {
        self.bytes = 0;
    }

    fn sending(&self) -> &Sending {
        &self.sending
    }

    fn sending_mut(&mut self) -> &mut Sending {
        &mut self.sending
    }
}

impl Element for RatedUnqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let rate = self.unit.read_rate(args)?;
        let burst_keys: &[&str] = match self.unit {
            Unit::Packets => &["BURST_SIZE", "BURST"],
            Unit::Bytes => &["BURST_SIZE", "BURST_BYTES"],
        };
        self.burst = read_burst(args, burst_keys)?;
        self.bucket = TokenBucket::new(rate, self.burst.capacity(rate, self.unit));
        args.read_into("ACTIVE", &mut self.sending.active)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, self.sending.active);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.sending.active {
            return false;
        }
        let now = cx.now();
        self.bucket.refill(now);
        let mut out = Batch::new();
        let mut empty = false;
        while out.len() < BATCH_MAX && self.unit.ready(&self.bucket) {
            // Whole packets' worth of tokens at once; byte buckets one packet at a time.
            let want = match self.unit {
                Unit::Packets => self.bucket.size() as usize,
                Unit::Bytes => 1,
            };
            let b = cx.pull(0, want.clamp(1, BATCH_MAX - out.len()));
            if b.is_empty() {
                empty = true;
                break;
            }
            for p in b {
                self.unit.take(&mut self.bucket, &p);
                self.bytes += p.len() as u64;
                let _ = out.push(p);
            }
        }
        let got = self.sending.send(out, cx);
        let more = match &self.notifiers {
            Some(ns) => !empty || got || cx.any_active(ns),
            None => true,
        };
        if more {
            if self.unit.ready(&self.bucket) {
                cx.reschedule();
            } else {
                let w = self.bucket.wait_for(self.unit.threshold());
                cx.schedule_timer(0, now + w);
            }
        }
        got
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.wake(cx);
    }

    fn handler_table(&self) -> Handlers {
        let t = Table::<Self>::new()
            .read("rate", |e| e.bucket.rate())
            .write("rate", |e, v, cx| {
                e.unit.set_rate(&mut e.bucket, e.burst, v)?;
                e.wake(cx);
                Ok(())
            })
            .count_handler();
        let t = match self.unit {
            Unit::Packets => t,
            Unit::Bytes => t.read("byte_count", |e| e.bytes),
        };
        t.reset_handler().active_handler().into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RatedUnqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("rated_unqueue.rs"),
    make: || Box::new(RatedUnqueue::new(Unit::Packets)),
};

/// `BandwidthRatedUnqueue`: the same element counting bytes.
pub const BANDWIDTH_CLASS: ElementClass = ElementClass {
    name: "BandwidthRatedUnqueue",
    make: || Box::new(RatedUnqueue::new(Unit::Bytes)),
    ..CLASS
};
