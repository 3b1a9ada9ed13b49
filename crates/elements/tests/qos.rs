//! Behaviour tests of the QoS elements (DRRSched, Meter, BandwidthMeter on simulated time;
//! CPUSched on the wall clock, as it measures real cycles) through real configurations.
//!
//! Packets are injected by pushing out of an `Idle` element and collected by pulling through
//! an inactive `Discard` (test kit). Expected orders and counts follow Click's algorithms
//! step by step (drr.cc's pull loop; ewma.hh's rate estimator with one-millisecond epochs).

use sluice_core::{Packet, Router, Timestamp};
use sluice_testkit::{
    assert_conserved, config_error, drain, inject_packets, num, pull, read, router, Kit,
};

/// A packet of `len` bytes whose data starts with `tag` and a `.`.
fn tagged(tag: &str, len: usize) -> Packet {
    let mut d = format!("{tag}.").into_bytes();
    d.resize(len, b'.');
    Packet::from_bytes(&d)
}

/// `n` packets `PREFIX0`, `PREFIX1`, … of `len` bytes.
fn run_of(prefix: &str, n: usize, len: usize) -> Vec<Packet> {
    (0..n)
        .map(|i| tagged(&format!("{prefix}{i}"), len))
        .collect()
}

/// The tags of `packets`.
fn tags(packets: &[Packet]) -> Vec<String> {
    packets
        .iter()
        .map(|p| {
            let d = p.data();
            let end = d.iter().position(|&b| b == b'.').unwrap_or(d.len());
            String::from_utf8_lossy(&d[..end]).into_owned()
        })
        .collect()
}

/// A DRRSched with QUANTUM `quantum` (empty: the default) over `n` queues fed from `i[k]`,
/// pulled by the inactive Discard `d`.
fn drr(n: usize, quantum: &str) -> Router {
    let mut conf = format!("i :: Idle; drr :: DRRSched({quantum}); drr -> d :: Discard(false);");
    for k in 0..n {
        conf += &format!("i[{k}] -> q{k} :: Queue(1000) -> [{k}]drr;");
    }
    router(&conf)
}

// ---- DRRSched ----

/// Click's order: the round starts on input 0 with no deficit, so input 0's first packet is
/// held and input 1 (which just got its quantum) sends first; each input then sends while its
/// next packet fits in its deficit.
#[test]
fn drr_follows_clicks_order() {
    let mut r = drr(2, "");
    inject_packets(&mut r, "i", 0, run_of("a", 12, 100));
    inject_packets(&mut r, "i", 1, run_of("b", 4, 300));
    let want = [
        "b0", "a0", "a1", "a2", "a3", "a4", "b1", "b2", "a5", "a6", "a7", "a8", "a9", "b3", "a10",
        "a11",
    ];
    assert_eq!(tags(&drain(&mut r, "d", 0)), want);

    // The same order one packet per pull.
    let mut r = drr(2, "");
    inject_packets(&mut r, "i", 0, run_of("a", 12, 100));
    inject_packets(&mut r, "i", 1, run_of("b", 4, 300));
    let mut one_by_one = Vec::new();
    loop {
        let got = pull(&mut r, "d", 0, 1);
        if got.is_empty() {
            break;
        }
        assert_eq!(got.len(), 1);
        one_by_one.extend(tags(&got));
    }
    assert_eq!(one_by_one, want);
}

#[test]
fn drr_three_inputs_and_packets_larger_than_the_quantum() {
    let mut r = drr(3, "");
    inject_packets(&mut r, "i", 0, run_of("a", 6, 200));
    inject_packets(&mut r, "i", 1, run_of("b", 3, 600));
    inject_packets(&mut r, "i", 2, run_of("c", 4, 100));
    assert_eq!(
        tags(&drain(&mut r, "d", 0)),
        ["c0", "c1", "c2", "c3", "a0", "a1", "b0", "a2", "a3", "a4", "b1", "a5", "b2"]
    );

    // A 1500-byte packet needs three rounds of a 500-byte quantum; a pull still returns it
    // rather than nothing while it waits.
    let mut r = drr(3, "");
    inject_packets(&mut r, "i", 0, run_of("x", 2, 1500));
    inject_packets(&mut r, "i", 2, run_of("z", 1, 60));
    assert_eq!(tags(&pull(&mut r, "d", 0, 1)), ["z0"]);
    assert_eq!(tags(&pull(&mut r, "d", 0, 1)), ["x0"]);
    assert_eq!(tags(&pull(&mut r, "d", 0, 1)), ["x1"]);
    assert!(pull(&mut r, "d", 0, 1).is_empty());
}

