//! Contexts handed to elements: [`ConfigCx`] while configuring, [`InitCx`] while initialising,
//! [`Cx`] while processing packets, running tasks and timers, and answering handlers.

use std::ops::{Deref, DerefMut};

use sluice_lang::Landmark;

use crate::batch::Batch;
use crate::element::Element;
use crate::packet::Packet;
use crate::router::{HandlerError, Router};
use crate::sched::{Notifier, DEFAULT_TICKETS};
use crate::time::Timestamp;

/// Identifies a notifier signal.
pub type NotifierId = usize;

/// The empty notifiers a pulling task sleeps on ([`InitCx::add_pull_task`]); `None` inside
/// when some path upstream has none (the task then polls).
#[derive(Clone, Debug, Default)]
pub struct PullNotes(Option<Vec<NotifierId>>);

/// A notifier signal as Click shows it ([`Cx::notifier_signal`]).
pub struct NotifierSignal {
    /// (kind, word, bit, notifier) of each notifier; `None` for a path without notifier.
    parts: Option<Vec<(&'static str, usize, u32, NotifierId)>>,
    states: std::sync::Arc<Vec<Notifier>>,
}

impl NotifierSignal {
    /// Click's `NotifierSignal::unparse`: `busy*` for a path without notifier, `idle` when
    /// no notifier can become active, else `KIND.WORD/MASK:VALUE` for each word of 32
    /// signals (hexadecimal), joined by `+`, with `*` when a signal of the word is active.
    pub fn unparse(&self) -> String {
        let Some(parts) = &self.parts else {
            return "busy*".into();
        };
        let mut words: Vec<(&str, usize, u32, u32)> = Vec::new();
        for &(kind, word, bit, nid) in parts {
            let on = self.states[nid]
                .active
                .load(std::sync::atomic::Ordering::Acquire);
            let value = if on { bit } else { 0 };
            match words.iter_mut().find(|w| w.0 == kind && w.1 == word) {
                Some(w) => {
                    w.2 |= bit;
                    w.3 |= value;
                }
                None => words.push((kind, word, bit, value)),
            }
        }
        if words.is_empty() {
            return "idle".into();
        }
        words.sort();
        words
            .iter()
            .map(|&(kind, word, mask, value)| {
                let star = if value != 0 { "*" } else { "" };
                format!("{kind}.{word}/{mask:x}:{value:x}{star}")
            })
            .collect::<Vec<_>>()
            .join("+")
    }
}

/// The accessors of the calling element's name and ports that ConfigCx and Cx share.
macro_rules! element_accessors {
    () => {
        /// This element's name.
        pub fn name(&self) -> &str {
            &self.rt.graph.info[self.me].name
        }

        /// Number of inputs in use.
        pub fn ninputs(&self) -> usize {
            self.rt.graph.info[self.me].ninputs
        }

        /// Number of outputs in use.
        pub fn noutputs(&self) -> usize {
            self.rt.graph.info[self.me].noutputs
        }

        /// True if output `port` is a push port.
        pub fn output_is_push(&self, port: usize) -> bool {
            self.rt.graph.info[self.me]
                .out_push
                .get(port)
                .copied()
                .unwrap_or(false)
        }

        /// True if input `port` is a push port.
        pub fn input_is_push(&self, port: usize) -> bool {
            self.rt.graph.info[self.me]
                .in_push
                .get(port)
                .copied()
                .unwrap_or(false)
        }
    };
}

/// Context while an element is configured.
pub struct ConfigCx<'r> {
    pub(crate) rt: &'r mut Router,
    pub(crate) me: usize,
}

