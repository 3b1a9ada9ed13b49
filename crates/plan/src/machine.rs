//! The machine profile: cores and cache levels (from sysfs), cycles per second, the cost of
//! moving a packet between threads (`O_s`) and the cost of cache misses (`O_ℓ` per level),
//! measured once and cached in a TOML file.
//!
//! Measurements (about a second in all; each figure the fastest of several runs, since other
//! work on the machine only slows a run down):
//! - cycles per second: the cycle counter (`sluice_core::cpu::cycles`) against the wall
//!   clock over 50 ms. All cycle figures are in these units.
//! - an access curve: cycles per random 8-byte read, the reads independent of one another
//!   as SyntheticLoad's are, over arrays from 16 KB to four times the last-level cache. The
//!   curve is fitted with the model's form, `base + Σ_ℓ max(0, 1 − cache_ℓ/S)·O_ℓ`, giving
//!   each level's miss penalty `O_ℓ` and its effective capacity (at most the nominal one: a
//!   cache shared with other tenants or with a victim policy holds less).
//! - for a cache level shared by several CPUs: the same reads on every CPU of one instance
//!   at once, each over its own part of a total footprint; the level's capacity as the
//!   model uses it (against the summed footprint of the CPUs that share it) is fitted to
//!   that curve. Where the CPUs do not in fact share it (a hypervisor's view), the fit
//!   says so with a capacity beyond the nominal one.
//! - the miss latency: cycles per dependent load (pointer chasing) over an array far larger
//!   than the last-level cache minus over one that fits L1, the paper's `O_m`; reported, not
//!   used by the model, which charges misses at the independent-read penalty that packet
//!   processing with several lookups per packet sees.
//! - `O_s`: two SyntheticLoad(0, 8, CYCLES 1000) stages pipelined over two threads through
//!   a ThreadSafeQueue (batches of 32), against the same two stages on one thread:
//!   `O_s = B·(T_pipelined − T_one_thread/2)`, each `T` the fastest of three runs of 200000
//!   packets. On the development VM this is about 90 cycles in some processes and about 300
//!   in others (with address-space randomisation; always about 90 without it): the engine's
//!   crossing cost depends on where its memory lands, and the cached profile keeps whichever
//!   the measuring process saw. This includes what a busy pipeline pays and
//!   an idle one does not (cache lines of packets crossing cores, wake-ups). The crossing
//!   alone, as `sluice bench scaling crossing` runs it (InfiniteSource -> ThreadSafeQueue ->
//!   Unqueue -> Discard, batch 32, producer + consumer task cycles minus InfiniteSource ->
//!   Discard on one thread), is kept as `sync_cycles_unloaded`. With one CPU nothing can be
//!   measured and [`DEFAULT_SYNC_CYCLES`] is used. `O_s` is measured in batches of one packet
//!   too (`sync_cycles_single`): the model charges a crossing in batches of `b` at
//!   `V + F/b` through the two.
//! - the pushing side's share: the first stage alone in front of a ThreadSafeQueue whose
//!   Unqueue feeds a Discard on the second thread (a consumer that keeps up), against the
//!   same stage on one thread without the queue, in batches of 32 and of one
//!   (`push_cycles`, `push_cycles_single`). Pushing one packet at a time into a queue that
//!   another core drains costs the producer a cache line's round trip per packet; `O_s`,
//!   charged to the receiving stage, does not show it when that stage has time to spare.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::model;
use crate::run;

/// `O_s` when it cannot be measured (one CPU): what a two-core KVM guest on an AMD EPYC
/// (Zen 4) measured, in cycles of its 2.6 GHz cycle counter.
pub const DEFAULT_SYNC_CYCLES: f64 = 400.0;

/// One cache level of the machine (all instances of, say, the L2 cache).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Cache {
    /// Level, 1 for L1.
    pub level: u32,
    /// `Data` or `Unified` (instruction caches are left out).
    pub kind: String,
    /// Nominal size of one instance, bytes (sysfs).
    pub bytes: u64,
    /// Capacity the model uses, bytes: for an instance shared by several CPUs, what they see
    /// reading at once (against their total footprint); otherwise `effective_alone`.
    pub effective_bytes: u64,
    /// Capacity that one CPU reading alone sees (at most `bytes`).
    pub effective_alone: u64,
    /// Extra cycles of a read that misses this level over one that hits it.
    pub penalty_cycles: f64,
    /// The CPUs of each instance (sysfs `shared_cpu_list`).
    pub shared: Vec<Vec<usize>>,
    /// For a shared level: cycles per read against the total footprint, every CPU of one
    /// instance reading its own part at once (empty when not measured).
    pub concurrent: Vec<AccessPoint>,
}

impl Cache {
    /// `L1d`, `L2`, ...
    pub fn name(&self) -> String {
        let suffix = match self.kind.as_str() {
            "Data" => "d",
            "Instruction" => "i",
            _ => "",
        };
        format!("L{}{}", self.level, suffix)
    }

    /// The index of the instance that `cpu` uses; a CPU that sysfs lists in none gets a
    /// private instance numbered after the listed ones.
    pub fn instance_of(&self, cpu: usize) -> usize {
        self.shared
            .iter()
            .position(|s| s.contains(&cpu))
            .unwrap_or(self.shared.len() + cpu)
    }
}

/// One point of the access curve.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct AccessPoint {
    /// Array size, bytes.
    pub bytes: u64,
    /// Cycles per independent random read.
    pub cycles: f64,
}

/// Everything `sluice plan` knows about the machine.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Profile {
    /// When it was measured (UTC, RFC 3339).
    pub measured_at: String,
    /// The same, seconds since the Unix epoch.
    pub measured_unix: u64,
    /// Host name of the machine measured.
    pub host: String,
    /// Sluice version that measured it.
    pub sluice_version: String,
    /// The CPUs the measuring process could use.
    pub cpus: Vec<usize>,
    /// `B`: cycle-counter ticks per second (nanoseconds if there is no counter).
    pub cycles_per_second: f64,
    /// Whether the processor has a cycle counter.
    pub cycle_counter: bool,
    /// `O_s`, cycles per packet crossing between threads under load (what the model uses).
    pub sync_cycles: f64,
    /// Cycles of a crossing alone (idle pipeline), for comparison.
    pub sync_cycles_unloaded: f64,
    /// `O_s` when the source sends one packet per batch (0: not measured, as in profiles
    /// written before it was): for the report; the model uses `sync_cycles`.
    #[serde(default)]
    pub sync_cycles_single: f64,
    /// Nanoseconds for a cache line to go from the first CPU to the second and back when
    /// `sync_cycles` was measured (0: not measured). A virtual machine's host may move its
    /// CPUs closer or further apart; the crossing cost follows.
    #[serde(default)]
    pub round_trip_ns: f64,
    /// Cycles per packet the pushing stage spends more when its packets cross to another
    /// thread that keeps up, batches of 32 (0: not measured).
    #[serde(default)]
    pub push_cycles: f64,
    /// The same in batches of one packet (0: not measured).
    #[serde(default)]
    pub push_cycles_single: f64,
    /// How `sync_cycles` was obtained.
    pub sync_source: String,
    /// The one-minute load average when measured (other work slows two-thread runs).
    pub load_average: f64,
    /// Cycles of a dependent load from memory minus one from L1 (the paper's `O_m`).
    pub miss_latency_cycles: f64,
    /// Cycles per independent read when every read hits L1.
    pub base_access_cycles: f64,
    /// Seconds the calibration took.
    pub calibration_seconds: f64,
    /// Cache levels, by level.
    pub caches: Vec<Cache>,
    /// The access curve the penalties were fitted to.
    pub access: Vec<AccessPoint>,
}

