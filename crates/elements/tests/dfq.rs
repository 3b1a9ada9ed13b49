//! Behaviour tests of DFQSched and DFQDemux through real configurations, on simulated time.
//!
//! Packets are injected by pushing out of an `Idle` element and DFQSched is pulled through an
//! inactive `Discard`. Batches are checked with this file's own decoder of the batch format
//! (not `sluice_wire::dfq`), and fairness and delays are checked against bounds computed here
//! from the reservations: the token-bucket envelope of each flow's service and the delay bound
//! (⌈P/Q⌉ + 3)·T.

use std::collections::HashMap;

use sluice_core::{Packet, Router, Timestamp};
use sluice_testkit::{
    config_error, fuzz_seeds, inject_packets, num, pull, read, router, taken, Kit,
};

/// A packet of flow `flow` (aggregate annotation), `len` bytes (at least 8): the flow id and
/// a sequence number, then filler.
fn pkt(flow: u32, seq: u32, len: usize) -> Packet {
    let mut d = vec![0xA5u8; len.max(8)];
    d[..4].copy_from_slice(&flow.to_be_bytes());
    d[4..8].copy_from_slice(&seq.to_be_bytes());
    let mut p = Packet::from_bytes(&d);
    p.anno_mut().aggregate = flow;
    p
}

/// Reads handler `path` with parameter `p`, trimmed.
fn param(r: &mut Router, path: &str, p: &str) -> String {
    r.read_path_param(path, Some(p))
        .unwrap_or_else(|e| panic!("{path} {p}: {e}"))
        .trim()
        .to_string()
}

/// One decoded batch: cycle, first flow, and the quanta (flow, bytes).
#[derive(Debug)]
struct Decoded {
    cycle: u32,
    first: u32,
    quanta: Vec<(u32, Vec<u8>)>,
}

/// This test's own decoder of the batch layout (big-endian: magic 0xDF, version 1, u16
/// length, u32 cycle, u32 first flow, u64 bitmap, then per set bit a u16 length and bytes).
fn decode(d: &[u8]) -> Decoded {
    assert!(d.len() >= 20, "short batch");
    assert_eq!((d[0], d[1]), (0xDF, 1), "magic and version");
    let len = u16::from_be_bytes([d[2], d[3]]) as usize;
    assert_eq!(len, d.len(), "length field");
    let cycle = u32::from_be_bytes(d[4..8].try_into().unwrap());
    let first = u32::from_be_bytes(d[8..12].try_into().unwrap());
    let bitmap = u64::from_be_bytes(d[12..20].try_into().unwrap());
    assert_eq!(bitmap & 1, 1, "bit 0 is the first flow");
    let mut at = 20;
    let mut quanta = Vec::new();
    for bit in 0..64 {
        if bitmap >> bit & 1 == 1 {
            let q = u16::from_be_bytes([d[at], d[at + 1]]) as usize;
            assert!(q > 0);
            quanta.push((first + bit, d[at + 2..at + 2 + q].to_vec()));
            at += 2 + q;
        }
    }
    assert_eq!(at, len, "quanta fill the batch");
    Decoded {
        cycle,
        first,
        quanta,
    }
}

/// A router `i :: Idle -> s :: DFQSched(ARGS) -> d :: Discard(false)`.
fn sched(args: &str) -> Router {
    router(&format!(
        "i :: Idle -> s :: DFQSched({args}) -> d :: Discard(false)"
    ))
}

/// Pulls every batch out of `r`'s scheduler.
fn drain_batches(r: &mut Router) -> Vec<Packet> {
    let mut out = Vec::new();
    loop {
        let b = pull(r, "d", 0, 32);
        if b.is_empty() {
            return out;
        }
        out.extend(b);
    }
}

/// Rebuilds each flow's packets from decoded batches with this file's own reassembly.
fn rebuild(batches: &[Decoded]) -> HashMap<u32, Vec<Vec<u8>>> {
    let mut streams: HashMap<u32, Vec<u8>> = HashMap::new();
    for b in batches {
        for (f, q) in &b.quanta {
            streams.entry(*f).or_default().extend_from_slice(q);
        }
    }
    streams
        .into_iter()
        .map(|(f, s)| {
            let mut pkts = Vec::new();
            let mut at = 0;
            while at < s.len() {
                let n = u16::from_be_bytes([s[at], s[at + 1]]) as usize;
                pkts.push(s[at + 2..at + 2 + n].to_vec());
                at += 2 + n;
            }
            (f, pkts)
        })
        .collect()
}

