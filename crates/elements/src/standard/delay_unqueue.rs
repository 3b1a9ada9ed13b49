//! DelayUnqueue — pulls packets and pushes each one DELAY after its timestamp
//!
//! Synopsis: `DelayUnqueue(DELAY)`
//!
//! Ports: 1 pull input, 1 push output. Pulls a packet and pushes it out once the current time
//! reaches the packet's timestamp annotation plus DELAY (at once if that time has passed); the
//! packet leaves with that time as its timestamp. As in Click, a timestamp within the first
//! second of the epoch (a trace's relative time, or none) counts as unset: the current time is
//! used. Packets leave in the order they were pulled. While it waits, the task sleeps on a timer;
//! while the input is empty, on the upstream empty notifiers. Runs instantly under
//! `--simtime`.
//!
//! Arguments:
//! - `DELAY` (time, mandatory).
//!
//! Handlers: `delay` (rw), `count` (r, packets pushed).
//!
//! Example: `src -> Queue -> DelayUnqueue(50ms) -> sink` (each packet's timestamp is set by the
//! source when it is made).

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{Args, Seconds};

/// Reads a time handler value.
pub(crate) fn parse_seconds(name: &str, v: &str) -> Result<Timestamp, String> {
    let Seconds(s) = <Seconds as sluice_lang::args::FromArg>::from_arg(v.trim())
        .map_err(|e| format!("{}: {}", name, e))?;
    Ok(Timestamp::from_secs_f64(s))
}

/// The DelayUnqueue element.
#[derive(Default)]
pub struct DelayUnqueue {
    delay: Timestamp,
    held: Option<Packet>,
    count: u64,
    notifiers: Option<Vec<NotifierId>>,
}

impl Element for DelayUnqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let Seconds(d) = args.read_mp::<Seconds>("DELAY")?;
        self.delay = Timestamp::from_secs_f64(d);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let now = cx.now();
        let mut out = Batch::new();
        loop {
            if self.held.is_none() {
                self.held = cx.pull_one(0).map(|mut p| {
                    // As in Click: a timestamp within the first second of the epoch counts
                    // as unset, and the packet leaves stamped with its departure time.
                    let ts = p.timestamp();
                    let ts = if (0..1_000_000_000).contains(&ts.0) {
                        now
                    } else {
                        ts
                    };
                    p.set_timestamp(ts + self.delay);
                    p
                });
            }
            let Some(p) = &self.held else {
                break;
            };
            let due = p.timestamp();
            if due > now {
                cx.schedule_timer(0, due);
                break;
            }
            if out.is_full() {
                break;
            }
            if let Some(p) = self.held.take() {
                let _ = out.push(p);
            }
        }
        let n = out.len();
        self.count += n as u64;
        if n > 0 {
            cx.push(0, out);
        }
        let ready = match &self.held {
            Some(p) => p.timestamp() <= now,
            None => match &self.notifiers {
                Some(ns) => cx.any_active(ns),
                None => true,
            },
        };
        if ready {
            cx.reschedule();
        }
        n > 0
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        cx.reschedule();
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("delay", |e| e.delay)
            .write("delay", |e, v, cx| {
                e.delay = parse_seconds("delay", v)?;
                cx.reschedule();
                Ok(())
            })
            .setting()
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DelayUnqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("delay_unqueue.rs"),
    make: || Box::new(DelayUnqueue::default()),
};
