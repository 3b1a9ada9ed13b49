//! Behaviour tests of the standard elements through real configurations, on simulated time.
//!
//! Packets are injected by pushing out of an `Idle` element and collected by pulling from a
//! `Queue` through an inactive `Discard`, both with the test kit (`inject_bytes`, `drain`).

use sluice_core::{Packet, Router, Timestamp};
use sluice_testkit::{
    bytes, config_error, drain, elapsed, inject_bytes, inject_packets, num, pull, read, router,
    strs, Kit,
};

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
    assert_eq!(read(&mut r, "s.rate"), "1000");
    assert_eq!(read(&mut r, "s.length"), "5");
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

/// Click's RatedUnqueue-01, BandwidthRatedUnqueue-01 and BandwidthRatedSplitter-01 tests:
/// four rate limiters each, 10 simulated seconds, Click's counts (its token bucket refills
/// once per millisecond, so RATE 100 with a 1-packet burst sends one packet every 11 ms).
#[test]
fn rate_limiters_let_through_what_clicks_do() {
    let chain = |i: usize, mid: &str| {
        format!("InfiniteSource(LENGTH 100) -> Queue(10) -> u{i} :: {mid} -> c{i} :: Counter -> Discard;\n")
    };
    let cases: [(&[&str], [u64; 4]); 3] = [
        (
            &[
                "RatedUnqueue(RATE 2)",
                "RatedUnqueue(RATE 2, BURST_SIZE 50)",
                "RatedUnqueue(RATE 2, BURST_DURATION 25)",
                "RatedUnqueue(RATE 100, BURST_SIZE 1)",
            ],
            [20, 69, 69, 910],
        ),
        (
            &[
                "BandwidthRatedUnqueue(RATE 200Bps)",
                "BandwidthRatedUnqueue(RATE 200Bps, BURST_BYTES 5000)",
                "BandwidthRatedUnqueue(RATE 200Bps, BURST_DURATION 25)",
                "BandwidthRatedUnqueue(RATE 10000Bps, BURST_BYTES 100)",
            ],
            [21, 71, 71, 1001],
        ),
        (
            &[
                "BandwidthRatedUnqueue(RATE 2000Bps) -> BandwidthRatedSplitter(RATE 200Bps)",
                "BandwidthRatedUnqueue(RATE 2000Bps) -> BandwidthRatedSplitter(RATE 200Bps, BURST_BYTES 5000)",
                "BandwidthRatedUnqueue(RATE 2000Bps) -> BandwidthRatedSplitter(RATE 200Bps, BURST_DURATION 25)",
                "BandwidthRatedUnqueue(RATE 20000Bps) -> BandwidthRatedSplitter(RATE 10000Bps, BURST_BYTES 100)",
            ],
            [20, 70, 70, 1001],
        ),
    ];
    for (mids, want) in cases {
        let mut conf: String = mids
            .iter()
            .enumerate()
            .map(|(i, m)| chain(i + 1, m))
            .collect();
        // Click's tests read the counts at 10 s; the pullers stop there, before the stop's
        // drain.
        conf.push_str("Script(wait 10");
        for i in 1..=4 {
            conf.push_str(&format!(", write u{i}.active false"));
        }
        conf.push_str(", write stop);");
        let mut r = router(&conf);
        r.run_until_idle();
        let got: Vec<u64> = (1..=4)
            .map(|i| num(&mut r, &format!("c{i}.count")))
            .collect();
        assert_eq!(got, want, "{conf}");
    }
}

/// A queue's empty notifier sleeps only after ten pulls in a row found it empty (Click's
/// notifier-05): a Discard fed packet by packet by a source keeps its upstream signal active.
#[test]
fn queue_empty_notifier_sleeps_lazily() {
    // Real time: with a source always busy, simulated time would never reach the waits.
    let mut r = Kit::new().router(
        "i :: InfiniteSource(ACTIVE false) -> q :: NotifierQueue(5) -> n :: NotifierDebug -> d :: Discard;
         s :: Script(export busy x, export idle x, write i.active true, wait 0.05s,
                     set busy $(n.signal), write i.active false, wait 0.05s,
                     set idle $(n.signal), write stop);",
    );
    r.run_until_idle();
    let busy = r.read_path("s.busy").unwrap();
    let idle = r.read_path("s.idle").unwrap();
    assert!(busy.trim_end().ends_with('*'), "{busy}");
    assert!(idle.trim_end().ends_with(":0"), "{idle}");
    assert!(num(&mut r, "d.count") > 100);
}

#[test]
fn random_sample_keeps_a_fraction_and_counts_the_rest() {
    let mut r = router(
        "RandomSeed(7); InfiniteSource(LIMIT 10000) -> rs :: RandomSample(0.25);
         rs[0] -> c0 :: Counter -> Discard; rs[1] -> c1 :: Counter -> Discard;
         InfiniteSource(LIMIT 1000) -> Queue -> d :: RandomSample(DROP 1)
           -> Unqueue -> c2 :: Counter -> Discard;",
    );
    r.run_until_idle();
    let (c0, c1) = (num(&mut r, "c0.count"), num(&mut r, "c1.count"));
    assert_eq!(c0 + c1, 10000);
    assert!((2300..=2700).contains(&c0), "{c0}");
    assert_eq!(num(&mut r, "rs.drops"), c1);
    assert_eq!(num(&mut r, "c2.count"), 0);
    assert_eq!(num(&mut r, "d.drops"), 1000);
    assert_eq!(r.read_path("rs.drop_prob").unwrap().trim(), "0.75");
    r.write_path("rs.drop_prob", "0.5").unwrap();
    assert_eq!(r.read_path("rs.sampling_prob").unwrap().trim(), "0.5");
    assert!(r.write_path("rs.sampling_prob", "2").is_err());
    let e = config_error("Idle -> RandomSample(SAMPLE 0.5, DROP 0.5) -> Discard");
    assert!(e.contains("at most one of SAMPLE and DROP"), "{e}");
}

