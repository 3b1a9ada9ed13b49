//! Trials: when the model cannot tell its best placements apart, run them and keep the
//! fastest.
//!
//! The contention term of Eq. 1 hangs on each cache's effective capacity, and other programs
//! on the machine change it from one second to the next (on the 2-core development VM the
//! shared L3 measured 11 to 16 MB of its nominal 32 within one day). Near a cache's knee a
//! calibration taken a minute earlier chooses wrongly in either direction. A candidate is a
//! contender when it is the model's best with every cache at [`SCALES`] times its profiled
//! capacity, or predicted within [`MARGIN`] of the best. When there are several, each is
//! written as a configuration and run on the planned threads for about [`RUN_SECONDS`],
//! [`ROUNDS`] times interleaved; an AverageCounter in front of each Discard measures the rate
//! after the first [`IGNORE`] seconds (a copy's data is touched for the first time then:
//! with many copies that costs more than the run). The fastest round of each counts, and the
//! fastest contender is chosen unless the model's own first choice measured within [`KEEP`]
//! of it.
//!
//! Only a chain from an InfiniteSource to a Discard is run: other sources cannot send their
//! packets twice, and other sinks (files, devices) would act on the trial's packets.

use sluice_core::Router;

use crate::candidates::{self, Candidate};
use crate::chain::{self, Chain};
use crate::machine::GroupInfo;
use crate::model;
use crate::{profile, rewrite, run};

/// Cache capacities, relative to the profile, under which the model's choice must not change.
pub const SCALES: [f64; 2] = [0.5, 2.0];

/// Candidates predicted within this fraction of the best are contenders too.
pub const MARGIN: f64 = 0.10;

/// The most contenders run.
pub const MAX_TRIED: usize = 4;

/// Runs per contender, interleaved.
pub const ROUNDS: usize = 2;

/// Seconds one run aims at, at the contender's predicted rate.
pub const RUN_SECONDS: f64 = 0.25;

/// Seconds at the start of a run that its rate leaves out.
pub const IGNORE: f64 = 0.05;

/// The model's first choice stays when it measured within this fraction of the fastest.
pub const KEEP: f64 = 0.03;

/// Fewest and most packets of one run.
const PACKETS: (u64, u64) = (20_000, 50_000_000);

/// One contender and what its runs measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Tried {
    /// Index into the ranked candidates.
    pub candidate: usize,
    /// Packets per second that reached the Discards, one per round.
    pub rates: Vec<f64>,
}

impl Tried {
    /// The fastest round: the least disturbed.
    pub fn best(&self) -> f64 {
        self.rates.iter().copied().fold(0.0, f64::max)
    }
}

/// The contenders run and the one chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct Trials {
    /// In ranked order.
    pub tried: Vec<Tried>,
    /// Index into the ranked candidates.
    pub chosen: usize,
    /// Threads each run used.
    pub threads: usize,
}

/// The indices of the candidates the model cannot rule out, in ranked order, at most
/// [`MAX_TRIED`]: the best, the best with every cache level's capacity scaled by each of
/// [`SCALES`], then those within [`MARGIN`] of the best. `cands` is `rank`'s list, possibly
/// filtered.
pub fn contenders(
    machine: &model::Machine,
    chain: &[model::Element],
    split: Option<f64>,
    cands: &[Candidate],
) -> Result<Vec<usize>, String> {
    let Some(best) = cands.first() else {
        return Ok(Vec::new());
    };
    let mut out = vec![0];
    for scale in SCALES {
        let mut m = machine.clone();
        for l in &mut m.levels {
            l.bytes *= scale;
        }
        let same = |a: &Candidate, b: &Candidate| a.kind == b.kind && a.stages == b.stages;
        let top = candidates::rank(&m, chain, split)?
            .iter()
            .find_map(|c| cands.iter().position(|x| same(x, c)));
        out.extend(top.filter(|k| !out.contains(k)));
    }
    let near = |k: &usize| cands[*k].prediction.rate >= (1.0 - MARGIN) * best.prediction.rate;
    for k in (1..cands.len()).filter(near) {
        if !out.contains(&k) {
            out.push(k);
        }
    }
    out.truncate(MAX_TRIED);
    out.sort_unstable();
    Ok(out)
}

