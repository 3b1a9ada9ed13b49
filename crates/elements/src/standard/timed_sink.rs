//! TimedSink — pulls and frees one packet per interval
//!
//! Synopsis: `TimedSink([INTERVAL])`
//!
//! Ports: 1 pull input, no outputs. Every INTERVAL, pulls one packet from its input and
//! frees it (a sink, not a drop: nothing is counted as lost).
//!
//! Arguments:
//! - `INTERVAL` (time, default 500 ms).
//!
//! Handlers: `interval` (rw; read in Click's interval form, e.g. `500ms`), `count` (r, packets
//! pulled; a Sluice extension).
//!
//! Example: `... -> Queue -> TimedSink(10ms)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table, Timestamp};
use sluice_lang::args::{Args, FromArg, Seconds};

use super::util::unparse_interval;

/// The TimedSink element.
pub struct TimedSink {
    interval: Timestamp,
    count: u64,
}

impl Default for TimedSink {
    fn default() -> TimedSink {
        TimedSink {
            interval: Timestamp(500_000_000),
            count: 0,
        }
    }
}

impl Element for TimedSink {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(Seconds(s)) = args.read_p("INTERVAL")? {
            self.interval = Timestamp::from_secs_f64(s);
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.schedule_after(0, self.interval);
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        if cx.pull_one(0).is_some() {
            self.count += 1;
        }
        cx.schedule_after(0, self.interval.max(Timestamp(1)));
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("interval", |e| unparse_interval(e.interval))
            .write("interval", |e, v, _| match Seconds::from_arg(v.trim()) {
                Ok(Seconds(s)) if s > 0.0 => {
                    e.interval = Timestamp::from_secs_f64(s);
                    Ok(())
                }
                _ => Err("bad interval".into()),
            })
            .setting()
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "TimedSink",
    ports: "1/0",
    processing: "l/l",
    flow: "",
    source: include_str!("timed_sink.rs"),
    make: || Box::new(TimedSink::default()),
};