/// Where the profile came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// Read from this file.
    Loaded(PathBuf),
    /// Measured now, and written to this file if any.
    Measured(Option<PathBuf>),
}

/// A group of threads placed together: the cores that share the placement cache level.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupInfo {
    /// Thread numbers (`-j` threads, from 0) in the group.
    pub threads: Vec<usize>,
    /// Distinct CPUs those threads run on.
    pub cpus: Vec<usize>,
}

/// The machine as the model sees it for a given thread count.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// The model's machine: groups, levels, `B`, `O_s`.
    pub machine: model::Machine,
    /// The threads and CPUs of each group.
    pub groups: Vec<GroupInfo>,
    /// The cache level whose instances define the groups (`L2`), or `core`/`machine`.
    pub level: String,
}

impl Profile {
    /// The model's view of this machine when `threads` threads run on `cpus` (thread `t` on
    /// `cpus[t % cpus.len()]`, as the engine pins them). Groups are the instances of the
    /// highest cache level that still separates the threads' CPUs; without such a level,
    /// each CPU is a group.
    pub fn layout(&self, threads: usize, cpus: &[usize]) -> Result<Layout, String> {
        if threads == 0 {
            return Err("-j: at least one thread".into());
        }
        let cpus = if cpus.is_empty() {
            &self.cpus[..]
        } else {
            cpus
        };
        let cpus = if cpus.is_empty() { &[0usize][..] } else { cpus };
        let cpu_of: Vec<usize> = (0..threads).map(|t| cpus[t % cpus.len()]).collect();
        let mut used: Vec<usize> = cpu_of.clone();
        used.sort_unstable();
        used.dedup();
        let mut caches: Vec<&Cache> = self
            .caches
            .iter()
            .filter(|c| c.kind != "Instruction")
            .collect();
        caches.sort_by_key(|c| c.level);
        // Key of each thread's group.
        let mut level = String::from("machine");
        let mut key: Vec<usize> = vec![0; threads];
        if used.len() > 1 {
            level = "core".into();
            key = cpu_of.clone();
            for c in caches.iter().rev() {
                let mut inst: Vec<usize> = used.iter().map(|&u| c.instance_of(u)).collect();
                inst.sort_unstable();
                inst.dedup();
                if inst.len() > 1 {
                    level = c.name();
                    key = cpu_of.iter().map(|&u| c.instance_of(u)).collect();
                    break;
                }
            }
        }
        // Groups in order of their first thread.
        let mut order: Vec<usize> = Vec::new();
        for &k in &key {
            if !order.contains(&k) {
                order.push(k);
            }
        }
        let groups: Vec<GroupInfo> = order
            .iter()
            .map(|&k| {
                let threads: Vec<usize> = (0..threads).filter(|&t| key[t] == k).collect();
                let mut cpus: Vec<usize> = threads.iter().map(|&t| cpu_of[t]).collect();
                cpus.sort_unstable();
                cpus.dedup();
                GroupInfo { threads, cpus }
            })
            .collect();
        let levels = caches
            .iter()
            .map(|c| model::Level {
                name: c.name(),
                bytes: c.effective_bytes as f64,
                penalty: c.penalty_cycles,
                instance: groups
                    .iter()
                    .map(|g| {
                        g.threads
                            .iter()
                            .map(|&t| c.instance_of(cpu_of[t]))
                            .collect()
                    })
                    .collect(),
            })
            .collect();
        Ok(Layout {
            machine: model::Machine {
                hz: self.cycles_per_second,
                sync_cycles: self.sync_cycles,
                sync_cycles_single: self.sync_cycles_single,
                push_cycles: self.push_cycles,
                push_cycles_single: self.push_cycles_single,
                burst: model::SYNC_BATCH,
                groups: groups
                    .iter()
                    .map(|g| model::Group {
                        cores: g.cpus.len(),
                        threads: g.threads.len(),
                    })
                    .collect(),
                levels,
            },
            groups,
            level,
        })
    }

    /// Seconds since the profile was measured.
    pub fn age_secs(&self) -> u64 {
        unix_now().saturating_sub(self.measured_unix)
    }

    /// True if the profile is at most [`MAX_AGE_SECS`] old.
    pub fn fresh(&self) -> bool {
        self.age_secs() <= MAX_AGE_SECS
    }

    /// Whether `other` describes the same hardware (CPUs and caches as sysfs lists them).
    pub fn same_topology(&self, cpus: &[usize], caches: &[Cache]) -> bool {
        let key = |c: &[Cache]| -> Vec<(u32, String, u64, Vec<Vec<usize>>)> {
            c.iter()
                .map(|c| (c.level, c.kind.clone(), c.bytes, c.shared.clone()))
                .collect()
        };
        self.cpus == cpus && key(&self.caches) == key(caches)
    }

    /// The profile as TOML, with a comment saying what it is.
    pub fn to_toml(&self) -> Result<String, String> {
        let body = toml::to_string(self).map_err(|e| e.to_string())?;
        Ok(format!(
            "# sluice plan machine profile (see `sluice plan --help`); delete or use --remeasure to measure again\n{}",
            body
        ))
    }

    /// Parses a profile written by [`Profile::to_toml`].
    pub fn from_toml(text: &str) -> Result<Profile, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

/// Parses a sysfs CPU list (`0-3,8,10-11`).
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.trim().is_empty()) {
        match part.trim().split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                v.extend(a..=b);
            }
            None => v.push(part.trim().parse().ok()?),
        }
    }
    v.sort_unstable();
    v.dedup();
    Some(v)
}

