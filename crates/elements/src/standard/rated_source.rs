//! RatedSource — generates packets at a configurable rate
//!
//! Synopsis: `RatedSource([DATA, RATE, LIMIT, ACTIVE, *keywords* LENGTH, STOP, END_CALL])`
//!
//! Ports: no inputs, 1 output, agnostic. Push: a task emits packet *k* at time
//! `start + k / RATE` (catching up in bursts of at most 32 if it falls behind) and sleeps on a
//! timer until the next packet is due, so under `--simtime` the simulated clock jumps from
//! packet to packet and a timed run finishes at once. Pull: a pull returns at most the packets
//! due by now.
//!
//! Arguments:
//! - `DATA` (string): packet contents. Default: Click's 69 bytes of text.
//! - `RATE` (rate, default 10): packets per second.
//! - `LIMIT` (integer, default -1): total packets; -1 means no limit.
//! - `ACTIVE` (boolean, default true): whether the source runs.
//! - `LENGTH` (integer, at most 262144: `MAX_PACKET_LEN`): packet length; DATA is repeated or
//!   truncated to fit.
//! - `STOP` (boolean, default false): raise a driver stop event when LIMIT is reached.
//! - `END_CALL` (`HANDLER [VALUE]`): write handler called when LIMIT is reached. As in Click,
//!   one whose HANDLER does not exist or is not writable is an initialisation error
//!   (`END_CALL: HANDLER: error`).
//!
//! Each packet's timestamp annotation is set to the time it was emitted.
//!
//! Hot swap: a RatedSource of the same name goes on from the old one's count, on its schedule
//! if RATE is unchanged (otherwise from now at the new rate).
//!
//! Handlers: `count` (r), `reset` (w, zero the count and restart), `data` (rw), `rate` (rw),
//! `limit` (rw), `active` (rw), `length` (rw).
//!
//! Example: `RatedSource(RATE 100, LIMIT 500, STOP true) -> c :: Counter -> Discard` sends 500
//! packets over about 5 seconds (instantly under `--simtime`).

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Timestamp};
use sluice_lang::args::{Args, FromArg, Rate};

use super::util::{fmt_f64, Source, SourceCore};

/// The RatedSource element.
pub struct RatedSource {
    core: SourceCore,
    rate: f64,
    /// Time of the packet numbered `base`.
    start: Option<Timestamp>,
    base: u64,
}

impl Default for RatedSource {
    fn default() -> RatedSource {
        RatedSource {
            core: SourceCore::default(),
            rate: 10.0,
            start: None,
            base: 0,
        }
    }
}

impl Source for RatedSource {
    fn core(&self) -> &SourceCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }

    /// Starts the schedule again from the next packet.
    fn restart(&mut self) {
        self.start = None;
        self.base = self.core.count;
    }
}

impl RatedSource {
    /// Time packet number `k` is due.
    fn due_time(&self, start: Timestamp, k: u64) -> Timestamp {
        let n = k - self.base;
        start + Timestamp((n as f64 * 1e9 / self.rate).ceil() as i64)
    }

    /// Packets due by `now` and not yet sent.
    fn due(&mut self, now: Timestamp) -> u64 {
        if self.rate <= 0.0 {
            return 0;
        }
        let start = *self.start.get_or_insert(now);
        let elapsed = (now - start).0.max(0) as f64 * 1e-9;
        let total = self.base + (elapsed * self.rate + 1e-9).floor() as u64 + 1;
        total
            .saturating_sub(self.core.count)
            .min(self.core.remaining())
    }
}

impl Element for RatedSource {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.core.read_data(args)?;
        self.rate = args.read_p("RATE")?.map_or(self.rate, |Rate(r)| r);
        self.core.read_rest(args, |_| Ok(()))
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.core.initialize(cx)
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.core.active || self.core.remaining() == 0 {
            return false;
        }
        let now = cx.now();
        let n = self.due(now);
        if n > 0 {
            let b = self.core.make_batch(n as usize, Some(now));
            cx.push(0, b);
        }
        if self.core.remaining() == 0 {
            self.core.check_end(cx);
        } else if self.due(now) > 0 {
            cx.reschedule();
        } else if self.rate > 0.0 {
            let start = self.start.unwrap_or(now);
            let at = self.due_time(start, self.core.count);
            cx.schedule_timer(0, at);
        }
        n > 0
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.core.active {
            cx.reschedule();
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.core.active {
            return Batch::new();
        }
        let now = cx.now();
        let n = self.due(now).min(max as u64);
        let b = self.core.make_batch(n as usize, Some(now));
        self.core.check_end(cx);
        b
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<RatedSource>() else {
            return;
        };
        self.core.take_progress(&old.core, cx);
        if old.rate == self.rate {
            (self.start, self.base) = (old.start, old.base);
        } else {
            self.restart();
        }
    }

    fn handler_table(&self) -> Handlers {
        SourceCore::handlers::<Self>(|t| {
            t.read("rate", |e| fmt_f64(e.rate))
                .write("rate", |e, v, cx| {
                    e.rate = Rate::from_arg(v.trim())
                        .map_err(|m| format!("rate: {m}"))?
                        .0;
                    e.restart();
                    e.core.wake(cx);
                    Ok(())
                })
                .setting()
        })
        .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RatedSource",
    ports: "0/1",
    processing: "a/a",
    flow: "",
    source: include_str!("rated_source.rs"),
    make: || Box::new(RatedSource::default()),
};
