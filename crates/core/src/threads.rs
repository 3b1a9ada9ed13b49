//! Running one configuration on several threads.
//!
//! At initialisation the router works out which threads reach each element: a task reaches
//! the elements downstream of its push outputs and upstream of its pull inputs. Tasks that
//! reach a common element that cannot be shared are kept on one thread (one packet path stays
//! together); the other task groups are spread over the threads, heaviest thread last, unless
//! `StaticThreadSched` places them. An element reached by several threads must say how it can
//! be shared ([`Concurrency`]): replicated per thread (handlers merge the replicas' values) or
//! converted into a thread-safe shared element (a queue becomes a lock-free ring). Anything
//! else is a configuration error naming the element and the threads.
//!
//! Placement then adapts (SMP Click §4.1.1): every task's cycles are counted, and thread 0
//! periodically sums them per task group and, when that would make the busiest thread at
//! least a tenth lighter, moves movable groups (heaviest first, to the least-loaded thread).
//! A move happens between task runs: the owning thread hands the group's elements, tasks,
//! timers and descriptors to the other, which takes them over; nothing in flight is lost.
//! Groups placed by StaticThreadSched, or reaching an element another group also uses (other
//! than a shared queue), stay where they are. The `tasks` router handler shows each task's
//! thread, runs and cycles per run.
//!
//! Each worker thread owns its elements, task list, timers and watched descriptors; workers
//! talk through `Runtime`: task wake-ups (a queue filled on one thread wakes its puller on
//! another), handler calls for elements another thread owns, stop requests, and idle
//! detection so that a configuration whose work is done stops.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Mutex;

use crate::router::{HandlerError, Query};

/// Most worker threads a router runs (`-j`): each costs a stack, a wake-up descriptor and
/// per-thread pools, and more threads than this exceed the cores of any machine Sluice targets.
pub const MAX_THREADS: usize = 256;

/// How an element may be used when more than one thread reaches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Concurrency {
    /// Only one thread may reach it (the default).
    Exclusive,
    /// Each thread gets its own copy, configured alike; numeric handler values are summed.
    Replicated,
    /// The element converts itself into a thread-safe [`crate::SharedElement`].
    Shared,
    /// Kept on one thread like an exclusive element while placement is free to choose; when
    /// fixed placements (StaticThreadSched) put the tasks that reach it on different threads,
    /// it converts itself into a [`crate::SharedElement`] instead (Click's Queue: one thread
    /// may push while another pulls).
    Separable,
}

impl crate::Router {
    /// True if an element reported a failure that makes the run fail ([`crate::Cx::fail_run`]):
    /// `sluice` then exits with status 1.
    pub fn run_failed(&self) -> bool {
        self.runtime.failed.load(Ordering::Relaxed)
    }
}

/// A handler call for an element owned by another thread.
pub(crate) enum Request {
    /// Hand task group `group` (its tasks, elements, timers, descriptors) to thread `to`.
    Release { group: usize, to: usize },
    /// Take over a task group released by another thread.
    Adopt(Box<Adoption>),
    Read {
        elem: usize,
        query: Query,
        reply: Sender<Result<String, HandlerError>>,
    },
    Write {
        elem: usize,
        handler: String,
        value: String,
        reply: Sender<Result<(), HandlerError>>,
    },
}

/// A task group in transit between threads.
pub(crate) struct Adoption {
    pub(crate) elems: Vec<(usize, Box<dyn crate::Element>)>,
    /// Tasks, and whether each was scheduled.
    pub(crate) tasks: Vec<(usize, bool)>,
    pub(crate) timers: crate::sched::TimerQueue,
    pub(crate) selects: Vec<(i32, usize)>,
}

