//! AF_XDP device elements (FromXDPDevice, ToXDPDevice) on veth pairs.
//!
//! Like `dev.rs`, each test moves its own thread into a fresh, private network namespace
//! (`unshare(CLONE_NEWNET)`), creates veth pairs there with `ip`, and everything (interfaces,
//! XDP programs, sockets) disappears with the thread and the router. Not root: they say so and
//! return.

mod netns_common;

use std::time::{Duration, Instant};

use netns_common::*;
use sluice_core::Router;
use sluice_testkit::num;

#[test]
fn configuration_errors_name_the_element() {
    let e = kit()
        .build("FromXDPDevice(nosuchdev0) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("FromXDPDevice(nosuchdev0)"), "{}", e);
    assert!(e.contains("no such interface 'nosuchdev0'"), "{}", e);
    let e = kit()
        .build("InfiniteSource(ACTIVE false) -> Queue -> ToXDPDevice(nosuchdev1)")
        .err()
        .unwrap();
    assert!(e.contains("ToXDPDevice(nosuchdev1)"), "{}", e);
    let e = kit()
        .build("FromXDPDevice(lo, MODE turbo) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("MODE"), "{}", e);
    let e = kit()
        .build("FromXDPDevice(lo, FRAMES 1000) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("FRAMES"), "{}", e);
    let e = kit()
        .build("FromXDPDevice(lo, POLL sometimes) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("POLL"), "{}", e);
    let e = kit().build("FromXDPDevice -> Discard").err().unwrap();
    assert!(e.contains("DEVNAME"), "{}", e);
    // Pull-only, as ToDevice.
    let e = kit()
        .build("FromXDPDevice(lo) -> ToXDPDevice(lo)")
        .err()
        .unwrap();
    assert!(e.contains("pull") || e.contains("push"), "{}", e);
}

/// Sends `n` frames with ToXDPDevice on `sla` and receives them with FromXDPDevice on `slb`.
/// (At a rate: an unpaced source in the same thread can outrun the receive frames of the
/// socket between two polls of its descriptor.)
fn roundtrip(mode: &str, n: u64) -> (Router, String) {
    veth("sla", "slb");
    let conf = format!(
        "RatedSource(DATA {FRAME}, RATE 100000, LIMIT {n}) -> q :: Queue(4000) -> td :: ToXDPDevice(sla);
         fd :: FromXDPDevice(slb, MODE {mode}) -> c :: Counter -> s :: StopAfter({n}, SECS 10);"
    );
    let mut r = kit().router(&conf);
    // The program is attached while the router lives.
    let link = sh_out("ip link show slb");
    let t0 = Instant::now();
    r.run_until_idle();
    let info = [
        "s.seen", "td.count", "td.drops", "fd.count", "fd.drops", "q.length",
    ]
    .map(|h| format!("{} {}", h, num(&mut r, h)));
    assert!(
        t0.elapsed() < Duration::from_secs(9),
        "timed out: {:?}",
        info
    );
    (r, link)
}

#[test]
fn veth_roundtrip_native_mode_counts_every_frame() {
    in_netns("veth_roundtrip_native_mode_counts_every_frame", || {
        let (mut r, link) = roundtrip("native", 3000);
        assert!(link.contains("xdp"), "no XDP program on slb: {}", link);
        assert_eq!(num(&mut r, "s.seen"), 3000);
        assert_eq!(num(&mut r, "td.count"), 3000);
        assert_eq!(num(&mut r, "td.drops"), 0);
        assert_eq!(num(&mut r, "fd.drops"), 0);
        assert_eq!(num(&mut r, "fd.count"), 3000);
        assert_eq!(r.read_path("fd.mode").unwrap().trim(), "native copy");
        drop(r);
        // Detached and freed with the router.
        let link = sh_out("ip link show slb");
        assert!(!link.contains("xdp"), "XDP program left on slb: {}", link);
    });
}

#[test]
fn veth_roundtrip_generic_mode() {
    in_netns("veth_roundtrip_generic_mode", || {
        let (mut r, link) = roundtrip("skb", 1000);
        assert!(link.contains("xdpgeneric"), "{}", link);
        assert_eq!(num(&mut r, "s.seen"), 1000);
        assert_eq!(num(&mut r, "fd.count"), 1000);
        assert_eq!(num(&mut r, "fd.drops"), 0);
        assert_eq!(r.read_path("fd.mode").unwrap().trim(), "skb copy");
        drop(r);
        assert!(!sh_out("ip link show slb").contains("xdp"));
        // A second router re-attaches on the same interface.
        let (mut r, _) = roundtrip_again();
        assert_eq!(num(&mut r, "s.seen"), 200);
    });
}

fn roundtrip_again() -> (Router, ()) {
    let conf = format!(
        "InfiniteSource(DATA {FRAME}, LIMIT 200, BURST 16) -> Queue(1000) -> ToXDPDevice(sla);
         FromXDPDevice(slb) -> s :: StopAfter(200, SECS 10);"
    );
    let mut r = kit().router(&conf);
    r.run_until_idle();
    (r, ())
}

#[test]
fn interoperates_with_af_packet_and_steals_frames() {
    in_netns("interoperates_with_af_packet_and_steals_frames", || {
        veth("sla", "slb");
        // AF_PACKET -> AF_XDP one way and AF_XDP -> AF_PACKET the other way. An AF_PACKET
        // FromDevice on the XDP interface sees nothing: XDP took the frames first.
        let conf = format!(
            "InfiniteSource(DATA {FRAME}, LIMIT 300, BURST 10) -> Queue(1000) -> ToDevice(sla);
             x :: FromXDPDevice(slb) -> s1 :: StopAfter(100000, SECS 1.5) ;
             InfiniteSource(DATA {FRAME}, LIMIT 200, BURST 10) -> Queue(1000) -> tx :: ToXDPDevice(slb);
             p :: FromDevice(sla) -> pc :: Counter -> Discard;
             ps :: FromDevice(slb) -> psc :: Counter -> Discard;"
        );
        let mut r = kit().router(&conf);
        r.run_until_idle();
        assert_eq!(num(&mut r, "s1.seen"), 300);
        assert_eq!(num(&mut r, "tx.count"), 200);
        assert_eq!(num(&mut r, "pc.count"), 200);
        assert_eq!(num(&mut r, "psc.count"), 0);
    });
}

#[test]
fn bad_frames_are_dropped_and_counted() {
    in_netns("bad_frames_are_dropped_and_counted", || {
        veth("sla", "slb");
        // 10-byte runts and 3000-byte giants cannot be sent; the good frames go through.
        let conf = format!(
            "InfiniteSource(DATA \"\\<02 00 00 00 00 02 02 00 00 00>\", LIMIT 5) -> q :: Queue(100);
             InfiniteSource(LENGTH 3000, LIMIT 7) -> q;
             InfiniteSource(DATA {FRAME}, LIMIT 50) -> q;
             q -> td :: ToXDPDevice(sla);
             FromXDPDevice(slb) -> s :: StopAfter(50, SECS 5);"
        );
        let mut r = kit().router(&conf);
        r.run_until_idle();
        assert_eq!(num(&mut r, "s.seen"), 50);
        assert_eq!(num(&mut r, "td.drops"), 12);
        assert_eq!(num(&mut r, "td.count"), 50);
    });
}

#[test]
fn queue_zero_only_and_queue_errors() {
    in_netns("queue_zero_only_and_queue_errors", || {
        veth("sla", "slb");
        let e = kit()
            .build("FromXDPDevice(slb, QUEUE 5) -> Discard")
            .err()
            .unwrap();
        assert!(
            e.contains("FromXDPDevice(slb)") && e.contains("queue 5"),
            "{}",
            e
        );
        // Two readers of one queue: a clear error for the second.
        let e = kit()
            .build("FromXDPDevice(slb) -> Discard; FromXDPDevice(slb) -> Discard")
            .err()
            .unwrap();
        assert!(e.contains("already read"), "{}", e);
        // Everything was released: the interface works again.
        assert!(!sh_out("ip link show slb").contains("xdp"));
        let (mut r, _) = roundtrip_again();
        assert_eq!(num(&mut r, "s.seen"), 200);
    });
}