/// Backlogged inputs share the output by bytes: with one quantum for all, the input with
/// packets a third the size sends three times as many.
#[test]
fn drr_shares_bytes_equally_whatever_the_packet_sizes() {
    for quantum in ["", "QUANTUM 1500", "QUANTUM 64"] {
        let mut r = drr(3, quantum);
        inject_packets(&mut r, "i", 0, run_of("a", 900, 100));
        inject_packets(&mut r, "i", 1, run_of("b", 900, 300));
        inject_packets(&mut r, "i", 2, run_of("c", 900, 1000));
        let mut got = Vec::new();
        while got.len() < 780 {
            got.extend(pull(&mut r, "d", 0, 16));
        }
        let got = &got[..780];
        let count = |c: char| got.iter().filter(|p| p.data()[0] == c as u8).count();
        let (a, b, c) = (count('a'), count('b'), count('c'));
        assert_eq!(a + b + c, 780);
        let bytes = [a * 100, b * 300, c * 1000];
        let (lo, hi) = (bytes.iter().min().unwrap(), bytes.iter().max().unwrap());
        // Within one quantum and one packet of each other.
        assert!(hi - lo <= 1500 + 1000, "{quantum}: {bytes:?}");
        assert!(a > 9 * c && b > 3 * c, "{quantum}: {a} {b} {c}");
    }
}

