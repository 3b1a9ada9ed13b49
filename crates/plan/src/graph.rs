//! Planning a configuration that is not a chain: its task groups placed on threads.
//!
//! The units are the engine's task groups (tasks joined by the elements they share; see
//! `sluice_core::threads::TaskGroup`): each runs on one thread, and groups meet only at
//! elements that several threads may use, such as a ThreadSafeQueue. A configuration with
//! queues between its paths (SMP Click's flow splitting, pipelines, replicated streams) is
//! placed by choosing a thread for every group; the rewrite is a StaticThreadSched line.
//!
//! - Calibration: the configuration runs to completion on one thread (three times; the
//!   fastest run counts), with per-element packet counts. Every InfiniteSource's LIMIT is
//!   lowered so that a run lasts about 0.1 s, as a pilot run with 5 000 packets per source
//!   predicts; other sources must end by themselves. A group costs the cycles its tasks
//!   spent (`tasks` handler) per source packet. Packets through a queue whose puller runs on
//!   another thread than its pushers are crossings. Elements that report a footprint
//!   (`footprint_bytes`/`accesses_per_packet`: SyntheticLoad, route tables) add accesses per
//!   source packet to their group.
//! - Model: Eq. 1 per thread. Thread `t` spends, per source packet,
//!   `Σ cycles(g) + O_s·(packets entering its groups from queues pushed on other threads) +
//!   accesses·Σ_ℓ π_ℓ·O_ℓ`, with the cache footprints of the threads that share each cache
//!   instance (each thread has its own copy of an element's data). A group's own `cycles`
//!   are its measured cost minus the misses the model gives it on one thread, so a
//!   placement changes only the modelled terms. The rate is the slowest thread's.
//! - Search: every assignment of the movable groups while there are at most
//!   [`EXHAUSTIVE`]; otherwise the heaviest group first to the least loaded thread, then
//!   single moves and swaps while they help.

use std::collections::BTreeSet;

use sluice_core::RouterOptions;
use sluice_lang::{FlatConfig, FlatConnection};

use crate::machine::Layout;
use crate::model::miss_probability;
use crate::{chain, profile, run};

/// Assignments enumerated one by one up to this many; a local search beyond.
pub const EXHAUSTIVE: usize = 65_536;

/// Predicted rates closer than this fraction are a tie.
pub const TIE: f64 = 0.02;

/// Calibration runs; the fastest counts.
const RUNS: usize = 3;

/// Packets per InfiniteSource in the pilot run.
const PILOT: u64 = 5_000;

/// Seconds a counted calibration run aims at.
const RUN_SECONDS: f64 = 0.1;

/// `flat` with every InfiniteSource's LIMIT lowered to at most `limit` (set to `limit` where
/// it has none).
fn limited(flat: &FlatConfig, limit: u64) -> FlatConfig {
    let mut f = flat.clone();
    for e in f
        .elements
        .iter_mut()
        .filter(|e| e.class == "InfiniteSource")
    {
        let cur = chain::get_arg(&e.config, Some(1), "LIMIT")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(-1);
        if cur < 0 || cur as u64 > limit {
            e.config = chain::set_arg(&e.config, Some(1), "LIMIT", &limit.to_string());
        }
    }
    f
}

/// An element's data, as one group uses it.
#[derive(Clone, Debug, PartialEq)]
pub struct Footprint {
    /// Element name.
    pub element: String,
    /// Bytes of its data structure (one copy).
    pub bytes: f64,
    /// Accesses to it per source packet, through this group.
    pub accesses: f64,
}

/// One task group: tasks that run on one thread.
#[derive(Clone, Debug, PartialEq)]
pub struct Unit {
    /// The elements whose tasks the group holds.
    pub tasks: Vec<String>,
    /// Cycles per source packet measured on one thread.
    pub measured: f64,
    /// Those cycles minus the misses the model gives the group on one thread.
    pub cycles: f64,
    /// Packets its task elements emit per source packet.
    pub packets: f64,
    /// Data structures its elements use.
    pub footprints: Vec<Footprint>,
    /// Whether the engine may move it (false: it watches descriptors of its thread).
    pub movable: bool,
    /// Its thread in the configuration as written.
    pub written: usize,
}

