//! Behaviour tests of the IPv4 router elements (ip/, icmp/, ethernet/) through real
//! configurations: packets are injected into a router and captured at its sinks.

mod ip_common;

use std::net::Ipv4Addr;

use ip_common::*;
use sluice_core::{Packet, PacketType};
use sluice_testkit::{conf_file, config_error, fuzz_seeds, inject, read, router, taken, TempDir};
use sluice_wire::checksum::checksum;

#[test]
fn check_ip_header_passes_trims_and_counts_drops() {
    let mut r = router(
        "i :: TestInject -> c :: CheckIPHeader(198.18.0.255) -> ok :: TestCapture; c[1] -> bad :: TestCapture;
         i2 :: TestInject -> c2 :: CheckIPHeader -> ok2 :: TestCapture;",
    );
    let good = udp(A, B, 64, 10);
    let mut padded = good.clone();
    padded.extend_from_slice(&[0xee; 12]);
    inject(&mut r, "i", Packet::from_bytes(&padded));
    let mut badsum = good.clone();
    badsum[10] ^= 0xff;
    inject(&mut r, "i", Packet::from_bytes(&badsum));
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([198, 18, 0, 255], B, 64, 4)),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([255, 255, 255, 255], B, 64, 4)),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([224, 0, 0, 5], B, 64, 4)),
    );
    inject(&mut r, "i", Packet::from_bytes(&good[..good.len() - 3]));
    inject(&mut r, "i", Packet::from_bytes(&good[..12]));
    let ok = taken(&mut r, "ok");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].data(), &good[..]);
    assert_eq!(ok[0].network_offset(), Some(0));
    assert_eq!(taken(&mut r, "bad").len(), 6);
    assert_eq!(read(&mut r, "c.count"), "1");
    assert_eq!(read(&mut r, "c.drops"), "6");
    let d = read(&mut r, "c.drop_details");
    assert!(d.contains("1 bad IP checksum"), "{}", d);
    assert!(d.contains("3 bad source address"), "{}", d);
    assert!(d.contains("1 bad IP length"), "{}", d);
    assert!(d.contains("1 tiny packet"), "{}", d);
    // No output 1: bad packets are dropped, still counted.
    inject(&mut r, "i2", Packet::from_bytes(&badsum));
    assert_eq!(read(&mut r, "c2.drops"), "1");
    assert!(taken(&mut r, "ok2").is_empty());
}

#[test]
fn check_ip_header2_skips_checksum_and_offset_works() {
    let mut r = router("i :: TestInject -> c :: CheckIPHeader2(OFFSET 14) -> ok :: TestCapture");
    let mut f = vec![0u8; 14];
    let mut ip = udp(A, B, 64, 4);
    ip[10] ^= 1;
    f.extend_from_slice(&ip);
    inject(&mut r, "i", Packet::from_bytes(&f));
    let ok = taken(&mut r, "ok");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].network_offset(), Some(14));
}

#[test]
fn interfaces_broadcasts_are_bad_sources() {
    let mut r = router("i :: TestInject -> c :: CheckIPHeader(INTERFACES 198.18.0.1/24 198.19.0.1/16) -> ok :: TestCapture");
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([198, 19, 255, 255], B, 64, 4)),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([198, 18, 0, 255], B, 64, 4)),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp([198, 18, 1, 255], B, 64, 4)),
    );
    assert_eq!(taken(&mut r, "ok").len(), 1);
    assert_eq!(read(&mut r, "c.drops"), "2");
}

#[test]
fn dec_ip_ttl_updates_checksum_and_expires() {
    let mut r = router("i :: TestInject -> MarkIPHeader -> d :: DecIPTTL -> ok :: TestCapture; d[1] -> exp :: TestCapture");
    for ttl in [64u8, 2, 1, 0, 255] {
        inject(&mut r, "i", Packet::from_bytes(&udp(A, B, ttl, 4)));
    }
    let ok = taken(&mut r, "ok");
    let ttls: Vec<u8> = ok.iter().map(|p| p.data()[8]).collect();
    assert_eq!(ttls, vec![63, 1, 254]);
    assert!(ok.iter().all(|p| header_ok(p.data())));
    assert_eq!(taken(&mut r, "exp").len(), 2);
    assert_eq!(read(&mut r, "d.drops"), "2");
}

#[test]
fn get_set_store_ip_address() {
    let mut r = router(
        "i :: TestInject -> GetIPAddress(16) -> o1 :: TestCapture;
         i2 :: TestInject -> SetIPAddress(198.19.9.9) -> StoreIPAddress(dst) -> StoreIPAddress(198.18.7.7, 12) -> o2 :: TestCapture;
         i3 :: TestInject -> g :: GetIPAddress(16) -> o3 :: TestCapture;",
    );
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 4)));
    assert_eq!(taken(&mut r, "o1")[0].dst_ip_anno(), Ipv4Addr::from(B));
    inject(&mut r, "i2", Packet::from_bytes(&udp(A, B, 64, 4)));
    let p = &taken(&mut r, "o2")[0];
    assert_eq!(&p.data()[16..20], &[198, 19, 9, 9]);
    assert_eq!(&p.data()[12..16], &[198, 18, 7, 7]);
    inject(&mut r, "i3", Packet::from_bytes(&[1, 2, 3]));
    assert_eq!(read(&mut r, "g.drops"), "1");
}

