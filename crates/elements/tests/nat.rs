//! Behaviour tests of the address and port translators (nat/): IPRewriter, TCPRewriter,
//! UDPRewriter, IPAddrRewriter, IPAddrPairRewriter, ICMPPingRewriter, ICMPRewriter,
//! IPRewriterPatterns, FTPPortMapper and the mappers, through real configurations. Checksums
//! of rewritten packets are verified by full recomputation.

use std::net::Ipv4Addr;

use sluice_core::{Packet, Router};
use sluice_testkit::{config_error, drops, inject, num, read, router, taken, task_threads, Kit};
use sluice_wire::checksum::{checksum, fold, pseudo_header_v4, sum16};
use sluice_wire::{Ipv4Packet, TcpPacket, UdpPacket};

const INSIDE: [u8; 4] = [198, 19, 0, 2];
const SERVER: [u8; 4] = [198, 19, 1, 1];
const PUBLIC: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);

/// An IPv4 packet with protocol `proto` carrying `transport` (whose checksum at `csum`, if
/// any, is filled over the pseudo-header).
fn ip(
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    mut transport: Vec<u8>,
    csum: Option<usize>,
) -> Packet {
    if let Some(at) = csum {
        let s = pseudo_header_v4(src.into(), dst.into(), proto, transport.len() as u16)
            + sum16(&transport);
        let c = !fold(s);
        transport[at..at + 2].copy_from_slice(&c.to_be_bytes());
    }
    let total = 20 + transport.len();
    let mut v = vec![0x45, 0];
    v.extend_from_slice(&(total as u16).to_be_bytes());
    v.extend_from_slice(&[0, 1, 0, 0, 64, proto, 0, 0]);
    v.extend_from_slice(&src);
    v.extend_from_slice(&dst);
    let c = checksum(&v);
    v[10..12].copy_from_slice(&c.to_be_bytes());
    v.extend_from_slice(&transport);
    Packet::from_bytes(&v)
}

/// A TCP packet with flags `flags` and `payload`.
fn tcp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, flags: u8, payload: &[u8]) -> Packet {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0x20, 0, 0, 0, 0, 0]);
    t.extend_from_slice(payload);
    ip(src, dst, 6, t, Some(16))
}

/// A UDP packet; `with_sum` false leaves its checksum 0 (none).
fn udp(src: [u8; 4], sport: u16, dst: [u8; 4], dport: u16, with_sum: bool) -> Packet {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&12u16.to_be_bytes());
    t.extend_from_slice(&[0, 0, 1, 2, 3, 4]);
    ip(src, dst, 17, t, with_sum.then_some(6))
}

/// Source, source port, destination, destination port of a TCP or UDP packet, after
/// checking its IP and transport checksums by full recomputation.
fn flow_checked(p: &Packet) -> (Ipv4Addr, u16, Ipv4Addr, u16) {
    let ip = Ipv4Packet::new_checked(p.data()).unwrap();
    assert_eq!(checksum(&p.data()[..20]), 0, "IP checksum");
    let (src, dst) = (ip.src(), ip.dst());
    let t = ip.payload();
    match ip.protocol() {
        6 => {
            let tp = TcpPacket::new_checked(t).unwrap();
            assert!(tp.verify_checksum_v4(src, dst), "TCP checksum");
            (src, tp.src_port(), dst, tp.dst_port())
        }
        17 => {
            let up = UdpPacket::new_checked(t).unwrap();
            if up.checksum() != 0 {
                assert!(up.verify_checksum_v4(src, dst), "UDP checksum");
            }
            (src, up.src_port(), dst, up.dst_port())
        }
        p => panic!("protocol {p}"),
    }
}

/// Every injected packet left or was counted as a drop.
fn assert_conserved(r: &mut Router, injected: u64, out: u64) {
    assert_eq!(injected, out + drops(r), "{}", read(r, "rw.drop_details"));
}

const NAPT: &str = "i0 :: TestInject -> [0]rw[0] -> o0 :: TestCapture;
    i1 :: TestInject -> [1]rw[1] -> o1 :: TestCapture;";

fn napt(class: &str, pattern: &str, keywords: &str) -> Router {
    router(&format!(
        "rw :: {class}(pattern {pattern} 0 1, drop{keywords}); {NAPT}"
    ))
}