/// A demultiplexing router `j :: Idle -> m :: DFQDemux(ARGS) -> c :: TestCapture`.
fn demux(args: &str) -> Router {
    router(&format!(
        "j :: Idle -> m :: DFQDemux({args}) -> c :: TestCapture"
    ))
}

#[test]
fn batches_round_trip_through_the_demultiplexer_with_a_map_table() {
    // Quanta of 32 bytes (BURST 320, DELAY 10 cycles): packets of every size are split.
    let mut r = sched("FLOWS 8, CYCLE 1ms, BURST 320, DELAY 10ms, RATE 1MBps");
    assert_eq!(param(&mut r, "s.quantum", "3"), "32");
    let sizes = [8usize, 9, 31, 32, 33, 100, 300, 1400];
    let mut sent: HashMap<u32, Vec<Vec<u8>>> = HashMap::new();
    let mut input = Vec::new();
    for (k, &len) in sizes.iter().enumerate() {
        for f in [0u32, 3, 7] {
            let p = pkt(f, k as u32, len + f as usize);
            sent.entry(f).or_default().push(p.data().to_vec());
            input.push(p);
        }
    }
    inject_packets(&mut r, "i", 0, input);
    let batches = drain_batches(&mut r);
    assert_eq!(num(&mut r, "s.length"), 0);
    let decoded: Vec<Decoded> = batches.iter().map(|b| decode(b.data())).collect();
    // At most one quantum of at most Q bytes per flow per cycle, flows in id order.
    let mut per_cycle: HashMap<(u32, u32), usize> = HashMap::new();
    for d in &decoded {
        let ids: Vec<u32> = d.quanta.iter().map(|q| q.0).collect();
        assert!(ids.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(ids[0], d.first);
        for (f, q) in &d.quanta {
            assert!(q.len() <= 32);
            *per_cycle.entry((d.cycle, *f)).or_default() += 1;
        }
    }
    assert!(per_cycle.values().all(|&n| n == 1));
    assert_eq!(rebuild(&decoded), sent);

    // DFQDemux rebuilds the same packets, in order, with mapped flow ids.
    let mut m = demux("MAP 0-3 100, MAP 7 5");
    inject_packets(&mut m, "j", 0, batches);
    let got = taken(&mut m, "c");
    let mut by_out: HashMap<u32, Vec<Vec<u8>>> = HashMap::new();
    for p in &got {
        by_out
            .entry(p.anno().aggregate)
            .or_default()
            .push(p.data().to_vec());
    }
    assert_eq!(by_out[&100], sent[&0]);
    assert_eq!(by_out[&103], sent[&3]);
    assert_eq!(by_out[&5], sent[&7]);
    assert_eq!(num(&mut m, "m.packets"), 24);
    assert_eq!(num(&mut m, "m.pending"), 0);
    assert_eq!(num(&mut m, "m.drops"), 0);
}

#[test]
fn a_batch_packet_respects_the_window_and_the_mtu() {
    let mut r = sched("FLOWS 200, BURST 1000, DELAY 10ms, MTU 200");
    assert_eq!(param(&mut r, "s.quantum", "0"), "100");
    inject_packets(&mut r, "i", 0, (0..200).map(|f| pkt(f, 0, 60)));
    let decoded: Vec<Decoded> = drain_batches(&mut r)
        .iter()
        .map(|b| {
            assert!(b.len() <= 200);
            decode(b.data())
        })
        .collect();
    for d in &decoded {
        assert!(d.quanta.iter().all(|(f, _)| f - d.first < 64));
    }
    // Every flow's one packet (62 bytes with its prefix) in one quantum, in one cycle.
    assert_eq!(decoded.iter().map(|d| d.quanta.len()).sum::<usize>(), 200);
    assert!(decoded.iter().all(|d| d.cycle == decoded[0].cycle));
}

/// Bytes served per flow, by decoding the batches.
fn served(decoded: &[Decoded]) -> HashMap<u32, u64> {
    let mut m = HashMap::new();
    for d in decoded {
        for (f, q) in &d.quanta {
            *m.entry(*f).or_default() += q.len() as u64;
        }
    }
    m
}

#[test]
fn backlogged_flows_share_in_proportion_to_their_reservations() {
    // Rates 1:2:4 (B·T = 50, 100, 200 bytes), bursts 2000, quanta 400: every flow always
    // backlogged. Each flow's service stays within its token-bucket envelope
    // P + B·T·cycles, and beyond the bursts the shares follow the rates.
    let mut r = sched(
        "FLOWS 3, CYCLE 1ms, RESERVE 0 50kBps 2000 5ms, RESERVE 1 100kBps 2000 5ms, \
         RESERVE 2 200kBps 2000 5ms, CAPACITY 100000, MTU 1500",
    );
    let n = 2000;
    inject_packets(
        &mut r,
        "i",
        0,
        (0..n).flat_map(|k| (0..3).map(move |f| pkt(f, k, 200))),
    );
    let mut decoded = Vec::new();
    for _ in 0..300 {
        decoded.extend(pull(&mut r, "d", 0, 1).iter().map(|b| decode(b.data())));
    }
    let cycles = u64::from(decoded.last().unwrap().cycle);
    let bytes = served(&decoded);
    let bt = [50u64, 100, 200];
    for f in 0..3u32 {
        let envelope = 2000 + bt[f as usize] * (cycles + 1);
        let got = bytes[&f];
        assert!(got <= envelope, "flow {f}: {got} > {envelope}");
        assert!(
            got + 400 >= envelope - bt[f as usize],
            "flow {f}: {got} vs {envelope}"
        );
    }
    let beyond = |f: u32| (bytes[&f] - 2000) as f64 / bt[f as usize] as f64;
    for f in 1..3 {
        let ratio = beyond(f) / beyond(0);
        assert!((ratio - 1.0).abs() < 0.05, "flow {f} share ratio {ratio}");
    }
}

#[test]
fn a_flow_is_ineligible_once_its_allowance_is_used() {
    // Flow 0: burst 1000, B·T = 100 bytes, quantum 250; flow 1 a large reservation. Flow 0
    // gets full quanta until its credit is spent, then only what it earns per cycle, while
    // flow 1 keeps its full quantum every cycle: by the end of the k-th cycle flow 0 has had
    // min(250·k, 1000 + 100·(k-1)) bytes.
    let mut r = sched(
        "FLOWS 2, CYCLE 1ms, RESERVE 0 100kBps 1000 4ms, RESERVE 1 10MBps 100000 100ms, \
         CAPACITY 100000",
    );
    assert_eq!(param(&mut r, "s.quantum", "0"), "250");
    assert_eq!(param(&mut r, "s.quantum", "1"), "1000");
    inject_packets(
        &mut r,
        "i",
        0,
        (0..400).flat_map(|k| (0..2).map(move |f| pkt(f, k, 500))),
    );
    let decoded: Vec<Decoded> = (0..40)
        .flat_map(|_| pull(&mut r, "d", 0, 1))
        .map(|b| decode(b.data()))
        .collect();
    let mut by_cycle: HashMap<u32, HashMap<u32, usize>> = HashMap::new();
    for d in &decoded {
        for (f, q) in &d.quanta {
            *by_cycle.entry(d.cycle).or_default().entry(*f).or_default() += q.len();
        }
    }
    let mut cycles: Vec<u32> = by_cycle.keys().copied().collect();
    cycles.sort();
    let q0: Vec<usize> = cycles.iter().map(|c| by_cycle[c][&0]).collect();
    let mut total = 0;
    for (k, q) in (1..).zip(&q0) {
        total += q;
        assert_eq!(total, (250 * k).min(1000 + 100 * (k - 1)), "{q0:?}");
    }
    assert!(cycles.iter().all(|c| by_cycle[c][&1] == 1000));
}

#[test]
fn spare_capacity_goes_to_ineligible_flows() {
    // One flow earning one byte every ten cycles, with a backlog far beyond its allowance
    // and nobody else: the scheduler moves on to its wake cycles instead of idling, so the
    // whole backlog leaves without the clock moving.
    let mut r = sched("FLOWS 4, RESERVE 2 100Bps 100 1s, CAPACITY 1000");
    inject_packets(&mut r, "i", 0, (0..20).map(|k| pkt(2, k, 100)));
    let decoded: Vec<Decoded> = drain_batches(&mut r)
        .iter()
        .map(|b| decode(b.data()))
        .collect();
    assert_eq!(num(&mut r, "s.length"), 0);
    assert_eq!(rebuild(&decoded)[&2].len(), 20);
    assert!(num(&mut r, "s.cycle") > 10_000);
}

/// Drives `r` as a link of `rate` bytes/s would: arrivals `(time offset ns, packet)` in time
/// order are pushed when the clock reaches them, and a batch is pulled whenever the link is
/// free, the clock then moving on by its transmission time. Returns each batch with the time
/// its last byte left.
fn run_link(r: &mut Router, mut arrivals: Vec<(i64, Packet)>, rate: f64) -> Vec<(i64, Decoded)> {
    let t0 = r.clock().now();
    arrivals.reverse();
    let mut out = Vec::new();
    loop {
        let now = (r.clock().now() - t0).0;
        let mut due = Vec::new();
        while arrivals.last().is_some_and(|(t, _)| *t <= now) {
            due.push(arrivals.pop().unwrap().1);
        }
        inject_packets(r, "i", 0, due);
        match pull(r, "d", 0, 1).pop() {
            Some(b) => {
                let tx = (b.len() as f64 / rate * 1e9) as i64;
                r.clock().advance_to(t0 + Timestamp(now + tx));
                out.push((now + tx, decode(b.data())));
            }
            None => match arrivals.last() {
                Some((t, _)) => r.clock().advance_to(t0 + Timestamp(*t)),
                None => return out,
            },
        }
    }
}

#[test]
fn delays_stay_within_the_bound_for_conforming_flows() {
    // 10 Mbyte/s link, T = 1 ms: 20 flows, each a token bucket (BURST 4000, RATE 100 kB/s):
    // a 4000-byte burst at a random start, then 100-byte packets at the rate. Reservations
    // fit (20 quanta of 400 + overhead < 10000 bytes a cycle). Delays, computed here from
    // the batches' departure times, stay within (⌈P/Q⌉ + 3)·T = 13 ms.
    let mut r = sched(
        "FLOWS 20, BANDWIDTH 10MBps, CYCLE 1ms, RATE 100kBps, BURST 4000, DELAY 10ms, \
         CAPACITY 10000",
    );
    assert_eq!(read(&mut r, "s.admitted"), "true");
    let mut arrivals = Vec::new();
    let mut x: u64 = 7;
    for f in 0..20u32 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        let start = ((x >> 33) % 50_000_000) as i64;
        let mut seq = 0;
        // The burst: 4000 bytes with prefixes = 40 packets of 98 bytes.
        for _ in 0..40 {
            arrivals.push((start, pkt(f, seq, 98)));
            seq += 1;
        }
        // Then 100 bytes (with prefix) per millisecond.
        for k in 1..200 {
            arrivals.push((start + k * 1_000_000, pkt(f, seq, 98)));
            seq += 1;
        }
    }
    arrivals.sort_by_key(|(t, _)| *t);
    let arrival_of: HashMap<(u32, u32), i64> = arrivals
        .iter()
        .map(|(t, p)| {
            let d = p.data();
            let key = (
                u32::from_be_bytes(d[..4].try_into().unwrap()),
                u32::from_be_bytes(d[4..8].try_into().unwrap()),
            );
            (key, *t)
        })
        .collect();
    let out = run_link(&mut r, arrivals, 10e6);
    // Departure of each packet: the departure of the batch holding its last byte.
    let mut streams: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut worst = 0i64;
    let mut count = 0;
    for (t, d) in &out {
        for (f, q) in &d.quanta {
            let s = streams.entry(*f).or_default();
            s.extend_from_slice(q);
            while s.len() >= 2 {
                let n = u16::from_be_bytes([s[0], s[1]]) as usize;
                if s.len() < 2 + n {
                    break;
                }
                let flow = u32::from_be_bytes(s[2..6].try_into().unwrap());
                let seq = u32::from_be_bytes(s[6..10].try_into().unwrap());
                assert_eq!(flow, *f);
                worst = worst.max(t - arrival_of[&(flow, seq)]);
                count += 1;
                s.drain(..2 + n);
            }
        }
    }
    assert_eq!(count, 20 * 239);
    let bound = (4000f64 / 400.0).ceil() as i64 + 3;
    assert!(worst <= bound * 1_000_000, "worst delay {worst} ns");
    for f in 0..20 {
        let line = param(&mut r, "s.flow", &f.to_string());
        let v: Vec<f64> = line.split(' ').map(|x| x.parse().unwrap()).collect();
        assert_eq!(v[1], 239.0);
        assert!(v[4] <= v[5], "flow {f}: {line}");
        assert!((v[5] - 0.013).abs() < 1e-9);
    }
}

