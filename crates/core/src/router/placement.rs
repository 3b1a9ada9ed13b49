//! Threads: handing the elements, tasks and timers of a placement to workers, answering the
//! handler calls and migrations other threads post, and adaptive placement (moving task
//! groups off the busiest thread).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use sluice_lang::args::Args;

use crate::context::{ConfigCx, Cx, InitCx};
use crate::cpu::cycles;
use crate::element::Element;
use crate::sched::TimerQueue;
use crate::threads::{self, Adoption, Concurrency, Placement, PlacementInput, Request};

use super::datapath::Deferred;
use super::handler_routing::{call_read, call_write, HandlerError};
use super::{Router, Slot};

impl Router {
    /// Splits the elements over worker routers, runs them on their threads, and gathers them
    /// back when they stop.
    pub(crate) fn run_threads(&mut self) {
        let p = self
            .graph
            .placement
            .clone()
            .expect("placement computed at initialisation");
        let nthreads = self.runtime.nthreads();
        {
            let rt =
                Arc::get_mut(&mut self.runtime).expect("runtime not shared before threads start");
            rt.task_thread = p.task_thread.iter().map(|&t| AtomicUsize::new(t)).collect();
            rt.elem_home = p
                .elem_threads
                .iter()
                .map(|t| AtomicUsize::new(t[0]))
                .collect();
            rt.task_cycles = (0..p.task_thread.len())
                .map(|_| threads::Padded(AtomicU64::new(0)))
                .collect();
            rt.size_wakeups(p.task_thread.len());
        }
        self.balance_at = cycles() + BALANCE_CYCLES;
        // Per-thread copies are configured before the workers share the graph.
        let mut copies: Vec<(usize, usize, Box<dyn Element>)> = Vec::new();
        for e in 0..self.graph.info.len() {
            if self.graph.info[e].concurrency == Concurrency::Replicated {
                for &t in p.elem_threads[e].iter().skip(1) {
                    if let Some(r) = self.make_replica(e) {
                        copies.push((e, t, r));
                    }
                }
            }
        }
        let mut workers: Vec<Router> = (1..nthreads).map(|t| self.worker(t)).collect();
        for (e, t, r) in copies {
            if t == 0 {
                self.replicas[e].push(r);
            } else {
                workers[t - 1].slots[e].elem = Some(r);
            }
        }
        for e in 0..self.graph.info.len() {
            let ths = &p.elem_threads[e];
            if ths.len() > 1 {
                match self.graph.info[e].concurrency {
                    Concurrency::Shared | Concurrency::Separable => {
                        let el = self.slots[e]
                            .elem
                            .take()
                            .expect("element present before threads start");
                        let sharing = self.sharing(&p, e);
                        match el.into_shared(sharing) {
                            Some(sh) => {
                                for w in workers.iter_mut() {
                                    w.slots[e].shared = Some(sh.clone());
                                }
                                self.slots[e].shared = Some(sh);
                            }
                            None => eprintln!(
                                "{}: cannot be shared between threads",
                                self.graph.desc(e)
                            ),
                        }
                        continue;
                    }
                    Concurrency::Replicated | Concurrency::Exclusive => {}
                }
            }
            let home = ths[0];
            if home != 0 {
                workers[home - 1].slots[e].elem = self.slots[e].elem.take();
            }
        }
        for w in workers.iter_mut() {
            let t = w.thread;
            w.tasks.retain_scheduled(|id| p.task_thread[id] == t);
            w.timers = self.timers.split_off(|e| p.elem_threads[e][0] == t);
            w.selects = self
                .selects
                .iter()
                .copied()
                .filter(|&(_, e)| p.elem_threads[e][0] == t)
                .collect();
        }
        self.tasks.retain_scheduled(|id| p.task_thread[id] == 0);
        self.selects.retain(|&(_, e)| p.elem_threads[e][0] == 0);
        self.running_threads = true;
        self.note_sim_progress(true);
        for w in workers.iter_mut() {
            w.running_threads = true;
            w.note_sim_progress(true);
        }
        let affinity = crate::cpu::Affinity::current();
        let workers: Vec<Router> = std::thread::scope(|s| {
            let handles: Vec<_> = workers
                .into_iter()
                .map(|mut w| {
                    s.spawn(move || {
                        if let Some(a) = affinity {
                            a.pin(w.thread);
                        }
                        w.run_loop();
                        w
                    })
                })
                .collect();
            if let Some(a) = affinity {
                a.pin(0);
            }
            self.run_loop();
            if let Some(a) = affinity {
                a.restore();
            }
            handles
                .into_iter()
                .map(|h| h.join().expect("worker thread panicked"))
                .collect()
        });
        self.running_threads = false;
        for mut w in workers {
            for e in 0..self.graph.info.len() {
                if let Some(el) = w.slots[e].elem.take() {
                    if self.slots[e].elem.is_none() {
                        self.slots[e].elem = Some(el);
                    } else {
                        self.replicas[e].push(el);
                    }
                }
                w.slots[e].shared = None;
            }
            for (id, t) in w.tasks.all().iter().enumerate() {
                self.tasks.absorb_stats(id, t);
            }
            w.initialized = false;
        }
    }

