//! Behaviour tests of RED and AdaptiveRED through small configurations, on simulated time.
//!
//! Most tests hold the queue that RED watches at a chosen length: packets are pushed one at
//! a time out of an `Idle` into RED, and after each the queue is pulled (through an inactive
//! `Discard`) back down to that length, so every packet sees the same queue length and the
//! average settles there. The reference values (average, marking probability, mean spacing
//! of the marks) are computed here from the RED paper's formulas in floating point.

use sluice_core::{Router, Timestamp};
use sluice_testkit::{
    assert_conserved, config_error, inject_bytes, num, pull, read, router, router_with, Kit,
};

/// The configuration every holding test uses: `Idle -> RED(ARGS) -> Counter -> Queue`.
fn red(args: &str) -> Router {
    router(&format!(
        "i :: Idle -> r :: RED({args}) -> c :: Counter -> q :: Queue(1000) -> d :: Discard(ACTIVE false)"
    ))
}

/// Pushes one packet into RED, then pulls the queue back down to `len`; true if RED let
/// the packet through.
fn step(r: &mut Router, len: u64) -> bool {
    let before = num(r, "c.count");
    inject_bytes(r, "i", 0, &[b"x"]);
    while num(r, "q.length") > len {
        pull(r, "d", 0, 1);
    }
    num(r, "c.count") > before
}

/// Fills the queue up to `len` (whatever RED drops on the way is not counted), then pushes
/// `n` packets holding it there; returns how many of those RED dropped.
fn hold(r: &mut Router, len: u64, n: usize) -> usize {
    while num(r, "q.length") < len {
        inject_bytes(r, "i", 0, &[b"x"]);
    }
    (0..n).filter(|_| !step(r, len)).count()
}

