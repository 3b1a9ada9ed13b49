//! The driver: runs tasks, timers and watched descriptors until the router stops, on one
//! thread or on several (splitting the elements over worker routers and gathering them back).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::Router;
use crate::cpu::cycles;

impl Router {
    /// Thread 0 handles driver stop events: each steps a DriverManager, or (without one)
    /// starts the drain.
    fn handle_stop_events(&mut self) {
        if self.thread != 0 {
            return;
        }
        while self.runtime.stop_events.load(Ordering::Relaxed) > 0 {
            self.runtime.stop_events.fetch_sub(1, Ordering::AcqRel);
            if self.driver_managers.is_empty() {
                self.runtime.begin_drain();
            } else {
                for i in 0..self.driver_managers.len() {
                    let dm = self.driver_managers[i];
                    self.with_element(dm, |el, cx| el.driver_stop_event(cx));
                }
            }
        }
    }

    /// Handles the signals caught for the configuration, as Click's driver does: each
    /// element waiting for a signal is taken off its list and its `run` handler called (a
    /// Script that ends normally registers again). A signal nobody waits for any more gets
    /// its default action back; one that arrived again meanwhile, or that no handler took,
    /// is raised again with that action (usually ending the process, as in Click).
    fn handle_signals(&mut self) {
        if self.thread != 0 {
            return;
        }
        let caught = crate::signals::take_caught();
        if caught == 0 {
            return;
        }
        for signo in (1..32).filter(|s| caught & (1 << s) != 0) {
            let (calls, rest) = std::mem::take(&mut self.signal_runs)
                .into_iter()
                .partition::<Vec<_>, _>(|&(s, _)| s == signo);
            self.signal_runs = rest;
            let mut handled = false;
            for (_, e) in calls {
                handled |= self.write_handler(Some(e), "run", "").is_ok();
            }
            let again = if self.signal_runs.iter().any(|&(s, _)| s == signo) {
                false
            } else {
                crate::signals::release(signo);
                crate::signals::take_caught_one(signo)
            };
            if again || !handled {
                crate::signals::release(signo);
                // SAFETY: raise(3) sends a signal (in range) to this process.
                unsafe { libc::raise(signo) };
            }
        }
    }

    /// True for elements whose work ends with the input: elements without inputs (sources,
    /// scripts, control sockets). While the router drains, their tasks, timers and
    /// descriptors are not run.
    fn is_source(&self, e: usize) -> bool {
        self.graph.info[e].ninputs == 0
    }

    /// True while draining; starts this thread's drain clock, and stops the router when the
    /// drain has not ended by itself within [`DRAIN_LIMIT`].
    fn check_drain(&mut self) -> bool {
        if !self.runtime.draining.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        match self.drain_until {
            None => self.drain_until = Some(now + DRAIN_LIMIT),
            Some(t) if now >= t => self.stop(),
            Some(_) => {}
        }
        true
    }

    /// True if a queue shared with other threads still holds packets (work in flight that
    /// its puller may not have seen yet, e.g. a batching queue waiting for its latency).
    fn shared_queues_busy(&self) -> bool {
        self.slots.iter().any(|s| {
            s.shared
                .as_ref()
                .and_then(|sh| sh.storage())
                .is_some_and(|(len, _)| len > 0)
        })
    }

    fn run_due_timers(&mut self, draining: bool) {
        let now = self.clock.now();
        while let Some((e, id)) = self.timers.pop_due(now) {
            if draining && self.is_source(e) {
                continue;
            }
            self.with_element(e, |el, cx| el.run_timer(id, cx));
            if self.stopped {
                return;
            }
        }
    }