#[test]
fn store_ip_address_dst_keeps_checksum_valid() {
    let mut r = router("i :: TestInject -> StoreIPAddress(198.19.1.1, dst) -> o :: TestCapture");
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 4)));
    let p = &taken(&mut r, "o")[0];
    assert!(header_ok(p.data()));
}

#[test]
fn drop_broadcasts_by_packet_type() {
    let mut r = router("i :: TestInject -> d :: DropBroadcasts -> o :: TestCapture");
    for t in [
        PacketType::Host,
        PacketType::Broadcast,
        PacketType::Multicast,
        PacketType::OtherHost,
    ] {
        let mut p = Packet::from_bytes(&udp(A, B, 64, 4));
        p.anno_mut().packet_type = t;
        inject(&mut r, "i", p);
    }
    assert_eq!(taken(&mut r, "o").len(), 2);
    assert_eq!(read(&mut r, "d.drops"), "2");
}

#[test]
fn ip_gw_options_record_route_and_bad_option() {
    let mut r = router("i :: TestInject -> MarkIPHeader -> g :: IPGWOptions(198.19.0.1) -> o :: TestCapture; g[1] -> e :: ICMPError(198.19.0.1, parameterproblem) -> err :: TestCapture");
    // RR with 2 slots + EOL pad, then timestamp flag 0 with 1 slot.
    let opts = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 68, 8, 5, 0, 0, 0, 0, 0, 0];
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&ip_packet(A, B, 64, 17, &opts, &[0; 8])),
    );
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1);
    let d = o[0].data();
    assert!(header_ok(d));
    assert_eq!(&d[23..27], &[198, 19, 0, 1]);
    assert_eq!(d[22], 8);
    assert_eq!(d[33], 9);
    // Bad RR pointer (2) at offset 22.
    let bad = [7, 7, 2, 0, 0, 0, 0, 0];
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&ip_packet(A, B, 64, 17, &bad, &[0; 8])),
    );
    assert_eq!(read(&mut r, "g.drops"), "1");
    let err = taken(&mut r, "err");
    assert_eq!(err.len(), 1);
    let e = err[0].data();
    assert_eq!((e[20], e[21], e[24]), (12, 0, 22));
    assert_eq!(&e[16..20], &A);
    assert!(err[0].anno().fix_ip_src);
}

#[test]
fn fragmenter_splits_and_copies_options() {
    let mut r = router("i :: TestInject -> MarkIPHeader -> f :: IPFragmenter(300) -> o :: TestCapture; f[1] -> big :: TestCapture");
    // LSRR (copied) + RR (not copied): 8 + 8 bytes of options.
    let opts = [131, 7, 4, 198, 19, 0, 9, 1, 7, 7, 4, 0, 0, 0, 0, 0];
    let payload: Vec<u8> = (0..1000).map(|i| (i * 7) as u8).collect();
    let orig = ip_packet(A, B, 64, 17, &opts, &payload);
    inject(&mut r, "i", Packet::from_bytes(&orig));
    let frags = taken(&mut r, "o");
    assert!(frags.len() > 3);
    let mut data = Vec::new();
    for (k, f) in frags.iter().enumerate() {
        let d = f.data();
        assert!(d.len() <= 300);
        assert!(header_ok(d));
        let hl = ((d[0] & 0xf) as usize) * 4;
        let ff = u16::from_be_bytes([d[6], d[7]]);
        let off = (ff & 0x1fff) as usize * 8;
        assert_eq!(off, data.len());
        assert_eq!(ff & 0x2000 != 0, k + 1 < frags.len());
        if k == 0 {
            assert_eq!(hl, 36);
        } else {
            assert_eq!(hl, 28);
            assert_eq!(d[20], 131);
        }
        data.extend_from_slice(&d[hl..]);
    }
    assert_eq!(data, payload);
    assert_eq!(read(&mut r, "f.fragments"), frags.len().to_string());
    // DF: to output 1 with the MTU annotation.
    let mut df = udp(A, B, 64, 400);
    df[6] = 0x40;
    df[10] = 0;
    df[11] = 0;
    let c = checksum(&df[..20]);
    df[10..12].copy_from_slice(&c.to_be_bytes());
    inject(&mut r, "i", Packet::from_bytes(&df));
    let big = taken(&mut r, "big");
    assert_eq!(big.len(), 1);
    assert_eq!(read(&mut r, "f.drops"), "1");
}

