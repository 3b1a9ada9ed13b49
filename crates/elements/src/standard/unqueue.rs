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

use sluice_core::BATCH_MAX;
use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, PullNotes, Table};
use sluice_lang::args::Args;

use super::util::{Sender, SenderTable, Sending};

/// The Unqueue element.
pub struct Unqueue {
    burst: usize,
    sending: Sending,
    limit: i64,
    notifiers: PullNotes,
}

impl Default for Unqueue {
    fn default() -> Unqueue {
        Unqueue {
            burst: BATCH_MAX,
            sending: Sending::default(),
            limit: -1,
            notifiers: PullNotes::default(),
        }
    }
}

impl Sender for Unqueue {
    fn sending(&self) -> &Sending {
        &self.sending
    }

    fn sending_mut(&mut self) -> &mut Sending {
        &mut self.sending
    }
}

impl Element for Unqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.burst = args
            .read_p("BURST")?
            .unwrap_or(self.burst)
            .clamp(1, BATCH_MAX);
        self.sending.active = args.read_p("ACTIVE")?.unwrap_or(self.sending.active);
        args.read_into("LIMIT", &mut self.limit)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.notifiers = cx.add_pull_task(0, self.sending.active);
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.sending.active {
            return false;
        }
        let mut max = self.burst;
        if self.limit >= 0 {
            max = max.min((self.limit as u64).saturating_sub(self.sending.count) as usize);
            if max == 0 {
                return false;
            }
        }
        let got = self.sending.send(cx.pull(0, max), cx);
        cx.reschedule_pull(&self.notifiers, got);
        got
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .count_handler()
            .reset_handler()
            .active_handler()
            .read("burst", |e| e.burst)
            .write("burst", |e, v, cx| {
                let b = v.trim().parse::<usize>();
                e.burst = b
                    .map_err(|_| "burst: expected unsigned integer")?
                    .clamp(1, BATCH_MAX);
                e.wake(cx);
                Ok(())
            })
            .read("limit", |e| e.limit)
            .write("limit", |e, v, cx| {
                e.limit = v.trim().parse().map_err(|_| "limit: expected integer")?;
                e.wake(cx);
                Ok(())
            })
            .into()
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
