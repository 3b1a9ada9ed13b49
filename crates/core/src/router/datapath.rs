//! The data path: pushing a batch out of an output into the element connected to it, pulling
//! from an input, packets that reach a running element (re-entrant pushes and handler writes,
//! done when it returns), and notifiers waking the tasks that listen to them.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::batch::Batch;
use crate::context::{Cx, NotifierId};
use crate::element::{Element, SharedElement};
use crate::sched::Notifier;

use super::handler_routing::call_write;
use super::{PortRef, Router};

pub(crate) struct Slot {
    pub(crate) elem: Option<Box<dyn Element>>,
    pub(crate) shared: Option<Arc<dyn SharedElement>>,
    /// What reached the element while it was running, in order, to be done when it returns.
    pub(crate) pending: Vec<Deferred>,
}

/// A push or a handler write that reached an element while it was running (re-entrantly,
/// from its own push, pull, task or timer).
pub(crate) enum Deferred {
    /// A batch for an input port.
    Push(usize, Batch),
    /// A write handler call: handler name and value.
    Write(String, String),
}

/// An element taken out of its slot while it runs: this thread's copy, or its thread-safe
/// form (taken out too, so that no reference count changes on the handle other threads use).
pub(crate) enum Running {
    Own(Box<dyn Element>),
    Shared(Arc<dyn SharedElement>),
}

impl Running {
    #[inline]
    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        match self {
            Running::Own(el) => el.push(port, batch, cx),
            Running::Shared(sh) => sh.push(port, batch, cx),
        }
    }

    #[inline]
    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        match self {
            Running::Own(el) => el.pull(port, max, cx),
            Running::Shared(sh) => sh.pull(port, max, cx),
        }
    }
}

impl Slot {
    pub(crate) fn empty() -> Slot {
        Slot {
            elem: None,
            shared: None,
            pending: Vec::new(),
        }
    }
}

impl Router {
    // ---- packet movement ----

    #[inline]
    pub(crate) fn push_out(&mut self, from: usize, port: usize, batch: Batch) {
        match self.outs[from].get(port).copied() {
            Some(Some(to)) => {
                if self.counting {
                    self.count(from, to.elem, &batch);
                }
                self.push_into(to.elem, to.port, batch)
            }
            _ => self.lose(from, batch),
        }
    }

