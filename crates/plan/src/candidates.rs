//! Placements of a chain on the machine's groups: pure cloning, pure pipelining and mixes,
//! each scored with the model and ranked by predicted rate.
//!
//! A placement cuts the chain into `k` contiguous stages and gives each stage a contiguous
//! block of groups (groups in order; groups after the last block stay idle). Using every
//! group, one stage is cloning (the whole chain on every group), `k` stages of one group
//! each is pipelining, anything else (a stage cloned over several groups) is a mix;
//! placements that leave groups idle are a subset. There are `Σ_k C(n−1, k−1)·C(m, k)` of
//! them for `n` elements and `m` groups.
//!
//! A source that cannot be copied (a device, a file) cannot be cloned; its flow split is
//! (SMP Click's flow splitting): the source on the first thread hashes each packet's flow to
//! one ThreadSafeQueue per thread, and every thread runs a copy of the rest of the chain.
//! Eq. 1 assumes each packet a group takes passes all its elements, which the source's
//! group does not here, so [`predict_split`] extends it: per source packet, group `j` spends
//! `[j = 0]·(C(src) + C(split)) + (threads_j/T)·(Σ C(e) + misses_j + [j ≠ 0]·O_s)`, with
//! the misses of cloning, and the source's thread alone may not exceed one core.

use crate::model::{self, Machine, Prediction};

/// Most candidates scored; enumeration stops there.
pub const MAX_CANDIDATES: usize = 100_000;

/// A contiguous range of elements run by a set of groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stage {
    /// First element (index in the chain).
    pub first: usize,
    /// Last element, inclusive.
    pub last: usize,
    /// The groups that run it.
    pub groups: Vec<usize>,
}

/// The kind of a placement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One stage: every group runs the whole chain.
    Cloning,
    /// Every stage on one group, every group used.
    Pipelining,
    /// Several stages, some cloned over several groups, every group used.
    Mix,
    /// Some groups left idle.
    Subset,
    /// The source on one thread splits flows over copies of the rest on every thread.
    Split,
}

impl Kind {
    /// `cloning`, `pipelining` or `mix`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Cloning => "cloning",
            Kind::Pipelining => "pipelining",
            Kind::Mix => "mix",
            Kind::Subset => "subset",
            Kind::Split => "flow split",
        }
    }
}

/// A scored placement.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The stages, in chain order.
    pub stages: Vec<Stage>,
    /// Its kind.
    pub kind: Kind,
    /// The model's prediction.
    pub prediction: Prediction,
    /// Cycles per packet of the flow split (hash and queue), for [`Kind::Split`].
    pub split_cycles: f64,
}

impl Candidate {
    /// How the rewrite writes this candidate.
    pub fn rewrite_options(&self) -> crate::rewrite::Options {
        crate::rewrite::Options {
            split: self.kind == Kind::Split,
            ..Default::default()
        }
    }
}

/// The kind of a list of stages on `m` groups.
pub fn kind(stages: &[Stage], m: usize) -> Kind {
    if stages.iter().map(|s| s.groups.len()).sum::<usize>() < m {
        Kind::Subset
    } else if stages.len() == 1 {
        Kind::Cloning
    } else if stages.iter().all(|s| s.groups.len() == 1) {
        Kind::Pipelining
    } else {
        Kind::Mix
    }
}

/// The placement matrix `A` (`n` elements × `m` groups) of a list of stages.
pub fn matrix(stages: &[Stage], n: usize, m: usize) -> model::Placement {
    let mut runs = vec![vec![false; m]; n];
    for s in stages {
        for row in runs.iter_mut().take(s.last + 1).skip(s.first) {
            for &g in &s.groups {
                row[g] = true;
            }
        }
    }
    model::Placement { runs }
}

/// Every way to write `total` as `parts` positive parts, in order.
fn compositions(total: usize, parts: usize) -> Vec<Vec<usize>> {
    if parts == 0 {
        return if total == 0 {
            vec![Vec::new()]
        } else {
            Vec::new()
        };
    }
    if total < parts {
        return Vec::new();
    }
    let mut out = Vec::new();
    for first in 1..=total - (parts - 1) {
        for mut rest in compositions(total - first, parts - 1) {
            rest.insert(0, first);
            out.push(rest);
        }
    }
    out
}

