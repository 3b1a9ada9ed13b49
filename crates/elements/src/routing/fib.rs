//! The kernel table as KernelRoutes knows it, and what its Sluice tables hold.
//!
//! The kernel may hold several routes for one prefix (different metrics or TOS values); the
//! one it uses, the lowest metric with TOS 0, is the one a Sluice table gets. Every message
//! (a dump's or a change's) updates the kernel side in arrival order, so the latest word
//! wins; a dump marks what it reported, and at its end the routes it did not report (nor a
//! change since its start) are gone. Prefixes whose chosen route differs from what the
//! tables hold are queued, once each, until [`Fib::next_changes`] hands them out.

use std::collections::VecDeque;

use ahash::{AHashMap, AHashSet};

/// A destination prefix of either family (IPv4 addresses in the low 32 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// True for IPv6.
    pub v6: bool,
    /// The network address, host bits clear.
    pub addr: u128,
    /// The prefix length.
    pub len: u8,
}

/// What a Sluice table does with a prefix: send to `port`, the destination annotation set to
/// `gw` unless it is 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// Gateway (0: none, the destination is on the link).
    pub gw: u128,
    /// Output port of the table.
    pub port: u32,
}

/// One route of the kernel table.
#[derive(Clone, Copy, Debug)]
struct Entry {
    tos: u8,
    metric: u32,
    /// `None` when the route cannot be installed (see [`Fib::skipped`]).
    hop: Option<Hop>,
    /// The dump generation that last reported it (or a change during that dump).
    generation: u32,
}

/// A change to make in the Sluice tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A prefix the tables do not hold yet.
    Add(Prefix, Hop),
    /// A prefix whose next hop changed.
    Replace(Prefix, Hop),
    /// A prefix the tables must no longer hold.
    Remove(Prefix),
}

impl Change {
    /// The prefix changed.
    pub fn prefix(&self) -> Prefix {
        match *self {
            Change::Add(p, _) | Change::Replace(p, _) | Change::Remove(p) => p,
        }
    }
}

/// The kernel's routes, the tables' routes and the changes between them.
#[derive(Default)]
pub struct Fib {
    kernel: AHashMap<Prefix, Vec<Entry>>,
    installed: AHashMap<Prefix, Hop>,
    queue: VecDeque<Prefix>,
    queued: AHashSet<Prefix>,
    generation: u32,
    skipped: usize,
    entries: usize,
}

impl Fib {
    /// The kernel added or replaced a route (`hop` `None`: it cannot be installed).
    pub fn update(&mut self, p: Prefix, tos: u8, metric: u32, hop: Option<Hop>) {
        let generation = self.generation;
        let list = self.kernel.entry(p).or_default();
        let e = Entry {
            tos,
            metric,
            hop,
            generation,
        };
        match list.iter_mut().find(|e| e.tos == tos && e.metric == metric) {
            Some(old) => {
                self.skipped -= old.hop.is_none() as usize;
                *old = e;
            }
            None => {
                list.push(e);
                self.entries += 1;
            }
        }
        self.skipped += hop.is_none() as usize;
        self.touch(p);
    }

    /// The kernel deleted a route.
    pub fn delete(&mut self, p: Prefix, tos: u8, metric: u32) {
        let Some(list) = self.kernel.get_mut(&p) else {
            return;
        };
        let Some(i) = list.iter().position(|e| e.tos == tos && e.metric == metric) else {
            return;
        };
        let e = list.swap_remove(i);
        self.entries -= 1;
        self.skipped -= e.hop.is_none() as usize;
        if list.is_empty() {
            self.kernel.remove(&p);
        }
        self.touch(p);
    }

    /// A dump starts: what it reports from now on is marked as current.
    pub fn begin_dump(&mut self) {
        self.generation = self.generation.wrapping_add(1);
    }

    /// The dump ended: every route neither it nor a change since its start reported is gone.
    pub fn end_dump(&mut self) {
        let generation = self.generation;
        let mut gone = Vec::new();
        for (p, list) in self.kernel.iter_mut() {
            let before = list.len();
            let mut lost_skipped = 0;
            list.retain(|e| {
                let keep = e.generation == generation;
                lost_skipped += (!keep && e.hop.is_none()) as usize;
                keep
            });
            if list.len() != before {
                self.entries -= before - list.len();
                self.skipped -= lost_skipped;
                gone.push(*p);
            }
        }
        for p in gone {
            if self.kernel.get(&p).is_some_and(Vec::is_empty) {
                self.kernel.remove(&p);
            }
            self.touch(p);
        }
        // Prefixes installed that the kernel no longer knows at all (a table changed
        // behind this element's back) are queued too.
        let stale: Vec<Prefix> = self
            .installed
            .keys()
            .filter(|p| !self.kernel.contains_key(p))
            .copied()
            .collect();
        for p in stale {
            self.touch(p);
        }
    }

    fn touch(&mut self, p: Prefix) {
        if self.queued.insert(p) {
            self.queue.push_back(p);
        }
    }

    /// The next hop the tables should hold for `p`: that of the kernel's preferred route.
    pub fn wanted(&self, p: &Prefix) -> Option<Hop> {
        self.kernel
            .get(p)?
            .iter()
            .filter(|e| e.tos == 0)
            .min_by_key(|e| e.metric)?
            .hop
    }