#[test]
fn packet_mode_sends_whole_packets_as_their_last_byte_is_served() {
    // Quantum 100: flow 0's 1000-byte packet needs ten cycles, during which flow 1's small
    // packets leave one per cycle.
    let mut r = sched("FLOWS 2, MODE PACKET, BURST 10000, DELAY 100ms, CYCLE 1ms");
    assert_eq!(param(&mut r, "s.quantum", "0"), "100");
    let mut input = vec![pkt(0, 0, 1000)];
    input.extend((0..5).map(|k| pkt(1, k, 100)));
    input.push(pkt(0, 1, 50));
    inject_packets(&mut r, "i", 0, input);
    let mut order = Vec::new();
    loop {
        let got = pull(&mut r, "d", 0, 1);
        let Some(p) = got.first() else { break };
        assert_eq!(
            p.anno().aggregate,
            u32::from_be_bytes(p.data()[..4].try_into().unwrap())
        );
        order.push((p.anno().aggregate, p.data()[7], p.len()));
    }
    assert_eq!(
        order,
        [
            (1, 0, 100),
            (1, 1, 100),
            (1, 2, 100),
            (1, 3, 100),
            (1, 4, 100),
            (0, 0, 1000),
            (0, 1, 50)
        ]
    );
    assert_eq!(num(&mut r, "s.packets"), 7);
}

