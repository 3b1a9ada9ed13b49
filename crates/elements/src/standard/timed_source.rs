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

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, InitCx, Packet, Timestamp};
use sluice_lang::args::{Args, Data, Seconds};

use super::discard::parse_bool;
use super::util::parse_num;

/// The TimedSource element.
pub struct TimedSource {
    interval: Timestamp,
    data: Vec<u8>,
    limit: i64,
    stop: bool,
    active: bool,
    count: u64,
}

impl Default for TimedSource {
    fn default() -> TimedSource {
        TimedSource {
            interval: Timestamp(500_000_000),
            data: b"Sluice TimedSource packet".to_vec(),
            limit: -1,
            stop: false,
            active: true,
            count: 0,
        }
    }
}

impl TimedSource {
    fn done(&self) -> bool {
        self.limit >= 0 && self.count >= self.limit as u64
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
        self.limit = args.read("LIMIT")?.unwrap_or(-1);
        self.stop = args.read("STOP")?.unwrap_or(false);
        self.active = args.read("ACTIVE")?.unwrap_or(true);
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
        if self.active {
            let mut p = Packet::from_bytes(&self.data);
            p.set_timestamp(cx.now());
            self.count += 1;
            cx.push_one(0, p);
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

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("count"),
                Handler::w("reset"),
                Handler::rw("data"),
                Handler::rw("interval"),
                Handler::rw("limit"),
                Handler::rw("active"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "data" => String::from_utf8_lossy(&self.data).into_owned(),
            "interval" => self.interval.to_string(),
            "limit" => self.limit.to_string(),
            "active" => self.active.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "reset" => self.count = 0,
            "data" => self.data = sluice_lang::args::unquote_bytes(v),
            "interval" => {
                let Seconds(s) = <Seconds as sluice_lang::args::FromArg>::from_arg(v)
                    .map_err(|e| format!("interval: {}", e))?;
                if s <= 0.0 {
                    return Err("interval: must be positive".into());
                }
                self.interval = Timestamp::from_secs_f64(s);
            }
            "limit" => self.limit = parse_num(name, v)?,
            "active" => self.active = parse_bool(v)?,
            _ => return Err(format!("no handler {}", name)),
        }
        if !self.done() && !cx.timer_scheduled(0) {
            let iv = self.interval;
            cx.schedule_after(0, iv);
        }
        Ok(())
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
