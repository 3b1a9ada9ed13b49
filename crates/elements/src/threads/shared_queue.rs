//! What the queues that cross threads (ThreadSafeQueue, CPUQueue) have in common: the element
//! holds the queue's state and forwards packets and handlers to it until the router shares it
//! between threads; the thread-safe form then holds the same state. The element counts its
//! drops by reason; the thread-safe form, which several threads push into at once, counts
//! them in atomic counters, starting from the element's counts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sluice_core::handlers::{DROPS, DROP_DETAILS};
use sluice_core::ring::MAX_CAPACITY;
use sluice_core::{drop_reasons, Batch, Concurrency, ConfigCx, Cx, Drops, Element, Handler};
use sluice_core::{Handlers, NotifierId, SharedElement, Sharing, Table};
use sluice_lang::args::{Args, AtMost};

drop_reasons! {
    /// Why a queue that crosses threads drops a packet.
    pub(super) enum Reason {
        /// Pushed into a full queue.
        Full => "queue full",
        /// Beyond the capacity when taking over the packets of the queue it replaces.
        Swap => "beyond capacity at hot swap",
    }
}

/// The shared state of a queue that crosses threads.
pub trait QueueState: Send + Sync + Sized + 'static {
    /// The element's handlers, in both forms: the read handlers answered by
    /// [`QueueState::read`], then `drops`, `drop_details` and `reset_counts`.
    const HANDLERS: &'static [Handler];
    /// Reads the configuration and builds the state.
    fn configure(args: &mut Args, cx: &mut ConfigCx) -> Result<Self, ()>;
    /// Takes a pushed batch; returns how many packets did not fit (dropped, for the caller
    /// to count).
    fn push_batch(&self, batch: Batch, cx: &mut Cx) -> u64;
    /// Gives up to `max` packets to a puller.
    fn pull_batch(&self, max: usize, cx: &mut Cx) -> Batch;
    /// Packets held and capacity (the Storage interface).
    fn storage(&self) -> (usize, usize);
    /// Reads a handler of the state.
    fn read(&self, name: &str) -> Option<String>;
    /// Resets the state's counts (`reset_counts`, besides the drops).
    fn reset(&self) {}
    /// Hot swap: takes the packets of `old`, the state of the element this one replaces;
    /// returns how many did not fit (dropped, for the caller to count).
    fn take_from(&self, old: &Self, cx: &mut Cx) -> u64 {
        let _ = (old, cx);
        0
    }
    /// The state once the router knows how many threads push and pull.
    fn specialise(self, sharing: Sharing) -> Self {
        let _ = sharing;
        self
    }
}

/// Reads CAPACITY (optional, positional; default 1000, at least 1) and makes the queue's
/// empty notifier, which wakes the pulling task.
pub(super) fn read_capacity(args: &mut Args, cx: &mut ConfigCx) -> Result<(usize, NotifierId), ()> {
    let capacity = args
        .read_p::<AtMost<MAX_CAPACITY>>("CAPACITY")?
        .map_or(1000, |c| c.0)
        .max(1);
    let note = cx.new_notifier(false);
    cx.provide_empty_notifier(note);
    Ok((capacity, note))
}

/// After a pull that may have emptied the queue: clears its empty notifier `note`, then sets
/// it again if a push came in meanwhile (`is_empty` is asked again), so that the puller never
/// sleeps on packets.
pub(super) fn clear_empty(cx: &mut Cx, note: NotifierId, is_empty: impl Fn() -> bool) {
    cx.set_notifier(note, false);
    if !is_empty() {
        cx.set_notifier(note, true);
    }
}

/// The state as the router shares it, with its drop counts.
struct Shared<S> {
    state: S,
    full: AtomicU64,
    swap: AtomicU64,
}

