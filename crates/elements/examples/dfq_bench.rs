//! DFQ benchmark (Figures 8, 9 and 10 of the Panama paper, 003_*).
//!
//! Figure 10, extended 100x: DFQSched's packet rate with 320, 3,200, 32,000 and 320,000
//! flows of 128-byte packets, quanta of 32, 64 and 128 bytes. Each pass queues the same
//! 320,000 packets (round robin over the flows, so every flow is backlogged and the packet
//! buffers are as far out of cache whatever the number of flows), then pulls batches until
//! all are gone; the rate counts the packets in and out (enqueue, scheduling, batch
//! building). A first fill and drain of the same router, not timed, allocates the queues.
//!
//! Figures 8 and 9: FIFO (a Queue, push and pull) against DFQ (DFQSched in batch mode plus
//! DFQDemux rebuilding the packets, the whole link protocol) by packet size, 32 flows, in
//! bytes/s and packets/s, for quanta of 32, 64 and 128 bytes (DFQ only for packets larger
//! than the quantum, as in the paper).
//!
//! Every figure is the median of five passes. Each Figure 10 pass runs in a process of its
//! own, started afresh from the same memory state, and the flow counts alternate within a
//! round of passes, so that no flow count inherits a heap that the ones before it
//! fragmented. FIFO and DFQ alternate within a run. Output
//! is CSV lines on standard output (`fig10,FLOWS,QUANTUM,PPS` and
//! `fig89,SCHED,QUANTUM,SIZE,PPS,BPS`), read by `bench/qos/plot_dfq.py`.
//!
//! The batches pulled are dropped as they come, as a link would send them; keeping them all
//! until the end would make every batch a fresh allocation while few input packets are done
//! (with 320,000 flows and quantum 32, none is before the fifth cycle), a cost of the harness, not of DFQ.
//!
//! Run: `cargo run --release -p sluice-elements --example dfq_bench -- [PASSES [FLOWS...]]`
//! (with FLOWS, only Figure 10 for those flow counts). `dfq_bench --pass FLOWS QUANTUM` is
//! one Figure 10 pass, printing its packets/s.

use std::process::Command;
use std::time::Instant;

use sluice_core::{Batch, Packet, Router, BATCH_MAX};
use sluice_testkit::Kit;

/// A router on the wall clock.
fn build(conf: &str) -> Router {
    Kit::new().router(conf)
}

/// Pushes `packets` out of element `src` in batches.
fn push_all(r: &mut Router, src: usize, packets: Vec<Packet>) {
    let mut it = packets.into_iter().peekable();
    while it.peek().is_some() {
        let mut b = Batch::new();
        while !b.is_full() {
            match it.next() {
                Some(p) => {
                    let _ = b.push(p);
                }
                None => break,
            }
        }
        r.with_element(src, |_, cx| cx.push(0, b));
    }
}

/// Pulls from input 0 of element `sink` until a pull is empty, handing each packet pulled
/// to `keep`.
fn pull_each(r: &mut Router, sink: usize, mut keep: impl FnMut(Packet)) {
    loop {
        let b = r
            .with_element(sink, |_, cx| cx.pull(0, BATCH_MAX))
            .expect("sink free");
        if b.is_empty() {
            return;
        }
        b.into_iter().for_each(&mut keep);
    }
}

/// Pulls from input 0 of element `sink` until a pull is empty; the packets pulled.
fn pull_all(r: &mut Router, sink: usize) -> Vec<Packet> {
    let mut out = Vec::new();
    pull_each(r, sink, |p| out.push(p));
    out
}

