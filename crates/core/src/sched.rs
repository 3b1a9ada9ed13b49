//! Task list with stride scheduling, timers, and notifiers.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use crate::time::Timestamp;

/// Stride scheduling constant: a task's stride is `STRIDE1 / tickets`.
pub const STRIDE1: u64 = 1 << 16;
/// Default tickets for a task (Click's default).
pub const DEFAULT_TICKETS: u32 = 1024;
/// Largest ticket count.
pub const MAX_TICKETS: u32 = 1 << 15;

/// One schedulable task, owned by an element.
#[derive(Debug, Clone)]
pub struct Task {
    /// Element that runs the task.
    pub elem: usize,
    /// Share of the CPU (stride scheduling).
    pub tickets: u32,
    stride: u64,
    pass: u64,
    /// True while the task is on the run list.
    pub scheduled: bool,
    /// Times the task ran.
    pub runs: u64,
    /// Times it reported useful work.
    pub work: u64,
    /// Processor cycles spent in the task (time-stamp counter), for cost-based placement.
    pub cycles: u64,
}

/// The task list: picks the scheduled task with the smallest pass.
#[derive(Debug, Default, Clone)]
pub struct TaskList {
    tasks: Vec<Task>,
    runnable: Vec<usize>,
    global_pass: u64,
}

impl TaskList {
    /// Adds a task for `elem`; returns its id.
    pub fn add(&mut self, elem: usize, tickets: u32) -> usize {
        let tickets = tickets.clamp(1, MAX_TICKETS);
        self.tasks.push(Task {
            elem,
            tickets,
            stride: STRIDE1 / tickets as u64,
            pass: 0,
            scheduled: false,
            runs: 0,
            work: 0,
            cycles: 0,
        });
        self.tasks.len() - 1
    }

    /// Puts task `id` on the run list (no effect if it is already there).
    pub fn schedule(&mut self, id: usize) {
        let t = &mut self.tasks[id];
        if !t.scheduled {
            t.scheduled = true;
            t.pass = t.pass.max(self.global_pass);
            self.runnable.push(id);
        }
    }

    /// Takes task `id` off the run list.
    pub fn unschedule(&mut self, id: usize) {
        if self.tasks[id].scheduled {
            self.tasks[id].scheduled = false;
            self.runnable.retain(|&t| t != id);
        }
    }

    /// Changes the tickets of task `id`.
    pub fn set_tickets(&mut self, id: usize, tickets: u32) {
        let t = &mut self.tasks[id];
        t.tickets = tickets.clamp(1, MAX_TICKETS);
        t.stride = STRIDE1 / t.tickets as u64;
    }

    /// True if some task is scheduled.
    pub fn any_runnable(&self) -> bool {
        !self.runnable.is_empty()
    }

    /// Number of scheduled tasks.
    pub fn runnable_len(&self) -> usize {
        self.runnable.len()
    }

    /// Removes the next task to run from the run list, advancing its pass.
    pub fn pop_next(&mut self) -> Option<usize> {
        let best = match self.runnable.len() {
            0 => return None,
            1 => 0,
            _ => {
                let mut best = 0;
                for i in 1..self.runnable.len() {
                    if self.tasks[self.runnable[i]].pass < self.tasks[self.runnable[best]].pass {
                        best = i;
                    }
                }
                best
            }
        };
        let id = self.runnable.swap_remove(best);
        let t = &mut self.tasks[id];
        t.scheduled = false;
        self.global_pass = t.pass;
        t.pass += t.stride;
        t.runs += 1;
        Some(id)
    }

    /// Task `id`.
    pub fn get(&self, id: usize) -> &Task {
        &self.tasks[id]
    }

    /// Records a run of task `id`: whether it did useful work and the cycles it took.
    pub fn note_run(&mut self, id: usize, worked: bool, cycles: u64) {
        let t = &mut self.tasks[id];
        t.work += worked as u64;
        t.cycles += cycles;
    }

    /// Adds another thread's run statistics for task `id`.
    pub fn absorb_stats(&mut self, id: usize, other: &Task) {
        let t = &mut self.tasks[id];
        t.runs += other.runs;
        t.work += other.work;
        t.cycles += other.cycles;
    }

    /// Takes every task not in `keep` off the run list (used when splitting across threads).
    pub fn retain_scheduled(&mut self, keep: impl Fn(usize) -> bool) {
        let tasks = &mut self.tasks;
        self.runnable.retain(|&t| {
            let k = keep(t);
            if !k {
                tasks[t].scheduled = false;
            }
            k
        });
    }

