//! Behaviour tests of the IPv6 header elements (ip6/) and CheckLength through small
//! configurations: packets are injected into a router and captured at its sinks, hostile
//! ones included (every packet comes out or is counted as a drop).

use std::net::Ipv6Addr;

use sluice_core::Packet;
use sluice_testkit::{config_error, drops, inject, pull, read, router, taken};
use sluice_wire::ipv6::{NH_DSTOPTS, NH_FRAGMENT, NH_HOPOPTS, NH_ICMPV6, NH_ROUTING, NH_UDP};

const A: &str = "2001:db8::1";
const B: &str = "2001:db8:1::2";

fn addr(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// An IPv6 packet: header (traffic class 0, flow label 0) and `payload`.
fn ip6(src: &str, dst: &str, nh: u8, hlim: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0];
    v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    v.extend_from_slice(&[nh, hlim]);
    v.extend_from_slice(&addr(src).octets());
    v.extend_from_slice(&addr(dst).octets());
    v.extend_from_slice(payload);
    v
}

/// A UDP packet from port 4000 to 5000 with `n` payload bytes 0, 1, 2, ….
fn udp6(src: &str, dst: &str, hlim: u8, n: usize) -> Vec<u8> {
    let mut pl = vec![0x0f, 0xa0, 0x13, 0x88];
    pl.extend_from_slice(&((8 + n) as u16).to_be_bytes());
    pl.extend_from_slice(&[0, 0]);
    pl.extend((0..n).map(|i| i as u8));
    ip6(src, dst, NH_UDP, hlim, &pl)
}

/// Injects every packet of `pkts` into `i`.
fn inject_all(r: &mut sluice_core::Router, i: &str, pkts: &[Vec<u8>]) {
    for p in pkts {
        inject(r, i, Packet::from_bytes(p));
    }
}

#[test]
fn check_ip6_header_passes_trims_and_counts_drops() {
    let mut r = router(
        "i :: TestInject -> c :: CheckIP6Header(2001:db8::bad ::) -> ok :: TestCapture;
         c[1] -> bad :: TestCapture;
         i2 :: TestInject -> c2 :: CheckIP6Header -> ok2 :: TestCapture;",
    );
    let good = udp6(A, B, 64, 10);
    let mut padded = good.clone();
    padded.extend_from_slice(&[0xee; 6]);
    let mut v4 = good.clone();
    v4[0] = 0x45;
    let mut long = good.clone();
    long[4..6].copy_from_slice(&1000u16.to_be_bytes());
    inject_all(
        &mut r,
        "i",
        &[
            padded,
            good[..39].to_vec(),
            Vec::new(),
            v4,
            long,
            good[..good.len() - 1].to_vec(),
            udp6("ff02::1", B, 64, 4),
            udp6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", B, 64, 4),
            udp6("2001:db8::bad", B, 64, 4),
            udp6("::", B, 64, 4),
        ],
    );
    let ok = taken(&mut r, "ok");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].data(), &good[..]);
    assert_eq!(ok[0].network_offset(), Some(0));
    assert_eq!(ok[0].transport_offset(), Some(40));
    assert_eq!(taken(&mut r, "bad").len(), 9);
    assert_eq!(read(&mut r, "c.drops"), "9");
    let d = read(&mut r, "c.drop_details");
    for line in [
        "2 tiny packet",
        "1 bad IPv6 version",
        "2 bad IPv6 payload length",
        "4 bad source address",
    ] {
        assert!(d.contains(line), "{d}");
    }
    // Without output 1 bad packets are dropped, counted, and the unspecified source is fine.
    inject_all(&mut r, "i2", &[good[..20].to_vec(), udp6("::", B, 64, 4)]);
    assert_eq!(read(&mut r, "c2.drops"), "1");
    assert_eq!(taken(&mut r, "ok2").len(), 1);
    assert_eq!(drops(&mut r), 1);
}

#[test]
fn check_ip6_header_offset_and_errors() {
    let mut r = router("i :: TestInject -> c :: CheckIP6Header(OFFSET 14) -> ok :: TestCapture");
    let mut f = vec![0xaa; 14];
    f.extend_from_slice(&udp6(A, B, 64, 4));
    f.extend_from_slice(&[0; 4]);
    inject(&mut r, "i", Packet::from_bytes(&f));
    inject(&mut r, "i", Packet::from_bytes(&f[..50]));
    let ok = taken(&mut r, "ok");
    assert_eq!(ok.len(), 1);
    assert_eq!(ok[0].len(), 14 + 52);
    assert_eq!(ok[0].network_offset(), Some(14));
    assert_eq!(ok[0].transport_offset(), Some(54));
    assert_eq!(read(&mut r, "c.drops"), "1");
    let e = config_error("Idle -> CheckIP6Header(2001:db8::1 nonsense) -> Discard");
    assert!(e.contains("BADADDRS"), "{e}");
}

