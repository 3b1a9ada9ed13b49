//! `sluice bench`: the standard workloads, timed in-process.
//!
//! Each workload is a configuration run for a fixed number of 64-byte packets; the figure is
//! the median of several runs. Ratios are against a baseline measured in the same invocation:
//! the bare cost of taking a packet from the pool, writing 64 bytes and freeing it.

use std::time::Instant;

use sluice_core::{Router, RouterOptions};

const USAGE: &str = "\
Usage: sluice bench [--packets N] [--runs R] [WORKLOAD...]

Workloads (default: all):
  source-discard      InfiniteSource -> Discard
  source-counter      InfiniteSource -> Counter -> Discard
  null-chain          InfiniteSource -> Null x K -> Discard for K = 0, 1, 2, 4, 8, 16;
                      reports the cost of one more element per packet
  queue               InfiniteSource -> Queue -> Unqueue -> Discard
  CONFIG.click        any configuration file whose sources stop by themselves;
                      its packets are counted by the `count` handlers of its Discards
";

struct Settings {
    packets: u64,
    runs: usize,
}

/// Runs the benchmark workloads named in `args`.
pub fn main(args: &[String]) -> Result<(), ()> {
    let mut s = Settings {
        packets: 20_000_000,
        runs: 5,
    };
    if args.first().is_some_and(|a| a.starts_with("scaling")) {
        return crate::scaling::main(args);
    }
    let mut names = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--packets" | "-n" => {
                i += 1;
                s.packets = args
                    .get(i)
                    .and_then(|v| v.parse().ok())
                    .ok_or_else(|| eprintln!("bench: --packets N"))?;
            }
            "--runs" | "-r" => {
                i += 1;
                s.runs = args
                    .get(i)
                    .and_then(|v| v.parse().ok())
                    .filter(|&r| r > 0)
                    .ok_or_else(|| eprintln!("bench: --runs R"))?;
            }
            "--help" => {
                print!("{}", USAGE);
                return Ok(());
            }
            w => names.push(w.to_string()),
        }
        i += 1;
    }
    if names.is_empty() {
        names = ["source-discard", "source-counter", "null-chain", "queue"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    }
    let base = baseline(&s);
    println!(
        "# sluice bench: {} packets of 64 bytes per run, median of {} runs, one thread",
        s.packets, s.runs
    );
    println!(
        "# baseline (pool get + 64-byte write + free): {:.2} ns/packet",
        base
    );
    println!(
        "{:<34} {:>10} {:>10} {:>12}",
        "workload", "Mpps", "ns/pkt", "x baseline"
    );
    for n in &names {
        match n.as_str() {
            "source-discard" => report(
                "InfiniteSource -> Discard",
                time_config(&s, &source("Discard"))?,
                base,
            ),
            "source-counter" => report(
                "InfiniteSource -> Counter -> Discard",
                time_config(&s, &source("Counter -> Discard"))?,
                base,
            ),
            "queue" => report(
                "InfiniteSource -> Queue -> Unqueue -> Discard",
                time_config(&s, &source("Queue -> Unqueue -> Discard"))?,
                base,
            ),
            "null-chain" => null_chain(&s, base)?,
            file => {
                let text = std::fs::read_to_string(file)
                    .map_err(|e| eprintln!("bench: {}: {}", file, e))?;
                report(file, time_config(&s, &text)?, base);
            }
        }
    }
    Ok(())
}

fn source(rest: &str) -> String {
    format!(
        "InfiniteSource(LENGTH 64, LIMIT $N, STOP true, TIMESTAMP false) -> {}",
        rest
    )
}

fn report(name: &str, ns: f64, base: f64) {
    println!(
        "{:<34} {:>10.2} {:>10.2} {:>12.2}",
        name,
        1e3 / ns,
        ns,
        ns / base
    );
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).expect("timings are finite"));
    v[v.len() / 2]
}

/// Median ns per packet of a configuration; `$N` in it is the packet count.
fn time_config(s: &Settings, text: &str) -> Result<f64, ()> {
    let lib = sluice_elements::library();
    let mut samples = Vec::new();
    for _ in 0..s.runs {
        let defines = [("N".to_string(), s.packets.to_string())];
        let flat = sluice_lang::parse_config(text, "<bench>", &defines).map_err(|d| {
            for e in d {
                eprintln!("{}", e);
            }
        })?;
        let mut r = Router::new(flat, &lib, RouterOptions::default())
            .map_err(|e| eprintln!("{}", e.join("\n")))?;
        let t = Instant::now();
        r.run();
        let el = t.elapsed().as_secs_f64();
        let counted = discarded(&mut r).max(1);
        samples.push(el * 1e9 / counted as f64);
    }
    Ok(median(samples))
}

/// Packets counted by the configuration's Discard elements.
fn discarded(r: &mut Router) -> u64 {
    let mut total = 0;
    for e in 0..r.nelements() {
        if r.read_handler(Some(e), "class")
            .map(|c| c.trim() == "Discard")
            .unwrap_or(false)
        {
            total += r
                .read_handler(Some(e), "count")
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    total
}

fn null_chain(s: &Settings, base: f64) -> Result<(), ()> {
    let ks = [0usize, 1, 2, 4, 8, 16];
    let mut pts = Vec::new();
    for &k in &ks {
        let chain = "Null -> ".repeat(k);
        let ns = time_config(s, &source(&format!("{}Discard", chain)))?;
        report(
            &format!("InfiniteSource -> Null x{} -> Discard", k),
            ns,
            base,
        );
        pts.push((k as f64, ns));
    }
    let n = pts.len() as f64;
    let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
    let sxx: f64 = pts.iter().map(|p| p.0 * p.0).sum();
    let sxy: f64 = pts.iter().map(|p| p.0 * p.1).sum();
    let slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    println!(
        "{:<34} {:>10} {:>10.2}",
        "cost of one more element (fit)", "", slope
    );
    Ok(())
}

/// The floor: taking a fresh packet from the pool, filling 64 bytes, and freeing it.
fn baseline(s: &Settings) -> f64 {
    let data = [0x5au8; 64];
    let mut samples = Vec::new();
    for _ in 0..s.runs {
        let t = Instant::now();
        let mut sink = 0usize;
        for _ in 0..s.packets {
            let p = sluice_core::Packet::from_bytes(std::hint::black_box(&data));
            sink = sink.wrapping_add(p.len());
            drop(std::hint::black_box(p));
        }
        std::hint::black_box(sink);
        samples.push(t.elapsed().as_secs_f64() * 1e9 / s.packets as f64);
    }
    median(samples)
}