    /// Up to `max` changes that bring the tables in line, each prefix once; the caller
    /// reports each outcome with [`Fib::done`].
    pub fn next_changes(&mut self, max: usize) -> Vec<Change> {
        let mut out = Vec::new();
        while out.len() < max {
            let Some(p) = self.queue.pop_front() else {
                break;
            };
            self.queued.remove(&p);
            let change = match (self.wanted(&p), self.installed.get(&p)) {
                (Some(h), None) => Change::Add(p, h),
                (Some(h), Some(&o)) if h != o => Change::Replace(p, h),
                (None, Some(_)) => Change::Remove(p),
                _ => continue,
            };
            out.push(change);
        }
        out
    }

    /// Records the outcome of a change: the tables hold it now (`ok`), or refused it. A
    /// refused removal still forgets the prefix (the table did not hold it).
    pub fn done(&mut self, c: Change, ok: bool) {
        match c {
            Change::Add(p, h) | Change::Replace(p, h) if ok => {
                self.installed.insert(p, h);
            }
            Change::Remove(p) => {
                self.installed.remove(&p);
            }
            _ => {}
        }
    }

    /// Prefixes waiting to be looked at by [`Fib::next_changes`].
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Prefixes the tables hold through this element.
    pub fn installed(&self) -> usize {
        self.installed.len()
    }

    /// Routes of the kernel table known (all prefixes, metrics and TOS values).
    pub fn kernel_routes(&self) -> usize {
        self.entries
    }

    /// Routes of the kernel table that cannot be installed.
    pub fn skipped(&self) -> usize {
        self.skipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(addr: u32, len: u8) -> Prefix {
        Prefix {
            v6: false,
            addr: addr as u128,
            len,
        }
    }

    fn hop(gw: u32, port: u32) -> Option<Hop> {
        Some(Hop {
            gw: gw as u128,
            port,
        })
    }

    fn apply_all(f: &mut Fib) -> Vec<Change> {
        let c = f.next_changes(usize::MAX);
        for &x in &c {
            f.done(x, true);
        }
        c
    }

    #[test]
    fn add_replace_remove() {
        let mut f = Fib::default();
        let a = p(0xc612_6400, 24);
        f.update(a, 0, 0, hop(1, 1));
        assert_eq!(apply_all(&mut f), vec![Change::Add(a, hop(1, 1).unwrap())]);
        f.update(a, 0, 0, hop(2, 2));
        assert_eq!(
            apply_all(&mut f),
            vec![Change::Replace(a, hop(2, 2).unwrap())]
        );
        // The same route again changes nothing.
        f.update(a, 0, 0, hop(2, 2));
        assert_eq!(apply_all(&mut f), vec![]);
        f.delete(a, 0, 0);
        assert_eq!(apply_all(&mut f), vec![Change::Remove(a)]);
        assert_eq!((f.installed(), f.kernel_routes()), (0, 0));
    }

    #[test]
    fn lowest_metric_wins_and_tos_is_ignored() {
        let mut f = Fib::default();
        let a = p(0xc612_6400, 24);
        f.update(a, 0, 200, hop(2, 2));
        f.update(a, 0, 100, hop(1, 1));
        f.update(a, 8, 10, hop(3, 3));
        assert_eq!(apply_all(&mut f), vec![Change::Add(a, hop(1, 1).unwrap())]);
        f.delete(a, 0, 100);
        assert_eq!(
            apply_all(&mut f),
            vec![Change::Replace(a, hop(2, 2).unwrap())]
        );
        // A preferred route that cannot be installed hides the worse one.
        f.update(a, 0, 50, None);
        assert_eq!(f.skipped(), 1);
        assert_eq!(apply_all(&mut f), vec![Change::Remove(a)]);
    }

    #[test]
    fn changes_coalesce_and_come_in_batches() {
        let mut f = Fib::default();
        for i in 0..10u32 {
            f.update(p(i << 8, 24), 0, 0, hop(1, 1));
            f.update(p(i << 8, 24), 0, 0, hop(2, 2));
        }
        f.delete(p(9 << 8, 24), 0, 0);
        assert_eq!(f.pending(), 10);
        assert_eq!(f.next_changes(4).len(), 4);
        // The removed prefix was never installed: nothing to do for it.
        assert_eq!(f.next_changes(100).len(), 5);
        assert_eq!(f.pending(), 0);
    }

    #[test]
    fn dump_removes_what_it_did_not_report() {
        let mut f = Fib::default();
        let (a, b, c) = (p(0x0a00_0000, 8), p(0x0b00_0000, 8), p(0x0c00_0000, 8));
        f.update(a, 0, 0, hop(1, 1));
        f.update(b, 0, 0, hop(1, 1));
        apply_all(&mut f);
        f.begin_dump();
        f.update(a, 0, 0, hop(1, 1));
        // A change during the dump counts as reported.
        f.update(c, 0, 0, hop(1, 1));
        f.end_dump();
        let mut got = apply_all(&mut f);
        got.sort_by_key(|c| c.prefix().addr);
        assert_eq!(
            got,
            vec![Change::Remove(b), Change::Add(c, hop(1, 1).unwrap())]
        );
        assert_eq!(f.kernel_routes(), 2);
    }

    #[test]
    fn refused_changes_are_not_recorded() {
        let mut f = Fib::default();
        let a = p(0x0a00_0000, 8);
        f.update(a, 0, 0, hop(1, 1));
        let c = f.next_changes(10);
        f.done(c[0], false);
        assert_eq!(f.installed(), 0);
        // A later dump tries again.
        f.begin_dump();
        f.update(a, 0, 0, hop(1, 1));
        f.end_dump();
        assert_eq!(f.next_changes(10), vec![Change::Add(a, hop(1, 1).unwrap())]);
    }
}