#[test]
fn dec_ip6_hlim_decrements_and_expires() {
    let mut r = router(
        "i :: TestInject -> d :: DecIP6HLIM -> ok :: TestCapture; d[1] -> exp :: TestCapture;
         i2 :: TestInject -> MarkIP6Header(14) -> d2 :: DecIP6HLIM -> ok2 :: TestCapture;",
    );
    for hlim in [64u8, 2, 1, 0, 255] {
        inject(&mut r, "i", Packet::from_bytes(&udp6(A, B, hlim, 4)));
    }
    inject(&mut r, "i", Packet::from_bytes(&udp6(A, B, 64, 4)[..39]));
    let ok = taken(&mut r, "ok");
    let hlims: Vec<u8> = ok.iter().map(|p| p.data()[7]).collect();
    assert_eq!(hlims, vec![63, 1, 254]);
    let exp = taken(&mut r, "exp");
    assert_eq!(exp.len(), 2);
    assert_eq!(exp[0].data(), &udp6(A, B, 1, 4)[..]);
    assert_eq!(read(&mut r, "d.drops"), "2");
    // The header is found through the network header annotation; an expired packet with
    // no output 1 is dropped and counted.
    let mut f = vec![0u8; 14];
    f.extend_from_slice(&udp6(A, B, 9, 4));
    inject(&mut r, "i2", Packet::from_bytes(&f));
    f[14 + 7] = 1;
    inject(&mut r, "i2", Packet::from_bytes(&f));
    let ok2 = taken(&mut r, "ok2");
    assert_eq!(ok2.len(), 1);
    assert_eq!(ok2[0].data()[14 + 7], 8);
    assert_eq!(read(&mut r, "d2.drops"), "1");
    assert!(read(&mut r, "d2.drop_details").contains("1 pushed to an unconnected output"));
    assert!(read(&mut r, "d.drop_details").contains("1 too short for an IPv6 header"));
}

#[test]
fn get_and_set_ip6_address() {
    let mut r = router(
        "i :: TestInject -> g :: GetIP6Address(24) -> o :: TestCapture;
         i2 :: TestInject -> s :: SetIP6Address(2001:db8::fe) -> o2 :: TestCapture;",
    );
    inject(&mut r, "i", Packet::from_bytes(&udp6(A, B, 64, 4)));
    inject(&mut r, "i", Packet::from_bytes(&udp6(A, B, 64, 4)[..39]));
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1);
    assert_eq!(o[0].dst_ip6_anno(), addr(B));
    assert_eq!(read(&mut r, "g.drops"), "1");
    inject(&mut r, "i2", Packet::from_bytes(&[1, 2, 3]));
    assert_eq!(taken(&mut r, "o2")[0].dst_ip6_anno(), addr("2001:db8::fe"));
    assert_eq!(read(&mut r, "s.addr"), "2001:db8::fe");
    r.write_path("s.addr", "::1").unwrap();
    assert_eq!(read(&mut r, "s.addr"), "::0.0.0.1");
    inject(&mut r, "i2", Packet::from_bytes(&[1, 2, 3]));
    assert_eq!(taken(&mut r, "o2")[0].dst_ip6_anno(), Ipv6Addr::LOCALHOST);
    assert!(config_error("Idle -> GetIP6Address -> Discard").contains("OFFSET"));
    assert!(config_error("Idle -> SetIP6Address(1.2.3.4) -> Discard").contains("IPv6"));
}

#[test]
fn mark_ip6_header_sets_offsets() {
    let mut r = router("i :: TestInject -> MarkIP6Header(14) -> o :: TestCapture");
    let mut f = vec![0u8; 14];
    f.extend_from_slice(&udp6(A, B, 64, 4));
    inject(&mut r, "i", Packet::from_bytes(&f));
    inject(&mut r, "i", Packet::from_bytes(&f[..20]));
    let o = taken(&mut r, "o");
    assert_eq!(o[0].network_offset(), Some(14));
    assert_eq!(o[0].transport_offset(), Some(54));
    assert_eq!(o[0].data(), &f[..]);
    assert_eq!(o[1].network_offset(), Some(14));
    assert_eq!(o[1].len(), 20);
}