/// Formats a byte count as `32K`, `1M`, `1.5M`.
pub fn format_bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    let (v, unit) = if b >= K * K * K {
        (b / (K * K * K), "G")
    } else if b >= K * K {
        (b / (K * K), "M")
    } else if b >= K {
        (b / K, "K")
    } else {
        return format!("{}", b.round());
    };
    if (v - v.round()).abs() < 0.05 {
        format!("{}{}", v.round(), unit)
    } else {
        format!("{:.1}{}", v, unit)
    }
}

/// Reads the data and unified caches of `cpus` from a sysfs tree (`root` is normally
/// `/sys/devices/system/cpu`). Penalties are 0 and effective sizes nominal until calibrated.
pub fn read_caches(root: &Path, cpus: &[usize]) -> Vec<Cache> {
    // (level, kind) -> (size, instances).
    type Found = BTreeMap<(u32, String), (u64, Vec<Vec<usize>>)>;
    let mut found: Found = BTreeMap::new();
    for &cpu in cpus {
        let dir = root.join(format!("cpu{}/cache", cpu));
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut idx: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("index"))
            })
            .collect();
        idx.sort();
        for p in idx {
            let read = |f: &str| std::fs::read_to_string(p.join(f)).map(|s| s.trim().to_string());
            let (Ok(level), Ok(kind), Ok(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            if kind == "Instruction" {
                continue;
            }
            let (Ok(level), Some(bytes)) = (
                level.parse::<u32>(),
                sluice_elements::threads::synthetic_load::parse_size(&size),
            ) else {
                continue;
            };
            let shared = read("shared_cpu_list")
                .ok()
                .and_then(|s| parse_cpu_list(&s))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| vec![cpu]);
            let e = found.entry((level, kind)).or_insert((bytes, Vec::new()));
            e.0 = e.0.max(bytes);
            if !e.1.contains(&shared) {
                e.1.push(shared);
            }
        }
    }
    found
        .into_iter()
        .map(|((level, kind), (bytes, mut shared))| {
            shared.sort();
            Cache {
                level,
                kind,
                bytes,
                effective_bytes: bytes,
                effective_alone: bytes,
                penalty_cycles: 0.0,
                shared,
                concurrent: Vec::new(),
            }
        })
        .collect()
}

