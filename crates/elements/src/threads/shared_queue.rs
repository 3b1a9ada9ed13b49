//! What the queues that cross threads (ThreadSafeQueue, CPUQueue) have in common: the element
//! holds the queue's state and forwards packets and handlers to it until the router shares it
//! between threads; the thread-safe form then holds the same state. The element counts its
//! drops by reason; the thread-safe form, which several threads push into at once, counts
//! them in atomic counters, starting from the element's counts.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sluice_core::ring::MAX_CAPACITY;
use sluice_core::{drop_reasons, Batch, Concurrency, ConfigCx, Cx, Drops, Element};
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
    /// The state's own read handlers, which both forms of the element show, before `drops`,
    /// `drop_details` and `reset_counts`.
    fn table() -> Table<Self>;
    /// Reads the configuration and builds the state.
    fn configure(args: &mut Args, cx: &mut ConfigCx) -> Result<Self, ()>;
    /// Takes a pushed batch; returns how many packets did not fit (dropped, for the caller
    /// to count).
    fn push_batch(&self, batch: Batch, cx: &mut Cx) -> u64;
    /// Gives up to `max` packets to a puller.
    fn pull_batch(&self, max: usize, cx: &mut Cx) -> Batch;
    /// Packets held and capacity (the Storage interface).
    fn storage(&self) -> (usize, usize);
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

/// The state of `old` and its drops (queue full, beyond capacity at hot swap), if `old` is
/// the thread-safe form of a queue with state `S`.
pub(crate) fn shared_state<S: QueueState>(old: &dyn SharedElement) -> Option<(&S, u64, u64)> {
    let s = old.as_any().downcast_ref::<Shared<S>>()?;
    Some((
        &s.state,
        s.full.load(Ordering::Relaxed),
        s.swap.load(Ordering::Relaxed),
    ))
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

impl<S: QueueState> Shared<S> {
    /// The handlers of the shared form: the element's, answered from the shared state.
    fn table() -> Handlers {
        Table::<Self>::new()
            .nest_ref(|e| Some(&e.state), S::table().into())
            .drop_counts(|e| e.drops().counts().collect())
            .action_ref("reset_counts", |e| {
                e.full.store(0, Ordering::Relaxed);
                e.swap.store(0, Ordering::Relaxed);
                e.state.reset();
            })
            .into()
    }
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

    fn handler_table(&self) -> Handlers {
        Self::table()
    }

    fn as_any(&self) -> &dyn Any {
        self
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
        if let Some(old) = old.as_any_mut().downcast_mut::<SharedQueue<S>>() {
            self.drops.take(&mut old.drops);
            if let (Some(new), Some(old)) = (&self.state, &old.state) {
                let dropped = new.take_from(old, cx);
                self.drops.add(Reason::Swap, dropped);
            }
        }
    }

    fn take_shared_state(&mut self, old: &dyn SharedElement, cx: &mut Cx) {
        if let (Some(new), Some((old, full, swap))) = (&self.state, shared_state::<S>(old)) {
            self.drops.add(Reason::Full, full);
            self.drops.add(Reason::Swap, swap + new.take_from(old, cx));
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
        Table::<Self>::new()
            .nest_ref(|e| e.state.as_ref(), S::table().into())
            .drops(|e| &e.drops)
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
        let element = SharedQueue::<S>::default().handler_table();
        let shared = Shared::<S>::table();
        assert!(element.specs().eq(shared.specs()));
        assert!(element.spec("length").is_some() && element.spec("drop_details").is_some());
    }

    #[test]
    fn both_forms_list_the_same_handlers() {
        same_handlers::<PerThreadRings>();
        same_handlers::<QueueCore>();
    }
}
