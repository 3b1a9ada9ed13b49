//! IPClassifier and IPFilter on IPv6 and on mixed IPv4/IPv6 traffic: packets built byte by
//! byte (TCP, UDP, ICMPv6 echo and neighbor solicitation, IPv4 beside them) through real
//! configurations, each packet's output checked.

use std::net::Ipv6Addr;

use sluice_testkit::{config_error, inject_bytes, num, read, router, taken};

// ---------------------------------------------------------------- packet building

struct V6 {
    tc: u8,
    flow: u32,
    nxt: u8,
    hlim: u8,
    src: &'static str,
    dst: &'static str,
}

const V6: V6 = V6 {
    tc: 0,
    flow: 0,
    nxt: 6,
    hlim: 64,
    src: "2001:db8::1",
    dst: "2001:db8::2",
};

fn ip6(h: V6, l4: &[u8]) -> Vec<u8> {
    let first = 6u32 << 28 | (h.tc as u32) << 20 | h.flow;
    let mut p = first.to_be_bytes().to_vec();
    p.extend_from_slice(&(l4.len() as u16).to_be_bytes());
    p.extend_from_slice(&[h.nxt, h.hlim]);
    for a in [h.src, h.dst] {
        p.extend_from_slice(&a.parse::<Ipv6Addr>().unwrap().octets());
    }
    p.extend_from_slice(l4);
    p
}

fn ip4(proto: u8, src: [u8; 4], dst: [u8; 4], l4: &[u8]) -> Vec<u8> {
    let mut p = vec![
        0x45,
        0,
        0,
        (20 + l4.len()) as u8,
        0x12,
        0x34,
        0,
        0,
        64,
        proto,
        0,
        0,
    ];
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(l4);
    p
}

fn tcp(sport: u16, dport: u16, flags: u8) -> Vec<u8> {
    let mut t = sport.to_be_bytes().to_vec();
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0x20, 0x00, 0, 0, 0, 0]);
    t
}

fn udp(sport: u16, dport: u16) -> Vec<u8> {
    let mut t = sport.to_be_bytes().to_vec();
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 12, 0, 0, b'h', b'i', b'!', b'!']);
    t
}

/// An ICMPv6 echo request (type 128).
fn echo6() -> Vec<u8> {
    vec![128, 0, 0, 0, 0x12, 0x34, 0, 1, b'p', b'i', b'n', b'g']
}

/// An ICMPv6 neighbor solicitation (type 135) for `target`.
fn ns(target: &str) -> Vec<u8> {
    let mut m = vec![135, 0, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(&target.parse::<Ipv6Addr>().unwrap().octets());
    m
}

fn echo4() -> Vec<u8> {
    vec![8, 0, 0, 0, 0, 1, 0, 1]
}

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x33, 0x33, 0xff, 0, 0, 2];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

const A4: [u8; 4] = [198, 18, 0, 1];
const B4: [u8; 4] = [198, 19, 0, 2];

// ---------------------------------------------------------------- running configurations

/// A router with `elem` (named `c`, `nout` outputs) between a TestInject and TestCaptures
/// `o0`...; `pre` goes before it (e.g. `MarkIPHeader(14) ->`).
struct Rig {
    r: sluice_core::Router,
    nout: usize,
}

impl Rig {
    fn new(pre: &str, elem: &str, nout: usize) -> Rig {
        let mut conf = format!("i :: TestInject -> {pre} c :: {elem};\n");
        for k in 0..nout {
            conf += &format!("c[{k}] -> o{k} :: TestCapture;\n");
        }
        Rig {
            r: router(&conf),
            nout,
        }
    }

    /// The output `pkt` leaves on, or None if `c` dropped it.
    fn out(&mut self, pkt: &[u8]) -> Option<usize> {
        inject_bytes(&mut self.r, "i", 0, &[pkt]);
        let mut got = None;
        for k in 0..self.nout {
            let t = taken(&mut self.r, &format!("o{k}"));
            if !t.is_empty() {
                assert!(got.is_none() && t.len() == 1, "one packet, one output");
                assert_eq!(t[0].data(), pkt, "the packet leaves unchanged");
                got = Some(k);
            }
        }
        got
    }
}

fn ipc(patterns: &[&str]) -> Rig {
    Rig::new(
        "",
        &format!("IPClassifier({})", patterns.join(", ")),
        patterns.len(),
    )
}