/// What one worker shares with the others (on its own cache lines).
#[repr(align(128))]
pub(crate) struct WorkerLink {
    /// Tasks woken by other threads.
    /// Tasks woken by other threads, one bit per task (sized when threads start).
    pub(crate) woken: Box<[AtomicU64]>,
    /// Set when `mail` may hold something.
    has_mail: AtomicBool,
    /// Handler calls from other threads.
    mail: Mutex<Vec<Request>>,
    /// Set when the inbox or mail may hold something.
    pub(crate) pending: AtomicBool,
    /// True while the worker sleeps with nothing to do.
    blocked: AtomicBool,
    /// eventfd that wakes the worker from its poll.
    pub(crate) efd: i32,
    /// Cycles this worker spent in task runs that found work (written by the worker only).
    pub(crate) busy_cycles: AtomicU64,
}

/// Packets and bytes that entered and left one element (see
/// [`crate::RouterOptions::element_stats`]), on cache lines of its own (two: the
/// adjacent-line prefetcher pairs them).
#[repr(align(128))]
#[derive(Default)]
pub(crate) struct ElementCounts {
    pub(crate) in_packets: AtomicU64,
    pub(crate) in_bytes: AtomicU64,
    pub(crate) out_packets: AtomicU64,
    pub(crate) out_bytes: AtomicU64,
}

/// A value on cache lines of its own (two lines: the adjacent-line prefetcher pairs them), so
/// that counters one thread writes never share a line with another thread's.
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub(crate) T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// State shared by all the workers of one router.
pub(crate) struct Runtime {
    pub(crate) stop: AtomicBool,
    /// Set by an element whose failure makes the whole run fail ([`crate::Cx::fail_run`]).
    pub(crate) failed: AtomicBool,
    pub(crate) stop_events: AtomicU32,
    /// Set once the input is finished (a driver stop): sources stop, the work in flight
    /// drains, and the router stops when every thread is quiet.
    pub(crate) draining: AtomicBool,
    /// Stop as soon as no thread has anything left to do, without a driver stop
    /// ([`crate::Router::run_until_idle`]).
    pub(crate) until_idle: AtomicBool,
    pub(crate) links: Vec<WorkerLink>,
    idle: AtomicUsize,
    /// Current thread of each task (set when threads start; changed by adaptive placement).
    pub(crate) task_thread: Vec<AtomicUsize>,
    /// Current thread of each element used by one thread.
    pub(crate) elem_home: Vec<AtomicUsize>,
    /// Cycles spent in each task, summed over threads.
    pub(crate) task_cycles: Vec<Padded<AtomicU64>>,
    /// Task groups in transit.
    pub(crate) migrating: AtomicUsize,
    /// Packets each element pushed to an output that is not connected (dropped), all threads.
    pub(crate) lost: Vec<AtomicU64>,
    /// Per-element packet and byte counts, one per element when the router counts them
    /// (empty otherwise).
    pub(crate) counts: Box<[ElementCounts]>,
    /// How a `hotconfig` write builds a configuration (`None`: no hot swap).
    pub(crate) reconfigure: Option<crate::router::Reconfigure>,
    /// The router a `hotconfig` write built, waiting to be installed.
    pub(crate) hotswap: Mutex<Option<Box<crate::Router>>>,
    /// For a router built by a `hotconfig` write: the class of each element of the router it
    /// replaces, by name.
    pub(crate) predecessors: HashMap<String, &'static str>,
    /// Packets that elements of the configurations this one replaced still held when they
    /// were swapped out (no successor took them), by element name: freed, counted as drops.
    pub(crate) retired: Mutex<Vec<(String, u64)>>,
}

