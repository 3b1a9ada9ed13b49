//! Unqueue — pulls packets from its input and pushes them out
//!
//! Synopsis: `Unqueue([BURST, ACTIVE, LIMIT])`
//!
//! Ports: 1 input (pull), 1 output (push). A task pulls up to BURST packets per run and pushes
//! them downstream. It sleeps while every upstream queue is empty (notifiers) and wakes when one
//! fills.
//!
//! Arguments:
//! - `BURST` (integer, default 32): packets per task run.
//! - `ACTIVE` (boolean, default true): whether the task runs.
//! - `LIMIT` (integer, default -1): stop after this many packets; -1 means no limit.
//!
//! Handlers: `count` (r), `reset` (w), `active` (rw), `burst` (rw), `limit` (rw).

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, InitCx, PullNotes, BATCH_MAX};
use sluice_lang::args::Args;

use super::discard::parse_bool;

/// The Unqueue element.
pub struct Unqueue {
    burst: usize,
    active: bool,
    limit: i64,
    count: u64,
    notifiers: PullNotes,
}

impl Default for Unqueue {
    fn default() -> Unqueue {
        Unqueue {
            burst: BATCH_MAX,
            active: true,
            limit: -1,
            count: 0,
            notifiers: PullNotes::default(),
        }
    }
}

impl Element for Unqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.burst = args
            .read_p::<usize>("BURST")?
            .unwrap_or(BATCH_MAX)
            .clamp(1, BATCH_MAX);
        self.active = args.read_p("ACTIVE")?.unwrap_or(true);
        self.limit = args.read("LIMIT")?.unwrap_or(-1);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.notifiers = cx.add_pull_task(0, self.active);
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active {
            return false;
        }
        let mut max = self.burst;
        if self.limit >= 0 {
            max = max.min((self.limit as u64).saturating_sub(self.count) as usize);
            if max == 0 {
                return false;
            }
        }
        let b = cx.pull(0, max);
        let got = !b.is_empty();
        self.count += b.len() as u64;
        if got {
            cx.push(0, b);
        }
        cx.reschedule_pull(&self.notifiers, got);
        got
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("count"),
                Handler::w("reset"),
                Handler::rw("active"),
                Handler::rw("burst"),
                Handler::rw("limit"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "count" => self.count.to_string(),
            "active" => self.active.to_string(),
            "burst" => self.burst.to_string(),
            "limit" => self.limit.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, cx: &mut Cx) -> Result<(), String> {
        let v = value.trim();
        match name {
            "reset" => self.count = 0,
            "active" => self.active = parse_bool(v)?,
            "burst" => {
                self.burst = v
                    .parse::<usize>()
                    .map_err(|_| "burst: expected unsigned integer")?
                    .clamp(1, BATCH_MAX)
            }
            "limit" => self.limit = v.parse().map_err(|_| "limit: expected integer")?,
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
    name: "Unqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("unqueue.rs"),
    make: || Box::new(Unqueue::default()),
};