/// A queue where groups meet: pushed by some, pulled by one.
#[derive(Clone, Debug, PartialEq)]
pub struct Crossing {
    /// The queue element.
    pub queue: String,
    /// Packets through it per source packet.
    pub packets: f64,
    /// The group that pulls from it.
    pub puller: usize,
    /// The groups that push into it.
    pub pushers: Vec<usize>,
}

/// The calibrated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskGraph {
    /// Task groups.
    pub units: Vec<Unit>,
    /// Queues between groups.
    pub crossings: Vec<Crossing>,
    /// Source packets in one calibration run.
    pub packets: f64,
    /// Seconds of the counted calibration run.
    pub seconds: f64,
}

/// What one thread spends per source packet in a placement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadCost {
    /// Its groups' own cycles.
    pub compute: f64,
    /// `O_s` times the packets that reach it across threads.
    pub sync: f64,
    /// Modelled cache misses.
    pub contention: f64,
    /// The sum.
    pub total: f64,
    /// Fraction of its cycles busy at the predicted rate.
    pub busy: f64,
}

/// A placement of the groups and its prediction.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignment {
    /// Thread of each group.
    pub thread: Vec<usize>,
    /// Source packets per second.
    pub rate: f64,
    /// Per thread.
    pub threads: Vec<ThreadCost>,
}

impl Assignment {
    /// The thread that limits the rate.
    pub fn bottleneck(&self) -> usize {
        (0..self.threads.len())
            .max_by(|&a, &b| self.threads[a].busy.total_cmp(&self.threads[b].busy))
            .unwrap_or(0)
    }
}

/// Calibrates `flat`: run on one thread (thread 0 of `layout`); the placement as written is
/// the one for `threads` threads.
pub fn calibrate(flat: &FlatConfig, threads: usize, layout: &Layout) -> Result<TaskGraph, String> {
    // The groups exist only for a router with several threads.
    let mut shape = sluice_core::Router::new(
        flat.clone(),
        &run::library(),
        RouterOptions {
            threads: threads.max(2),
            ..Default::default()
        },
    )
    .map_err(|e| e.join("\n"))?;
    let task_names: Vec<String> = shape.task_stats().into_iter().map(|t| t.element).collect();
    let placement = shape
        .placement()
        .cloned()
        .ok_or("no placement for several threads")?;
    shape.cleanup();
    drop(shape);
    let one = |flat: FlatConfig| {
        run::run_flat(
            flat,
            RouterOptions {
                threads: 1,
                element_stats: true,
                ..Default::default()
            },
        )
    };
    // A pilot run with few packets sizes the counted runs (it also warms up).
    let (pilot, _) = one(limited(flat, PILOT))?;
    let limit = (PILOT as f64 * RUN_SECONDS / pilot.max(1e-4)).clamp(PILOT as f64, 1e8) as u64;
    let flat = &limited(flat, limit);
    let mut best: Option<(f64, Vec<f64>, String)> = None;
    let mut router = None;
    for _ in 0..RUNS {
        let (secs, mut r) = one(flat.clone())?;
        let cycles: Vec<f64> = r.task_stats().iter().map(|t| t.cycles as f64).collect();
        let stats = r.read_path("element_stats").unwrap_or_default();
        r.cleanup();
        let total: f64 = cycles.iter().sum();
        if best.as_ref().is_none_or(|b| total < b.1.iter().sum()) {
            best = Some((secs, cycles, stats));
            router = Some(r);
        }
    }
    let (seconds, cycles, stats) = best.ok_or("no calibration run")?;
    let mut r = router.ok_or("no calibration run")?;
    if cycles.len() != task_names.len() {
        return Err("the calibration router has other tasks than the planned one".into());
    }
    let counts = element_counts(&stats);
    let count = |name: &str, col: usize| {
        counts
            .iter()
            .find(|c| c.0 == name)
            .map_or(0.0, |c| c.1[col])
    };
    let has_input: BTreeSet<usize> = flat.connections.iter().map(|c| c.to).collect();
    let packets: f64 = (0..flat.elements.len())
        .filter(|i| !has_input.contains(i))
        .map(|i| count(&flat.elements[i].name, 2))
        .sum();
    if packets <= 0.0 {
        return Err("the calibration run sent no packets".into());
    }
    let mut units: Vec<Unit> = placement
        .groups
        .iter()
        .map(|g| Unit {
            tasks: g.tasks.iter().map(|&t| task_names[t].clone()).collect(),
            measured: g.tasks.iter().map(|&t| cycles[t]).sum::<f64>() / packets,
            cycles: 0.0,
            packets: g
                .tasks
                .iter()
                .map(|&t| count(&task_names[t], 2))
                .sum::<f64>()
                / packets,
            footprints: Vec::new(),
            movable: g.movable,
            written: if threads > 1 {
                g.tasks.first().map_or(0, |&t| placement.task_thread[t])
            } else {
                0
            },
        })
        .collect();
    let users = |e: usize| -> Vec<usize> {
        (0..placement.groups.len())
            .filter(|&g| {
                placement.groups[g].elems.contains(&e) || placement.groups[g].meets.contains(&e)
            })
            .collect()
    };
    let mut crossings = Vec::new();
    for (e, el) in flat.elements.iter().enumerate() {
        let us = users(e);
        let (bytes, accesses, _) = profile::footprint(&mut r, &el.name);
        if bytes > 0 && accesses > 0.0 && !us.is_empty() {
            let per = accesses * count(&el.name, 0) / packets / us.len() as f64;
            for &u in &us {
                units[u].footprints.push(Footprint {
                    element: el.name.clone(),
                    bytes: bytes as f64,
                    accesses: per,
                });
            }
        }
        if us.len() < 2 {
            continue;
        }
        let puller = us.iter().copied().find(|&g| {
            downstream(&flat.connections, e).any(|d| placement.groups[g].elems.contains(&d))
        });
        if let Some(p) = puller {
            crossings.push(Crossing {
                queue: el.name.clone(),
                packets: count(&el.name, 0) / packets,
                puller: p,
                pushers: us.iter().copied().filter(|&g| g != p).collect(),
            });
        }
    }
    let mut g = TaskGraph {
        units,
        crossings,
        packets,
        seconds,
    };
    let one = vec![0; g.units.len()];
    let misses = unit_contention(&g, &one, layout);
    for (u, m) in g.units.iter_mut().zip(misses) {
        u.cycles = (u.measured - m).max(0.0);
    }
    Ok(g)
}