/// Every placement of a chain of `n` elements on `m` groups, at most `limit` of them:
/// stage counts from 1, group blocks from the first group.
pub fn placements(n: usize, m: usize, limit: usize) -> Vec<Vec<Stage>> {
    let mut out = Vec::new();
    for k in 1..=n.min(m) {
        for lens in compositions(n, k) {
            for used in k..=m {
                for sizes in compositions(used, k) {
                    if out.len() >= limit {
                        return out;
                    }
                    let (mut e, mut g) = (0, 0);
                    let stages = lens
                        .iter()
                        .zip(&sizes)
                        .map(|(&l, &s)| {
                            let st = Stage {
                                first: e,
                                last: e + l - 1,
                                groups: (g..g + s).collect(),
                            };
                            e += l;
                            g += s;
                            st
                        })
                        .collect();
                    out.push(stages);
                }
            }
        }
    }
    out
}

/// Predicts the flow split of `chain` (source first) on `machine`, the split costing
/// `split` cycles per packet on the source's thread.
pub fn predict_split(
    machine: &Machine,
    chain: &[model::Element],
    split: f64,
) -> Result<Prediction, String> {
    let (n, m) = (chain.len(), machine.groups.len());
    let cloned = model::predict(
        machine,
        chain,
        &matrix(
            &[Stage {
                first: 0,
                last: n - 1,
                groups: (0..m).collect(),
            }],
            n,
            m,
        ),
    )?;
    let threads: usize = machine.groups.iter().map(|g| g.threads).sum();
    let head = chain[0].cycles + split;
    let rest: f64 = chain[1..].iter().map(|e| e.cycles).sum();
    let mut groups = Vec::with_capacity(m);
    let mut rate = f64::INFINITY;
    let mut bottleneck = 0;
    for (j, g) in machine.groups.iter().enumerate() {
        let share = g.threads as f64 / threads as f64;
        let mut c = model::GroupCost {
            compute: share * rest + if j == 0 { head } else { 0.0 },
            sync: if j == 0 {
                0.0
            } else {
                share * machine.sync_at(machine.burst / threads as f64)
            },
            contention: share * cloned.groups[j].contention,
            by_level: cloned.groups[j]
                .by_level
                .iter()
                .map(|x| share * x)
                .collect(),
            miss: cloned.groups[j].miss.clone(),
            ..Default::default()
        };
        c.total = c.compute + c.sync + c.contention;
        c.rate = if c.total > 0.0 {
            g.cores as f64 * machine.hz / c.total
        } else {
            f64::INFINITY
        };
        if c.rate < rate {
            rate = c.rate;
            bottleneck = usize::from(j > 0);
        }
        groups.push(c);
    }
    // The source's thread: the split and its own share, on one core.
    let g0 = &machine.groups[0];
    let per_core = machine.hz * (g0.cores as f64 / g0.threads as f64).min(1.0);
    let t0 = head + (rest + cloned.groups[0].contention) / threads as f64;
    if per_core / t0 < rate {
        rate = per_core / t0;
        bottleneck = 0;
    }
    let mut pp = model::PerPacket::default();
    for (j, c) in groups.iter_mut().enumerate() {
        c.busy = if rate.is_finite() { rate / c.rate } else { 0.0 };
        c.share = machine.groups[j].threads as f64 / threads as f64;
        pp.compute += c.compute;
        pp.sync += c.sync;
        pp.contention += c.contention;
    }
    let cores: usize = machine.groups.iter().map(|g| g.cores).sum();
    if rate.is_finite() && rate > 0.0 {
        pp.idle =
            (cores as f64 * machine.hz / rate - pp.compute - pp.sync - pp.contention).max(0.0);
    }
    Ok(Prediction {
        rate,
        groups,
        bottleneck,
        per_packet: pp,
    })
}

/// The stages of the flow split of a chain of `n` elements on `m` groups.
pub fn split_stages(n: usize, m: usize) -> Vec<Stage> {
    vec![
        Stage {
            first: 0,
            last: 0,
            groups: vec![0],
        },
        Stage {
            first: 1,
            last: n - 1,
            groups: (0..m).collect(),
        },
    ]
}