/// Click's perf-01 chain (45 elements of every family) without its two IPRewriter-family
/// elements: every packet makes it through, by push and by pull.
#[test]
fn clicks_perf_chain_runs_without_its_rewriters() {
    let mut r = router(
        "InfiniteSource(LENGTH 8, BURST 2)
         -> Align(4, 0)
         -> UDPIPEncap(1.1.1.1, 11, 2.2.2.2, 22, CHECKSUM false)
         -> StripToNetworkHeader
         -> IPClassifier(src 1.1.1.1)
         -> IPFilter(allow host 2.2.2.2)
         -> IPReassembler
         -> IPFragmenter(MTU 1500)
         -> CheckIPHeader(0)
         -> CheckUDPHeader()
         -> DecIPTTL()
         -> GetIPAddress(IP dst)
         -> StoreIPAddress(dst)
         -> SetIPAddress(1.2.3.4)
         -> StripIPHeader
         -> UnstripIPHeader
         -> EtherEncap(0x0800, 00:01:02:03:04:05, 00:01:02:03:04:06)
         -> MarkMACHeader(0, 14)
         -> Classifier(12/0800)
         -> HostEtherFilter(00:01:02:03:04:06)
         -> VLANDecap
         -> VLANEncap
         -> SetVLANAnno(0)
         -> AverageCounter
         -> Null
         -> Print(ACTIVE false)
         -> IPPrint(ACTIVE false)
         -> ARPPrint(ACTIVE false)
         -> Switch(0)
         -> StaticSwitch(0)
         -> Paint(0)
         -> CheckPaint(0)
         -> PaintSwitch()
         -> RandomSample(DROP 0)
         -> Tee
         -> Strip(14)
         -> Unstrip(14)
         -> c2 :: Counter
         -> Switch(0)
         -> Queue(100)
         -> PrioSched
         -> RoundRobinSched
         -> PullSwitch(0)
         -> Unqueue(BURST 3)
         -> c3 :: Counter(COUNT_CALL 10000 stop)
         -> Discard;",
    );
    r.run_until_idle();
    assert!(num(&mut r, "c3.count") >= 10000);
    assert_eq!(num(&mut r, "c2.count"), num(&mut r, "c3.count"));
}

/// QuickNoteQueue's empty notifier sleeps as soon as the queue is empty, even when no pull
/// fails afterwards (Click's QuickNoteQueue-01; a Queue's would stay awake and keep the
/// Discard polling the Idle input).
#[test]
fn quick_note_queue_sleeps_at_once() {
    let mut r = router(
        "InfiniteSource(LIMIT 1) -> q :: QuickNoteQueue -> n :: NotifierDebug -> s :: PullSwitch
           -> Counter(COUNT_CALL 1 s.switch 1) -> Discard; Idle -> [1]s;",
    );
    r.run_until_idle();
    let sig = r.read_path("n.signal").unwrap();
    assert!(sig.trim_end().ends_with(":0"), "{sig}");
}

