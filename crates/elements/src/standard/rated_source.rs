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
//! - `END_CALL` (handler): write handler called when LIMIT is reached.
//!
//! Each packet's timestamp annotation is set to the time it was emitted.
//!
//! Handlers: `count` (r), `reset` (w, zero the count and restart), `data` (rw), `rate` (rw),
//! `limit` (rw), `active` (rw), `length` (rw).
//!
//! Example: `RatedSource(RATE 100, LIMIT 500, STOP true) -> c :: Counter -> Discard` sends 500
//! packets over about 5 seconds (instantly under `--simtime`).

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet};
use sluice_core::{Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{unquote_bytes, Args, AtMost, Data, FromArg, PacketLen, Rate};

use super::util::fmt_f64;

/// Click's default packet contents (69 bytes).
const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// The RatedSource element.
pub struct RatedSource {
    data: Vec<u8>,
    rate: f64,
    limit: i64,
    active: bool,
    stop: bool,
    end_call: Option<String>,
    count: u64,
    /// Time of the packet numbered `base`.
    start: Option<Timestamp>,
    base: u64,
    ended: bool,
}

impl Default for RatedSource {
    fn default() -> RatedSource {
        RatedSource {
            data: DEFAULT_DATA.to_vec(),
            rate: 10.0,
            limit: -1,
            active: true,
            stop: false,
            end_call: None,
            count: 0,
            start: None,
            base: 0,
            ended: false,
        }
    }
}

/// Repeats or truncates `data` to `len` bytes.
pub(crate) fn fit_length(data: &[u8], len: usize) -> Vec<u8> {
    let src: &[u8] = if data.is_empty() { &[0] } else { data };
    src.iter().copied().cycle().take(len).collect()
}

impl RatedSource {
    fn remaining(&self) -> u64 {
        if self.limit < 0 {
            u64::MAX
        } else {
            (self.limit as u64).saturating_sub(self.count)
        }
    }

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
        total.saturating_sub(self.count).min(self.remaining())
    }

    /// Starts the schedule again from the next packet.
    fn restart(&mut self) {
        self.start = None;
        self.base = self.count;
    }

    /// After a handler write: runs the task, which may have packets to send now.
    fn wake(&self, cx: &mut Cx) -> Result<(), String> {
        if self.active && cx.output_is_push(0) {
            cx.reschedule();
        }
        Ok(())
    }

    fn make_batch(&mut self, n: usize, now: Timestamp) -> Batch {
        let mut b = Batch::new();
        for _ in 0..n.min(BATCH_MAX) {
            let mut p = Packet::from_bytes(&self.data);
            p.set_timestamp(now);
            let _ = b.push(p);
        }
        self.count += b.len() as u64;
        b
    }

    fn check_end(&mut self, cx: &mut Cx) {
        if self.remaining() == 0 && !self.ended {
            self.ended = true;
            if let Some(h) = self.end_call.clone() {
                if let Err(e) = cx.write_handler(&h, "") {
                    eprintln!("{}: END_CALL {}: {}", cx.name(), h, e);
                }
            }
            if self.stop {
                cx.request_driver_stop();
            }
        }
    }
}

impl Element for RatedSource {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(d) = args.read_p::<Data>("DATA")? {
            self.data = d.0;
        }
        self.rate = args.read_p("RATE")?.map_or(self.rate, |Rate(r)| r);
        self.limit = args.read_p("LIMIT")?.unwrap_or(self.limit);
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        if let Some(AtMost(len)) = args.read::<PacketLen>("LENGTH")? {
            self.data = fit_length(&self.data, len);
        }
        args.read_into("STOP", &mut self.stop)?;
        self.end_call = args.read("END_CALL")?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if cx.output_is_push(0) {
            cx.add_task(sluice_core::sched::DEFAULT_TICKETS, self.active);
        }
        if self.limit == 0 {
            self.check_end(cx);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active || self.remaining() == 0 {
            return false;
        }
        let now = cx.now();
        let n = self.due(now);
        if n > 0 {
            let b = self.make_batch(n as usize, now);
            cx.push(0, b);
        }
        if self.remaining() == 0 {
            self.check_end(cx);
        } else if self.due(now) > 0 {
            cx.reschedule();
        } else if self.rate > 0.0 {
            let start = self.start.unwrap_or(now);
            let at = self.due_time(start, self.count);
            cx.schedule_timer(0, at);
        }
        n > 0
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.active {
            cx.reschedule();
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.active {
            return Batch::new();
        }
        let now = cx.now();
        let n = self.due(now).min(max as u64);
        let b = self.make_batch(n as usize, now);
        self.check_end(cx);
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .write("reset", |e, _, cx| {
                e.count = 0;
                e.ended = false;
                e.restart();
                e.wake(cx)
            })
            .read("data", |e| String::from_utf8_lossy(&e.data).into_owned())
            .write("data", |e, v, cx| {
                e.data = unquote_bytes(v.trim());
                e.wake(cx)
            })
            .read("rate", |e| fmt_f64(e.rate))
            .write("rate", |e, v, cx| {
                e.rate = Rate::from_arg(v.trim())
                    .map_err(|m| format!("rate: {m}"))?
                    .0;
                e.restart();
                e.wake(cx)
            })
            .read("limit", |e| e.limit)
            .write("limit", |e, v, cx| {
                e.limit = i64::from_arg(v.trim()).map_err(|m| format!("limit: {m}"))?;
                e.ended = false;
                e.wake(cx)
            })
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = bool::from_arg(v.trim())?;
                e.restart();
                e.wake(cx)
            })
            .read("length", |e| e.data.len())
            .write("length", |e, v, cx| {
                let AtMost(len) =
                    PacketLen::from_arg(v.trim()).map_err(|m| format!("length: {m}"))?;
                e.data = fit_length(&e.data, len);
                e.wake(cx)
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
