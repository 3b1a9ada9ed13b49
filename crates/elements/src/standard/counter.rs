//! Counter — counts packets and bytes passing through
//!
//! Synopsis: `Counter([*keywords* COUNT_CALL, BYTE_COUNT_CALL])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass through unchanged.
//!
//! Arguments:
//! - `COUNT_CALL` (`N HANDLER [VALUE]`): when the packet count reaches N, write VALUE to the
//!   write handler HANDLER, before that packet leaves (the packets before it have left). Fires
//!   once, again after a reset.
//! - `BYTE_COUNT_CALL` (`N HANDLER [VALUE]`): the same when the byte count reaches or
//!   exceeds N.
//!
//! As in Click, a call's HANDLER is checked at initialisation: one that does not exist or is
//! not writable is an error naming the argument (`COUNT_CALL: HANDLER: error`).
//!
//! Handlers:
//! - `count` (r): packets counted. `byte_count` (r): bytes counted.
//! - `rate` (r): packets per second over the last second of arrivals; `byte_rate`, `bit_rate` (r).
//! - `reset` / `reset_counts` (w): zero the counters and re-arm the calls.
//! - `count_call` (rw): reads N of COUNT_CALL (empty without one); writing `N HANDLER [VALUE]`
//!   replaces it and re-arms it (a HANDLER that is not writable is refused).
//!   `byte_count_call` (w): the same for BYTE_COUNT_CALL.
//!
//! Hot swap: a Counter of the same name keeps counting from the old one's counts and rates
//! (its calls are those of the new configuration).
//!
//! Example: `... -> c :: Counter(COUNT_CALL 1000 stop) -> ...` (stop after 1000 packets)

use sluice_core::toolkit::{OutBatch, Tally, Trigger, Watch};
use sluice_core::{Batch, Concurrency, ConfigCx, Cx, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Table};
use sluice_lang::args::Args;

/// The Counter element.
#[derive(Default)]
pub struct Counter {
    tally: Tally,
    /// COUNT_CALL and BYTE_COUNT_CALL.
    calls: [Trigger; 2],
}

impl Counter {
    /// The `reset` handler: zeroes the counts and re-arms the calls.
    fn reset(&mut self) {
        self.tally.reset();
        self.calls.iter_mut().for_each(Trigger::rearm);
    }
}

impl Element for Counter {
    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let [count_call, byte_count_call] = &mut self.calls;
        *count_call = Trigger::read(args, "COUNT_CALL", Watch::Packets)?;
        *byte_count_call = Trigger::read(args, "BYTE_COUNT_CALL", Watch::Bytes)?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.calls.iter().try_for_each(|c| c.check(cx))
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        if !self.calls.iter().any(Trigger::armed) {
            self.tally.add_batch(&batch, cx.now());
            return cx.push(0, batch);
        }
        // A call comes after the packets before its packet have left.
        let (mut out, tally) = (OutBatch::new(0), &mut self.tally);
        for p in batch {
            tally.count_one(p.len(), &mut self.calls, cx, |cx| out.send(cx));
            out.add(p, cx);
        }
        tally.update(cx.now());
        out.flush(cx);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        if !b.is_empty() {
            for p in b.iter() {
                self.tally.count_one(p.len(), &mut self.calls, cx, |_| {});
            }
            self.tally.update(cx.now());
        }
        b
    }

    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        if let Some(old) = old.as_any_mut().downcast_mut::<Counter>() {
            self.tally.absorb(&old.tally);
            for c in &mut self.calls {
                c.disarm_if_reached(&self.tally);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest(|e| &mut e.tally, Tally::handlers())
            .action("reset", Counter::reset)
            .action("reset_counts", Counter::reset)
            .nest(|e| &mut e.calls[0], Trigger::handler_rw("count_call"))
            .nest(|e| &mut e.calls[1], Trigger::handler_w("byte_count_call"))
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Counter",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("counter.rs"),
    make: || Box::new(Counter::default()),
};
