//! DelayShaper — delays pulled packets by at least DELAY after their timestamp
//!
//! Synopsis: `DelayShaper(DELAY)`
//!
//! Ports: 1 pull input, 1 pull output. A pull returns the packets whose timestamp annotation
//! plus DELAY has passed; a packet that is not due yet is held (at most one) and nothing is
//! returned. DelayShaper offers its own empty notifier to pullers downstream: it is inactive
//! while the held packet waits (a timer reactivates it when the packet is due) and while the
//! upstream queues are empty (DelayShaper's task listens to their notifiers and reactivates
//! it), so pullers sleep instead of polling and `--simtime` runs finish at once. When some
//! upstream path has no notifier, the notifier stays active except while a packet waits.
//!
//! Arguments:
//! - `DELAY` (time, mandatory).
//!
//! Handlers: `delay` (rw), `count` (r, packets released).
//!
//! Example: `src -> Queue -> DelayShaper(100ms) -> Unqueue -> sink`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{Args, Seconds};

use super::delay_unqueue::parse_seconds;

/// The DelayShaper element.
#[derive(Default)]
pub struct DelayShaper {
    delay: Timestamp,
    held: Option<Packet>,
    count: u64,
    note: NotifierId,
    upstream: Option<Vec<NotifierId>>,
}

impl Element for DelayShaper {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let Seconds(d) = args.read_mp::<Seconds>("DELAY")?;
        self.delay = Timestamp::from_secs_f64(d);
        self.note = cx.new_notifier(true);
        cx.provide_empty_notifier(self.note);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, false);
        self.upstream = cx.upstream_empty_notifiers(0);
        for n in self.upstream.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let now = cx.now();
        let mut out = Batch::new();
        while out.len() < max {
            if self.held.is_none() {
                self.held = cx.pull_one(0);
            }
            let Some(p) = &self.held else {
                if let Some(ns) = &self.upstream {
                    if !cx.any_active(ns) {
                        cx.set_notifier(self.note, false);
                    }
                }
                break;
            };
            let due = p.timestamp() + self.delay;
            if due > now {
                cx.set_notifier(self.note, false);
                cx.schedule_timer(0, due);
                break;
            }
            if let Some(p) = self.held.take() {
                let _ = out.push(p);
            }
        }
        self.count += out.len() as u64;
        out
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        // Upstream became non-empty: wake the pullers unless a held packet still waits.
        if !cx.timer_scheduled(0) {
            cx.set_notifier(self.note, true);
        }
        false
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        cx.set_notifier(self.note, true);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("delay", |e| e.delay)
            .write("delay", |e, v, cx| {
                e.delay = parse_seconds("delay", v)?;
                cx.cancel_timer(0);
                cx.set_notifier(e.note, true);
                Ok(())
            })
            .setting()
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DelayShaper",
    ports: "1/1",
    processing: "l/l",
    flow: "",
    source: include_str!("delay_shaper.rs"),
    make: || Box::new(DelayShaper::default()),
};