/// `element_stats` rows: name and `[in packets, in bytes, out packets, out bytes]`.
fn element_counts(stats: &str) -> Vec<(String, [f64; 4])> {
    stats
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(0.0);
            Some((f.first()?.to_string(), [n(1), n(2), n(3), n(4)]))
        })
        .collect()
}

/// The elements `e`'s outputs connect to.
fn downstream(conns: &[FlatConnection], e: usize) -> impl Iterator<Item = usize> + '_ {
    conns.iter().filter(move |c| c.from == e).map(|c| c.to)
}

/// Group and position of each thread in `layout`.
fn positions(layout: &Layout, threads: usize) -> Vec<(usize, usize)> {
    (0..threads)
        .map(|t| {
            layout
                .groups
                .iter()
                .enumerate()
                .find_map(|(j, g)| g.threads.iter().position(|&x| x == t).map(|k| (j, k)))
                .unwrap_or((0, 0))
        })
        .collect()
}

/// Modelled miss cycles per source packet of each unit placed by `thread`.
fn unit_contention(g: &TaskGraph, thread: &[usize], layout: &Layout) -> Vec<f64> {
    let nthreads = layout.groups.iter().map(|x| x.threads.len()).sum::<usize>();
    let pos = positions(layout, nthreads);
    let levels = &layout.machine.levels;
    // Footprint of every cache instance, level by level: one copy per thread.
    let mut elements: Vec<(&str, f64, BTreeSet<usize>)> = Vec::new();
    for (u, unit) in g.units.iter().enumerate() {
        for f in &unit.footprints {
            match elements.iter_mut().find(|e| e.0 == f.element) {
                Some(e) => {
                    e.2.insert(thread[u]);
                }
                None => elements.push((&f.element, f.bytes, BTreeSet::from([thread[u]]))),
            }
        }
    }
    let inst = |l: usize, t: usize| {
        let (j, k) = pos[t.min(nthreads - 1)];
        levels[l].instance[j][k]
    };
    let pi: Vec<Vec<f64>> = (0..levels.len())
        .map(|l| {
            let count = levels[l]
                .instance
                .iter()
                .flatten()
                .max()
                .map_or(0, |x| x + 1);
            let mut fp = vec![0.0; count];
            for (_, bytes, ts) in &elements {
                for &t in ts {
                    fp[inst(l, t)] += bytes;
                }
            }
            (0..nthreads)
                .map(|t| miss_probability(levels[l].bytes, fp[inst(l, t)]))
                .collect()
        })
        .collect();
    g.units
        .iter()
        .enumerate()
        .map(|(u, unit)| {
            let t = thread[u].min(nthreads - 1);
            let per_access: f64 = (0..levels.len())
                .map(|l| pi[l][t] * levels[l].penalty)
                .sum();
            unit.footprints.iter().map(|f| f.accesses).sum::<f64>() * per_access
        })
        .collect()
}