/// The CPUs this process may run on.
pub fn current_cpus() -> Vec<usize> {
    let v = sluice_core::cpu::Affinity::current()
        .map(|a| a.cpus())
        .unwrap_or_default();
    if v.is_empty() {
        (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect()
    } else {
        v
    }
}

/// Fits the access curve with `base + Σ_ℓ max(0, 1 − cap_ℓ/S)·O_ℓ` (relative least
/// squares, `O_ℓ ≥ 0`), each `cap_ℓ` chosen among the nominal size times 2^(−k/2), k = 0..6,
/// increasing with the level. Returns `base` and, per level, (effective bytes, penalty).
/// Among fits within 2% of the best, the one with the largest capacities wins: a level
/// shrinks only when the curve says so.
pub fn fit_levels(curve: &[AccessPoint], nominal: &[u64]) -> (f64, Vec<(u64, f64)>) {
    let l = nominal.len();
    let choices: Vec<Vec<u64>> = nominal
        .iter()
        .map(|&b| {
            (0..=6)
                .map(|k| (b as f64 * 0.5f64.powf(k as f64 / 2.0)) as u64)
                .collect()
        })
        .collect();
    let mut best: Vec<(f64, Vec<u64>, f64, Vec<f64>)> = Vec::new();
    let mut idx = vec![0usize; l];
    loop {
        let caps: Vec<u64> = (0..l).map(|i| choices[i][idx[i]]).collect();
        if caps.windows(2).all(|w| w[0] < w[1]) {
            if let Some((res, base, pens)) = fit_penalties(curve, &caps) {
                best.push((res, caps, base, pens));
            }
        }
        // Next combination.
        let mut i = 0;
        while i < l {
            idx[i] += 1;
            if idx[i] < choices[i].len() {
                break;
            }
            idx[i] = 0;
            i += 1;
        }
        if i == l {
            break;
        }
    }
    let Some(min) = best.iter().map(|b| b.0).min_by(|a, b| a.total_cmp(b)) else {
        let base = curve.first().map_or(0.0, |p| p.cycles);
        return (base, nominal.iter().map(|&b| (b, 0.0)).collect());
    };
    let chosen = best
        .iter()
        .filter(|b| b.0 <= min * 1.02 + 1e-12)
        .max_by(|a, b| {
            let s = |c: &[u64]| c.iter().map(|&x| (x as f64).ln()).sum::<f64>();
            s(&a.1).total_cmp(&s(&b.1))
        })
        .expect("the best fit is within 2% of itself");
    (
        chosen.2,
        chosen
            .1
            .iter()
            .copied()
            .zip(chosen.3.iter().copied())
            .collect(),
    )
}

/// Non-negative least squares of the curve on `[1, π_1(S), ...]` for fixed capacities, by
/// trying every set of levels allowed a positive penalty. Returns (relative residual, base,
/// penalties).
fn fit_penalties(curve: &[AccessPoint], caps: &[u64]) -> Option<(f64, f64, Vec<f64>)> {
    let l = caps.len();
    let rows: Vec<(Vec<f64>, f64, f64)> = curve
        .iter()
        .filter(|p| p.cycles > 0.0)
        .map(|p| {
            let mut x = vec![1.0];
            x.extend(
                caps.iter()
                    .map(|&c| model::miss_probability(c as f64, p.bytes as f64)),
            );
            (x, p.cycles, 1.0 / (p.cycles * p.cycles))
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut best: Option<(f64, f64, Vec<f64>)> = None;
    for mask in 0u32..(1 << l) {
        let cols: Vec<usize> = std::iter::once(0)
            .chain((0..l).filter(|i| mask & (1 << i) != 0).map(|i| i + 1))
            .collect();
        let k = cols.len();
        // Weighted normal equations.
        let mut a = vec![vec![0.0; k + 1]; k];
        for (x, y, w) in &rows {
            for r in 0..k {
                for c in 0..k {
                    a[r][c] += w * x[cols[r]] * x[cols[c]];
                }
                a[r][k] += w * x[cols[r]] * y;
            }
        }
        let Some(sol) = solve(a) else {
            continue;
        };
        if sol[1..].iter().any(|&v| v < 0.0) {
            continue;
        }
        let mut pens = vec![0.0; l];
        for (i, &c) in cols.iter().enumerate().skip(1) {
            pens[c - 1] = sol[i];
        }
        let res: f64 = rows
            .iter()
            .map(|(x, y, w)| {
                let f = sol[0] + (0..l).map(|i| x[i + 1] * pens[i]).sum::<f64>();
                w * (f - y) * (f - y)
            })
            .sum();
        if best.as_ref().is_none_or(|b| res < b.0) {
            best = Some((res, sol[0], pens));
        }
    }
    best
}

/// Gaussian elimination with partial pivoting on an augmented `k × (k+1)` matrix.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let k = a.len();
    for c in 0..k {
        let p = (c..k).max_by(|&x, &y| a[x][c].abs().total_cmp(&a[y][c].abs()))?;
        if a[p][c].abs() < 1e-12 {
            return None;
        }
        a.swap(c, p);
        let pivot = a[c].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != c {
                let f = row[c] / pivot[c];
                for (x, p) in row.iter_mut().zip(&pivot).skip(c) {
                    *x -= f * p;
                }
            }
        }
    }
    Some((0..k).map(|r| a[r][k] / a[r][r]).collect())
}

/// One xorshift64 step (SyntheticLoad's generator).
#[inline]
fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// Reads one word of every cache line of `words[..len]`, so that timed reads start from a
/// warm cache (random warm-up reads alone leave lines untouched near a cache's capacity).
fn touch(words: &[u64], len: usize) {
    let mut sum = 0u64;
    for w in words[..len].iter().step_by(8) {
        sum = sum.wrapping_add(*w);
    }
    std::hint::black_box(sum);
}

/// Seconds for `reads` independent random reads of `words[..len]`, as SyntheticLoad reads.
fn random_reads(words: &[u64], len: usize, reads: usize, seed: u64) -> f64 {
    let mut r = seed | 1;
    let mut sum = 0u64;
    let t = Instant::now();
    for _ in 0..reads {
        let x = xorshift(&mut r);
        let i = ((x as u128 * len as u128) >> 64) as usize;
        sum = sum.rotate_left(1) ^ words[i];
    }
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(sum);
    s
}

/// Seconds for `hops` dependent loads following the chain stored in `words`.
fn chase(words: &[u64], hops: usize) -> f64 {
    let mut i = 0usize;
    let t = Instant::now();
    for _ in 0..hops {
        i = words[i] as usize;
    }
    let s = t.elapsed().as_secs_f64();
    std::hint::black_box(i);
    s
}

/// Makes `words[..len]` one random cycle through its cache lines (Sattolo's shuffle), each
/// line's first word holding the index of the next.
fn make_chain(words: &mut [u64], len: usize, seed: u64) {
    let lines = (len / 8).max(1);
    let mut order: Vec<u32> = (0..lines as u32).collect();
    let mut g = seed | 1;
    for i in (1..lines).rev() {
        let j = (xorshift(&mut g) % i as u64) as usize;
        order.swap(i, j);
    }
    for w in 0..lines {
        let next = order[(w + 1) % lines] as u64;
        words[order[w] as usize * 8] = next * 8;
    }
}

/// Measures `B`: cycle-counter ticks per second (1e9 without a counter: cycles are then
/// nanoseconds). Returns (ticks per second, whether there is a counter).
pub fn measure_hz() -> (f64, bool) {
    let t = Instant::now();
    let c0 = sluice_core::cpu::cycles();
    while t.elapsed().as_secs_f64() < 0.05 {
        std::hint::spin_loop();
    }
    let c1 = sluice_core::cpu::cycles();
    let s = t.elapsed().as_secs_f64();
    if c1 > c0 {
        ((c1 - c0) as f64 / s, true)
    } else {
        (1e9, false)
    }
}

/// Measures the access curve, fits the caches' penalties and effective sizes, and measures
/// the dependent-load miss latency. Returns (curve, base cycles, miss latency); `caches`
/// gets its penalties and effective sizes.
pub fn measure_memory(caches: &mut [Cache], hz: f64) -> (Vec<AccessPoint>, f64, f64) {
    let l1 = caches.first().map_or(32 << 10, |c| c.bytes);
    let llc = caches.iter().map(|c| c.bytes).max().unwrap_or(8 << 20);
    let top = (4 * llc).clamp(32 << 20, 256 << 20);
    let mut words: Vec<u64> = Vec::new();
    let mut g = 0x9E37_79B9_7F4A_7C15u64;
    words.extend((0..top / 8).map(|_| xorshift(&mut g)));
    let mut sizes = Vec::new();
    let mut s = (l1 / 2).max(4096);
    while s <= top {
        sizes.push(s);
        if s + s / 2 <= top {
            sizes.push(s + s / 2);
        }
        s *= 2;
    }
    let reads = 200_000;
    let mut curve = Vec::new();
    for (k, &s) in sizes.iter().enumerate() {
        let len = (s / 8) as usize;
        touch(&words, len);
        random_reads(&words, len, reads / 2, k as u64 + 1);
        let v: Vec<f64> = (0..3)
            .map(|r| random_reads(&words, len, reads, (k * 3 + r) as u64 + 7) * hz / reads as f64)
            .collect();
        curve.push(AccessPoint {
            bytes: s,
            cycles: run::fastest(&v),
        });
    }
    let nominal: Vec<u64> = caches.iter().map(|c| c.bytes).collect();
    let (base, fit) = fit_levels(&curve, &nominal);
    for (c, (eff, pen)) in caches.iter_mut().zip(fit) {
        c.effective_bytes = eff;
        c.effective_alone = eff;
        c.penalty_cycles = pen;
    }
    measure_shared(&words, caches, &sizes, base, hz);
    // Pointer chasing: far beyond the last-level cache, then within L1.
    let len = words.len();
    make_chain(&mut words, len, 12345);
    chase(&words, 20_000);
    let big = chase(&words, 200_000) * hz / 200_000.0;
    let small_len = ((l1 / 2).max(4096) / 8) as usize;
    make_chain(&mut words, small_len, 777);
    chase(&words, 100_000);
    let small = chase(&words, 1_000_000) * hz / 1_000_000.0;
    (curve, base, (big - small).max(0.0))
}

/// For each cache level whose first instance serves several of this process's CPUs: every
/// one of those CPUs reads its own part of a total footprint `T` at once (one thread pinned
/// to each), for the ladder sizes `T` above the level below; the level's capacity as the
/// model sees it (`effective_bytes`, against the total footprint) is then fitted with the
/// penalties of the single-CPU fit.
fn measure_shared(words: &[u64], caches: &mut [Cache], sizes: &[u64], base: f64, hz: f64) {
    let Some(aff) = sluice_core::cpu::Affinity::current() else {
        return;
    };
    let allowed = aff.cpus();
    for li in 0..caches.len() {
        let cpus: Vec<usize> = caches[li]
            .shared
            .first()
            .map(|s| s.iter().copied().filter(|c| allowed.contains(c)).collect())
            .unwrap_or_default();
        let k = cpus.len();
        if k < 2 {
            continue;
        }
        let below = if li > 0 { caches[li - 1].bytes } else { 0 };
        let region = words.len() / k;
        let reads = 200_000;
        let mut curve = Vec::new();
        for &t in sizes.iter().filter(|&&t| t >= below * k as u64) {
            let len = ((t / 8) as usize / k).min(region);
            if len == 0 {
                continue;
            }
            let barrier = std::sync::Barrier::new(k);
            let secs: Vec<f64> = std::thread::scope(|sc| {
                let hs: Vec<_> = cpus
                    .iter()
                    .enumerate()
                    .map(|(i, &cpu)| {
                        let part = &words[i * region..i * region + len];
                        let (barrier, aff) = (&barrier, &aff);
                        let pos = allowed.iter().position(|&c| c == cpu).unwrap_or(0);
                        sc.spawn(move || {
                            aff.pin(pos);
                            touch(part, len);
                            random_reads(part, len, reads / 2, i as u64 + 3);
                            // Three timed rounds, all threads reading at once; the fastest.
                            (0..3)
                                .map(|r| {
                                    barrier.wait();
                                    random_reads(part, len, reads, i as u64 + 11 + r)
                                })
                                .fold(f64::INFINITY, f64::min)
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap_or(0.0)).collect()
            });
            let mean = secs.iter().sum::<f64>() / k as f64;
            curve.push(AccessPoint {
                bytes: len as u64 * 8 * k as u64,
                cycles: mean * hz / reads as f64,
            });
        }
        let levels: Vec<(u64, f64, bool)> = caches
            .iter()
            .enumerate()
            .map(|(j, c)| (c.effective_alone, c.penalty_cycles, j < li))
            .collect();
        caches[li].effective_bytes = fit_shared(&curve, k, &levels, li, base, caches[li].bytes);
        caches[li].concurrent = curve;
    }
}

/// The capacity of level `li`, shared by `k` CPUs, that best explains `curve` (cycles per
/// read against the total footprint): `base + Σ_ℓ π_ℓ·O_ℓ`, levels below `li` (marked
/// `true` in `levels`: effective bytes, penalty, private) seeing a `k`-th of the footprint.
/// Candidates: `k` times the nominal size, times 2^(−j/2) for j = 0..12; among fits within
/// 2% of the best, the largest capacity. `nominal` when the curve is empty.
pub fn fit_shared(
    curve: &[AccessPoint],
    k: usize,
    levels: &[(u64, f64, bool)],
    li: usize,
    base: f64,
    nominal: u64,
) -> u64 {
    if curve.is_empty() {
        return nominal;
    }
    let pen = levels[li].1;
    let err = |cap: f64| -> f64 {
        curve
            .iter()
            .map(|p| {
                let t = p.bytes as f64;
                let mut f = base;
                for (j, &(c, o, private)) in levels.iter().enumerate() {
                    let (size, fp) = if j == li {
                        (cap, t)
                    } else if private {
                        (c as f64, t / k as f64)
                    } else {
                        (c as f64, t)
                    };
                    let o = if j == li { pen } else { o };
                    f += model::miss_probability(size, fp) * o;
                }
                ((f - p.cycles) / p.cycles).powi(2)
            })
            .sum()
    };
    let caps: Vec<f64> = (0..=12)
        .map(|j| (nominal * k as u64) as f64 * 0.5f64.powf(j as f64 / 2.0))
        .collect();
    let errs: Vec<f64> = caps.iter().map(|&c| err(c)).collect();
    let min = errs.iter().copied().fold(f64::INFINITY, f64::min);
    caps.iter()
        .zip(&errs)
        .filter(|(_, &e)| e <= min * 1.02 + 1e-12)
        .map(|(&c, _)| c as u64)
        .max()
        .unwrap_or(nominal)
}

/// What a packet crossing between threads costs, cycles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyncCost {
    /// Under load (`O_s`), batches of 32 packets.
    pub loaded: f64,
    /// Under load, batches of one packet.
    pub single: f64,
    /// The crossing alone (idle pipeline).
    pub unloaded: f64,
    /// The pushing side's extra cycles per packet, batches of 32.
    pub push: f64,
    /// The same, batches of one packet.
    pub push_single: f64,
}

/// Measures `O_s` under load and the crossing alone (see the module documentation). Needs
/// two CPUs.
pub fn measure_sync(hz: f64) -> Result<SyncCost, String> {
    // Long enough for the pipeline to settle: shorter runs measure more per crossing.
    let p = 200_000u64;
    let src = |n: u64, burst: u32| {
        format!(
            "src :: InfiniteSource(LENGTH 64, LIMIT {}, BURST {}, TIMESTAMP false)",
            n, burst
        )
    };
    let w = |seed: u32| format!("SyntheticLoad(0, 8, CYCLES 1000, SEED {})", seed);
    let one = |burst| format!("{} -> {} -> {} -> d :: Discard;", src(p, burst), w(1), w(2));
    let two = |burst| {
        format!(
            "{} -> {} -> q :: ThreadSafeQueue(65536) -> u :: Unqueue(BURST 32) -> {} -> d :: Discard;\nStaticThreadSched(src 0, u 1);",
            src(p, burst),
            w(1),
            w(2)
        )
    };
    let per_packet = |text: &str, threads: usize, runs: usize| -> Result<f64, String> {
        run::run(text, threads)?;
        let mut v = Vec::new();
        for _ in 0..runs {
            let (secs, mut r) = run::run(text, threads)?;
            let got = run::number(&mut r, "d.count").max(1.0);
            v.push(secs / got);
        }
        Ok(run::fastest(&v))
    };
    let loaded = |burst| -> Result<f64, String> {
        let t1 = per_packet(&one(burst), 1, 3)?;
        let t2 = per_packet(&two(burst), 2, 3)?;
        Ok((hz * (t2 - t1 / 2.0)).max(0.0))
    };
    let (single, loaded) = (loaded(1)?, loaded(32)?);
    // The pushing side alone: its stage in front of a queue drained by a light consumer.
    let push = |burst| -> Result<f64, String> {
        let alone = format!("{} -> {} -> d :: Discard;", src(p, burst), w(1));
        let pushed = format!(
            "{} -> {} -> q :: ThreadSafeQueue(65536) -> u :: Unqueue(BURST 32) -> d :: Discard;\nStaticThreadSched(src 0, u 1);",
            src(p, burst),
            w(1)
        );
        let t1 = per_packet(&alone, 1, 3)?;
        let t2 = per_packet(&pushed, 2, 3)?;
        Ok((hz * (t2 - t1)).max(0.0))
    };
    let (push_single, push) = (push(1)?, push(32)?);
    // The crossing alone: task cycles of both sides minus the one-thread source -> Discard.
    let q = 400_000u64;
    let base = format!("{} -> d :: Discard;", src(q, 32));
    let cross = format!(
        "{} -> q :: ThreadSafeQueue(65536) -> u :: Unqueue(BURST 32) -> d :: Discard;\nStaticThreadSched(src 0, u 1);",
        src(q, 32)
    );
    let cycles = |text: &str, threads: usize| -> Result<f64, String> {
        let mut v = Vec::new();
        for _ in 0..3 {
            let (secs, r) = run::run(text, threads)?;
            let c = run::task_cycles(&r, &[]);
            v.push(if c > 0.0 { c } else { secs * hz } / q as f64);
        }
        Ok(run::fastest(&v))
    };
    let b = cycles(&base, 1)?;
    let c = cycles(&cross, 2)?;
    Ok(SyncCost {
        loaded,
        single,
        unloaded: (c - b).max(0.0),
        push,
        push_single,
    })
}

/// The one-minute load average (0 if unknown).
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0.0)
}

/// The host name, from the kernel.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// `secs` since the epoch as RFC 3339 UTC.
pub fn rfc3339(secs: u64) -> String {
    let days = (secs / 86400) as i64;
    let rem = secs % 86400;
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        y,
        m,
        d,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Round trips of one cache line between two CPUs in a round-trip measurement.
const ROUND_TRIPS: u64 = 100_000;

/// A cache line on lines of its own, bounced between two threads.
#[repr(align(128))]
struct Line(std::sync::atomic::AtomicU64);

/// Nanoseconds for a cache line to go from the first of `cpus` to the second and back
/// (the fastest of three measurements); `None` with fewer than two CPUs.
pub fn measure_round_trip(cpus: &[usize]) -> Option<f64> {
    use std::sync::atomic::Ordering;
    if cpus.len() < 2 {
        return None;
    }
    let affinity = sluice_core::cpu::Affinity::current()?;
    let once = || -> f64 {
        let line = std::sync::Arc::new(Line(0.into()));
        let other = line.clone();
        let echo = std::thread::spawn(move || {
            affinity.pin(1);
            for i in 0..ROUND_TRIPS {
                while other.0.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                other.0.store(2 * i + 2, Ordering::Release);
            }
        });
        let t = std::thread::spawn(move || {
            affinity.pin(0);
            let start = Instant::now();
            for i in 0..ROUND_TRIPS {
                line.0.store(2 * i + 1, Ordering::Release);
                while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                    std::hint::spin_loop();
                }
            }
            start.elapsed().as_secs_f64() * 1e9 / ROUND_TRIPS as f64
        });
        let ns = t.join().unwrap_or(f64::INFINITY);
        let _ = echo.join();
        ns
    };
    (0..3).map(|_| once()).reduce(f64::min)
}

/// Whether the cross-CPU round trip now (`now_ns`) differs from the profile's by more than
/// a factor of two: the host has moved the virtual CPUs, and the crossing cost with them.
pub fn round_trip_moved(profile_ns: f64, now_ns: f64) -> bool {
    profile_ns > 0.0 && now_ns > 0.0 && (now_ns / profile_ns > 2.0 || profile_ns / now_ns > 2.0)
}

/// `prof` (read from `path`) with its crossing costs measured again, and saved, when the
/// cross-CPU round trip has moved since they were measured (see [`round_trip_moved`]).
fn current_crossing(
    mut prof: Profile,
    path: &Path,
    notes: &mut Vec<String>,
) -> Result<Profile, String> {
    let cpus = current_cpus();
    let Some(now) = measure_round_trip(&cpus) else {
        return Ok(prof);
    };
    if !round_trip_moved(prof.round_trip_ns, now) {
        return Ok(prof);
    }
    let sync = measure_sync(prof.cycles_per_second)?;
    notes.push(format!(
        "a cache line takes {:.0} ns between the first two CPUs and back, against {:.0} ns when \
         the profile was measured (the host moved the virtual CPUs): O_s measured again, {:.0} \
         cycles (was {:.0})",
        now, prof.round_trip_ns, sync.loaded, prof.sync_cycles
    ));
    prof.sync_cycles = sync.loaded;
    prof.sync_cycles_single = sync.single;
    prof.sync_cycles_unloaded = sync.unloaded;
    prof.push_cycles = sync.push;
    prof.push_cycles_single = sync.push_single;
    prof.round_trip_ns = now;
    if let Err(e) = prof
        .to_toml()
        .and_then(|t| std::fs::write(path, t).map_err(|e| e.to_string()))
    {
        notes.push(format!("{}: not updated ({})", path.display(), e));
    }
    Ok(prof)
}

/// Measures this machine (about a second).
pub fn measure() -> Result<Profile, String> {
    let t = Instant::now();
    let load = load_average();
    let cpus = current_cpus();
    let mut caches = read_caches(Path::new("/sys/devices/system/cpu"), &cpus);
    let (hz, counter) = measure_hz();
    let (access, base, latency) = measure_memory(&mut caches, hz);
    let (sync, source) = if cpus.len() >= 2 {
        (
            measure_sync(hz)?,
            "two pipelined stages against one thread".to_string(),
        )
    } else {
        (
            SyncCost {
                loaded: DEFAULT_SYNC_CYCLES,
                single: 0.0,
                unloaded: 0.0,
                push: 0.0,
                push_single: 0.0,
            },
            "default: one CPU, nothing to measure".to_string(),
        )
    };
    let round_trip = measure_round_trip(&cpus).unwrap_or(0.0);
    let now = unix_now();
    Ok(Profile {
        measured_at: rfc3339(now),
        measured_unix: now,
        host: host_name(),
        sluice_version: sluice_core::router::VERSION.to_string(),
        cpus,
        cycles_per_second: hz,
        cycle_counter: counter,
        sync_cycles: sync.loaded,
        sync_cycles_unloaded: sync.unloaded,
        sync_cycles_single: sync.single,
        round_trip_ns: round_trip,
        push_cycles: sync.push,
        push_cycles_single: sync.push_single,
        sync_source: source,
        load_average: load,
        miss_latency_cycles: latency,
        base_access_cycles: base,
        calibration_seconds: t.elapsed().as_secs_f64(),
        caches,
        access,
    })
}

/// The default profile file: `$XDG_CACHE_HOME/sluice/machine.toml`, else
/// `~/.cache/sluice/machine.toml`; `None` without either variable.
pub fn default_path() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("sluice").join("machine.toml"))
}

