//! `sluice bench scaling`: packets/s across worker threads (SMP Click's experiments).
//!
//! Every figure is the median of several runs of a configuration built for that thread count;
//! speedups are against the one-thread figure of the same invocation. Sections:
//! - `clone-min`: InfiniteSource -> Discard, one copy per thread;
//! - `clone-ip`: the Figure 8 IP router (conf/fake-iprouter.click), one copy per thread;
//! - `load`: SyntheticLoad work cloned per thread vs the same work pipelined in two stages
//!   across a ThreadSafeQueue, each with static (StaticThreadSched) and automatic placement;
//! - `stages`: a per-stage CPU cost table like SMP Click's Table 1, from the task cycle
//!   counters (`tasks` handler) and from variants that add or remove one stage;
//! - `crossing`: the cost per packet of moving packets between two threads through a
//!   ThreadSafeQueue, by batch size.

use std::time::Instant;

use sluice_core::{Packet, Router, RouterOptions};

use crate::bench::class_sum;

const USAGE: &str = "\
Usage: sluice bench scaling [--threads 1,2,4,...] [--packets N] [--runs R]
                            [--load N,S,CYCLES] [SECTION...]

Sections (default: all): clone-min clone-ip load stages crossing
  --threads LIST   thread counts to measure (default: 1 up to the available cores)
  --packets N      packets per source per run (default 2000000; clone-ip and load use N/4)
  --runs R         runs per figure, the median is reported (default 5)
  --load N,S,C     SyntheticLoad per stage: N random reads of an S-byte array and C cycles
                   (default 4,1M,200); `load` runs two such stages per packet
";

const FAKE_IPROUTER: &str = include_str!("../../../conf/fake-iprouter.click");

struct Settings {
    threads: Vec<usize>,
    packets: u64,
    runs: usize,
    load: (u32, String, u64),
}

/// Runs the scaling benchmarks; `args[0]` is the workload name (`scaling...`).
pub fn main(args: &[String]) -> Result<(), ()> {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut s = Settings {
        threads: (1..=cores).collect(),
        packets: 2_000_000,
        runs: 5,
        load: (4, "1M".into(), 200),
    };
    let mut sections = Vec::new();
    let mut i = 1;
    while i < args.len() {
        let val = |i: usize| args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--threads" | "-t" => {
                s.threads = val(i)
                    .split(',')
                    .map(|t| {
                        let t = t.trim().parse::<usize>().ok();
                        t.filter(|t| (1..=sluice_core::threads::MAX_THREADS).contains(t))
                    })
                    .collect::<Option<Vec<_>>>()
                    .filter(|v| !v.is_empty())
                    .ok_or_else(|| {
                        eprintln!(
                            "bench scaling: --threads 1,2,4 (each 1 to {})",
                            sluice_core::threads::MAX_THREADS
                        )
                    })?;
                i += 1;
            }
            "--packets" | "-n" => {
                s.packets = val(i)
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| eprintln!("bench scaling: --packets N"))?;
                i += 1;
            }
            "--runs" | "-r" => {
                s.runs = val(i)
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| eprintln!("bench scaling: --runs R"))?;
                i += 1;
            }
            "--load" => {
                let v = val(i);
                let f: Vec<&str> = v.split(',').collect();
                match (f.first().and_then(|n| n.parse().ok()), f.get(1), f.get(2)) {
                    (Some(n), Some(sz), Some(c)) if c.parse::<u64>().is_ok() => {
                        s.load = (n, sz.to_string(), c.parse().unwrap_or(0))
                    }
                    _ => {
                        eprintln!("bench scaling: --load N,S,CYCLES");
                        return Err(());
                    }
                }
                i += 1;
            }
            "--help" | "-h" => {
                print!("{}", USAGE);
                return Ok(());
            }
            w if w.starts_with('-') => {
                eprintln!("bench scaling: unknown option {}\n{}", w, USAGE);
                return Err(());
            }
            w => sections.push(w.to_string()),
        }
        i += 1;
    }
    if sections.is_empty() {
        sections = ["clone-min", "clone-ip", "load", "stages", "crossing"]
            .iter()
            .map(|x| x.to_string())
            .collect();
    }
    println!(
        "# sluice bench scaling: {} available cores, threads {:?}, median of {} runs",
        cores, s.threads, s.runs
    );
    for sec in &sections {
        match sec.as_str() {
            "scaling" => {}
            "clone-min" => clone_min(&s)?,
            "clone-ip" => clone_ip(&s)?,
            "load" => load(&s)?,
            "stages" => stages(&s)?,
            "crossing" => crossing(&s)?,
            other => {
                eprintln!("bench scaling: unknown section '{}'\n{}", other, USAGE);
                return Err(());
            }
        }
    }
    Ok(())
}