    /// Counts `batch` as leaving element `from` and entering element `to` (out of line: it
    /// runs only with `element_stats`).
    #[inline(never)]
    fn count(&self, from: usize, to: usize, batch: &Batch) {
        let packets = batch.len() as u64;
        let bytes: u64 = batch.iter().map(|p| p.len() as u64).sum();
        let c = &self.runtime.counts;
        c[from].out_packets.fetch_add(packets, Ordering::Relaxed);
        c[from].out_bytes.fetch_add(bytes, Ordering::Relaxed);
        c[to].in_packets.fetch_add(packets, Ordering::Relaxed);
        c[to].in_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Drops `batch`, which element `e` pushed to an output that is not connected (Click's
    /// `checked_output_push`), counting it as a drop of `e`.
    #[cold]
    pub(crate) fn lose(&mut self, e: usize, batch: Batch) {
        self.runtime.lost[e].fetch_add(batch.len() as u64, Ordering::Relaxed);
    }

    /// Pushes `batch` into input `port` of element `e`. If that element is already running
    /// (a push cycle), the batch waits and is delivered when it returns.
    #[inline]
    pub(crate) fn push_into(&mut self, e: usize, port: usize, batch: Batch) {
        let Some(mut el) = self.take_running(e) else {
            self.slots[e].pending.push(Deferred::Push(port, batch));
            return;
        };
        el.push(port, batch, &mut Cx { rt: self, me: e });
        self.put_back(e, el);
    }

    /// Takes element `e` out of its slot to run it; `None` if it is running already.
    #[inline]
    fn take_running(&mut self, e: usize) -> Option<Running> {
        let slot = &mut self.slots[e];
        match slot.elem.take() {
            Some(el) => Some(Running::Own(el)),
            None => slot.shared.take().map(Running::Shared),
        }
    }

    /// Puts element `e` back after it ran, first giving it what reached it meanwhile (a
    /// shared form takes handler writes while it runs: only pushes wait for it).
    #[inline]
    fn put_back(&mut self, e: usize, mut el: Running) {
        while !self.slots[e].pending.is_empty() {
            match (self.slots[e].pending.remove(0), &mut el) {
                (Deferred::Push(port, batch), el) => {
                    el.push(port, batch, &mut Cx { rt: self, me: e })
                }
                (Deferred::Write(h, value), Running::Own(own)) => {
                    self.deferred_write(e, &mut **own, &h, &value)
                }
                (Deferred::Write(..), Running::Shared(_)) => {}
            }
        }
        match el {
            Running::Own(own) => self.slots[e].elem = Some(own),
            Running::Shared(sh) => self.slots[e].shared = Some(sh),
        }
    }

    /// Puts element `e` (here `el`) back after it ran, as [`Router::put_back`] does.
    #[inline]
    pub(crate) fn restore(&mut self, e: usize, el: Box<dyn Element>) {
        self.put_back(e, Running::Own(el));
    }

    /// Runs a handler write that reached element `e` (here `el`) while it was running. Its
    /// caller has gone on, so an error is reported on standard error.
    pub(crate) fn deferred_write(&mut self, e: usize, el: &mut dyn Element, h: &str, value: &str) {
        let table = self.graph.info[e].table.clone();
        if let Err(m) = call_write(&table, el, h, value, &mut Cx { rt: self, me: e }) {
            eprintln!("{}.{}: {}", self.graph.info[e].name, h, m);
        }
    }

    /// Runs the handler writes that reached element `e` (here `el`, still running) since it
    /// started, as an element does that must see their effect before it returns (TimeFilter
    /// after its END_CALL); pushes still wait for its return.
    pub(crate) fn run_deferred_writes(&mut self, e: usize, el: &mut dyn Element) {
        let pending = std::mem::take(&mut self.slots[e].pending);
        let (writes, pushes): (Vec<_>, Vec<_>) = pending
            .into_iter()
            .partition(|d| matches!(d, Deferred::Write(..)));
        self.slots[e].pending = pushes;
        for w in writes {
            if let Deferred::Write(h, value) = w {
                self.deferred_write(e, el, &h, &value);
            }
        }
    }

    #[inline]
    pub(crate) fn pull_in(&mut self, to: usize, port: usize, max: usize) -> Batch {
        let Some(Some(from)) = self.ins[to].get(port).copied() else {
            return Batch::new();
        };
        let Some(mut el) = self.take_running(from.elem) else {
            return Batch::new();
        };
        let b = el.pull(
            from.port,
            max.min(crate::batch::BATCH_MAX),
            &mut Cx {
                rt: self,
                me: from.elem,
            },
        );
        self.put_back(from.elem, el);
        if self.counting && !b.is_empty() {
            self.count(from.elem, to, &b);
        }
        b
    }

    /// Runs `f` on element `e` with a context; `None` if the element is busy (re-entrant call).
    pub fn with_element<R>(
        &mut self,
        e: usize,
        f: impl FnOnce(&mut dyn Element, &mut Cx) -> R,
    ) -> Option<R> {
        let mut el = self.slots.get_mut(e)?.elem.take()?;
        let r = f(&mut *el, &mut Cx { rt: self, me: e });
        self.restore(e, el);
        Some(r)
    }

    /// The Storage interface of element `e` (packets held, capacity), whichever thread shares
    /// it; `None` if it is no queue or is busy.
    pub fn storage_of(&self, e: usize) -> Option<(usize, usize)> {
        let slot = &self.slots[e];
        match (&slot.elem, &slot.shared) {
            (Some(el), _) => el.storage(),
            (None, Some(sh)) => sh.storage(),
            (None, None) => None,
        }
    }

    // ---- notifiers and router context ----

    pub(crate) fn new_notifier(&mut self, owner: usize, active: bool) -> NotifierId {
        let ns =
            Arc::get_mut(&mut self.notifiers).expect("notifiers are created before threads start");
        ns.push(Notifier {
            active: active.into(),
            listeners: Vec::new(),
            owner,
        });
        ns.len() - 1
    }

    pub(crate) fn add_listener(&mut self, nid: NotifierId, task: usize) {
        let ns =
            Arc::get_mut(&mut self.notifiers).expect("listeners are added before threads start");
        if !ns[nid].listeners.contains(&task) {
            ns[nid].listeners.push(task);
        }
    }

    /// Schedules task `t`, here or on the thread that owns it.
    #[inline]
    pub(crate) fn wake(&mut self, t: usize) {
        match self
            .runtime
            .task_thread
            .get(t)
            .map(|th| th.load(Ordering::Acquire))
        {
            Some(th) if th != self.thread => self.runtime.wake_task(th, t),
            _ => self.tasks.schedule(t),
        }
    }

    #[inline]
    pub(crate) fn set_notifier(&mut self, nid: NotifierId, active: bool) {
        // A plain load first: when the state does not change (the common case, e.g. a queue
        // that stays non-empty) the cache line is only read, not bounced between threads.
        if self.notifiers[nid].active.load(Ordering::Acquire) == active {
            return;
        }
        let was = self.notifiers[nid].active.swap(active, Ordering::AcqRel);
        if active && !was {
            for i in 0..self.notifiers[nid].listeners.len() {
                let t = self.notifiers[nid].listeners[i];
                self.wake(t);
            }
        }
    }

    pub(crate) fn find_flow(
        &self,
        e: usize,
        port: usize,
        down: bool,
        pred: &dyn Fn(&dyn Element) -> bool,
    ) -> Vec<usize> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.graph.info.len()];
        let start = if down {
            self.graph.info[e].out_peers.get(port)
        } else {
            self.graph.info[e].in_peers.get(port)
        };
        let mut stack: Vec<PortRef> = start.cloned().unwrap_or_default();
        while let Some(pr) = stack.pop() {
            if seen[pr.elem] {
                continue;
            }
            seen[pr.elem] = true;
            if let Some(el) = self.slots[pr.elem].elem.as_deref() {
                if pred(el) {
                    out.push(pr.elem);
                    continue;
                }
            }
            let inf = &self.graph.info[pr.elem];
            if down {
                for o in 0..inf.noutputs {
                    if inf.flow.flows(pr.port, o) {
                        stack.extend(inf.out_peers[o].iter().copied());
                    }
                }
            } else {
                for i in 0..inf.ninputs {
                    if inf.flow.flows(i, pr.port) {
                        stack.extend(inf.in_peers[i].iter().copied());
                    }
                }
            }
        }
        out
    }
}
