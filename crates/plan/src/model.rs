//! The throughput model: Eq. 1 of Dobrescu et al. ("Controlling Parallelism in a Multicore
//! Software Router", PRESTO 2010, §3.2), generalised.
//!
//! A chain of `n` elements; element `i` costs `C(i)` cycles per packet in isolation (no
//! misses), has an `S(i)`-byte data structure and makes `N(i)` memory accesses per packet.
//! The machine has `m` groups of cores (the paper's "processors"); a placement `A` says
//! which groups run which elements (`A[i][j]`). Group `j` spends per packet
//!
//! ```text
//! C_j = Σ_i C(i)·A_ij                                      compute
//!     + O_s · Σ_{i≥1} A_ij·(1 − A_{i−1,j})                 synchronisation (entries from another group)
//!     + Σ_i A_ij·N(i) · Σ_ℓ π_ℓ,j·O_ℓ                      contention
//! ```
//!
//! and processes `cores_j·B/C_j` packets per second; traffic to an element is split over the
//! groups that run it in proportion to those rates, so the router forwards
//! `R = min_i Σ_j A_ij·cores_j·B/C_j` packets per second (Eq. 1).
//!
//! Generalisations of the paper's form:
//! - several cache levels `ℓ`, each with its own capacity and miss penalty `O_ℓ` (the extra
//!   cycles of an access that misses level `ℓ` over one that hits it); an access misses
//!   level `ℓ` with probability `π_ℓ = max(0, 1 − cache_ℓ/S_ℓ)`, `S_ℓ` the bytes used through
//!   that cache instance. The paper's form is one level whose instances are the groups.
//! - a cache instance may serve part of a group (a core's private cache) or several groups
//!   (a cache shared by the whole socket); the footprint is counted per instance, from the
//!   threads that use it.
//! - elements whose data is per thread (`per_thread`: Sluice's replicated elements and the
//!   copies a cloned configuration makes) count once per thread that runs them; shared data
//!   (the paper's assumption) counts once per cache instance.

/// One element of the chain as the model sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Element {
    /// Name, for reports.
    pub name: String,
    /// `C(i)`: cycles per packet when run alone, without cache misses.
    pub cycles: f64,
    /// `S(i)`: bytes of data structure.
    pub bytes: f64,
    /// `N(i)`: accesses to that data structure per packet.
    pub accesses: f64,
    /// Whether every thread that runs the element has its own copy of the data.
    pub per_thread: bool,
}

/// A group of cores that the placement treats as one (the paper's "processor").
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    /// Distinct cores its threads run on: its throughput is `cores·B/C_j`.
    pub cores: usize,
    /// Threads in the group (more than `cores` when threads share a core).
    pub threads: usize,
}

/// One cache level.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Name for reports (`L2`).
    pub name: String,
    /// Capacity of one instance, bytes.
    pub bytes: f64,
    /// `O_ℓ`: extra cycles of an access that misses this level.
    pub penalty: f64,
    /// `instance[j][k]`: the cache instance that thread `k` of group `j` uses.
    pub instance: Vec<Vec<usize>>,
}

/// The machine as the model sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    /// `B`: cycles per second of one core.
    pub hz: f64,
    /// `O_s`: cycles per packet that enters a group from another group, in batches of
    /// [`SYNC_BATCH`].
    pub sync_cycles: f64,
    /// `O_s` in batches of one packet; 0 when not measured (every batch size then costs
    /// `sync_cycles`). See [`Machine::sync_at`].
    pub sync_cycles_single: f64,
    /// Cycles per packet that a group pushing packets to another group spends more, in
    /// batches of [`SYNC_BATCH`] (0: not charged). See [`Machine::push_at`].
    pub push_cycles: f64,
    /// The same in batches of one packet.
    pub push_cycles_single: f64,
    /// Packets per batch that the source sends.
    pub burst: f64,
    /// The groups, `m` of them.
    pub groups: Vec<Group>,
    /// Cache levels, any order.
    pub levels: Vec<Level>,
}

/// The batch size in which `O_s` is measured: Sluice's batch, an Unqueue's default BURST.
pub const SYNC_BATCH: f64 = 32.0;