impl ConfigCx<'_> {
    element_accessors!();

    /// Where the element was declared.
    pub fn landmark(&self) -> &Landmark {
        &self.rt.graph.info[self.me].landmark
    }

    /// Prints a configuration message as Click does (`FILE:LINE: While configuring 'NAME ::
    /// CLASS':` and the text's lines indented), for warnings and informational messages that
    /// do not stop the configuration.
    pub fn message(&self, text: &str) {
        let info = &self.rt.graph.info[self.me];
        eprintln!(
            "{}: While configuring '{} :: {}':",
            info.landmark, info.name, info.class.name
        );
        for line in text.lines() {
            eprintln!("  {line}");
        }
    }

    /// Prints a configuration warning (`warning: TEXT`) as Click does; see [`Self::message`].
    pub fn warning(&self, text: &str) {
        self.message(&format!("warning: {text}"));
    }

    /// Index of the element called `name`.
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.rt.graph.names.get(name).copied()
    }

    /// Creates a notifier signal, initially `active`.
    pub fn new_notifier(&mut self, active: bool) -> NotifierId {
        self.rt.new_notifier(self.me, active)
    }

    /// Announces that this element's outputs are empty whenever `nid` is inactive (a queue's
    /// empty notifier), for pullers found by router context.
    pub fn provide_empty_notifier(&mut self, nid: NotifierId) {
        self.rt.graph_mut().info[self.me].empty_notifier = Some(nid);
    }

    /// Like [`ConfigCx::provide_empty_notifier`] for a notifier that never becomes active:
    /// this element never has packets to pull (Click's idle signal).
    pub fn provide_idle_notifier(&mut self, nid: NotifierId) {
        self.provide_empty_notifier(nid);
        self.rt.graph_mut().info[self.me].idle_notifier = true;
    }

    /// Announces that pushing into this element is pointless while `nid` is inactive (a
    /// queue's full notifier: active while it has room), for sources found by router context.
    pub fn provide_full_notifier(&mut self, nid: NotifierId) {
        self.rt.graph_mut().info[self.me].full_notifier = Some(nid);
    }

    /// True when the router runs on simulated time.
    pub fn is_simulated(&self) -> bool {
        self.rt.clock.is_simulated()
    }

    /// Number of worker threads the router will run.
    pub fn nthreads(&self) -> usize {
        self.rt.runtime.nthreads()
    }

    /// Scales the tickets of element `elem`'s task by `factor` (ScheduleInfo).
    pub fn scale_tickets(&mut self, elem: usize, factor: f64) {
        self.rt.graph_mut().ticket_scale.insert(elem, factor);
    }

    /// The compound this element was declared in, as a name prefix ending in `/` (empty at
    /// the top level).
    pub fn name_context(&self) -> &str {
        let name = &self.rt.graph.info[self.me].name;
        &name[..name.rfind('/').map_or(0, |i| i + 1)]
    }

    /// The element `name` refers to from this element (Click's `Router::find`): `name` in
    /// this element's compound, else in each enclosing one, else at the top level.
    pub fn find_element(&self, name: &str) -> Option<usize> {
        let mut context = self.name_context();
        loop {
            if let Some(&e) = self.rt.graph.names.get(&format!("{}{}", context, name)) {
                return Some(e);
            }
            if context.is_empty() {
                return None;
            }
            let outer = context[..context.len() - 1].rfind('/').map_or(0, |i| i + 1);
            context = &context[..outer];
        }
    }

    /// The elements `name` refers to from this element: the element of that name, or the
    /// insides of the compound of that name, looked up as [`ConfigCx::find_element`] does
    /// (this element's compound first, then each enclosing one, then the top level).
    pub fn elements_named(&self, name: &str) -> Vec<usize> {
        let info = &self.rt.graph.info;
        let mut context = self.name_context();
        loop {
            let full = format!("{context}{name}");
            let inside = format!("{full}/");
            let found: Vec<usize> = (0..info.len())
                .filter(|&e| info[e].name == full || info[e].name.starts_with(&inside))
                .collect();
            if !found.is_empty() || context.is_empty() {
                return found;
            }
            let outer = context[..context.len() - 1].rfind('/').map_or(0, |i| i + 1);
            context = &context[..outer];
        }
    }

    /// Places the task of element `elem` (and the elements only it reaches) on `thread`
    /// (StaticThreadSched).
    pub fn set_home_thread(&mut self, elem: usize, thread: usize) {
        self.rt.graph_mut().static_threads.insert(elem, thread);
    }
}

/// Context while an element is initialised: everything [`Cx`] offers plus tasks, notifier
/// listening and router-context searches.
pub struct InitCx<'r> {
    pub(crate) cx: Cx<'r>,
}

impl<'r> Deref for InitCx<'r> {
    type Target = Cx<'r>;
    fn deref(&self) -> &Cx<'r> {
        &self.cx
    }
}

impl DerefMut for InitCx<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.cx
    }
}