    /// All tasks.
    pub fn all(&self) -> &[Task] {
        &self.tasks
    }
}

/// Timers keyed by (element, timer id); rescheduling replaces the previous expiry.
/// Housekeeping timers (tidying an element's state, such as expiring idle flows) run as the
/// others do but are not work that keeps [`crate::Router::run_until_idle`] running.
#[derive(Debug, Default)]
pub struct TimerQueue {
    heap: BinaryHeap<Reverse<(Timestamp, u64, usize, usize)>>,
    /// Per pending timer: the sequence number of its live heap entry, and whether it is
    /// housekeeping.
    current: HashMap<(usize, usize), (u64, bool)>,
    seq: u64,
}

impl TimerQueue {
    /// Schedules timer `id` of `elem` to fire at `at`, replacing any earlier schedule.
    pub fn schedule(&mut self, elem: usize, id: usize, at: Timestamp) {
        self.push(elem, id, at, false);
    }

    /// Schedules housekeeping timer `id` of `elem` to fire at `at`, replacing any earlier
    /// schedule.
    pub fn schedule_housekeeping(&mut self, elem: usize, id: usize, at: Timestamp) {
        self.push(elem, id, at, true);
    }

    fn push(&mut self, elem: usize, id: usize, at: Timestamp, housekeeping: bool) {
        self.seq += 1;
        self.current.insert((elem, id), (self.seq, housekeeping));
        self.heap.push(Reverse((at, self.seq, elem, id)));
    }

    /// True if heap entry `seq` of timer `id` of `elem` is its live one.
    fn live(&self, elem: usize, id: usize, seq: u64) -> bool {
        self.current.get(&(elem, id)).is_some_and(|c| c.0 == seq)
    }

    /// Cancels timer `id` of `elem`.
    pub fn cancel(&mut self, elem: usize, id: usize) {
        self.current.remove(&(elem, id));
    }

    /// True if timer `id` of `elem` is pending.
    pub fn is_scheduled(&self, elem: usize, id: usize) -> bool {
        self.current.contains_key(&(elem, id))
    }

    fn drop_stale(&mut self) {
        while let Some(&Reverse((_, seq, e, id))) = self.heap.peek() {
            if self.live(e, id, seq) {
                break;
            }
            self.heap.pop();
        }
    }

    /// Expiry of the earliest pending timer.
    pub fn next_expiry(&mut self) -> Option<Timestamp> {
        self.drop_stale();
        self.heap.peek().map(|Reverse((t, ..))| *t)
    }

    /// Expiry of the earliest pending timer that is not housekeeping.
    pub fn next_work_expiry(&mut self) -> Option<Timestamp> {
        self.drop_stale();
        self.heap
            .iter()
            .filter(|&&Reverse((_, seq, e, id))| self.current.get(&(e, id)) == Some(&(seq, false)))
            .map(|Reverse((t, ..))| *t)
            .min()
    }

    /// Removes and returns the earliest timer due at or before `now`.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<(usize, usize)> {
        self.drop_stale();
        match self.heap.peek() {
            Some(Reverse((t, ..))) if *t <= now => {
                let Reverse((_, _, e, id)) = self.heap.pop()?;
                self.current.remove(&(e, id));
                Some((e, id))
            }
            _ => None,
        }
    }

    /// Moves the pending timers of elements for which `mine` holds into a new queue.
    pub fn split_off(&mut self, mine: impl Fn(usize) -> bool) -> TimerQueue {
        let mut out = TimerQueue {
            seq: self.seq,
            ..TimerQueue::default()
        };
        let heap = std::mem::take(&mut self.heap);
        for Reverse((at, seq, e, id)) in heap {
            if !self.live(e, id, seq) {
                continue;
            }
            if mine(e) {
                if let Some(c) = self.current.remove(&(e, id)) {
                    out.current.insert((e, id), c);
                }
                out.heap.push(Reverse((at, seq, e, id)));
            } else {
                self.heap.push(Reverse((at, seq, e, id)));
            }
        }
        out
    }

    /// Takes over every pending timer of `other`.
    pub fn absorb(&mut self, mut other: TimerQueue) {
        other.drop_stale();
        for Reverse((at, seq, e, id)) in std::mem::take(&mut other.heap).into_vec() {
            if let Some(&(live, housekeeping)) = other.current.get(&(e, id)) {
                if live == seq {
                    self.push(e, id, at, housekeeping);
                }
            }
        }
    }

    /// True if no timer is pending.
    pub fn is_empty(&mut self) -> bool {
        self.next_expiry().is_none()
    }
}