/// The prediction for candidate `c`'s placement on `machine`.
fn predict_candidate(
    machine: &Machine,
    chain: &[model::Element],
    c: &Candidate,
) -> Result<Prediction, String> {
    let (n, m) = (chain.len(), machine.groups.len());
    match c.kind {
        Kind::Split => predict_split(machine, chain, c.split_cycles),
        _ => model::predict(machine, chain, &matrix(&c.stages, n, m)),
    }
}

/// Scores every placement of `chain` on `machine` and sorts them, best first (ties: fewer
/// stages, then more groups). With `split` (the cycles per packet of a flow split, for a
/// source that cannot be copied), the flow split is a candidate too.
pub fn rank(
    machine: &Machine,
    chain: &[model::Element],
    split: Option<f64>,
) -> Result<Vec<Candidate>, String> {
    let (n, m) = (chain.len(), machine.groups.len());
    let mut out = Vec::new();
    for stages in placements(n, m, MAX_CANDIDATES) {
        let prediction = model::predict(machine, chain, &matrix(&stages, n, m))?;
        out.push(Candidate {
            kind: kind(&stages, m),
            stages,
            prediction,
            split_cycles: 0.0,
        });
    }
    let threads: usize = machine.groups.iter().map(|g| g.threads).sum();
    if let Some(split) = split.filter(|_| threads > 1 && n > 1) {
        out.push(Candidate {
            kind: Kind::Split,
            stages: split_stages(n, m),
            prediction: predict_split(machine, chain, split)?,
            split_cycles: split,
        });
    }
    let used = |c: &Candidate| c.stages.iter().map(|s| s.groups.len()).sum::<usize>();
    out.sort_by(|a, b| {
        let (ra, rb) = (a.prediction.rate, b.prediction.rate);
        let tie = (ra - rb).abs() <= 1e-9 * ra.abs().max(rb.abs());
        if tie {
            a.stages
                .len()
                .cmp(&b.stages.len())
                .then(used(b).cmp(&used(a)))
        } else {
            rb.total_cmp(&ra)
        }
    });
    Ok(out)
}

/// `[a..b] g0+g1 | [c] g2`, elements named by `names`.
pub fn describe(stages: &[Stage], names: &[String]) -> String {
    stages
        .iter()
        .map(|s| {
            let range = if s.first == s.last {
                names[s.first].clone()
            } else {
                format!("{}..{}", names[s.first], names[s.last])
            };
            let groups: Vec<String> = s.groups.iter().map(|g| format!("g{}", g)).collect();
            format!("[{}] {}", range, groups.join("+"))
        })
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The overheads that separate placements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overhead {
    /// Packets crossing between groups.
    Synchronisation,
    /// Cache misses.
    Contention,
    /// Cores waiting for the slowest stage, or not used.
    Imbalance,
}

impl Overhead {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Overhead::Synchronisation => "synchronisation",
            Overhead::Contention => "contention",
            Overhead::Imbalance => "imbalance",
        }
    }
}

/// How much more `loser` spends than `winner` per packet (machine cycles), by overhead, and
/// the overhead with the largest excess. Idle cycles that vanish when crossings cost nothing
/// count as synchronisation (a crossing charged to one stage unbalances an even cut);
/// the idle cycles left are imbalance.
pub fn excess(
    machine: &Machine,
    chain: &[model::Element],
    loser: &Candidate,
    winner: &Candidate,
) -> Result<(Overhead, [(Overhead, f64); 3]), String> {
    let free = Machine {
        sync_cycles: 0.0,
        sync_cycles_single: 0.0,
        push_cycles: 0.0,
        push_cycles_single: 0.0,
        ..machine.clone()
    };
    let idle_without_sync = |c: &Candidate| -> Result<f64, String> {
        Ok(predict_candidate(&free, chain, c)?.per_packet.idle)
    };
    let (l, w) = (&loser.prediction.per_packet, &winner.prediction.per_packet);
    let (li, wi) = (idle_without_sync(loser)?, idle_without_sync(winner)?);
    let d = [
        (
            Overhead::Synchronisation,
            (l.sync + l.idle - li) - (w.sync + w.idle - wi),
        ),
        (Overhead::Contention, l.contention - w.contention),
        (Overhead::Imbalance, li - wi),
    ];
    let top = d
        .iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map_or(Overhead::Imbalance, |x| x.0);
    Ok((top, d))
}