impl Runtime {
    pub(crate) fn new(
        n: usize,
        elements: usize,
        reconfigure: Option<crate::router::Reconfigure>,
        predecessors: HashMap<String, &'static str>,
        element_stats: bool,
    ) -> Runtime {
        let links = (0..n)
            .map(|_| WorkerLink {
                woken: Box::new([]),
                has_mail: AtomicBool::new(false),
                mail: Mutex::new(Vec::new()),
                pending: AtomicBool::new(false),
                blocked: AtomicBool::new(false),
                // SAFETY: eventfd has no pointer arguments; a failure returns -1, which the
                // poll loop treats as "no wake-up descriptor".
                efd: unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) },
                busy_cycles: AtomicU64::new(0),
            })
            .collect();
        Runtime {
            stop: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            stop_events: AtomicU32::new(0),
            draining: AtomicBool::new(false),
            until_idle: AtomicBool::new(false),
            links,
            idle: AtomicUsize::new(0),
            task_thread: Vec::new(),
            elem_home: Vec::new(),
            task_cycles: Vec::new(),
            migrating: AtomicUsize::new(0),
            lost: (0..elements).map(|_| AtomicU64::new(0)).collect(),
            counts: (0..if element_stats { elements } else { 0 })
                .map(|_| ElementCounts::default())
                .collect(),
            reconfigure,
            hotswap: Mutex::new(None),
            predecessors,
            retired: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn nthreads(&self) -> usize {
        self.links.len()
    }

    /// Wakes worker `w` if it sleeps idle; a busy worker notices `pending` on its own.
    fn kick(&self, w: usize) {
        let l = &self.links[w];
        if !l.blocked.swap(false, Ordering::SeqCst) {
            return;
        }
        self.idle.fetch_sub(1, Ordering::SeqCst);
        self.ring_bell(w);
    }

    /// Writes worker `w`'s eventfd, ending any wait it is in (also a wait for a timer or a
    /// descriptor, which `kick` leaves alone): for rare events that must be seen at once.
    fn ring_bell(&self, w: usize) {
        let l = &self.links[w];
        let one: u64 = 1;
        if l.efd >= 0 {
            // SAFETY: writes 8 bytes from a live u64 to our own eventfd.
            unsafe { libc::write(l.efd, &one as *const u64 as *const libc::c_void, 8) };
        }
    }

    /// Schedules task `task` on worker `w` from another thread.
    pub(crate) fn wake_task(&self, w: usize, task: usize) {
        let l = &self.links[w];
        let (word, bit) = (task / 64, 1u64 << (task % 64));
        if l.woken[word].load(Ordering::Acquire) & bit == 0 {
            l.woken[word].fetch_or(bit, Ordering::AcqRel);
        }
        l.pending.store(true, Ordering::SeqCst);
        self.kick(w);
    }

    /// Posts a handler call to worker `w`.
    pub(crate) fn post(&self, w: usize, r: Request) {
        self.links[w]
            .mail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(r);
        self.links[w].has_mail.store(true, Ordering::SeqCst);
        self.links[w].pending.store(true, Ordering::SeqCst);
        self.kick(w);
    }

    /// Takes worker `w`'s woken tasks (passed to `on_task`) and handler calls.
    pub(crate) fn take(&self, w: usize, mut on_task: impl FnMut(usize)) -> Vec<Request> {
        let l = &self.links[w];
        l.pending.store(false, Ordering::SeqCst);
        for (i, word) in l.woken.iter().enumerate() {
            if word.load(Ordering::Acquire) == 0 {
                continue;
            }
            let mut bits = word.swap(0, Ordering::AcqRel);
            while bits != 0 {
                on_task(i * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
        if l.has_mail.swap(false, Ordering::AcqRel) {
            std::mem::take(&mut *l.mail.lock().unwrap_or_else(|e| e.into_inner()))
        } else {
            Vec::new()
        }
    }

    /// Sizes the wake-up bitmaps for `ntasks` tasks (before threads start).
    pub(crate) fn size_wakeups(&mut self, ntasks: usize) {
        for l in &mut self.links {
            l.woken = (0..ntasks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect();
        }
    }

    /// Stops every worker.
    pub(crate) fn stop_all(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.kick_all();
    }

    /// Makes every worker look at the shared state again (stop, drain).
    fn kick_all(&self) {
        for w in 0..self.links.len() {
            self.links[w].pending.store(true, Ordering::SeqCst);
            self.kick(w);
            self.ring_bell(w);
        }
    }

    /// Raises a driver stop event, handled by worker 0 (which is woken for it).
    pub(crate) fn stop_event(&self) {
        self.stop_events.fetch_add(1, Ordering::AcqRel);
        self.links[0].pending.store(true, Ordering::SeqCst);
        self.kick(0);
        self.ring_bell(0);
    }

    /// Starts draining: the input is finished; every worker lets its work in flight finish.
    pub(crate) fn begin_drain(&self) {
        if !self.draining.swap(true, Ordering::SeqCst) {
            self.kick_all();
        }
    }

    /// True once the router may end when every worker is idle: it is draining, or runs
    /// until idle.
    pub(crate) fn may_end_when_idle(&self) -> bool {
        self.draining.load(Ordering::Relaxed) || self.until_idle.load(Ordering::Relaxed)
    }

    /// Marks worker `w` idle with nothing that could give it work but another thread. Returns
    /// true if it may now sleep until kicked; false if work arrived meanwhile, or if every
    /// worker is now idle and the router may end then (everyone is stopped).
    pub(crate) fn enter_idle(&self, w: usize) -> bool {
        let l = &self.links[w];
        l.blocked.store(true, Ordering::SeqCst);
        let n = self.idle.fetch_add(1, Ordering::SeqCst) + 1;
        if n == self.links.len() && self.may_end_when_idle() {
            // Everyone is idle: stop, unless a hand-over is still in flight.
            let quiet = self
                .links
                .iter()
                .all(|l| !l.pending.load(Ordering::SeqCst) && l.blocked.load(Ordering::SeqCst));
            if quiet {
                self.stop_all();
            } else {
                self.leave_idle(w);
            }
            return false;
        }
        // A wake-up that came before `blocked` was set did not write the eventfd: look for it.
        if l.pending.load(Ordering::SeqCst) {
            self.leave_idle(w);
            return false;
        }
        true
    }

    /// Marks worker `w` busy again (no effect if another thread already did).
    pub(crate) fn leave_idle(&self, w: usize) {
        if self.links[w].blocked.swap(false, Ordering::SeqCst) {
            self.idle.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Clears worker `w`'s eventfd after a wake-up.
    pub(crate) fn drain_efd(&self, w: usize) {
        let mut v: u64 = 0;
        let fd = self.links[w].efd;
        if fd >= 0 {
            // SAFETY: reads 8 bytes into a live u64 from our own non-blocking eventfd.
            unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        for l in &self.links {
            if l.efd >= 0 {
                // SAFETY: closes the eventfd this runtime created and nobody else holds.
                unsafe { libc::close(l.efd) };
            }
        }
    }
}

/// Where each task and element runs.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Thread of each task (at start; adaptive placement may move tasks later).
    pub task_thread: Vec<usize>,
    /// Threads that reach each element (sorted; one entry for an element used by one thread).
    pub elem_threads: Vec<Vec<usize>>,
    /// Task groups: tasks that share a non-shareable element, placed together.
    pub groups: Vec<TaskGroup>,
}

/// Tasks that must run on one thread, and the elements only they reach.
#[derive(Clone, Debug, Default)]
pub struct TaskGroup {
    /// The tasks.
    pub tasks: Vec<usize>,
    /// Elements reached by these tasks and no others (they move with the group).
    pub elems: Vec<usize>,
    /// Elements these tasks reach together with other groups' (thread-safe queues, shared
    /// elements): where the group meets others.
    pub meets: Vec<usize>,
    /// Placed by StaticThreadSched: never moved.
    pub fixed: bool,
    /// True if the group can move: every element it reaches is its own or shared.
    pub movable: bool,
}

/// The graph facts placement needs.
pub(crate) struct PlacementInput<'a> {
    pub(crate) nthreads: usize,
    /// Element of each task.
    pub(crate) task_elem: Vec<usize>,
    /// Downstream elements along push outputs, upstream along pull inputs, for each element.
    pub(crate) next: Vec<Vec<usize>>,
    pub(crate) concurrency: Vec<Concurrency>,
    /// Thread fixed by StaticThreadSched for an element.
    pub(crate) fixed: &'a HashMap<usize, usize>,
    pub(crate) describe: &'a dyn Fn(usize) -> String,
}

fn find(parent: &mut [usize], mut x: usize) -> usize {
    while parent[x] != x {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    x
}

/// Places tasks on threads and works out which threads reach each element.
pub(crate) fn place(inp: &PlacementInput) -> Result<Placement, Vec<String>> {
    let ntasks = inp.task_elem.len();
    let nelem = inp.next.len();
    let reach: Vec<Vec<usize>> = inp
        .task_elem
        .iter()
        .map(|&start| {
            let mut seen = vec![false; nelem];
            let mut stack = vec![start];
            let mut out = Vec::new();
            while let Some(e) = stack.pop() {
                if std::mem::replace(&mut seen[e], true) {
                    continue;
                }
                out.push(e);
                stack.extend(inp.next[e].iter().copied());
            }
            out
        })
        .collect();
    // Tasks that reach a common exclusive element form one group; so do tasks that reach a
    // common separable element, unless fixed placements already put them on different threads.
    let mut parent: Vec<usize> = (0..ntasks).collect();
    let mut pinned: Vec<Option<usize>> = (0..ntasks)
        .map(|t| inp.fixed.get(&inp.task_elem[t]).copied())
        .collect();
    for kind in [Concurrency::Exclusive, Concurrency::Separable] {
        let mut owner: HashMap<usize, usize> = HashMap::new();
        for (t, r) in reach.iter().enumerate() {
            for &e in r {
                if inp.concurrency[e] != kind {
                    continue;
                }
                let Some(&o) = owner.get(&e) else {
                    owner.insert(e, t);
                    continue;
                };
                let (a, b) = (find(&mut parent, o), find(&mut parent, t));
                if a == b {
                    continue;
                }
                match (pinned[a], pinned[b]) {
                    (Some(x), Some(y)) if x != y && kind == Concurrency::Separable => {}
                    (pa, pb) => {
                        parent[a] = b;
                        pinned[b] = pb.or(pa);
                    }
                }
            }
        }
    }
    let mut errors = Vec::new();
    let mut group_thread: HashMap<usize, usize> = HashMap::new();
    let mut group_fixer: HashMap<usize, usize> = HashMap::new();
    for t in 0..ntasks {
        let e = inp.task_elem[t];
        if let Some(&th) = inp.fixed.get(&e) {
            let g = find(&mut parent, t);
            match group_thread.get(&g) {
                Some(&other) if other != th => {
                    let shared: Vec<String> = reach[t]
                        .iter()
                        .filter(|x| {
                            inp.concurrency[**x] == Concurrency::Exclusive
                                && reach[group_fixer[&g]].contains(x)
                        })
                        .map(|&x| (inp.describe)(x))
                        .collect();
                    errors.push(format!(
                        "{} cannot be shared between threads {} and {} (reached from the tasks of {} and {}); \
                         put those tasks on one thread or separate the paths with a ThreadSafeQueue \
                         (a Queue serves one thread)",
                        shared.first().cloned().unwrap_or_else(|| "an element".into()),
                        other,
                        th,
                        (inp.describe)(inp.task_elem[group_fixer[&g]]),
                        (inp.describe)(e),
                    ));
                }
                _ => {
                    group_thread.insert(g, th);
                    group_fixer.insert(g, t);
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut load = vec![0usize; inp.nthreads];
    for (t, _) in inp.task_elem.iter().enumerate() {
        let g = find(&mut parent, t);
        if let Some(&th) = group_thread.get(&g) {
            load[th] += 1;
        }
    }
    let mut task_thread = vec![0; ntasks];
    for (t, slot) in task_thread.iter_mut().enumerate() {
        let g = find(&mut parent, t);
        let th = match group_thread.get(&g) {
            Some(&th) => th,
            None => {
                let th = (0..inp.nthreads).min_by_key(|&i| (load[i], i)).unwrap_or(0);
                group_thread.insert(g, th);
                th
            }
        };
        load[th] += 1;
        *slot = th;
    }
    let mut members: HashMap<usize, Vec<usize>> = HashMap::new();
    for t in 0..ntasks {
        let g = find(&mut parent, t);
        members.entry(g).or_default().push(t);
    }
    let mut reached_by: Vec<Vec<usize>> = vec![Vec::new(); nelem];
    for (t, r) in reach.iter().enumerate() {
        let g = find(&mut parent, t);
        for &e in r {
            if !reached_by[e].contains(&g) {
                reached_by[e].push(g);
            }
        }
    }
    let mut roots: Vec<usize> = members.keys().copied().collect();
    roots.sort_unstable();
    let groups = roots
        .iter()
        .map(|g| {
            let tasks = members[g].clone();
            let mut elems = Vec::new();
            let mut meets = Vec::new();
            let mut movable = true;
            for (e, by) in reached_by.iter().enumerate() {
                if !by.contains(g) {
                    continue;
                }
                if by.len() == 1 {
                    elems.push(e);
                    continue;
                }
                meets.push(e);
                if inp.concurrency[e] != Concurrency::Shared {
                    movable = false;
                }
            }
            let fixed = tasks
                .iter()
                .any(|t| inp.fixed.contains_key(&inp.task_elem[*t]));
            TaskGroup {
                tasks,
                elems,
                meets,
                fixed,
                movable,
            }
        })
        .collect();
    let mut elem_threads: Vec<Vec<usize>> = vec![Vec::new(); nelem];
    for (t, r) in reach.iter().enumerate() {
        for &e in r {
            if !elem_threads[e].contains(&task_thread[t]) {
                elem_threads[e].push(task_thread[t]);
            }
        }
    }
    for (e, ths) in elem_threads.iter_mut().enumerate() {
        if ths.is_empty() {
            ths.push(
                inp.fixed
                    .get(&e)
                    .copied()
                    .unwrap_or(0)
                    .min(inp.nthreads - 1),
            );
        }
        ths.sort_unstable();
        if ths.len() > 1 && inp.concurrency[e] == Concurrency::Exclusive {
            errors.push(format!(
                "{} is reached by threads {:?} and cannot be shared; separate the paths with a \
                 ThreadSafeQueue (a Queue serves one thread)",
                (inp.describe)(e),
                ths
            ));
        }
    }
    if errors.is_empty() {
        Ok(Placement {
            task_thread,
            elem_threads,
            groups,
        })
    } else {
        Err(errors)
    }
}

/// What adaptive placement measured at one look, for a [`Replanner`].
pub struct Look<'a> {
    /// The task groups.
    pub groups: &'a [TaskGroup],
    /// The element of each task.
    pub names: &'a [String],
    /// Cycles each group's tasks spent since the last look.
    pub cycles: &'a [u64],
    /// Packets each group's task elements emitted since the last look (all 0 unless the
    /// router counts packets, [`crate::RouterOptions::element_stats`]).
    pub packets: &'a [u64],
    /// Each group's thread.
    pub current: &'a [usize],
    /// Threads.
    pub nthreads: usize,
}

/// A policy for adaptive placement: from what each task group cost since the last look,
/// which groups move to which threads.
pub trait Replanner: Send {
    /// Moves `(group, to)`. Groups that are not `movable` must stay; `fixed`
    /// (StaticThreadSched) groups may move.
    fn moves(&mut self, look: &Look) -> Vec<(usize, usize)>;
}

/// A [`Replanner`] handed to a router ([`crate::RouterOptions::replan`]).
#[derive(Clone)]
pub struct Replan(pub std::sync::Arc<Mutex<dyn Replanner>>);

impl std::fmt::Debug for Replan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Replan")
    }
}

/// Greedy rebalancing (SMP Click §4.1.1): groups that cannot move keep their thread; the
/// movable ones, heaviest first, go to the least-loaded thread. Returns the moves `(group,
/// to)` if they lower the busiest thread's load by at least a tenth.
pub(crate) fn rebalance(
    groups: &[TaskGroup],
    cost: &[u64],
    current: &[usize],
    nthreads: usize,
) -> Vec<(usize, usize)> {
    let mut old = vec![0u64; nthreads];
    for (g, &c) in cost.iter().enumerate() {
        old[current[g]] += c;
    }
    let mut load = vec![0u64; nthreads];
    let mut movable = Vec::new();
    for (g, grp) in groups.iter().enumerate() {
        if grp.fixed || !grp.movable {
            load[current[g]] += cost[g];
        } else {
            movable.push(g);
        }
    }
    movable.sort_by_key(|&g| std::cmp::Reverse(cost[g]));
    let mut assign = current.to_vec();
    for g in movable {
        let best = (0..nthreads)
            .min_by_key(|&t| (load[t], t != current[g]))
            .unwrap_or(current[g]);
        assign[g] = best;
        load[best] += cost[g];
    }
    let old_max = old.iter().copied().max().unwrap_or(0);
    let new_max = load.iter().copied().max().unwrap_or(0);
    if new_max.saturating_mul(10) > old_max.saturating_mul(9) {
        return Vec::new();
    }
    (0..groups.len())
        .filter(|&g| assign[g] != current[g])
        .map(|g| (g, assign[g]))
        .collect()
}

/// Merges the values of one handler read from several replicas: numbers are summed, anything
/// else is taken from the first replica.
pub(crate) fn merge_values(vals: &[String]) -> String {
    let trimmed: Vec<&str> = vals.iter().map(|v| v.trim()).collect();
    if let Some(ints) = trimmed
        .iter()
        .map(|v| v.parse::<i64>().ok())
        .collect::<Option<Vec<_>>>()
    {
        return format!("{}\n", ints.iter().sum::<i64>());
    }
    if let Some(fl) = trimmed
        .iter()
        .map(|v| v.parse::<f64>().ok())
        .collect::<Option<Vec<_>>>()
    {
        return format!("{}\n", fl.iter().sum::<f64>());
    }
    if let Some(table) = merge_details(vals) {
        return table;
    }
    vals.first().cloned().unwrap_or_default()
}

/// Merges `drop_details`-style tables (`COUNT LABEL` lines) with the same labels in the same
/// order, summing each line's count; `None` if the values are not such tables.
fn merge_details(vals: &[String]) -> Option<String> {
    let tables: Vec<Vec<(String, u64)>> = vals
        .iter()
        .map(|v| crate::handlers::parse_details(v))
        .collect();
    let first = tables.first()?;
    let lines = vals[0].lines().count();
    if first.is_empty() || first.len() != lines {
        return None;
    }
    let same = |t: &Vec<(String, u64)>| {
        t.len() == first.len() && t.iter().zip(first).all(|(a, b)| a.0 == b.0)
    };
    if !tables.iter().all(same) {
        return None;
    }
    Some(crate::handlers::details(first.iter().enumerate().map(
        |(i, (label, _))| (label.as_str(), tables.iter().map(|t| t[i].1).sum()),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(e: usize) -> String {
        format!("e{}", e)
    }

    #[test]
    fn paths_through_exclusive_elements_stay_together() {
        // tasks at 0 and 1 both push into exclusive element 2; task at 3 alone.
        let fixed = HashMap::new();
        let inp = PlacementInput {
            nthreads: 2,
            task_elem: vec![0, 1, 3],
            next: vec![vec![2], vec![2], vec![], vec![4], vec![]],
            concurrency: vec![Concurrency::Exclusive; 5],
            fixed: &fixed,
            describe: &describe,
        };
        let p = place(&inp).unwrap();
        assert_eq!(p.task_thread[0], p.task_thread[1]);
        assert_ne!(p.task_thread[0], p.task_thread[2]);
        assert_eq!(p.elem_threads[2].len(), 1);
    }

    #[test]
    fn static_placement_conflict_is_an_error() {
        let fixed: HashMap<usize, usize> = [(0, 0), (1, 1)].into_iter().collect();
        let inp = PlacementInput {
            nthreads: 2,
            task_elem: vec![0, 1],
            next: vec![vec![2], vec![2], vec![]],
            concurrency: vec![Concurrency::Exclusive; 3],
            fixed: &fixed,
            describe: &describe,
        };
        let e = place(&inp).unwrap_err();
        assert!(
            e[0].contains("e2 cannot be shared between threads 0 and 1"),
            "{:?}",
            e
        );
        assert!(e[0].contains("with a ThreadSafeQueue"), "{:?}", e);
    }

    #[test]
    fn separable_elements_split_only_where_placements_are_fixed() {
        // source 0 pushes into queue 1; puller 2 pulls from queue 1.
        let inp = |fixed| PlacementInput {
            nthreads: 2,
            task_elem: vec![0, 2],
            next: vec![vec![1], vec![], vec![1]],
            concurrency: vec![
                Concurrency::Exclusive,
                Concurrency::Separable,
                Concurrency::Exclusive,
            ],
            fixed,
            describe: &describe,
        };
        let free = HashMap::new();
        let p = place(&inp(&free)).unwrap();
        assert_eq!(p.task_thread[0], p.task_thread[1]);
        assert_eq!(p.elem_threads[1].len(), 1);
        let fixed: HashMap<usize, usize> = [(0, 1), (2, 0)].into_iter().collect();
        let p = place(&inp(&fixed)).unwrap();
        assert_eq!(p.task_thread, vec![1, 0]);
        assert_eq!(p.elem_threads[1], vec![0, 1]);
    }

    #[test]
    fn shared_elements_join_threads() {
        let fixed: HashMap<usize, usize> = [(0, 0), (2, 1)].into_iter().collect();
        // source 0 pushes into queue 1; puller 2 pulls from queue 1.
        let inp = PlacementInput {
            nthreads: 2,
            task_elem: vec![0, 2],
            next: vec![vec![1], vec![], vec![1]],
            concurrency: vec![
                Concurrency::Exclusive,
                Concurrency::Shared,
                Concurrency::Exclusive,
            ],
            fixed: &fixed,
            describe: &describe,
        };
        let p = place(&inp).unwrap();
        assert_eq!(p.elem_threads[1], vec![0, 1]);
        assert_eq!(p.task_thread, vec![0, 1]);
    }

    #[test]
    fn per_task_and_per_element_counters_never_share_cache_lines() {
        // Two threads' counters on one line would cost a line transfer per task run.
        let v: Vec<Padded<AtomicU64>> = (0..3).map(|_| Padded::default()).collect();
        let at = |i: usize| &v[i].0 as *const AtomicU64 as usize;
        assert!(at(1) - at(0) >= 128 && at(0) % 128 == 0);
        assert_eq!(std::mem::align_of::<ElementCounts>(), 128);
    }

    #[test]
    fn rebalancing_moves_the_heaviest_group_to_the_idle_thread() {
        let g = |fixed| TaskGroup {
            tasks: vec![],
            elems: vec![],
            meets: vec![],
            fixed,
            movable: true,
        };
        let groups = vec![g(false), g(false), g(false)];
        // Two heavy groups on thread 0, a light one on thread 1.
        let moves = rebalance(&groups, &[100, 90, 10], &[0, 0, 1], 2);
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].1, 1);
        // Balanced already: nothing moves.
        assert!(rebalance(&groups, &[100, 90, 10], &[0, 1, 1], 2).is_empty());
        // Fixed groups never move.
        let fixed = vec![g(true), g(true), g(false)];
        assert!(rebalance(&fixed, &[100, 90, 10], &[0, 0, 1], 2).is_empty());
    }

    #[test]
    fn merging_sums_numbers() {
        assert_eq!(merge_values(&["3\n".into(), "4\n".into()]), "7\n");
        assert_eq!(merge_values(&["a\n".into(), "b\n".into()]), "a\n");
    }
}