/// Modelled synchronisation cycles per source packet of each unit placed by `thread`: `O_s`
/// for every packet it pulls from a queue pushed on another thread.
fn unit_sync(g: &TaskGraph, thread: &[usize], layout: &Layout) -> Vec<f64> {
    let mut sync = vec![0.0; g.units.len()];
    for x in g.crossings.iter().filter(|x| !x.pushers.is_empty()) {
        let t = thread[x.puller];
        let away = x.pushers.iter().filter(|&&p| thread[p] != t).count();
        sync[x.puller] +=
            layout.machine.sync_cycles * x.packets * away as f64 / x.pushers.len() as f64;
    }
    sync
}

/// Modelled cycles per source packet of each unit placed by `thread` beyond its own:
/// synchronisation and contention.
pub fn unit_overhead(g: &TaskGraph, thread: &[usize], layout: &Layout) -> Vec<f64> {
    unit_sync(g, thread, layout)
        .iter()
        .zip(unit_contention(g, thread, layout))
        .map(|(s, c)| s + c)
        .collect()
}

/// The model's prediction for `thread` (one entry per unit) on `layout`.
pub fn predict(g: &TaskGraph, thread: &[usize], layout: &Layout) -> Assignment {
    let nthreads = layout.groups.iter().map(|x| x.threads.len()).sum::<usize>();
    let pos = positions(layout, nthreads);
    let misses = unit_contention(g, thread, layout);
    let sync = unit_sync(g, thread, layout);
    let mut costs = vec![ThreadCost::default(); nthreads];
    for (u, unit) in g.units.iter().enumerate() {
        let c = &mut costs[thread[u]];
        c.compute += unit.cycles;
        c.sync += sync[u];
        c.contention += misses[u];
    }
    let mut rate = f64::INFINITY;
    let capacity: Vec<f64> = (0..nthreads)
        .map(|t| {
            let gr = &layout.machine.groups[pos[t].0];
            layout.machine.hz * gr.cores as f64 / gr.threads.max(1) as f64
        })
        .collect();
    for (t, c) in costs.iter_mut().enumerate() {
        c.total = c.compute + c.sync + c.contention;
        if c.total > 0.0 {
            rate = rate.min(capacity[t] / c.total);
        }
    }
    for (t, c) in costs.iter_mut().enumerate() {
        c.busy = if rate.is_finite() {
            rate * c.total / capacity[t]
        } else {
            0.0
        };
    }
    Assignment {
        thread: thread.to_vec(),
        rate,
        threads: costs,
    }
}