    /// How many threads push into element `e` (those reaching its upstream neighbours on push
    /// inputs) and pull from it (those reaching its downstream neighbours on pull outputs).
    fn sharing(&self, p: &Placement, e: usize) -> crate::element::Sharing {
        let inf = &self.graph.info[e];
        let mut prod: Vec<usize> = Vec::new();
        let mut cons: Vec<usize> = Vec::new();
        for i in 0..inf.ninputs {
            if inf.in_push[i] {
                for up in &inf.in_peers[i] {
                    prod.extend(p.elem_threads[up.elem].iter().copied());
                }
            }
        }
        for o in 0..inf.noutputs {
            if !inf.out_push[o] {
                for down in &inf.out_peers[o] {
                    cons.extend(p.elem_threads[down.elem].iter().copied());
                }
            }
        }
        prod.sort_unstable();
        prod.dedup();
        cons.sort_unstable();
        cons.dedup();
        crate::element::Sharing {
            producers: prod.len(),
            consumers: cons.len(),
        }
    }

    /// An empty worker router for thread `t` sharing this router's graph.
    fn worker(&self, t: usize) -> Router {
        let slots = (0..self.slots.len()).map(|_| Slot::empty()).collect();
        let mut w = Router::fresh(
            self.graph.clone(),
            slots,
            self.clock.clone(),
            self.runtime.clone(),
            t,
        );
        w.outs = self.outs.clone();
        w.ins = self.ins.clone();
        w.pass = self.pass.clone();
        w.tasks = self.tasks.clone();
        w.notifiers = self.notifiers.clone();
        w.initialized = true;
        w
    }

    /// A fresh copy of element `e`, configured and initialised like the original.
    fn make_replica(&mut self, e: usize) -> Option<Box<dyn Element>> {
        let mut el = (self.graph.info[e].class.make)();
        let mut args = Args::new(&self.graph.info[e].config());
        let ok = el
            .configure(&mut args, &mut ConfigCx { rt: self, me: e })
            .is_ok()
            && args.complete().is_ok();
        let init = ok
            && el
                .initialize(&mut InitCx {
                    cx: Cx { rt: self, me: e },
                })
                .is_ok();
        if !init {
            eprintln!("{}: could not make a per-thread copy", self.graph.desc(e));
            return None;
        }
        Some(el)
    }

    /// Threads other than this one that hold a copy of element `e` while threads run.
    pub(crate) fn other_threads(&self, e: usize) -> Vec<usize> {
        match &self.graph.placement {
            Some(p) if self.running_threads => {
                if p.elem_threads[e].len() == 1 {
                    self.moved_to(e).into_iter().collect()
                } else {
                    p.elem_threads[e]
                        .iter()
                        .copied()
                        .filter(|&t| t != self.thread)
                        .collect()
                }
            }
            _ => Vec::new(),
        }
    }