#[test]
fn icmp_errors_quote_and_follow_rfc1812_rules() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> e :: ICMPError(198.18.0.1, timeexceeded) -> o :: TestCapture; e[1] -> no :: TestCapture;
         i2 :: TestInject -> MarkIPHeader -> f :: IPFragmenter(200) -> Discard; f[1] -> nf :: ICMPError(198.18.0.1, unreachable, needfrag, PMTU 200) -> o2 :: TestCapture;
         i3 :: TestInject -> MarkIPHeader -> rd :: ICMPError(198.18.0.1, redirect, host) -> o3 :: TestCapture;",
    );
    let orig = udp(A, B, 1, 20);
    inject(&mut r, "i", Packet::from_bytes(&orig));
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1);
    let d = o[0].data();
    assert!(header_ok(d));
    assert_eq!(d[9], 1);
    assert_eq!(&d[12..16], &[198, 18, 0, 1]);
    assert_eq!(&d[16..20], &A);
    assert_eq!((d[20], d[21]), (11, 0));
    assert_eq!(checksum(&d[20..]), 0);
    // The whole datagram fits within 576 bytes: all of it is quoted. TOS 0, TTL 200.
    assert_eq!(&d[28..], &orig[..]);
    assert_eq!((d[1], d[8]), (0, 200));
    assert_eq!(o[0].dst_ip_anno(), Ipv4Addr::from(A));
    assert!(o[0].anno().fix_ip_src);
    // A large datagram is quoted up to MTU (576 by default); IP IDs count up.
    let big = udp(A, B, 1, 1000);
    inject(&mut r, "i", Packet::from_bytes(&big));
    let o = taken(&mut r, "o");
    let e = o[0].data();
    assert_eq!(e.len(), 576);
    assert_eq!(u16::from_be_bytes([e[2], e[3]]), 576);
    assert_eq!(&e[28..], &big[..548]);
    assert_eq!(checksum(&e[20..]), 0);
    let id = |x: &[u8]| u16::from_be_bytes([x[4], x[5]]);
    assert_eq!(id(e), id(d).wrapping_add(1));
    r.write_path("e.mtu", "100").unwrap();
    inject(&mut r, "i", Packet::from_bytes(&big));
    assert_eq!(taken(&mut r, "o")[0].data().len(), 100);
    r.write_path("e.mtu", "576").unwrap();
    // Never for: ICMP errors, broadcast destinations, bad sources, non-first fragments,
    // link-level broadcasts.
    let icmp_err = ip_packet(A, B, 1, 1, &[], &[3, 1, 0, 0, 0, 0, 0, 0]);
    inject(&mut r, "i", Packet::from_bytes(&icmp_err));
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&udp(A, [255, 255, 255, 255], 1, 4)),
    );
    inject(&mut r, "i", Packet::from_bytes(&udp([0, 0, 0, 0], B, 1, 4)));
    let mut frag = udp(A, B, 1, 4);
    frag[7] = 10;
    inject(&mut r, "i", Packet::from_bytes(&frag));
    let mut bc = Packet::from_bytes(&udp(A, B, 1, 4));
    bc.anno_mut().packet_type = PacketType::Broadcast;
    inject(&mut r, "i", bc);
    // An echo request does get an error.
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&ip_packet(A, B, 1, 1, &[], &[8, 0, 0, 0, 0, 0, 0, 0])),
    );
    assert_eq!(taken(&mut r, "o").len(), 1);
    assert_eq!(taken(&mut r, "no").len(), 5);
    assert_eq!(read(&mut r, "e.drops"), "5");
    // needfrag carries PMTU.
    let mut df = udp(A, B, 64, 400);
    df[6] = 0x40;
    inject(&mut r, "i2", Packet::from_bytes(&df));
    let o2 = taken(&mut r, "o2");
    assert_eq!((o2[0].data()[20], o2[0].data()[21]), (3, 4));
    assert_eq!(&o2[0].data()[26..28], &200u16.to_be_bytes());
    // Redirect: gateway from the destination annotation; never for source-routed packets.
    let mut p = Packet::from_bytes(&udp(A, B, 64, 4));
    p.set_dst_ip_anno(Ipv4Addr::new(198, 18, 0, 254));
    inject(&mut r, "i3", p);
    let sr = ip_packet(A, B, 64, 17, &[131, 7, 4, 1, 2, 3, 4, 0], &[0; 8]);
    inject(&mut r, "i3", Packet::from_bytes(&sr));
    let o3 = taken(&mut r, "o3");
    assert_eq!(o3.len(), 1);
    assert_eq!((o3[0].data()[20], o3[0].data()[21]), (5, 1));
    assert_eq!(&o3[0].data()[24..28], &[198, 18, 0, 254]);
    assert_eq!(read(&mut r, "rd.drops"), "1");
}

/// An error for a source-routed datagram carries the hops travelled so far, reversed
/// (Click's test/icmp/ICMPError-sourceroute-01: `ssrr{^128.4.49.61,128.4.45.60}`).
#[test]
fn icmp_error_reverses_source_route() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> e :: ICMPError(19.19.19.19, timeexceeded) -> o :: TestCapture;
         i2 :: TestInject -> MarkIPHeader -> p :: ICMPError(19.19.19.19, parameterproblem) -> o2 :: TestCapture;",
    );
    assert_eq!(read(&mut r, "e.mtu"), "576");
    assert_eq!(read(&mut r, "e.pmtu"), "0");
    // SSRR, length 19, pointer 12: two hops travelled, two to go; then EOL.
    let mut opts = vec![137, 19, 12];
    for a in [
        [128, 4, 45, 60],
        [128, 4, 49, 61],
        [1, 2, 3, 4],
        [5, 6, 7, 8],
    ] {
        opts.extend_from_slice(&a);
    }
    opts.push(0);
    let orig = ip_packet([18, 26, 4, 44], [10, 0, 0, 8], 0, 6, &opts, &[0; 20]);
    inject(&mut r, "i", Packet::from_bytes(&orig));
    let o = taken(&mut r, "o");
    let d = o[0].data();
    assert_eq!(d[0], 0x48);
    assert!(header_ok(d));
    assert_eq!(&d[20..32], &[137, 11, 4, 128, 4, 49, 61, 128, 4, 45, 60, 0]);
    assert_eq!(
        u16::from_be_bytes([d[2], d[3]]) as usize,
        32 + 8 + orig.len()
    );
    assert_eq!(&d[40..], &orig[..]);
    // A parameter problem inside the route drops the route from the error.
    let mut p = Packet::from_bytes(&orig);
    p.anno_mut().param_off = 22;
    inject(&mut r, "i2", p);
    let o2 = taken(&mut r, "o2");
    let d = o2[0].data();
    assert_eq!((d[0], d[20], d[24]), (0x45, 12, 22));
}