// ---------------------------------------------------------------- tests

#[test]
fn ipclassifier_sorts_mixed_traffic() {
    let mut c = ipc(&[
        "ip6 and icmp6 type echo-request",
        "icmp6 type neighbor-solicitation and ip6 hlim 255",
        "src host 2001:db8::1 and tcp dst port 80 and tcp opt syn",
        "dst net 2001:db8:0:1::/64 and udp dst port 53",
        "src host 198.18.0.1",
        "tcp",
        "ip6",
        "-",
    ]);
    let echo = ip6(V6 { nxt: 58, ..V6 }, &echo6());
    assert_eq!(c.out(&echo), Some(0));
    let solicit = V6 {
        nxt: 58,
        hlim: 255,
        src: "::",
        dst: "ff02::1:ff00:2",
        ..V6
    };
    assert_eq!(c.out(&ip6(solicit, &ns("2001:db8::2"))), Some(1));
    let solicit = V6 {
        nxt: 58,
        hlim: 64,
        ..V6
    };
    assert_eq!(c.out(&ip6(solicit, &ns("2001:db8::2"))), Some(6));
    assert_eq!(c.out(&ip6(V6, &tcp(40000, 80, 0x02))), Some(2));
    assert_eq!(c.out(&ip6(V6, &tcp(40000, 80, 0x10))), Some(5));
    assert_eq!(c.out(&ip6(V6, &tcp(40000, 81, 0x02))), Some(5));
    let to_net = V6 {
        nxt: 17,
        dst: "2001:db8:0:1::9",
        ..V6
    };
    assert_eq!(c.out(&ip6(to_net, &udp(5353, 53))), Some(3));
    let to_net = V6 {
        nxt: 17,
        dst: "2001:db8:0:1::9",
        ..V6
    };
    assert_eq!(c.out(&ip6(to_net, &udp(5353, 54))), Some(6));
    // IPv4 beside it.
    assert_eq!(c.out(&ip4(17, A4, B4, &udp(1, 53))), Some(4));
    assert_eq!(c.out(&ip4(6, B4, A4, &tcp(1, 80, 0x02))), Some(5));
    assert_eq!(c.out(&ip4(17, B4, A4, &udp(1, 53))), Some(7));
    assert_eq!(c.out(&ip4(1, B4, A4, &echo4())), Some(7));
    // An IPv6 source whose bytes at IPv4's source offset (12) spell 198.18.0.1 is no IPv4
    // source host; an IPv4 packet with IPv6's SYN to port 80 at IPv6's offsets is no IPv6
    // packet.
    let lookalike = V6 {
        nxt: 17,
        src: "2001:db8:c612:1::5",
        ..V6
    };
    assert_eq!(c.out(&ip6(lookalike, &udp(1, 53))), Some(6));
    let mut v4 = ip6(V6, &tcp(40000, 80, 0x02));
    v4[0] = 0x45;
    assert_eq!(c.out(&v4), Some(7));
}

#[test]
fn ipv6_header_fields() {
    let mut c = ipc(&[
        "ip6 flow 0x12345 and ip6 tc 0xb9",
        "ip6 dscp 46",
        "ip6 ce",
        "ip6 hlim < 2",
        "ip6 plen > 100",
        "ip6 nxt 0",
        "ip6 frag",
        "ip dscp 46",
        "-",
    ]);
    let h = |tc, flow, hlim, nxt| V6 {
        tc,
        flow,
        hlim,
        nxt,
        ..V6
    };
    let u = udp(1, 2);
    assert_eq!(c.out(&ip6(h(0xb9, 0x12345, 64, 17), &u)), Some(0));
    // DSCP 46 (EF) and ECT(1): traffic class 0xb9; flow 0x12346.
    assert_eq!(c.out(&ip6(h(0xb9, 0x12346, 64, 17), &u)), Some(1));
    assert_eq!(c.out(&ip6(h(0x03, 0, 64, 17), &u)), Some(2));
    assert_eq!(c.out(&ip6(h(0x02, 0, 1, 17), &u)), Some(3));
    assert_eq!(c.out(&ip6(h(0, 0, 64, 17), &[0; 101])), Some(4));
    // A hop-by-hop options header first: `ip6 nxt 0`, and no transport primitive matches.
    assert_eq!(c.out(&ip6(h(0, 0, 64, 0), &u)), Some(5));
    assert_eq!(c.out(&ip6(h(0, 0, 64, 44), &u)), Some(6));
    // IPv4's DSCP is in another byte: an IPv6 packet with DSCP 46 is not `ip dscp 46`.
    let mut v4 = ip4(17, A4, B4, &u);
    v4[1] = 46 << 2;
    assert_eq!(c.out(&v4), Some(7));
    assert_eq!(c.out(&ip6(h(0, 0, 64, 17), &u)), Some(8));
}