#[test]
fn drops_are_counted_by_reason_and_flow() {
    let mut r = sched("FLOWS 4, CAPACITY 2, LIMIT 5");
    let mut input = vec![pkt(9, 0, 60), Packet::from_bytes(&vec![0u8; 70_000])];
    input[1].anno_mut().aggregate = 1;
    input.extend((0..3).map(|k| pkt(0, k, 60)));
    input.extend((0..4).map(|k| pkt(2, k, 60)));
    input.extend((0..2).map(|k| pkt(3, k, 60)));
    inject_packets(&mut r, "i", 0, input);
    assert_eq!(num(&mut r, "s.length"), 5);
    let details = read(&mut r, "s.drop_details");
    for line in [
        "1 no such flow",
        "1 too long for the batch format",
        "3 flow queue full",
        "1 scheduler full",
    ] {
        assert!(details.contains(line), "{details}");
    }
    assert_eq!(num(&mut r, "s.drops"), 6);
    assert!(param(&mut r, "s.flow", "0").ends_with(" 1"));
    assert!(param(&mut r, "s.flow", "2").ends_with(" 2"));
}

/// Flows 0, 1 and 5 with five 100-byte packets each, on a hot-swappable scheduler (quantum
/// 96, so one batch leaves every head packet partly sent); the batch pulled before the swap.
fn swap_setup() -> (Router, Vec<Packet>) {
    let conf = "i :: Idle -> s :: DFQSched(FLOWS 8) -> d :: Discard(false)";
    let mut r = Kit::sim().hot_swap().router(conf);
    assert_eq!(param(&mut r, "s.quantum", "0"), "96");
    let input = (0..5).flat_map(|k| [0, 1, 5].map(|f| pkt(f, k, 100)));
    inject_packets(&mut r, "i", 0, input);
    let first = pull(&mut r, "d", 0, 1);
    assert_eq!(first.len(), 1);
    assert_eq!(decode(first[0].data()).quanta.len(), 3);
    (r, first)
}