impl<S> Shared<S> {
    /// The drop counts, by reason.
    fn drops(&self) -> Drops<Reason> {
        let mut d = Drops::default();
        d.add(Reason::Full, self.full.load(Ordering::Relaxed));
        d.add(Reason::Swap, self.swap.load(Ordering::Relaxed));
        d
    }
}

/// The shared element serving `state`, which has dropped `full` packets pushed while it was
/// full (for queues that become shared only when the router places their two sides on
/// different threads).
pub(crate) fn share<S: QueueState>(state: S, full: u64) -> Arc<dyn SharedElement> {
    Arc::new(Shared {
        state,
        full: full.into(),
        swap: 0.into(),
    })
}

impl<S: QueueState> SharedElement for Shared<S> {
    fn push(&self, _port: usize, batch: Batch, cx: &mut Cx) {
        let dropped = self.state.push_batch(batch, cx);
        if dropped > 0 {
            self.full.fetch_add(dropped, Ordering::Relaxed);
        }
    }

    fn pull(&self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        self.state.pull_batch(max, cx)
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some(self.state.storage())
    }

    fn handlers(&self) -> &'static [Handler] {
        S::HANDLERS
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "drops" => Some(self.drops().total().to_string()),
            "drop_details" => Some(self.drops().details()),
            _ => self.state.read(name),
        }
    }

    fn write_handler(&self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "reset_counts" => {
                self.full.store(0, Ordering::Relaxed);
                self.swap.store(0, Ordering::Relaxed);
                self.state.reset();
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// The element of a queue that crosses threads, before the router shares it.
pub struct SharedQueue<S> {
    state: Option<S>,
    /// Packets dropped, by reason.
    drops: Drops<Reason>,
}

impl<S> Default for SharedQueue<S> {
    fn default() -> Self {
        SharedQueue {
            state: None,
            drops: Drops::default(),
        }
    }
}

impl<S: QueueState> SharedQueue<S> {
    fn state(&self) -> &S {
        self.state.as_ref().expect("configured before use")
    }

    /// The `reset_counts` handler.
    fn reset(&mut self) {
        self.drops.reset();
        if let Some(s) = &self.state {
            s.reset();
        }
    }
}

impl<S: QueueState> Element for SharedQueue<S> {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.state = Some(S::configure(args, cx)?);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let dropped = self.state().push_batch(batch, cx);
        self.drops.add(Reason::Full, dropped);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        self.state().pull_batch(max, cx)
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some(self.state().storage())
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Shared
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        if let Some(old) = old.as_any().downcast_ref::<SharedQueue<S>>() {
            if let (Some(new), Some(old)) = (&self.state, &old.state) {
                let dropped = new.take_from(old, cx);
                self.drops.add(Reason::Swap, dropped);
            }
        }
    }

    fn into_shared(self: Box<Self>, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        Some(Arc::new(Shared {
            state: self.state?.specialise(sharing),
            full: self.drops.get(Reason::Full).into(),
            swap: self.drops.get(Reason::Swap).into(),
        }))
    }

    fn handler_table(&self) -> Handlers {
        let mut t = Table::<Self>::new();
        let own = |h: &&Handler| h.read && h.name != DROPS && h.name != DROP_DETAILS;
        for h in S::HANDLERS.iter().filter(own) {
            let name = h.name;
            t = t.read_with(name, move |e| {
                e.state
                    .as_ref()
                    .and_then(|s| s.read(name))
                    .unwrap_or_default()
            });
            if h.setting {
                t = t.setting();
            }
        }
        t.drops(|e| &e.drops)
            .action("reset_counts", Self::reset)
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::cpu_queue::PerThreadRings;
    use crate::threads::thread_safe_queue::QueueCore;

    fn same_handlers<S: QueueState>() {
        let table = SharedQueue::<S>::default().handler_table();
        assert!(table.specs().eq(S::HANDLERS.iter()));
    }

    #[test]
    fn both_forms_list_the_same_handlers() {
        same_handlers::<PerThreadRings>();
        same_handlers::<QueueCore>();
    }
}