impl InitCx<'_> {
    /// True if this router is being built to replace a running one (hot swap) that has an
    /// element of this element's name and class, whose state [`crate::Element::take_state`]
    /// will offer once both are initialised.
    pub fn has_predecessor(&self) -> bool {
        self.cx.rt.has_predecessor(self.cx.me)
    }

    /// Gives this element a task with `tickets` (use [`DEFAULT_TICKETS`]), scheduled if `now`.
    pub fn add_task(&mut self, tickets: u32, now: bool) {
        let me = self.cx.me;
        let tickets = match self.cx.rt.graph.ticket_scale.get(&me) {
            Some(f) => (tickets as f64 * f)
                .round()
                .clamp(1.0, crate::sched::MAX_TICKETS as f64) as u32,
            None => tickets,
        };
        let id = self.cx.rt.tasks.add(me, tickets);
        self.cx.rt.graph_mut().info[me].task = Some(id);
        if now {
            self.cx.rt.tasks.schedule(id);
        }
    }

    /// Gives this element a task with the default tickets, scheduled now.
    pub fn add_default_task(&mut self) {
        self.add_task(DEFAULT_TICKETS, true);
    }

    /// The empty notifiers upstream of input `port`: pulling there returns nothing while all of
    /// them are inactive. `None` if some upstream path has no notifier (the puller must poll).
    pub fn upstream_empty_notifiers(&self, port: usize) -> Option<Vec<NotifierId>> {
        self.cx.rt.graph.upstream_empty_notifiers(self.cx.me, port)
    }

    /// The full notifiers downstream of output `port`: a source may sleep while all of them
    /// are inactive (every queue it feeds is full). `None` if some path never fills.
    pub fn downstream_full_notifiers(&self, port: usize) -> Option<Vec<NotifierId>> {
        self.cx.rt.graph.downstream_full_notifiers(self.cx.me, port)
    }

    /// Adds this element's task for pulling from input `port`, listening to the empty
    /// notifiers of the queues upstream; pass what it returns to [`Cx::reschedule_pull`] after
    /// each run. The task is scheduled now if `active` and something upstream may have
    /// packets (as a Click puller after its first, empty pull).
    pub fn add_pull_task(&mut self, port: usize, active: bool) -> PullNotes {
        let notes = self.upstream_empty_notifiers(port);
        let ready = notes.as_ref().is_none_or(|ns| self.any_active(ns));
        self.add_task(DEFAULT_TICKETS, active && ready);
        for &n in notes.iter().flatten() {
            self.listen(n);
        }
        PullNotes(notes)
    }

    /// Finds the full notifiers downstream of output `port` (see
    /// [`InitCx::downstream_full_notifiers`]) and listens to them, for a source that pushes
    /// only into room that exists ([`Cx::push_room`]).
    pub fn listen_downstream_full(&mut self, port: usize) -> Option<Vec<NotifierId>> {
        let full = self.downstream_full_notifiers(port);
        for &n in full.iter().flatten() {
            self.listen(n);
        }
        full
    }

    /// Wakes this element's task whenever `nid` becomes active.
    pub fn listen(&mut self, nid: NotifierId) {
        let me = self.cx.me;
        if let Some(t) = self.cx.rt.graph.info[me].task {
            self.cx.rt.add_listener(nid, t);
        }
    }

    /// Elements reachable downstream of output `port` for which `pred` holds, stopping at the
    /// first match on each path (Click's flow-based router context).
    pub fn find_downstream(&self, port: usize, pred: impl Fn(&dyn Element) -> bool) -> Vec<usize> {
        self.cx.rt.find_flow(self.cx.me, port, true, &pred)
    }

    /// Elements reachable upstream of input `port` for which `pred` holds, stopping at the first
    /// match on each path.
    pub fn find_upstream(&self, port: usize, pred: impl Fn(&dyn Element) -> bool) -> Vec<usize> {
        self.cx.rt.find_flow(self.cx.me, port, false, &pred)
    }
}

/// Context while an element processes packets or runs a task, timer or handler.
pub struct Cx<'r> {
    pub(crate) rt: &'r mut Router,
    pub(crate) me: usize,
}