#[test]
fn a_hot_swap_carries_the_queues_and_the_byte_streams_over() {
    let (mut r, mut batches) = swap_setup();
    r.write_path(
        "hotconfig",
        "i :: Idle -> s :: DFQSched(FLOWS 2) -> d :: Discard(false)",
    )
    .expect("new configuration installs");
    r.run_until_idle();
    batches.extend(drain_batches(&mut r));
    let decoded: Vec<Decoded> = batches.iter().map(|b| decode(b.data())).collect();
    let kept: Vec<Decoded> = decoded
        .into_iter()
        .map(|mut d| {
            d.quanta.retain(|(f, _)| *f < 2);
            d
        })
        .collect();
    let flows = rebuild(&kept);
    for f in 0..2u32 {
        let want: Vec<Vec<u8>> = (0..5).map(|k| pkt(f, k, 100).data().to_vec()).collect();
        assert_eq!(
            flows[&f], want,
            "flow {f} whole and in order across the swap"
        );
    }
    assert_eq!(num(&mut r, "s.packets"), 10);
    assert!(read(&mut r, "s.drop_details").starts_with("5 no such flow"));
    assert_eq!(num(&mut r, "s.drops"), 5);
    assert!(param(&mut r, "s.flow", "0").starts_with("510 5 0 0 "));
    assert_eq!(num(&mut r, "s.length"), 0);
}