/// PullSwitch's own notifier follows the selected input, so the puller downstream sleeps
/// while that input is idle or spent and wakes when `switch` selects one with packets
/// (Click's PullSwitch-01, through a SimplePullSwitch, which has no notifier).
#[test]
fn pull_switch_notifier_follows_the_selected_input() {
    let mut r = router(
        r#"i1 :: InfiniteSource(\<11>, LIMIT 4); i2 :: InfiniteSource(\<22>, LIMIT 4);
           ps :: PullSwitch(-1); i1 -> [0]ps; i2 -> [1]ps; Idle -> [2]ps;
           ps -> xps :: SimplePullSwitch -> c :: Counter -> d :: Discard;
           s :: Script(export a x, export b x, export n x, export e x, export f x,
                       set a $(d.scheduled), write ps.switch 2, wait 0.5s, set f $(d.scheduled),
                       write ps.switch 0, set b $(d.scheduled), wait 0.5s,
                       set n $(c.count), set e $(d.scheduled), write ps.switch 1, wait 0.5s,
                       write stop);"#,
    );
    r.run_until_idle();
    assert_eq!(read(&mut r, "s.a"), "false");
    assert_eq!(read(&mut r, "s.f"), "false");
    assert_eq!(read(&mut r, "s.b"), "true");
    assert_eq!(read(&mut r, "s.n"), "4");
    assert_eq!(read(&mut r, "s.e"), "false");
    assert_eq!(num(&mut r, "c.count"), 8);
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

/// Each packet leaves stamped with its release time; a packet holds the link for its length
/// plus its extra length annotation (Click's test/standard/LinkUnqueue-01).
#[test]
fn link_unqueue_stamps_release_times() {
    let mut r = router(
        "InfiniteSource(LIMIT 2, LENGTH 20) -> Queue -> LinkUnqueue(5ms, 100kbps)
         -> q :: Queue -> d :: Discard(false)",
    );
    r.run_until_idle();
    let got = pull(&mut r, "d", 0, 32);
    let t: Vec<Timestamp> = got.iter().map(|p| p.timestamp()).collect();
    assert_eq!(t.len(), 2);
    assert_eq!(
        t[1] - t[0],
        Timestamp::from_parts(0, 1_600_000),
        "20 bytes at 12500 B/s"
    );
    assert!((elapsed(&r) - 0.0082).abs() < 1e-9, "{}", elapsed(&r));
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
    inject_bytes(&mut r, "i", 0, &[b"a", b"b", b"c"]);
    assert_eq!(num(&mut r, "c.count"), 3);
    assert!(config_error("Idle -> AdjustTimestamp(abc) -> Discard").contains("TIME"));
    // A zero timestamp is left alone unless ALL (Click's test/analysis/AdjustTimestamp-01).
    let mut r = router(
        "i :: Idle -> AdjustTimestamp(1) -> t :: TimeFilter(START 0.5) -> c :: Counter -> Discard;
         i2 :: Idle -> AdjustTimestamp(1, ALL true) -> t2 :: TimeFilter(START 0.5) -> c2 :: Counter -> Discard",
    );
    inject_bytes(&mut r, "i", 0, &[b"a"]);
    inject_bytes(&mut r, "i2", 0, &[b"a"]);
    assert_eq!(num(&mut r, "c.count"), 0);
    assert_eq!(num(&mut r, "c2.count"), 1);
}

/// TimeFilter's positional START and END, a zero START meaning the first packet's time, and
/// the end moved by `extend_interval` (Click's TimeFilter handlers).
#[test]
fn time_filter_bounds_and_handlers() {
    let mut r = router(
        "i :: Idle -> SetTimestamp(5) -> t :: TimeFilter(0, 6) -> c :: Counter -> Discard;
         i2 :: Idle -> SetTimestamp(7) -> t;",
    );
    inject_bytes(&mut r, "i", 0, &[b"a"]);
    assert_eq!(r.read_path("t.start").unwrap().trim(), "5.000000");
    inject_bytes(&mut r, "i2", 0, &[b"a"]);
    assert_eq!(num(&mut r, "c.count"), 1);
    r.write_path("t.extend_interval", "2").unwrap();
    assert_eq!(r.read_path("t.end").unwrap().trim(), "8.000000");
    inject_bytes(&mut r, "i2", 0, &[b"a"]);
    assert_eq!(num(&mut r, "c.count"), 2);
    assert_eq!(num(&mut r, "t.drops"), 1);
}

// ---- Tee, paint, strip ----

#[test]
fn tee_clones_are_independent() {
    let mut r = router(
        "i :: Idle -> t :: Tee(2); t[0] -> Paint(5) -> Pad(6) -> q0 :: Queue -> d0 :: Discard(false);
         t[1] -> cp :: CheckPaint(0) -> q1 :: Queue -> d1 :: Discard(false);",
    );
    inject_bytes(&mut r, "i", 0, &[b"abc", b"xyz"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["abc\0\0\0", "xyz\0\0\0"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["abc", "xyz"]);
    assert_eq!(num(&mut r, "cp.count"), 2);
    assert!(config_error("Idle -> Tee(3) -> Discard").contains("1 outputs implies 1 arms"));
}

#[test]
fn pull_tee_copies_to_push_outputs() {
    let mut r = router(
        "i :: Idle -> q :: Queue -> pt :: PullTee(2) -> d :: Discard(false); pt[1] -> c :: Counter -> Discard",
    );
    inject_bytes(&mut r, "i", 0, &[b"1", b"2", b"3"]);
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
    inject_bytes(&mut r, "i", 0, &[b"a", b"b"]);
    inject_bytes(&mut r, "j", 0, &[b"z"]);
    assert_eq!(num(&mut r, "c0.count"), 2);
    assert_eq!(num(&mut r, "c1.count"), 0);
    assert_eq!(num(&mut r, "c2.count"), 2);
    assert_eq!(num(&mut r, "cp2.drops"), 2);
    assert_eq!(num(&mut r, "c3.count"), 1);
    r.write_path("cp.color", "9").unwrap();
    inject_bytes(&mut r, "i", 0, &[b"c"]);
    assert_eq!(num(&mut r, "c1.count"), 1);
}

#[test]
fn strip_unstrip_resize_pad() {
    let mut r = router(
        "i :: Idle -> s :: Strip(2) -> q :: Queue -> d :: Discard(false);
         j :: Idle -> Strip(2) -> Unstrip(2) -> Resize(1, -1) -> Pad(8) -> q2 :: Queue -> d2 :: Discard(false);
         k :: Idle -> rs :: Resize(-3, 2) -> q3 :: Queue -> d3 :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"abcdef", b"a"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["cdef"]);
    assert_eq!(num(&mut r, "s.drops"), 1);
    inject_bytes(&mut r, "j", 0, &[b"abcdef"]);
    let got = drain(&mut r, "d2", 0);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].len(), 8);
    assert_eq!(&got[0].data()[1..6], b"abcde");
    inject_bytes(&mut r, "k", 0, &[b"abcd", b"ab"]);
    assert_eq!(
        strs(&drain(&mut r, "d3", 0)),
        ["d\0\0", "\0\0"],
        "as Click: no drops"
    );
    r.write_path("rs.head", "-8").unwrap();
    assert_eq!(read(&mut r, "rs.head"), "-8");
}

#[test]
fn strip_to_network_header_counts_unmarked() {
    let mut r =
        router("i :: Idle -> s :: StripToNetworkHeader -> q :: Queue -> d :: Discard(false)");
    inject_bytes(&mut r, "i", 0, &[b"abc"]);
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
    inject_bytes(&mut r, "i", 0, &[b"0XY3Z5"]);
    inject_bytes(&mut r, "i", 1, &[b"abcdefg", b"ab"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["0XY3Z5"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["aXYdZfg"]);
    assert_eq!(num(&mut r, "cb.drops"), 1);
    assert_eq!(read(&mut r, "cb.data"), "58595a");
}

// ---- switches ----

#[test]
fn switch_handler_moves_and_drops() {
    let mut r = router(
        "i :: Idle -> s :: Switch(0); s[0] -> c0 :: Counter -> Discard; s[1] -> c1 :: Counter -> Discard",
    );
    inject_bytes(&mut r, "i", 0, &[&b"a"[..]; 3]);
    r.write_path("s.switch", "1").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "1");
    inject_bytes(&mut r, "i", 0, &[&b"a"[..]; 2]);
    r.write_path("s.switch", "-1").unwrap();
    inject_bytes(&mut r, "i", 0, &[&b"a"[..]; 4]);
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
    inject_bytes(&mut r, "i", 0, &[&b"x"[..]; 5]);
    inject_bytes(&mut r, "j", 0, &[&b"x"[..]; 5]);
    inject_bytes(&mut r, "k", 0, &[&b"x"[..]; 10]);
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
    inject_bytes(&mut r1, "i", 0, &refs);
    let a = counts(&mut r1);
    let mut r2 = router(conf);
    inject_bytes(&mut r2, "i", 0, &refs);
    assert_eq!(a, counts(&mut r2), "same packets, same outputs");
    assert_eq!(a.iter().sum::<u64>(), 400);
    assert!(a.iter().all(|&c| c >= 50), "spread {:?}", a);
    // One flow always takes one output.
    let mut r3 = router(conf);
    inject_bytes(&mut r3, "i", 0, &[&b"\x00\x05\x07\x00"[..]; 40]);
    assert_eq!(counts(&mut r3).iter().filter(|&&c| c == 40).count(), 1);
    // Too short for the hashed bytes: output 0, as in Click.
    let before = num(&mut r3, "c0.count");
    inject_bytes(&mut r3, "i", 0, &[b"\x00\x05"]);
    assert_eq!(num(&mut r3, "c0.count"), before + 1);
}

#[test]
fn suppressor_handlers() {
    let mut r = router(
        "i :: Idle; s :: Suppressor; i[0] -> [0]s[0] -> c0 :: Counter -> Discard; i[1] -> [1]s[1] -> c1 :: Counter -> Discard",
    );
    assert!(r.read_path("s.handlers").unwrap().contains("active1"));
    assert!(r.write_path("s.active2", "true").is_err());
    r.write_path("s.active1", "false").unwrap();
    assert_eq!(read(&mut r, "s.active1"), "false");
    inject_bytes(&mut r, "i", 0, &[&b"a"[..]; 2]);
    inject_bytes(&mut r, "i", 1, &[&b"a"[..]; 3]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (2, 0));
    assert_eq!(num(&mut r, "s.drops"), 3);
    r.write_path("s.reset", "").unwrap();
    inject_bytes(&mut r, "i", 1, &[b"a"]);
    assert_eq!(num(&mut r, "c1.count"), 1);
}

#[test]
fn bypass_switches_path() {
    let mut r = router(
        "i :: Idle -> b :: Bypass; b[0] -> c0 :: Counter -> Discard; b[1] -> c1 :: Counter -> Discard",
    );
    inject_bytes(&mut r, "i", 0, &[b"a"]);
    r.write_path("b.active", "true").unwrap();
    inject_bytes(&mut r, "i", 0, &[b"a", b"b"]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (1, 2));
}

/// The bypass path rejoins through input 1, which always leads to output 0 (Click's
/// test/standard/Bypass-01: an active Bypass whose path loops back must not loop forever).
#[test]
fn bypass_path_rejoins_on_input_one() {
    let mut r = router(
        "i :: Idle -> b :: Bypass(true) -> c0 :: Counter -> Discard;
         b[1] -> c1 :: Counter -> [1]b;",
    );
    inject_bytes(&mut r, "i", 0, &[b"a", b"b"]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (2, 2));
    r.write_path("b.active", "false").unwrap();
    inject_bytes(&mut r, "i", 0, &[b"c"]);
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (3, 2));
}

/// A pull Bypass switched on while a pull runs through it (a Counter upstream writes
/// `active`): the next pull takes the bypass path, which pulls Bypass's own input again
/// (Click's test/standard/Bypass-01). Bypass wires its callers to its peers, so no element
/// is entered twice.
#[test]
fn pull_bypass_switches_during_a_pull() {
    let mut r = router(
        "i :: Idle -> q :: Queue -> Counter(COUNT_CALL 3 b.active true) -> b :: Bypass -> c0 :: Counter
           -> d :: Discard(false);
         b[1] -> c1 :: Counter -> [1]b;",
    );
    inject_bytes(&mut r, "i", 0, &[b"1", b"2", b"3", b"4"]);
    for want in ["1", "2", "3", "4"] {
        assert_eq!(strs(&pull(&mut r, "d", 0, 1)), [want]);
    }
    assert_eq!((num(&mut r, "c0.count"), num(&mut r, "c1.count")), (4, 1));
}

/// Chains of Bypasses resolve to the element the active path reaches, and INLINE keeps
/// Bypass in the path with the same results.
#[test]
fn bypass_chains_follow_every_switch() {
    for inline in ["false", "true"] {
        let mut r = router(&format!(
            "i :: Idle -> b1 :: Bypass(INLINE {inline}) -> b2 :: Bypass(INLINE {inline})
               -> c0 :: Counter -> Discard;
             b1[1] -> c1 :: Counter -> Discard; b2[1] -> c2 :: Counter -> Discard;"
        ));
        let counts = |r: &mut Router| ["c0", "c1", "c2"].map(|c| num(r, &format!("{c}.count")));
        inject_bytes(&mut r, "i", 0, &[b"a"]);
        r.write_path("b2.active", "true").unwrap();
        inject_bytes(&mut r, "i", 0, &[b"b"]);
        r.write_path("b1.active", "true").unwrap();
        inject_bytes(&mut r, "i", 0, &[b"c"]);
        r.write_path("b1.active", "false").unwrap();
        r.write_path("b2.active", "false").unwrap();
        inject_bytes(&mut r, "i", 0, &[b"d"]);
        assert_eq!(counts(&mut r), [2, 1, 1], "INLINE {inline}");
    }
}

#[test]
fn input_switch_accepts_one_input() {
    let mut r = router(
        "i :: Idle; i[0] -> [0]s :: InputSwitch(1); i[1] -> [1]s; s -> c :: Counter -> Discard",
    );
    inject_bytes(&mut r, "i", 0, &[b"a"]);
    inject_bytes(&mut r, "i", 1, &[b"b", b"c"]);
    assert_eq!((num(&mut r, "c.count"), num(&mut r, "s.drops")), (2, 1));
    r.write_path("s.switch", "5").unwrap();
    assert_eq!(read(&mut r, "s.switch"), "-1");
    inject_bytes(&mut r, "i", 1, &[b"d"]);
    assert_eq!((num(&mut r, "c.count"), num(&mut r, "s.drops")), (2, 2));
    assert!(config_error("Idle -> InputSwitch(1) -> Discard").contains("input must be < 1"));
}

// ---- queues and schedulers ----

#[test]
fn front_drop_queue_drops_oldest() {
    let mut r = router("i :: Idle -> q :: FrontDropQueue(3) -> d :: Discard(false)");
    inject_bytes(&mut r, "i", 0, &[b"1", b"2", b"3", b"4", b"5"]);
    assert_eq!(num(&mut r, "q.drops"), 2);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["3", "4", "5"]);
}

