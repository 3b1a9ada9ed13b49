//! InfiniteSource — generates packets as fast as it is scheduled
//!
//! Synopsis: `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, *keywords*])`
//!
//! Ports: no inputs, 1 output. Push: a task pushes BURST copies of the packet per run, never
//! more than the queues downstream have room for (the most room any of them has, found
//! through their full notifiers), and sleeps while every one of them is full. Pull: each pull
//! returns copies while the limit allows; an empty notifier tells pullers downstream when the
//! source is inactive or spent, as in Click.
//!
//! Arguments:
//! - `DATA` (string): packet contents (`\<hex>` escapes allowed). Default: Click's 69 bytes of text.
//! - `LIMIT` (integer, default -1): total packets to send; -1 means no limit.
//! - `BURST` (integer, default 1, as Click): packets per task run, pushed as one batch (up
//!   to 32; benchmarks use 32).
//! - `ACTIVE` (boolean, default true): whether the source starts running.
//! - `LENGTH` (integer, at most 262144: `MAX_PACKET_LEN`): packet length; DATA is repeated or
//!   truncated to fit.
//! - `STOP` (boolean, default false): raise a driver stop event when LIMIT is reached.
//! - `END_CALL` (handler): write handler called when LIMIT is reached.
//! - `TIMESTAMP` (boolean, default true): set each packet's timestamp annotation.
//!
//! Handlers: `count` (r), `reset` (w), `data` (rw), `limit` (rw), `burst` (rw), `active` (rw),
//! `length` (rw).
//!
//! Example: `InfiniteSource(LIMIT 1000, STOP true) -> Counter -> Discard`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, BATCH_MAX};
use sluice_lang::args::{unquote_bytes, Args, AtMost, Data, FromArg, PacketLen};

use super::discard::parse_bool;

/// Click's default packet contents (69 bytes).
const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// The InfiniteSource element.
pub struct InfiniteSource {
    data: Vec<u8>,
    limit: i64,
    burst: usize,
    active: bool,
    stop: bool,
    end_call: Option<String>,
    timestamp: bool,
    count: u64,
    ended: bool,
    full: Option<Vec<NotifierId>>,
    /// Active while a pull would return packets (pull output).
    empty_note: NotifierId,
}

impl Default for InfiniteSource {
    fn default() -> InfiniteSource {
        InfiniteSource {
            data: DEFAULT_DATA.to_vec(),
            limit: -1,
            burst: 1,
            active: true,
            stop: false,
            end_call: None,
            timestamp: true,
            count: 0,
            ended: false,
            full: None,
            empty_note: 0,
        }
    }
}

/// Parses an integer handler value.
fn int(name: &str, v: &str) -> Result<i64, String> {
    v.trim()
        .parse()
        .map_err(|_| format!("{}: expected integer", name))
}

impl InfiniteSource {
    fn remaining(&self) -> usize {
        if self.limit < 0 {
            usize::MAX
        } else {
            (self.limit as u64).saturating_sub(self.count) as usize
        }
    }

    fn make_batch(&mut self, max: usize, cx: &Cx) -> Batch {
        let n = max.min(self.burst).min(self.remaining());
        let mut b = Batch::new();
        let ts = if self.timestamp { Some(cx.now()) } else { None };
        for _ in 0..n {
            let mut p = Packet::from_bytes(&self.data);
            if let Some(t) = ts {
                p.set_timestamp(t);
            }
            let _ = b.push(p);
        }
        self.count += n as u64;
        b
    }

    /// Repeats or truncates the packet contents to `len` bytes.
    fn set_length(&mut self, len: usize) {
        if self.data.is_empty() {
            self.data.push(0);
        }
        self.data = self.data.iter().copied().cycle().take(len).collect();
    }

    /// After a handler write: wakes the task (push) or the pullers (pull) if the source has
    /// packets to send.
    fn wake(&self, cx: &mut Cx) {
        if self.active && self.remaining() > 0 {
            if cx.output_is_push(0) {
                cx.reschedule();
            } else {
                cx.set_notifier(self.empty_note, true);
            }
        }
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

impl Element for InfiniteSource {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.empty_note = cx.new_notifier(true);
        cx.provide_empty_notifier(self.empty_note);
        if let Some(d) = args.read_p::<Data>("DATA")? {
            self.data = d.0;
        }
        self.limit = args.read_p("LIMIT")?.unwrap_or(self.limit);
        let burst = args.read_p::<usize>("BURST")?;
        if burst == Some(0) {
            args.error("burst size must be >= 1");
            return Err(());
        }
        self.burst = burst.unwrap_or(self.burst).min(BATCH_MAX);
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        if let Some(AtMost(len)) = args.read::<PacketLen>("LENGTH")? {
            self.set_length(len);
        }
        args.read_into("STOP", &mut self.stop)?;
        self.end_call = args.read("END_CALL")?;
        args.read_into("TIMESTAMP", &mut self.timestamp)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if cx.output_is_push(0) {
            cx.add_task(sluice_core::sched::DEFAULT_TICKETS, self.active);
            self.full = cx.listen_downstream_full(0);
        }
        if self.limit == 0 {
            self.check_end(cx);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active {
            return false;
        }
        let room = self.full.as_deref().map_or(usize::MAX, |f| cx.push_room(f));
        if room == 0 {
            return false;
        }
        // As in Click, the end (END_CALL, STOP) comes at the first run that finds the limit
        // reached, once the queues downstream have room again (without those the task
        // simply ends with its last packets).
        if self.remaining() == 0 {
            self.check_end(cx);
            return false;
        }
        let b = self.make_batch(room.min(BATCH_MAX), cx);
        cx.push(0, b);
        if self.remaining() > 0 || self.stop || self.end_call.is_some() {
            cx.reschedule();
        } else {
            self.check_end(cx);
        }
        true
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if !self.active {
            cx.set_notifier(self.empty_note, false);
            return Batch::new();
        }
        if self.remaining() == 0 {
            self.check_end(cx);
            cx.set_notifier(self.empty_note, false);
            return Batch::new();
        }
        self.make_batch(max, cx)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .write("reset", |e, _, cx| {
                e.count = 0;
                e.ended = false;
                e.wake(cx);
                Ok(())
            })
            .read("data", |e| String::from_utf8_lossy(&e.data).into_owned())
            .write("data", |e, v, cx| {
                e.data = unquote_bytes(v.trim());
                e.wake(cx);
                Ok(())
            })
            .setting()
            .read("limit", |e| e.limit)
            .write("limit", |e, v, cx| {
                e.limit = int("limit", v)?;
                e.ended = false;
                e.wake(cx);
                Ok(())
            })
            .setting()
            .read("burst", |e| e.burst)
            .write("burst", |e, v, cx| {
                e.burst = (int("burst", v)?.max(1) as usize).min(BATCH_MAX);
                e.wake(cx);
                Ok(())
            })
            .setting()
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = parse_bool(v)?;
                e.wake(cx);
                Ok(())
            })
            .setting()
            .read("length", |e| e.data.len())
            .write("length", |e, v, cx| {
                let AtMost(len) =
                    PacketLen::from_arg(v.trim()).map_err(|e| format!("length: {e}"))?;
                e.set_length(len);
                e.wake(cx);
                Ok(())
            })
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "InfiniteSource",
    ports: "0/1",
    processing: "a/a",
    flow: "",
    source: include_str!("infinite_source.rs"),
    make: || Box::new(InfiniteSource::default()),
};