#[test]
fn transport_primitives_on_both_versions() {
    let mut c = ipc(&[
        "ip6 and ip6 nxt 0 and tcp",
        "src port 1234 and dst udp port domain",
        "tcp opt ack and tcp win 8192",
        "transp[0:2] == 999",
        "icmp type echo",
        "icmp6",
        "-",
    ]);
    // The transport header right after the fixed header is found; behind an extension
    // header it is not (nothing follows the header chain).
    let mut hbh = vec![6, 0, 1, 4, 0, 0, 0, 0];
    hbh.extend_from_slice(&tcp(1234, 53, 0x10));
    assert_eq!(c.out(&ip6(V6 { nxt: 0, ..V6 }, &hbh)), Some(6));
    for (v6, v4) in [
        (
            ip6(V6 { nxt: 17, ..V6 }, &udp(1234, 53)),
            ip4(17, A4, B4, &udp(1234, 53)),
        ),
        (ip6(V6, &tcp(1, 2, 0x10)), ip4(6, A4, B4, &tcp(1, 2, 0x10))),
        (ip6(V6, &tcp(999, 2, 0)), ip4(6, A4, B4, &tcp(999, 2, 0))),
    ] {
        assert_eq!(c.out(&v6), c.out(&v4));
    }
    assert_eq!(c.out(&ip6(V6 { nxt: 17, ..V6 }, &udp(1234, 53))), Some(1));
    assert_eq!(c.out(&ip6(V6, &tcp(1, 2, 0x10))), Some(2));
    assert_eq!(c.out(&ip6(V6, &tcp(999, 2, 0))), Some(3));
    // ICMP and ICMPv6 are told apart: echo (8) in ICMPv6 is not `icmp type echo`.
    assert_eq!(c.out(&ip4(1, A4, B4, &echo4())), Some(4));
    let mut e = echo6();
    e[0] = 8;
    assert_eq!(c.out(&ip6(V6 { nxt: 58, ..V6 }, &e)), Some(5));
    // IPv4 later fragments carry no transport header; IPv6 ones are `ip6 frag`.
    let mut later = ip4(6, A4, B4, &tcp(999, 2, 0x10));
    later[7] = 1;
    assert_eq!(c.out(&later), Some(6));
}

#[test]
fn ipv6_address_relations_and_masks() {
    let mut c = ipc(&[
        "src host != 2001:db8::1 and dst host 2001:db8::2",
        "host 2001:db8::5",
        "dst host > 2001:db8::2",
        "src & ffff:ffff:: == 2001:db8:: and dst <= 2001:db8::1",
        "-",
    ]);
    let h = |src, dst| V6 {
        src,
        dst,
        nxt: 17,
        ..V6
    };
    let u = udp(1, 2);
    assert_eq!(c.out(&ip6(h("2001:db8::3", "2001:db8::2"), &u)), Some(0));
    assert_eq!(c.out(&ip6(h("2001:db8::1", "2001:db8::2"), &u)), Some(4));
    assert_eq!(c.out(&ip6(h("2001:db8::1", "2001:db8::2:0"), &u)), Some(2));
    assert_eq!(
        c.out(&ip6(h("2001:db8:ffff::1", "2001:db8::1"), &u)),
        Some(3)
    );
    assert_eq!(c.out(&ip6(h("2001:db8::6", "::"), &u)), Some(3));
    assert_eq!(c.out(&ip6(h("2001:db9::5", "::"), &u)), Some(4));
    assert_eq!(c.out(&ip6(h("2001:db9::7", "2001:db8::5"), &u)), Some(1));
    // An IPv4 packet: no IPv6 address primitive holds, not even `!=`.
    assert_eq!(c.out(&ip4(17, A4, B4, &u)), Some(4));
}

