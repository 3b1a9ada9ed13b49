//! Engine behaviour through real configurations of the standard elements.

use sluice_core::Packet;
use sluice_testkit::{config_error, inject, num, router, Kit};

#[test]
fn source_counter_discard_stops_at_limit() {
    let mut r = router("InfiniteSource(LIMIT 1000, STOP true) -> c :: Counter -> d :: Discard");
    r.run_until_idle();
    assert_eq!(r.read_path("c.count").unwrap(), "1000\n");
    assert_eq!(r.read_path("d.count").unwrap(), "1000\n");
    assert_eq!(r.read_path("c.byte_count").unwrap(), "69000\n");
}

#[test]
fn queue_unqueue_pipeline_moves_every_packet() {
    let mut r = router(
        "s :: InfiniteSource(LIMIT 5000, BURST 7) -> q :: Queue(100) -> u :: Unqueue(BURST 5) -> c :: Counter -> Discard;",
    );
    r.run_until_idle();
    let c = num(&mut r, "c.count");
    let drops = num(&mut r, "q.drops");
    assert_eq!(c + drops, 5000);
    assert_eq!(r.read_path("q.length").unwrap(), "0\n");
}

#[test]
fn element_stats_count_every_element_in_and_out() {
    let conf = "s :: InfiniteSource(LIMIT 1000, BURST 7, STOP true) -> c :: Counter -> t :: Tee(2);
        t[0] -> q :: Queue(2000) -> d :: Discard; t[1] -> Null -> e :: Discard;";
    let mut plain = Kit::new().build(conf).unwrap();
    assert!(plain.read_path("element_stats").is_err());
    for threads in [1, 2] {
        let mut r = Kit::new()
            .threads(threads)
            .element_stats()
            .build(conf)
            .unwrap();
        r.run();
        let stats = r.read_path("element_stats").unwrap();
        let line = |name: &str| -> Vec<u64> {
            let l = stats.lines().find(|l| l.split(' ').next() == Some(name));
            let l = l.unwrap_or_else(|| panic!("no {name} in {stats}"));
            l.split(' ').skip(1).map(|v| v.parse().unwrap()).collect()
        };
        assert_eq!(line("s"), [0, 0, 1000, 69000], "-j {threads}");
        assert_eq!(line("c"), [1000, 69000, 1000, 69000]);
        assert_eq!(line("t"), [1000, 69000, 2000, 138000]);
        assert_eq!(line("q"), [1000, 69000, 1000, 69000]);
        assert_eq!(line("d"), [1000, 69000, 0, 0]);
        assert_eq!(line("e"), [1000, 69000, 0, 0]);
        let cycles = r.read_path("thread_cycles").unwrap();
        assert_eq!(cycles.lines().count(), threads);
        assert!(
            cycles.lines().any(|l| l.split(' ').nth(1) != Some("0")),
            "{cycles}"
        );
    }
}

#[test]
fn pull_discard_drains_queue() {
    let mut r = router("InfiniteSource(LIMIT 300) -> q :: Queue(1000) -> d :: Discard");
    r.run_until_idle();
    assert_eq!(r.read_path("d.count").unwrap(), "300\n");
}

#[test]
fn agnostic_ports_resolve_along_their_flow() {
    // Click's test/tools/lexer-04: Idle's input and output (flow x/y) resolve apart, so an
    // Idle can be pushed into and pulled from; a pull output may feed several inputs.
    let mut r = router(
        "a, b, c :: Idle; p, q :: PullNull; a, a[1] -> b -> p, q; \
         p -> [0]c, [1]c; q -> [2]c;",
    );
    let ports = r.read_path("b.ports").unwrap();
    assert!(ports.starts_with("1 input\npush~"), "{ports}");
    assert!(ports.contains("1 output\npull~"), "{ports}");
    // Null's ports are tied: a push input and a pull output conflict.
    let e = config_error("Idle -> n :: Null -> PullNull -> Discard; Idle -> PushNull -> n;");
    assert!(e.contains("n :: Null") && e.contains("push"), "{e}");
}

#[test]
fn push_to_pull_mismatch_is_reported() {
    let e = config_error("InfiniteSource -> q :: Queue -> Counter -> q2 :: Queue -> Discard;");
    assert!(e.contains("test.click:1"), "{}", e);
    assert!(e.contains("push"), "{}", e);
    let e = config_error("InfiniteSource -> Queue -> Unqueue -> Foo;");
    assert!(e.contains("unknown element class 'Foo'"), "{}", e);
    let e = config_error(
        "InfiniteSource(LIMIT x) -> Discard; InfiniteSource -> Counter(BOGUS 1) -> Discard;",
    );
    assert!(e.contains("LIMIT"), "{}", e);
    assert!(e.contains("BOGUS"), "{}", e);
    // Port counts as Click's: missing ports unused, extra ones absent.
    let e = config_error("InfiniteSource -> Counter;");
    assert!(
        e.contains("'Counter@2 :: Counter' output 0 unused"),
        "{}",
        e
    );
    let e = config_error("InfiniteSource -> [1] Counter -> Discard;");
    assert!(e.contains("'Counter@2 :: Counter' has no input 1"), "{}", e);
}