/// Every placement worth listing, best first: all assignments of the movable groups (or a
/// local search when there are more than [`EXHAUSTIVE`]), and the one as written. Among
/// equal rates the one as written comes first, then those using fewer crossings.
pub fn search(g: &TaskGraph, layout: &Layout) -> Vec<Assignment> {
    let nthreads = layout.groups.iter().map(|x| x.threads.len()).sum::<usize>();
    let written: Vec<usize> = g
        .units
        .iter()
        .map(|u| u.written.min(nthreads - 1))
        .collect();
    let movable: Vec<usize> = (0..g.units.len()).filter(|&u| g.units[u].movable).collect();
    let space = (nthreads as f64).powi(movable.len() as i32);
    let mut out = vec![predict(g, &written, layout)];
    if space <= EXHAUSTIVE as f64 {
        let mut a = written.clone();
        for code in 0..space as usize {
            let mut c = code;
            for &u in &movable {
                a[u] = c % nthreads;
                c /= nthreads;
            }
            if a != written {
                out.push(predict(g, &a, layout));
            }
        }
    } else {
        let found = local_search(g, layout, &movable, &written);
        if found.thread != written {
            out.push(found);
        }
    }
    let crossings = |a: &Assignment| {
        g.crossings
            .iter()
            .filter(|x| x.pushers.iter().any(|&p| a.thread[p] != a.thread[x.puller]))
            .count()
    };
    out.sort_by(|a, b| {
        b.rate
            .total_cmp(&a.rate)
            .then_with(|| crossings(a).cmp(&crossings(b)))
    });
    // Placements that differ only in thread numbers, and predict the same, are one.
    let mut seen: Vec<(Vec<BTreeSet<usize>>, f64)> = Vec::new();
    out.retain(|a| {
        let key = partition(a);
        let dup = seen
            .iter()
            .any(|(k, r)| *k == key && (a.rate - r).abs() <= r * TIE);
        if !dup {
            seen.push((key, a.rate));
        }
        !dup || a.thread == written
    });
    // The placement as written wins a tie within model precision: no churn for nothing.
    if let Some(w) = out.iter().position(|a| a.thread == written) {
        if out[w].rate >= out[0].rate * (1.0 - TIE) {
            let a = out.remove(w);
            out.insert(0, a);
        }
    }
    out
}

/// The sets of groups that share a thread, in a canonical order.
fn partition(a: &Assignment) -> Vec<BTreeSet<usize>> {
    let mut parts: Vec<BTreeSet<usize>> = (0..a.threads.len())
        .map(|t| (0..a.thread.len()).filter(|&u| a.thread[u] == t).collect())
        .collect();
    parts.sort();
    parts
}

/// Heaviest movable group first onto the least loaded thread, then single moves and swaps
/// while the predicted rate rises.
fn local_search(g: &TaskGraph, layout: &Layout, movable: &[usize], start: &[usize]) -> Assignment {
    let nthreads = layout.groups.iter().map(|x| x.threads.len()).sum::<usize>();
    let mut a = start.to_vec();
    let mut load = vec![0.0; nthreads];
    for (u, unit) in g.units.iter().enumerate() {
        if !unit.movable {
            load[a[u]] += unit.cycles;
        }
    }
    let mut order = movable.to_vec();
    order.sort_by(|&x, &y| g.units[y].cycles.total_cmp(&g.units[x].cycles));
    for u in order {
        let t = (0..nthreads)
            .min_by(|&x, &y| load[x].total_cmp(&load[y]))
            .unwrap_or(0);
        a[u] = t;
        load[t] += g.units[u].cycles;
    }
    let mut best = predict(g, &a, layout);
    loop {
        let mut improved = false;
        for (i, &u) in movable.iter().enumerate() {
            let mut tries: Vec<Vec<usize>> = (0..nthreads)
                .filter(|&t| t != best.thread[u])
                .map(|t| {
                    let mut b = best.thread.clone();
                    b[u] = t;
                    b
                })
                .collect();
            for &v in &movable[i + 1..] {
                if best.thread[v] != best.thread[u] {
                    let mut b = best.thread.clone();
                    b.swap(u, v);
                    tries.push(b);
                }
            }
            for b in tries {
                let p = predict(g, &b, layout);
                if p.rate > best.rate * (1.0 + 1e-9) {
                    best = p;
                    improved = true;
                }
            }
        }
        if !improved {
            return best;
        }
    }
}

