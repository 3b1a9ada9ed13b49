//! InfiniteSource — generates packets as fast as it is scheduled
//!
//! Synopsis: `InfiniteSource([DATA, LIMIT, BURST, ACTIVE, *keywords*])`
//!
//! Ports: no inputs, 1 output. Push: a task pushes BURST copies of the packet per run, never
//! more than the queues downstream have room for (the most room any of them has, found
//! through their full notifiers), and sleeps while every one of them is full. Pull: each pull
//! returns copies while the limit allows; an empty notifier tells pullers downstream when the
//! source is inactive or spent, as in Click.
//!
//! Arguments:
//! - `DATA` (string): packet contents (`\<hex>` escapes allowed). Default: Click's 69 bytes of text.
//! - `LIMIT` (integer, default -1): total packets to send; -1 means no limit.
//! - `BURST` (integer, default 1, as Click): packets per task run, pushed as one batch (up
//!   to 32; benchmarks use 32).
//! - `ACTIVE` (boolean, default true): whether the source starts running.
//! - `LENGTH` (integer, at most 262144: `MAX_PACKET_LEN`): packet length; DATA is repeated or
//!   truncated to fit.
//! - `STOP` (boolean, default false): raise a driver stop event when LIMIT is reached.
//! - `END_CALL` (`HANDLER [VALUE]`): write handler called when LIMIT is reached. As in Click,
//!   one whose HANDLER does not exist or is not writable is an initialisation error
//!   (`END_CALL: HANDLER: error`).
//! - `TIMESTAMP` (boolean, default true): set each packet's timestamp annotation.
//!
//! Handlers: `count` (r), `reset` (w), `data` (rw), `burst` (rw), `limit` (rw), `active` (rw),
//! `length` (rw).
//!
//! Hot swap: an InfiniteSource of the same name goes on from the old one's count (LIMIT counts
//! the packets both sent).
//!
//! Example: `InfiniteSource(LIMIT 1000, STOP true) -> Counter -> Discard`

use sluice_core::BATCH_MAX;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_lang::args::{Args, FromArg};

use super::util::{Source, SourceCore};

/// The InfiniteSource element.
pub struct InfiniteSource {
    core: SourceCore,
    burst: usize,
    timestamp: bool,
    full: Option<Vec<NotifierId>>,
}

impl Default for InfiniteSource {
    fn default() -> InfiniteSource {
        InfiniteSource {
            core: SourceCore::default(),
            burst: 1,
            timestamp: true,
            full: None,
        }
    }
}

impl Source for InfiniteSource {
    fn core(&self) -> &SourceCore {
        &self.core
    }

    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
}

impl InfiniteSource {
    /// Up to `max` packets (no more than BURST), stamped with the time if TIMESTAMP.
    fn make_batch(&mut self, max: usize, cx: &Cx) -> Batch {
        let stamp = self.timestamp.then(|| cx.now());
        self.core.make_batch(max.min(self.burst), stamp)
    }
}

impl Element for InfiniteSource {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let note = cx.new_notifier(true);
        cx.provide_empty_notifier(note);
        self.core.empty_note = Some(note);
        self.core.read_data(args)?;
        let burst = &mut self.burst;
        self.core.read_rest(args, |args| {
            let b = args.read_p::<usize>("BURST")?;
            if b == Some(0) {
                args.error("burst size must be >= 1");
                return Err(());
            }
            *burst = b.unwrap_or(*burst).min(BATCH_MAX);
            Ok(())
        })?;
        args.read_into("TIMESTAMP", &mut self.timestamp)
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.core.initialize(cx)?;
        if cx.output_is_push(0) {
            self.full = cx.listen_downstream_full(0);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        if !self.core.active {
            return false;
        }
        let room = self.full.as_deref().map_or(usize::MAX, |f| cx.push_room(f));
        if room == 0 {
            return false;
        }
        // As in Click, the end (END_CALL, STOP) comes at the first run that finds the limit
        // reached, once the queues downstream have room again (without those the task
        // simply ends with its last packets).
        if self.core.remaining() == 0 {
            self.core.check_end(cx);
            return false;
        }
        let b = self.make_batch(room.min(BATCH_MAX), cx);
        cx.push(0, b);
        if self.core.remaining() > 0 || self.core.stop || self.core.end_call.is_some() {
            cx.reschedule();
        } else {
            self.core.check_end(cx);
        }
        true
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        if self.core.active && self.core.remaining() > 0 {
            return self.make_batch(max, cx);
        }
        // Inactive or spent: pullers sleep until a handler write wakes them.
        if self.core.active {
            self.core.check_end(cx);
        }
        if let Some(n) = self.core.empty_note {
            cx.set_notifier(n, false);
        }
        Batch::new()
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        if let Some(old) = old.as_any_mut().downcast_mut::<InfiniteSource>() {
            self.core.take_progress(&old.core, cx);
        }
    }

    fn handler_table(&self) -> Handlers {
        SourceCore::handlers::<Self>(|t| {
            t.read("burst", |e| e.burst)
                .write("burst", |e, v, cx| {
                    let b = i64::from_arg(v.trim()).map_err(|m| format!("burst: {m}"))?;
                    e.burst = (b.max(1) as usize).min(BATCH_MAX);
                    e.core.wake(cx);
                    Ok(())
                })
                .setting()
        })
        .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "InfiniteSource",
    ports: "0/1",
    processing: "a/a",
    flow: "",
    source: include_str!("infinite_source.rs"),
    make: || Box::new(InfiniteSource::default()),
};