/// `V + F/batch` through `full` at [`SYNC_BATCH`] and `one` at 1, `batch` held within them;
/// `full` alone when `one` is not above it (not measured).
fn by_batch(full: f64, one: f64, batch: f64) -> f64 {
    if one <= full {
        return full;
    }
    let per_batch = (one - full) * SYNC_BATCH / (SYNC_BATCH - 1.0);
    full - per_batch / SYNC_BATCH + per_batch / batch.clamp(1.0, SYNC_BATCH)
}

impl Machine {
    /// `O_s` per packet when packets cross in batches of `batch`: a cost per packet `V` and
    /// one per batch `F`, `V + F/batch`, through the two measured points (batches of one and
    /// of [`SYNC_BATCH`]); `batch` is held within them.
    pub fn sync_at(&self, batch: f64) -> f64 {
        by_batch(self.sync_cycles, self.sync_cycles_single, batch)
    }

    /// The pushing group's extra cycles per packet sent to another group in batches of
    /// `batch`, as [`Machine::sync_at`] from `push_cycles` and `push_cycles_single`.
    pub fn push_at(&self, batch: f64) -> f64 {
        by_batch(self.push_cycles, self.push_cycles_single, batch)
    }

    /// The paper's machine: `m` groups of `cores` cores, each group sharing one `cache`-byte
    /// cache whose misses cost `miss_cycles`.
    pub fn uniform(
        m: usize,
        cores: usize,
        cache: f64,
        miss_cycles: f64,
        sync_cycles: f64,
        hz: f64,
    ) -> Machine {
        Machine {
            hz,
            sync_cycles,
            sync_cycles_single: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            burst: SYNC_BATCH,
            groups: vec![
                Group {
                    cores,
                    threads: cores
                };
                m
            ],
            levels: vec![Level {
                name: "LLC".into(),
                bytes: cache,
                penalty: miss_cycles,
                instance: (0..m).map(|j| vec![j; cores]).collect(),
            }],
        }
    }
}

/// A placement: `runs[i][j]` is the paper's `A_ij`, true when group `j` runs element `i`.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// `A`, one row per element, one column per group.
    pub runs: Vec<Vec<bool>>,
}

/// What one group spends per packet it processes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GroupCost {
    /// `Σ C(i)·A_ij`.
    pub compute: f64,
    /// `O_s` times the entries from another group.
    pub sync: f64,
    /// Cache misses: `Σ N(i)·A_ij · Σ_ℓ π_ℓ·O_ℓ`.
    pub contention: f64,
    /// The contention cycles by level (same order as [`Machine::levels`]).
    pub by_level: Vec<f64>,
    /// `π_ℓ,j` by level: the probability that one of this group's accesses misses it.
    pub miss: Vec<f64>,
    /// `C_j`, the sum of the three.
    pub total: f64,
    /// `cores_j·B/C_j`, packets per second (0 for an idle group).
    pub rate: f64,
    /// Fraction of the router's packets this group processes at rate `R`.
    pub share: f64,
    /// Fraction of its cycles this group is busy at rate `R`.
    pub busy: f64,
}

/// Machine-wide cycles per forwarded packet (every core of every group counted, busy or
/// not): `compute + sync + contention + idle = B·Σ cores / R`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PerPacket {
    /// Compute cycles (`Σ C(i)`: the same for every placement).
    pub compute: f64,
    /// Synchronisation cycles.
    pub sync: f64,
    /// Cache-miss cycles.
    pub contention: f64,
    /// Cycles cores wait because another stage is the bottleneck (imbalance, unused cores).
    pub idle: f64,
}

/// The model's answer for one placement.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// `R`, packets per second.
    pub rate: f64,
    /// Per group, in group order.
    pub groups: Vec<GroupCost>,
    /// The element whose groups limit `R` (the first of them).
    pub bottleneck: usize,
    /// The machine's cycles per packet, split by cause.
    pub per_packet: PerPacket,
}

/// `π = max(0, 1 − cache/footprint)`: the probability that an access misses a cache of
/// `cache` bytes through which `footprint` bytes are used uniformly at random.
pub fn miss_probability(cache: f64, footprint: f64) -> f64 {
    if footprint <= 0.0 || footprint <= cache {
        0.0
    } else {
        1.0 - cache.max(0.0) / footprint
    }
}