/// The count of drop reason `why` in RED's `drop_details`.
fn dropped_for(r: &mut Router, why: &str) -> u64 {
    let details = read(r, "r.drop_details");
    details
        .lines()
        .find(|l| l.ends_with(why))
        .and_then(|l| l.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {why} in {details:?}"))
}

/// The average queue length RED shows.
fn avg(r: &mut Router) -> f64 {
    read(r, "r.avg_queue_size").parse().expect("a number")
}

/// The expected share of packets RED marks at a constant marking probability `p`: after
/// each mark a uniform R in [0, 65535] is drawn and the next mark is the first packet whose
/// count exceeds R/p (with p in 16-bit fixed point), so marks are 1 + floor(R/p) apart.
fn marked_share(p: f64) -> f64 {
    let pb = (p * 65536.0).floor();
    let mean_gap: f64 = (0..65536u32)
        .map(|r| 1.0 + (f64::from(r) / pb).floor())
        .sum::<f64>()
        / 65536.0;
    1.0 / mean_gap
}

/// RED's marking probability at average `a` (Floyd and Jacobson's linear ramp, and the
/// gentle variant's second ramp to 1 at twice MAX_THRESH).
fn red_curve(a: f64, min: f64, max: f64, max_p: f64) -> f64 {
    if a <= min {
        0.0
    } else if a <= max {
        max_p * (a - min) / (max - min)
    } else if a <= 2.0 * max {
        max_p + (1.0 - max_p) * (a - max) / max
    } else {
        1.0
    }
}

#[test]
fn nothing_is_dropped_at_or_below_min_thresh() {
    let mut r = red("5, 15, 1");
    assert_eq!(hold(&mut r, 5, 2000), 0);
    assert_eq!(num(&mut r, "r.drops"), 0);
    assert!((avg(&mut r) - 5.0).abs() < 0.02, "{}", avg(&mut r));
}

#[test]
fn every_packet_is_dropped_above_max_thresh_without_gentle() {
    let mut r = red("2, 6, 0.1, GENTLE false");
    hold(&mut r, 7, 300);
    assert_eq!(hold(&mut r, 7, 1000), 1000);
    // A queue held at MAX_THRESH is on the ramp: some pass.
    let mut r = red("2, 6, 0.1, GENTLE false");
    hold(&mut r, 6, 300);
    assert!(hold(&mut r, 6, 1000) < 400);
    assert!(dropped_for(&mut r, "early drop") > 0);
}

#[test]
fn gentle_red_ramps_to_every_packet_at_twice_max_thresh() {
    // Beyond 2 * MAX_THRESH: every packet, as forced drops.
    let mut r = red("2, 6, 0.1");
    hold(&mut r, 13, 300);
    let before = num(&mut r, "r.drops");
    assert_eq!(hold(&mut r, 13, 1000), 1000);
    assert_eq!(num(&mut r, "r.drops") - before, 1000);
    assert!(dropped_for(&mut r, "forced drop") >= 1000);
    // Between MAX_THRESH and 2 * MAX_THRESH: the second ramp, from MAX_P towards 1.
    let mut r = red("2, 6, 0.1");
    hold(&mut r, 9, 500);
    let n = 20000;
    let dropped = hold(&mut r, 9, n) as f64 / n as f64;
    let a = avg(&mut r);
    let expected = marked_share(red_curve(a, 2.0, 6.0, 0.1));
    assert!(
        (dropped - expected).abs() < 0.03,
        "avg {a}: dropped {dropped}, expected {expected}"
    );
    // Without GENTLE the same queue loses everything.
    let mut r = red("2, 6, 0.1, GENTLE false");
    hold(&mut r, 9, 300);
    assert_eq!(hold(&mut r, 9, 500), 500);
}

#[test]
fn drop_share_between_the_thresholds_follows_the_red_curve() {
    let mut last = 0.0;
    for len in [8, 12, 16, 20] {
        let mut r = red("5, 25, 0.2, STABILITY 3");
        hold(&mut r, len, 300);
        let n = 20000;
        let dropped = hold(&mut r, len, n) as f64 / n as f64;
        let a = avg(&mut r);
        assert!((a - len as f64).abs() < 0.02, "average {a} for {len}");
        let p = red_curve(a, 5.0, 25.0, 0.2);
        let expected = marked_share(p);
        // Spacing the marks evenly makes the share about 2p/(1+p), not p.
        assert!((expected - 2.0 * p / (1.0 + p)).abs() < 0.01 + 0.05 * p);
        assert!(
            (dropped - expected).abs() < 0.05 * expected + 0.002,
            "queue {len}: dropped {dropped}, expected {expected}"
        );
        assert!(dropped > last);
        last = dropped;
    }
}

#[test]
fn average_follows_a_reference_ewma_with_idle_correction() {
    let mut r = red("50, 100, 0.1, STABILITY 3");
    // Click's average: weight 1/8, each step nudged up by half of the weight's unit (4/1024)
    // to make up for the truncating shifts.
    let w = 1.0 / 8.0;
    let nudge = 4.0 / 1024.0;
    let mut reference = 0.0f64;
    let check = |r: &mut Router, reference: f64| {
        let a = avg(r);
        assert!(
            (a - reference).abs() < 0.01,
            "average {a}, reference {reference}"
        );
    };
    // Growing queue: packet i sees i packets queued.
    for s in 0..40u32 {
        inject_bytes(&mut r, "i", 0, &[b"x"]);
        reference += (f64::from(s) + nudge - reference) * w;
        check(&mut r, reference);
    }
    // Drained: the first packet to find the queues empty decays the average one step, and
    // then one step per 20 ms tick that passed since.
    while num(&mut r, "q.length") > 0 {
        pull(&mut r, "d", 0, 1);
    }
    let start = r.clock().now();
    let tick0 = Timestamp(start.0 - start.0 % 20_000_000 + 20_000_000);
    let empty_packet = |r: &mut Router, at: Timestamp| {
        r.clock().advance_to(at);
        inject_bytes(r, "i", 0, &[b"x"]);
        pull(r, "d", 0, 1);
    };
    empty_packet(&mut r, tick0 + Timestamp(1_000_000));
    reference += (nudge - reference) * w;
    check(&mut r, reference);
    empty_packet(&mut r, tick0 + Timestamp(2_000_000));
    check(&mut r, reference);
    empty_packet(&mut r, tick0 + Timestamp(61_000_000));
    for _ in 0..3 {
        reference += (nudge - reference) * w;
    }
    check(&mut r, reference);
    // After 100 idle ticks the average is simply zero.
    empty_packet(&mut r, tick0 + Timestamp(3_000_000_000));
    assert_eq!(read(&mut r, "r.avg_queue_size"), "0");
}

#[test]
fn stability_zero_uses_the_instantaneous_length() {
    let mut r = red("10, 20, 0.5, STABILITY 0");
    inject_bytes(&mut r, "i", 0, &[&b"x"[..]; 7]);
    assert_eq!(read(&mut r, "r.avg_queue_size"), "6");
    // The ramp applies to the instantaneous length at once.
    let n = 5000;
    let dropped = hold(&mut r, 14, n) as f64 / n as f64;
    let expected = marked_share(red_curve(14.0, 10.0, 20.0, 0.5));
    assert!((dropped - expected).abs() < 0.03, "{dropped} vs {expected}");
}

#[test]
fn handlers_read_and_write_as_clicks() {
    let mut r = red("5, 50, 0.02");
    assert_eq!(read(&mut r, "r.min_thresh"), "5");
    assert_eq!(read(&mut r, "r.max_thresh"), "50");
    assert_eq!(read(&mut r, "r.max_p"), "0.02");
    assert_eq!(read(&mut r, "r.queues"), "q");
    assert_eq!(
        read(&mut r, "r.config"),
        "5, 50, 0.02, QUEUES q, STABILITY 4"
    );
    assert_eq!(read(&mut r, "r.avg_queue_size"), "0");
    for _ in 0..3 {
        inject_bytes(&mut r, "i", 0, &[b"x"]);
    }
    // Queue lengths 0, 1, 2 seen: 0, then 1032/16 = 64, then 64 + (2056 - 64)/16 = 188
    // in 1/1024ths, shown as Click shows it.
    assert_eq!(read(&mut r, "r.avg_queue_size"), "0.184");
    assert_eq!(
        read(&mut r, "r.stats"),
        "2 current queue\n0.184 avg queue\n0 drops"
    );

    r.write_path("r.max_p", "0.1").unwrap();
    assert_eq!(read(&mut r, "r.max_p"), "0.1");
    r.write_path("r.max_thresh", "80").unwrap();
    assert_eq!(read(&mut r, "r.max_thresh"), "80");
    let e = r.write_path("r.min_thresh", "81").unwrap_err().to_string();
    assert!(e.contains("MIN_THRESH must be <= MAX_THRESH"), "{e}");
    let e = r.write_path("r.max_p", "2").unwrap_err().to_string();
    assert!(e.contains("MAX_P must be between 0 and 1"), "{e}");
    let e = r.write_path("r.max_thresh", "x").unwrap_err().to_string();
    assert!(e.contains("MAX_THRESH: expected unsigned integer"), "{e}");
    assert_eq!(read(&mut r, "r.min_thresh"), "5");
    assert_eq!(
        read(&mut r, "r.config"),
        "5, 80, 0.1, QUEUES q, STABILITY 4"
    );

    // A configuration write keeps the queues and the average.
    r.write_path("r.config", "1, 3, 0.5, GENTLE false").unwrap();
    assert_eq!(read(&mut r, "r.max_p"), "0.5");
    assert_eq!(read(&mut r, "r.max_thresh"), "3");
    assert_eq!(read(&mut r, "r.queues"), "q");
    assert_eq!(read(&mut r, "r.avg_queue_size"), "0.184");
    let e = r
        .write_path("r.config", "3, 1, 0.5")
        .unwrap_err()
        .to_string();
    assert!(e.contains("MIN_THRESH must be <= MAX_THRESH"), "{e}");
}

#[test]
fn queues_are_found_downstream_or_named() {
    // Through a Tee: both queues, summed.
    let mut r = router(
        "i :: Idle -> r :: RED(1, 2, 0.5, STABILITY 0) -> t :: Tee -> q1 :: Queue -> Discard(ACTIVE false);
         t[1] -> q2 :: Queue -> Discard(ACTIVE false)",
    );
    assert_eq!(read(&mut r, "r.queues"), "q1\nq2");
    inject_bytes(&mut r, "i", 0, &[b"x", b"y"]);
    assert_eq!(read(&mut r, "r.avg_queue_size"), "2");
    // Named: the queue RED watches need not be downstream.
    let mut r = router(
        "i :: Idle -> r :: RED(1, 2, 0.5, QUEUES other) -> q :: Queue -> Discard(ACTIVE false);
         Idle -> other :: SimpleQueue -> Discard(ACTIVE false)",
    );
    assert_eq!(read(&mut r, "r.queues"), "other");
    inject_bytes(&mut r, "i", 0, &[&b"x"[..]; 50]);
    assert_eq!(num(&mut r, "r.drops"), 0);
    assert_eq!(num(&mut r, "q.length"), 50);
}

#[test]
fn configuration_errors() {
    let cases = [
        ("10, 5, 0.1", "MIN_THRESH must be <= MAX_THRESH"),
        ("1, 5, 1.5", "MAX_P must be between 0 and 1"),
        ("1, 5, -0.5", "MAX_P: expected real number"),
        ("1, 70000, 0.1", "MAX_THRESH must be <= 65535"),
        (
            "1, 5, 0.1, STABILITY 17",
            "STABILITY must be between 0 and 16",
        ),
        ("1, 5", "missing mandatory MAX_P argument"),
        ("1, 5, 0.1, QUEUES nowhere", "no element named 'nowhere'"),
        ("1, 5, 0.1, QUEUES c", "'c' is not a Storage element"),
    ];
    for (args, msg) in cases {
        let e = config_error(&format!(
            "Idle -> RED({args}) -> c :: Counter -> Queue -> Discard(ACTIVE false)"
        ));
        assert!(e.contains(msg), "RED({args}): {e}");
    }
    let e = config_error("Idle -> RED(1, 5, 0.1) -> Discard");
    assert!(e.contains("no nearby Queues"), "{e}");
    let e = config_error("Idle -> AdaptiveRED(20, 1.5) -> Queue -> Discard(ACTIVE false)");
    assert!(e.contains("MAX_P must be between 0 and 1"), "{e}");
    // MAX_P exactly 1 and MIN_THRESH equal to MAX_THRESH are allowed.
    router("Idle -> RED(5, 5, 1) -> Queue -> Discard(ACTIVE false)");
}

#[test]
fn every_packet_is_forwarded_queued_or_counted() {
    // A source faster than the queue's drain: RED drops, and every packet is accounted for.
    let conf = "InfiniteSource(LIMIT 20000, BURST 4, STOP true) -> r :: RED(5, 20, 0.1)
        -> q :: Queue(100) -> Unqueue(BURST 1) -> c :: Counter -> Discard";
    let mut r = router(conf);
    r.run_until_idle();
    let a = assert_conserved(&mut r, "RED dropping");
    assert!(num(&mut r, "r.drops") > 0);
    assert_eq!(a.dropped, num(&mut r, "r.drops") + num(&mut r, "q.drops"));
    // With output 1 connected, the marked packets leave there and nothing is dropped.
    let mut r = router(&format!("{conf}; r[1] -> m :: Counter -> Discard"));
    r.run_until_idle();
    assert_conserved(&mut r, "RED marking");
    let marked = num(&mut r, "r.drops");
    assert!(marked > 0);
    assert_eq!(num(&mut r, "m.count"), marked);
    assert_eq!(dropped_for(&mut r, "early drop"), 0);
    assert_eq!(dropped_for(&mut r, "forced drop"), 0);
}

#[test]
fn red_reads_a_queue_pulled_on_another_thread() {
    // The queue is shared between the threads; RED still sees its length: it drops before
    // the queue fills (else the source would only sleep on the full queue).
    let conf = "s :: InfiniteSource(LIMIT 5000, STOP true) -> r :: RED(5, 20, 0.1)
                -> q :: Queue(100) -> u :: RatedUnqueue(2000) -> c :: Counter -> Discard;
                StaticThreadSched(s 0, u 1);";
    let mut r = router_with(conf, 2, &[], &[]);
    r.run_until_idle();
    assert_eq!(read(&mut r, "r.queues"), "q");
    assert!(num(&mut r, "r.drops") > 0);
    assert_eq!(num(&mut r, "q.drops"), 0);
    assert_conserved(&mut r, "RED before a queue between threads");
}

#[test]
fn pull_red_drops_at_the_head_of_the_queue_upstream() {
    let mut r =
        router("i :: Idle -> q :: Queue(100) -> r :: RED(2, 4, 0.5, STABILITY 1) -> d :: Discard(ACTIVE false)");
    assert_eq!(read(&mut r, "r.queues"), "q");
    inject_bytes(&mut r, "i", 0, &[&b"x"[..]; 40]);
    let mut out = 0;
    while num(&mut r, "q.length") > 0 {
        out += pull(&mut r, "d", 0, 1).len() as u64;
    }
    let drops = num(&mut r, "r.drops");
    assert!(drops > 20, "{drops}");
    assert_eq!(out + drops, 40);
}

#[test]
fn adaptive_red_sets_thresholds_from_the_target() {
    let mut r =
        router("i :: Idle -> r :: AdaptiveRED(20, 0.02) -> q :: Queue -> Discard(ACTIVE false)");
    assert_eq!(read(&mut r, "r.min_thresh"), "10");
    assert_eq!(read(&mut r, "r.max_thresh"), "30");
    assert_eq!(read(&mut r, "r.max_p"), "0.02");
    assert_eq!(read(&mut r, "r.config"), "20, 0.02, QUEUES q, STABILITY 4");
    // Small targets are raised to 10.
    let mut r =
        router("i :: Idle -> r :: AdaptiveRED(4, 0.02) -> q :: Queue -> Discard(ACTIVE false)");
    assert_eq!(read(&mut r, "r.min_thresh"), "5");
    assert_eq!(read(&mut r, "r.max_thresh"), "15");
}

#[test]
fn adaptive_red_lowers_max_p_while_the_queue_is_short() {
    let mut r = router(
        "RatedSource(RATE 100, LIMIT 500, STOP true) -> r :: AdaptiveRED(20, 0.5)
         -> q :: Queue -> Unqueue -> Discard",
    );
    r.run_until_idle();
    // Multiplied by 0.9 in 16-bit fixed point every half second, over about 5 seconds.
    let shown = read(&mut r, "r.max_p");
    let mut p = 0x8000u64;
    let mut seen = Vec::new();
    for _ in 0..12 {
        p = (p * 58982) >> 16;
        seen.push(p);
    }
    let value: f64 = shown.parse().unwrap();
    let k = seen
        .iter()
        .position(|&v| ((v as f64) / 65536.0 - value).abs() < 1e-5)
        .unwrap_or_else(|| panic!("max_p {shown} is no power of 0.9 of 0.5"));
    assert!((8..=11).contains(&k), "{k} adaptations");
}

#[test]
fn adaptive_red_raises_max_p_while_the_queue_is_long() {
    let mut r = Kit::sim().router(
        "RatedSource(RATE 2000, LIMIT 10000, STOP true) -> r :: AdaptiveRED(20, 0.02)
         -> q :: Queue(1000) -> RatedUnqueue(1000) -> Discard",
    );
    r.run_until_idle();
    let p: f64 = read(&mut r, "r.max_p").parse().unwrap();
    assert!(p > 0.05, "max_p {p}");
    assert!(num(&mut r, "r.drops") > 0);
    assert_conserved(&mut r, "AdaptiveRED");
}
