//! Device elements (FromDevice, ToDevice, KernelTap, KernelTun) on real interfaces.
//!
//! Tests that need interfaces run as root only: each moves its own thread into a fresh,
//! private network namespace (`unshare(CLONE_NEWNET)`), creates veth pairs or TUN/TAP devices
//! there with `ip`, and everything disappears with the thread. Not root: they say so and
//! return.

mod netns_common;

use std::process::Command;
use std::time::{Duration, Instant};

use netns_common::*;
use sluice_testkit::{num, task_threads};

#[test]
fn configuration_errors_name_element_and_device() {
    let e = kit()
        .build("FromDevice(nosuchdev0) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("FromDevice(nosuchdev0)"), "{}", e);
    assert!(
        e.contains("no such interface 'nosuchdev0'") || e.contains("root"),
        "{}",
        e
    );
    let e = kit()
        .build("InfiniteSource(ACTIVE false) -> Queue -> ToDevice(nosuchdev1)")
        .err()
        .unwrap();
    assert!(e.contains("ToDevice(nosuchdev1)"), "{}", e);
    let e = kit()
        .build("FromDevice(lo, METHOD NETMAP) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("METHOD"), "{}", e);
    let e = kit()
        .build("FromDevice(lo, POLL sometimes) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("POLL"), "{}", e);
    let e = kit()
        .build("FromDevice(lo, FANOUT 3, FANOUT_MODE weird) -> Discard")
        .err()
        .unwrap();
    assert!(e.contains("FANOUT_MODE"), "{}", e);
    let e = kit().build("FromDevice -> Discard").err().unwrap();
    assert!(e.contains("DEVNAME"), "{}", e);
    // ToDevice is pull-only, as in Click.
    let e = kit().build("FromDevice(lo) -> ToDevice(lo)").err().unwrap();
    assert!(e.contains("pull") || e.contains("push"), "{}", e);
}

#[test]
fn veth_roundtrip_counts_every_frame() {
    std::thread::spawn(|| {
        if !private_netns("veth_roundtrip_counts_every_frame") {
            return;
        }
        veth("sla", "slb");
        let conf = format!(
            "InfiniteSource(DATA {FRAME}, LIMIT 500, BURST 16) -> q :: Queue(1000) -> td :: ToDevice(sla);
             fd :: FromDevice(slb) -> c :: Counter -> s :: StopAfter(500, SECS 10);"
        );
        let mut r = kit().router(&conf);
        let t0 = Instant::now();
        r.run_until_idle();
        let info = ["s.seen", "td.count", "td.errors", "fd.count", "fd.kernel_packets", "q.length"]
            .map(|h| format!("{} {}", h, num(&mut r, h)));
        assert!(t0.elapsed() < Duration::from_secs(9), "timed out: {:?}", info);
        assert_eq!(num(&mut r, "s.seen"), 500);
        assert_eq!(num(&mut r, "td.count"), 500);
        assert_eq!(num(&mut r, "td.drops"), 0);
        assert_eq!(num(&mut r, "fd.drops"), 0);
        assert!(num(&mut r, "fd.count") >= 500);
        // The sender does not see its own frames on the rx side.
        r.write_path("fd.reset_counts", "").unwrap();
        assert_eq!(num(&mut r, "fd.count"), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn outgoing_frames_are_ignored_unless_outbound() {
    std::thread::spawn(|| {
        if !private_netns("outgoing_frames_are_ignored_unless_outbound") {
            return;
        }
        veth("sla", "slb");
        // Transmit on sla and listen on sla itself: only OUTBOUND sees the frames (frames that
        // bypass the qdisc are invisible to every packet tap, hence QDISC_BYPASS false).
        let conf = format!(
            "InfiniteSource(DATA {FRAME}, LIMIT 100, BURST 10) -> Queue(1000) -> ToDevice(sla, QDISC_BYPASS false);
             a :: FromDevice(sla) -> ca :: Counter -> Discard;
             o :: FromDevice(sla, OUTBOUND true) -> s :: StopAfter(100, SECS 10);"
        );
        let mut r = kit().router(&conf);
        r.run_until_idle();
        assert_eq!(num(&mut r, "s.seen"), 100);
        assert_eq!(num(&mut r, "ca.count"), 0);
    })
    .join()
    .unwrap();
}

#[test]
fn fanout_group_splits_flows_between_members() {
    std::thread::spawn(|| {
        if !private_netns("fanout_group_splits_flows_between_members") {
            return;
        }
        veth("sla", "slb");
        // Two members in one hash group: every frame reaches exactly one of them.
        let conf = format!(
            "InfiniteSource(DATA {FRAME}, LIMIT 300, BURST 10) -> Queue(1000) -> ToDevice(sla);
             f1 :: FromDevice(slb, FANOUT 77) -> c1 :: Counter -> s :: StopAfter(100000, SECS 1.5);
             f2 :: FromDevice(slb, FANOUT 77) -> c2 :: Counter -> s2 :: StopAfter(100000, SECS 10);"
        );
        let mut r = kit().router(&conf);
        r.run_until_idle();
        let (a, b) = (num(&mut r, "c1.count"), num(&mut r, "c2.count"));
        assert_eq!(a + b, 300, "{} + {}", a, b);
    })
    .join()
    .unwrap();
}

#[test]
fn fanout_members_run_on_their_own_threads() {
    // One receive "queue" (fanout member) per thread, as with -j 2 and StaticThreadSched.
    std::thread::spawn(|| {
        if !private_netns("fanout_members_run_on_their_own_threads") {
            return;
        }
        veth("sla", "slb");
        let conf = format!(
            "src :: InfiniteSource(DATA {FRAME}, LIMIT 300, BURST 10) -> Queue(1000) -> ToDevice(sla);
             f1 :: FromDevice(slb, FANOUT 78) -> c1 :: Counter -> s :: StopAfter(100000, SECS 1.5);
             f2 :: FromDevice(slb, FANOUT 78) -> c2 :: Counter -> s2 :: StopAfter(100000, SECS 10);
             StaticThreadSched(f1 0, f2 1, src 0);"
        );
        let mut r = kit().threads(2).router(&conf);
        r.run_until_idle();
        let (a, b) = (num(&mut r, "c1.count"), num(&mut r, "c2.count"));
        assert_eq!(a + b, 300, "{} + {}", a, b);
        let tasks = task_threads(&mut r);
        assert_eq!(tasks.get("f1"), Some(&0), "{:?}", tasks);
        assert_eq!(tasks.get("f2"), Some(&1), "{:?}", tasks);
    })
    .join()
    .unwrap();
}

#[test]
fn interface_down_or_gone_is_counted_not_fatal() {
    std::thread::spawn(|| {
        if !private_netns("interface_down_or_gone_is_counted_not_fatal") {
            return;
        }
        veth("sla", "slb");
        let conf = format!(
            "InfiniteSource(DATA {FRAME}, LIMIT 50, BURST 10) -> Queue(1000) -> td :: ToDevice(sla);
             FromDevice(slb) -> s :: StopAfter(1000, SECS 1);"
        );
        let mut r = kit().router(&conf);
        sh("ip link del sla");
        r.run_until_idle();
        assert_eq!(num(&mut r, "td.count"), 0);
        assert_eq!(num(&mut r, "td.errors"), 50);
        assert_eq!(num(&mut r, "td.drops"), 50);
    })
    .join()
    .unwrap();
}

/// IPv4/UDP 198.18.5.2:1000 -> 198.18.5.1:4444 carrying "hello sluice", as Click hex data.
fn udp_to_host() -> Vec<u8> {
    let payload = b"hello sluice";
    let total = 20 + 8 + payload.len();
    let mut p = vec![
        0x45,
        0,
        0,
        total as u8,
        0,
        1,
        0,
        0,
        64,
        17,
        0,
        0,
        198,
        18,
        5,
        2,
        198,
        18,
        5,
        1,
    ];
    let mut sum: u32 = p
        .chunks(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]) as u32)
        .sum();
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let ck = !(sum as u16);
    p[10..12].copy_from_slice(&ck.to_be_bytes());
    p.extend_from_slice(&1000u16.to_be_bytes());
    p.extend_from_slice(&4444u16.to_be_bytes());
    p.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    p.extend_from_slice(&[0, 0]);
    p.extend_from_slice(payload);
    p
}

fn hex(b: &[u8]) -> String {
    let h: Vec<String> = b.iter().map(|x| format!("{:02x}", x)).collect();
    format!("\"\\<{}>\"", h.join(" "))
}

fn tun_tap_roundtrip(tap: bool) {
    veth("dummya", "dummyb"); // keeps the namespace from being empty; unused
    let (class, data) = if tap {
        let mut f = vec![2, 0, 0, 0, 0, 0x51, 2, 0, 0, 0, 0, 0x52, 8, 0];
        f.extend(udp_to_host());
        (
            "KernelTap(198.18.5.1/24, ETHER 02:00:00:00:00:51, DEVNAME sltap0)",
            f,
        )
    } else {
        ("KernelTun(198.18.5.1/24, DEVNAME sltun0)", udp_to_host())
    };
    let conf = format!(
        "t :: {class}; InfiniteSource(DATA {}, LIMIT 3, BURST 1) -> t -> c :: Counter -> s :: StopAfter(2, ANY true, SECS 10);",
        hex(&data)
    );
    let udp = std::net::UdpSocket::bind("0.0.0.0:4444").expect("bind");
    udp.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut r = kit().router(&conf);
    // The host sends into the device: ICMP echo requests (TUN) or ARP requests (TAP).
    let mut ping = Command::new("ping")
        .args(["-c", "4", "-i", "0.2", "-W", "1", "198.18.5.2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("ping");
    r.run_until_idle();
    let _ = ping.kill();
    let _ = ping.wait();
    assert!(num(&mut r, "s.seen") >= 2);
    assert_eq!(num(&mut r, "t.write_count"), 3);
    assert_eq!(num(&mut r, "t.write_errors"), 0);
    let mut buf = [0u8; 100];
    let (n, from) = udp.recv_from(&mut buf).expect("host stack got the packet");
    assert_eq!(&buf[..n], b"hello sluice");
    assert_eq!(from.to_string(), "198.18.5.2:1000");
    let name = r.read_path("t.dev_name").unwrap();
    assert_eq!(name.trim(), if tap { "sltap0" } else { "sltun0" });
}

#[test]
fn kernel_tun_exchanges_ip_packets_with_host() {
    std::thread::spawn(|| {
        if private_netns("kernel_tun_exchanges_ip_packets_with_host") {
            tun_tap_roundtrip(false);
        }
    })
    .join()
    .unwrap();
}

#[test]
fn kernel_tap_exchanges_frames_with_host() {
    std::thread::spawn(|| {
        if private_netns("kernel_tap_exchanges_frames_with_host") {
            tun_tap_roundtrip(true);
        }
    })
    .join()
    .unwrap();
}

/// As in Click at user level, an address argument may name a host interface: its IPv4
/// address, prefix or Ethernet address, and `NAME:gw` its default gateway; AddressInfo names
/// come first.
#[test]
fn interface_names_are_addresses() {
    use sluice_lang::names;
    std::thread::spawn(|| {
        let _ = sluice_elements::library();
        assert_eq!(names::lookup_ip("lo"), Some([127, 0, 0, 1].into()));
        assert_eq!(names::lookup_ip("nosuchdev0"), None);
        if !private_netns("interface_names_are_addresses") {
            return;
        }
        veth("sla", "slb");
        sh("ip addr add 198.18.5.1/24 dev sla && ip route add default via 198.18.5.254 dev sla");
        let mac = sluice_elements::device::sys::if_ether("sla").unwrap();
        assert_eq!(names::lookup_ip("sla"), Some([198, 18, 5, 1].into()));
        assert_eq!(names::lookup_net("sla"), Some(([198, 18, 5, 1].into(), 24)));
        assert_eq!(names::lookup_ip("sla:gw"), Some([198, 18, 5, 254].into()));
        assert_eq!(names::lookup_ip("sla:bcast"), Some([198, 18, 5, 255].into()));
        assert_eq!(names::lookup_eth("sla").map(|e| e.0), Some(mac));
        assert_eq!(names::lookup_eth(" sla").map(|e| e.0), None);
        assert_eq!(names::lookup_ip("slb:gw"), None, "no default route through slb");
        let mut r = kit().router(
            "i :: Idle -> a :: ARPQuerier(sla, sla) -> Discard; Idle -> [1]a;
             Idle -> SetIPAddress(sla:gw) -> Discard;",
        );
        r.write_path("a.insert", "198.18.5.254 02:00:00:00:00:09").unwrap();
        let ipaddr = r.read_path("a.ipaddr").unwrap();
        assert_eq!(ipaddr.trim(), "198.18.5.1");
        let mut r = kit().router("AddressInfo(sla 198.18.9.9); Idle -> a :: ARPQuerier(sla, sla) -> Discard; Idle -> [1]a;");
        assert_eq!(r.read_path("a.ipaddr").unwrap().trim(), "198.18.9.9");
    })
    .join()
    .unwrap();
}