#[test]
fn fix_ip_src_only_when_annotated() {
    let mut r =
        router("i :: TestInject -> MarkIPHeader -> f :: FixIPSrc(198.19.0.1) -> o :: TestCapture");
    let mut p = Packet::from_bytes(&udp(A, B, 64, 4));
    p.anno_mut().fix_ip_src = true;
    inject(&mut r, "i", p);
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 4)));
    let o = taken(&mut r, "o");
    assert_eq!(&o[0].data()[12..16], &[198, 19, 0, 1]);
    assert!(!o[0].anno().fix_ip_src);
    assert!(header_ok(o[0].data()));
    assert_eq!(&o[1].data()[12..16], &A);
    assert_eq!(read(&mut r, "f.fixed"), "1");
}

const ME: [u8; 6] = [0, 0, 0xc0, 0xae, 0x67, 0xef];
const HOST: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];

#[test]
fn arp_responder_answers_and_proxies() {
    let mut r = router(
        "i :: TestInject -> a :: ARPResponder(198.18.0.1 00:00:c0:ae:67:ef, 198.19.0.0/16 00:00:c0:ae:67:ef) -> o :: TestCapture; a[1] -> no :: TestCapture",
    );
    let q = arp(1, HOST, A, [0; 6], [198, 18, 0, 1], [0xff; 6]);
    inject(&mut r, "i", Packet::from_bytes(&q));
    let q2 = arp(1, HOST, A, [0; 6], [198, 19, 3, 4], [0xff; 6]);
    inject(&mut r, "i", Packet::from_bytes(&q2));
    let q3 = arp(1, HOST, A, [0; 6], [198, 18, 0, 7], [0xff; 6]);
    inject(&mut r, "i", Packet::from_bytes(&q3));
    inject(&mut r, "i", Packet::from_bytes(&q3[..30]));
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 2);
    let d = o[0].data();
    assert_eq!(&d[0..6], &HOST);
    assert_eq!(&d[6..12], &ME);
    assert_eq!(u16::from_be_bytes([d[20], d[21]]), 2);
    assert_eq!(&d[22..28], &ME);
    assert_eq!(&d[28..32], &[198, 18, 0, 1]);
    assert_eq!(&d[32..38], &HOST);
    assert_eq!(&d[38..42], &A);
    assert_eq!(&o[1].data()[28..32], &[198, 19, 3, 4]);
    assert_eq!(taken(&mut r, "no").len(), 2);
    assert_eq!(read(&mut r, "a.drops"), "2");
}

#[test]
fn arp_querier_queues_queries_and_releases() {
    let mut r = router(
        "i :: TestInject -> q :: ARPQuerier(198.18.0.1/24, 00:00:c0:ae:67:ef) -> o :: TestCapture;
         ia :: TestInject -> [1]q;",
    );
    for n in 0..3 {
        let mut p = Packet::from_bytes(&udp(B, A, 64, n));
        p.set_dst_ip_anno(Ipv4Addr::from(A));
        inject(&mut r, "i", p);
    }
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1, "one query for three packets");
    let d = o[0].data();
    assert_eq!(&d[0..6], &[0xff; 6]);
    assert_eq!(u16::from_be_bytes([d[12], d[13]]), 0x0806);
    assert_eq!(&d[38..42], &A);
    assert_eq!(read(&mut r, "q.length"), "3");
    inject(
        &mut r,
        "ia",
        Packet::from_bytes(&arp(2, HOST, A, ME, [198, 18, 0, 1], ME)),
    );
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 3);
    for (n, p) in o.iter().enumerate() {
        let d = p.data();
        assert_eq!(&d[0..6], &HOST);
        assert_eq!(&d[6..12], &ME);
        assert_eq!(u16::from_be_bytes([d[12], d[13]]), 0x0800);
        assert_eq!(d.len(), 14 + 28 + n);
    }
    // Known now: straight through. Broadcast: no ARP.
    let mut p = Packet::from_bytes(&udp(B, A, 64, 0));
    p.set_dst_ip_anno(Ipv4Addr::from(A));
    inject(&mut r, "i", p);
    let mut p = Packet::from_bytes(&udp(B, A, 64, 0));
    p.set_dst_ip_anno(Ipv4Addr::new(198, 18, 0, 255));
    inject(&mut r, "i", p);
    let o = taken(&mut r, "o");
    assert_eq!(&o[0].data()[0..6], &HOST);
    assert_eq!(&o[1].data()[0..6], &[0xff; 6]);
    let t = read(&mut r, "q.table");
    assert!(t.starts_with("198.18.0.2 1 02-00-00-00-00-02"), "{}", t);
    assert_eq!(read(&mut r, "q.responses"), "1");
}