#[test]
fn mixed_queue_fifo_and_lifo() {
    let mut r = router(
        "i :: Idle; q :: MixedQueue(4); i[0] -> [0]q; i[1] -> [1]q; q -> d :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"a1", b"a2"]);
    inject_bytes(&mut r, "i", 1, &[b"b1", b"b2"]);
    inject_bytes(&mut r, "i", 0, &[b"a3"]);
    inject_bytes(&mut r, "i", 1, &[b"b3"]);
    assert_eq!(num(&mut r, "q.drops"), 2);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["b3", "b2", "b1", "a1"]);
}

#[test]
fn prio_sched_serves_input_zero_first() {
    let mut r = router(
        "i :: Idle; i[0] -> hq :: Queue -> [0]ps :: PrioSched; i[1] -> lq :: Queue -> [1]ps; ps -> d :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 1, &[b"l1", b"l2"]);
    inject_bytes(&mut r, "i", 0, &[b"h1", b"h2"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["h1", "h2", "l1", "l2"]);
}

#[test]
fn round_robin_sched_alternates() {
    let mut r = router(
        "i :: Idle; i[0] -> a :: Queue -> [0]rr :: RoundRobinSched; i[1] -> b :: Queue -> [1]rr; rr -> d :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"a1", b"a2", b"a3"]);
    inject_bytes(&mut r, "i", 1, &[b"b1", b"b2"]);
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
    inject_bytes(&mut r, "i", 0, &[b"a1"]);
    inject_bytes(&mut r, "i", 1, &[b"b1"]);
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
    inject_bytes(&mut r, "i", 0, &[b"a", b"b"]);
    assert_eq!(num(&mut r, "x.drops"), 2);
}

#[test]
fn every_standard_ethernet_and_device_class_has_a_doc_page() {
    let classes = sluice_elements::standard::CLASSES
        .iter()
        .chain(sluice_elements::ethernet::CLASSES)
        .chain(sluice_elements::device::CLASSES);
    for c in classes {
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

// ---- Click fidelity: order of copies, calls and drops ----

#[test]
fn paint_tee_copy_leaves_before_its_packet() {
    let mut r = router(
        "i :: Idle -> pt :: PaintTee(1) -> Strip(0) -> q :: Queue -> d :: Discard(false);
         pt[1] -> Pad(2) -> q",
    );
    let painted = [(b"a", 0u8), (b"b", 1), (b"c", 0), (b"d", 1)].map(|(data, paint)| {
        let mut p = Packet::from_bytes(data);
        p.anno_mut().paint = paint;
        p
    });
    inject_packets(&mut r, "i", 0, painted);
    assert_eq!(
        strs(&drain(&mut r, "d", 0)),
        ["a", "b\0", "b", "c", "d\0", "d"]
    );
    assert_eq!(num(&mut r, "pt.count"), 2);
}

#[test]
fn counter_call_fires_before_its_packet_leaves() {
    let mut r = router(
        "i :: Idle -> c :: Counter(COUNT_CALL 3 s.switch 1) -> s :: Switch(0);
         s[0] -> q0 :: Queue -> d0 :: Discard(false); s[1] -> q1 :: Queue -> d1 :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"1", b"2", b"3", b"4"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["1", "2"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["3", "4"]);
    assert_eq!(read(&mut r, "c.count_call"), "3");
    r.write_path("c.reset", "").unwrap();
    r.write_path("s.switch", "0").unwrap();
    r.write_path("c.byte_count_call", "2 s.switch 1").unwrap();
    inject_bytes(&mut r, "i", 0, &[b"5", b"6", b"7"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["5"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["6", "7"]);
    assert_eq!(num(&mut r, "c.byte_count"), 3);
}

#[test]
fn queue_drops_to_output_1_and_handlers_as_click() {
    let mut r = router(
        "i :: Idle -> q :: Queue(2) -> d :: Discard(false); q[1] -> dq :: Queue -> dd :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"1", b"2", b"3", b"4"]);
    assert_eq!(num(&mut r, "q.drops"), 2);
    assert_eq!(num(&mut r, "q.highwater_length"), 2);
    assert_eq!(strs(&drain(&mut r, "dd", 0)), ["3", "4"]);
    r.write_path("q.capacity", "1").unwrap();
    assert_eq!(num(&mut r, "q.length"), 1);
    assert_eq!(num(&mut r, "q.drops"), 2, "shrinking is not a drop");
    r.write_path("q.reset", "").unwrap();
    assert_eq!(num(&mut r, "q.length"), 0);
    assert_eq!(
        strs(&drain(&mut r, "dd", 0)),
        ["1"],
        "reset sends to output 1"
    );
    r.write_path("q.reset_counts", "").unwrap();
    assert_eq!(num(&mut r, "q.drops"), 0);
    assert_eq!(num(&mut r, "q.highwater_length"), 0);
    for class in [
        "NotifierQueue",
        "FullNoteQueue",
        "QuickNoteQueue",
        "SimpleQueue",
    ] {
        let mut r = router(&format!(
            "i :: Idle -> q :: {}(1) -> d :: Discard(false)",
            class
        ));
        inject_bytes(&mut r, "i", 0, &[b"x", b"y"]);
        assert_eq!(num(&mut r, "q.drops"), 1, "{}", class);
        assert_eq!(strs(&drain(&mut r, "d", 0)), ["x"], "{}", class);
    }
}

// ---- switches, hub, truncate ----

#[test]
fn paint_switch_by_annotation_and_255_to_all() {
    let mut r = router(
        "i :: Idle -> Paint(1) -> ps :: PaintSwitch; j :: Idle -> Paint(255) -> ps;
         k :: Idle -> Paint(9) -> ps;
         ps[0] -> q0 :: Queue -> d0 :: Discard(false); ps[1] -> q1 :: Queue -> d1 :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"one"]);
    inject_bytes(&mut r, "j", 0, &[b"all"]);
    inject_bytes(&mut r, "k", 0, &[b"none"]);
    assert_eq!(strs(&drain(&mut r, "d0", 0)), ["all"]);
    assert_eq!(strs(&drain(&mut r, "d1", 0)), ["one", "all"]);
    assert_eq!(num(&mut r, "ps.drops"), 1);
    // Outputs that meet again see the packets in arrival order, as in Click.
    let mut r = router(
        "i :: Idle -> ps :: PaintSwitch; ps[0] -> q :: Queue -> d :: Discard(false); ps[1] -> q",
    );
    let painted = [(b"a", 1u8), (b"b", 0), (b"c", 1), (b"d", 1)].map(|(data, paint)| {
        let mut p = Packet::from_bytes(data);
        p.anno_mut().paint = paint;
        p
    });
    inject_packets(&mut r, "i", 0, painted);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["a", "b", "c", "d"]);
}

#[test]
fn hub_sends_everywhere_but_back() {
    let mut r = router(
        "a :: Idle -> [0]h :: Hub; b :: Idle -> [1]h; c :: Idle -> [2]h;
         h[0] -> Paint(0) -> q :: Queue -> d :: Discard(false);
         h[1] -> Paint(1) -> q; h[2] -> Paint(2) -> q",
    );
    inject_bytes(&mut r, "a", 0, &[b"a1", b"a2"]);
    inject_bytes(&mut r, "c", 0, &[b"c1"]);
    let got: Vec<String> = drain(&mut r, "d", 0)
        .iter()
        .map(|p| format!("{}{}", String::from_utf8_lossy(p.data()), p.anno().paint))
        .collect();
    assert_eq!(got, ["a11", "a12", "a21", "a22", "c10", "c11"]);
}

#[test]
fn truncate_limits_length() {
    let mut r = router("i :: Idle -> t :: Truncate(3) -> q :: Queue -> d :: Discard(false)");
    inject_bytes(&mut r, "i", 0, &[b"abcdef", b"ab"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["abc", "ab"]);
    r.write_path("t.nbytes", "1").unwrap();
    inject_bytes(&mut r, "i", 0, &[b"xyz"]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["x"]);
    assert_eq!(read(&mut r, "t.nbytes"), "1");
}

#[test]
fn random_switch_repeats_with_a_seed() {
    let run = || {
        let mut r = router(
            "RandomSeed(7); i :: Idle -> rs :: RandomSwitch;
             rs[0] -> c0 :: Counter -> Discard; rs[1] -> c1 :: Counter -> Discard",
        );
        let pkts: Vec<&[u8]> = vec![b"x"; 200];
        inject_bytes(&mut r, "i", 0, &pkts);
        (num(&mut r, "c0.count"), num(&mut r, "c1.count"))
    };
    let (a0, a1) = run();
    assert_eq!(a0 + a1, 200);
    assert!((60..=140).contains(&a0), "{} {}", a0, a1);
    assert_eq!(run(), (a0, a1));
}

// ---- schedulers and shapers ----

#[test]
fn stride_sched_order_as_click() {
    let mut r = router(
        "i1 :: InfiniteSource(\\<11>, LIMIT 10); i2 :: InfiniteSource(\\<22>, LIMIT 10);
         i3 :: InfiniteSource(\\<33>, LIMIT 10);
         ss :: StrideSched(4, 2, 1); i1 -> [0]ss; i2 -> [1]ss; i3 -> [2]ss;
         ss -> d :: Discard(false)",
    );
    let order: String = drain(&mut r, "d", 0)
        .iter()
        .map(|p| format!("{:02x}", p.data()[0]))
        .collect();
    // The order Click's test/standard/StrideSched-01 expects.
    assert_eq!(
        order,
        "111122111122331111221111223311112222332222332222333333333333"
    );
    assert_eq!(read(&mut r, "ss.tickets1"), "2");
    r.write_path("ss.tickets1", "0").unwrap();
    assert_eq!(read(&mut r, "ss.tickets1"), "0");
    assert!(
        config_error("Idle -> [0]s :: StrideSched(1); Idle -> [1]s; s -> Discard")
            .contains("need 2 arguments")
    );
}

#[test]
fn shaper_shapes_output_0_and_passes_the_rest_on_1() {
    let conf = |rate: u32| {
        format!(
            "is :: InfiniteSource(LIMIT 100) -> s :: Shaper({});
             s[0] -> shaped :: Counter -> [0]rr :: RoundRobinSched; s[1] -> [1]rr;
             rr -> total :: Counter -> TimedSink(1ms);
             Script(wait 150ms, stop)",
            rate
        )
    };
    for (rate, lo, hi) in [(1000, 98, 100), (500, 48, 52), (250, 23, 27), (0, 0, 2)] {
        let mut r = router(&conf(rate));
        r.run_until_idle();
        let shaped = num(&mut r, "shaped.count");
        assert!((lo..=hi).contains(&shaped), "rate {}: {}", rate, shaped);
        assert_eq!(num(&mut r, "total.count"), 100, "rate {}", rate);
    }
    let mut r = router("Idle -> s :: BandwidthShaper(1000) -> Discard");
    assert_eq!(read(&mut r, "s.rate"), "8kbps");
    r.write_path("s.rate", "1.5Mbps").unwrap();
    assert_eq!(read(&mut r, "s.rate"), "1.5Mbps");
}

#[test]
fn bandwidth_shaper_paces_bytes() {
    let mut r = router(
        "InfiniteSource(LIMIT 1000, LENGTH 100) -> Queue -> BandwidthShaper(10000)
         -> c :: Counter -> TimedSink(1ms); Script(wait 2s, stop)",
    );
    r.run_until_idle();
    let n = num(&mut r, "c.count");
    assert!((195..=205).contains(&n), "{}", n);
}

#[test]
fn timed_sink_pulls_once_per_interval() {
    let mut r = router(
        "InfiniteSource(LIMIT 100) -> q :: Queue -> ts :: TimedSink(10ms); Script(wait 0.105s, stop)",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "ts.count"), 10);
    assert_eq!(num(&mut r, "q.length"), 90);
    assert_eq!(read(&mut r, "ts.interval"), "10ms");
    r.write_path("ts.interval", "1.5").unwrap();
    assert_eq!(read(&mut r, "ts.interval"), "1.500000s");
    assert!(r.write_path("ts.interval", "0").is_err());
}

/// STOP waits for a pull that finds nothing at all: a batch pull that empties a Queue fed one
/// packet at a time does not stop the router (Click's test/standard/notifier-01).
#[test]
fn time_sorted_sched_stops_only_when_a_pull_finds_nothing() {
    let mut r = router(
        "FromIPSummaryDump(DATA \"!data timestamp\n0.1\n0.2\n0.3\n0.4\n\")
           -> Queue -> TimeSortedSched(STOP true) -> c :: Counter -> Discard",
    );
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 4);
}

#[test]
fn time_sorted_sched_merges_by_timestamp() {
    let mut r = router(
        "a :: Idle -> qa :: Queue -> [0]t :: TimeSortedSched; b :: Idle -> qb :: Queue -> [1]t;
         t -> d :: Discard(false)",
    );
    let stamp = |r: &mut Router, name: &str, items: &[(&[u8], i64)]| {
        let stamped = items.iter().map(|(data, ms)| {
            let mut p = Packet::from_bytes(data);
            p.set_timestamp(Timestamp::from_parts(1, ms * 1_000_000));
            p
        });
        inject_packets(r, name, 0, stamped);
    };
    stamp(&mut r, "a", &[(b"a1", 1), (b"a5", 5), (b"a6", 6)]);
    stamp(&mut r, "b", &[(b"b2", 2), (b"b3", 3), (b"b7", 7)]);
    assert_eq!(
        strs(&drain(&mut r, "d", 0)),
        ["a1", "b2", "b3", "a5", "a6", "b7"]
    );
    assert_eq!(read(&mut r, "t.well_ordered"), "true");
    stamp(&mut r, "a", &[(b"x9", 9), (b"x8", 8)]);
    assert_eq!(strs(&drain(&mut r, "d", 0)), ["x9", "x8"]);
    assert_eq!(read(&mut r, "t.well_ordered"), "false");
}

#[test]
fn set_timestamp_delta_relative_to_first() {
    let mut r = router(
        "i :: Idle -> SetTimestamp(10.25) -> sd :: SetTimestampDelta -> q :: Queue -> d :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"a", b"b"]);
    let b = pull(&mut r, "d", 0, 8);
    let ts: Vec<Timestamp> = b.iter().map(|p| p.timestamp()).collect();
    assert_eq!(ts, [Timestamp::ZERO, Timestamp::ZERO]);
    assert_eq!(read(&mut r, "sd.first"), "10.250000");
    r.write_path("sd.reset", "").unwrap();
    assert_eq!(read(&mut r, "sd.first"), "0.000000");
    assert!(config_error("Idle -> SetTimestampDelta(TYPE FIRST) -> Discard").contains("FIRST"));
}

#[test]
fn align_places_data_on_the_boundary() {
    let mut r = router("i :: Idle -> Align(8, 3) -> q :: Queue -> d :: Discard(false)");
    inject_bytes(&mut r, "i", 0, &[b"abcdefghij", b"k"]);
    let b = pull(&mut r, "d", 0, 8);
    let got: Vec<(usize, Vec<u8>)> = b
        .iter()
        .map(|p| (p.data().as_ptr() as usize % 8, p.data().to_vec()))
        .collect();
    assert_eq!(got, [(3, b"abcdefghij".to_vec()), (3, b"k".to_vec())]);
    assert!(config_error("Idle -> Align(3, 0) -> Discard").contains("MODULUS"));
    assert!(config_error("Idle -> Align(4, 4) -> Discard").contains("OFFSET"));
}

#[test]
fn information_elements_are_accepted() {
    let mut r = router(
        "AlignmentInfo(src 8 2); ClickyInfo(STYLE \"x { y: z }\");
         p :: PortInfo(alt-http 8080/tcp web2, # comment
                       sq 3128);
         i :: Idle -> c :: IPClassifier(dst port alt-http, dst port web2, -) -> Discard;
         c[1] -> Discard; c[2] -> Discard",
    );
    assert_eq!(read(&mut r, "p.table"), "alt-http 8080/tcp\nweb2 8080/tcp");
    assert!(config_error("PortInfo(x notaport)").contains("NAME PORT"));
}

// ---- 802.1Q VLAN ----

const ETH: &[u8] = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00E";

#[test]
fn vlan_encap_decap_round_trip() {
    let mut r = router(
        "i :: Idle -> e :: VLANEncap(VLAN_ID 10, VLAN_PCP 3) -> q :: Queue -> d :: Discard(false);
         j :: Idle -> VLANDecap -> qj :: Queue -> dj :: Discard(false);
         k :: Idle -> SetVLANAnno(VLAN_ID 7) -> VLANEncap(ANNO) -> qk :: Queue -> dk :: Discard(false);
         n :: Idle -> VLANEncap(VLAN_ID 0) -> qn :: Queue -> dn :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[ETH, b"short"]);
    let tagged = drain(&mut r, "d", 0);
    assert_eq!(tagged.len(), 1);
    assert_eq!(&tagged[0].data()[12..16], b"\x81\x00\x60\x0a");
    assert_eq!(&tagged[0].data()[16..], &ETH[12..]);
    assert_eq!(num(&mut r, "e.drops"), 1);
    assert_eq!(read(&mut r, "e.vlan_tci"), "24586");
    assert_eq!(read(&mut r, "e.vlan_pcp"), "3");
    inject_bytes(&mut r, "j", 0, &[tagged[0].data(), ETH]);
    let b = pull(&mut r, "dj", 0, 8);
    let got: Vec<(Vec<u8>, u16)> = b
        .iter()
        .map(|p| (p.data().to_vec(), p.anno().vlan_tci))
        .collect();
    assert_eq!(got, [(ETH.to_vec(), 0x600a), (ETH.to_vec(), 0)]);
    inject_bytes(&mut r, "k", 0, &[ETH]);
    assert_eq!(
        &drain(&mut r, "dk", 0)[0].data()[12..16],
        b"\x81\x00\x00\x07"
    );
    inject_bytes(&mut r, "n", 0, &[ETH]);
    assert_eq!(
        bytes(&drain(&mut r, "dn", 0)),
        [ETH.to_vec()],
        "native VLAN 0 untagged"
    );
}

#[test]
fn ether_vlan_encap_and_strip() {
    let mut r = router(
        "i :: Idle -> e :: EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, 5)
           -> s :: StripEtherVLANHeader -> q :: Queue -> d :: Discard(false);
         j :: Idle -> s2 :: StripEtherVLANHeader(-1) -> q2 :: Queue -> d2 :: Discard(false);
         s2[1] -> q3 :: Queue -> d3 :: Discard(false)",
    );
    inject_bytes(&mut r, "i", 0, &[b"payload"]);
    let b = pull(&mut r, "d", 0, 8);
    let got: Vec<(Vec<u8>, u16)> = b
        .iter()
        .map(|p| (p.data().to_vec(), p.anno().vlan_tci))
        .collect();
    assert_eq!(got, [(b"payload".to_vec(), 5)]);
    assert_eq!(read(&mut r, "e.src"), "01-01-01-01-01-01");
    r.write_path("e.vlan_id", "9").unwrap();
    assert_eq!(read(&mut r, "e.vlan_tci"), "9");
    inject_bytes(&mut r, "j", 0, &[ETH, b"tiny"]);
    assert_eq!(drain(&mut r, "d2", 0).len(), 0);
    assert_eq!(bytes(&drain(&mut r, "d3", 0)), [ETH.to_vec()]);
    assert_eq!(num(&mut r, "s2.drops"), 1);
    assert!(config_error("Idle -> VLANEncap(VLAN_PCP 8) -> Discard").contains("VLAN_PCP"));
}

#[test]
fn sources_sleep_on_full_queues_and_pullers_take_one_packet_per_run() {
    // Click's test/standard/notifier-04: the source sleeps (its task is not scheduled) while
    // the queue is full; Discard pulls one packet per run (Click's BURST 1), so the Counter's
    // COUNT_CALL turns the switch away after exactly two packets.
    let mut r = router(
        "i :: InfiniteSource(LIMIT 15) -> c :: Counter -> q :: FullNoteQueue(5) \
         -> s :: PullSwitch(1) -> Counter(COUNT_CALL 2 s.switch 1) -> Discard; \
         Idle -> [1] s; \
         DriverManager(wait 0.1s, write s.switch 0, wait 0.1s, stop)",
    );
    r.run();
    assert_eq!(num(&mut r, "c.count"), 7);
    assert_eq!(read(&mut r, "i.scheduled"), "false");
    assert!(!read(&mut r, "q.handlers").contains("scheduled"));
}

#[test]
fn stop_comes_when_the_source_runs_again_after_its_limit() {
    // Click's test/standard/FullNoteQueue-upstream-notifier-01: STOP is raised at the run
    // after the last packet, which waits for room in the queue, so both packets have left it.
    let mut r = router(
        "src :: InfiniteSource(<0800>, 2, 1, true, STOP true) -> q :: FullNoteQueue(1) \
         -> count :: Counter -> Unqueue -> Discard; \
         seen :: InfiniteSource(ACTIVE false) -> Discard; \
         DriverManager(wait, write seen.limit $(count.count))",
    );
    r.run();
    assert_eq!(num(&mut r, "seen.limit"), 2);
    assert_eq!(num(&mut r, "q.drops"), 0);
}

#[test]
fn queue_capacity_writes_show_in_config() {
    let mut r = router("Idle -> q :: Queue -> Discard(ACTIVE false); Idle -> q2 :: Queue(5) -> Discard(ACTIVE false)");
    r.write_path("q.capacity", "10").unwrap();
    assert_eq!(r.read_path("q.config").unwrap(), "CAPACITY 10");
    r.write_path("q2.capacity", "7").unwrap();
    assert_eq!(r.read_path("q2.config").unwrap(), "7");
    assert_eq!(num(&mut r, "q2.capacity"), 7);
}

#[test]
fn notifier_debug_shows_signals_as_click() {
    // Click's test/standard/QuickNoteQueue-01 and notifier-05: the full signal downstream of a
    // push input, the empty signals upstream of a pull input (32 to a word), busy and idle.
    // (InfiniteSource holds the first signal bit, as in Click, so the queues' come after it.)
    let mut conf = String::from(
        "i :: InfiniteSource(LIMIT 1, ACTIVE false) -> d1 :: NotifierDebug \
         -> q :: QuickNoteQueue -> d2 :: NotifierDebug -> s :: RoundRobinSched \
         -> d3 :: NotifierDebug -> Discard; \
         Idle -> d4 :: NotifierDebug -> Unqueue -> Discard; \
         Idle -> d5 :: NotifierDebug -> Discard; \
         DriverManager(wait 0.01s, stop);",
    );
    for k in 1..40 {
        conf.push_str(&format!("Idle -> q{k} :: Queue(5) -> [{k}] s;"));
    }
    let mut r = router(&conf);
    r.run();
    assert_eq!(read(&mut r, "d1.signal"), "full.0/1:1*");
    assert_eq!(read(&mut r, "d2.signal"), "empty.0/2:0");
    assert_eq!(
        read(&mut r, "d3.signal"),
        "empty.0/fffffffe:0+empty.1/1ff:0"
    );
    assert_eq!(read(&mut r, "d4.signal"), "idle");
    assert_eq!(read(&mut r, "d5.signal"), "busy*");
}

#[test]
fn message_errors_stop_the_router() {
    let _ = router("Message(\"just a note\"); Message(\"careful\", WARNING)");
    let e = config_error("Message(\"no more\", ERROR)");
    assert!(
        e.contains("While configuring 'Message@1 :: Message'") && e.contains("  no more"),
        "{e}"
    );
    assert!(config_error("Message(x, LOUD)").contains("unrecognized message type"));
}
