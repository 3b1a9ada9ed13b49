//! PullSwitch — forwards pulls to one input, chosen by a handler
//!
//! Synopsis: `PullSwitch([INPUT])`
//!
//! Ports: any number of pull inputs, 1 pull output. A pull on the output is forwarded to input
//! INPUT; with INPUT -1 (or an input that does not exist) the pull returns nothing.
//!
//! As in Click, PullSwitch has its own empty notifier, so that pullers downstream sleep while
//! the selected input has nothing: it sleeps when INPUT is -1, or when a pull finds nothing and
//! the selected input's upstream notifiers are asleep; it wakes when a pull returns packets,
//! when the selected input's upstream notifiers wake, and when `switch` selects an input that
//! has packets. An input without notifiers upstream (a pull source) always has packets.
//!
//! Arguments:
//! - `INPUT` (integer, default 0).
//!
//! Handlers: `switch` (rw: the input, -1 for none).
//!
//! SimplePullSwitch is the same switch without a notifier of its own: pullers downstream see
//! the notifiers of every input, whichever is selected.
//!
//! Example: `q0 -> [0]ps :: PullSwitch(0); q1 -> [1]ps; ps -> Unqueue -> ...`, then write
//! `ps.switch 1`.

use sluice_core::Table;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_lang::args::Args;

use super::switch::parse_output;

/// The PullSwitch and SimplePullSwitch elements.
#[derive(Default)]
pub struct PullSwitch {
    input: i32,
    /// Has its own empty notifier (PullSwitch, not SimplePullSwitch).
    notify: bool,
    note: NotifierId,
    /// Each input's upstream empty notifiers (`None`: that input always has packets).
    signals: Vec<Option<Vec<NotifierId>>>,
}

impl PullSwitch {
    /// True if the selected input may have packets.
    fn selected_active(&self, cx: &Cx) -> bool {
        match usize::try_from(self.input)
            .ok()
            .and_then(|i| self.signals.get(i))
        {
            Some(Some(ns)) => cx.any_active(ns),
            Some(None) => true,
            None => false,
        }
    }
}

impl Element for PullSwitch {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.input = args.read_p("INPUT")?.unwrap_or(self.input);
        if self.input < -1 {
            args.error("INPUT: must be -1 or an input number");
            return Err(());
        }
        if self.notify {
            self.note = cx.new_notifier(self.input >= 0);
            cx.provide_empty_notifier(self.note);
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if self.input >= cx.ninputs() as i32 {
            self.input = -1;
        }
        if !self.notify {
            return Ok(());
        }
        // The task is Click's wake callback: it runs when an input's notifier wakes.
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, false);
        self.signals = (0..cx.ninputs())
            .map(|i| cx.upstream_empty_notifiers(i))
            .collect();
        for &n in self.signals.iter().flatten().flatten() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if self.selected_active(cx) {
            cx.set_notifier(self.note, true);
        }
        false
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let Ok(i) = usize::try_from(self.input) else {
            if self.notify {
                cx.set_notifier(self.note, false);
            }
            return Batch::new();
        };
        let b = cx.pull(i, max);
        if !self.notify {
            return b;
        }
        if !b.is_empty() {
            cx.set_notifier(self.note, true);
        } else if !self.selected_active(cx) {
            cx.set_notifier(self.note, false);
        }
        b
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("switch", |e| e.input)
            .write("switch", |e, v, cx| {
                e.input = parse_output(v, cx.ninputs())?;
                if e.notify && e.input < 0 {
                    cx.set_notifier(e.note, false);
                } else if e.notify && e.selected_active(cx) {
                    cx.set_notifier(e.note, true);
                }
                Ok(())
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PullSwitch",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("pull_switch.rs"),
    make: || {
        Box::new(PullSwitch {
            notify: true,
            ..PullSwitch::default()
        })
    },
};

/// `SimplePullSwitch`: PullSwitch without a notifier of its own.
pub const SIMPLE_CLASS: ElementClass = ElementClass {
    name: "SimplePullSwitch",
    make: || Box::new(PullSwitch::default()),
    ..CLASS
};