#[test]
fn set_ip6_dscp_keeps_ecn_and_flow_label() {
    let mut r = router("i :: TestInject -> s :: SetIP6DSCP(46) -> o :: TestCapture");
    let mut p = udp6(A, B, 64, 4);
    // Traffic class 0x03 (ECN CE), flow label 0xabcde.
    p[..4].copy_from_slice(&[0x60, 0x3a, 0xbc, 0xde]);
    inject(&mut r, "i", Packet::from_bytes(&p));
    inject(&mut r, "i", Packet::from_bytes(&p[..30]));
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1);
    // 46 << 2 | 3 = 0xbb.
    assert_eq!(&o[0].data()[..4], &[0x6b, 0xba, 0xbc, 0xde]);
    assert_eq!(&o[0].data()[4..], &p[4..]);
    assert_eq!(read(&mut r, "s.drops"), "1");
    assert_eq!(read(&mut r, "s.dscp"), "46");
    r.write_path("s.dscp", "0").unwrap();
    assert!(r.write_path("s.dscp", "64").is_err());
    inject(&mut r, "i", Packet::from_bytes(&p));
    assert_eq!(
        &taken(&mut r, "o")[0].data()[..4],
        &[0x60, 0x3a, 0xbc, 0xde]
    );
    let e = config_error("Idle -> SetIP6DSCP(64) -> Discard");
    assert!(e.contains("out of range"), "{e}");
}

#[test]
fn ip6_mirror_swaps_addresses_and_ports() {
    let mut r = router("i :: TestInject -> m :: IP6Mirror -> o :: TestCapture");
    let p = udp6(A, B, 64, 4);
    let icmp = ip6(A, B, NH_ICMPV6, 64, &[128, 0, 0, 0, 0, 1, 0, 2]);
    inject_all(
        &mut r,
        "i",
        &[p.clone(), icmp.clone(), p[..44].to_vec(), p[..39].to_vec()],
    );
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 3);
    let d = o[0].data();
    assert_eq!(&d[8..24], &addr(B).octets());
    assert_eq!(&d[24..40], &addr(A).octets());
    assert_eq!(&d[40..44], &[0x13, 0x88, 0x0f, 0xa0]);
    assert_eq!(&d[44..], &p[44..]);
    let d = o[1].data();
    assert_eq!(&d[8..24], &addr(B).octets());
    assert_eq!(&d[40..], &icmp[40..]);
    // A UDP header cut short keeps its bytes.
    assert_eq!(&o[2].data()[40..], &p[40..44]);
    assert_eq!(read(&mut r, "m.drops"), "1");
}

#[test]
fn ip6_encap_builds_the_header() {
    let mut r = router(
        "i :: TestInject -> e :: IP6Encap(udp, 2001:db8::1, 2001:db8:1::2, HLIM 20, CLASS 0xb8)
           -> o :: TestCapture;
         i2 :: TestInject -> SetIP6Address(2001:db8::77) -> e2 :: IP6Encap(4, ::, DST_ANNO)
           -> o2 :: TestCapture;
         i3 :: TestInject -> e3 :: IP6Encap(ipip, ::1, DST_ANNO) -> o3 :: TestCapture;",
    );
    let inner = [1u8, 2, 3, 4, 5];
    inject(&mut r, "i", Packet::from_bytes(&inner));
    let o = taken(&mut r, "o");
    let d = o[0].data();
    let mut want = ip6(A, B, NH_UDP, 20, &inner);
    want[..2].copy_from_slice(&[0x6b, 0x80]);
    assert_eq!(d, &want[..]);
    assert_eq!(o[0].network_offset(), Some(0));
    assert_eq!(o[0].transport_offset(), Some(40));
    assert_eq!(o[0].dst_ip6_anno(), addr(B));
    inject(&mut r, "i2", Packet::from_bytes(&inner));
    let o2 = taken(&mut r, "o2");
    assert_eq!(o2[0].data(), &ip6("::", "2001:db8::77", 4, 250, &inner)[..]);
    // DST_ANNO with an unset annotation: the destination is `::`.
    inject(&mut r, "i3", Packet::from_bytes(&[]));
    let o3 = taken(&mut r, "o3");
    assert_eq!(o3[0].data(), &ip6("::1", "::", 4, 250, &[])[..]);
    assert_eq!(read(&mut r, "e.src"), "2001:db8::1");
    assert_eq!(read(&mut r, "e.dst"), "2001:db8:1::2");
    assert_eq!(read(&mut r, "e2.dst"), "DST_ANNO");
    r.write_path("e.dst", "2001:db8::99").unwrap();
    inject(&mut r, "i", Packet::from_bytes(&inner));
    assert_eq!(
        &taken(&mut r, "o")[0].data()[24..40],
        &addr("2001:db8::99").octets()
    );
    // A packet too long for a payload length is dropped and counted.
    inject(&mut r, "i", Packet::new(65_536));
    assert!(taken(&mut r, "o").is_empty());
    assert_eq!(read(&mut r, "e.drops"), "1");
    let e = config_error("Idle -> IP6Encap(udp, 2001:db8::1, nowhere) -> Discard");
    assert!(e.contains("DST_ANNO"), "{e}");
}

