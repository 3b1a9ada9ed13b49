//! Packet conservation: every packet a source emits leaves through a sink, waits in a queue,
//! or is counted as a drop — at the end of a run stopped by its sources (which drains the
//! packets in flight), with one thread and with two, also while other threads keep the
//! machine's cores busy. The accounting (`sluice_testkit::account`) is generic: sources and
//! sinks by class, what every queue holds (the Storage interface), and the router-wide
//! `drops` handler (every drop of every element, by reason).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sluice_testkit::{assert_conserved, conf_file, num, router_with, Account, TempDir};

/// Runs `conf` to its end and checks that in = out + queued + dropped; returns the account.
fn conserved(conf: &str, threads: usize, defines: &[(&str, &str)], busy: bool) -> Account {
    let mut r = router_with(conf, threads, defines, &[]);
    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..if busy { 2 } else { 0 })
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    r.run();
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        s.join().unwrap();
    }
    r.cleanup();
    assert_conserved(&mut r, &format!("{conf} on {threads} thread(s)"))
}

/// A directory holding `in.pcap`, a capture of `n` packets, and that file's path.
fn tmp_pcap(tag: &str, n: usize) -> (TempDir, String) {
    let dir = TempDir::new(&format!("conservation-{tag}"));
    let path = dir.file("in.pcap");
    let mut r = router_with(
        &format!("InfiniteSource(LIMIT {n}, BURST 32, STOP true) -> ToDump({path})"),
        1,
        &[],
        &[],
    );
    r.run();
    r.cleanup();
    (dir, path)
}

/// The stop drains what is in flight: queues behind a finished source reach their sinks.
#[test]
fn a_finished_source_drains_every_queue() {
    let (_dir, input) = tmp_pcap("drain", 1000);
    for conf in [
        format!("FromDump({input}, STOP true) -> Queue(2000) -> ToDump({input}.1)"),
        format!(
            "FromDump({input}, STOP true) -> Queue(2000) -> Unqueue(BURST 32) -> Queue \
             -> ToDump({input}.2)"
        ),
        "InfiniteSource(LIMIT 1000, BURST 32, STOP true) -> Queue(1024) -> Unqueue(BURST 32) \
         -> Counter -> Discard"
            .to_string(),
        "InfiniteSource(LIMIT 100001, BURST 32, STOP true) -> Queue(1024) -> Unqueue(BURST 32) \
         -> Counter -> Discard"
            .to_string(),
    ] {
        let a = conserved(&conf, 1, &[], false);
        assert_eq!(a.out, a.into, "{conf}: {a:?}");
    }
}

/// Sources push only into room that exists: a fast source behind a small queue and a slow
/// puller loses nothing.
#[test]
fn sources_push_only_into_room_downstream() {
    let (_dir, input) = tmp_pcap("room", 1000);
    for (conf, n) in [
        (
            "InfiniteSource(LIMIT 100000, STOP true) -> q :: Queue -> Unqueue(BURST 1) \
             -> Counter -> Discard"
                .to_string(),
            100000,
        ),
        (
            format!(
                "FromDump({input}, STOP true, BURST 32) -> Queue(100) -> Unqueue(BURST 16) \
                 -> Discard"
            ),
            1000,
        ),
    ] {
        let a = conserved(&conf, 1, &[], false);
        assert_eq!((a.out, a.dropped), (n, 0), "{conf}");
    }
}

/// Across threads, under load: the puller on the other thread finishes the queue before the
/// router stops, and the cross-thread full notifier holds the source back.
#[test]
fn two_threads_under_load_lose_nothing() {
    let (_dir, input) = tmp_pcap("threads", 1000);
    for conf in [
        format!("FromDump({input}, STOP true) -> ThreadSafeQueue(2000) -> ToDump({input}.3)"),
        format!(
            "FromDump({input}, STOP true, BURST 32) -> ThreadSafeQueue(64) -> ToDump({input}.4)"
        ),
        "InfiniteSource(LIMIT 200000, BURST 32, STOP true) -> ThreadSafeQueue(256) \
         -> Unqueue(BURST 32) -> Discard"
            .to_string(),
    ] {
        for busy in [false, true] {
            let a = conserved(&conf, 2, &[], busy);
            assert_eq!((a.out, a.dropped), (a.into, 0), "{conf}, busy {busy}");
        }
    }
}

/// The example configurations that run on generated traffic balance, on one thread and two.
#[test]
fn example_configurations_balance() {
    for (name, defines) in [
        (
            "fake-iprouter.click",
            &[("LIMIT", "20000"), ("BURST", "32")][..],
        ),
        ("iprouter-bench.click", &[("LIMIT", "20000")][..]),
        ("ip6router-bench.click", &[("LIMIT", "20000")][..]),
        ("smp/pipeline.click", &[("LIMIT", "20000")][..]),
        ("smp/flow-split.click", &[("LIMIT", "3000")][..]),
        ("smp/qos-replicated.click", &[("LIMIT", "2000")][..]),
        ("smp/fake-iprouter-x2.click", &[("LIMIT", "20000")][..]),
    ] {
        let conf = conf_file(name);
        for threads in [1, 2] {
            conserved(&conf, threads, defines, false);
        }
    }
}

/// The router-wide `drops` names each drop's element and reason: a reason an element counts,
/// and packets pushed to an output that is not connected (counted by the router), whose
/// element keeps Click's own `drops` count.
#[test]
fn router_wide_drops_name_element_and_reason() {
    for threads in [1, 2] {
        let mut r = router_with(
            "InfiniteSource(LIMIT 40, STOP true) -> c :: CheckIPHeader -> Discard",
            threads,
            &[],
            &[],
        );
        r.run();
        assert_eq!(r.read_path("drops").unwrap(), "c\tbad IP version\t40\n");
        assert_eq!(num(&mut r, "c.drops"), 40);
        let mut r = router_with(
            "InfiniteSource(DATA \\<45000014 00000000 01110000 c6120001 c6120002>, LIMIT 30,
                            STOP true)
               -> dt :: DecIPTTL -> Discard",
            threads,
            &[],
            &[],
        );
        r.run();
        assert_eq!(
            r.read_path("drops").unwrap(),
            "dt\tpushed to an unconnected output\t30\n",
            "{threads} thread(s)"
        );
        assert_eq!(num(&mut r, "dt.drops"), 30);
        let details = r.read_path("dt.drop_details").unwrap();
        assert!(
            details.contains("30 pushed to an unconnected output"),
            "{details}"
        );
    }
}