/// One measured run: elapsed seconds, the router afterwards.
fn run_once(text: &str, threads: usize) -> Result<(f64, Router), ()> {
    let lib = crate::library();
    let flat = sluice_lang::parse_config(text, "<scaling>", &[]).map_err(|d| {
        for e in d {
            eprintln!("{}", e);
        }
    })?;
    let mut r = Router::new(
        flat,
        &lib,
        RouterOptions {
            threads,
            ..Default::default()
        },
    )
    .map_err(|e| eprintln!("{}", e.join("\n")))?;
    // Each run on a fresh thread: the engine pins the thread that calls `run` to CPU 0, and
    // worker threads pick their CPU among those their creator may use, so a second run from
    // an already pinned thread would put every worker on CPU 0.
    std::thread::spawn(move || {
        let t = Instant::now();
        r.run_until_idle();
        (t.elapsed().as_secs_f64(), r)
    })
    .join()
    .map_err(|_| eprintln!("bench scaling: router thread panicked"))
    .inspect(|(el, _)| {
        if std::env::var_os("SLUICE_SCALING_DEBUG").is_some() {
            eprintln!("run: {} threads, {:.4} s", threads, el);
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v[v.len() / 2]
}

fn num(r: &mut Router, path: &str) -> u64 {
    r.read_path(path)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// Task statistics: element name, thread, runs, total cycles.
fn tasks(r: &Router) -> Vec<(String, usize, u64, u64)> {
    r.task_stats()
        .into_iter()
        .map(|t| (t.element, t.thread, t.runs, t.cycles))
        .collect()
}

fn task_cycles(t: &[(String, usize, u64, u64)], name: &str) -> u64 {
    t.iter().filter(|x| x.0 == name).map(|x| x.3).sum::<u64>()
}

/// Median packets/s of a configuration; delivered packets are counted by its Discards.
/// Also returns the median fraction of packets dropped by ThreadSafeQueues.
fn pps(s: &Settings, text: &str, threads: usize) -> Result<(f64, f64), ()> {
    let mut rates = Vec::new();
    let mut drops = Vec::new();
    // One unmeasured run first: pools, page tables and clocks warm up.
    run_once(text, threads)?;
    for _ in 0..s.runs {
        let (el, mut r) = run_once(text, threads)?;
        let got = class_sum(&mut r, "Discard", "count");
        let lost = class_sum(&mut r, "ThreadSafeQueue", "drops");
        rates.push(got as f64 / el);
        drops.push(lost as f64 / (got + lost).max(1) as f64);
    }
    Ok((median(rates), median(drops)))
}

fn header(title: &str, cols: &[&str]) {
    println!("\n## {}", title);
    print!("{:<8}", "threads");
    for c in cols {
        print!(" {:>22}", c);
    }
    println!();
}

fn cell(pps: f64, base: f64, drop: f64) -> String {
    let mut c = format!("{:.2} Mpps x{:.2}", pps / 1e6, pps / base.max(1e-9));
    if drop > 0.0005 {
        c.push_str(&format!(" d{:.0}%", drop * 100.0));
    }
    c
}

fn sched(names: &[(String, usize)]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let list: Vec<String> = names.iter().map(|(n, t)| format!("{} {}", n, t)).collect();
    format!("StaticThreadSched({});\n", list.join(", "))
}

fn clone_min(s: &Settings) -> Result<(), ()> {
    header(
        "(a) minimal forwarding, InfiniteSource -> Discard cloned per thread (64 bytes)",
        &["static", "automatic"],
    );
    let mut base = (0.0, 0.0);
    for &t in &s.threads {
        let mut text = String::new();
        let mut pin = Vec::new();
        for k in 0..t {
            text.push_str(&format!(
                "s{k} :: InfiniteSource(LENGTH 64, LIMIT {}, BURST 32, TIMESTAMP false) -> Discard;\n",
                s.packets
            ));
            pin.push((format!("s{k}"), k));
        }
        let (st, _) = pps(s, &format!("{}{}", text, sched(&pin)), t)?;
        let (au, _) = pps(s, &text, t)?;
        if base.0 == 0.0 {
            base = (st, au);
        }
        println!(
            "{:<8} {:>22} {:>22}",
            t,
            cell(st, base.0, 0.0),
            cell(au, base.1, 0.0)
        );
    }
    Ok(())
}

/// The body of conf/fake-iprouter.click as a compound element class, its source named `src`
/// and not stopping the router by itself.
fn fake_iprouter_class(limit: u64) -> String {
    let mut body = String::new();
    for l in FAKE_IPROUTER.lines() {
        let t = l.trim_start();
        if t.starts_with("//") || t.starts_with("define(") {
            continue;
        }
        body.push_str(l);
        body.push('\n');
    }
    let body = body
        .replace(", STOP true)", ")")
        .replacen("InfiniteSource(DATA", "src :: InfiniteSource(DATA", 1)
        .replace("$LIMIT", &limit.to_string())
        .replace("$BURST", "32");
    format!("elementclass FakeIPRouter {{\n{}}}\n", body)
}

fn clone_ip(s: &Settings) -> Result<(), ()> {
    header(
        "(b) Figure 8 IP router (conf/fake-iprouter.click) cloned per thread",
        &["static", "automatic"],
    );
    let class = fake_iprouter_class(s.packets / 4);
    let mut base = (0.0, 0.0);
    for &t in &s.threads {
        let mut text = class.clone();
        let mut pin = Vec::new();
        for k in 0..t {
            text.push_str(&format!("r{k} :: FakeIPRouter;\n"));
            pin.push((format!("r{k}/src"), k));
        }
        let (st, _) = pps(s, &format!("{}{}", text, sched(&pin)), t)?;
        let (au, _) = pps(s, &text, t)?;
        if base.0 == 0.0 {
            base = (st, au);
        }
        println!(
            "{:<8} {:>22} {:>22}",
            t,
            cell(st, base.0, 0.0),
            cell(au, base.1, 0.0)
        );
    }
    Ok(())
}

fn load(s: &Settings) -> Result<(), ()> {
    let (n, sz, c) = &s.load;
    let stage = |seed: usize| format!("SyntheticLoad({}, {}, CYCLES {}, SEED {})", n, sz, c, seed);
    header(
        &format!(
            "(c) two stages of SyntheticLoad({}, {}, CYCLES {}) per packet: cloned vs pipelined",
            n, sz, c
        ),
        &[
            "cloned static",
            "cloned automatic",
            "pipelined static",
            "pipelined automatic",
        ],
    );
    let limit = s.packets / 4;
    let mut base = [0.0f64; 4];
    for &t in &s.threads {
        // Cloned: each thread runs both stages of its own copy.
        let mut cl = String::new();
        let mut cl_pin = Vec::new();
        for k in 0..t {
            cl.push_str(&format!(
                "s{k} :: InfiniteSource(LENGTH 64, LIMIT {limit}, BURST 32, TIMESTAMP false) -> {} -> {} -> Discard;\n",
                stage(2 * k + 1),
                stage(2 * k + 2)
            ));
            cl_pin.push((format!("s{k}"), k));
        }
        // Pipelined: stage 1 and stage 2 of each copy on neighbouring threads; one copy per
        // two threads (one thread: both stages of one copy on it).
        let copies = (t / 2).max(1);
        let mut pl = String::new();
        let mut pl_pin = Vec::new();
        for k in 0..copies {
            pl.push_str(&format!(
                "s{k} :: InfiniteSource(LENGTH 64, LIMIT {}, BURST 32, TIMESTAMP false) -> {} -> ThreadSafeQueue(4096) -> u{k} :: Unqueue -> {} -> Discard;\n",
                limit * t as u64 / copies as u64,
                stage(2 * k + 1),
                stage(2 * k + 2)
            ));
            pl_pin.push((format!("s{k}"), 2 * k));
            pl_pin.push((format!("u{k}"), (2 * k + 1) % t));
        }
        let figs = [
            pps(s, &format!("{}{}", cl, sched(&cl_pin)), t)?,
            pps(s, &cl, t)?,
            pps(s, &format!("{}{}", pl, sched(&pl_pin)), t)?,
            pps(s, &pl, t)?,
        ];
        if base[0] == 0.0 {
            for (b, f) in base.iter_mut().zip(figs.iter()) {
                *b = f.0;
            }
        }
        print!("{:<8}", t);
        for (f, b) in figs.iter().zip(base.iter()) {
            print!(" {:>22}", cell(f.0, *b, f.1));
        }
        println!();
    }
    println!("(xK: speedup vs the same column at the first thread count; dP%: packets dropped at the full ThreadSafeQueue)");
    Ok(())
}

/// Median over runs of (elapsed ns per delivered packet, task cycles per packet by task name).
fn variant(
    s: &Settings,
    text: &str,
    threads: usize,
    task_names: &[&str],
) -> Result<(f64, Vec<f64>), ()> {
    let mut ns = Vec::new();
    let mut cyc: Vec<Vec<f64>> = vec![Vec::new(); task_names.len()];
    for _ in 0..s.runs {
        let (el, mut r) = run_once(text, threads)?;
        let got = class_sum(&mut r, "Discard", "count").max(1);
        let sent = num(&mut r, "src.count").max(1);
        ns.push(el * 1e9 / got as f64);
        let t = tasks(&r);
        for (i, name) in task_names.iter().enumerate() {
            // The source task handles every packet sent, a consumer every packet delivered.
            let per = if *name == "src" { sent } else { got };
            cyc[i].push(task_cycles(&t, name) as f64 / per as f64);
        }
    }
    Ok((median(ns), cyc.into_iter().map(median).collect()))
}

/// Median ns per packet of taking `k` packets from the pool and of freeing them.
fn alloc_free(s: &Settings) -> (f64, f64) {
    // One batch at a time, as a source allocates and a Discard frees.
    let k = 32;
    let rounds = (s.packets / k as u64).max(1);
    let mut a = Vec::new();
    let mut f = Vec::new();
    let data = [0x5au8; 64];
    let mut v: Vec<Packet> = Vec::with_capacity(k);
    for _ in 0..s.runs {
        let (mut ta, mut tf) = (0.0, 0.0);
        for _ in 0..rounds {
            let t = Instant::now();
            for _ in 0..k {
                v.push(Packet::from_bytes(std::hint::black_box(&data)));
            }
            ta += t.elapsed().as_secs_f64();
            let t = Instant::now();
            v.clear();
            tf += t.elapsed().as_secs_f64();
        }
        let n = (rounds * k as u64) as f64;
        a.push(ta * 1e9 / n);
        f.push(tf * 1e9 / n);
    }
    (median(a), median(f))
}

fn stages(s: &Settings) -> Result<(), ()> {
    println!("\n## Per-stage CPU cost of forwarding a 64-byte packet (cf. SMP Click Table 1)");
    let src = |rest: &str| {
        format!(
            "src :: InfiniteSource(LENGTH 64, LIMIT {}, BURST 32, TIMESTAMP false) -> {};\n",
            s.packets, rest
        )
    };
    let (alloc, free) = alloc_free(s);
    let (a_ns, a_c) = variant(s, &src("Discard"), 1, &["src"])?;
    let (b_ns, _) = variant(s, &src("Null -> Discard"), 1, &["src"])?;
    let q1 = src("Queue(4096) -> u :: Unqueue -> Discard");
    let (c_ns, c_c) = variant(s, &q1, 1, &["src", "u"])?;
    let tq = src("ThreadSafeQueue(4096) -> u :: Unqueue -> Discard");
    let (e_ns, e_c) = variant(s, &tq, 1, &["src", "u"])?;
    let (f_ns, f_c) = variant(
        s,
        &format!("{}StaticThreadSched(src 0, u 1);\n", tq),
        2,
        &["src", "u"],
    )?;
    // Cycles of the cycle counter per ns, from the one-task variant (nearly all time in it).
    let hz = a_c[0] / a_ns;
    let discard = a_ns - alloc - free;
    let row = |name: &str, v: [Option<f64>; 3]| {
        print!("{:<34}", name);
        for x in v {
            match x {
                Some(x) => print!(" {:>14.2}", x),
                None => print!(" {:>14}", "-"),
            }
        }
        println!();
    };
    println!(
        "{:<34} {:>14} {:>14} {:>14}",
        "ns/packet", "1T Queue", "1T TSQueue", "2T TSQueue"
    );
    let enq = |c: &[f64]| c[0] / hz - alloc;
    let deq = |c: &[f64]| c[1] / hz - discard.max(0.0) - free;
    row("source: pool get + 64-byte fill", [Some(alloc); 3]);
    row(
        "push path: one more element hop",
        [Some(b_ns - a_ns), None, None],
    );
    row(
        "queue enqueue (source task - source)",
        [Some(enq(&c_c)), Some(enq(&e_c)), Some(enq(&f_c))],
    );
    row(
        "dequeue/pull (puller task - rest)",
        [Some(deq(&c_c)), Some(deq(&e_c)), Some(deq(&f_c))],
    );
    row("transmit stand-in: Discard", [Some(discard); 3]);
    row("recycle: pool put", [Some(free); 3]);
    row(
        "total measured (wall clock)",
        [Some(c_ns), Some(e_ns), Some(f_ns)],
    );
    row(
        "  source task (cycle counter)",
        [Some(c_c[0] / hz), Some(e_c[0] / hz), Some(f_c[0] / hz)],
    );
    row(
        "  puller task (cycle counter)",
        [Some(c_c[1] / hz), Some(e_c[1] / hz), Some(f_c[1] / hz)],
    );
    println!(
        "(InfiniteSource -> Discard: {:.2} ns/packet; cycle counter {:.2} ticks/ns from it; 2T: source on thread 0, puller on thread 1, whose packets are freed there; 2T wall clock is per delivered packet with both threads busy)",
        a_ns, hz
    );
    Ok(())
}

fn crossing(s: &Settings) -> Result<(), ()> {
    println!("\n## Queue crossing: InfiniteSource on thread 0 -> ThreadSafeQueue(65536) -> Unqueue on thread 1 -> Discard");
    println!(
        "{:<8} {:>14} {:>14} {:>16} {:>16} {:>10}",
        "batch", "ns/pkt wall", "Mpps", "producer cyc/pkt", "consumer cyc/pkt", "dropped"
    );
    for b in [1usize, 4, 16, 32, 64, 256] {
        let text = format!(
            "src :: InfiniteSource(LENGTH 64, LIMIT {}, BURST {b}, TIMESTAMP false) -> q :: ThreadSafeQueue(65536) -> u :: Unqueue(BURST {b}) -> Discard;\nStaticThreadSched(src 0, u 1);\n",
            s.packets
        );
        let mut ns = Vec::new();
        let mut pc = Vec::new();
        let mut cc = Vec::new();
        let mut dr = Vec::new();
        for _ in 0..s.runs {
            let (el, mut r) = run_once(&text, 2)?;
            let got = class_sum(&mut r, "Discard", "count").max(1);
            let lost = num(&mut r, "q.drops");
            let t = tasks(&r);
            ns.push(el * 1e9 / got as f64);
            pc.push(task_cycles(&t, "src") as f64 / s.packets as f64);
            cc.push(task_cycles(&t, "u") as f64 / got as f64);
            dr.push(lost as f64 / s.packets as f64);
        }
        let n = median(ns);
        println!(
            "{:<8} {:>14.2} {:>14.2} {:>16.1} {:>16.1} {:>9.1}%",
            b,
            n,
            1e3 / n,
            median(pc),
            median(cc),
            median(dr) * 100.0
        );
    }
    println!("(BURST of both the source and the Unqueue; Sluice moves packets through the ring in batches of up to BURST)");
    Ok(())
}