/// Checks the fragments of `orig` (unfragmentable part `unfrag` bytes, fragmentable part
/// starting at `start`, next header at `nh_at`) against the MTU and puts them back together.
fn reassemble(frags: &[Packet], mtu: usize, unfrag: usize, nh_at: usize) -> Vec<u8> {
    assert!(frags.len() > 1);
    let ident = &frags[0].data()[unfrag + 4..unfrag + 8];
    let mut data = Vec::new();
    let mut nh = 0;
    for (i, f) in frags.iter().enumerate() {
        let d = f.data();
        assert!(d.len() <= mtu, "fragment {i} of {} bytes", d.len());
        assert_eq!(usize::from(u16::from_be_bytes([d[4], d[5]])), d.len() - 40);
        assert_eq!(d[nh_at], NH_FRAGMENT);
        // The unfragmentable part repeats, but for the payload length and the next header.
        let (d0, u) = (frags[0].data(), unfrag);
        assert_eq!((&d[..4], &d[6..nh_at]), (&d0[..4], &d0[6..nh_at]));
        assert_eq!(&d[nh_at + 1..u], &d0[nh_at + 1..u]);
        let fh = &d[unfrag..unfrag + 8];
        assert_eq!(&fh[4..8], ident);
        nh = fh[0];
        let w = u16::from_be_bytes([fh[2], fh[3]]);
        let (off, more) = (usize::from(w >> 3) * 8, w & 1 == 1);
        assert_eq!(off, data.len(), "fragment {i} out of place");
        assert_eq!(more, i + 1 < frags.len());
        let piece = &d[unfrag + 8..];
        if more {
            assert_eq!(piece.len() % 8, 0);
        }
        data.extend_from_slice(piece);
    }
    let mut whole = frags[0].data()[..unfrag].to_vec();
    whole[nh_at] = nh;
    whole.extend_from_slice(&data);
    let plen = (whole.len() - 40) as u16;
    whole[4..6].copy_from_slice(&plen.to_be_bytes());
    whole
}

#[test]
fn ip6_fragmenter_fragments_with_a_fragment_header() {
    let mut r = router(
        "i :: TestInject -> f :: IP6Fragmenter(1280) -> o :: TestCapture; f[1] -> big :: TestCapture",
    );
    let small = udp6(A, B, 64, 1232);
    assert_eq!(small.len(), 1280);
    let large = udp6(A, B, 64, 3000);
    inject_all(&mut r, "i", &[small.clone(), large.clone()]);
    let o = taken(&mut r, "o");
    assert_eq!(o[0].data(), &small[..]);
    let frags = &o[1..];
    assert_eq!(frags.len(), 3);
    // (1280 - 48) & !7 = 1232 bytes per fragment.
    assert_eq!(frags[0].len(), 1280);
    assert_eq!(frags[2].len(), 48 + 3008 - 2 * 1232);
    assert_eq!(reassemble(frags, 1280, 40, 6), large);
    assert!(frags.iter().all(|f| f.network_offset() == Some(0)));
    assert_eq!(read(&mut r, "f.fragments"), "3");
    // Each fragmented packet gets its own identification.
    inject(&mut r, "i", Packet::from_bytes(&large));
    let again = taken(&mut r, "o");
    assert_ne!(&again[0].data()[44..48], &frags[0].data()[44..48]);
    assert_eq!(reassemble(&again, 1280, 40, 6), large);
}