/// Seconds since 1970.
fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Seconds after which a cached profile is measured again: on a shared host the caches' and
/// the crossings' effective costs drift within hours (the grid missed its error target only
/// with profiles older than this).
pub const MAX_AGE_SECS: u64 = 3600;

/// The profile to plan with: read from `path` (or the default file) unless `remeasure`,
/// measured and written there otherwise. A cached profile of other hardware, or older than
/// [`MAX_AGE_SECS`], is measured again unless the file was named explicitly. Notes for the
/// user go to `notes`.
pub fn load_or_measure(
    path: Option<&Path>,
    remeasure: bool,
    notes: &mut Vec<String>,
) -> Result<(Profile, Origin), String> {
    let explicit = path.is_some();
    let path = path.map(Path::to_path_buf).or_else(default_path);
    if let (Some(p), false) = (&path, remeasure) {
        if let Ok(text) = std::fs::read_to_string(p) {
            match Profile::from_toml(&text) {
                Ok(prof) => {
                    let cpus = current_cpus();
                    let caches = read_caches(Path::new("/sys/devices/system/cpu"), &cpus);
                    let same = prof.same_topology(&cpus, &caches);
                    if same && (explicit || prof.fresh()) {
                        return Ok((current_crossing(prof, p, notes)?, Origin::Loaded(p.clone())));
                    }
                    if same {
                        notes.push(format!(
                            "{}: measured {:.1} h ago; measuring again (profiles older than {} \
                             s are, since effective cache capacities drift)",
                            p.display(),
                            prof.age_secs() as f64 / 3600.0,
                            MAX_AGE_SECS
                        ));
                    } else if explicit {
                        notes.push(format!(
                            "{}: measured on other hardware ({}, CPUs {:?}); used as given",
                            p.display(),
                            prof.host,
                            prof.cpus
                        ));
                        return Ok((prof, Origin::Loaded(p.clone())));
                    } else {
                        notes.push(format!(
                            "{}: measured on other hardware ({}); measuring again",
                            p.display(),
                            prof.host
                        ));
                    }
                }
                Err(e) => {
                    if explicit {
                        return Err(format!("{}: {}", p.display(), e));
                    }
                    notes.push(format!(
                        "{}: unreadable ({}); measuring again",
                        p.display(),
                        e
                    ));
                }
            }
        } else if explicit {
            notes.push(format!("{}: no profile yet; measuring", p.display()));
        }
    }
    let prof = measure()?;
    let mut written = None;
    if let Some(p) = path {
        let text = prof.to_toml()?;
        let res = p
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&p, text));
        match res {
            Ok(()) => written = Some(p),
            Err(e) => notes.push(format!("{}: not written ({})", p.display(), e)),
        }
    } else {
        notes.push("no $XDG_CACHE_HOME or $HOME: the machine profile is not cached".into());
    }
    Ok((prof, Origin::Measured(written)))
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;

    fn cache(level: u32, bytes: u64, shared: Vec<Vec<usize>>) -> Cache {
        Cache {
            level,
            kind: if level == 1 { "Data" } else { "Unified" }.into(),
            bytes,
            effective_bytes: bytes,
            effective_alone: bytes,
            penalty_cycles: 1.0,
            shared,
            concurrent: Vec::new(),
        }
    }

    /// This machine's shape: private L1d and L2, one L3 for both CPUs.
    fn two_core() -> Profile {
        Profile {
            measured_at: rfc3339(0),
            measured_unix: 0,
            host: "test".into(),
            sluice_version: "0".into(),
            cpus: vec![0, 1],
            cycles_per_second: 2.6e9,
            cycle_counter: true,
            sync_cycles: 400.0,
            sync_cycles_unloaded: 70.0,
            sync_cycles_single: 0.0,
            round_trip_ns: 0.0,
            push_cycles: 0.0,
            push_cycles_single: 0.0,
            sync_source: "test".into(),
            load_average: 0.5,
            miss_latency_cycles: 500.0,
            base_access_cycles: 5.0,
            calibration_seconds: 1.0,
            caches: vec![
                cache(1, 32 * K, vec![vec![0], vec![1]]),
                cache(2, M, vec![vec![0], vec![1]]),
                cache(3, 32 * M, vec![vec![0, 1]]),
            ],
            access: vec![AccessPoint {
                bytes: 16 * K,
                cycles: 5.0,
            }],
        }
    }

    #[test]
    fn a_moved_round_trip_is_noticed() {
        assert!(!round_trip_moved(0.0, 300.0));
        assert!(!round_trip_moved(52.0, 60.0));
        assert!(round_trip_moved(52.0, 340.0));
        assert!(round_trip_moved(340.0, 52.0));
        if current_cpus().len() >= 2 {
            let ns = measure_round_trip(&current_cpus()).unwrap();
            assert!(ns > 1.0 && ns < 100_000.0, "{}", ns);
        }
    }

    #[test]
    fn profiles_without_the_single_packet_crossing_still_read() {
        let old: String = two_core()
            .to_toml()
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("sync_cycles_single") && !l.starts_with("round_trip_ns"))
            .map(|l| format!("{}\n", l))
            .collect();
        let p = Profile::from_toml(&old).unwrap();
        assert_eq!(
            (p.sync_cycles, p.sync_cycles_single, p.round_trip_ns),
            (400.0, 0.0, 0.0)
        );
    }

    #[test]
    fn sizes_and_cpu_lists() {
        assert_eq!(parse_cpu_list("0-1"), Some(vec![0, 1]));
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        // Cache sizes as sysfs writes them, through SyntheticLoad's size parser.
        let parse_size = sluice_elements::threads::synthetic_load::parse_size;
        assert_eq!(parse_size("32K"), Some(32 * K));
        assert_eq!(parse_size("32768K"), Some(32 * M));
        assert_eq!(parse_size("8M"), Some(8 * M));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_cpu_list("3"), Some(vec![3]));
        assert_eq!(parse_cpu_list("2-1"), None);
        assert_eq!(parse_cpu_list("a"), None);
        assert_eq!(format_bytes(32.0 * 1024.0), "32K");
        assert_eq!(format_bytes(1536.0 * 1024.0), "1.5M");
        assert_eq!(format_bytes(100.0), "100");
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn reads_a_sysfs_tree() {
        let root = std::env::temp_dir().join(format!("sluice-plan-sysfs-{}", std::process::id()));
        let write = |cpu: usize, idx: usize, level: &str, kind: &str, size: &str, shared: &str| {
            let d = root.join(format!("cpu{}/cache/index{}", cpu, idx));
            std::fs::create_dir_all(&d).unwrap();
            for (f, v) in [
                ("level", level),
                ("type", kind),
                ("size", size),
                ("shared_cpu_list", shared),
            ] {
                std::fs::write(d.join(f), format!("{}\n", v)).unwrap();
            }
        };
        for cpu in 0..4 {
            let own = cpu.to_string();
            write(cpu, 0, "1", "Data", "48K", &own);
            write(cpu, 1, "1", "Instruction", "32K", &own);
            write(cpu, 2, "2", "Unified", "2048K", &own);
            // Two sockets of two cores.
            write(
                cpu,
                3,
                "3",
                "Unified",
                "16M",
                if cpu < 2 { "0-1" } else { "2-3" },
            );
        }
        let caches = read_caches(&root, &[0, 1, 2, 3]);
        std::fs::remove_dir_all(&root).ok();
        assert_eq!(caches.len(), 3);
        assert_eq!(caches[0].name(), "L1d");
        assert_eq!(caches[0].bytes, 48 * K);
        assert_eq!(caches[0].shared, vec![vec![0], vec![1], vec![2], vec![3]]);
        assert_eq!(caches[1].name(), "L2");
        assert_eq!(caches[2].bytes, 16 * M);
        assert_eq!(caches[2].shared, vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(caches[2].instance_of(3), 1);
        assert_eq!(caches[2].instance_of(9), 2 + 9);
    }

    #[test]
    fn groups_are_the_highest_level_that_separates_the_threads() {
        let p = two_core();
        // L3 is shared by both CPUs: the groups are the L2 instances.
        let l = p.layout(2, &[0, 1]).unwrap();
        assert_eq!(l.level, "L2");
        assert_eq!(l.groups.len(), 2);
        assert_eq!(l.groups[1].threads, vec![1]);
        assert_eq!(l.machine.groups[0].cores, 1);
        assert_eq!(l.machine.levels.len(), 3);
        assert_eq!(l.machine.levels[2].instance, vec![vec![0], vec![0]]);
        assert_eq!(l.machine.levels[1].instance, vec![vec![0], vec![1]]);
        // One thread: one group.
        let l = p.layout(1, &[0, 1]).unwrap();
        assert_eq!(l.level, "machine");
        assert_eq!(l.groups.len(), 1);
        // Four threads on two CPUs: two threads per core-group, one core each.
        let l = p.layout(4, &[0, 1]).unwrap();
        assert_eq!(l.groups[0].threads, vec![0, 2]);
        assert_eq!(l.machine.groups[0].cores, 1);
        assert_eq!(l.machine.groups[0].threads, 2);
        // Two sockets: the groups are the sockets.
        let mut p = two_core();
        p.cpus = vec![0, 1, 2, 3];
        p.caches = vec![
            cache(2, M, vec![vec![0], vec![1], vec![2], vec![3]]),
            cache(3, 16 * M, vec![vec![0, 1], vec![2, 3]]),
        ];
        let l = p.layout(4, &[0, 1, 2, 3]).unwrap();
        assert_eq!(l.level, "L3");
        assert_eq!(l.groups.len(), 2);
        assert_eq!(l.groups[0].threads, vec![0, 1]);
        assert_eq!(l.machine.groups[0].cores, 2);
        assert_eq!(l.machine.levels[0].instance, vec![vec![0, 1], vec![2, 3]]);
        assert!(p.layout(0, &[0]).is_err());
    }

    #[test]
    fn profiles_age() {
        let mut p = two_core();
        p.measured_unix = unix_now() - 60;
        assert!(p.fresh());
        p.measured_unix = unix_now() - 2 * MAX_AGE_SECS;
        assert!(!p.fresh());
        assert!(p.age_secs() >= 2 * MAX_AGE_SECS);
    }

    #[test]
    fn profile_round_trips_through_toml() {
        let p = two_core();
        let text = p.to_toml().unwrap();
        assert!(text.starts_with("# sluice plan machine profile"));
        let q = Profile::from_toml(&text).unwrap();
        assert_eq!(p, q);
        assert!(q.same_topology(&[0, 1], &p.caches));
        assert!(!q.same_topology(&[0], &p.caches));
        assert!(Profile::from_toml("cpus = 3").is_err());
    }

    #[test]
    fn fit_recovers_penalties_and_a_shrunken_last_level() {
        // A curve made by the model itself: base 5, L1 32K +1, L2 1M +4, L3 nominal 32M
        // but 8M effective, +30.
        let truth = [(32 * K, 1.0), (M, 4.0), (8 * M, 30.0)];
        let mut curve = Vec::new();
        let mut s = 16 * K;
        while s <= 128 * M {
            for b in [s, s + s / 2] {
                let c = 5.0
                    + truth
                        .iter()
                        .map(|&(cap, o)| model::miss_probability(cap as f64, b as f64) * o)
                        .sum::<f64>();
                curve.push(AccessPoint {
                    bytes: b,
                    cycles: c,
                });
            }
            s *= 2;
        }
        let (base, fit) = fit_levels(&curve, &[32 * K, M, 32 * M]);
        assert!((base - 5.0).abs() < 0.01, "base {}", base);
        assert_eq!(fit[0].0, 32 * K);
        assert_eq!(fit[1].0, M);
        assert_eq!(fit[2].0, 8 * M);
        for (f, t) in fit.iter().zip(truth) {
            assert!((f.1 - t.1).abs() < 0.05, "{:?} vs {:?}", f, t);
        }
        // A flat curve: no penalties, nominal sizes kept.
        let flat: Vec<AccessPoint> = curve
            .iter()
            .map(|p| AccessPoint {
                bytes: p.bytes,
                cycles: 5.0,
            })
            .collect();
        let (_, fit) = fit_levels(&flat, &[32 * K, M]);
        assert_eq!(fit, vec![(32 * K, 0.0), (M, 0.0)]);
    }

    #[test]
    fn shared_fit_tells_shared_from_private() {
        // Two CPUs; private 1M (+4), then a level of nominal 32M (+30).
        let levels = [(M, 4.0, true), (32 * M, 30.0, false)];
        let curve_for = |cap: f64| -> Vec<AccessPoint> {
            (0..8)
                .map(|i| {
                    let t = (2 * M) << i;
                    let c = 5.0
                        + model::miss_probability(M as f64, t as f64 / 2.0) * 4.0
                        + model::miss_probability(cap, t as f64) * 30.0;
                    AccessPoint {
                        bytes: t,
                        cycles: c,
                    }
                })
                .collect()
        };
        // Truly shared, 16M effective for both together.
        assert_eq!(
            fit_shared(&curve_for(16.0 * M as f64), 2, &levels, 1, 5.0, 32 * M),
            16 * M
        );
        // Each CPU in fact has its own 32M: 64M against the total footprint.
        assert_eq!(
            fit_shared(&curve_for(64.0 * M as f64), 2, &levels, 1, 5.0, 32 * M),
            64 * M
        );
        assert_eq!(fit_shared(&[], 2, &levels, 1, 5.0, 32 * M), 32 * M);
    }

    #[test]
    fn pointer_chain_is_one_cycle() {
        let mut w = vec![0u64; 8 * 64];
        let len = w.len();
        make_chain(&mut w, len, 5);
        let mut seen = std::collections::HashSet::new();
        let mut i = 0usize;
        for _ in 0..64 {
            assert!(seen.insert(i));
            i = w[i] as usize;
        }
        assert_eq!(i, 0);
    }
}