impl Cx<'_> {
    /// Pushes `batch` out of output `port` to the connected element.
    #[inline]
    pub fn push(&mut self, port: usize, batch: Batch) {
        self.rt.push_out(self.me, port, batch);
    }

    /// Pushes one packet out of output `port`.
    #[inline]
    pub fn push_one(&mut self, port: usize, p: Packet) {
        self.rt.push_out(self.me, port, Batch::one(p));
    }

    /// Pulls up to `max` packets from input `port`.
    #[inline]
    pub fn pull(&mut self, port: usize, max: usize) -> Batch {
        self.rt.pull_in(self.me, port, max)
    }

    /// Pulls one packet from input `port`.
    #[inline]
    pub fn pull_one(&mut self, port: usize) -> Option<Packet> {
        self.rt.pull_in(self.me, port, 1).pop()
    }

    /// This element's index in the router.
    pub fn index(&self) -> usize {
        self.me
    }

    /// The thread running this code (0 without `-j`).
    pub fn thread(&self) -> usize {
        self.rt.thread
    }

    /// Number of worker threads.
    pub fn nthreads(&self) -> usize {
        self.rt.runtime.nthreads()
    }

    element_accessors!();

    /// The router's current time (simulated under `--simtime`).
    #[inline]
    pub fn now(&self) -> Timestamp {
        self.rt.clock.now()
    }

    /// True when the router runs on simulated time.
    pub fn is_simulated(&self) -> bool {
        self.rt.clock.is_simulated()
    }

    /// Runs this element's task again soon.
    #[inline]
    pub fn reschedule(&mut self) {
        if let Some(t) = self.rt.graph.info[self.me].task {
            self.rt.tasks.schedule(t);
        }
    }

    /// Takes this element's task off the run list.
    pub fn unschedule(&mut self) {
        if let Some(t) = self.rt.graph.info[self.me].task {
            self.rt.tasks.unschedule(t);
        }
    }

    /// Changes the tickets of this element's task.
    pub fn set_tickets(&mut self, tickets: u32) {
        if let Some(t) = self.rt.graph.info[self.me].task {
            self.rt.tasks.set_tickets(t, tickets);
        }
    }

    /// Fires timer `id` of this element at `at`, replacing an earlier schedule of it.
    pub fn schedule_timer(&mut self, id: usize, at: Timestamp) {
        self.rt.timers.schedule(self.me, id, at);
    }

    /// Fires timer `id` of this element `after` from now.
    pub fn schedule_after(&mut self, id: usize, after: Timestamp) {
        let at = self.now() + after;
        self.rt.timers.schedule(self.me, id, at);
    }

    /// Fires housekeeping timer `id` of this element at `at`: a timer that only tidies the
    /// element's state (expiring idle flows, adapting a parameter), which runs as others do
    /// but does not keep [`crate::Router::run_until_idle`] running.
    pub fn schedule_housekeeping(&mut self, id: usize, at: Timestamp) {
        self.rt.timers.schedule_housekeeping(self.me, id, at);
    }

    /// Cancels timer `id` of this element.
    pub fn cancel_timer(&mut self, id: usize) {
        self.rt.timers.cancel(self.me, id);
    }

    /// True if timer `id` of this element is pending.
    pub fn timer_scheduled(&self, id: usize) -> bool {
        self.rt.timers.is_scheduled(self.me, id)
    }

    /// Sets notifier `nid`; activating it wakes its listening tasks.
    #[inline]
    pub fn set_notifier(&mut self, nid: NotifierId, active: bool) {
        self.rt.set_notifier(nid, active);
    }

    /// True if any of `nids` is active.
    pub fn any_active(&self, nids: &[NotifierId]) -> bool {
        nids.iter().any(|&n| {
            self.rt.notifiers[n]
                .active
                .load(std::sync::atomic::Ordering::Acquire)
        })
    }

    /// Ends a run of a pulling task ([`InitCx::add_pull_task`]) that got packets or not
    /// (`got`): reschedules it, unless it got nothing and every queue upstream is empty (a
    /// queue's empty notifier wakes it when packets arrive).
    pub fn reschedule_pull(&mut self, notes: &PullNotes, got: bool) {
        let more = match &notes.0 {
            Some(n) => got || self.any_active(n),
            None => true,
        };
        if more {
            self.reschedule();
        }
    }

    /// How many packets this element may push now into the queues whose full notifiers are
    /// `full` (found with [`InitCx::downstream_full_notifiers`]): the most room any of them
    /// has, as Click's sources push while any downstream queue is not full. An empty list
    /// means no queue downstream (unlimited). With no room, a task returns without
    /// rescheduling and is woken when a queue drains; when a notifier and the queue's length
    /// disagree for a moment (another thread between the two), the task is rescheduled.
    pub fn push_room(&mut self, full: &[NotifierId]) -> usize {
        if full.is_empty() {
            return usize::MAX;
        }
        let mut room = 0;
        let mut active = false;
        for &n in full {
            let note = &self.rt.notifiers[n];
            if note.active.load(std::sync::atomic::Ordering::Acquire) {
                active = true;
                let free = match self.rt.storage_of(note.owner) {
                    Some((len, cap)) => cap.saturating_sub(len),
                    None => crate::batch::BATCH_MAX,
                };
                room = room.max(free);
            }
        }
        if active && room == 0 {
            self.reschedule();
        }
        room
    }

    /// Watches file descriptor `fd` for readability; `Element::selected` is then called.
    pub fn add_select(&mut self, fd: i32) {
        self.rt.selects.push((fd, self.me));
    }

    /// Stops watching `fd`.
    pub fn remove_select(&mut self, fd: i32) {
        let me = self.me;
        self.rt.selects.retain(|&(f, e)| !(f == fd && e == me));
    }

    /// True once a `hotconfig` write has built the configuration that replaces this one: an
    /// element leaves work it has not started (a ControlSocket's next commands) to its
    /// successor, which takes it over in [`crate::Element::take_state`].
    pub fn swap_pending(&self) -> bool {
        self.rt.swap_pending()
    }

    /// Lets this element pass packets straight through it, its callers wired to its peers
    /// (`None`: it is called again on every port). See [`crate::PassThrough`].
    pub fn pass_through(&mut self, pass: Option<crate::PassThrough>) {
        self.rt.set_pass_through(self.me, pass);
    }

    /// Raises a driver stop event (Click's `please_stop_driver`): the input is finished. The
    /// router drains and stops, or steps the DriverManager if there is one.
    pub fn request_driver_stop(&mut self) {
        self.rt.runtime.stop_event();
    }

    /// Marks the whole run as failed, on any thread: the router runs on, but `sluice` exits
    /// with status 1 at the end ([`Router::run_failed`]). For errors that lose what the user
    /// asked for, such as output that could not be written; the element reports the error
    /// itself.
    pub fn fail_run(&mut self) {
        self.rt
            .runtime
            .failed
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    /// Stops the router once the work in flight is done: sources stop, queues drain through
    /// their pullers on every thread, then the router stops (and elements clean up).
    pub fn stop_router(&mut self) {
        self.rt.runtime.begin_drain();
    }

    /// Makes this element receive driver stop events instead of the router stopping.
    pub fn manage_driver_stops(&mut self) {
        let me = self.me;
        if !self.rt.driver_managers.contains(&me) {
            self.rt.driver_managers.push(me);
        }
    }

    /// Index of the element called `name`.
    pub fn element_index(&self, name: &str) -> Option<usize> {
        self.rt.graph.names.get(name).copied()
    }

    /// The signal made of notifiers `nids`, as found by [`InitCx::upstream_empty_notifiers`]
    /// or [`InitCx::downstream_full_notifiers`], for showing it as Click does. Take it once
    /// the router runs (in a timer or while processing packets): it shares the notifiers'
    /// states, which are fixed only then.
    pub fn notifier_signal(&self, nids: Option<&[NotifierId]>) -> NotifierSignal {
        // As in Click, the empty and the full notifiers are numbered apart, in the order of
        // their elements; idle notifiers are not numbered.
        let mut named: Vec<(NotifierId, &'static str, usize)> = Vec::new();
        let (mut empties, mut fulls) = (0, 0);
        for inf in &self.rt.graph.info {
            if let Some(n) = inf.empty_notifier.filter(|_| !inf.idle_notifier) {
                named.push((n, "empty", empties));
                empties += 1;
            }
            if let Some(n) = inf.full_notifier {
                named.push((n, "full", fulls));
                fulls += 1;
            }
        }
        let parts = nids.map(|nids| {
            nids.iter()
                .filter_map(|&nid| {
                    let &(_, kind, i) = named.iter().find(|(n, _, _)| *n == nid)?;
                    Some((kind, i / 32, 1u32 << (i % 32), nid))
                })
                .collect()
        });
        NotifierSignal {
            parts,
            states: self.rt.notifiers.clone(),
        }
    }

    /// Records a new value for argument `keyword` in this element's `config` handler, as
    /// Click's `reconfigure_keyword_handler` does after a write such as a Queue's `capacity`:
    /// the positional argument `argno` (when it is there and not another keyword) or the
    /// keyword argument is replaced, or the keyword argument added.
    pub fn reconfigure_keyword(&mut self, argno: usize, keyword: &str, value: &str) {
        use sluice_lang::args::{keyword_split, split_args};
        let info = &self.rt.graph.info[self.me];
        let mut conf = split_args(&info.config());
        let kw = conf
            .iter()
            .rposition(|a| keyword_split(a).is_some_and(|(k, _)| k == keyword));
        match kw {
            Some(i) => conf[i] = format!("{keyword} {value}"),
            None if argno < conf.len() && keyword_split(&conf[argno]).is_none() => {
                conf[argno] = value.to_string()
            }
            None => conf.push(format!("{keyword} {value}")),
        }
        info.set_config(conf.join(", "));
    }

    /// Calls this element's `run` handler once, soon after signal `signo` arrives (Click's
    /// `Master::add_signal_handler`); register again to handle the next one. While no element
    /// waits for it, the signal has its default action.
    pub fn catch_signal(&mut self, signo: i32) {
        let me = self.me;
        if !self.rt.signal_runs.contains(&(signo, me)) {
            self.rt.signal_runs.push((signo, me));
            crate::signals::catch(signo);
        }
    }

    /// Number of elements in the router (indices run from 0).
    pub fn nelements(&self) -> usize {
        self.rt.graph.info.len()
    }

    /// Another element, if it is not running right now.
    pub fn element(&self, idx: usize) -> Option<&dyn Element> {
        self.rt.slots.get(idx)?.elem.as_deref()
    }

    /// The name of element `idx`.
    pub fn element_name(&self, idx: usize) -> &str {
        &self.rt.graph.info[idx].name
    }

    /// The Storage interface of element `idx` (packets held, capacity), also when the queue
    /// is shared between threads: what RED reads of the queues it watches. `None` if it is
    /// no queue or is running now.
    pub fn storage_of(&self, idx: usize) -> Option<(usize, usize)> {
        self.rt.storage_of(idx)
    }

    /// Reads handler `path` (`elem.handler`, or a router handler such as `config`).
    pub fn read_handler(&mut self, path: &str) -> Result<String, HandlerError> {
        self.rt.read_path(path)
    }

    /// Reads handler `path` with a parameter (Click's read handlers with parameters).
    pub fn read_handler_param(&mut self, path: &str, param: &str) -> Result<String, HandlerError> {
        self.rt.read_path_param(path, Some(param))
    }

    /// Reads handler `path` (with `param` if given) as the handler wrote it, without the
    /// newline [`Cx::read_handler`] adds (ControlSocket's `READ`, as in Click).
    pub fn read_handler_verbatim(
        &mut self,
        path: &str,
        param: Option<&str>,
    ) -> Result<String, HandlerError> {
        self.rt.read_path_verbatim(path, param)
    }

    /// Checks that handler `path` exists and is readable (`write` false) or writable.
    pub fn check_handler(&self, path: &str, write: bool) -> Result<(), HandlerError> {
        self.rt.check_handler(path, write)
    }

    /// Writes handler `path` with `value`. A write to an element that is running (this one,
    /// or one whose push led here) is done when that element returns.
    pub fn write_handler(&mut self, path: &str, value: &str) -> Result<(), HandlerError> {
        self.rt.write_path(path, value)
    }

    /// Runs at once the handler writes addressed to this element (`me`, the element itself)
    /// that arrived while it runs, for an element that must see their effect before it
    /// returns: TimeFilter after calling its END_CALL handler.
    pub fn run_own_writes(&mut self, me: &mut dyn Element) {
        self.rt.run_deferred_writes(self.me, me);
    }
}
