//! Hot swap (Click's `-R` and `hotconfig`): the new configuration replaces the running one
//! once built and initialised; same-named elements take their predecessors' state; a
//! configuration that fails leaves the running one in place.

use sluice_core::Packet;
use sluice_testkit::{inject_packets, num, Kit};

/// `n` packets of 60 bytes, the i-th filled with i.
fn packets(n: usize) -> impl Iterator<Item = Packet> {
    (0..n).map(|i| Packet::from_bytes(&[i as u8; 60]))
}

const QUEUED: &str = "i :: Idle -> q :: Queue(100) -> d :: Discard(ACTIVE false);";

#[test]
fn queued_packets_move_to_the_new_configuration() {
    let mut r = Kit::sim().hot_swap().router(QUEUED);
    inject_packets(&mut r, "i", 0, packets(7));
    assert!(r
        .handler_list(None)
        .iter()
        .any(|(h, m)| h == "hotconfig" && *m == "w"));
    r.write_path(
        "hotconfig",
        "i :: Idle -> q :: Queue(100) -> d :: Discard; Idle -> c :: Counter -> Discard;",
    )
    .expect("new configuration installs");
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 0, "the new configuration runs");
    assert_eq!(num(&mut r, "d.count"), 7);
    assert_eq!(num(&mut r, "q.length"), 0);
}

#[test]
fn a_smaller_queue_counts_what_it_cannot_take() {
    let mut r = Kit::sim().hot_swap().router(QUEUED);
    inject_packets(&mut r, "i", 0, packets(7));
    r.write_path(
        "hotconfig",
        "i :: Idle -> q :: Queue(5) -> d :: Discard(ACTIVE false);",
    )
    .unwrap();
    r.run_until_idle();
    assert_eq!((num(&mut r, "q.length"), num(&mut r, "q.drops")), (5, 2));
}

#[test]
fn packets_no_successor_takes_are_counted_as_drops() {
    // The queue is renamed: the new configuration has no `q` to take its 7 packets, so they
    // are freed with it and the router-wide drops say so (also after a second swap).
    let mut r = Kit::sim().hot_swap().router(QUEUED);
    inject_packets(&mut r, "i", 0, packets(7));
    let renamed = "i :: Idle -> q2 :: Queue(100) -> d :: Discard(ACTIVE false);";
    r.write_path("hotconfig", renamed).unwrap();
    r.run_until_idle();
    assert_eq!(num(&mut r, "q2.length"), 0);
    let want = "q\tfreed at hot swap\t7";
    assert!(r.read_path("drops").unwrap().lines().any(|l| l == want));
    inject_packets(&mut r, "i", 0, packets(2));
    r.write_path("hotconfig", QUEUED).unwrap();
    r.run_until_idle();
    let drops = r.read_path("drops").unwrap();
    assert!(drops.lines().any(|l| l == want), "{drops}");
    assert!(
        drops.lines().any(|l| l == "q2\tfreed at hot swap\t2"),
        "{drops}"
    );
}

#[test]
fn a_configuration_that_fails_leaves_the_old_one_running() {
    let mut r = Kit::sim().hot_swap().router(QUEUED);
    inject_packets(&mut r, "i", 0, packets(3));
    let e = r.write_path("hotconfig", "Print").unwrap_err().to_string();
    assert!(e.contains("input 0 unused"), "{e}");
    assert!(e.ends_with("Router could not be initialized!"), "{e}");
    let e = r.write_path("hotconfig", "x -> y").unwrap_err().to_string();
    assert!(e.contains("undeclared element"), "{e}");
    assert!(!e.contains("Router could not be initialized!"), "{e}");
    r.run_until_idle();
    assert_eq!(num(&mut r, "q.length"), 3);
    assert!(r.element_index("c").is_none());
}

#[test]
fn arp_querier_keeps_its_table_when_its_addresses_stay() {
    let conf = |ip: &str| {
        format!(
            "i :: Idle -> a :: ARPQuerier({ip}, 02:00:00:00:00:01, TIMEOUT 0)
               -> Discard; Idle -> [1]a;"
        )
    };
    for (ip, kept) in [("198.18.0.1", true), ("198.18.0.9", false)] {
        let mut r = Kit::sim().hot_swap().router(&conf("198.18.0.1"));
        r.write_path("a.insert", "198.18.0.2 02:00:00:00:00:02")
            .unwrap();
        r.write_path("hotconfig", &conf(ip)).unwrap();
        r.run_until_idle();
        let t = r.read_path("a.table").unwrap();
        assert_eq!(
            t.contains("198.18.0.2 1 02-00-00-00-00-02"),
            kept,
            "{ip}: {t}"
        );
    }
}