/// Click's ARPTable limits (test/ethernet/ARPQuerier-08): ENTRY_PACKET_CAPACITY per next
/// hop, CAPACITY in all (halved when exceeded), one query per next hop while queries are
/// rate-limited. (TIMEOUT 0: entries never expire, so the waiting packets are still there
/// when the simulated clock has run on.)
#[test]
fn arp_querier_limits_waiting_packets() {
    let mut r = router(
        "( InfiniteSource(LIMIT 50) -> IPEncap(tcp, 1.0.0.1, 2.0.0.2) -> [0];
           InfiniteSource(LIMIT 50) -> IPEncap(tcp, 1.0.0.1, 2.0.0.3) -> [0];
           Idle -> [1]; )
         => q :: ARPQuerier(1.0.0.3, 2:1:1:1:1:1, ENTRY_PACKET_CAPACITY 10, TIMEOUT 0) -> Discard;
         ( InfiniteSource(LIMIT 100) -> IPEncap(tcp, 1.0.0.1, 2.0.0.2) -> [0];
           Idle -> [1]; )
         => q2 :: ARPQuerier(1.0.0.3, 2:1:1:1:1:1, CAPACITY 10, TIMEOUT 0) -> Discard;",
    );
    r.run_until_idle();
    assert_eq!(
        read(&mut r, "q.stats"),
        "80 packets killed\n2 ARP queries sent"
    );
    assert_eq!(
        read(&mut r, "q2.stats"),
        "90 packets killed\n1 ARP queries sent"
    );
    assert_eq!(read(&mut r, "q.length"), "20");
    assert_eq!(read(&mut r, "q2.length"), "10");
    assert_eq!(read(&mut r, "q.count"), "2");
    let d = read(&mut r, "q.drop_details");
    assert!(d.contains("80 queue full"), "{}", d);
}

/// Queries for an unanswered next hop are at least 0.1 s apart, 2 s once 10 went unanswered
/// (Click's test/ethernet/ARPQuerier-02); there are no retries of their own.
#[test]
fn arp_querier_rate_limits_queries() {
    let mut r = router(
        "RatedSource(RATE 10, LIMIT 15, STOP true) -> IPEncap(tcp, 1.0.0.1, 2.0.0.2)
           -> q :: ARPQuerier(1.0.0.3, 2:1:1:1:1:1) -> c :: Counter -> Discard;
         Idle -> [1]q;",
    );
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "10");
    assert_eq!(read(&mut r, "q.length"), "15");
}

#[test]
fn arp_querier_insert_handler_and_bad_replies() {
    let mut r = router(
        "i :: TestInject -> q :: ARPQuerier(198.18.0.1, 00:00:c0:ae:67:ef) -> o :: TestCapture;
         ia :: TestInject -> [1]q;",
    );
    r.write_path("q.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    inject(&mut r, "ia", Packet::from_bytes(&[0u8; 20]));
    inject(
        &mut r,
        "ia",
        Packet::from_bytes(&arp(2, [0xff; 6], [198, 18, 0, 9], ME, [198, 18, 0, 1], ME)),
    );
    // The short packet is a drop; a reply from a group address is ignored.
    assert_eq!(read(&mut r, "q.drops"), "1");
    assert_eq!(read(&mut r, "q.responses"), "1");
    let mut p = Packet::from_bytes(&udp(B, A, 64, 0));
    p.set_dst_ip_anno(Ipv4Addr::from(A));
    inject(&mut r, "i", p);
    assert_eq!(&taken(&mut r, "o")[0].data()[0..6], &HOST);
}

/// An entry in use is polled once it is POLL_TIMEOUT old, the packet leaving at once; the
/// reply keeps the entry alive (Click's test/ethernet/ARPQuerier-06).
#[test]
fn arp_querier_polls_an_entry_in_use_before_it_expires() {
    let mut r = router(
        "FromIPSummaryDump(DATA \"!data timestamp ip_dst sport\n0.00 1.0.0.1 1\n0.05 1.0.0.1 2\n0.081 1.0.0.1 3\n0.15 1.0.0.1 4\n0.162 1.0.0.1 5\n\", TIMING true, STOP true)
           -> q :: ARPQuerier(1.0.10.10, 2:1:0:a:a:f, TIMEOUT 0.1s, POLL_TIMEOUT 0.08s)
           -> o :: TestCapture;
         q[1] -> c :: Counter -> ARPResponder(0/0 2:2:1:b:b:0) -> [1]q;",
    );
    r.run_until_idle();
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 5, "every packet leaves");
    assert!(o.iter().all(|p| p.data()[0..6] == [2, 2, 1, 0xb, 0xb, 0]));
    assert_eq!(
        read(&mut r, "c.count"),
        "3",
        "the first query and two polls"
    );
    assert_eq!(read(&mut r, "q.responses"), "3");
    assert_eq!(read(&mut r, "q.drops"), "0");
}

#[test]
fn ether_encap_rewrite_and_host_filter() {
    let mut r = router(
        "i :: TestInject -> e :: EtherEncap(0x0800, 00:00:c0:ae:67:ef, 02:00:00:00:00:02) -> EtherRewrite(00:00:00:00:00:01, 00:00:c0:ae:67:ef) -> f :: HostEtherFilter(00:00:c0:ae:67:ef) -> o :: TestCapture;
         i2 :: TestInject -> f2 :: HostEtherFilter(00:00:c0:ae:67:ef, DROP_OWN true) -> o2 :: TestCapture",
    );
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 0)));
    let o = taken(&mut r, "o");
    assert_eq!(&o[0].data()[0..6], &ME);
    assert_eq!(&o[0].data()[6..12], &[0, 0, 0, 0, 0, 1]);
    assert_eq!(o[0].anno().packet_type, PacketType::Host);
    let mut bc = vec![0xff; 6];
    bc.extend_from_slice(&HOST);
    bc.extend_from_slice(&[8, 0]);
    inject(&mut r, "i2", Packet::from_bytes(&bc));
    let mut other = HOST.to_vec();
    other.extend_from_slice(&[0, 0, 0, 0, 0, 9, 8, 0]);
    inject(&mut r, "i2", Packet::from_bytes(&other));
    let mut own = ME.to_vec();
    own.extend_from_slice(&ME);
    own.extend_from_slice(&[8, 0]);
    inject(&mut r, "i2", Packet::from_bytes(&own));
    let o2 = taken(&mut r, "o2");
    assert_eq!(o2.len(), 1);
    assert_eq!(o2[0].anno().packet_type, PacketType::Broadcast);
    assert_eq!(read(&mut r, "f2.drops"), "2");
    // Click's ethertype handler reads in decimal (test/ethernet/EtherEncap-01).
    assert_eq!(read(&mut r, "e.ethertype"), "2048");
    r.write_path("e.ethertype", "0x0801").unwrap();
    assert_eq!(read(&mut r, "e.ethertype"), "2049");
}