#[test]
fn ip6_fragmenter_keeps_the_unfragmentable_part() {
    let mut r = router(
        "i :: TestInject -> MarkIP6Header(14) -> f :: IP6Fragmenter(200) -> o :: TestCapture; f[1] -> big :: TestCapture",
    );
    // Hop-by-hop (8), routing (24), destination options (8), then UDP: the unfragmentable
    // part ends after the routing header.
    let mut pl = vec![NH_ROUTING, 0, 1, 4, 0, 0, 0, 0];
    pl.extend_from_slice(&[NH_DSTOPTS, 2, 0, 0]);
    pl.extend_from_slice(&[0; 20]);
    pl.extend_from_slice(&[NH_UDP, 0, 1, 4, 0, 0, 0, 0]);
    pl.extend_from_slice(&udp6(A, B, 64, 500)[40..]);
    let pkt = ip6(A, B, NH_HOPOPTS, 64, &pl);
    let mut framed = vec![0xee; 14];
    framed.extend_from_slice(&pkt);
    inject(&mut r, "i", Packet::from_bytes(&framed));
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 5, "(200 - 72 - 8) & !7 = 120 of 516 bytes each");
    assert!(o[..4].iter().all(|f| f.len() == 200));
    assert_eq!(reassemble(&o, 200, 72, 48), pkt);
    // A fragment is split further: same identification, offsets added, its M flag kept.
    let mut r2 = router("i :: TestInject -> f :: IP6Fragmenter(100) -> o :: TestCapture");
    let first = o[0].data().to_vec();
    inject(&mut r2, "i", Packet::from_bytes(&first));
    let sub = taken(&mut r2, "o");
    assert_eq!(sub.len(), 8, "(100 - 80) & !7 = 16 of 120 bytes each");
    let mut back = Vec::new();
    for (i, s) in sub.iter().enumerate() {
        let d = s.data();
        assert!(d.len() <= 100);
        assert_eq!(d[72], first[72]);
        assert_eq!(&d[76..80], &first[76..80]);
        let w = u16::from_be_bytes([d[74], d[75]]);
        assert_eq!(usize::from(w >> 3) * 8, i * 16);
        assert_eq!(w & 1, 1);
        back.extend_from_slice(&d[80..]);
    }
    assert_eq!(back, &first[80..]);
    // An unfragmentable part too long for the MTU: output 1.
    let mut r3 = router(
        "i :: TestInject -> f :: IP6Fragmenter(80) -> o :: TestCapture; f[1] -> big :: TestCapture",
    );
    inject(&mut r3, "i", Packet::from_bytes(&pkt));
    assert!(taken(&mut r3, "o").is_empty());
    assert_eq!(taken(&mut r3, "big")[0].data(), &pkt[..]);
    assert_eq!(read(&mut r3, "f.drops"), "1");
}

#[test]
fn ip6_fragmenter_drops_bad_headers() {
    let mut r = router("i :: TestInject -> f :: IP6Fragmenter(100) -> o :: TestCapture");
    let good = udp6(A, B, 64, 200);
    let mut v4 = good.clone();
    v4[0] = 0x45;
    let mut long = good.clone();
    long[4..6].copy_from_slice(&300u16.to_be_bytes());
    // A hop-by-hop header claiming more bytes than the packet has.
    let bad_ext = ip6(
        A,
        B,
        NH_HOPOPTS,
        64,
        &[[NH_UDP, 40].as_slice(), &[0; 100]].concat(),
    );
    // A fragment whose offset plus data run beyond 65,535 bytes.
    let mut late = ip6(A, B, NH_FRAGMENT, 64, &[NH_UDP, 0, 0xff, 0xf8, 0, 0, 0, 1]);
    late.extend_from_slice(&[0; 100]);
    late[4..6].copy_from_slice(&108u16.to_be_bytes());
    inject_all(
        &mut r,
        "i",
        &[good[..39].to_vec(), v4, long, bad_ext, late, good.clone()],
    );
    // (100 - 48) & !7 = 48 of 208 bytes each: 5 fragments of the good packet.
    assert_eq!(taken(&mut r, "o").len(), 5);
    let d = read(&mut r, "f.drop_details");
    assert!(d.contains("4 bad IPv6 header"), "{d}");
    assert!(d.contains("1 bad extension header"), "{d}");
    // Too big and no output 1: dropped, counted.
    let mut r2 = router("i :: TestInject -> f :: IP6Fragmenter(56) -> o :: TestCapture");
    let pkt = ip6(
        A,
        B,
        NH_HOPOPTS,
        64,
        &[[NH_UDP, 0].as_slice(), &[0; 30]].concat(),
    );
    inject(&mut r2, "i", Packet::from_bytes(&pkt));
    assert_eq!(read(&mut r2, "f.drops"), "1");
    assert_eq!(drops(&mut r2), 1);
    let e = config_error("Idle -> IP6Fragmenter(55) -> Discard");
    assert!(e.contains("at least 56"), "{e}");
}