#[test]
fn drr_skips_empty_inputs_and_lets_pullers_sleep() {
    // Inputs 1 and 3 stay empty: their deficits never build up, the others alternate.
    let mut r = drr(4, "QUANTUM 100");
    inject_packets(&mut r, "i", 0, run_of("a", 3, 100));
    inject_packets(&mut r, "i", 2, run_of("c", 3, 100));
    assert_eq!(
        tags(&drain(&mut r, "d", 0)),
        ["c0", "a0", "c1", "a1", "c2", "a2"]
    );
    // Input 1 gets packets later and joins the round.
    inject_packets(&mut r, "i", 1, run_of("b", 2, 100));
    inject_packets(&mut r, "i", 0, run_of("a", 1, 100));
    assert_eq!(tags(&drain(&mut r, "d", 0)), ["a0", "b0", "b1"]);

    // The run ends only if the Unqueue sleeps on the queues' empty notifiers through the
    // scheduler; every packet comes out.
    let mut r = router(
        "InfiniteSource(LIMIT 70, LENGTH 200) -> q0 :: Queue -> [0]drr :: DRRSched;
         InfiniteSource(LIMIT 30, LENGTH 1400) -> q1 :: Queue -> [1]drr;
         Idle -> q2 :: Queue -> [2]drr;
         drr -> Unqueue -> c :: Counter -> Discard;",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 100);
    assert_eq!(num(&mut r, "c.byte_count"), 70 * 200 + 30 * 1400);
}

#[test]
fn drr_configuration_errors() {
    let conf = |args: &str| format!("Idle -> Queue -> d :: DRRSched({args}) -> Discard");
    for bad in ["QUANTUM 0", "-5", "QUANTUM -1"] {
        assert!(config_error(&conf(bad)).contains("bad QUANTUM"), "{bad}");
    }
    let e = config_error(&conf("QUANTUM lots"));
    assert!(
        e.contains("QUANTUM") && e.contains("expected integer"),
        "{e}"
    );
    let e = config_error(&conf("500, 600"));
    assert!(e.contains("too many arguments"), "{e}");
    // Positional and keyword forms agree.
    let mut r = router(&conf("1000"));
    assert_eq!(read(&mut r, "d.config"), "1000");
}

// ---- Meter and BandwidthMeter ----

const MS: i64 = 1_000_000;

/// A meter `class(args)` behind Idle `i`, its outputs counted by `c0`, `c1`, ….
fn meter(class: &str, args: &str, outputs: usize) -> Router {
    let mut conf = format!("i :: Idle -> m :: {class}({args});");
    for k in 0..outputs {
        conf += &format!("m[{k}] -> c{k} :: Counter -> Discard;");
    }
    router(&conf)
}

/// Injects, at millisecond `ms` after `t0` of each `(ms, n, len)`, `n` packets of `len` bytes
/// in one batch.
fn feed(r: &mut Router, t0: Timestamp, traffic: impl IntoIterator<Item = (i64, usize, usize)>) {
    for (ms, n, len) in traffic {
        r.clock().advance_to(t0 + Timestamp(ms * MS));
        inject_packets(r, "i", 0, (0..n).map(|_| tagged("m", len)));
    }
}

fn counts(r: &mut Router, outputs: usize) -> Vec<u64> {
    (0..outputs)
        .map(|k| num(r, &format!("c{k}.count")))
        .collect()
}

/// 500 packets/s stays below Meter(1000); 3000 packets/s goes over once the average has
/// caught up (four milliseconds, 12 packets), as Click's estimator has it.
#[test]
fn meter_classifies_by_packet_rate() {
    let mut r = meter("Meter", "1000", 2);
    let t0 = r.clock().now();
    feed(&mut r, t0, (0..1000).step_by(2).map(|ms| (ms, 1, 60)));
    assert_eq!(counts(&mut r, 2), [500, 0]);
    feed(&mut r, t0, (1000..2000).map(|ms| (ms, 3, 60)));
    assert_eq!(counts(&mut r, 2), [512, 2988]);
    // The same traffic one packet per batch gives the same split.
    let mut r = meter("Meter", "1kpps", 2);
    let t0 = r.clock().now();
    feed(&mut r, t0, (0..1000).step_by(2).map(|ms| (ms, 1, 60)));
    feed(
        &mut r,
        t0,
        (1000..2000).flat_map(|ms| [(ms, 1, 60), (ms, 1, 60), (ms, 1, 60)]),
    );
    assert_eq!(counts(&mut r, 2), [512, 2988]);
}

/// Three bands; a long pause restarts the average at zero.
#[test]
fn bandwidth_meter_classifies_by_byte_rate() {
    let conf = "500kBps, 2MBps";
    for (len, want) in [
        (100, [500, 0, 0]),
        (1000, [11, 489, 0]),
        (3000, [3, 15, 482]),
    ] {
        let mut r = meter("BandwidthMeter", conf, 3);
        let t0 = r.clock().now();
        feed(&mut r, t0, (0..500).map(|ms| (ms, 1, len)));
        assert_eq!(counts(&mut r, 3), want, "{len}-byte packets");
    }
    let mut r = meter("BandwidthMeter", "4Mbps, 16Mbps", 3);
    let t0 = r.clock().now();
    feed(&mut r, t0, (0..500).map(|ms| (ms, 1, 3000)));
    assert_eq!(counts(&mut r, 3), [3, 15, 482]);
    // After 100 ms or more without packets, the average starts again from zero.
    feed(&mut r, t0, [(700, 1, 3000)]);
    assert_eq!(counts(&mut r, 3), [4, 15, 482]);
}

/// Whole runs: a source under the rate stays on output 0; one at four times the rate leaves
/// output 0 after the first few milliseconds.
#[test]
fn meter_behind_a_rated_source() {
    for (rate, limit) in [(500, 1000), (4000, 4000)] {
        let mut r = router(&format!(
            "RatedSource(RATE {rate}, LIMIT {limit}, STOP true) -> m :: Meter(1000);
             m[0] -> c0 :: Counter -> Discard; m[1] -> c1 :: Counter -> Discard;"
        ));
        r.run_until_idle();
        let (c0, c1) = (num(&mut r, "c0.count"), num(&mut r, "c1.count"));
        assert_eq!(c0 + c1, limit);
        if rate < 1000 {
            assert_eq!(c1, 0);
        } else {
            assert!(c0 < 100, "{c0} {c1}");
        }
    }
}

#[test]
fn meter_handlers() {
    let mut r = meter("Meter", "1000, 2kpps", 3);
    assert_eq!(read(&mut r, "m.meters"), "1000 2000");
    assert_eq!(read(&mut r, "m.rate"), "0");
    let t0 = r.clock().now();
    feed(&mut r, t0, (0..400).map(|ms| (ms, 2, 60)));
    feed(&mut r, t0, [(400, 1, 60)]);
    // 2041/1024 packets per millisecond, printed as Click prints it.
    assert_eq!(read(&mut r, "m.rate"), "1993.164");
    assert_eq!(counts(&mut r, 3).iter().sum::<u64>(), 801);

    // Rates are kept as the estimator's fixed-point values: 1000 bytes/s is 1 byte/ms
    // exactly, 300 bytes/s is 307/1024 bytes/ms.
    let mut r = meter("BandwidthMeter", "300Bps, 8kbps", 3);
    assert_eq!(read(&mut r, "m.meters"), "299.805 1000");
    let t0 = r.clock().now();
    feed(&mut r, t0, (0..300).map(|ms| (ms, 1, 1500)));
    assert_eq!(read(&mut r, "m.rate"), "1499993.164");
}

#[test]
fn meter_configuration_errors() {
    let two = |class: &str, args: &str| {
        config_error(&format!(
            "Idle -> m :: {class}({args}); m[0] -> Discard; m[1] -> Discard"
        ))
    };
    for class in ["Meter", "BandwidthMeter"] {
        let e = two(class, "");
        assert!(e.contains("too few arguments"), "{e}");
        let e = two(class, "2000, 1000");
        assert!(e.contains("rate 2 must be > rate 1"), "{e}");
        let e = two(class, "1000, 1000");
        assert!(e.contains("rate 2 must be > rate 1"), "{e}");
        let e = two(class, "fast");
        assert!(e.contains("argument 1 syntax error"), "{e}");
        let e = two(class, "5000000");
        assert!(e.contains("rate 1 too large (max 4194303)"), "{e}");
        let e = two(class, "1000, 2000");
        assert!(
            e.contains("need 1 arguments, one less than the number of output ports"),
            "{e}"
        );
    }
    let e = two("Meter", "10Mbps");
    assert!(e.contains("argument 1 syntax error"), "{e}");
    let e = two("BandwidthMeter", "10kpps");
    assert!(e.contains("argument 1 syntax error"), "{e}");
    let e = config_error("Idle -> m :: Meter(1000) -> Discard");
    assert!(!e.is_empty());
}

// ---- CPUSched ----

/// Per input of CPUSched `cs`: (packets, cycles) from its `stats` handler.
fn cpu_stats(r: &mut Router) -> Vec<(f64, f64)> {
    read(r, "cs.stats")
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[1].parse().unwrap(), w[3].parse().unwrap())
        })
        .collect()
}

