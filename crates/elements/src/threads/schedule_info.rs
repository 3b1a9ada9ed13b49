//! ScheduleInfo — sets the CPU share of tasks
//!
//! Synopsis: `ScheduleInfo(ELEMENT PARAM, ...)`
//!
//! Ports: none.
//!
//! Scales the tickets of tasks: an element's task gets PARAM times the default tickets
//! (1024), so with stride scheduling it runs PARAM times as often as a task with default
//! tickets when both have work. Tickets are capped at 32768.
//!
//! Arguments:
//! - `ELEMENT PARAM` (any number of arguments): the name of an element and a positive real
//!   number by which its task's tickets are multiplied. If ELEMENT names a compound element,
//!   the tasks of every element inside it are scaled.
//!
//! Handlers: none besides the router's.
//!
//! Example: `ScheduleInfo(poll_eth0 2, poll_eth1 0.5)`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::{split_words, Args};

/// The ScheduleInfo element.
#[derive(Default)]
pub struct ScheduleInfo;

impl Element for ScheduleInfo {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        for a in args.rest() {
            let w = split_words(&a);
            let (Some(name), Some(param), 2) = (w.first(), w.get(1), w.len()) else {
                args.error(format!("expected 'ELEMENT PARAM', got '{}'", a));
                continue;
            };
            let Some(f) = param
                .parse::<f64>()
                .ok()
                .filter(|f| *f > 0.0 && f.is_finite())
            else {
                args.error(format!("{}: PARAM: expected positive real number", name));
                continue;
            };
            let targets = cx.elements_named(name);
            if targets.is_empty() {
                args.error(format!("no element named '{}'", name));
            }
            for e in targets {
                cx.scale_tickets(e, f);
            }
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ScheduleInfo",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("schedule_info.rs"),
    make: || Box::new(ScheduleInfo),
};