#[test]
fn forward_and_reply_flows_are_rewritten_with_valid_checksums() {
    let mut r = napt("IPRewriter", "198.18.0.1 1024-65535# - -", "");
    inject(&mut r, "i0", tcp(INSIDE, 5000, SERVER, 80, 0x02, b""));
    inject(&mut r, "i0", tcp(INSIDE, 5000, SERVER, 80, 0x10, b"hello"));
    inject(&mut r, "i0", udp(INSIDE, 5000, SERVER, 53, true));
    let out = taken(&mut r, "o0");
    assert_eq!(out.len(), 3);
    let public = (PUBLIC, 1024, Ipv4Addr::from(SERVER), 80);
    assert_eq!(flow_checked(&out[0]), public);
    assert_eq!(flow_checked(&out[1]), public);
    // UDP has its own map: the next port of the range.
    assert_eq!(flow_checked(&out[2]), (PUBLIC, 1025, SERVER.into(), 53));
    assert_eq!(out[0].dst_ip_anno(), Ipv4Addr::from(SERVER));

    // Replies arrive on input 1 and are restored, to output 1.
    inject(
        &mut r,
        "i1",
        tcp(SERVER, 80, PUBLIC.octets(), 1024, 0x12, b"world"),
    );
    inject(&mut r, "i1", udp(SERVER, 53, PUBLIC.octets(), 1025, true));
    let back = taken(&mut r, "o1");
    assert_eq!(back.len(), 2);
    assert_eq!(
        flow_checked(&back[0]),
        (SERVER.into(), 80, INSIDE.into(), 5000)
    );
    assert_eq!(
        flow_checked(&back[1]),
        (SERVER.into(), 53, INSIDE.into(), 5000)
    );
    assert_eq!(back[0].dst_ip_anno(), Ipv4Addr::from(INSIDE));

    // A reply to no flow meets input 1's `drop`.
    inject(
        &mut r,
        "i1",
        tcp(SERVER, 80, PUBLIC.octets(), 2000, 0x10, b""),
    );
    assert_eq!(read(&mut r, "rw.table_size"), "2");
    assert_eq!(read(&mut r, "rw.size"), "2");
    // Two flows hold memory; each packet reads a bucket and a flow.
    let bytes: u64 = read(&mut r, "rw.footprint_bytes").parse().unwrap();
    assert!(bytes > 2 * 32, "{bytes}");
    assert_eq!(read(&mut r, "rw.accesses_per_packet"), "2");
    assert!(read(&mut r, "rw.drop_details").contains("1 dropped by input spec"));
    let table = read(&mut r, "rw.tcp_table");
    assert!(
        table.contains("(198.19.0.2, 5000, 198.19.1.1, 80) => (198.18.0.1, 1024, 198.19.1.1, 80) [*0 1] i0 exp"),
        "{table}"
    );
    assert!(
        table.contains("(198.19.1.1, 80, 198.18.0.1, 1024) => (198.19.1.1, 80, 198.19.0.2, 5000) [0 *1] i0 exp"),
        "{table}"
    );
    assert_eq!(
        read(&mut r, "rw.patterns"),
        "198.18.0.1 1024-65535 - - [2]\n<drop>"
    );
    let mut lookup = r
        .read_path_param("rw.tcp_lookup", Some("198.19.0.2 5000 198.19.1.1 80"))
        .unwrap();
    assert_eq!(lookup.trim(), "198.18.0.1 1024 198.19.1.1 80");
    lookup = r
        .read_path_param("rw.tcp_lookup", Some("198.19.0.9 1 198.19.1.1 80"))
        .unwrap();
    assert_eq!(lookup.trim(), "");
    assert_conserved(&mut r, 6, 5);
}

#[test]
fn exhausted_port_range_is_a_counted_mapping_failure() {
    let mut r = napt("TCPRewriter", "198.18.0.1 1024-1025# - -", "");
    for sport in [1, 2, 3, 2] {
        inject(&mut r, "i0", tcp(INSIDE, sport, SERVER, 80, 0x02, b""));
    }
    let out = taken(&mut r, "o0");
    let ports: Vec<u16> = out.iter().map(|p| flow_checked(p).1).collect();
    assert_eq!(ports, [1024, 1025, 1025]);
    assert_eq!(read(&mut r, "rw.mapping_failures"), "1");
    assert!(read(&mut r, "rw.drop_details").contains("1 no free port or address"));
    assert_conserved(&mut r, 4, 3);
}

#[test]
fn full_table_of_guaranteed_flows_refuses_new_ones() {
    let mut r = napt(
        "UDPRewriter",
        "198.18.0.1 1024-65535# - -",
        ", MAPPING_CAPACITY 2",
    );
    for sport in [1, 2, 3] {
        inject(&mut r, "i0", udp(INSIDE, sport, SERVER, 53, true));
    }
    assert_eq!(taken(&mut r, "o0").len(), 2);
    assert_eq!(read(&mut r, "rw.capacity"), "2");
    assert_eq!(read(&mut r, "rw.mapping_failures"), "1");
    assert!(read(&mut r, "rw.drop_details").contains("1 mapping table full"));
    // Lowering the capacity removes flows.
    r.write_path("rw.capacity", "1").unwrap();
    assert_eq!(read(&mut r, "rw.size"), "1");
    r.write_path("rw.clear", "").unwrap();
    assert_eq!(read(&mut r, "rw.size"), "0");
    assert_conserved(&mut r, 3, 2);
}

#[test]
fn flows_expire_after_their_timeout_in_simulated_time() {
    let mut r = Kit::sim().router(&format!(
        "rw :: UDPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop,
             TIMEOUT 2, GUARANTEE 0, REAP_INTERVAL 1);
         {NAPT}
         Script(wait 5, stop);"
    ));
    inject(&mut r, "i0", udp(INSIDE, 7, SERVER, 53, false));
    assert_eq!(read(&mut r, "rw.table_size"), "1");
    let udp_out = taken(&mut r, "o0");
    // A missing UDP checksum stays missing.
    assert_eq!(&udp_out[0].data()[26..28], &[0, 0]);
    assert_eq!(flow_checked(&udp_out[0]), (PUBLIC, 1024, SERVER.into(), 53));
    r.run_until_idle();
    assert_eq!(read(&mut r, "rw.table_size"), "0");
    inject(&mut r, "i1", udp(SERVER, 53, PUBLIC.octets(), 1024, false));
    assert!(taken(&mut r, "o1").is_empty());
    assert_conserved(&mut r, 2, 1);
}