#[test]
fn ping_responder_and_ip_encap_and_dscp() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> p :: ICMPPingResponder -> o :: TestCapture; p[1] -> no :: TestCapture;
         i2 :: TestInject -> IPEncap(udp, 198.18.0.1, 198.19.0.1, TTL 9) -> SetIPDSCP(46) -> StripIPHeader -> o2 :: TestCapture;",
    );
    let mut echo = vec![8, 0, 0, 0, 0, 7, 0, 1, 1, 2, 3, 4];
    let c = checksum(&echo);
    echo[2..4].copy_from_slice(&c.to_be_bytes());
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&ip_packet(A, B, 64, 1, &[], &echo)),
    );
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 0)));
    let o = taken(&mut r, "o");
    let d = o[0].data();
    assert_eq!(&d[12..16], &B);
    assert_eq!(&d[16..20], &A);
    assert_eq!(d[20], 0);
    assert!(header_ok(d));
    assert_eq!(checksum(&d[20..]), 0);
    assert_eq!(taken(&mut r, "no").len(), 1);
    inject(&mut r, "i2", Packet::from_bytes(b"hello"));
    let o2 = taken(&mut r, "o2");
    assert_eq!(o2[0].data(), b"hello");
    let mut p = o2.into_iter().next().unwrap();
    p.unstrip(20);
    let d = p.data();
    assert!(header_ok(d));
    assert_eq!((d[1] >> 2, d[8], d[9]), (46, 9, 17));
    assert_eq!(u16::from_be_bytes([d[2], d[3]]), 25);
}

#[test]
fn address_info_names_in_arguments() {
    let mut r = router(
        "AddressInfo(t_if0 198.18.0.1/24 00:00:c0:ae:67:ef);
         i :: TestInject -> q :: ARPQuerier(t_if0:ipnet, t_if0) -> o :: TestCapture; TestInject -> [1]q;
         i2 :: TestInject -> a :: ARPResponder(t_if0) -> o2 :: TestCapture;
         i3 :: TestInject -> MarkIPHeader -> FixIPSrc(t_if0:ip) -> EtherEncap(0x0800, t_if0, t_if0:eth) -> o3 :: TestCapture;",
    );
    let mut p = Packet::from_bytes(&udp(B, A, 64, 0));
    p.set_dst_ip_anno(Ipv4Addr::new(198, 18, 0, 255));
    inject(&mut r, "i", p);
    assert_eq!(
        &taken(&mut r, "o")[0].data()[0..12],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0xc0, 0xae, 0x67, 0xef]
    );
    inject(
        &mut r,
        "i2",
        Packet::from_bytes(&arp(1, HOST, A, [0; 6], [198, 18, 0, 1], [0xff; 6])),
    );
    assert_eq!(taken(&mut r, "o2").len(), 1);
    let mut p = Packet::from_bytes(&udp(B, A, 64, 0));
    p.anno_mut().fix_ip_src = true;
    inject(&mut r, "i3", p);
    let d = taken(&mut r, "o3");
    assert_eq!(&d[0].data()[14 + 12..14 + 16], &[198, 18, 0, 1]);
    let e =
        config_error("TestInject -> FixIPSrc(no_such_name) -> Discard; TestInject -> FixIPSrc(1.2.3.4) -> Discard;");
    assert!(e.contains("IPADDR: expected IP address"), "{}", e);
}

#[test]
fn arp_print_formats_like_tcpdump() {
    let dir = TempDir::new("arpprint");
    let f = dir.join("out");
    let mut r = router(&format!(
        "i :: TestInject -> Strip(14) -> ARPPrint(in, TIMESTAMP false, OUTFILE {0}) -> o :: TestCapture;
         i2 :: TestInject -> ap :: ARPPrint(ETHER true, OUTFILE {0}.2) -> o2 :: TestCapture;",
        f.display()
    ));
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(1, HOST, A, [0; 6], [198, 18, 0, 1], [0xff; 6])),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(1, HOST, A, ME, [198, 18, 0, 1], [0xff; 6])),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(2, ME, [198, 18, 0, 1], HOST, A, HOST)),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(2, ME, A, HOST, A, HOST)[..30]),
    );
    let mut q = Packet::from_bytes(&arp(2, ME, [198, 18, 0, 1], HOST, A, HOST));
    q.set_mac_offset(0);
    q.set_network_offset(14);
    inject(&mut r, "i2", q);
    assert_eq!(taken(&mut r, "o").len(), 4);
    assert_eq!(taken(&mut r, "o2").len(), 1);
    assert_eq!(read(&mut r, "ap.active"), "true");
    drop(r);
    let text = std::fs::read_to_string(&f).unwrap();
    assert_eq!(
        text,
        "in: arp who-has 198.18.0.1 tell 198.18.0.2\n\
         in: arp who-has 198.18.0.1 (00-00-C0-AE-67-EF) tell 198.18.0.2\n\
         in: arp reply 198.18.0.1 is-at 00-00-C0-AE-67-EF\n\
         in: truncated-arp (16)\n"
    );
    let f2 = format!("{}.2", f.display());
    let text = std::fs::read_to_string(&f2).unwrap();
    assert_eq!(
        text,
        "0.000000: 00-00-C0-AE-67-EF > 02-00-00-00-00-02: arp reply 198.18.0.1 is-at 00-00-C0-AE-67-EF\n"
    );
}