#[test]
fn a_hot_swap_to_packet_mode_drops_only_the_partly_sent_heads() {
    let (mut r, _) = swap_setup();
    r.write_path(
        "hotconfig",
        "i :: Idle -> s :: DFQSched(FLOWS 8, MODE PACKET) -> d :: Discard(false)",
    )
    .unwrap();
    r.run_until_idle();
    let mut got: Vec<(u32, u8)> = Vec::new();
    loop {
        let b = pull(&mut r, "d", 0, 32);
        if b.is_empty() {
            break;
        }
        got.extend(b.iter().map(|p| (p.anno().aggregate, p.data()[7])));
    }
    for f in [0, 1, 5] {
        let seqs: Vec<u8> = got.iter().filter(|g| g.0 == f).map(|g| g.1).collect();
        assert_eq!(
            seqs,
            [1, 2, 3, 4],
            "flow {f}: the four packets not yet begun"
        );
    }
    assert!(read(&mut r, "s.drop_details").ends_with("3 partly sent before a hot swap"));
    assert_eq!(num(&mut r, "s.drops"), 3);
}

#[test]
fn a_hot_swap_of_the_demultiplexer_keeps_its_partial_packets() {
    let (mut r, first) = swap_setup();
    let rest = drain_batches(&mut r);
    let conf = |args: &str| format!("j :: Idle -> m :: DFQDemux({args}) -> c :: TestCapture");
    let mut m = Kit::sim().hot_swap().router(&conf(""));
    inject_packets(
        &mut m,
        "j",
        0,
        first.iter().map(|b| Packet::from_bytes(b.data())),
    );
    assert_eq!(num(&mut m, "m.pending_flows"), 3);
    m.write_path("hotconfig", &conf("MAP 0-7 100")).unwrap();
    m.run_until_idle();
    inject_packets(&mut m, "j", 0, rest);
    let got = taken(&mut m, "c");
    for f in [0u32, 1, 5] {
        let want: Vec<Vec<u8>> = (0..5).map(|k| pkt(f, k, 100).data().to_vec()).collect();
        let have: Vec<Vec<u8>> = got
            .iter()
            .filter(|p| p.anno().aggregate == 100 + f)
            .map(|p| p.data().to_vec())
            .collect();
        assert_eq!(have, want, "flow {f} rebuilt whole across the swap");
    }
    assert_eq!((num(&mut m, "m.packets"), num(&mut m, "m.drops")), (15, 0));

    // A flow no longer accepted loses its partial packet, counted.
    let mut m = Kit::sim().hot_swap().router(&conf(""));
    inject_packets(&mut m, "j", 0, first);
    m.write_path("hotconfig", &conf("FLOWS 2")).unwrap();
    m.run_until_idle();
    assert_eq!(num(&mut m, "m.pending_flows"), 2);
    assert!(read(&mut m, "m.drop_details").ends_with("1 partial packet at hot swap"));
}