#[test]
fn pass_keep_and_unrewritable_packets() {
    let mut r = router(
        "rw :: IPRewriter(keep 0 1, pass 1); i0 :: TestInject -> [0]rw[0] -> o0 :: TestCapture;
         i1 :: TestInject -> [1]rw[1] -> o1 :: TestCapture;",
    );
    let icmp = || ip(INSIDE, SERVER, 1, vec![8, 0, 0, 0, 0, 0, 0, 0], None);
    inject(&mut r, "i0", icmp());
    inject(&mut r, "i1", icmp());
    inject(&mut r, "i0", tcp(INSIDE, 9, SERVER, 80, 0x02, b""));
    inject(&mut r, "i0", Packet::from_bytes(&[0x45, 0, 0]));
    let kept = taken(&mut r, "o0");
    assert_eq!(kept.len(), 1);
    assert_eq!(
        flow_checked(&kept[0]),
        (INSIDE.into(), 9, SERVER.into(), 80)
    );
    // The pass input's ICMP packet goes to its output unchanged.
    assert_eq!(taken(&mut r, "o1").len(), 1);
    let d = read(&mut r, "rw.drop_details");
    assert!(d.contains("1 not rewritable"), "{d}");
    assert!(d.contains("1 bad IP header"), "{d}");
    assert_conserved(&mut r, 4, 2);
}

#[test]
fn named_patterns_and_pattern_handlers() {
    let mut r = router(&format!(
        "IPRewriterPatterns(nat 198.18.0.1 2000-2001# - -);
         rw :: IPRewriter(pattern nat 0 1, drop); {NAPT}"
    ));
    inject(&mut r, "i0", tcp(INSIDE, 1, SERVER, 80, 0x02, b""));
    assert_eq!(flow_checked(&taken(&mut r, "o0")[0]).1, 2000);
    assert_eq!(read(&mut r, "rw.pattern0"), "198.18.0.1 2000-2001 - - [1]");
    r.write_path("rw.pattern0", "pattern 198.18.0.9 3000 - - 0 1")
        .unwrap();
    assert_eq!(read(&mut r, "rw.table_size"), "0");
    inject(&mut r, "i0", tcp(INSIDE, 1, SERVER, 80, 0x02, b""));
    let p = &taken(&mut r, "o0")[0];
    assert_eq!(
        flow_checked(p),
        ([198, 18, 0, 9].into(), 3000, SERVER.into(), 80)
    );
    let e = config_error("rw :: IPRewriter(pattern nope 0 0); Idle -> rw -> Discard");
    assert!(e.contains("no such pattern 'nope'"), "{e}");
}

#[test]
fn bad_input_specs_are_reported_per_input() {
    let e = config_error(
        "rw :: IPRewriter(pattern 198.18.0.1 1x - - 0 1, pattern 198.18.0.1 0-255 - - 0 1,
         pattern 198.18.0.1 456-19 - - 0 1, keep 0 2);
         Idle -> [0]rw; Idle -> [1]rw; Idle -> [2]rw; Idle -> [3]rw; rw[0] -> Discard; rw[1] -> Discard;",
    );
    assert!(e.contains("input spec 0: bad source port"), "{e}");
    assert!(!e.contains("input spec 1"), "{e}");
    assert!(e.contains("input spec 2: bad source port"), "{e}");
    assert!(e.contains("input spec 3: output port out of range"), "{e}");
    let e = config_error("rw :: IPRewriter(drop, drop); Idle -> rw -> Discard");
    assert!(e.contains("need 1 arguments, one per input port"), "{e}");
}

#[test]
fn address_rewriters_rewrite_addresses_only() {
    let mut r = napt("IPAddrRewriter", "198.18.0.1-198.18.0.2# -", "");
    inject(&mut r, "i0", tcp(INSIDE, 5000, SERVER, 80, 0x02, b""));
    inject(&mut r, "i0", udp([198, 19, 0, 3], 7, SERVER, 53, true));
    let out = taken(&mut r, "o0");
    assert_eq!(flow_checked(&out[0]), (PUBLIC, 5000, SERVER.into(), 80));
    assert_eq!(
        flow_checked(&out[1]),
        ([198, 18, 0, 2].into(), 7, SERVER.into(), 53)
    );
    inject(
        &mut r,
        "i1",
        tcp(SERVER, 80, [198, 18, 0, 2], 99, 0x10, b""),
    );
    let back = taken(&mut r, "o1");
    assert_eq!(
        flow_checked(&back[0]),
        (SERVER.into(), 80, [198, 19, 0, 3].into(), 99)
    );
    assert!(read(&mut r, "rw.table").contains("198.19.0.2 => 198.18.0.1 [*0 1] i0 exp"));

    let mut r = napt("IPAddrPairRewriter", "198.18.0.1 -", "");
    inject(&mut r, "i0", udp(INSIDE, 7, SERVER, 53, true));
    assert_eq!(
        flow_checked(&taken(&mut r, "o0")[0]),
        (PUBLIC, 7, SERVER.into(), 53)
    );
    inject(&mut r, "i1", udp(SERVER, 53, PUBLIC.octets(), 7, true));
    assert_eq!(
        flow_checked(&taken(&mut r, "o1")[0]),
        (SERVER.into(), 53, INSIDE.into(), 7)
    );
    assert!(read(&mut r, "rw.table")
        .contains("(198.19.0.2, 198.19.1.1) => (198.18.0.1, 198.19.1.1) [*0 1] i0 exp"));
    assert_conserved(&mut r, 2, 2);
}

