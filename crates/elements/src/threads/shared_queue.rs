//! What the queues that cross threads (ThreadSafeQueue, CPUQueue) have in common: their state
//! lives behind an `Arc` from configuration on, and the element forwards packets and handlers
//! to it both before the router shares it between threads and after.

use std::sync::Arc;

use sluice_core::{Batch, Concurrency, ConfigCx, Cx, Element, Handler, SharedElement, Sharing};
use sluice_lang::args::Args;

/// The shared state of a queue that crosses threads.
pub trait QueueState: Send + Sync + Sized + 'static {
    /// The element's handlers.
    const HANDLERS: &'static [Handler];
    /// Reads the configuration and builds the state.
    fn configure(args: &mut Args, cx: &mut ConfigCx) -> Result<Self, ()>;
    /// Takes a pushed batch (dropping and counting what does not fit).
    fn push_batch(&self, batch: Batch, cx: &mut Cx);
    /// Gives up to `max` packets to a puller.
    fn pull_batch(&self, max: usize, cx: &mut Cx) -> Batch;
    /// Packets held and capacity (the Storage interface).
    fn storage(&self) -> (usize, usize);
    /// Reads a handler.
    fn read(&self, name: &str) -> Option<String>;
    /// Writes a handler.
    fn write(&self, name: &str) -> Result<(), String>;
    /// Hot swap: takes the packets of `old`, the state of the element this one replaces.
    fn take_from(&self, old: &Self, cx: &mut Cx) {
        let _ = (old, cx);
    }
    /// The state once the router knows how many threads push and pull.
    fn specialise(self, sharing: Sharing) -> Self {
        let _ = sharing;
        self
    }
}

/// The state as the router shares it.
struct Shared<S>(S);

/// The shared element serving `state` (for queues that become shared only when the router
/// places their two sides on different threads).
pub(crate) fn share<S: QueueState>(state: S) -> Arc<dyn SharedElement> {
    Arc::new(Shared(state))
}

impl<S: QueueState> SharedElement for Shared<S> {
    fn push(&self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.0.push_batch(batch, cx);
    }

    fn pull(&self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        self.0.pull_batch(max, cx)
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some(self.0.storage())
    }

    fn handlers(&self) -> &'static [Handler] {
        S::HANDLERS
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        self.0.read(name)
    }

    fn write_handler(&self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        self.0.write(name)
    }
}

/// The element of a queue that crosses threads, before the router shares it.
pub struct SharedQueue<S>(Option<Arc<Shared<S>>>);

impl<S> Default for SharedQueue<S> {
    fn default() -> Self {
        SharedQueue(None)
    }
}

impl<S: QueueState> SharedQueue<S> {
    fn state(&self) -> &S {
        &self.0.as_deref().expect("configured before use").0
    }
}

impl<S: QueueState> Element for SharedQueue<S> {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.0 = Some(Arc::new(Shared(S::configure(args, cx)?)));
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        self.state().push_batch(batch, cx);
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
            if let (Some(new), Some(old)) = (&self.0, &old.0) {
                new.0.take_from(&old.0, cx);
            }
        }
    }

    fn into_shared(self: Box<Self>, sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        let state = Arc::try_unwrap(self.0?).ok()?.0;
        Some(Arc::new(Shared(state.specialise(sharing))))
    }

    fn handlers(&self) -> &'static [Handler] {
        S::HANDLERS
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        self.state().read(name)
    }

    fn write_handler(&mut self, name: &str, _value: &str, _cx: &mut Cx) -> Result<(), String> {
        self.state().write(name)
    }
}