/// Two always-backlogged flows whose paths burn `cycles0` and `cycles1` cycles per packet,
/// scheduled by `CPUSched(ARGS)` for a quarter of a second of wall-clock time; every packet
/// is accounted for at the end.
fn cpu_run(args: &str, cycles0: u32, cycles1: u32) -> Vec<(f64, f64)> {
    let conf = format!(
        "InfiniteSource(LENGTH 100, BURST 200) -> q0 :: Queue(200) -> [0]cs :: CPUSched({args});
         InfiniteSource(LENGTH 100, BURST 200) -> q1 :: Queue(200) -> [1]cs;
         cs[0] -> SyntheticLoad(0, 8, CYCLES {cycles0}) -> Discard;
         cs[1] -> SyntheticLoad(0, 8, CYCLES {cycles1}) -> Discard;
         Script(TYPE ACTIVE, wait 0.25, stop);"
    );
    let mut r = Kit::new().router(&conf);
    r.run();
    assert_conserved(&mut r, &conf);
    cpu_stats(&mut r)
}

/// Shares divide the cycles, not the packets: with equal shares, a more expensive path gets
/// as many cycles and fewer packets.
#[test]
fn cpu_sched_divides_cycles_by_share() {
    let s = cpu_run("0.5, 0.5", 2000, 12000);
    let (cycles, packets) = (s[0].1 / s[1].1, s[0].0 / s[1].0);
    assert!(
        (0.85..1.18).contains(&cycles),
        "cycle ratio {cycles}: {s:?}"
    );
    assert!(packets > 1.5, "packet ratio {packets}: {s:?}");
    let s = cpu_run("75%, 25%", 4000, 4000);
    let cycles = s[0].1 / s[1].1;
    assert!((2.5..3.5).contains(&cycles), "cycle ratio {cycles}: {s:?}");
}