#[test]
fn three_hundred_twenty_thousand_flows() {
    let n = 320_000u32;
    let mut r = sched(&format!(
        "FLOWS {n}, BANDWIDTH 10Gbps, BURST 1280, DELAY 10ms"
    ));
    assert_eq!(param(&mut r, "s.quantum", "5"), "128");
    inject_packets(&mut r, "i", 0, (0..n).rev().map(|f| pkt(f, 0, 128)));
    let decoded: Vec<Decoded> = drain_batches(&mut r)
        .iter()
        .map(|b| decode(b.data()))
        .collect();
    // 128-byte packets (130 with prefix) in quanta of 128: two cycles, flows in id order.
    let mut seen = vec![0usize; n as usize];
    let mut last = None;
    for d in &decoded {
        for (f, q) in &d.quanta {
            assert!(Some((d.cycle, *f)) > last);
            last = Some((d.cycle, *f));
            seen[*f as usize] += q.len();
        }
    }
    assert!(seen.iter().all(|&b| b == 130));
    assert_eq!(num(&mut r, "s.packets"), u64::from(n));
}

#[test]
fn the_demultiplexer_drops_malformed_batches_by_reason() {
    let mut good = vec![
        0xDF, 1, 0, 29, 0, 0, 0, 7, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0b1001, 0, 3,
    ];
    good.extend_from_slice(&[0, 1, b'x', 0, 2, b'a', b'b']);
    let mut bad = Vec::new();
    bad.push(good[..10].to_vec());
    let mut v = good.clone();
    v[0] = 0;
    bad.push(v);
    let mut v = good.clone();
    v[3] = 200;
    bad.push(v);
    let mut v = good.clone();
    v[19] = 0b1000;
    bad.push(v);
    let mut v = good.clone();
    v[21] = 9;
    bad.push(v);
    let mut v = good.clone();
    v[8..12].copy_from_slice(&5000u32.to_be_bytes());
    bad.push(v);
    let mut m = demux("FLOWS 1000");
    let refs: Vec<&[u8]> = bad.iter().map(|b| &b[..]).collect();
    sluice_testkit::inject_bytes(&mut m, "j", 0, &refs);
    let details = read(&mut m, "m.drop_details");
    for reason in [
        "truncated batch",
        "bad magic or version",
        "bad batch length",
        "bad bitmap",
        "bad quantum",
        "flow out of range",
    ] {
        assert!(details.contains(&format!("1 {reason}")), "{details}");
    }
    // The good batch: flow 10 gets the 1-byte packet "x", flow 13 waits for more bytes.
    sluice_testkit::inject_bytes(&mut m, "j", 0, &[&good]);
    let got = taken(&mut m, "c");
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].data(), got[0].anno().aggregate), (&b"x"[..], 10));
    assert_eq!(num(&mut m, "m.pending"), 2);
    assert_eq!(num(&mut m, "m.pending_flows"), 1);
}

#[test]
fn configuration_errors() {
    let e = config_error("Idle -> DFQSched(CYCLE 10ms, DELAY 1ms) -> Discard");
    assert!(e.contains("DELAY must be at least CYCLE"), "{e}");
    let e = config_error("Idle -> DFQSched(MODE FAST) -> Discard");
    assert!(e.contains("MODE"), "{e}");
    let e = config_error("Idle -> DFQSched(FLOWS 4, RESERVE 3-9 1Mbps 100 10ms) -> Discard");
    assert!(e.contains("not below FLOWS"), "{e}");
    let e = config_error("Idle -> DFQSched(BURST 100000, DELAY 1ms) -> Discard");
    assert!(e.contains("too large"), "{e}");
    let e = config_error("Idle -> DFQDemux(MAP 1-5 10, MAP 3 7) -> Discard");
    assert!(e.contains("overlapping"), "{e}");
}

#[test]
fn fuzz_seeds_and_mutations_of_the_demultiplexer() {
    let seeds = fuzz_seeds("dfq_demux");
    assert!(!seeds.is_empty());
    let mut x: u64 = 99;
    for s in &seeds {
        sluice_elements::dfq::fuzzing::demux(s);
        for _ in 0..50 {
            let mut m = s.clone();
            for _ in 0..3 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                if m.is_empty() {
                    break;
                }
                let i = (x >> 33) as usize % m.len();
                m[i] ^= (x >> 20) as u8 | 1;
            }
            sluice_elements::dfq::fuzzing::demux(&m);
        }
    }
}
