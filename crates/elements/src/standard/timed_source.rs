//! TimedSource — emits a packet every INTERVAL
//!
//! Synopsis: `TimedSource([INTERVAL, DATA, *keywords* LIMIT, STOP, ACTIVE])`
//!
//! Ports: no inputs, 1 push output. A timer emits one packet every INTERVAL, the first one
//! INTERVAL after the router starts. Runs instantly under `--simtime`.
//!
//! Arguments:
//! - `INTERVAL` (time, default 0.5 s): time between packets.
//! - `DATA` (string): packet contents. Default: a short text.
//! - `LIMIT` (integer, default -1): total packets; -1 means no limit.
//! - `STOP` (boolean, default false): raise a driver stop event after LIMIT packets.
//! - `ACTIVE` (boolean, default true): whether packets are emitted.
//!
//! Handlers: `count` (r), `reset` (w), `data` (rw), `interval` (rw), `limit` (rw),
//! `active` (rw).
//!
//! Example: `TimedSource(1s, "hello", LIMIT 3, STOP true) -> Print(t) -> Discard`

use sluice_core::Timestamp;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Packet, Table};
use sluice_lang::args::{unquote_bytes, Args, Data, FromArg, Seconds};

use super::util::{Sender, SenderTable, Sending};

/// The TimedSource element.
pub struct TimedSource {
    interval: Timestamp,
    data: Vec<u8>,
    limit: i64,
    stop: bool,
    sending: Sending,
}

impl Default for TimedSource {
    fn default() -> TimedSource {
        TimedSource {
            interval: Timestamp(500_000_000),
            data: b"Sluice TimedSource packet".to_vec(),
            limit: -1,
            stop: false,
            sending: Sending::default(),
        }
    }
}

impl TimedSource {
    fn done(&self) -> bool {
        self.limit >= 0 && self.sending.count >= self.limit as u64
    }
}

impl Sender for TimedSource {
    fn sending(&self) -> &Sending {
        &self.sending
    }

    fn sending_mut(&mut self) -> &mut Sending {
        &mut self.sending
    }

    /// Starts the timer again if packets remain to be sent.
    fn wake(&self, cx: &mut Cx) {
        if !self.done() && !cx.timer_scheduled(0) {
            cx.schedule_after(0, self.interval);
        }
    }
}

impl Element for TimedSource {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(Seconds(s)) = args.read_p::<Seconds>("INTERVAL")? {
            self.interval = Timestamp::from_secs_f64(s);
        }
        if let Some(d) = args.read_p::<Data>("DATA")? {
            self.data = d.0;
        }
        args.read_into("LIMIT", &mut self.limit)?;
        args.read_into("STOP", &mut self.stop)?;
        args.read_into("ACTIVE", &mut self.sending.active)?;
        if self.interval.0 <= 0 {
            args.error("INTERVAL: must be positive");
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if self.limit != 0 {
            let iv = self.interval;
            cx.schedule_after(0, iv);
        } else if self.stop {
            cx.request_driver_stop();
        }
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if self.done() {
            return;
        }
        if self.sending.active {
            let mut p = Packet::from_bytes(&self.data);
            p.set_timestamp(cx.now());
            self.sending.send(Batch::one(p), cx);
        }
        if self.done() {
            if self.stop {
                cx.request_driver_stop();
            }
        } else {
            let iv = self.interval;
            cx.schedule_after(0, iv);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .count_handler()
            .reset_handler()
            .read("data", |e| String::from_utf8_lossy(&e.data).into_owned())
            .write("data", |e, v, cx| {
                e.data = unquote_bytes(v.trim());
                e.wake(cx);
                Ok(())
            })
            .read("interval", |e| e.interval)
            .write("interval", |e, v, cx| {
                let Seconds(s) =
                    Seconds::from_arg(v.trim()).map_err(|m| format!("interval: {m}"))?;
                if s <= 0.0 {
                    return Err("interval: must be positive".into());
                }
                e.interval = Timestamp::from_secs_f64(s);
                e.wake(cx);
                Ok(())
            })
            .read("limit", |e| e.limit)
            .write("limit", |e, v, cx| {
                e.limit = i64::from_arg(v.trim()).map_err(|m| format!("limit: {m}"))?;
                e.wake(cx);
                Ok(())
            })
            .active_handler()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "TimedSource",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: include_str!("timed_source.rs"),
    make: || Box::new(TimedSource::default()),
};