/// Why `chain` cannot be run for a trial, if it cannot.
pub fn cannot_run(chain: &Chain) -> Option<String> {
    if chain.source.class != "InfiniteSource" {
        Some(format!(
            "its source {} ({}) cannot send its packets twice",
            chain.source.name, chain.source.class
        ))
    } else if chain.sink.class != "Discard" {
        Some(format!(
            "its sink {} ({}) would act on the trial's packets",
            chain.sink.name, chain.sink.class
        ))
    } else {
        None
    }
}

/// Packets per second that reached the router's Discards, after [`IGNORE`]: the sum of the
/// rates of the meters the rewrite put in front of them (`NAME_rate`), not of any
/// AverageCounter the chain has itself.
fn delivered_rate(r: &mut Router) -> f64 {
    let names: Vec<String> = r
        .flat_config()
        .elements
        .iter()
        .filter(|e| e.class == "Discard")
        .map(|e| format!("{}_rate", e.name))
        .collect();
    names
        .iter()
        .map(|n| run::number(r, &format!("{}.rate", n)))
        .sum()
}

/// `chain` placed as candidate `c`, its source sending `packets` in all.
fn trial_config(
    chain: &Chain,
    c: &Candidate,
    groups: &[GroupInfo],
    packets: u64,
) -> Result<String, String> {
    let mut t = chain.clone();
    let src = profile::calibration_source(chain, &mut Vec::new());
    t.source.config = chain::set_arg(&src, Some(1), "LIMIT", &packets.to_string());
    let opts = rewrite::Options {
        meter: Some(format!("AverageCounter(IGNORE {})", IGNORE)),
        ..c.rewrite_options()
    };
    rewrite::rewrite(&t, &c.stages, groups, &opts)
}

/// Runs each of `contenders` (indices into `cands`) on `threads` threads, [`ROUNDS`] times
/// interleaved, and chooses. A contender that cannot be written as a configuration is left
/// out; fewer than two left is an error.
pub fn run_trials(
    chain: &Chain,
    cands: &[Candidate],
    contenders: &[usize],
    groups: &[GroupInfo],
    threads: usize,
) -> Result<Trials, String> {
    if let Some(why) = cannot_run(chain) {
        return Err(why);
    }
    let mut runs = Vec::new();
    for &k in contenders {
        let rate = cands[k].prediction.rate;
        let packets = if rate.is_finite() {
            ((rate * RUN_SECONDS) as u64).clamp(PACKETS.0, PACKETS.1)
        } else {
            PACKETS.1
        };
        if let Ok(text) = trial_config(chain, &cands[k], groups, packets) {
            runs.push((k, text));
        }
    }
    if runs.len() < 2 {
        return Err("fewer than two of them can be written as configurations".into());
    }
    let mut tried: Vec<Tried> = runs
        .iter()
        .map(|&(candidate, _)| Tried {
            candidate,
            rates: Vec::new(),
        })
        .collect();
    for _ in 0..ROUNDS {
        for (t, (_, text)) in tried.iter_mut().zip(&runs) {
            let (_, mut r) = run::run(text, threads)?;
            t.rates.push(delivered_rate(&mut r));
        }
    }
    Ok(Trials {
        chosen: fastest_or_first(&tried),
        tried,
        threads,
    })
}