/// `flat` without its StaticThreadSched elements, with one that pins every task of every
/// group to its thread in `a`.
pub fn rewrite(flat: &FlatConfig, g: &TaskGraph, a: &Assignment) -> String {
    let keep: Vec<usize> = (0..flat.elements.len())
        .filter(|&i| flat.elements[i].class != "StaticThreadSched")
        .collect();
    let index = |old: usize| keep.iter().position(|&k| k == old);
    let mut out = FlatConfig {
        elements: keep.iter().map(|&i| flat.elements[i].clone()).collect(),
        connections: flat
            .connections
            .iter()
            .filter_map(|c| {
                Some(FlatConnection {
                    from: index(c.from)?,
                    to: index(c.to)?,
                    ..c.clone()
                })
            })
            .collect(),
        requirements: flat.requirements.clone(),
    };
    out.connections
        .sort_by_key(|c| (c.from, c.from_port, c.to, c.to_port));
    let mut text = sluice_lang::unparse(&out);
    let pins: Vec<String> = g
        .units
        .iter()
        .zip(&a.thread)
        .flat_map(|(u, &t)| u.tasks.iter().map(move |n| format!("{} {}", n, t)))
        .collect();
    if !pins.is_empty() {
        text.push_str(&format!(
            "plan_placement :: StaticThreadSched({});\n",
            pins.join(", ")
        ));
    }
    text
}