    /// Answers handler calls posted by other threads, schedules tasks they woke, and (when
    /// `migrate`, i.e. between task runs) hands over or takes over task groups.
    pub(crate) fn service_mail(&mut self, migrate: bool) {
        if !self.runtime.links[self.thread]
            .pending
            .load(Ordering::Acquire)
        {
            return;
        }
        let mut woken = std::mem::take(&mut self.woken_scratch);
        let runtime = self.runtime.clone();
        let mail = runtime.take(self.thread, |t| woken.push(t));
        for &t in &woken {
            self.wake(t);
        }
        woken.clear();
        self.woken_scratch = woken;
        for m in mail {
            match m {
                Request::Read { elem, query, reply } => {
                    match self.slots[elem].elem.as_deref_mut() {
                        Some(el) => {
                            let table = &self.graph.info[elem].table;
                            let _ = reply.send(call_read(table, el, &query));
                        }
                        None => match self.moved_to(elem) {
                            Some(t) => self.runtime.post(t, Request::Read { elem, query, reply }),
                            None => {
                                let _ =
                                    reply.send(Err(HandlerError::Failed("element is busy".into())));
                            }
                        },
                    }
                }
                Request::Write {
                    elem,
                    handler,
                    value,
                    reply,
                } => {
                    if self.slots[elem].elem.is_none() {
                        if let Some(t) = self.moved_to(elem) {
                            self.runtime.post(
                                t,
                                Request::Write {
                                    elem,
                                    handler,
                                    value,
                                    reply,
                                },
                            );
                            continue;
                        }
                    }
                    let table = self.graph.info[elem].table.clone();
                    let r = match self
                        .with_element(elem, |el, cx| call_write(&table, el, &handler, &value, cx))
                    {
                        Some(r) => r.map_err(HandlerError::Failed),
                        None => {
                            // Running here (this thread waits inside it for another thread's
                            // answer): the write runs when it returns.
                            self.slots[elem]
                                .pending
                                .push(Deferred::Write(handler, value));
                            Ok(())
                        }
                    };
                    let _ = reply.send(r);
                }
                Request::Release { group, to } if migrate => self.release(group, to),
                Request::Adopt(a) if migrate => self.adopt(*a),
                r => self.runtime.post(self.thread, r),
            }
        }
    }

    /// The thread element `e` moved to, if it is no longer here.
    pub(crate) fn moved_to(&self, e: usize) -> Option<usize> {
        let home = self.runtime.elem_home.get(e)?.load(Ordering::Acquire);
        (home != self.thread).then_some(home)
    }

    /// Hands task group `g` (elements, tasks, timers, watched descriptors) to thread `to`.
    pub(crate) fn release(&mut self, g: usize, to: usize) {
        let Some(group) = self.graph.placement.as_ref().map(|p| p.groups[g].clone()) else {
            return;
        };
        let mut a = Adoption {
            elems: Vec::new(),
            tasks: Vec::new(),
            timers: TimerQueue::default(),
            selects: Vec::new(),
        };
        for &e in &group.elems {
            if let Some(el) = self.slots[e].elem.take() {
                a.elems.push((e, el));
            }
            self.runtime.elem_home[e].store(to, Ordering::Release);
        }
        for &t in &group.tasks {
            a.tasks.push((t, self.tasks.get(t).scheduled));
            self.tasks.unschedule(t);
            self.runtime.task_thread[t].store(to, Ordering::Release);
        }
        a.timers = self.timers.split_off(|e| group.elems.contains(&e));
        a.selects = self
            .selects
            .iter()
            .copied()
            .filter(|(_, e)| group.elems.contains(e))
            .collect();
        self.selects.retain(|(_, e)| !group.elems.contains(e));
        self.runtime.post(to, Request::Adopt(Box::new(a)));
    }

    /// Takes over a task group released by another thread.
    pub(crate) fn adopt(&mut self, a: Adoption) {
        for (e, el) in a.elems {
            self.slots[e].elem = Some(el);
        }
        for (t, scheduled) in a.tasks {
            if scheduled {
                self.tasks.schedule(t);
            }
        }
        self.timers.absorb(a.timers);
        self.selects.extend(a.selects);
        for t in std::mem::take(&mut self.orphans) {
            self.wake(t);
        }
        self.runtime.migrating.fetch_sub(1, Ordering::AcqRel);
    }