/// Link reservations become the cycles their rates need on each path: equal paths share
/// by rate, and a more expensive path gets more cycles for the same rate.
#[test]
fn cpu_sched_derives_reservations_from_link_rates() {
    let s = cpu_run("2Mbps, 1Mbps", 4000, 4000);
    let packets = s[0].0 / s[1].0;
    assert!(
        (1.7..2.35).contains(&packets),
        "packet ratio {packets}: {s:?}"
    );
    let s = cpu_run("1Mbps, 1Mbps", 2000, 12000);
    let (cycles, packets) = (s[1].1 / s[0].1, s[0].0 / s[1].0);
    assert!(cycles > 1.5, "cycle ratio {cycles}: {s:?}");
    assert!(
        (0.85..1.18).contains(&packets),
        "packet ratio {packets}: {s:?}"
    );
}

/// A lower priority level runs first whenever it is backlogged; an input with reservation 0
/// runs only when nothing else is backlogged.
#[test]
fn cpu_sched_priority_and_zero_reservation() {
    for args in ["0.5, 0.5, PRIORITY 1 0", "0, 1"] {
        let s = cpu_run(args, 2000, 2000);
        assert!(s[1].0 > 1000.0, "{args}: {s:?}");
        assert!(
            s[0].0 < s[1].0 / 20.0,
            "{args}: input 0 ran too much: {s:?}"
        );
    }
}

/// A flow that was idle does not bank processing: it joins at the system potential, so
/// once both are backlogged they share by reservation from that moment.
#[test]
fn cpu_sched_idle_flow_takes_system_potential() {
    let conf =
        "InfiniteSource(LENGTH 100, BURST 200) -> q0 :: Queue(200) -> [0]cs :: CPUSched(0.5, 0.5);
         late :: InfiniteSource(LENGTH 100, BURST 200, ACTIVE false) -> q1 :: Queue(200) -> [1]cs;
         cs[0] -> SyntheticLoad(0, 8, CYCLES 4000) -> Discard;
         cs[1] -> SyntheticLoad(0, 8, CYCLES 4000) -> Discard;
         Script(TYPE ACTIVE, wait 0.15, write cs.reset, write late.active true, wait 0.15, stop);";
    let mut r = Kit::new().router(conf);
    r.run();
    let s = cpu_stats(&mut r);
    let packets = s[0].0 / s[1].0;
    assert!(
        (0.8..1.25).contains(&packets),
        "packet ratio {packets}: {s:?}"
    );
}

#[test]
fn cpu_sched_configuration_errors() {
    let two = "Idle -> q0 :: Queue -> [0]c :: CPUSched(ARGS); Idle -> q1 :: Queue -> [1]c;
               c[0] -> Discard; c[1] -> Discard;";
    for (args, want) in [
        ("0.5", "need 2 reservations"),
        ("0.5, 2Mbps", "all shares or all bandwidths"),
        ("0.5, fast", "expected share or bandwidth"),
        ("0.5, 0.5, PRIORITY 1", "need 2 reservations and priorities"),
    ] {
        let e = config_error(&two.replace("ARGS", args));
        assert!(e.contains(want), "{args}: {e}");
    }
}