#[test]
fn handlers_and_router_handlers() {
    let mut r = router("s :: InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard");
    assert_eq!(r.read_path("c.class").unwrap(), "Counter\n");
    assert!(r.read_path("list").unwrap().starts_with("3\n"));
    assert!(r.read_path("c.handlers").unwrap().contains("count\tr"));
    assert!(r.write_path("c.count", "1").is_err());
    r.run_until_idle();
    r.write_path("c.reset", "").unwrap();
    assert_eq!(r.read_path("c.count").unwrap(), "0\n");
    assert_eq!(
        r.expand_handler_glob("*.count"),
        vec!["s.count", "c.count", "Discard@3.count"]
    );
}

#[test]
fn address_names_work_before_their_declaration() {
    let mut r = router(
        "InfiniteSource(LIMIT 3, STOP true) -> SetIPAddress(eth0:bcast) -> s :: Switch(0) -> Discard;
         rt :: LinearIPLookup(eth0:net 0); AddressInfo(eth0 198.18.0.1/24 00:01:02:03:04:05);
         Idle -> rt -> Discard;",
    );
    r.run_until_idle();
    assert!(r.read_path("rt.table").unwrap().contains("198.18.0.0/24"));
    let e = config_error("InfiniteSource -> SetIPAddress(eth9) -> Discard;");
    assert!(e.contains("expected IP address"), "{}", e);
}

#[test]
fn schedule_info_scales_task_shares() {
    // Both sources always have work; with twice the tickets, a runs twice as often as b.
    let mut r = router(
        "a :: InfiniteSource(LIMIT 20000, BURST 1, STOP true) -> ca :: Counter -> Discard;
         b :: InfiniteSource(BURST 1) -> cb :: Counter -> Discard;
         ScheduleInfo(a 2);",
    );
    r.run_until_idle();
    let ca = num(&mut r, "ca.count") as f64;
    let cb = num(&mut r, "cb.count") as f64;
    assert!(ca > 0.0 && cb > 0.0);
    assert!((ca / cb - 2.0).abs() < 0.1, "a {} b {}", ca, cb);
    let e = config_error("ScheduleInfo(nosuch 2); InfiniteSource -> Discard;");
    assert!(e.contains("no element named 'nosuch'"), "{}", e);
    // Inside a compound, names are the compound's own (Click's conf/mazu-nat.click).
    let mut r = router(
        "elementclass Pair { src :: InfiniteSource(LIMIT 20000, BURST 1, STOP true)
                               -> output; ScheduleInfo(src 2); }
         p :: Pair -> ca :: Counter -> Discard;
         b :: InfiniteSource(BURST 1) -> cb :: Counter -> Discard;",
    );
    r.run_until_idle();
    let (ca, cb) = (
        num(&mut r, "ca.count") as f64,
        num(&mut r, "cb.count") as f64,
    );
    assert!((ca / cb - 2.0).abs() < 0.1, "a {} b {}", ca, cb);
}

/// A handler write to an element that is running (here from a Script its own push reached)
/// is done when that element returns, not refused (Click's test/standard/Unqueue-01).
#[test]
fn write_to_a_running_element_is_done_when_it_returns() {
    let mut r = router(
        "InfiniteSource(LIMIT 5, STOP true) -> SimpleQueue -> u :: Unqueue(LIMIT 1)
         -> s :: Script(TYPE PACKET, export count 0, set count $(add $count 1), write u.reset);",
    );
    r.run_until_idle();
    assert_eq!(r.read_path("s.count").unwrap(), "5\n");
    assert_eq!(r.read_path("u.count").unwrap(), "0\n");
}

/// An element that calls a handler can take the writes to its own handlers that the call
/// made at once: TimeFilter's END_CALL moves the end on before the packet is checked again
/// (Click's test/analysis/TimeFilter-01).
#[test]
fn time_filter_end_call_sees_its_own_handler_writes() {
    let mut r = router(
        "i1 :: Idle -> SetTimestamp(0.5) -> t :: TimeFilter(0, 1, END_CALL s.run $t)
             -> c :: Counter -> Discard;
         i2 :: Idle -> SetTimestamp(1.5) -> t;
         i3 :: Idle -> SetTimestamp(5.5) -> t;
         s :: Script(TYPE PASSIVE, init x 0, goto exit $(gt $x 1), set x $(add $x 1),
                     write t.extend_interval 1);",
    );
    for src in ["i1", "i2", "i3"] {
        inject(&mut r, src, Packet::from_bytes(b"x"));
    }
    assert_eq!(r.read_path("c.count").unwrap(), "2\n");
    assert_eq!(r.read_path("t.drops").unwrap(), "1\n");
    assert_eq!(r.read_path("t.end").unwrap(), "3.000000\n");
}

/// Click's `timewarp` router handler: the warp speed, writable on the wall clock only.
#[test]
fn timewarp_handler() {
    let mut r = Kit::new().router("Idle -> Discard");
    assert_eq!(r.read_path("timewarp").unwrap(), "1\n");
    r.write_path("timewarp", "2.5").unwrap();
    assert_eq!(r.read_path("timewarp").unwrap(), "2.5\n");
    r.write_path("timewarp", "nowait").unwrap();
    assert_eq!(r.read_path("timewarp").unwrap(), "nowait\n");
    assert_eq!(
        r.write_path("timewarp", "-1").unwrap_err().to_string(),
        "timefactor must be > 0"
    );
    assert!(r.check_handler("timewarp", true).is_ok());
    let mut r = router("Idle -> Discard");
    assert_eq!(r.read_path("timewarp").unwrap(), "simulation\n");
    assert!(r.write_path("timewarp", "2").is_err());
    assert!(r.check_handler("timewarp", true).is_err());
}