    /// Adaptive placement, run by thread 0 now and then: measures what each task group cost
    /// since the last look and moves groups so the busiest thread gets lighter.
    pub(crate) fn balance(&mut self) {
        let now = cycles();
        if now < self.balance_at || self.runtime.migrating.load(Ordering::Acquire) > 0 {
            return;
        }
        self.balance_at = now + BALANCE_CYCLES;
        let Some(p) = &self.graph.placement else {
            return;
        };
        let tc: Vec<u64> = self
            .runtime
            .task_cycles
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        if self.balance_seen.len() != tc.len() {
            self.balance_seen = tc;
            return;
        }
        let cost: Vec<u64> = p
            .groups
            .iter()
            .map(|g| {
                g.tasks
                    .iter()
                    .map(|&t| tc[t].wrapping_sub(self.balance_seen[t]))
                    .sum()
            })
            .collect();
        let current: Vec<usize> = p
            .groups
            .iter()
            .map(|g| {
                g.tasks
                    .first()
                    .map(|&t| self.runtime.task_thread[t].load(Ordering::Acquire))
                    .unwrap_or(0)
            })
            .collect();
        self.balance_seen = tc;
        let nthreads = self.runtime.nthreads();
        let moves = match &self.replan {
            Some(r) => {
                let names: Vec<String> = self
                    .tasks
                    .all()
                    .iter()
                    .map(|t| self.graph.info[t.elem].name.clone())
                    .collect();
                let sent: Vec<u64> = self
                    .tasks
                    .all()
                    .iter()
                    .map(|t| {
                        self.runtime
                            .counts
                            .get(t.elem)
                            .map_or(0, |c| c.out_packets.load(Ordering::Relaxed))
                    })
                    .collect();
                let before = std::mem::replace(&mut self.balance_packets, sent.clone());
                let packets: Vec<u64> = p
                    .groups
                    .iter()
                    .map(|g| {
                        g.tasks
                            .iter()
                            .map(|&t| sent[t].wrapping_sub(before.get(t).copied().unwrap_or(0)))
                            .sum()
                    })
                    .collect();
                let mut policy = r.0.lock().unwrap_or_else(|e| e.into_inner());
                policy.moves(&threads::Look {
                    groups: &p.groups,
                    names: &names,
                    cycles: &cost,
                    packets: &packets,
                    current: &current,
                    nthreads,
                })
            }
            None => threads::rebalance(&p.groups, &cost, &current, nthreads),
        };
        for (g, to) in moves {
            tracing::info!(
                group = g,
                from = current[g],
                to,
                cycles = cost[g],
                "adaptive placement: moving a task group"
            );
            self.runtime.migrating.fetch_add(1, Ordering::AcqRel);
            self.runtime
                .post(current[g], Request::Release { group: g, to });
        }
    }

    pub(crate) fn compute_placement(&mut self) -> Result<Placement, Vec<String>> {
        let n = self.graph.info.len();
        let mut next = vec![Vec::new(); n];
        for (e, nx) in next.iter_mut().enumerate() {
            let inf = &self.graph.info[e];
            for o in 0..inf.noutputs {
                if inf.out_push[o] {
                    nx.extend(inf.out_peers[o].iter().map(|p| p.elem));
                }
            }
            for i in 0..inf.ninputs {
                if !inf.in_push[i] {
                    nx.extend(inf.in_peers[i].iter().map(|p| p.elem));
                }
            }
        }
        let describe = |e: usize| self.graph.desc(e);
        let inp = PlacementInput {
            nthreads: self.runtime.nthreads(),
            task_elem: self.tasks.all().iter().map(|t| t.elem).collect(),
            next,
            concurrency: self.graph.info.iter().map(|i| i.concurrency).collect(),
            fixed: &self.graph.static_threads,
            describe: &describe,
        };
        threads::place(&inp).map_err(|errs| {
            errs.into_iter()
                .map(|m| {
                    format!(
                        "{}: {}",
                        self.graph
                            .flat
                            .elements
                            .first()
                            .map(|e| e.landmark.to_string())
                            .unwrap_or_default(),
                        m
                    )
                })
                .collect()
        })
    }
}

/// How often thread 0 reconsiders task placement (processor cycles: some tens of
/// milliseconds).
pub(crate) const BALANCE_CYCLES: u64 = 100_000_000;
