//! NotifierDebug — passes packets unchanged and shows the notifier signal at its input
//!
//! Synopsis: `NotifierDebug()`
//!
//! Ports: 1 input, 1 output, agnostic. Every packet leaves unchanged on the output; nothing
//! is dropped.
//!
//! The element exists for its `signal` handler, which shows a notification signal as Click
//! prints it: in a push context the full signal of the queues downstream (active while one
//! of them has room), in a pull context the empty signal of the queues upstream (active
//! while one of them holds packets).
//!
//! Arguments: none.
//!
//! Handlers: `signal` (r): `busy*` when some path has no notifier (it never sleeps), `idle`
//! when nothing upstream can ever have packets, else `KIND.WORD/MASK:VALUE` for each word of
//! 32 signals (hexadecimal; empty and full signals are numbered apart, in the order of the
//! elements that provide them), joined by `+`, with `*` marking a word whose signals are
//! partly active. Example: `full.0/1:1*` (the first full signal, active: the queue has room).
//!
//! Example: `InfiniteSource -> d :: NotifierDebug -> Queue -> Discard` with `-h d.signal`.

use sluice_core::{Batch, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{NotifierSignal, Table};

/// The NotifierDebug element.
#[derive(Default)]
pub struct NotifierDebug {
    /// The notifiers of the signal (`None`: a path without notifier).
    nids: Option<Vec<NotifierId>>,
    /// The signal, taken once the router runs (timer 0).
    signal: Option<NotifierSignal>,
}

impl Element for NotifierDebug {
    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.nids = if cx.input_is_push(0) {
            cx.downstream_full_notifiers(0)
        } else {
            cx.upstream_empty_notifiers(0)
        };
        let now = cx.now();
        cx.schedule_timer(0, now);
        Ok(())
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.signal = Some(cx.notifier_signal(self.nids.as_deref()));
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        cx.push(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        cx.pull(0, max)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("signal", |e| {
                e.signal
                    .as_ref()
                    .map_or_else(|| "uninitialized".into(), NotifierSignal::unparse)
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "NotifierDebug",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("notifier_debug.rs"),
    make: || Box::new(NotifierDebug::default()),
};