    /// Waits up to `timeout_ms` (-1: until woken) for a watched descriptor, a wake-up from
    /// another thread or a stop signal, and runs the elements whose descriptors are ready.
    fn poll_selects(&mut self, timeout_ms: i32) {
        let draining = self.runtime.draining.load(Ordering::Relaxed);
        let mut fds: Vec<libc::pollfd> = self
            .selects
            .iter()
            .map(|&(fd, _)| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let nselects = fds.len();
        let efd = self.runtime.links[self.thread].efd;
        let multi = self.runtime.nthreads() > 1;
        for fd in [multi.then_some(efd), crate::signals::wake_fd()]
            .into_iter()
            .flatten()
        {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        if fds.is_empty() {
            if timeout_ms > 0 {
                std::thread::sleep(Duration::from_millis(timeout_ms as u64));
            }
            return;
        }
        // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if multi && fds.get(nselects).is_some_and(|p| p.revents != 0) {
            self.runtime.drain_efd(self.thread);
        }
        if n <= 0 {
            return;
        }
        let ready: Vec<(i32, usize)> = fds[..nselects]
            .iter()
            .zip(self.selects.iter())
            .filter(|(p, _)| p.revents != 0)
            .map(|(_, &s)| s)
            .filter(|&(_, e)| !(draining && self.is_source(e)))
            .collect();
        for (fd, e) in ready {
            if self.selects.contains(&(fd, e)) {
                self.with_element(e, |el, cx| el.selected(fd, cx));
            }
        }
    }

    /// Runs the router until it stops, as Click's driver does: tasks by stride scheduling,
    /// timers, watched file descriptors, on as many threads as configured. A router with
    /// nothing left to do keeps waiting (for a handler write, a descriptor, a signal).
    ///
    /// A driver stop (a source's `STOP`, Script's or DriverManager's `stop`, a write to the
    /// `stop` handler) means the input is finished: sources stop, the packets in flight
    /// drain through queues and their pullers on every thread, and the router stops once no
    /// thread has anything left to do (or after [`DRAIN_LIMIT`]). A stop signal stops at
    /// once. Either way elements then clean up ([`Router::cleanup`]): files are completed and
    /// packets still held are counted.
    ///
    /// A `hotconfig` write stops the run at once; the new configuration is installed in
    /// this router's place and runs on.
    pub fn run(&mut self) {
        self.install_hotswap();
        loop {
            if self.graph.placement.is_some() {
                self.run_threads();
            } else {
                self.run_loop();
            }
            if !self.install_hotswap() {
                break;
            }
        }
    }

    /// Runs the router like [`Router::run`], and also stops when nothing can run any more on
    /// any thread (no task, timer or watched descriptor; housekeeping timers, such as a
    /// rewriter's flow expiry, do not count): for embedding and tests, where a finished
    /// source need not ask for the stop.
    pub fn run_until_idle(&mut self) {
        self.runtime.until_idle.store(true, Ordering::SeqCst);
        self.run();
    }

    pub(crate) fn run_loop(&mut self) {
        let multi = self.runtime.nthreads() > 1;
        let mut rounds: u32 = 0;
        let mut last_yield = cycles();
        // True when the last round of tasks found no work.
        let mut idle_round = false;
        loop {
            if self.runtime.stop.load(Ordering::Relaxed) {
                self.stopped = true;
            }
            if crate::signals::stop_requested() {
                self.stop();
            }
            let draining = self.check_drain();
            if self.stopped {
                break;
            }
            self.service_mail(true);
            if self.thread == 0 && self.running_threads {
                self.balance();
            }
            if multi && self.clock.is_simulated() {
                self.note_sim_progress(!idle_round);
            }
            self.run_due_timers(draining);
            self.handle_signals();
            self.handle_stop_events();
            if self.stopped {
                break;
            }
            if self.tasks.any_runnable() {
                // A draining round runs every scheduled task once, so a round that finds no
                // work means this thread is quiet.
                let burst = if draining {
                    self.tasks.runnable_len().max(64)
                } else {
                    64
                };
                let mut any_work = false;
                idle_round = false;
                for _ in 0..burst {
                    let Some(id) = self.tasks.pop_next() else {
                        break;
                    };
                    let e = self.tasks.get(id).elem;
                    if draining && self.is_source(e) {
                        continue;
                    }
                    let t0 = cycles();
                    let ran = self.with_element(e, |el, cx| el.run_task(cx));
                    let spent = cycles().wrapping_sub(t0);
                    let worked = ran == Some(true);
                    any_work |= worked;
                    self.tasks.note_run(id, worked, spent);
                    if worked {
                        let busy = &self.runtime.links[self.thread].busy_cycles;
                        busy.store(busy.load(Ordering::Relaxed) + spent, Ordering::Relaxed);
                    }
                    if let Some(c) = self.runtime.task_cycles.get(id) {
                        c.fetch_add(spent, Ordering::Relaxed);
                    }
                    if ran.is_none() && multi {
                        // Its group is still on the way from another thread.
                        self.orphans.push(id);
                    }
                    if self.stopped || self.runtime.stop_events.load(Ordering::Relaxed) > 0 {
                        break;
                    }
                }
                rounds = rounds.wrapping_add(1);
                if rounds.is_multiple_of(64) && !self.selects.is_empty() {
                    self.poll_selects(0);
                }
                if draining && !any_work {
                    // Fall through: this thread may be done.
                } else if !any_work && self.clock.jumps() {
                    idle_round = true;
                    // Only polling tasks ran and none found work: under simulated (or
                    // `nowait`) time nothing changes until the next timer, so jump to it.
                    if let Some(at) = self.timers.next_expiry() {
                        self.clock.jump(self.thread, at);
                    }
                    continue;
                } else {
                    if !any_work
                        || (!self.selects.is_empty()
                            && cycles().wrapping_sub(last_yield) > YIELD_CYCLES)
                    {
                        // Tasks that never sleep (busy-polling devices, sources) would keep
                        // this core until the time slice ends. Give other runnable threads of
                        // the core a turn now whenever a round found no work and, in a thread
                        // that polls devices, at least every YIELD_CYCLES: the kernel thread
                        // that fills the rings those tasks poll may be waiting for this core.
                        std::thread::yield_now();
                        last_yield = cycles();
                    }
                    continue;
                }
            }
            self.handle_stop_events();
            if self.stopped
                || self.runtime.links[self.thread]
                    .pending
                    .load(Ordering::Acquire)
            {
                continue;
            }
            if draining {
                self.quiet_while_draining(multi);
                continue;
            }
            // Waiting for housekeeping timers alone is not work when running until idle.
            let next = if self.runtime.until_idle.load(Ordering::Relaxed) {
                self.timers.next_work_expiry()
            } else {
                self.timers.next_expiry()
            };
            match next {
                Some(at) if self.clock.jumps() => {
                    self.poll_selects(0);
                    self.clock.jump(self.thread, at);
                }
                Some(at) => {
                    let wait = self.clock.real_wait(at).as_nanos();
                    if wait > 0 {
                        let ms = wait.div_ceil(1_000_000).min(1000) as i32;
                        self.poll_selects(ms);
                    }
                }
                None if !self.selects.is_empty() => self.poll_selects(1000),
                None if multi && !self.orphans.is_empty() => self.poll_selects(1),
                None if multi => {
                    // Another thread is likely to hand over work within microseconds (the
                    // next batch into a shared queue): spin briefly before paying for a sleep
                    // and an eventfd wake-up.
                    if self.spin_for_work() {
                        continue;
                    }
                    if self.runtime.enter_idle(self.thread) {
                        self.poll_selects(-1);
                        self.runtime.leave_idle(self.thread);
                    }
                }
                // Idle, not stopped: a later run resumes (a source whose limit a handler raised).
                None if self.runtime.until_idle.load(Ordering::Relaxed) => break,
                None => self.poll_selects(-1),
            }
        }
    }

    /// Tells the simulated clock shared with other threads how far this thread lets it jump:
    /// not at all while it has tasks to run that may work (`busy`), else up to its next
    /// timer.
    pub(crate) fn note_sim_progress(&mut self, busy: bool) {
        let until = if busy && self.tasks.any_runnable() {
            Some(self.clock.now())
        } else {
            self.timers.next_expiry()
        };
        self.clock.note_next_timer(self.thread, until);
    }

    /// This thread found nothing to do while draining: alone, the router is done; with other
    /// threads, it waits, and the last thread to go quiet stops them all.
    fn quiet_while_draining(&mut self, multi: bool) {
        if !multi {
            self.stopped = true;
            return;
        }
        if self.shared_queues_busy() || self.spin_for_work() {
            std::thread::yield_now();
            return;
        }
        if self.runtime.enter_idle(self.thread) {
            let ms = match self.timers.next_expiry() {
                Some(at) => self.clock.real_wait(at).as_millis().clamp(1, 10) as i32,
                None => 10,
            };
            self.poll_selects(ms);
            self.runtime.leave_idle(self.thread);
        }
    }

    /// Spins up to [`SPIN_CYCLES`] waiting for another thread to hand this one work.
    fn spin_for_work(&self) -> bool {
        let link = &self.runtime.links[self.thread];
        let start = cycles();
        while cycles().wrapping_sub(start) < SPIN_CYCLES {
            if link.pending.load(Ordering::Acquire) || self.runtime.stop.load(Ordering::Relaxed) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }
}

/// How long an idle worker of a multi-threaded router spins for work before sleeping
/// (processor cycles: some tens of microseconds).
const SPIN_CYCLES: u64 = 100_000;

/// Longest a thread runs rounds of tasks without yielding its core to other runnable threads
/// (processor cycles: some tens of microseconds; a yield costs well under one).
const YIELD_CYCLES: u64 = 100_000;

/// Longest a drain may take before the router stops anyway (a source-like element that
/// never goes quiet, such as an unlimited pull source).
const DRAIN_LIMIT: Duration = Duration::from_secs(2);