/// A name with an address and a prefix means the address where an address is expected and
/// the prefix where a prefix is expected (Click's AddressInfo, test/ip/AddressInfo-bcast-01).
#[test]
fn address_info_address_and_prefix() {
    let mut r = router(
        "AddressInfo(r0 198.18.1.1 198.18.1.0/24 02:00:00:00:01:01, foo 1.2.3.4/20);
         i :: TestInject -> a :: ARPResponder(r0) -> o :: TestCapture;
         rt :: LinearIPLookup(foo 0, foo:ipnet 1, foo:bcast 2, r0:ipnet 0, r0:gw 1);
         Idle -> rt; rt[0] -> Discard; rt[1] -> Discard; rt[2] -> Discard;",
    );
    assert_eq!(read(&mut r, "a.table"), "198.18.1.1/32 02-00-00-00-01-01");
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(1, HOST, A, [0; 6], [198, 18, 1, 1], [0xff; 6])),
    );
    inject(
        &mut r,
        "i",
        Packet::from_bytes(&arp(1, HOST, A, [0; 6], [198, 18, 1, 0], [0xff; 6])),
    );
    let out = taken(&mut r, "o");
    assert_eq!(out.len(), 1);
    assert_eq!(&out[0].data()[14 + 14..14 + 18], &[198, 18, 1, 1]);
    // Click's routes for test/ip/AddressInfo-bcast-01 (the first three), listed as Click lists
    // them: in the order they were added, columns padded with tabs.
    let want = "1.2.3.4/32\t\t-\t\t0\n\
                1.2.0.0/20\t\t-\t\t1\n\
                1.2.15.255/32\t\t-\t\t2\n\
                198.18.1.0/24\t\t-\t\t0\n\
                198.18.1.1/32\t\t-\t\t1\n";
    assert_eq!(r.read_path("rt.table").unwrap(), want);
    // A removed route's place goes to the next route added (Click's LinearIPLookup).
    r.write_path("rt.remove", "1.2.0.0/20 1").unwrap();
    r.write_path("rt.add", "10.0.0.0/8 18.26.4.1 2").unwrap();
    let t = r.read_path("rt.table").unwrap();
    assert_eq!(t.lines().nth(1), Some("10.0.0.0/8\t\t18.26.4.1\t2"));
}

/// ARPResponder's table order, replacement, `lookup` and `remove` as in Click's
/// test/ethernet/ARPResponder-01 (which rewrites `config`; here the same entries are added).
/// AddressInfo names may be written in capitals (Click's conf/fromhost-tunnel.click): every
/// argument is a `NAME ADDRS` line, never a keyword.
#[test]
fn address_info_names_in_capitals() {
    let mut r = router(
        "AddressInfo(TEST_NETWORK 198.18.0.1/15, MY_ADDR 198.18.0.1 02:00:00:00:00:01);
         Idle -> ar :: ARPResponder(TEST_NETWORK:ipnet MY_ADDR:eth) -> Discard;",
    );
    assert_eq!(read(&mut r, "ar.table"), "198.18.0.0/15 02-00-00-00-00-01");
}

#[test]
fn arp_responder_table_and_lookup() {
    let mut r = router(
        "AddressInfo(a 1.0.0.2/24 00:01:02:03:04:05, b 00:01:02:03:04:06);
         Idle -> ar :: ARPResponder(a:ipnet b:eth, a) -> Discard;
         Idle -> ar2 :: ARPResponder(a, a, a:ipnet b:eth) -> Discard;",
    );
    let want = "1.0.0.2/32 00-01-02-03-04-05\n1.0.0.0/24 00-01-02-03-04-06\n";
    assert_eq!(r.read_path("ar.table").unwrap(), want);
    assert_eq!(r.read_path("ar2.table").unwrap(), want);
    let look = |r: &mut sluice_core::Router, a: &str| {
        let v = r.read_path_param("ar.lookup", Some(a)).unwrap();
        v.trim().to_string()
    };
    assert_eq!(look(&mut r, "1.0.0.1"), "00-01-02-03-04-06");
    assert_eq!(look(&mut r, "1.0.0.2"), "00-01-02-03-04-05");
    assert_eq!(look(&mut r, "2.0.0.2"), "");
    r.write_path("ar.remove", "1.0.0.2").unwrap();
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.0/24 00-01-02-03-04-06");
    assert!(r.write_path("ar.remove", "1.0.0.2").is_err());
    r.write_path("ar.add", "a:ipnet a:eth").unwrap();
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.0/24 00-01-02-03-04-05");
    assert_eq!(look(&mut r, "1.0.0.2"), "00-01-02-03-04-05");
    // A writable `config` replaces the entries (Click's live reconfiguration); reads show it.
    r.write_path("ar.config", "a:ipnet b:eth").unwrap();
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.0/24 00-01-02-03-04-06");
    assert_eq!(read(&mut r, "ar.config"), "a:ipnet b:eth");
    assert!(r.write_path("ar.config", "1.0.0.1").is_err());
    assert_eq!(read(&mut r, "ar.table"), "1.0.0.0/24 00-01-02-03-04-06");
    assert!(
        r.write_path("ar.name", "x").is_err(),
        "other generic handlers stay read-only"
    );
    let e = config_error("Idle -> ARPResponder(1.0.0.1) -> Discard;");
    assert!(e.contains("missing ETH"), "{}", e);
    let e = config_error(
        "Idle -> ARPResponder(1.0.0.1 00:01:02:03:04:05 00:01:02:03:04:06) -> Discard;",
    );
    assert!(e.contains("more than one ETH"), "{}", e);
}