#[test]
fn truncated_ipv6_packets_fail_the_tests_they_cannot_hold() {
    let full = ip6(V6, &tcp(40000, 80, 0x02));
    let mut c = ipc(&[
        "dst port 80",
        "dst host 2001:db8::2",
        "src host 2001:db8::1",
        "ip6",
        "-",
    ]);
    for n in 0..=full.len() {
        let want = match n {
            0 => 4,
            44.. => 0,
            40.. => 1,
            24.. => 2,
            _ => 3,
        };
        assert_eq!(c.out(&full[..n]), Some(want), "length {n}");
    }
}

#[test]
fn ipclassifier_behind_ethernet() {
    // With MarkIPHeader(14) the IPv6 header is found behind an Ethernet header (MarkMACHeader
    // marks that one for `ether`); the Ethernet destination of a neighbor solicitation is
    // the solicited-node multicast address. Only the IPv6 half of the program reads it.
    let mut c = Rig::new(
        "MarkMACHeader -> MarkIPHeader(14) ->",
        "IPClassifier(ether dst 33:33:ff:00:00:02 and icmp6 type 135, ip6, -)",
        3,
    );
    let solicit = V6 {
        nxt: 58,
        hlim: 255,
        dst: "ff02::1:ff00:2",
        ..V6
    };
    assert_eq!(
        c.out(&eth(0x86dd, &ip6(solicit, &ns("2001:db8::2")))),
        Some(0)
    );
    assert_eq!(c.out(&eth(0x86dd, &ip6(V6, &tcp(1, 2, 0)))), Some(1));
    assert_eq!(c.out(&eth(0x0800, &ip4(6, A4, B4, &tcp(1, 2, 0)))), Some(2));
}

#[test]
fn ipfilter_rules_on_mixed_traffic() {
    let mut f = Rig::new(
        "",
        "IPFilter(allow src net 2001:db8::/32 && udp, 1 icmp6, drop ip6 hlim < 2, \
         allow ip && dst port 80, 1 ip6 tcp, deny all)",
        2,
    );
    assert_eq!(f.out(&ip6(V6 { nxt: 17, ..V6 }, &udp(1, 2))), Some(0));
    let other = V6 {
        nxt: 17,
        src: "2001:db9::1",
        ..V6
    };
    assert_eq!(f.out(&ip6(other, &udp(1, 2))), None);
    assert_eq!(f.out(&ip6(V6 { nxt: 58, ..V6 }, &echo6())), Some(1));
    assert_eq!(f.out(&ip6(V6 { hlim: 1, ..V6 }, &tcp(1, 2, 0))), None);
    assert_eq!(f.out(&ip6(V6, &tcp(1, 80, 0))), Some(1));
    assert_eq!(f.out(&ip4(6, A4, B4, &tcp(1, 80, 0))), Some(0));
    assert_eq!(f.out(&ip4(6, A4, B4, &tcp(1, 81, 0))), None);
    assert_eq!(num(&mut f.r, "c.drops"), 3);
}

/// The `program` handler shows the IPv6 half after the other one.
#[test]
fn program_shows_both_halves() {
    let mut r = router("Idle -> c :: IPFilter(allow ip6 src host ::1, allow tcp) -> Idle;");
    let p = read(&mut r, "c.program");
    let (four, six) = p.split_once("ipv6 (version 6) packets:\n").expect(&p);
    // IPv4: `tcp` is protocol 6 at byte 9; IPv6: ::1 at bytes 8 to 24, `tcp` next header 6
    // at byte 6. Neither tests the version: the half was chosen by it.
    assert!(four.contains("264/00060000%00ff0000"), "{p}");
    assert!(!p.contains("%f0000000"), "{p}");
    assert!(six.contains("276/00000001%ffffffff"), "{p}");
    assert!(six.contains("260/00000600%0000ff00"), "{p}");
}

#[test]
fn ipv6_configuration_errors() {
    for (conf, want) in [
        (
            "IPClassifier(ip src host 2001:db8::1)",
            "IPv4 address expected",
        ),
        ("IPClassifier(ip6 ttl 3)", "'ip6' makes no sense before '3'"),
        ("IPFilter(allow icmp6 type bogus)", "bogus"),
        ("IPClassifier(src net 2001:db8::/129)", "2001:db8::/129"),
    ] {
        let e = config_error(&format!("Idle -> {conf} -> Idle;"));
        assert!(e.contains(want), "{conf}: {e}");
    }
}