#[test]
fn hot_swap_works_with_two_threads() {
    let conf = "a :: InfiniteSource(LIMIT 2000, BURST 8) -> q :: ThreadSafeQueue(4096);
                q -> u :: Unqueue -> c :: Counter -> Discard;
                StaticThreadSched(a 0, u 1);";
    let mut r = Kit::sim().threads(2).hot_swap().router(conf);
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count") + num(&mut r, "q.drops"), 2000);
    // The new source goes on from 2000 to its LIMIT; the counter keeps counting.
    r.write_path("hotconfig", &conf.replace("2000", "2500"))
        .unwrap();
    r.run_until_idle();
    assert_eq!(num(&mut r, "a.count"), 2500);
    assert_eq!(num(&mut r, "c.count") + num(&mut r, "q.drops"), 2500);
}

#[test]
fn sources_and_counters_go_on_from_where_the_old_ones_were() {
    // The byte call stops the first run at its last packet; taken over, it is not made again.
    let conf = |limit: u32| {
        format!(
            "s :: InfiniteSource(LIMIT {limit}, BURST 10) -> c :: Counter(BYTE_COUNT_CALL 41400 stop) \
             -> q :: Queue(2000) -> d :: Discard; r :: RatedSource(RATE 1000, LIMIT {limit}) \
             -> rc :: Counter -> Discard;"
        )
    };
    let mut r = Kit::sim().hot_swap().router(&conf(600));
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 600);
    r.write_path("hotconfig", &conf(1000)).unwrap();
    r.run_until_idle();
    for h in ["s.count", "c.count", "d.count", "r.count", "rc.count"] {
        assert_eq!(num(&mut r, h), 1000, "{h}");
    }
}

#[test]
fn replicated_counters_keep_every_threads_share() {
    let conf = |limit: u32| {
        format!(
            "a :: InfiniteSource(LIMIT {limit}) -> c :: Counter -> d :: Discard; \
             b :: InfiniteSource(LIMIT {limit}) -> c; StaticThreadSched(a 0, b 1);"
        )
    };
    let mut r = Kit::sim().threads(2).hot_swap().router(&conf(1000));
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 2000);
    r.write_path("hotconfig", &conf(1500)).unwrap();
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 3000);
    assert_eq!(num(&mut r, "d.count"), 3000);
}

#[test]
fn a_thread_safe_queue_keeps_its_packets() {
    let conf = "i :: Idle -> q :: ThreadSafeQueue(100) -> d :: Discard(ACTIVE false);";
    let mut r = Kit::sim().hot_swap().router(conf);
    inject_packets(&mut r, "i", 0, packets(9));
    r.write_path(
        "hotconfig",
        "i :: Idle -> q :: ThreadSafeQueue(4) -> d :: Discard; Idle -> c :: Counter -> Discard;",
    )
    .unwrap();
    r.run_until_idle();
    assert_eq!((num(&mut r, "d.count"), num(&mut r, "q.drops")), (4, 5));
}

#[test]
fn a_route_table_with_unchanged_routes_keeps_its_updates() {
    let conf = |routes: &str| format!("i :: Idle -> rt :: RadixIPLookup({routes}) -> Discard;");
    for (new, kept) in [("198.18.0.0/16 0", true), ("198.18.0.0/15 0", false)] {
        let mut r = Kit::sim().hot_swap().router(&conf("198.18.0.0/16 0"));
        r.write_path("rt.add", "198.18.7.0/24 198.18.0.1 0")
            .unwrap();
        r.write_path("hotconfig", &conf(new)).unwrap();
        r.run_until_idle();
        let t = r.read_path("rt.table").unwrap();
        assert_eq!(t.contains("198.18.7.0/24"), kept, "{new}: {t}");
        assert_eq!(t.lines().count(), if kept { 2 } else { 1 }, "{new}: {t}");
    }
}

#[test]
fn a_rewriter_shared_by_two_threads_keeps_its_flows() {
    let conf = |limit: u32| {
        format!(
            "a :: InfiniteSource(LIMIT {limit}, LENGTH 20) -> UDPIPEncap(198.18.1.2, 5000, 198.18.2.2, 80) \
             -> rw :: IPRewriter(pattern 198.18.0.1 1024-65535 - - 0 0, UDP_TIMEOUT 1d) -> d :: Discard; \
             b :: InfiniteSource(LIMIT {limit}, LENGTH 20) -> UDPIPEncap(198.18.1.3, 5001, 198.18.2.2, 80) \
             -> rw; StaticThreadSched(a 0, b 1);"
        )
    };
    let mut r = Kit::sim().threads(2).hot_swap().router(&conf(10));
    r.run_until_idle();
    assert_eq!(num(&mut r, "rw.size"), 2);
    let table = r.read_path("rw.udp_table").unwrap();
    // The sources have sent their packets already: the new rewriter's flows are the old ones
    // (simulated time runs on while the router is idle, hence the long timeout).
    r.write_path("hotconfig", &conf(10)).unwrap();
    r.run_until_idle();
    assert_eq!(r.read_path("rw.udp_table").unwrap(), table);
    assert_eq!(num(&mut r, "rw.size"), 2);
}
