//! Discard — drops every packet
//!
//! Synopsis: `Discard([ACTIVE], [BURST])`
//!
//! Ports: 1 input, no outputs, agnostic. Pushed packets are dropped at once; when the input is
//! pull, a task pulls up to BURST packets at a time and drops them, sleeping while the upstream
//! queue is empty.
//!
//! Arguments:
//! - `ACTIVE` (boolean, default true): when pulling, whether the task runs.
//! - `BURST` (integer, default 1, as in Click): packets pulled per task run; 0 means as many
//!   as a batch holds.
//!
//! Handlers: `count` (r, packets discarded), `reset_counts` (w), `active` (rw).
//!
//! Hot swap: a Discard of the same name keeps the old one's count.

use sluice_core::{Batch, Concurrency, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx};
use sluice_core::{PullNotes, Table};
use sluice_lang::args::Args;
use sluice_lang::args::FromArg;

/// The Discard element.
pub struct Discard {
    count: u64,
    active: bool,
    burst: usize,
    notifiers: PullNotes,
}

impl Default for Discard {
    fn default() -> Discard {
        Discard {
            count: 0,
            active: true,
            burst: 1,
            notifiers: PullNotes::default(),
        }
    }
}

impl Element for Discard {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        self.burst = match args.read_p("BURST")?.unwrap_or(self.burst) {
            0 => sluice_core::BATCH_MAX,
            n => n.min(sluice_core::BATCH_MAX),
        };
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if !cx.input_is_push(0) {
            self.notifiers = cx.add_pull_task(0, self.active);
        }
        Ok(())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        self.count += batch.len() as u64;
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.active {
            return false;
        }
        let b = cx.pull(0, self.burst);
        let got = !b.is_empty();
        self.count += b.len() as u64;
        drop(b);
        cx.reschedule_pull(&self.notifiers, got);
        got
    }

    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        if let Some(old) = old.as_any_mut().downcast_mut::<Discard>() {
            self.count += old.count;
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .action("reset_counts", |e| e.count = 0)
            .read("active", |e| e.active)
            .write("active", |e, v, cx| {
                e.active = bool::from_arg(v)?;
                if e.active && !cx.input_is_push(0) {
                    cx.reschedule();
                }
                Ok(())
            })
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Discard",
    ports: "1/0",
    processing: "a/a",
    flow: "",
    source: include_str!("discard.rs"),
    make: || Box::new(Discard::default()),
};