/// The best candidate of each kind, in the order cloning, flow split, pipelining, mix,
/// subset (each if any).
pub fn best_of_each_kind(cands: &[Candidate]) -> Vec<&Candidate> {
    [
        Kind::Cloning,
        Kind::Split,
        Kind::Pipelining,
        Kind::Mix,
        Kind::Subset,
    ]
    .iter()
    .filter_map(|&k| cands.iter().find(|c| c.kind == k))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MB: f64 = 1024.0 * 1024.0;

    fn el(name: &str, c: f64, s: f64, n: f64) -> model::Element {
        model::Element {
            name: name.into(),
            cycles: c,
            bytes: s,
            accesses: n,
            per_thread: true,
        }
    }

    #[test]
    fn hand_computed_flow_split() {
        // Two single-core groups, B = 1e9, O_s = 200; source 50, one element 400, sink 50,
        // split 30. Per source packet: g0 = 50 + 30 + (400 + 50)/2 = 305; g1 = 225 + 100 =
        // 325, the bottleneck: 1e9/325 packets/s.
        let m = Machine::uniform(2, 1, 1e9, 0.0, 200.0, 1e9);
        let c = vec![
            el("src", 50.0, 0.0, 0.0),
            el("e", 400.0, 0.0, 0.0),
            el("d", 50.0, 0.0, 0.0),
        ];
        let p = predict_split(&m, &c, 30.0).unwrap();
        assert!((p.groups[0].total - 305.0).abs() < 1e-9, "{:?}", p.groups);
        assert!((p.groups[1].total - 325.0).abs() < 1e-9);
        assert!((p.rate - 1e9 / 325.0).abs() < 1e-3);
        assert_eq!(p.bottleneck, 1);
        // An expensive split makes the source's thread the bottleneck.
        let p = predict_split(&m, &c, 300.0).unwrap();
        assert!((p.rate - 1e9 / 575.0).abs() < 1e-3);
        assert_eq!(p.bottleneck, 0);
        let r = rank(&m, &c, Some(30.0)).unwrap();
        let split = r.iter().find(|x| x.kind == Kind::Split).unwrap();
        assert_eq!(split.stages, split_stages(3, 2));
        assert!(rank(&m, &c, None)
            .unwrap()
            .iter()
            .all(|x| x.kind != Kind::Split));
        let pipe = r.iter().find(|x| x.kind == Kind::Pipelining).unwrap();
        assert!(excess(&m, &c, pipe, split).is_ok());
    }

    #[test]
    fn counts_and_kinds_of_placements() {
        // 4 elements on 2 groups: cloning on 1 (subset) or 2 groups, 3 two-stage pipelines.
        let p = placements(4, 2, 1000);
        assert_eq!(p.len(), 5);
        assert_eq!(p.iter().filter(|s| kind(s, 2) == Kind::Cloning).count(), 1);
        assert_eq!(p.iter().filter(|s| kind(s, 2) == Kind::Subset).count(), 1);
        assert_eq!(
            p.iter().filter(|s| kind(s, 2) == Kind::Pipelining).count(),
            3
        );
        // Σ_k C(n−1, k−1)·C(m, k) for n = 5, m = 3: 3 + 4·3 + 6·1 = 21.
        let p = placements(5, 3, 1000);
        assert_eq!(p.len(), 21);
        assert!(p.iter().any(|s| kind(s, 3) == Kind::Mix));
        for s in &p {
            assert_eq!(s[0].first, 0);
            assert_eq!(s.last().unwrap().last, 4);
            for w in s.windows(2) {
                assert_eq!(w[0].last + 1, w[1].first);
            }
        }
        assert_eq!(placements(5, 3, 7).len(), 7);
        assert_eq!(placements(1, 1, 10).len(), 1);
        assert_eq!(compositions(4, 2), vec![vec![1, 3], vec![2, 2], vec![3, 1]]);
    }

    #[test]
    fn matrix_and_description() {
        let s = vec![
            Stage {
                first: 0,
                last: 1,
                groups: vec![0, 1],
            },
            Stage {
                first: 2,
                last: 2,
                groups: vec![2],
            },
        ];
        let a = matrix(&s, 3, 3);
        assert_eq!(
            a.runs,
            vec![
                vec![true, true, false],
                vec![true, true, false],
                vec![false, false, true]
            ]
        );
        let names: Vec<String> = ["src", "x", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(describe(&s, &names), "[src..x] g0+g1 | [d] g2");
        assert_eq!(kind(&s, 3), Kind::Mix);
        assert_eq!(kind(&s, 4), Kind::Subset);
    }

    /// The measured effect on a two-core machine with private 1 MB L2 caches and a shared
    /// L3 (8 MB effective), 400 cycles per crossing: two SyntheticLoad(200, S) stages.
    fn two_core() -> Machine {
        Machine {
            hz: 2.6e9,
            sync_cycles: 400.0,
            sync_cycles_single: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            burst: model::SYNC_BATCH,
            groups: vec![
                model::Group {
                    cores: 1,
                    threads: 1
                };
                2
            ],
            levels: vec![
                model::Level {
                    name: "L2".into(),
                    bytes: MB,
                    penalty: 4.0,
                    instance: vec![vec![0], vec![1]],
                },
                model::Level {
                    name: "L3".into(),
                    bytes: 8.0 * MB,
                    penalty: 30.0,
                    instance: vec![vec![0], vec![0]],
                },
            ],
        }
    }

    fn chain(s: f64) -> Vec<model::Element> {
        vec![
            el("src", 30.0, 0.0, 0.0),
            el("a", 950.0, s, 200.0),
            el("b", 950.0, s, 200.0),
            el("d", 30.0, 0.0, 0.0),
        ]
    }

    #[test]
    fn small_arrays_clone_large_ones_pipeline() {
        let r = rank(&two_core(), &chain(128.0 * 1024.0), None).unwrap();
        assert_eq!(r[0].kind, Kind::Cloning);
        assert_eq!(r[0].stages[0].groups, vec![0, 1]);
        let pipe = r.iter().find(|c| c.kind == Kind::Pipelining).unwrap();
        let (top, d) = excess(&two_core(), &chain(128.0 * 1024.0), pipe, &r[0]).unwrap();
        assert_eq!(top, Overhead::Synchronisation);
        // The crossing (400) and the idle half of the other core it causes (400).
        assert!((d[0].1 - 800.0).abs() < 1e-6, "{:?}", d);
        assert!(d[2].1.abs() < 1e-6, "{:?}", d);
        let r = rank(&two_core(), &chain(4.0 * MB), None).unwrap();
        assert_eq!(r[0].kind, Kind::Pipelining);
        // The balanced cut, between the two loads.
        assert_eq!(r[0].stages[0].last, 1);
        let clone = r.iter().find(|c| c.kind == Kind::Cloning).unwrap();
        let (top, _) = excess(&two_core(), &chain(4.0 * MB), clone, &r[0]).unwrap();
        assert_eq!(top, Overhead::Contention);
        // Sorted by rate.
        for w in r.windows(2) {
            assert!(w[0].prediction.rate >= w[1].prediction.rate);
        }
        // One core alone beats both cores cloned here: four copies overflow the shared L3.
        let each = best_of_each_kind(&r);
        assert_eq!(each.len(), 3);
        assert_eq!(each[0].kind, Kind::Cloning);
        assert_eq!(each[2].kind, Kind::Subset);
        assert!(each[2].prediction.rate > each[0].prediction.rate);
    }

    #[test]
    fn imbalanced_pipeline_loses_to_imbalance() {
        // Paper §3.1: N1 = 396, N2 = 4, each structure larger than the caches.
        let mut c = chain(16.0 * MB);
        c[1].accesses = 396.0;
        c[2].accesses = 4.0;
        c[2].cycles = 50.0;
        let r = rank(&two_core(), &c, None).unwrap();
        let pipe = r.iter().find(|c| c.kind == Kind::Pipelining).unwrap();
        let clone = r.iter().find(|c| c.kind == Kind::Cloning).unwrap();
        assert!(clone.prediction.rate > pipe.prediction.rate);
        let (top, _) = excess(&two_core(), &c, pipe, clone).unwrap();
        assert_eq!(top, Overhead::Imbalance);
    }
}