/// `n` packets of `size` bytes spread round robin over `flows` flows.
fn traffic(flows: u32, n: usize, size: usize) -> Vec<Packet> {
    (0..n)
        .map(|k| {
            let mut p = Packet::from_bytes(&vec![0x5A; size]);
            p.anno_mut().aggregate = k as u32 % flows;
            p
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A DFQSched configuration with quantum `q` (burst 1280 bytes, T = 1 ms).
fn dfq_args(flows: u32, q: usize) -> String {
    let delay_ms = 1280.0 / q as f64;
    format!(
        "FLOWS {flows}, BANDWIDTH 100Gbps, CYCLE 1ms, BURST 1280, DELAY {delay_ms}ms, \
         CAPACITY 1000, LIMIT 10000000"
    )
}

/// One Figure 10 pass: packets per second through DFQSched.
fn fig10_pass(flows: u32, q: usize) -> f64 {
    let mut r = build(&format!(
        "i :: Idle -> s :: DFQSched({}) -> d :: Discard(false)",
        dfq_args(flows, q)
    ));
    let (i, d) = (r.element_index("i").unwrap(), r.element_index("d").unwrap());
    let n = 320_000;
    push_all(&mut r, i, traffic(flows, n, 128));
    pull_all(&mut r, d);
    let pkts = traffic(flows, n, 128);
    let t = Instant::now();
    push_all(&mut r, i, pkts);
    let mut batches = 0;
    pull_each(&mut r, d, |_| batches += 1);
    let secs = t.elapsed().as_secs_f64();
    assert!(batches > 0);
    assert_eq!(
        r.read_path("s.packets").unwrap().trim(),
        (2 * n).to_string()
    );
    n as f64 / secs
}

/// One Figures 8/9 pass with `n` packets of `size` bytes: packets per second through a
/// Queue (`q` = None) or DFQSched and DFQDemux with quantum `q`.
fn fig89_pass(q: Option<usize>, size: usize, n: usize) -> f64 {
    let pkts = traffic(32, n, size);
    match q {
        None => {
            let mut r = build("i :: Idle -> Queue(100000) -> d :: Discard(false)");
            let (i, d) = (r.element_index("i").unwrap(), r.element_index("d").unwrap());
            let t = Instant::now();
            push_all(&mut r, i, pkts);
            let out = pull_all(&mut r, d);
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(out.len(), n);
            n as f64 / secs
        }
        Some(q) => {
            let mut r = build(&format!(
                "i :: Idle -> DFQSched({}) -> d :: Discard(false)",
                dfq_args(32, q).replace("CAPACITY 1000", "CAPACITY 100000")
            ));
            let mut m = build("j :: Idle -> m :: DFQDemux -> Discard");
            let (i, d) = (r.element_index("i").unwrap(), r.element_index("d").unwrap());
            let j = m.element_index("j").unwrap();
            let t = Instant::now();
            push_all(&mut r, i, pkts);
            let batches = pull_all(&mut r, d);
            push_all(&mut m, j, batches);
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(m.read_path("m.packets").unwrap().trim(), n.to_string());
            n as f64 / secs
        }
    }
}

/// One Figure 10 pass in a fresh process of this program: packets per second.
fn fig10_fresh(flows: u32, q: usize) -> f64 {
    let exe = std::env::current_exe().expect("own path");
    let out = Command::new(exe)
        .args(["--pass", &flows.to_string(), &q.to_string()])
        .output()
        .expect("pass runs");
    assert!(out.status.success(), "pass {flows} {q} failed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim().parse().expect("pass prints packets/s")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, flows, q] = args.as_slice() {
        if flag == "--pass" {
            let (flows, q) = (flows.parse().expect("FLOWS"), q.parse().expect("QUANTUM"));
            println!("{:.0}", fig10_pass(flows, q));
            return;
        }
    }
    let passes: usize = args.first().map_or(5, |a| a.parse().expect("PASSES"));
    let only: Vec<u32> = args[1.min(args.len())..]
        .iter()
        .map(|a| a.parse().expect("FLOWS"))
        .collect();
    let counts: Vec<u32> = [320u32, 3_200, 32_000, 320_000]
        .into_iter()
        .filter(|f| only.is_empty() || only.contains(f))
        .collect();
    for q in [32usize, 64, 128] {
        let mut runs = vec![Vec::new(); counts.len()];
        for _ in 0..passes {
            for (&flows, v) in counts.iter().zip(&mut runs) {
                v.push(fig10_fresh(flows, q));
            }
        }
        for (flows, v) in counts.iter().zip(runs) {
            println!("fig10,{flows},{q},{:.0}", median(v));
        }
    }
    if !only.is_empty() {
        return;
    }
    let n = 64_000;
    for size in [64usize, 128, 256, 512, 1024, 1500] {
        let mut runs: Vec<(Option<usize>, Vec<f64>)> = [None, Some(32), Some(64), Some(128)]
            .into_iter()
            .filter(|q| q.is_none_or(|q| size > q))
            .map(|q| (q, Vec::new()))
            .collect();
        for _ in 0..passes {
            for (q, v) in &mut runs {
                v.push(fig89_pass(*q, size, n));
            }
        }
        for (q, v) in runs {
            let pps = median(v);
            let name = if q.is_some() { "dfq" } else { "fifo" };
            println!(
                "fig89,{name},{},{size},{pps:.0},{:.0}",
                q.unwrap_or(0),
                pps * size as f64
            );
        }
    }
}
