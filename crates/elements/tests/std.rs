//! Behaviour tests of the standard elements through real configurations, on simulated time.
//!
//! Packets are injected by pushing out of an `Idle` element and collected by pulling from a
//! `Queue` through an inactive `Discard`, both through `Router::with_element`.

use sluice_core::{Batch, Packet, Router, RouterOptions, Timestamp};

fn router(conf: &str) -> Router {
    let flat = sluice_lang::parse_config(conf, "test.click", &[]).expect("parses");
    Router::new(
        flat,
        &sluice_elements::library(),
        RouterOptions {
            simtime: true,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

fn errors(conf: &str) -> String {
    let flat = sluice_lang::parse_config(conf, "test.click", &[]).expect("parses");
    match Router::new(flat, &sluice_elements::library(), RouterOptions::default()) {
        Ok(_) => panic!("configuration should fail"),
        Err(e) => e.join("\n"),
    }
}

fn num(r: &mut Router, path: &str) -> u64 {
    let v = r
        .read_path(path)
        .unwrap_or_else(|e| panic!("{}: {}", path, e));
    v.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{} = {:?}", path, v))
}

fn text(r: &mut Router, path: &str) -> String {
    r.read_path(path).unwrap().trim().to_string()
}

fn elapsed(r: &Router) -> f64 {
    (r.clock().now() - Timestamp::SIM_START).as_secs_f64()
}

/// Pushes packets out of output `port` of element `name` (an Idle).
fn inject(r: &mut Router, name: &str, port: usize, pkts: &[&[u8]]) {
    let e = r.element_index(name).expect("element");
    for chunk in pkts.chunks(sluice_core::BATCH_MAX) {
        r.with_element(e, |_, cx| {
            let mut b = Batch::new();
            for p in chunk {
                b.push(Packet::from_bytes(p)).unwrap();
            }
            cx.push(port, b);
        })
        .expect("element free");
    }
}

/// Pulls everything available on input `port` of element `name`.
fn drain(r: &mut Router, name: &str, port: usize) -> Vec<Vec<u8>> {
    let e = r.element_index(name).expect("element");
    let mut out = Vec::new();
    loop {
        let b = r
            .with_element(e, |_, cx| cx.pull(port, 32))
            .expect("element free");
        if b.is_empty() {
            return out;
        }
        out.extend(b.into_iter().map(|p| p.data().to_vec()));
    }
}

fn strs(v: &[Vec<u8>]) -> Vec<String> {
    v.iter()
        .map(|d| String::from_utf8_lossy(d).into_owned())
        .collect()
}

// ---- sources and rates on simulated time ----

#[test]
fn rated_source_runs_instantly_under_simtime() {
    let mut r = router("RatedSource(RATE 100, LIMIT 500, STOP true) -> c :: Counter -> Discard");
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 500);
    let t = elapsed(&r);
    assert!((4.9..=5.1).contains(&t), "simulated time {}", t);
}

#[test]
fn rated_source_handlers_and_length() {
    let mut r = router(
        "s :: RatedSource(\"ab\", 1000, 30, LENGTH 5, STOP true) -> c :: Counter -> Discard",
    );
    assert_eq!(text(&mut r, "s.rate"), "1000");
    assert_eq!(text(&mut r, "s.length"), "5");
    r.run_until_idle();
    assert_eq!(num(&mut r, "s.count"), 30);
    assert_eq!(num(&mut r, "c.byte_count"), 150);
    assert!(elapsed(&r) < 0.05);
}

#[test]
fn timed_source_emits_every_interval() {
    let mut r = router("TimedSource(0.5s, \"xyz\", LIMIT 4, STOP true) -> c :: Counter -> Discard");
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 4);
    assert_eq!(num(&mut r, "c.byte_count"), 12);
    assert!((elapsed(&r) - 2.0).abs() < 1e-6, "{}", elapsed(&r));
}

#[test]
fn rated_unqueue_paces_a_queue() {
    let mut r = router(
        "InfiniteSource(LIMIT 300) -> Queue(1000) -> u :: RatedUnqueue(100) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 300);
    assert_eq!(num(&mut r, "u.count"), 300);
    let t = elapsed(&r);
    assert!((2.9..=3.05).contains(&t), "simulated time {}", t);
}

#[test]
fn pull_to_push_is_unqueue() {
    let mut r =
        router("InfiniteSource(LIMIT 77) -> Queue -> PullToPush -> c :: Counter -> Discard");
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 77);
}

#[test]
fn bandwidth_rated_unqueue_paces_bytes() {
    let mut r = router(
        "InfiniteSource(LIMIT 100, LENGTH 100) -> Queue -> u :: BandwidthRatedUnqueue(10000) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 100);
    assert_eq!(num(&mut r, "u.byte_count"), 10000);
    let t = elapsed(&r);
    assert!((0.95..=1.05).contains(&t), "simulated time {}", t);
    let r2 = router(
        "InfiniteSource(LIMIT 10, LENGTH 125) -> Queue -> BandwidthRatedUnqueue(8kbps) -> Discard",
    );
    let mut r2 = r2;
    r2.run_until_idle();
    assert!((elapsed(&r2) - 1.25).abs() < 0.05, "{}", elapsed(&r2));
}

#[test]
fn average_counter_measures_rate() {
    let mut r =
        router("RatedSource(RATE 50, LIMIT 101, STOP true) -> a :: AverageCounter -> Discard");
    r.run_until_idle();
    assert_eq!(num(&mut r, "a.count"), 101);
    let rate = num(&mut r, "a.rate");
    assert!((50..=51).contains(&rate), "{}", rate);
    r.write_path("a.reset", "").unwrap();
    assert_eq!(num(&mut r, "a.count"), 0);
}

#[test]
fn rated_splitter_splits_at_rate() {
    let mut r = router(
        "RatedSource(RATE 1000, LIMIT 2000, STOP true) -> rs :: RatedSplitter(100); rs[0] -> c0 :: Counter -> Discard; rs[1] -> c1 :: Counter -> Discard",
    );
    r.run_until_idle();
    let (c0, c1) = (num(&mut r, "c0.count"), num(&mut r, "c1.count"));
    assert_eq!(c0 + c1, 2000);
    assert!((195..=205).contains(&c0), "c0 {}", c0);
    let mut r = router(
        "RatedSource(RATE 1000, LIMIT 100, STOP true) -> rs :: RatedSplitter(100) -> Discard",
    );
    r.run_until_idle();
    assert!(num(&mut r, "rs.drops") >= 85);
}

#[test]
fn bandwidth_rated_splitter_splits_bytes() {
    let mut r = router(
        "RatedSource(RATE 100, LIMIT 200, LENGTH 100, STOP true) -> bs :: BandwidthRatedSplitter(5000); bs[0] -> c0 :: Counter -> Discard; bs[1] -> c1 :: Counter -> Discard",
    );
    r.run_until_idle();
    let c0 = num(&mut r, "c0.count");
    assert_eq!(c0 + num(&mut r, "c1.count"), 200);
    assert!((95..=105).contains(&c0), "c0 {}", c0);
}

#[test]
fn link_unqueue_models_latency_and_bandwidth() {
    let mut r = router(
        "InfiniteSource(LIMIT 10, LENGTH 125) -> Queue -> l :: LinkUnqueue(1s, 8kbps) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 10);
    assert_eq!(num(&mut r, "l.size"), 0);
    let t = elapsed(&r);
    assert!((t - 2.25).abs() < 1e-3, "simulated time {}", t);
}

#[test]
fn delay_unqueue_and_delay_shaper_delay_packets() {
    let mut r = router(
        "InfiniteSource(LIMIT 10) -> Queue -> DelayUnqueue(0.5s) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 10);
    assert!((elapsed(&r) - 0.5).abs() < 1e-6, "{}", elapsed(&r));
    let mut r = router(
        "InfiniteSource(LIMIT 10) -> Queue -> ds :: DelayShaper(0.25s) -> Unqueue -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 10);
    assert_eq!(num(&mut r, "ds.count"), 10);
    assert!((elapsed(&r) - 0.25).abs() < 1e-6, "{}", elapsed(&r));
}

#[test]
fn time_filter_passes_a_window() {
    let mut r = router(
        "RatedSource(RATE 10, LIMIT 50, STOP true) -> tf :: TimeFilter(START_AFTER 1, INTERVAL 2) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 20);
    assert_eq!(num(&mut r, "tf.drops"), 30);
}

#[test]
fn set_and_adjust_timestamp() {
    let mut r = router(
        "i :: Idle -> SetTimestamp(100.5) -> AdjustTimestamp(-0.5) -> TimeFilter(START 100, END 100.000000001) -> c :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[b"a", b"b", b"c"]);
    assert_eq!(num(&mut r, "c.count"), 3);
    assert!(errors("Idle -> AdjustTimestamp(abc) -> Discard").contains("TIME"));
}

// ---- Tee, paint, strip ----

#[test]
fn tee_clones_are_independent() {
    let mut r = router(
        "i :: Idle -> t :: Tee(2); t[0] -> Paint(5) -> Pad(6) -> q0 :: Queue -> d0 :: Discard(false);
         t[1] -> cp :: CheckPaint(0) -> q1 :: Queue -> d1 :: Discard(false);",
    );
    inject(&mut r, "i", 0, &[b"abc", b"xyz"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["abc\0\0\0", "xyz\0\0\0"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["abc", "xyz"]);
    assert_eq!(num(&mut r, "cp.count"), 2);
    assert!(errors("Idle -> Tee(3) -> Discard").contains("N is 3"));
}

#[test]
fn pull_tee_copies_to_push_outputs() {
    let mut r = router(
        "i :: Idle -> q :: Queue -> pt :: PullTee(2) -> d :: Discard(false); pt[1] -> c :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[b"1", b"2", b"3"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["1", "2", "3"]);
    assert_eq!(num(&mut r, "c.count"), 3);
}

#[test]
fn paint_check_paint_paint_tee() {
    let mut r = router(
        "i :: Idle -> Paint(3) -> pt :: PaintTee(3) -> cp :: CheckPaint(3) -> c0 :: Counter -> Discard;
         cp[1] -> c1 :: Counter -> Discard; pt[1] -> c2 :: Counter -> cp2 :: CheckPaint(4) -> Discard;
         j :: Idle -> Paint(7, ANNO 2) -> cp3 :: CheckPaint(7, 2) -> c3 :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[b"a", b"b"]);
    inject(&mut r, "j", 0, &[b"z"]);
    assert_eq!(num(&mut r, "c0.count"), 2);
    assert_eq!(num(&mut r, "c1.count"), 0);
    assert_eq!(num(&mut r, "c2.count"), 2);
    assert_eq!(num(&mut r, "cp2.drops"), 2);
    assert_eq!(num(&mut r, "c3.count"), 1);
    r.write_path("cp.color", "9").unwrap();
    inject(&mut r, "i", 0, &[b"c"]);
    assert_eq!(num(&mut r, "c1.count"), 1);
}

#[test]
fn strip_unstrip_resize_pad() {
    let mut r = router(
        "i :: Idle -> s :: Strip(2) -> q :: Queue -> d :: Discard(false);
         j :: Idle -> Strip(2) -> Unstrip(2) -> Resize(1, -1) -> Pad(8) -> q2 :: Queue -> d2 :: Discard(false);
         k :: Idle -> rs :: Resize(-3, 2) -> q3 :: Queue -> d3 :: Discard(false)",
    );
    inject(&mut r, "i", 0, &[b"abcdef", b"a"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["cdef"]);
    assert_eq!(num(&mut r, "s.drops"), 1);
    inject(&mut r, "j", 0, &[b"abcdef"]);
    let got = drain(&mut r, "d2", 0);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].len(), 8);
    assert_eq!(&got[0][1..6], b"abcde");
    inject(&mut r, "k", 0, &[b"abcd", b"ab"]);
    assert_eq!(strs(&drain(&mut r, "d3", 0)), ["d\0\0"]);
    assert_eq!(num(&mut r, "rs.drops"), 1);
}

#[test]
fn strip_to_network_header_counts_unmarked() {
    let mut r =
        router("i :: Idle -> s :: StripToNetworkHeader -> q :: Queue -> d :: Discard(false)");
    inject(&mut r, "i", 0, &[b"abc"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["abc"]);
    assert_eq!(num(&mut r, "s.unmarked"), 1);
}

#[test]
fn clipboard_copies_and_pastes() {
    let mut r = router(
        "i :: Idle; cb :: Clipboard(1/2, 4/1);
         i[0] -> [0]cb[0] -> q0 :: Queue -> d0 :: Discard(false);
         i[1] -> [1]cb[1] -> q1 :: Queue -> d1 :: Discard(false);",
    );
    inject(&mut r, "i", 0, &[b"0XY3Z5"]);
    inject(&mut r, "i", 1, &[b"abcdefg", b"ab"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["0XY3Z5"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["aXYdZfg"]);
    assert_eq!(num(&mut r, "cb.drops"), 1);
    assert_eq!(text(&mut r, "cb.data"), "58595a");
}

// ---- switches ----

#[test]
fn switch_handler_moves_and_drops() {
    let mut r = router(
        "i :: Idle -> s :: Switch(0); s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[&b"a"[..]; 3]);
    r.write_path("s.switch", "1").unwrap();
    assert_eq!(text(&mut r, "s.switch"), "1");
    inject(&mut r, "i", 0, &[&b"a"[..]; 2]);
    r.write_path("s.switch", "-1").unwrap();
    inject(&mut r, "i", 0, &[&b"a"[..]; 4]);
    assert!(r.write_path("s.switch", "2").is_err());
    assert_eq!(num(&mut r, "c0.count"), 3);
    assert_eq!(num(&mut r, "c1.count"), 2);
    assert_eq!(num(&mut r, "s.drops"), 4);
}

#[test]
fn static_switch_and_round_robin_switch() {
    let mut r = router(
        "i :: Idle -> ss :: StaticSwitch(1); ss[0] -> a :: Counter -> Discard; ss[1] -> b :: Counter -> Discard;
         j :: Idle -> ss2 :: StaticSwitch(-1) -> Discard;
         k :: Idle -> rr :: RoundRobinSwitch; rr[0] -> r0 :: Counter -> Discard; rr[1] -> r1 :: Counter -> Discard; rr[2] -> r2 :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[&b"x"[..]; 5]);
    inject(&mut r, "j", 0, &[&b"x"[..]; 5]);
    inject(&mut r, "k", 0, &[&b"x"[..]; 10]);
    assert_eq!((num(&mut r, "a.count"), num(&mut r, "b.count")), (0, 5));
    assert_eq!(num(&mut r, "ss2.drops"), 5);
    assert_eq!(
        (
            num(&mut r, "r0.count"),
            num(&mut r, "r1.count"),
            num(&mut r, "r2.count")
        ),
        (4, 3, 3)
    );
    assert!(r.write_path("ss.switch", "0").is_err());
}

#[test]
fn hash_switch_is_deterministic_and_spreads() {
    let conf = "i :: Idle -> h :: HashSwitch(1, 2); h[0] -> c0 :: Counter -> Discard; h[1] -> c1 :: Counter -> Discard;
         h[2] -> c2 :: Counter -> Discard; h[3] -> c3 :: Counter -> Discard";
    let pkts: Vec<Vec<u8>> = (0..400u32)
        .map(|i| vec![0, (i % 256) as u8, (i / 256) as u8, 9])
        .collect();
    let refs: Vec<&[u8]> = pkts.iter().map(|p| p.as_slice()).collect();
    let counts =
        |r: &mut Router| -> Vec<u64> { (0..4).map(|i| num(r, &format!("c{}.count", i))).collect() };
    let mut r1 = router(conf);
    inject(&mut r1, "i", 0, &refs);
    let a = counts(&mut r1);
    let mut r2 = router(conf);
    inject(&mut r2, "i", 0, &refs);
    assert_eq!(a, counts(&mut r2), "same packets, same outputs");
    assert_eq!(a.iter().sum::<u64>(), 400);
    assert!(a.iter().all(|&c| c >= 50), "spread {:?}", a);
    // One flow always takes one output.
    let mut r3 = router(conf);
    inject(&mut r3, "i", 0, &[&b"\x00\x05\x07\x00"[..]; 40]);
    assert_eq!(counts(&mut r3).iter().filter(|&&c| c == 40).count(), 1);
    inject(&mut r3, "i", 0, &[b"\x00\x05"]);
    assert_eq!(num(&mut r3, "h.drops"), 1);
}

#[test]
fn suppressor_handlers() {
    let mut r = router(
        "i :: Idle; s :: Suppressor; i[0] -> [0]s[0] -> c0 :: Counter -> Discard; i[1] -> [1]s[1] -> c1 :: Counter -> Discard",
    );
    assert!(r.read_path("s.handlers").unwrap().contains("active1"));
    assert!(r.write_path("s.active2", "true").is_err());
    r.write_path("s.active1", "false").unwrap();
    assert_eq!(text(&mut r, "s.active1"), "false");
    inject(&mut r, "i", 0, &[&b"a"[..]; 2]);
    inject(&mut r, "i", 1, &[&b"a"[..]; 3]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (2, 0));
    assert_eq!(num(&mut r, "s.drops"), 3);
    r.write_path("s.reset", "").unwrap();
    inject(&mut r, "i", 1, &[b"a"]);
    assert_eq!(num(&mut r, "c1.count"), 1);
}

#[test]
fn bypass_switches_path() {
    let mut r = router(
        "i :: Idle -> b :: Bypass; b[0] -> c0 :: Counter -> Discard; b[1] -> c1 :: Counter -> Discard",
    );
    inject(&mut r, "i", 0, &[b"a"]);
    r.write_path("b.active", "true").unwrap();
    inject(&mut r, "i", 0, &[b"a", b"b"]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (1, 2));
}

// ---- queues and schedulers ----

#[test]
fn front_drop_queue_drops_oldest() {
    let mut r = router("i :: Idle -> q :: FrontDropQueue(3) -> d :: Discard(false)");
    inject(&mut r, "i", 0, &[b"1", b"2", b"3", b"4", b"5"]);
    assert_eq!(num(&mut r, "q.drops"), 2);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["3", "4", "5"]);
}

#[test]
fn mixed_queue_fifo_and_lifo() {
    let mut r = router(
        "i :: Idle; q :: MixedQueue(4); i[0] -> [0]q; i[1] -> [1]q; q -> d :: Discard(false)",
    );
    inject(&mut r, "i", 0, &[b"a1", b"a2"]);
    inject(&mut r, "i", 1, &[b"b1", b"b2"]);
    inject(&mut r, "i", 0, &[b"a3"]);
    inject(&mut r, "i", 1, &[b"b3"]);
    assert_eq!(num(&mut r, "q.drops"), 2);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["b3", "b2", "b1", "a1"]);
}

#[test]
fn prio_sched_serves_input_zero_first() {
    let mut r = router(
        "i :: Idle; i[0] -> hq :: Queue -> [0]ps :: PrioSched; i[1] -> lq :: Queue -> [1]ps; ps -> d :: Discard(false)",
    );
    inject(&mut r, "i", 1, &[b"l1", b"l2"]);
    inject(&mut r, "i", 0, &[b"h1", b"h2"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["h1", "h2", "l1", "l2"]);
}

#[test]
fn round_robin_sched_alternates() {
    let mut r = router(
        "i :: Idle; i[0] -> a :: Queue -> [0]rr :: RoundRobinSched; i[1] -> b :: Queue -> [1]rr; rr -> d :: Discard(false)",
    );
    inject(&mut r, "i", 0, &[b"a1", b"a2", b"a3"]);
    inject(&mut r, "i", 1, &[b"b1", b"b2"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["a1", "b1", "a2", "b2", "a3"]);
}

#[test]
fn schedulers_let_pullers_sleep() {
    // The runs end only if the pullers sleep on the queues' empty notifiers.
    let mut r = router(
        "InfiniteSource(LIMIT 100) -> q1 :: Queue -> [0]ps :: PrioSched -> d :: Discard; Idle -> q2 :: Queue -> [1]ps;",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "d.count"), 100);
    let mut r = router(
        "InfiniteSource(LIMIT 60) -> q1 :: Queue -> [0]rr :: RoundRobinSched -> Unqueue -> c :: Counter -> Discard;
         InfiniteSource(LIMIT 40) -> q2 :: Queue -> [1]rr;",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 100);
    let mut r = router(
        "Idle -> Queue -> Unqueue -> Discard; TimedSource(1s, LIMIT 2) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 2);
}

#[test]
fn pull_switch_handler() {
    let mut r = router(
        "i :: Idle; i[0] -> a :: Queue -> [0]ps :: PullSwitch; i[1] -> b :: Queue -> [1]ps; ps -> d :: Discard(false)",
    );
    inject(&mut r, "i", 0, &[b"a1"]);
    inject(&mut r, "i", 1, &[b"b1"]);
    r.write_path("ps.switch", "1").unwrap();
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["b1"]);
    r.write_path("ps.switch", "-1").unwrap();
    assert!(drain(&mut r, "d", 0).is_empty());
    r.write_path("ps.switch", "0").unwrap();
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["a1"]);
}

#[test]
fn idle_drops_pushed_packets() {
    let mut r = router("i :: Idle -> x :: Idle");
    inject(&mut r, "i", 0, &[b"a", b"b"]);
    assert_eq!(num(&mut r, "x.drops"), 2);
}

#[test]
fn every_standard_class_has_a_doc_page() {
    for c in sluice_elements::standard::CLASSES {
        let doc = c.doc();
        let title = doc.lines().next().unwrap_or_default();
        assert!(title.contains(" — "), "{}: {:?}", c.name, title);
        assert!(
            doc.contains(c.name),
            "{}: doc does not name the class",
            c.name
        );
        assert!(doc.contains("Ports"), "{} doc lacks Ports", c.name);
    }
}