#[test]
fn shared_capacity_spans_rewriters() {
    let mut r = router(
        "a :: TCPRewriter(pattern 198.18.0.1 1024-65535# - - 0 0, MAPPING_CAPACITY b, GUARANTEE 0);
         b :: TCPRewriter(pattern 198.18.0.2 1024-65535# - - 0 0, MAPPING_CAPACITY 1, GUARANTEE 0);
         ia :: TestInject -> a -> oa :: TestCapture; ib :: TestInject -> b -> ob :: TestCapture;",
    );
    inject(&mut r, "ia", tcp(INSIDE, 1, SERVER, 80, 0x02, b""));
    inject(&mut r, "ib", tcp(INSIDE, 2, SERVER, 80, 0x02, b""));
    assert_eq!(taken(&mut r, "oa").len(), 1);
    assert_eq!(taken(&mut r, "ob").len(), 1);
    // b's flow (expiring later) pushed a's out of the shared table.
    assert_eq!(read(&mut r, "a.table_size"), "0");
    assert_eq!(read(&mut r, "b.table_size"), "1");
    assert_eq!(read(&mut r, "a.size"), "1");
}

/// An ICMP echo (`echo`) or echo reply with identifier `ident`, sequence 1 and a payload.
fn ping(src: [u8; 4], dst: [u8; 4], echo: bool, ident: u16) -> Packet {
    let mut m = vec![if echo { 8 } else { 0 }, 0, 0, 0];
    m.extend_from_slice(&ident.to_be_bytes());
    m.extend_from_slice(&[0, 1, 0xab, 0xcd]);
    let c = checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip(src, dst, 1, m, None)
}

/// Source, destination, ICMP type and identifier of an ICMP packet, after checking its IP and
/// ICMP checksums by full recomputation.
fn ping_checked(p: &Packet) -> (Ipv4Addr, Ipv4Addr, u8, u16) {
    let ip = Ipv4Packet::new_checked(p.data()).unwrap();
    assert_eq!(checksum(&p.data()[..20]), 0, "IP checksum");
    assert_eq!(ip.protocol(), 1);
    let m = ip.payload();
    assert_eq!(checksum(m), 0, "ICMP checksum");
    (ip.src(), ip.dst(), m[0], u16::from_be_bytes([m[4], m[5]]))
}

/// An ICMP error (type 3, code 3: port unreachable) from `from` to the source of `quoted`,
/// quoting all of it.
fn unreachable(from: [u8; 4], quoted: &Packet) -> Packet {
    let q = Ipv4Packet::new_checked(quoted.data()).unwrap();
    let mut m = vec![3, 3, 0, 0, 0, 0, 0, 0];
    m.extend_from_slice(quoted.data());
    let c = checksum(&m);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip(from, q.src().octets(), 1, m, None)
}

/// The outer destination and the quoted flow (`flow_checked` of the quoted datagram, or
/// `ping_checked`'s addresses and identifier) of an ICMP error, after checking the outer IP
/// and ICMP checksums by full recomputation.
fn error_checked(p: &Packet) -> (Ipv4Addr, Packet) {
    let ip = Ipv4Packet::new_checked(p.data()).unwrap();
    assert_eq!(checksum(&p.data()[..20]), 0, "outer IP checksum");
    let m = ip.payload();
    assert_eq!(checksum(m), 0, "ICMP checksum");
    assert_eq!(m[0], 3);
    (ip.dst(), Packet::from_bytes(&m[8..]))
}

const ROUTER: [u8; 4] = [198, 19, 2, 1];

#[test]
fn icmp_pings_are_rewritten_both_ways_and_their_errors_translated() {
    let mut r = router(&format!(
        "rw :: ICMPPingRewriter(pattern 198.18.0.1 - 0-65535# 0 1, drop); {NAPT}
         ie :: TestInject -> icr :: ICMPRewriter(rw) -> oe :: TestCapture;"
    ));
    inject(&mut r, "i0", ping(INSIDE, SERVER, true, 77));
    inject(&mut r, "i0", ping([198, 19, 0, 3], SERVER, true, 77));
    inject(&mut r, "i0", ping(INSIDE, SERVER, true, 77));
    let out = taken(&mut r, "o0");
    let idents: Vec<_> = out.iter().map(ping_checked).collect();
    let server = Ipv4Addr::from(SERVER);
    assert_eq!(
        idents,
        [
            (PUBLIC, server, 8, 0),
            (PUBLIC, server, 8, 1),
            (PUBLIC, server, 8, 0)
        ]
    );
    assert_eq!(out[0].dst_ip_anno(), server);

    // Replies get the original identifier and destination back.
    inject(&mut r, "i1", ping(SERVER, PUBLIC.octets(), false, 1));
    inject(&mut r, "i1", ping(SERVER, PUBLIC.octets(), false, 0));
    let back: Vec<_> = taken(&mut r, "o1").iter().map(ping_checked).collect();
    assert_eq!(
        back,
        [
            (server, [198, 19, 0, 3].into(), 0, 77),
            (server, INSIDE.into(), 0, 77)
        ]
    );

    // Echo replies without a mapping, and other ICMP messages, are dropped and counted.
    inject(&mut r, "i1", ping(SERVER, PUBLIC.octets(), false, 9));
    inject(
        &mut r,
        "i0",
        ip(INSIDE, SERVER, 1, vec![13, 0, 0, 0, 0, 0, 0, 0], None),
    );
    let d = read(&mut r, "rw.drop_details");
    assert!(d.contains("1 echo reply without a mapping"), "{d}");
    assert!(d.contains("1 not rewritable"), "{d}");
    let table = read(&mut r, "rw.table");
    for entry in [
        "(198.19.0.2, 198.19.1.1, 77) => (198.18.0.1, 198.19.1.1, 0) [*0 1] i0",
        "(198.19.1.1, 198.18.0.1, 0) => (198.19.1.1, 198.19.0.2, 77) [0 *1] i0",
    ] {
        assert!(table.contains(entry), "{table}");
    }

    // An error about the rewritten echo is about the original one after ICMPRewriter.
    inject(&mut r, "ie", unreachable(ROUTER, &out[0]));
    let translated = taken(&mut r, "oe");
    let (dst, quoted) = error_checked(&translated[0]);
    assert_eq!(dst, Ipv4Addr::from(INSIDE));
    assert_eq!(ping_checked(&quoted), (INSIDE.into(), server, 8, 77));
    assert_conserved(&mut r, 8, 6);
}

#[test]
fn icmp_errors_about_rewritten_udp_flows_are_translated_back() {
    let mut r = router(&format!(
        "rw :: IPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop); {NAPT}
         ie :: TestInject -> icr :: ICMPRewriter(rw) -> oe :: TestCapture;
         icr[1] -> other :: TestCapture;"
    ));
    inject(&mut r, "i0", udp(INSIDE, 5000, SERVER, 53, true));
    inject(&mut r, "i0", tcp(INSIDE, 5000, SERVER, 80, 0x02, b"data"));
    let out = taken(&mut r, "o0");
    assert_eq!(flow_checked(&out[0]), (PUBLIC, 1024, SERVER.into(), 53));
    assert_eq!(flow_checked(&out[1]), (PUBLIC, 1025, SERVER.into(), 80));

    for (sent, original) in [
        (&out[0], (INSIDE.into(), 5000, SERVER.into(), 53)),
        (&out[1], (INSIDE.into(), 5000, SERVER.into(), 80)),
    ] {
        inject(&mut r, "ie", unreachable(ROUTER, sent));
        let translated = taken(&mut r, "oe");
        assert_eq!(translated.len(), 1);
        let (dst, quoted) = error_checked(&translated[0]);
        assert_eq!(dst, Ipv4Addr::from(INSIDE));
        assert_eq!(translated[0].dst_ip_anno(), Ipv4Addr::from(INSIDE));
        // The quoted datagram: its IP and UDP or TCP checksums are valid again.
        assert_eq!(flow_checked(&quoted), original);
    }

    // Errors about no flow, and ICMP messages that are not errors, leave by output 1
    // unchanged; packets that are not ICMP are dropped.
    let stranger = udp(PUBLIC.octets(), 4000, SERVER, 53, true);
    let unmatched = unreachable(ROUTER, &stranger);
    inject(&mut r, "ie", Packet::from_bytes(unmatched.data()));
    inject(&mut r, "ie", ping(SERVER, INSIDE, true, 1));
    inject(&mut r, "ie", udp(SERVER, 53, PUBLIC.octets(), 1024, true));
    let others = taken(&mut r, "other");
    assert_eq!(others.len(), 2);
    assert_eq!(others[0].data(), unmatched.data());
    assert!(read(&mut r, "icr.drop_details").contains("1 not ICMP"));
    assert_conserved(&mut r, 7, 6);

    // Without output 1 they are dropped and counted.
    let mut r = router(&format!(
        "rw :: UDPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop); {NAPT}
         ie :: TestInject -> icr :: ICMPRewriter(rw) -> oe :: TestCapture;"
    ));
    inject(&mut r, "ie", unreachable(ROUTER, &stranger));
    assert!(read(&mut r, "icr.drop_details").contains("1 not an error about a mapped flow"));
    assert_conserved(&mut r, 1, 0);
}

#[test]
fn icmp_rewriter_arguments_are_checked() {
    let e = config_error("Idle -> ICMPRewriter(nope) -> Discard");
    assert!(e.contains("nope not an IP rewriter"), "{e}");
    let e = config_error("d :: Discard; Idle -> ICMPRewriter(d) -> d");
    assert!(e.contains("d not an IP rewriter"), "{e}");
    let e = config_error(
        "rw :: IPRewriter(drop); Idle -> rw -> Discard; rw[1] -> Discard;
         Idle -> ICMPRewriter(rw:0) -> Discard",
    );
    assert!(
        e.contains("rw:0 port offset requires more than 1 output"),
        "{e}"
    );
}

#[test]
fn round_robin_mapper_gives_new_flows_its_patterns_in_turn() {
    let mut r = router(&format!(
        "rr :: RoundRobinIPMapper(198.18.0.1 - - - 0 1, 198.18.0.2 - - - 0 1);
         rw :: IPRewriter(rr, drop); {NAPT}"
    ));
    for sport in [1, 2, 3, 1] {
        inject(&mut r, "i0", udp(INSIDE, sport, SERVER, 53, true));
    }
    let sources: Vec<_> = taken(&mut r, "o0")
        .iter()
        .map(|p| flow_checked(p).0)
        .collect();
    let (a, b) = (PUBLIC, Ipv4Addr::new(198, 18, 0, 2));
    assert_eq!(sources, [a, b, a, a]);
    inject(&mut r, "i1", udp(SERVER, 53, [198, 18, 0, 2], 2, true));
    assert_eq!(
        flow_checked(&taken(&mut r, "o1")[0]),
        (SERVER.into(), 53, INSIDE.into(), 2)
    );
    assert_eq!(read(&mut r, "rw.patterns"), "<mapper> [3]\n<drop>");
    assert_conserved(&mut r, 5, 5);

    let e = config_error(
        "rr :: RoundRobinIPMapper(198.18.0.1 - - - 0 2, 198.18.0.2 - - - 0 1);
         rw :: IPRewriter(rr); Idle -> rw -> Discard; rw[1] -> Discard",
    );
    assert!(
        e.contains("output port out of range in rr pattern 0"),
        "{e}"
    );
    let e = config_error("d :: Idle; rw :: IPRewriter(d); d -> rw -> Discard");
    assert!(e.contains("element is not an IPMapper"), "{e}");
}

#[test]
fn source_hash_mapper_picks_the_servers_click_picks() {
    let mut r = router(&format!(
        "sh :: SourceIPHashMapper(8 1, - - 198.19.0.10 - 0 1 0, - - 198.19.0.11 - 0 1 1,
             - - 198.19.0.12 - 0 1 2);
         rw :: UDPRewriter(sh, drop); {NAPT}"
    ));
    // The servers Click 2.1's SourceIPHashMapper(8 1, ...) gives these sources.
    let sources = [
        ([198, 18, 0, 1], 10),
        ([198, 18, 0, 7], 11),
        ([198, 19, 3, 250], 12),
        ([198, 18, 77, 77], 10),
        ([198, 19, 200, 7], 11),
    ];
    for (src, _) in sources {
        inject(&mut r, "i0", udp(src, 7, SERVER, 53, true));
    }
    let got: Vec<_> = taken(&mut r, "o0")
        .iter()
        .map(|p| flow_checked(p).2.octets()[3])
        .collect();
    let want: Vec<_> = sources.iter().map(|&(_, s)| s).collect();
    assert_eq!(got, want);
    assert_conserved(&mut r, 5, 5);
}