#[test]
fn check_length_splits_by_length() {
    let mut r = router(
        "i :: TestInject -> c :: CheckLength(60) -> o :: TestCapture; c[1] -> big :: TestCapture;
         i2 :: TestInject -> c2 :: CheckLength(60) -> o2 :: TestCapture;
         i3 :: TestInject -> q :: Queue -> c3 :: CheckLength(10) -> s :: Discard(ACTIVE false);
         c3[1] -> big3 :: TestCapture;",
    );
    for n in [0, 59, 60, 61, 1500] {
        inject(&mut r, "i", Packet::new(n));
        inject(&mut r, "i2", Packet::new(n));
        inject(&mut r, "i3", Packet::new(n / 5));
    }
    let lens = |v: Vec<Packet>| v.iter().map(Packet::len).collect::<Vec<_>>();
    assert_eq!(lens(taken(&mut r, "o")), vec![0, 59, 60]);
    assert_eq!(lens(taken(&mut r, "big")), vec![61, 1500]);
    assert_eq!(lens(taken(&mut r, "o2")), vec![0, 59, 60]);
    assert_eq!(read(&mut r, "c2.drops"), "2");
    assert_eq!(read(&mut r, "c.length"), "60");
    r.write_path("c.length", "1500").unwrap();
    inject(&mut r, "i", Packet::new(1500));
    assert_eq!(taken(&mut r, "o").len(), 1);
    // Pull: long packets are pushed out of output 1, the others returned.
    assert_eq!(lens(pull(&mut r, "s", 0, 10)), vec![0]);
    assert_eq!(lens(taken(&mut r, "big3")), vec![11, 12, 12, 300]);
}

#[test]
fn ip6_print_passes_packets_unchanged() {
    let mut r = router(
        "i :: TestInject -> IP6Print(x, CONTENTS true, NBYTES 30) -> IP6Print -> o :: TestCapture",
    );
    let p = udp6(A, B, 64, 4);
    inject_all(&mut r, "i", &[p.clone(), p[..10].to_vec(), Vec::new()]);
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 3);
    assert_eq!(o[0].data(), &p[..]);
    assert_eq!(drops(&mut r), 0);
}

/// Hostile inputs through every element: each packet leaves or is counted as a drop (the
/// fragmenters, which may turn one packet into several, must not panic).
#[test]
fn hostile_packets_are_passed_or_counted() {
    let base = udp6(A, B, 1, 40);
    let mut inputs: Vec<Vec<u8>> = (0..base.len()).map(|n| base[..n].to_vec()).collect();
    for i in 0..48 {
        let mut v = base.clone();
        v[i] ^= 0xff;
        inputs.push(v);
    }
    for nh in [NH_HOPOPTS, NH_ROUTING, NH_DSTOPTS, NH_FRAGMENT] {
        for len in [0u8, 1, 0xff] {
            let mut v = ip6(A, B, NH_HOPOPTS, 64, &[nh, len, 0, 0, 0, 0, 0, 0]);
            v.extend_from_slice(&[nh; 120]);
            v[4..6].copy_from_slice(&128u16.to_be_bytes());
            inputs.push(v);
        }
    }
    for elements in [
        "CheckIP6Header",
        "MarkIP6Header -> DecIP6HLIM",
        "GetIP6Address(24)",
        "SetIP6DSCP(10)",
        "IP6Mirror",
        "IP6Print(CONTENTS true)",
        "IP6Encap(udp, ::, DST_ANNO)",
        "CheckLength(44)",
        "CheckIP6Header -> DecIP6HLIM -> IP6Fragmenter(1280)",
    ] {
        let mut r = router(&format!(
            "i :: TestInject -> {elements} -> o :: TestCapture"
        ));
        inject_all(&mut r, "i", &inputs);
        let out = taken(&mut r, "o").len() as u64;
        assert_eq!(out + drops(&mut r), inputs.len() as u64, "{elements}");
    }
    for mtu in [56, 64, 100] {
        let mut r = router(&format!(
            "i :: TestInject -> f :: IP6Fragmenter({mtu}) -> o :: TestCapture"
        ));
        inject_all(&mut r, "i", &inputs);
        let out = taken(&mut r, "o");
        assert!(out.iter().all(|p| p.len() <= mtu || p.len() < 40));
        assert!(drops(&mut r) > 0);
    }
}