#[test]
fn bad_arguments_are_reported() {
    let e = config_error("TestInject -> ICMPError(1.2.3.4, bogus) -> Discard");
    assert!(e.contains("TYPE"), "{}", e);
    let e = config_error("TestInject -> IPFragmenter(10) -> Discard");
    assert!(e.contains("MTU"), "{}", e);
    let e = config_error("TestInject -> SetIPDSCP(64) -> Discard");
    assert!(e.contains("DSCP"), "{}", e);
}

#[test]
fn fake_iprouter_forwards_every_packet() {
    let conf = conf_file("fake-iprouter.click").replace("LIMIT 600000", "LIMIT 3000");
    let mut r = router(&conf);
    r.run_until_idle();
    // Every packet is either still queued, dropped by the queue, or discarded after it.
    let q: u64 = read(&mut r, "out0.length").parse().unwrap();
    let d: u64 = read(&mut r, "out0.drops").parse().unwrap();
    let names = r.read_path("list").unwrap();
    let dis = names
        .lines()
        .filter(|l| l.starts_with("Discard@"))
        .map(|l| l.trim().to_string())
        .collect::<Vec<_>>();
    let mut total_discard = 0u64;
    for n in &dis {
        total_discard += read(&mut r, &format!("{}.count", n))
            .parse::<u64>()
            .unwrap_or(0);
    }
    assert_eq!(
        q + d + total_discard,
        3000,
        "queue {} drops {} discarded {}",
        q,
        d,
        total_discard
    );
    assert_eq!(read(&mut r, "dt1.drops"), "0");
    assert_eq!(read(&mut r, "fr1.fragments"), "0");
}

/// Runs every packet fuzz body (`sluice_elements::fuzzing`) over its seed corpus and
/// deterministic mutations of it.
#[test]
fn fuzz_corpora_and_mutations_never_panic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (name, body) in sluice_elements::fuzzing::TARGETS {
        let mut n = 0;
        for data in fuzz_seeds(name) {
            body(&data);
            n += 1;
            for _ in 0..200 {
                let mut m = data.clone();
                match rnd() % 4 {
                    0 if !m.is_empty() => {
                        let i = (rnd() as usize) % m.len();
                        m[i] ^= 1 << (rnd() % 8);
                    }
                    1 if !m.is_empty() => {
                        let i = (rnd() as usize) % m.len();
                        m[i] = rnd() as u8;
                    }
                    2 => m.truncate((rnd() as usize) % (m.len() + 1)),
                    _ => m.extend((0..rnd() % 16).map(|_| rnd() as u8)),
                }
                body(&m);
            }
        }
        assert!(n > 0, "empty corpus {}", name);
    }
}

#[test]
fn unstrip_ip_header_and_mark_mac_header_restore_headers() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> StripIPHeader -> UnstripIPHeader -> o :: TestCapture;
         e :: TestInject -> MarkMACHeader(0, 14) -> StripToNetworkHeader -> eo :: TestCapture;
         n :: TestInject -> UnstripIPHeader -> no :: TestCapture;",
    );
    let pkt = udp(A, B, 64, 8);
    inject(&mut r, "i", Packet::from_bytes(&pkt));
    assert_eq!(taken(&mut r, "o")[0].data(), &pkt[..]);
    let mut frame = vec![0u8; 14];
    frame.extend_from_slice(&pkt);
    inject(&mut r, "e", Packet::from_bytes(&frame));
    let eo = taken(&mut r, "eo");
    assert_eq!(eo[0].data(), &pkt[..]);
    assert_eq!(eo[0].mac_offset(), Some(-14));
    // No network header: unchanged.
    inject(&mut r, "n", Packet::from_bytes(&pkt));
    assert_eq!(taken(&mut r, "no")[0].data(), &pkt[..]);
}

#[test]
fn get_ip_address_takes_clicks_ip_keyword() {
    let mut r =
        router("i :: TestInject -> MarkIPHeader -> GetIPAddress(IP src) -> o :: TestCapture;");
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 8)));
    assert_eq!(taken(&mut r, "o")[0].dst_ip_anno(), Ipv4Addr::from(A));
    assert!(config_error("Idle -> GetIPAddress(16, IP dst) -> Discard")
        .contains("set one of OFFSET, IP"));
    assert!(config_error("Idle -> GetIPAddress -> Discard").contains("set one of OFFSET, IP"));
    assert!(config_error("Idle -> GetIPAddress(IP both) -> Discard").contains("bad IP"));
}