/// A TCP segment with sequence and acknowledgement numbers, options (a multiple of 4 bytes)
/// and payload, ACK flag set.
fn tcp_seg(
    src: [u8; 4],
    sport: u16,
    dst: [u8; 4],
    dport: u16,
    (seq, ack): (u32, u32),
    opts: &[u8],
    payload: &[u8],
) -> Packet {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&seq.to_be_bytes());
    t.extend_from_slice(&ack.to_be_bytes());
    let off = ((20 + opts.len()) / 4) as u8;
    t.extend_from_slice(&[off << 4, 0x10, 0x20, 0, 0, 0, 0, 0]);
    t.extend_from_slice(opts);
    t.extend_from_slice(payload);
    ip(src, dst, 6, t, Some(16))
}

/// NOP, NOP and a SACK option of one block.
fn sack(left: u32, right: u32) -> Vec<u8> {
    let mut o = vec![1, 1, 5, 10];
    o.extend_from_slice(&left.to_be_bytes());
    o.extend_from_slice(&right.to_be_bytes());
    o
}

/// A TCP packet's flow, sequence and acknowledgement numbers, options and payload.
type Segment = ((Ipv4Addr, u16, Ipv4Addr, u16), u32, u32, Vec<u8>, Vec<u8>);

/// A checked TCP packet's flow, sequence and acknowledgement numbers, options and payload.
fn seg_checked(p: &Packet) -> Segment {
    let flow = flow_checked(p);
    let ip = Ipv4Packet::new_checked(p.data()).unwrap();
    assert_eq!(usize::from(ip.total_len()), p.len(), "IP length");
    let t = TcpPacket::new_checked(ip.payload()).unwrap();
    (
        flow,
        t.seq(),
        t.ack(),
        t.options().to_vec(),
        t.payload().to_vec(),
    )
}