/// Packets per batch that cross into element `i`'s stage: the batch of the stage before (the
/// source's burst after the first stage; a full Unqueue batch after a later one, whose queue
/// is backlogged when it matters) spread over the threads that run element `i`, as the
/// rewrite's switch spreads it.
fn crossing_batch(machine: &Machine, a: &Placement, i: usize) -> f64 {
    let after_first_stage = a.runs[..i].iter().all(|r| *r == a.runs[0]);
    let before = if after_first_stage {
        machine.burst
    } else {
        SYNC_BATCH
    };
    let threads: usize = machine
        .groups
        .iter()
        .zip(&a.runs[i])
        .filter(|(_, &r)| r)
        .map(|(g, _)| g.threads)
        .sum();
    before / threads.max(1) as f64
}

/// Evaluates Eq. 1 for `chain` placed by `a` on `machine`. Errors if the shapes disagree or
/// an element runs nowhere.
///
/// A crossing costs the receiving group `O_s` at the batch that arrives, unless that group is
/// the bottleneck and its producers are not: its queue is then backlogged and it pulls full
/// batches, so it is charged at [`SYNC_BATCH`] (one more evaluation decides).
pub fn predict(machine: &Machine, chain: &[Element], a: &Placement) -> Result<Prediction, String> {
    let first = evaluate(machine, chain, a, &[])?;
    let full = backlogged(a, &first);
    if full.is_empty() {
        Ok(first)
    } else {
        evaluate(machine, chain, a, &full)
    }
}

/// The groups that are fully busy while every group feeding one of their stages is not.
fn backlogged(a: &Placement, p: &Prediction) -> Vec<usize> {
    const FULL: f64 = 1.0 - 1e-9;
    let n = a.runs.len();
    (0..p.groups.len())
        .filter(|&j| {
            let entries: Vec<usize> = (1..n)
                .filter(|&i| a.runs[i][j] && !a.runs[i - 1][j])
                .collect();
            p.groups[j].busy >= FULL
                && !entries.is_empty()
                && entries.iter().all(|&i| {
                    (0..p.groups.len()).all(|k| !a.runs[i - 1][k] || p.groups[k].busy < FULL)
                })
        })
        .collect()
}