/// How `a` places the groups: `t0: g0 g2 | t1: g1`.
pub fn describe(a: &Assignment) -> String {
    let n = a.threads.len();
    (0..n)
        .map(|t| {
            let gs: Vec<String> = (0..a.thread.len())
                .filter(|&u| a.thread[u] == t)
                .map(|u| format!("g{}", u))
                .collect();
            format!(
                "t{}: {}",
                t,
                if gs.is_empty() {
                    "-".into()
                } else {
                    gs.join(" ")
                }
            )
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// Two threads (tests), each on its own core with a private `l2`-byte cache (penalty 10 cycles).
#[cfg(test)]
pub(crate) fn two_cores(l2: f64, sync: f64) -> Layout {
    Layout {
        machine: crate::model::Machine {
            hz: 1e9,
            sync_cycles: sync,
            sync_cycles_single: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            burst: crate::model::SYNC_BATCH,
            groups: vec![
                crate::model::Group {
                    cores: 1,
                    threads: 1
                };
                2
            ],
            levels: vec![crate::model::Level {
                name: "L2".into(),
                bytes: l2,
                penalty: 10.0,
                instance: vec![vec![0], vec![1]],
            }],
        },
        groups: vec![
            crate::machine::GroupInfo {
                threads: vec![0],
                cpus: vec![0],
            },
            crate::machine::GroupInfo {
                threads: vec![1],
                cpus: vec![1],
            },
        ],
        level: "L2".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(name: &str, cycles: f64, bytes: f64, accesses: f64) -> Unit {
        Unit {
            tasks: vec![name.into()],
            measured: cycles,
            cycles,
            packets: 1.0,
            footprints: if bytes > 0.0 {
                vec![Footprint {
                    element: format!("{}_load", name),
                    bytes,
                    accesses,
                }]
            } else {
                Vec::new()
            },
            movable: true,
            written: 0,
        }
    }

    /// A source group feeding two pullers through queues (flow splitting).
    fn split(src: f64, work: f64) -> TaskGraph {
        TaskGraph {
            units: vec![
                unit("src", src, 0.0, 0.0),
                unit("p0", work, 0.0, 0.0),
                unit("p1", work, 0.0, 0.0),
            ],
            crossings: vec![
                Crossing {
                    queue: "q0".into(),
                    packets: 0.5,
                    puller: 1,
                    pushers: vec![0],
                },
                Crossing {
                    queue: "q1".into(),
                    packets: 0.5,
                    puller: 2,
                    pushers: vec![0],
                },
            ],
            packets: 1000.0,
            seconds: 0.1,
        }
    }

    #[test]
    fn hand_computed_flow_split() {
        // Source 100 cycles, each puller 400 (per source packet), O_s = 200 per crossing packet.
        let l = two_cores(1e6, 200.0);
        let g = split(100.0, 400.0);
        // All on one thread: 900 cycles, 1e9/900 packets/s.
        let one = predict(&g, &[0, 0, 0], &l);
        assert!((one.rate - 1e9 / 900.0).abs() < 1e-6);
        // Source and p0 on t0, p1 on t1: t0 = 500, t1 = 400 + 200·0.5 = 500.
        let a = predict(&g, &[0, 0, 1], &l);
        assert!((a.threads[0].total - 500.0).abs() < 1e-9);
        assert!((a.threads[1].sync - 100.0).abs() < 1e-9);
        assert!((a.rate - 2e6).abs() < 1e-6);
        // Both pullers on t1: t1 = 800 + 200 = 1000.
        let b = predict(&g, &[0, 1, 1], &l);
        assert!((b.threads[1].total - 1000.0).abs() < 1e-9);
        let best = &search(&g, &l)[0];
        assert_eq!(best.rate, a.rate);
        assert!(
            best.thread == vec![0, 0, 1]
                || best.thread == vec![1, 1, 0]
                || best.thread == vec![0, 1, 0]
                || best.thread == vec![1, 0, 1]
        );
    }

    #[test]
    fn contention_separates_large_footprints() {
        // Two equal independent groups of 1000 cycles, each reading a 768 KB array 100 times
        // per packet, L2 1 MB. Together on one core: footprint 1.5 MB, π = 1/3, 333 cycles
        // of misses each. Apart: no misses.
        let l = two_cores(1024.0 * 1024.0, 200.0);
        let g = TaskGraph {
            units: vec![
                unit("a", 1000.0, 768.0 * 1024.0, 100.0),
                unit("b", 1000.0, 768.0 * 1024.0, 100.0),
            ],
            crossings: Vec::new(),
            packets: 1.0,
            seconds: 1.0,
        };
        let together = predict(&g, &[0, 0], &l);
        assert!((together.threads[0].contention - 2.0 * 100.0 * 10.0 / 3.0).abs() < 1e-6);
        let apart = predict(&g, &[0, 1], &l);
        assert_eq!(apart.threads[0].contention, 0.0);
        assert!((apart.rate - 1e6).abs() < 1e-6);
        assert_eq!(search(&g, &l)[0].rate, apart.rate);
    }

    #[test]
    fn crossings_can_outweigh_balance() {
        // A two-stage pipeline of 100 + 100 cycles with O_s = 300: one thread (200) beats
        // splitting (100 and 100 + 300).
        let l = two_cores(1e6, 300.0);
        let g = TaskGraph {
            units: vec![unit("src", 100.0, 0.0, 0.0), unit("uq", 100.0, 0.0, 0.0)],
            crossings: vec![Crossing {
                queue: "q".into(),
                packets: 1.0,
                puller: 1,
                pushers: vec![0],
            }],
            packets: 1.0,
            seconds: 1.0,
        };
        let best = &search(&g, &l)[0];
        assert_eq!(best.thread[0], best.thread[1]);
        assert!((best.rate - 5e6).abs() < 1e-6);
    }

    #[test]
    fn local_search_balances_many_groups() {
        let l = two_cores(1e6, 0.0);
        let mut g = TaskGraph {
            units: (0..20)
                .map(|i| unit(&format!("s{}", i), 100.0 + i as f64, 0.0, 0.0))
                .collect(),
            crossings: Vec::new(),
            packets: 1.0,
            seconds: 1.0,
        };
        g.units[0].movable = false;
        let all = search(&g, &l);
        let best = &all[0];
        let total: f64 = g.units.iter().map(|u| u.cycles).sum();
        assert!(
            best.threads.iter().all(|t| t.total <= total / 2.0 + 20.0),
            "{:?}",
            best.threads
        );
        assert_eq!(best.thread[0], 0);
    }

    #[test]
    fn rewrite_replaces_the_static_placement() {
        let flat = run::parse(
            "s :: InfiniteSource(LIMIT 10) -> q :: ThreadSafeQueue -> u :: Unqueue -> Discard; StaticThreadSched(s 0, u 0);",
            "t",
            &[],
        )
        .unwrap();
        let g = TaskGraph {
            units: vec![unit("s", 1.0, 0.0, 0.0), unit("u", 1.0, 0.0, 0.0)],
            crossings: Vec::new(),
            packets: 1.0,
            seconds: 1.0,
        };
        let l = two_cores(1e6, 0.0);
        let text = rewrite(&flat, &g, &predict(&g, &[0, 1], &l));
        assert_eq!(text.matches("StaticThreadSched").count(), 1, "{}", text);
        assert!(text.contains("StaticThreadSched(s 0, u 1)"), "{}", text);
        let again = run::parse(&text, "t", &[]).unwrap();
        assert_eq!(again.elements.len(), flat.elements.len());
        assert_eq!(again.connections.len(), flat.connections.len());
    }
}