/// The model's first choice (the first tried) when it measured within [`KEEP`] of the
/// fastest, else the fastest.
fn fastest_or_first(tried: &[Tried]) -> usize {
    let Some(fastest) = tried.iter().max_by(|a, b| a.best().total_cmp(&b.best())) else {
        return 0;
    };
    match tried.first() {
        Some(first) if first.best() >= (1.0 - KEEP) * fastest.best() => first.candidate,
        _ => fastest.candidate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::candidates::Kind;
    use crate::model::{Element, Group, Level, Machine};

    fn load(name: &str, cycles: f64, bytes: f64, accesses: f64) -> Element {
        Element {
            name: name.into(),
            cycles,
            bytes,
            accesses,
            per_thread: true,
        }
    }

    /// Two groups of one core with a private 1 MB cache each and a shared 16 MB one.
    fn machine() -> Machine {
        let g = Group {
            cores: 1,
            threads: 1,
        };
        Machine {
            hz: 1e9,
            sync_cycles: 100.0,
            sync_cycles_single: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            burst: model::SYNC_BATCH,
            groups: vec![g.clone(), g],
            levels: vec![
                Level {
                    name: "L2".into(),
                    bytes: 1e6,
                    penalty: 20.0,
                    instance: vec![vec![0], vec![1]],
                },
                Level {
                    name: "L3".into(),
                    bytes: 16e6,
                    penalty: 200.0,
                    instance: vec![vec![0], vec![0]],
                },
            ],
        }
    }

    #[test]
    fn contenders_are_the_best_under_other_cache_capacities() {
        let m = machine();
        // Far from every knee: 100 KB arrays, cloning wins under any capacity.
        let small = [load("a", 500.0, 1e5, 20.0), load("b", 500.0, 1e5, 20.0)];
        let cands = candidates::rank(&m, &small, None).unwrap();
        assert_eq!(cands[0].kind, Kind::Cloning);
        assert_eq!(contenders(&m, &small, None, &cands).unwrap(), vec![0]);
        // Two 3 MB arrays per thread: 12 MB cloned fit the 16 MB L3, not 8 MB of it.
        let knee = [load("a", 500.0, 3e6, 20.0), load("b", 500.0, 3e6, 20.0)];
        let cands = candidates::rank(&m, &knee, None).unwrap();
        let got = contenders(&m, &knee, None, &cands).unwrap();
        let kinds: Vec<Kind> = got.iter().map(|&k| cands[k].kind).collect();
        assert!(got.len() >= 2 && got.len() <= MAX_TRIED, "{:?}", kinds);
        assert!(kinds.contains(&Kind::Cloning), "{:?}", kinds);
        assert!(kinds.contains(&Kind::Pipelining), "{:?}", kinds);
        assert!(got.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn the_first_choice_stays_unless_clearly_slower() {
        let t = |candidate, rate| Tried {
            candidate,
            rates: vec![rate * 0.9, rate],
        };
        assert_eq!(fastest_or_first(&[t(0, 0.98), t(2, 1.0)]), 0);
        assert_eq!(fastest_or_first(&[t(0, 0.90), t(2, 1.0)]), 2);
        assert_eq!(t(0, 1.0).best(), 1.0);
    }

    #[test]
    fn runs_the_contenders_of_a_chain() {
        let flat = run::parse(
            "src :: InfiniteSource(LENGTH 64, LIMIT 5, BURST 32, TIMESTAMP false) \
             -> a :: SyntheticLoad(4, 64K) -> b :: SyntheticLoad(4, 64K) -> d :: Discard;",
            "t",
            &[],
        )
        .unwrap();
        let c = chain::extract(&flat).unwrap();
        assert_eq!(cannot_run(&c), None);
        let m = machine();
        let els = [
            load("src", 30.0, 0.0, 0.0),
            load("a", 50.0, 65536.0, 4.0),
            load("b", 50.0, 65536.0, 4.0),
            load("d", 10.0, 0.0, 0.0),
        ];
        let cands = candidates::rank(&m, &els, None).unwrap();
        let pipe = cands
            .iter()
            .position(|c| c.kind == Kind::Pipelining)
            .unwrap();
        let groups = vec![
            GroupInfo {
                threads: vec![0],
                cpus: vec![0],
            },
            GroupInfo {
                threads: vec![1],
                cpus: vec![0],
            },
        ];
        let text = trial_config(&c, &cands[0], &groups, 100).unwrap();
        assert!(
            text.contains("-> d_t0_rate :: AverageCounter(IGNORE 0.05)\n    -> d_t0 :: Discard;"),
            "{}",
            text
        );
        let t = run_trials(&c, &cands, &[0, pipe], &groups, 2).unwrap();
        assert_eq!(t.tried.len(), 2);
        assert!(t
            .tried
            .iter()
            .all(|x| x.rates.len() == ROUNDS && x.best() > 0.0));
        assert!(t.chosen == 0 || t.chosen == pipe);
        let mut sink = c.clone();
        sink.sink.class = "ToDump".into();
        assert!(cannot_run(&sink).unwrap().contains("ToDump"));
        assert!(run_trials(&sink, &cands, &[0, pipe], &groups, 2).is_err());
    }
}