/// A notifier signal: a queue's "has packets" state and the tasks waiting on it. The state is
/// atomic because a queue shared between threads flips it from either side; each notifier has
/// its own cache line so that queues of different threads never share one.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct Notifier {
    /// True while the signal is active (e.g. the queue is non-empty).
    pub active: std::sync::atomic::AtomicBool,
    /// Tasks woken when the signal becomes active.
    pub listeners: Vec<usize>,
    /// The element that created the signal (the queue whose state it shows).
    pub owner: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stride_shares_follow_tickets() {
        let mut tl = TaskList::default();
        let a = tl.add(0, 100);
        let b = tl.add(1, 300);
        tl.schedule(a);
        tl.schedule(b);
        let mut runs = [0u32; 2];
        for _ in 0..4000 {
            let id = tl.pop_next().unwrap();
            runs[id] += 1;
            tl.schedule(id);
        }
        assert_eq!(runs[a] + runs[b], 4000);
        assert!(
            (runs[b] as i32 - 3 * runs[a] as i32).abs() <= 4,
            "{:?}",
            runs
        );
    }

    #[test]
    fn sleeping_task_does_not_hog_on_wakeup() {
        let mut tl = TaskList::default();
        let a = tl.add(0, 1024);
        let b = tl.add(1, 1024);
        tl.schedule(a);
        for _ in 0..1000 {
            let id = tl.pop_next().unwrap();
            tl.schedule(id);
        }
        tl.schedule(b);
        let mut runs = [0u32; 2];
        for _ in 0..100 {
            let id = tl.pop_next().unwrap();
            runs[id] += 1;
            tl.schedule(id);
        }
        assert!(runs[0] >= 49 && runs[1] >= 49, "{:?}", runs);
    }

    #[test]
    fn timers_fire_in_order_and_reschedule_replaces() {
        let mut tq = TimerQueue::default();
        tq.schedule(0, 0, Timestamp(30));
        tq.schedule(1, 0, Timestamp(10));
        tq.schedule(2, 0, Timestamp(20));
        tq.schedule(1, 0, Timestamp(40));
        tq.cancel(2, 0);
        assert_eq!(tq.next_expiry(), Some(Timestamp(30)));
        assert_eq!(tq.pop_due(Timestamp(35)), Some((0, 0)));
        assert_eq!(tq.pop_due(Timestamp(35)), None);
        assert_eq!(tq.pop_due(Timestamp(40)), Some((1, 0)));
        assert!(tq.is_empty());
    }

    #[test]
    fn absorb_takes_only_the_live_schedule() {
        let mut other = TimerQueue::default();
        other.schedule(3, 1, Timestamp(10));
        other.schedule(3, 1, Timestamp(50));
        let mut tq = TimerQueue::default();
        tq.absorb(other);
        assert_eq!(tq.next_expiry(), Some(Timestamp(50)));
        assert_eq!(tq.pop_due(Timestamp(49)), None);
        assert_eq!(tq.pop_due(Timestamp(50)), Some((3, 1)));
    }

    #[test]
    fn housekeeping_timers_are_not_work() {
        let mut tq = TimerQueue::default();
        tq.schedule_housekeeping(0, 0, Timestamp(10));
        tq.schedule(1, 0, Timestamp(20));
        assert_eq!(tq.next_expiry(), Some(Timestamp(10)));
        assert_eq!(tq.next_work_expiry(), Some(Timestamp(20)));
        // Rescheduled as an ordinary timer, it is work again; cancelled, it is gone.
        tq.schedule(0, 0, Timestamp(15));
        assert_eq!(tq.next_work_expiry(), Some(Timestamp(15)));
        tq.schedule_housekeeping(0, 0, Timestamp(5));
        tq.cancel(1, 0);
        assert_eq!(tq.next_work_expiry(), None);
        assert_eq!(tq.next_expiry(), Some(Timestamp(5)));
        // The kind moves with the timer between threads' queues.
        tq.schedule(2, 0, Timestamp(30));
        let mut other = tq.split_off(|e| e == 0);
        assert_eq!(other.next_work_expiry(), None);
        assert_eq!(tq.next_work_expiry(), Some(Timestamp(30)));
        let mut back = TimerQueue::default();
        back.absorb(other);
        assert_eq!(back.next_expiry(), Some(Timestamp(5)));
        assert_eq!(back.next_work_expiry(), None);
        assert_eq!(back.pop_due(Timestamp(5)), Some((0, 0)));
    }
}