#[test]
fn ftp_port_commands_are_mapped_and_sequence_numbers_translated() {
    let mut r = router(
        "rw :: TCPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop);
         i0 :: TestInject -> ftp :: FTPPortMapper(rw, rw, 0) -> [0]rw[0] -> o0 :: TestCapture;
         i1 :: TestInject -> [1]rw[1] -> o1 :: TestCapture;",
    );
    let server = Ipv4Addr::from(SERVER);
    let control = (PUBLIC, 1024, server, 21);
    let mut to_server = vec![tcp_seg(
        INSIDE,
        40000,
        SERVER,
        21,
        (100, 7),
        &[],
        b"USER x\r\n",
    )];
    // 198.19.0.2 port 40000 becomes 198.18.0.1 port 1025: 3 bytes shorter.
    let port = b"PORT 198,19,0,2,156,64\r\n";
    to_server.push(tcp_seg(INSIDE, 40000, SERVER, 21, (108, 7), &[], port));
    to_server.push(tcp_seg(
        INSIDE,
        40000,
        SERVER,
        21,
        (132, 7),
        &[],
        b"NOOP\r\n",
    ));
    for p in to_server {
        inject(&mut r, "i0", p);
    }
    let out = taken(&mut r, "o0");
    assert_eq!(out.len(), 3);
    let segs: Vec<_> = out.iter().map(seg_checked).collect();
    assert_eq!(segs[0], (control, 100, 7, vec![], b"USER x\r\n".to_vec()));
    assert_eq!(
        segs[1],
        (control, 108, 7, vec![], b"PORT 198,18,0,1,4,1\r\n".to_vec())
    );
    // After the PORT command, sequence numbers are 3 lower.
    assert_eq!(segs[2], (control, 129, 7, vec![], b"NOOP\r\n".to_vec()));
    assert_eq!(read(&mut r, "ftp.mapped"), "1");
    let table = read(&mut r, "rw.table");
    assert!(
        table.contains("(198.19.0.2, 40000, 198.19.1.1, 21) => (198.18.0.1, 1024, 198.19.1.1, 21) seq -3 [*0 1]"),
        "{table}"
    );

    // The server's acknowledgements and SACK blocks are moved back by 3 past the command.
    let public = PUBLIC.octets();
    let mut to_client = vec![tcp_seg(
        SERVER,
        21,
        public,
        1024,
        (7, 135),
        &sack(108, 135),
        b"200\r\n",
    )];
    to_client.push(tcp_seg(
        SERVER,
        21,
        public,
        1024,
        (12, 120),
        &sack(100, 129),
        b"",
    ));
    // The data connection the command announced was mapped: the server connects from port 20.
    to_client.push(tcp_seg(SERVER, 20, public, 1025, (900, 0), &[], b"data"));
    for p in to_client {
        inject(&mut r, "i1", p);
    }
    let back = taken(&mut r, "o1");
    assert_eq!(back.len(), 3);
    let segs: Vec<_> = back.iter().map(seg_checked).collect();
    let inside = Ipv4Addr::from(INSIDE);
    let client = (server, 21, inside, 40000);
    assert_eq!(
        segs[0],
        (client, 7, 138, sack(108, 138), b"200\r\n".to_vec())
    );
    assert_eq!(segs[1], (client, 12, 120, sack(100, 132), vec![]));
    assert_eq!(
        segs[2],
        (
            (server, 20, inside, 40000),
            900,
            0,
            vec![],
            b"data".to_vec()
        )
    );
    assert_eq!(read(&mut r, "rw.nmappings"), "2");
    assert_conserved(&mut r, 6, 6);
}