/// Eq. 1 with the groups in `full` receiving full batches.
fn evaluate(
    machine: &Machine,
    chain: &[Element],
    a: &Placement,
    full: &[usize],
) -> Result<Prediction, String> {
    let m = machine.groups.len();
    let n = chain.len();
    if a.runs.len() != n || a.runs.iter().any(|r| r.len() != m) {
        return Err(format!("placement is not {} elements x {} groups", n, m));
    }
    if let Some(i) = (0..n).find(|&i| !a.runs[i].iter().any(|&x| x)) {
        return Err(format!(
            "element {} ({}) runs on no group",
            i, chain[i].name
        ));
    }
    for l in &machine.levels {
        if l.instance.len() != m
            || l.instance
                .iter()
                .zip(&machine.groups)
                .any(|(v, g)| v.len() != g.threads)
        {
            return Err(format!("level {}: not one instance per thread", l.name));
        }
    }
    // Footprint of every cache instance, level by level.
    let footprints: Vec<Vec<f64>> = machine
        .levels
        .iter()
        .map(|l| {
            let count = l.instance.iter().flatten().max().map_or(0, |x| x + 1);
            let mut fp = vec![0.0; count];
            for (i, e) in chain.iter().enumerate() {
                let mut users = vec![0usize; count];
                for (j, inst) in l.instance.iter().enumerate() {
                    if a.runs[i][j] {
                        for &d in inst {
                            users[d] += 1;
                        }
                    }
                }
                for (d, &u) in users.iter().enumerate() {
                    if u > 0 {
                        let copies = if e.per_thread { u as f64 } else { 1.0 };
                        fp[d] += e.bytes * copies;
                    }
                }
            }
            fp
        })
        .collect();
    let mut groups = Vec::with_capacity(m);
    for (j, g) in machine.groups.iter().enumerate() {
        let mut c = GroupCost::default();
        let runs: Vec<usize> = (0..n).filter(|&i| a.runs[i][j]).collect();
        c.compute = runs.iter().map(|&i| chain[i].cycles).sum();
        let received: f64 = runs
            .iter()
            .filter(|&&i| i > 0 && !a.runs[i - 1][j])
            .map(|&i| {
                if full.contains(&j) {
                    machine.sync_cycles
                } else {
                    machine.sync_at(crossing_batch(machine, a, i))
                }
            })
            .sum();
        let pushed: f64 = runs
            .iter()
            .filter(|&&i| i + 1 < n && !a.runs[i + 1][j])
            .map(|&i| machine.push_at(crossing_batch(machine, a, i + 1)))
            .sum();
        c.sync = received + pushed;
        let accesses: f64 = runs.iter().map(|&i| chain[i].accesses).sum();
        for (l, fp) in machine.levels.iter().zip(&footprints) {
            let inst = &l.instance[j];
            let pi = if inst.is_empty() {
                0.0
            } else {
                inst.iter()
                    .map(|&d| miss_probability(l.bytes, fp[d]))
                    .sum::<f64>()
                    / inst.len() as f64
            };
            let cyc = if runs.is_empty() {
                0.0
            } else {
                accesses * pi * l.penalty
            };
            c.miss.push(if runs.is_empty() { 0.0 } else { pi });
            c.by_level.push(cyc);
            c.contention += cyc;
        }
        c.total = c.compute + c.sync + c.contention;
        c.rate = if runs.is_empty() {
            0.0
        } else if c.total <= 0.0 {
            f64::INFINITY
        } else {
            g.cores as f64 * machine.hz / c.total
        };
        groups.push(c);
    }
    // R = min over elements of the summed rates of the groups that run it.
    let element_rate: Vec<f64> = (0..n)
        .map(|i| {
            (0..m)
                .filter(|&j| a.runs[i][j])
                .map(|j| groups[j].rate)
                .sum()
        })
        .collect();
    let (mut rate, mut bottleneck) = (f64::INFINITY, 0);
    for (i, &r) in element_rate.iter().enumerate() {
        if r < rate {
            rate = r;
            bottleneck = i;
        }
    }
    // How busy each group is at R: its most loaded element decides.
    for (j, g) in groups.iter_mut().enumerate() {
        let busy = (0..n)
            .filter(|&i| a.runs[i][j])
            .map(|i| rate / element_rate[i])
            .fold(0.0, f64::max);
        g.busy = if busy.is_finite() { busy } else { 0.0 };
        g.share = if rate.is_finite() && rate > 0.0 {
            g.busy * g.rate / rate
        } else {
            0.0
        };
        if !g.share.is_finite() {
            g.share = 0.0;
        }
    }
    let mut pp = PerPacket::default();
    for g in &groups {
        pp.compute += g.share * g.compute;
        pp.sync += g.share * g.sync;
        pp.contention += g.share * g.contention;
    }
    let cores: usize = machine.groups.iter().map(|g| g.cores).sum();
    if rate.is_finite() && rate > 0.0 {
        let capacity = cores as f64 * machine.hz / rate;
        pp.idle = (capacity - pp.compute - pp.sync - pp.contention).max(0.0);
    }
    Ok(Prediction {
        rate,
        groups,
        bottleneck,
        per_packet: pp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1024.0 * 1024.0;
    const B: f64 = 2.8e9;

    fn el(name: &str, c: f64, s: f64, n: f64) -> Element {
        Element {
            name: name.into(),
            cycles: c,
            bytes: s,
            accesses: n,
            per_thread: false,
        }
    }

    fn cloning(n: usize, m: usize) -> Placement {
        Placement {
            runs: vec![vec![true; m]; n],
        }
    }

    /// Two elements, two groups: element 0 on group 0, element 1 on group 1.
    fn pipelining() -> Placement {
        Placement {
            runs: vec![vec![true, false], vec![false, true]],
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    #[test]
    fn miss_probability_thresholds() {
        assert_eq!(miss_probability(8.0 * MB, 0.0), 0.0);
        assert_eq!(miss_probability(8.0 * MB, 4.0 * MB), 0.0);
        assert_eq!(miss_probability(8.0 * MB, 8.0 * MB), 0.0);
        assert!(close(miss_probability(8.0 * MB, 12.0 * MB), 1.0 / 3.0));
        assert!(close(miss_probability(8.0 * MB, 32.0 * MB), 0.75));
        assert!(close(miss_probability(0.0, 1.0), 1.0));
    }

    #[test]
    fn equal_stages_without_misses_cloning_wins_by_the_sync_cost() {
        // Two groups of one core, two 1000-cycle elements that fit every cache.
        let mm = Machine::uniform(2, 1, 8.0 * MB, 300.0, 500.0, B);
        let chain = [el("a", 1000.0, MB, 100.0), el("b", 1000.0, MB, 100.0)];
        let c = predict(&mm, &chain, &cloning(2, 2)).unwrap();
        // Each group: C_j = 2000, rate B/2000; R = 2·B/2000.
        assert!(close(c.groups[0].total, 2000.0));
        assert!(close(c.rate, 2.0 * B / 2000.0));
        assert_eq!(c.groups[0].sync, 0.0);
        assert_eq!(c.groups[0].contention, 0.0);
        let p = predict(&mm, &chain, &pipelining()).unwrap();
        // Group 0: 1000; group 1: 1000 + O_s = 1500; R = min(B/1000, B/1500).
        assert!(close(p.groups[0].total, 1000.0));
        assert!(close(p.groups[1].total, 1500.0));
        assert!(close(p.groups[1].sync, 500.0));
        assert!(close(p.rate, B / 1500.0));
        assert_eq!(p.bottleneck, 1);
        // Per packet: 2000 compute + 500 sync + idle = 2 cores · 1500.
        assert!(close(p.per_packet.compute, 2000.0));
        assert!(close(p.per_packet.sync, 500.0));
        assert!(close(p.per_packet.idle, 500.0));
        assert!(close(c.per_packet.idle, 0.0));
        assert!(c.rate > p.rate);
    }

    #[test]
    fn contention_makes_pipelining_win_when_one_structure_fits_and_two_do_not() {
        // Paper §3.1: 8 MB LLC per processor, two 6 MB structures, 200 accesses each.
        let mm = Machine::uniform(2, 4, 8.0 * MB, 300.0, 500.0, B);
        let chain = [
            el("a", 100.0, 6.0 * MB, 200.0),
            el("b", 100.0, 6.0 * MB, 200.0),
        ];
        let c = predict(&mm, &chain, &cloning(2, 2)).unwrap();
        // Cloning: S_j = 12 MB, π = 1/3, C_j = 200 + 400/3·300 = 40200; R = 2·4·B/40200.
        assert!(close(c.groups[0].miss[0], 1.0 / 3.0));
        assert!(close(c.groups[0].total, 40200.0));
        assert!(close(c.rate, 8.0 * B / 40200.0));
        let p = predict(&mm, &chain, &pipelining()).unwrap();
        // Pipelining: each group 6 MB, no misses; C_0 = 100, C_1 = 600; R = 4·B/600.
        assert!(close(p.groups[1].total, 600.0));
        assert!(close(p.rate, 4.0 * B / 600.0));
        assert!(p.rate > c.rate);
        assert!(c.per_packet.contention > p.per_packet.contention);
    }

    #[test]
    fn imbalance_case_of_the_paper_favours_cloning() {
        // N1 = 396, N2 = 4, 16 MB each through 8 MB caches (both structures miss).
        let mm = Machine::uniform(2, 4, 8.0 * MB, 300.0, 500.0, B);
        let chain = [
            el("a", 100.0, 16.0 * MB, 396.0),
            el("b", 100.0, 16.0 * MB, 4.0),
        ];
        let c = predict(&mm, &chain, &cloning(2, 2)).unwrap();
        // Cloning: π = 1 − 8/32 = 0.75, C_j = 200 + 400·0.75·300 = 90200.
        assert!(close(c.groups[0].total, 90200.0));
        assert!(close(c.rate, 8.0 * B / 90200.0));
        let p = predict(&mm, &chain, &pipelining()).unwrap();
        // Pipelining: π = 0.5; C_0 = 100 + 396·0.5·300 = 59500, C_1 = 100 + 500 + 600 = 1200.
        assert!(close(p.groups[0].total, 59500.0));
        assert!(close(p.groups[1].total, 1200.0));
        assert!(close(p.rate, 4.0 * B / 59500.0));
        assert_eq!(p.bottleneck, 0);
        assert!(c.rate > p.rate);
        // Group 1 idles most of the time: the loss is imbalance.
        assert!(close(p.groups[1].busy, 1200.0 / 59500.0));
        assert!(p.per_packet.idle > p.per_packet.sync);
        // The same structures with balanced accesses: pipelining wins.
        let chain = [
            el("a", 100.0, 16.0 * MB, 200.0),
            el("b", 100.0, 16.0 * MB, 200.0),
        ];
        let c = predict(&mm, &chain, &cloning(2, 2)).unwrap();
        let p = predict(&mm, &chain, &pipelining()).unwrap();
        assert!(close(
            p.rate,
            4.0 * B / (100.0 + 500.0 + 200.0 * 0.5 * 300.0)
        ));
        assert!(p.rate > c.rate);
    }

    #[test]
    fn per_thread_copies_count_once_per_thread_in_a_shared_cache() {
        // One group of two cores sharing a 4 MB cache; a 3 MB structure.
        let mm = Machine::uniform(1, 2, 4.0 * MB, 100.0, 0.0, B);
        let mut e = el("a", 1000.0, 3.0 * MB, 10.0);
        let shared = predict(&mm, std::slice::from_ref(&e), &cloning(1, 1)).unwrap();
        assert_eq!(shared.groups[0].contention, 0.0);
        e.per_thread = true;
        // Two copies: 6 MB through 4 MB, π = 1/3.
        let own = predict(&mm, &[e], &cloning(1, 1)).unwrap();
        assert!(close(own.groups[0].miss[0], 1.0 / 3.0));
        assert!(close(own.groups[0].contention, 10.0 / 3.0 * 100.0));
        assert!(close(own.rate, 2.0 * B / (1000.0 + 1000.0 / 3.0)));
    }

    #[test]
    fn private_and_shared_levels_add_up() {
        // Two single-core groups with private 1 MB caches (penalty 4) below one shared
        // 8 MB cache (penalty 30); two per-thread 4 MB structures, 200 accesses each.
        let mm = Machine {
            sync_cycles_single: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            burst: SYNC_BATCH,
            hz: B,
            sync_cycles: 400.0,
            groups: vec![
                Group {
                    cores: 1,
                    threads: 1
                };
                2
            ],
            levels: vec![
                Level {
                    name: "L2".into(),
                    bytes: MB,
                    penalty: 4.0,
                    instance: vec![vec![0], vec![1]],
                },
                Level {
                    name: "L3".into(),
                    bytes: 8.0 * MB,
                    penalty: 30.0,
                    instance: vec![vec![0], vec![0]],
                },
            ],
        };
        let mut a = el("a", 1000.0, 4.0 * MB, 200.0);
        a.per_thread = true;
        let mut b = a.clone();
        b.name = "b".into();
        let chain = [a, b];
        let c = predict(&mm, &chain, &cloning(2, 2)).unwrap();
        // Cloning: each core 8 MB through 1 MB (π 7/8); L3 holds 4 copies, 16 MB (π 1/2).
        let g = &c.groups[0];
        assert!(close(g.miss[0], 7.0 / 8.0));
        assert!(close(g.miss[1], 0.5));
        assert!(close(g.by_level[0], 400.0 * 7.0 / 8.0 * 4.0));
        assert!(close(g.by_level[1], 400.0 * 0.5 * 30.0));
        assert!(close(g.total, 2000.0 + 1400.0 + 6000.0));
        let p = predict(&mm, &chain, &pipelining()).unwrap();
        // Pipelining: 4 MB per core (π 3/4), 8 MB in L3 (no misses).
        let g = &p.groups[1];
        assert!(close(g.miss[0], 0.75));
        assert_eq!(g.miss[1], 0.0);
        assert!(close(g.total, 1000.0 + 400.0 + 200.0 * 0.75 * 4.0));
        assert!(p.rate > c.rate);
    }

    #[test]
    fn mixed_placement_splits_traffic_by_rate() {
        // Three single-core groups: element 0 cloned on groups 0 and 1, element 1 on group 2.
        let mm = Machine::uniform(3, 1, 8.0 * MB, 0.0, 100.0, B);
        let chain = [el("heavy", 2000.0, 0.0, 0.0), el("light", 900.0, 0.0, 0.0)];
        let a = Placement {
            runs: vec![vec![true, true, false], vec![false, false, true]],
        };
        let p = predict(&mm, &chain, &a).unwrap();
        // Element 0: 2·B/2000 = B/1000; element 1: B/1000. R = B/1000, everyone busy.
        assert!(close(p.rate, B / 1000.0));
        assert!(close(p.groups[0].share, 0.5));
        assert!(close(p.groups[2].share, 1.0));
        assert!(close(p.groups[2].busy, 1.0));
        assert!(close(p.per_packet.idle, 0.0));
        // Cloning all three: 3·B/2900, slower than the mix.
        let c = predict(&mm, &chain, &cloning(2, 3)).unwrap();
        assert!(close(c.rate, 3.0 * B / 2900.0));
        assert!(c.rate > p.rate);
    }

    #[test]
    fn crossings_cost_more_in_smaller_batches() {
        // O_s = 200 in batches of 32 and 1130 in batches of one: per batch F = 930·32/31 =
        // 960, per packet V = 200 − 960/32 = 170.
        let mut mm = Machine::uniform(2, 1, 8.0 * MB, 0.0, 200.0, B);
        assert!(
            close(mm.sync_at(4.0), 200.0),
            "no single-packet figure: flat"
        );
        mm.sync_cycles_single = 1130.0;
        assert!(close(mm.sync_at(32.0), 200.0));
        assert!(close(mm.sync_at(1.0), 1130.0));
        assert!(close(mm.sync_at(4.0), 170.0 + 240.0));
        assert!(close(mm.sync_at(0.25), 1130.0) && close(mm.sync_at(64.0), 200.0));
        let chain = [el("a", 3000.0, 0.0, 0.0), el("b", 1000.0, 0.0, 0.0)];
        let piped = Placement {
            runs: vec![vec![true, false], vec![false, true]],
        };
        // A source sending batches of 32: the second group pays O_s at 32.
        assert!(close(
            predict(&mm, &chain, &piped).unwrap().groups[1].sync,
            200.0
        ));
        // Batches of one pay the single-packet figure while the receiving group keeps up.
        mm.burst = 1.0;
        assert!(close(
            predict(&mm, &chain, &piped).unwrap().groups[1].sync,
            1130.0
        ));
        // When it is the bottleneck (1000 + 1130 against 500), its queue is backlogged and it
        // pulls full batches: O_s at 32.
        let light = [el("a", 500.0, 0.0, 0.0), el("b", 1000.0, 0.0, 0.0)];
        let p = predict(&mm, &light, &piped).unwrap();
        assert!(close(p.groups[1].sync, 200.0) && close(p.groups[1].busy, 1.0));
        // A stage of two groups behind a stage of one: each push carries half a batch
        // (16 packets): 170 + 960/16 = 230 in each of them.
        let mut three = Machine::uniform(3, 1, 8.0 * MB, 0.0, 200.0, B);
        three.sync_cycles_single = 1130.0;
        let mix = Placement {
            runs: vec![vec![true, false, false], vec![false, true, true]],
        };
        let p = predict(&three, &chain, &mix).unwrap();
        assert!(close(p.groups[1].sync, 230.0) && close(p.groups[2].sync, 230.0));
        // After a later stage the batch is a full Unqueue batch again, whatever the source
        // sends: three stages, one group each, batches of one from the source.
        three.burst = 1.0;
        let chain3 = [chain[0].clone(), chain[1].clone(), el("c", 10.0, 0.0, 0.0)];
        let line = Placement {
            runs: vec![
                vec![true, false, false],
                vec![false, true, false],
                vec![false, false, true],
            ],
        };
        let p = predict(&three, &chain3, &line).unwrap();
        assert!(close(p.groups[1].sync, 1130.0) && close(p.groups[2].sync, 200.0));
        // The pushing side pays too, by the batch it pushes: 500 per packet pushed one by
        // one out of the first stage, 50 per packet in full batches out of the second.
        three.push_cycles = 50.0;
        three.push_cycles_single = 500.0;
        let p = predict(&three, &chain3, &line).unwrap();
        assert!(close(p.groups[0].sync, 500.0));
        assert!(close(p.groups[1].sync, 1130.0 + 50.0));
        assert!(close(p.groups[2].sync, 200.0));
    }

    #[test]
    fn idle_groups_and_bad_shapes() {
        let mm = Machine::uniform(2, 1, MB, 0.0, 0.0, B);
        let chain = [el("a", 1000.0, 0.0, 0.0)];
        let one = Placement {
            runs: vec![vec![true, false]],
        };
        let p = predict(&mm, &chain, &one).unwrap();
        assert!(close(p.rate, B / 1000.0));
        assert_eq!(p.groups[1].rate, 0.0);
        assert!(close(p.per_packet.idle, 1000.0));
        let none = Placement {
            runs: vec![vec![false, false]],
        };
        assert!(predict(&mm, &chain, &none).is_err());
        assert!(predict(&mm, &chain, &cloning(2, 2)).is_err());
    }
}