#[test]
fn non_port_payloads_and_unmapped_control_flows_pass_unchanged() {
    let mut r = router(
        "Idle -> rw :: TCPRewriter(pattern 198.18.0.1 1024-65535# - - 0 0) -> Discard;
         i0 :: TestInject -> ftp :: FTPPortMapper(rw, rw, 0) -> c :: TestCapture;",
    );
    // No control mapping yet: the PORT command is left alone, and so is a malformed one.
    let payloads: [&[u8]; 2] = [
        b"PORT 198,19,0,2,156,64\r\n",
        b"PORT 198,19,0,2,156,999\r\n",
    ];
    let mut sent: Vec<Packet> = payloads
        .iter()
        .map(|&pl| tcp_seg(INSIDE, 40000, SERVER, 21, (1, 0), &[], pl))
        .collect();
    for p in &mut sent {
        inject(&mut r, "i0", p.clone_packet());
    }
    let out = taken(&mut r, "c");
    assert_eq!(out.len(), 2);
    for (o, p) in out.iter().zip(&sent) {
        assert_eq!(o.data(), p.data());
    }
    assert_eq!(read(&mut r, "ftp.mapped"), "0");
    assert_conserved(&mut r, 2, 2);
}

#[test]
fn ftp_port_mapper_arguments_are_checked() {
    assert!(config_error(
        "i :: Idle -> FTPPortMapper(rw, nosuch, 0) -> rw :: TCPRewriter(pass 0) -> Discard"
    )
    .contains("no element named 'nosuch'"));
    assert!(config_error(
        "i :: Idle -> FTPPortMapper(rw, rw, 1) -> rw :: TCPRewriter(pass 0) -> Discard"
    )
    .contains("DATA_REWRITER_INPUT out of range"));
    assert!(config_error(
        "i :: Idle -> FTPPortMapper(rw, rw, 0) -> rw :: UDPRewriter(pass 0) -> Discard"
    )
    .contains("is not a TCPRewriter"));
}

/// The source of FLOWS distinct UDP flows from `src` (both ports grow after every packet),
/// pulled by its Unqueue `name` into `rw`.
fn flow_source(name: &str, src: &str, flows: u64) -> String {
    format!(
        "{name}src :: FastUDPSource(0, {flows}, 60, 02:00:00:00:00:01, {src}, 1000,
             02:00:00:00:00:02, 198.19.0.2, 2000, true, 1)
             -> {name} :: Unqueue -> Strip(14) -> CheckIPHeader -> rw;"
    )
}

/// An IPRewriter reached from two threads at once keeps one flow table: each of the many new
/// flows both threads bring gets exactly one mapping, replies injected afterwards find them,
/// and every packet leaves or is counted as a drop.
#[test]
fn a_rewriter_shared_by_two_threads_maps_every_flow_once() {
    const FLOWS: u64 = 3000;
    let mut r = Kit::new().threads(2).router(&format!(
        "rw :: IPRewriter(pattern 198.18.200.1 1024-65535 - - 0 1, drop, REAP_INTERVAL 0);
         {}{}
         rw[0] -> fwd :: Counter -> Discard;
         rw[1] -> back :: Counter -> Discard;
         replies :: TestInject -> [1]rw;
         StaticThreadSched(a 0, b 1);",
        flow_source("a", "198.18.0.1", FLOWS),
        flow_source("b", "198.18.0.2", FLOWS),
    ));
    r.run_until_idle();
    let tasks = task_threads(&mut r);
    assert_eq!((tasks.get("a"), tasks.get("b")), (Some(&0), Some(&1)));
    assert_eq!(num(&mut r, "rw.nmappings"), 2 * FLOWS);
    let into = num(&mut r, "asrc.count") + num(&mut r, "bsrc.count");
    assert_eq!(into, 2 * FLOWS);
    assert_eq!(into, num(&mut r, "fwd.count") + drops(&mut r));
    assert_eq!(drops(&mut r), 0, "{}", read(&mut r, "rw.drop_details"));
    // The reply entries, each line `(REPLY) => (ORIGINAL) [0 *1] ...` (no reaping, so that
    // the run ends when the sources do).
    let table = read(&mut r, "rw.udp_table");
    let mut replies = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in table.lines().filter(|l| l.contains("*1]")) {
        let ids: Vec<&str> = line.split(['(', ')']).filter(|s| s.contains(',')).collect();
        let field = |id: &str, i: usize| id.split(", ").nth(i).unwrap().to_string();
        let (from, to) = (ids[0], ids[1]);
        assert_eq!(field(from, 2), "198.18.200.1");
        assert!(seen.insert(from), "reply key given twice: {line}");
        let addr = |s: String| s.parse::<Ipv4Addr>().unwrap().octets();
        let port = |s: String| s.parse::<u16>().unwrap();
        assert!(["198.18.0.1", "198.18.0.2"].contains(&field(to, 2).as_str()));
        replies.push(udp(
            addr(field(from, 0)),
            port(field(from, 1)),
            addr(field(from, 2)),
            port(field(from, 3)),
            true,
        ));
    }
    assert_eq!(replies.len() as u64, 2 * FLOWS);
    for p in replies {
        inject(&mut r, "replies", p);
    }
    assert_eq!(num(&mut r, "back.count"), 2 * FLOWS);
    assert_eq!(num(&mut r, "rw.nmappings"), 2 * FLOWS);
    assert_eq!(drops(&mut r), 0, "{}", read(&mut r, "rw.drop_details"));
    // The thread-safe form takes writes that carry a value, as the element does.
    r.write_path("rw.capacity", "9000").unwrap();
    assert_eq!(num(&mut r, "rw.capacity"), 9000);
    let before = read(&mut r, "rw.pattern1");
    r.write_path("rw.pattern1", "pass 1").unwrap();
    let after = read(&mut r, "rw.pattern1");
    assert!(
        before != after && after.contains("nochange"),
        "{before} -> {after}"
    );
    assert!(r.write_path("rw.capacity", "lots").is_err());
}

/// Hot swap: the new rewriter of the same name takes the old one's mappings (replies still
/// find their flow, a known flow keeps its port), with its own capacity; one of another
/// shape starts afresh.
#[test]
fn hot_swap_keeps_the_mappings() {
    let conf = |capacity: u32, extra: &str| {
        format!(
            "rw :: IPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop{extra},
                              MAPPING_CAPACITY {capacity}, REAP_INTERVAL 0); {NAPT}"
        )
    };
    let mut r = Kit::sim().hot_swap().router(&conf(100, ""));
    for sport in [5000, 5001, 5002] {
        inject(&mut r, "i0", udp(INSIDE, sport, SERVER, 53, true));
    }
    assert_eq!(taken(&mut r, "o0").len(), 3);
    r.write_path("hotconfig", &conf(2, "")).unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "rw.size"), "2", "the new capacity applies");
    inject(&mut r, "i1", udp(SERVER, 53, PUBLIC.octets(), 1026, true));
    let back = taken(&mut r, "o1");
    assert_eq!(
        flow_checked(&back[0]),
        (SERVER.into(), 53, INSIDE.into(), 5002)
    );
    inject(&mut r, "i0", udp(INSIDE, 5001, SERVER, 53, true));
    assert_eq!(
        flow_checked(&taken(&mut r, "o0")[0]).1,
        1025,
        "same port as before"
    );
    // Three inputs now: another shape, a fresh table.
    let wider = format!("{}\n i2 :: TestInject -> [2]rw;", conf(100, ", drop"));
    r.write_path("hotconfig", &wider).unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "rw.size"), "0");
}

/// ICMPRewriter and FTPPortMapper reached from two threads: each thread has its copy, both
/// consult the one shared rewriter table, and their counts add up.
#[test]
fn icmp_rewriter_and_ftp_port_mapper_serve_two_threads() {
    const N: u64 = 500;
    // An error from the server about a flow from the public address (none is mapped).
    let quoted = udp(PUBLIC.octets(), 1024, SERVER, 53, true);
    let mut icmp = vec![11, 0, 0, 0, 0, 0, 0, 0];
    icmp.extend_from_slice(&quoted.data()[..28]);
    let err = ip(SERVER, PUBLIC.octets(), 1, icmp, Some(2));
    let hex: String = err.data().iter().map(|b| format!("{b:02x}")).collect();
    let port = tcp(INSIDE, 4000, SERVER, 21, 0x18, b"PORT 198,19,0,2,39,16\r\n");
    let port_hex: String = port.data().iter().map(|b| format!("{b:02x}")).collect();
    let source = |name: &str, data: &str| {
        format!("{name} :: InfiniteSource(DATA \"\\<{data}>\", LIMIT {N}) -> MarkIPHeader")
    };
    let mut r = Kit::new().threads(2).router(&format!(
        "rw :: TCPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, REAP_INTERVAL 0);
         {} -> icmp :: ICMPRewriter(rw) -> Discard;
         {} -> icmp;
         {} -> ftp :: FTPPortMapper(rw, rw, 0) -> rw;
         {} -> ftp;
         rw[0] -> Discard; rw[1] -> Discard;
         StaticThreadSched(e0 0, e1 1, f0 0, f1 1);",
        source("e0", &hex),
        source("e1", &hex),
        source("f0", &port_hex),
        source("f1", &port_hex),
    ));
    r.run_until_idle();
    let tasks = task_threads(&mut r);
    assert_eq!((tasks.get("e0"), tasks.get("e1")), (Some(&0), Some(&1)));
    assert_eq!(
        num(&mut r, "icmp.drops"),
        2 * N,
        "unmapped errors, counted on both threads"
    );
    // The control flow is made by the first PORT packet to reach the rewriter; every later
    // PORT command is rewritten (the first of each thread may come before the flow exists).
    let mapped = num(&mut r, "ftp.mapped");
    assert!((2 * N - 2..2 * N).contains(&mapped), "{mapped}");
    assert_eq!(
        num(&mut r, "rw.nmappings"),
        2,
        "the control flow and one data flow"
    );
}

/// A rewriter's flow expiry is housekeeping: a router whose source is done is idle although
/// the rewriter's reap timer stays scheduled (under simulated time too, where waiting for it
/// would jump the clock forever).
#[test]
fn run_until_idle_returns_with_a_rewriter() {
    for kit in [Kit::sim(), Kit::new()] {
        let mut r = kit.router(
            "InfiniteSource(LIMIT 10, LENGTH 20) -> UDPIPEncap(198.18.1.2, 5000, 198.18.2.2, 80) \
             -> rw :: IPRewriter(pattern 198.18.0.1 1024-65535 - - 0 0) -> d :: Discard;",
        );
        r.run_until_idle();
        assert_eq!(read(&mut r, "d.count"), "10");
        assert_eq!(read(&mut r, "rw.size"), "1");
    }
}
