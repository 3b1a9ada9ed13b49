//! Behaviour tests of the ICMPv6 and neighbour discovery elements (ICMP6Error,
//! ICMP6PingResponder, IP6NDSolicitor, IP6NDAdvertiser) through small configurations. Packets
//! are built byte by byte here, and checksums checked with this file's own sum.

use std::net::Ipv6Addr;

use sluice_core::{Packet, PacketType, Timestamp};
use sluice_testkit::{config_error, inject, read, router, taken, Kit};

const R: &str = "2001:db8::1";
const H: &str = "2001:db8::2";
const RLL: &str = "fe80::ff:fe00:1";
const MR: [u8; 6] = [2, 0, 0, 0, 0, 1];
const MH: [u8; 6] = [2, 0, 0, 0, 0, 2];

fn a(s: &str) -> [u8; 16] {
    s.parse::<Ipv6Addr>().unwrap().octets()
}

/// The ones'-complement sum of `b` (odd length padded), not folded.
fn sum(b: &[u8]) -> u32 {
    b.chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum()
}

fn fold(mut s: u32) -> u16 {
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

/// The ICMPv6 checksum of `msg` (its checksum field zero) from `src` to `dst`.
fn icmp6_sum(src: &[u8], dst: &[u8], msg: &[u8]) -> u32 {
    sum(src) + sum(dst) + (msg.len() as u32) + 58 + sum(msg)
}

/// True if the IPv6 packet `p` holds an ICMPv6 message with a valid checksum.
fn icmp6_ok(p: &[u8]) -> bool {
    p[6] == 58 && fold(icmp6_sum(&p[8..24], &p[24..40], &p[40..])) == 0xffff
}

/// An IPv6 packet.
fn ip6(src: &str, dst: &str, hlim: u8, nh: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0x60, 0, 0, 0];
    v.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    v.extend_from_slice(&[nh, hlim]);
    v.extend_from_slice(&a(src));
    v.extend_from_slice(&a(dst));
    v.extend_from_slice(payload);
    v
}

/// An IPv6 packet holding ICMPv6 message `msg` (checksum filled in).
fn icmp6(src: &str, dst: &str, hlim: u8, msg: &[u8]) -> Vec<u8> {
    let mut m = msg.to_vec();
    m[2..4].fill(0);
    let c = !fold(icmp6_sum(&a(src), &a(dst), &m));
    m[2..4].copy_from_slice(&c.to_be_bytes());
    ip6(src, dst, hlim, 58, &m)
}

/// A UDP packet with `n` payload bytes (UDP checksum left zero: nothing here checks it).
fn udp6(src: &str, dst: &str, n: usize) -> Vec<u8> {
    let mut u = vec![0x13, 0x69, 0x13, 0x69];
    u.extend_from_slice(&((8 + n) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend((0..n).map(|i| i as u8));
    ip6(src, dst, 64, 17, &u)
}

/// A neighbour solicitation or advertisement message.
fn nd_msg(ty: u8, flags: u8, target: &str, opts: &[u8]) -> Vec<u8> {
    let mut m = vec![ty, 0, 0, 0, flags, 0, 0, 0];
    m.extend_from_slice(&a(target));
    m.extend_from_slice(opts);
    m
}

/// A link-layer address option.
fn ll_opt(kind: u8, mac: [u8; 6]) -> Vec<u8> {
    let mut o = vec![kind, 1];
    o.extend_from_slice(&mac);
    o
}

/// An Ethernet frame holding an IPv6 packet.
fn ether(dst: [u8; 6], src: [u8; 6], ip: &[u8]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x86, 0xdd]);
    f.extend_from_slice(ip);
    f
}

/// A neighbour solicitation frame from `src` (MAC `mac`) for `target`, to `dst`.
fn ns(src: &str, mac: [u8; 6], dst: &str, target: &str, opts: &[u8]) -> Vec<u8> {
    let m = nd_msg(135, 0, target, opts);
    ether([0x33, 0x33, 0xff, 0, 0, 1], mac, &icmp6(src, dst, 255, &m))
}

/// A neighbour advertisement frame from `target` at `mac` to `dst`, with flags (R 0x80,
/// S 0x40, O 0x20) and a target link-layer option when `tlla`.
fn na(target: &str, mac: [u8; 6], dst: &str, flags: u8, tlla: bool) -> Vec<u8> {
    let opt = if tlla { ll_opt(2, mac) } else { Vec::new() };
    let m = nd_msg(136, flags, target, &opt);
    ether(MR, mac, &icmp6(target, dst, 255, &m))
}

fn pkt(b: &[u8]) -> Packet {
    Packet::from_bytes(b)
}

fn first_line_count(details: &str, reason: &str) -> u64 {
    details
        .lines()
        .find(|l| l.ends_with(reason))
        .and_then(|l| l.split_whitespace().next())
        .map_or(0, |n| n.parse().unwrap())
}

// ---------------------------------------------------------------------------------------------
// ICMP6Error

#[test]
fn icmp6_error_for_each_type() {
    let mut r = router(
        "i1 :: TestInject -> ICMP6Error(2001:db8::1, unreachable, port) -> o1 :: TestCapture;
         i2 :: TestInject -> e2 :: ICMP6Error(2001:db8::1, toobig, MTU 1400) -> o2 :: TestCapture;
         i3 :: TestInject -> ICMP6Error(2001:db8::1, hoplimit, SET_FIX_ANNO false) -> o3 :: TestCapture;
         i4 :: TestInject -> ICMP6Error(2001:db8::1, parameterproblem, 1) -> o4 :: TestCapture;",
    );
    let orig = udp6(H, "2001:db8:5::9", 30);
    for (i, (ty, code, rest)) in [(1u8, 4u8, 0u32), (2, 0, 1400), (3, 0, 0), (4, 1, 6)]
        .into_iter()
        .enumerate()
    {
        let mut p = pkt(&orig);
        p.anno_mut().param_off = 6;
        inject(&mut r, &format!("i{}", i + 1), p);
        let out = taken(&mut r, &format!("o{}", i + 1));
        assert_eq!(out.len(), 1, "type {ty}");
        let e = out[0].data();
        assert_eq!(e.len(), 40 + 8 + orig.len());
        assert_eq!(e[0] >> 4, 6);
        assert_eq!(u16::from_be_bytes([e[4], e[5]]) as usize, 8 + orig.len());
        assert_eq!((e[6], e[7]), (58, 255));
        assert_eq!(&e[8..24], &a(R));
        assert_eq!(&e[24..40], &a(H));
        assert_eq!((e[40], e[41]), (ty, code));
        assert_eq!(u32::from_be_bytes([e[44], e[45], e[46], e[47]]), rest);
        assert_eq!(&e[48..], &orig[..]);
        assert!(icmp6_ok(e), "type {ty}: checksum");
        assert_eq!(out[0].dst_ip6_anno(), H.parse::<Ipv6Addr>().unwrap());
        assert_eq!(out[0].anno().fix_ip_src, ty != 3);
        assert_eq!(out[0].network_offset(), Some(0));
    }
    assert_eq!(read(&mut r, "e2.sent"), "1");
    r.write_path("e2.mtu", "1280").unwrap();
    inject(&mut r, "i2", pkt(&orig));
    assert_eq!(
        &taken(&mut r, "o2")[0].data()[44..48],
        &1280u32.to_be_bytes()
    );
}

#[test]
fn icmp6_error_quotes_up_to_the_minimum_mtu() {
    let mut r = router(
        "i :: TestInject -> Strip(14) -> ICMP6Error(2001:db8::1, 1, 0) -> o :: TestCapture;",
    );
    let big = udp6(H, "2001:db8:5::9", 1500);
    let f = ether(MR, MH, &big);
    // Link-level padding beyond the payload length is not quoted.
    let small = udp6(H, "2001:db8:5::9", 2);
    let mut g = ether(MR, MH, &small);
    g.extend_from_slice(&[0xee; 8]);
    let mut p = pkt(&f);
    p.set_network_offset(14);
    inject(&mut r, "i", p);
    inject(&mut r, "i", pkt(&g));
    let out = taken(&mut r, "o");
    assert_eq!(out.len(), 2);
    let e = out[0].data();
    assert_eq!(e.len(), 1280);
    assert_eq!(u16::from_be_bytes([e[4], e[5]]), 1240);
    assert_eq!(&e[48..], &big[..1232]);
    assert!(icmp6_ok(e));
    assert_eq!(&out[1].data()[48..], &small[..]);
}

#[test]
fn icmp6_error_refuses_errors_multicast_and_bad_sources() {
    let mut r = router(
        "i :: TestInject -> e :: ICMP6Error(2001:db8::1, unreachable) -> o :: TestCapture;
         e[1] -> no :: TestCapture;
         i2 :: TestInject -> e2 :: ICMP6Error(2001:db8::1, toobig, MTU 1280) -> o2 :: TestCapture;
         i3 :: TestInject -> e3 :: ICMP6Error(2001:db8::1, parameterproblem, option) -> o3 :: TestCapture;
         i4 :: TestInject -> e4 :: ICMP6Error(2001:db8::1, timeexceeded) -> o4 :: TestCapture;",
    );
    let err = icmp6(H, R, 64, &[1, 4, 0, 0, 0, 0, 0, 0, 1, 2, 3]);
    let redirect = icmp6(H, R, 255, &[137, 0, 0, 0, 0, 0, 0, 0]);
    // An ICMPv6 error behind a hop-by-hop options header.
    let mut hbh = vec![58, 0, 1, 4, 0, 0, 0, 0];
    hbh.extend_from_slice(&[3, 0, 0, 0, 0, 0, 0, 0]);
    let hidden = ip6(H, R, 64, 0, &hbh);
    let truncated_icmp = ip6(H, R, 64, 58, &[1, 0, 0]);
    let echo = icmp6(H, R, 64, &[128, 0, 0, 0, 0, 1, 0, 1]);
    let mut mcast_link = pkt(&udp6(H, R, 4));
    mcast_link.anno_mut().packet_type = PacketType::Multicast;
    for p in [
        pkt(&err),
        pkt(&redirect),
        pkt(&hidden),
        pkt(&truncated_icmp),
        pkt(&udp6("::", R, 4)),
        pkt(&udp6("::1", R, 4)),
        pkt(&udp6("ff02::1", R, 4)),
        pkt(&udp6(H, "ff02::1", 4)),
        mcast_link,
        pkt(&[0x60; 39]),
        pkt(&udp6(H, R, 4)[..39]),
        pkt(&echo),
    ] {
        inject(&mut r, "i", p);
    }
    // Only the echo request (informational) gets an error.
    assert_eq!(taken(&mut r, "o").len(), 1);
    assert_eq!(taken(&mut r, "no").len(), 11);
    assert_eq!(read(&mut r, "e.drops"), "11");
    let d = read(&mut r, "e.drop_details");
    assert_eq!(first_line_count(&d, "ICMPv6 error"), 4, "{d}");
    assert_eq!(first_line_count(&d, "bad source address"), 3, "{d}");
    assert_eq!(first_line_count(&d, "multicast destination"), 2, "{d}");
    assert_eq!(first_line_count(&d, "bad IPv6 header"), 2, "{d}");
    // Packet too big answers a multicast destination.
    inject(&mut r, "i2", pkt(&udp6(H, "ff0e::1", 1400)));
    let o2 = taken(&mut r, "o2");
    assert_eq!(o2.len(), 1);
    assert_eq!(o2[0].len(), 1280);
    // Parameter problem code 2 answers a multicast destination only for options whose type
    // starts with bits 10.
    let opts = [17u8, 0, 0x80, 0, 1, 0, 0, 0];
    for ty in [0x80u8, 0x40] {
        let mut o = opts;
        o[2] = ty;
        let mut p = pkt(&ip6(H, "ff0e::1", 64, 60, &o));
        p.anno_mut().param_off = 42;
        inject(&mut r, "i3", p);
    }
    let o3 = taken(&mut r, "o3");
    assert_eq!(o3.len(), 1);
    assert_eq!(&o3[0].data()[44..48], &42u32.to_be_bytes());
    assert_eq!(read(&mut r, "e3.drops"), "1");
    // Without output 1 a refused packet is dropped, counted by the router too.
    inject(&mut r, "i4", pkt(&err));
    assert_eq!(read(&mut r, "e4.drops"), "1");
    assert!(taken(&mut r, "o4").is_empty());
}

#[test]
fn icmp6_error_redirect_carries_target_and_redirected_header() {
    let mut r = router("i :: TestInject -> ICMP6Error(fe80::1, redirect) -> o :: TestCapture;");
    let orig = udp6(H, "2001:db8:5::9", 3);
    let mut p = pkt(&orig);
    p.set_dst_ip6_anno("fe80::9".parse().unwrap());
    inject(&mut r, "i", p);
    let out = taken(&mut r, "o");
    let e = out[0].data();
    assert_eq!(e[40], 137);
    assert_eq!(&e[48..64], &a("fe80::9"));
    assert_eq!(&e[64..80], &a("2001:db8:5::9"));
    // Option: type 4, length in 8-byte units, 6 reserved bytes, packet, zero padding.
    let padded = orig.len().next_multiple_of(8);
    assert_eq!(e[80], 4);
    assert_eq!(e[81] as usize, (8 + padded) / 8);
    assert_eq!(&e[88..88 + orig.len()], &orig[..]);
    assert_eq!(e.len(), 88 + padded);
    assert!(icmp6_ok(e));
}

#[test]
fn icmp6_error_configuration() {
    let e = config_error("Idle -> ICMP6Error(2001:db8::1, 128) -> Discard");
    assert!(
        e.contains("ICMP6 type 128 is not an error or redirect type"),
        "{e}"
    );
    let e = config_error("Idle -> ICMP6Error(2001:db8::1, bogus) -> Discard");
    assert!(e.contains("TYPE: expected ICMPv6 type"), "{e}");
    let e = config_error("Idle -> ICMP6Error(2001:db8::1, toobig, nosuchcode) -> Discard");
    assert!(e.contains("CODE: expected ICMPv6 code"), "{e}");
    let e = config_error("Idle -> ICMP6Error(198.18.0.1, toobig) -> Discard");
    assert!(e.contains("SRC: expected IPv6 address"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// ICMP6PingResponder

#[test]
fn ping_responder_answers_echo_requests() {
    let mut r = router(
        "i :: TestInject -> p :: ICMP6PingResponder -> o :: TestCapture; p[1] -> no :: TestCapture;
         i2 :: TestInject -> p2 :: ICMP6PingResponder -> o2 :: TestCapture;",
    );
    let req = icmp6(
        H,
        R,
        64,
        &[128, 0, 0, 0, 0x12, 0x34, 0, 7, b'h', b'i', b'!'],
    );
    inject(&mut r, "i", pkt(&req));
    let out = taken(&mut r, "o");
    assert_eq!(out.len(), 1);
    let e = out[0].data();
    assert_eq!(&e[8..24], &a(R));
    assert_eq!(&e[24..40], &a(H));
    assert_eq!((e[7], e[40], e[41]), (255, 129, 0));
    assert_eq!(&e[44..], &req[44..]);
    assert!(icmp6_ok(e));
    assert_eq!(out[0].dst_ip6_anno(), H.parse::<Ipv6Addr>().unwrap());
    let mut badsum = req.clone();
    badsum[50] ^= 1;
    let others = [
        icmp6(H, R, 64, &[129, 0, 0, 0, 0, 1, 0, 1]),
        udp6(H, R, 8),
        icmp6(H, "ff02::1", 64, &[128, 0, 0, 0, 0, 1, 0, 1]),
        icmp6("ff02::2", R, 64, &[128, 0, 0, 0, 0, 1, 0, 1]),
        badsum,
        req[..30].to_vec(),
    ];
    for o in &others {
        inject(&mut r, "i", pkt(o));
        inject(&mut r, "i2", pkt(o));
    }
    assert_eq!(taken(&mut r, "no").len(), others.len());
    assert_eq!(read(&mut r, "p.drops"), "0");
    assert_eq!(read(&mut r, "p.replies"), "1");
    assert!(taken(&mut r, "o2").is_empty());
    assert_eq!(read(&mut r, "p2.drops"), "6");
    let d = read(&mut r, "p2.drop_details");
    assert_eq!(first_line_count(&d, "not an echo request"), 2, "{d}");
    assert_eq!(first_line_count(&d, "multicast destination"), 1, "{d}");
    assert_eq!(first_line_count(&d, "bad source address"), 1, "{d}");
    assert_eq!(first_line_count(&d, "bad ICMPv6 checksum"), 1, "{d}");
    assert_eq!(first_line_count(&d, "bad IPv6 header"), 1, "{d}");
}

// ---------------------------------------------------------------------------------------------
// IP6NDAdvertiser

const ADV: &str =
    "i :: TestInject -> adv :: IP6NDAdvertiser(2001:db8::1 fe80::ff:fe00:1 02:00:00:00:00:01,
                                        2001:db8:0:1::/64 02:00:00:00:00:01) -> o :: TestCapture;
                   adv[1] -> no :: TestCapture;";

/// Checks an advertisement frame: Ethernet `edst`, from `target` at MR to `dst`, flags.
fn check_na(f: &[u8], edst: [u8; 6], target: &str, dst: &str, flags: u8) {
    assert_eq!(&f[..6], &edst);
    assert_eq!(&f[6..12], &MR);
    assert_eq!(&f[12..14], &[0x86, 0xdd]);
    let ip = &f[14..];
    assert_eq!(ip.len(), 40 + 32);
    assert_eq!((ip[6], ip[7]), (58, 255));
    assert_eq!(&ip[8..24], &a(target));
    assert_eq!(&ip[24..40], &a(dst));
    assert_eq!((ip[40], ip[41], ip[44]), (136, 0, flags));
    assert_eq!(&ip[48..64], &a(target));
    assert_eq!(&ip[64..66], &[2, 1]);
    assert_eq!(&ip[66..72], &MR);
    assert!(icmp6_ok(ip));
}

#[test]
fn advertiser_answers_solicitations() {
    let mut r = router(ADV);
    // Address resolution: multicast NS with a source link-layer option.
    let opt = ll_opt(1, [2, 0, 0, 0, 0, 0x22]);
    inject(&mut r, "i", pkt(&ns(H, MH, "ff02::1:ff00:1", R, &opt)));
    // NUD: unicast NS for the link-local address, no option: answered to the frame source.
    inject(&mut r, "i", pkt(&ns("fe80::2", MH, RLL, RLL, &[])));
    // DAD probe for a taken address: answered to all-nodes, not solicited.
    inject(&mut r, "i", pkt(&ns("::", MH, "ff02::1:ff00:1", R, &[])));
    // A proxied address: no override flag.
    inject(
        &mut r,
        "i",
        pkt(&ns(H, MH, "ff02::1:ff00:5", "2001:db8:0:1::5", &[])),
    );
    let out = taken(&mut r, "o");
    assert_eq!(out.len(), 4);
    check_na(out[0].data(), [2, 0, 0, 0, 0, 0x22], R, H, 0xe0);
    check_na(out[1].data(), MH, RLL, "fe80::2", 0xe0);
    check_na(out[2].data(), [0x33, 0x33, 0, 0, 0, 1], R, "ff02::1", 0xa0);
    check_na(out[3].data(), MH, "2001:db8:0:1::5", H, 0xc0);
    assert_eq!(out[0].network_offset(), Some(14));
    assert_eq!(read(&mut r, "adv.replies"), "4");
    let t = read(&mut r, "adv.table");
    assert_eq!(t.lines().count(), 3, "{t}");
    assert!(
        t.lines().last().unwrap().starts_with("2001:db8:0:1::/64"),
        "{t}"
    );
    let mut r = router(
        "i :: TestInject -> IP6NDAdvertiser(ROUTER false, 2001:db8::1 02:00:00:00:00:01) -> o :: TestCapture;",
    );
    inject(&mut r, "i", pkt(&ns(H, MH, "ff02::1:ff00:1", R, &[])));
    check_na(taken(&mut r, "o")[0].data(), MH, R, H, 0x60);
}

#[test]
fn advertiser_rejects_hostile_solicitations() {
    let mut r = router(ADV);
    let good = ns(H, MH, "ff02::1:ff00:1", R, &[]);
    let mut bad_hlim = good.clone();
    bad_hlim[14 + 7] = 64;
    let mut bad_sum = good.clone();
    bad_sum[14 + 42] ^= 0x55;
    let mut code1 = nd_msg(135, 0, R, &[]);
    code1[1] = 1;
    let code1 = ether(MR, MH, &icmp6(H, R, 255, &code1));
    // An option claiming 16 bytes where 8 remain; a zero-length option.
    let overrun = ns(H, MH, R, R, &[1, 2, 0, 0, 0, 0, 0, 2]);
    let zero = ns(H, MH, R, R, &[1, 0, 0, 0, 0, 0, 0, 2]);
    // An option of an unknown type (a nonce, RFC 3971) is skipped.
    let nonce = ns(H, MH, R, R, &[14, 1, 1, 2, 3, 4, 5, 6]);
    let short_ns = ether(MR, MH, &icmp6(H, R, 255, &nd_msg(135, 0, R, &[])[..20]));
    let mcast_target = ns(H, MH, R, "ff02::1", &[]);
    let dad_unicast = ns("::", MH, R, R, &[]);
    let dad_with_sll = ns("::", MH, "ff02::1:ff00:1", R, &ll_opt(1, MH));
    let truncated = ether(MR, MH, &icmp6(H, R, 255, &nd_msg(135, 0, R, &[]))[..60]);
    let mut short_ip = good.clone();
    short_ip.truncate(14 + 30);
    let arp = {
        let mut f = good.clone();
        f[12..14].copy_from_slice(&[8, 6]);
        f
    };
    let na_frame = na(H, MH, R, 0x40, true);
    let unknown = ns(H, MH, "ff02::1:ff00:9", "2001:db8::9", &[]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (bad_hlim, "hop limit not 255"),
        (bad_sum, "bad ICMPv6 checksum"),
        (code1, "invalid solicitation"),
        (overrun, "malformed solicitation"),
        (zero, "malformed solicitation"),
        (mcast_target, "invalid solicitation"),
        (dad_unicast, "invalid solicitation"),
        (dad_with_sll, "invalid solicitation"),
        (truncated, "malformed solicitation"),
        (short_ns, "malformed solicitation"),
        (short_ip, "malformed solicitation"),
        (good[..10].to_vec(), "malformed solicitation"),
        (arp, "not a neighbour solicitation"),
        (na_frame, "not a neighbour solicitation"),
        (unknown, "unknown target"),
    ];
    for (f, _) in &cases {
        inject(&mut r, "i", pkt(f));
    }
    inject(&mut r, "i", pkt(&nonce));
    assert_eq!(taken(&mut r, "o").len(), 1);
    assert_eq!(taken(&mut r, "no").len(), cases.len());
    let d = read(&mut r, "adv.drop_details");
    for reason in [
        "hop limit not 255",
        "bad ICMPv6 checksum",
        "invalid solicitation",
        "malformed solicitation",
        "not a neighbour solicitation",
        "unknown target",
    ] {
        let n = cases.iter().filter(|c| c.1 == reason).count() as u64;
        assert_eq!(first_line_count(&d, reason), n, "{reason}: {d}");
    }
}

#[test]
fn advertiser_configuration() {
    let e = config_error("Idle -> IP6NDAdvertiser(2001:db8::1) -> Discard");
    assert!(e.contains("argument 0: no Ethernet address"), "{e}");
    let e = config_error("Idle -> IP6NDAdvertiser(02:00:00:00:00:01) -> Discard");
    assert!(e.contains("argument 0: no IPv6 address"), "{e}");
    let e = config_error(
        "Idle -> IP6NDAdvertiser(2001:db8::1 02:00:00:00:00:01 02:00:00:00:00:02) -> Discard",
    );
    assert!(e.contains("more than one Ethernet address"), "{e}");
}

// ---------------------------------------------------------------------------------------------
// IP6NDSolicitor

const SOL: &str = "i :: TestInject -> nds :: IP6NDSolicitor(2001:db8::1, 02:00:00:00:00:01 KEYWORDS)
                     -> o :: TestCapture;
                   nds[1] -> q :: TestCapture; ni :: TestInject -> [1]nds;
                   ai :: TestInject -> IP6NDAdvertiser(2001:db8::2 02:00:00:00:00:02) -> na :: TestCapture;";

fn sol(keywords: &str) -> sluice_core::Router {
    router(&SOL.replace(" KEYWORDS", keywords))
}

/// A UDP packet to `dst` with next hop `nh` in its annotation, tagged by its length.
fn to(dst: &str, nh: &str, tag: usize) -> Packet {
    let mut p = pkt(&udp6(R, dst, tag));
    p.set_dst_ip6_anno(nh.parse().unwrap());
    p
}

/// Checks a solicitation frame for `target`, multicast (`probe` None) or a unicast probe.
fn check_ns(f: &[u8], target: &str, probe: Option<[u8; 6]>) {
    let t = a(target);
    let (edst, dst) = match probe {
        Some(m) => (m, t),
        None => {
            let mut d = a("ff02::1:ff00:0");
            d[13..].copy_from_slice(&t[13..]);
            ([0x33, 0x33, 0xff, t[13], t[14], t[15]], d)
        }
    };
    assert_eq!(&f[..6], &edst);
    assert_eq!(&f[6..12], &MR);
    let ip = &f[14..];
    assert_eq!(ip.len(), 40 + 32);
    assert_eq!((ip[6], ip[7]), (58, 255));
    assert_eq!(&ip[8..24], &a(R));
    assert_eq!(&ip[24..40], &dst);
    assert_eq!((ip[40], ip[41]), (135, 0));
    assert_eq!(&ip[48..64], &t);
    assert_eq!(&ip[64..66], &[1, 1]);
    assert_eq!(&ip[66..72], &MR);
    assert!(icmp6_ok(ip));
}

/// The UDP payload length of IPv6 packet frames: the tags of [`to`].
fn tags(out: &[Packet]) -> Vec<usize> {
    out.iter()
        .map(|p| u16::from_be_bytes([p.data()[14 + 44], p.data()[14 + 45]]) as usize - 8)
        .collect()
}

#[test]
fn solicitor_and_advertiser_resolve_a_next_hop() {
    let mut r = sol("");
    inject(&mut r, "i", to("2001:db8:9::1", H, 1));
    inject(&mut r, "i", to("2001:db8:9::2", H, 2));
    assert!(taken(&mut r, "o").is_empty());
    // One solicitation for both packets.
    let q = taken(&mut r, "q");
    assert_eq!(q.len(), 1);
    check_ns(q[0].data(), H, None);
    assert_eq!(read(&mut r, "nds.length"), "2");
    assert!(read(&mut r, "nds.table").starts_with("2001:db8::2 0 00-00-00-00-00-00"));
    // The advertiser answers it; the answer releases the packets, in order.
    inject(&mut r, "ai", q.into_iter().next().unwrap());
    let na = taken(&mut r, "na");
    assert_eq!(na.len(), 1);
    inject(&mut r, "ni", na.into_iter().next().unwrap());
    let out = taken(&mut r, "o");
    assert_eq!(tags(&out), [1, 2]);
    for p in &out {
        assert_eq!(&p.data()[..6], &MH);
        assert_eq!(&p.data()[6..12], &MR);
        assert_eq!(&p.data()[12..14], &[0x86, 0xdd]);
    }
    // Now known: packets leave at once; the IPv6 destination stands in for a missing
    // annotation; multicast needs no resolution.
    inject(&mut r, "i", to("2001:db8:9::1", H, 3));
    inject(&mut r, "i", pkt(&udp6(R, H, 4)));
    inject(&mut r, "i", to("ff02::1:2", "::", 5));
    let out = taken(&mut r, "o");
    assert_eq!(tags(&out), [3, 4, 5]);
    assert_eq!(&out[2].data()[..6], &[0x33, 0x33, 0, 1, 0, 2]);
    assert!(taken(&mut r, "q").is_empty());
    assert!(read(&mut r, "nds.table").starts_with("2001:db8::2 1 02-00-00-00-00-02"));
    assert_eq!(read(&mut r, "nds.queries"), "1");
    assert_eq!(read(&mut r, "nds.responses"), "1");
    assert_eq!(read(&mut r, "nds.drops"), "0");
    assert_eq!(
        read(&mut r, "nds.stats"),
        "0 packets killed\n1 ND Solicitation Message sent"
    );
}

#[test]
fn solicitor_retransmits_then_gives_up() {
    let mut r = sol(", RETRANSMIT 0.5, MAX_SOLICIT 4");
    inject(&mut r, "i", to("2001:db8:9::1", H, 1));
    inject(&mut r, "i", to("2001:db8:9::1", "2001:db8::3", 2));
    r.run_until_idle();
    let q = taken(&mut r, "q");
    // Four solicitations for each next hop, every half second, then the packets go.
    assert_eq!(q.len(), 8);
    for target in [H, "2001:db8::3"] {
        let mine: Vec<_> = q
            .iter()
            .filter(|p| p.data()[14 + 48..14 + 64] == a(target))
            .collect();
        assert_eq!(mine.len(), 4, "{target}");
        check_ns(mine[3].data(), target, None);
    }
    assert_eq!(read(&mut r, "nds.count"), "0");
    assert_eq!(read(&mut r, "nds.length"), "0");
    assert!(read(&mut r, "nds.drop_details").contains("2 unresolved"));
    assert!(taken(&mut r, "o").is_empty());
    // The next packet starts again.
    inject(&mut r, "i", to("2001:db8:9::1", H, 3));
    assert_eq!(taken(&mut r, "q").len(), 1);
    r.cleanup();
    assert!(read(&mut r, "nds.drop_details").contains("1 unresolved at stop"));
    assert_eq!(read(&mut r, "nds.drops"), "3");
}

#[test]
fn solicitor_limits_waiting_packets() {
    let mut r = sol(", ENTRY_PACKET_CAPACITY 2, CAPACITY 3");
    for t in 1..=3 {
        inject(&mut r, "i", to("2001:db8:9::1", H, t));
    }
    for t in 4..=6 {
        inject(&mut r, "i", to("2001:db8:9::1", "2001:db8::3", t));
    }
    // No destination at all.
    inject(&mut r, "i", pkt(&udp6(R, "::", 1)));
    inject(&mut r, "i", pkt(&[0u8; 10]));
    assert_eq!(read(&mut r, "nds.length"), "3");
    let d = read(&mut r, "nds.drop_details");
    assert!(d.contains("3 queue full"), "{d}");
    assert!(d.contains("2 no destination"), "{d}");
    inject(&mut r, "ni", pkt(&na(H, MH, R, 0x60, true)));
    assert_eq!(tags(&taken(&mut r, "o")), [1, 2]);
    r.write_path("nds.insert", "2001:db8::3 02:00:00:00:00:03")
        .unwrap();
    let out = taken(&mut r, "o");
    assert_eq!(tags(&out), [4]);
    assert_eq!(&out[0].data()[..6], &[2, 0, 0, 0, 0, 3]);
    assert_eq!(read(&mut r, "nds.count"), "2");
}

#[test]
fn solicitor_expires_and_probes_entries() {
    let mut r = sol(", TIMEOUT 10, POLL_TIMEOUT 4");
    let start = r.clock().now();
    let at = |s: f64| start + Timestamp::from_secs_f64(s);
    r.write_path("nds.insert", "2001:db8::2 02:00:00:00:00:02")
        .unwrap();
    inject(&mut r, "i", to("2001:db8:9::1", H, 1));
    assert_eq!(taken(&mut r, "o").len(), 1);
    assert!(taken(&mut r, "q").is_empty());
    // Past POLL_TIMEOUT: the packet leaves, after a unicast probe; one probe per RETRANSMIT.
    r.clock().advance_to(at(5.0));
    inject(&mut r, "i", to("2001:db8:9::1", H, 2));
    inject(&mut r, "i", to("2001:db8:9::1", H, 3));
    assert_eq!(tags(&taken(&mut r, "o")), [2, 3]);
    let q = taken(&mut r, "q");
    assert_eq!(q.len(), 1);
    check_ns(q[0].data(), H, Some(MH));
    // A solicited answer confirms the entry: no probe until POLL_TIMEOUT later.
    inject(&mut r, "ni", pkt(&na(H, MH, R, 0x40, false)));
    r.clock().advance_to(at(8.0));
    inject(&mut r, "i", to("2001:db8:9::1", H, 4));
    assert!(taken(&mut r, "q").is_empty());
    // Unconfirmed for TIMEOUT: the entry expires and the next packet waits again.
    r.clock().advance_to(at(16.0));
    inject(&mut r, "i", to("2001:db8:9::1", H, 5));
    assert!(read(&mut r, "nds.table").starts_with("2001:db8::2 0"));
    let q = taken(&mut r, "q");
    check_ns(q[0].data(), H, None);
    assert_eq!(tags(&taken(&mut r, "o")), [4]);
    // The timer removes expired entries once nothing waits.
    inject(&mut r, "ni", pkt(&na(H, MH, R, 0x40, true)));
    assert_eq!(tags(&taken(&mut r, "o")), [5]);
    r.run_until_idle();
    assert_eq!(read(&mut r, "nds.count"), "0");
    assert_eq!(read(&mut r, "nds.drops"), "0");
}

#[test]
fn solicitor_follows_override_rules() {
    let mut r = sol("");
    let other = [2, 0, 0, 0, 0, 0x99];
    inject(&mut r, "i", to("2001:db8:9::1", H, 1));
    // An advertisement for an unknown next hop, and one without a target link-layer
    // address for the waiting one, teach nothing.
    inject(&mut r, "ni", pkt(&na("2001:db8::7", MH, R, 0x60, true)));
    inject(&mut r, "ni", pkt(&na(H, MH, R, 0x60, false)));
    assert_eq!(read(&mut r, "nds.count"), "1");
    assert!(taken(&mut r, "o").is_empty());
    // An unsolicited advertisement (to all nodes) resolves a waiting next hop.
    inject(&mut r, "ni", pkt(&na(H, MH, "ff02::1", 0x00, true)));
    assert_eq!(tags(&taken(&mut r, "o")), [1]);
    // A different address without the override flag is ignored ...
    inject(&mut r, "ni", pkt(&na(H, other, "ff02::1", 0x00, true)));
    assert!(read(&mut r, "nds.table").contains("02-00-00-00-00-02"));
    // ... with it, it replaces the known one.
    inject(&mut r, "ni", pkt(&na(H, other, "ff02::1", 0x20, true)));
    assert!(read(&mut r, "nds.table").contains("02-00-00-00-00-99"));
    inject(&mut r, "i", to("2001:db8:9::1", H, 2));
    assert_eq!(&taken(&mut r, "o")[0].data()[..6], &other);
    assert_eq!(read(&mut r, "nds.responses"), "5");
    r.write_path("nds.delete", H).unwrap();
    assert_eq!(read(&mut r, "nds.count"), "0");
}

#[test]
fn solicitor_drops_hostile_advertisements() {
    let mut r = sol("");
    inject(&mut r, "i", to("2001:db8:9::1", H, 1));
    let good = na(H, MH, R, 0x60, true);
    let mut bad_hlim = good.clone();
    bad_hlim[14 + 7] = 254;
    let mut bad_sum = good.clone();
    bad_sum[14 + 60] ^= 1;
    let zero = {
        let m = nd_msg(136, 0x60, H, &[2, 0, 2, 0, 0, 0, 0, 2]);
        ether(MR, MH, &icmp6(H, R, 255, &m))
    };
    let overrun = {
        let m = nd_msg(136, 0x60, H, &[2, 3, 2, 0, 0, 0, 0, 2]);
        ether(MR, MH, &icmp6(H, R, 255, &m))
    };
    let solicited_to_mcast = na(H, MH, "ff02::1", 0x40, true);
    let mcast_target = na("ff02::5", MH, R, 0x60, true);
    let code1 = {
        let mut m = nd_msg(136, 0x60, H, &ll_opt(2, MH));
        m[1] = 1;
        ether(MR, MH, &icmp6(H, R, 255, &m))
    };
    let truncated = ether(MR, MH, &icmp6(H, R, 255, &nd_msg(136, 0x60, H, &[]))[..62]);
    let ns_frame = ns(H, MH, R, R, &[]);
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (bad_hlim, "hop limit not 255"),
        (bad_sum, "bad ICMPv6 checksum"),
        (zero, "malformed advertisement"),
        (overrun, "malformed advertisement"),
        (truncated, "malformed advertisement"),
        (good[..13].to_vec(), "malformed advertisement"),
        (solicited_to_mcast, "invalid advertisement"),
        (mcast_target, "invalid advertisement"),
        (code1, "invalid advertisement"),
        (ns_frame, "not a neighbour advertisement"),
    ];
    for (f, _) in &cases {
        inject(&mut r, "ni", pkt(f));
    }
    assert!(taken(&mut r, "o").is_empty());
    assert_eq!(read(&mut r, "nds.responses"), "0");
    let d = read(&mut r, "nds.drop_details");
    for reason in [
        "hop limit not 255",
        "bad ICMPv6 checksum",
        "malformed advertisement",
        "invalid advertisement",
        "not a neighbour advertisement",
    ] {
        let n = cases.iter().filter(|c| c.1 == reason).count() as u64;
        assert_eq!(first_line_count(&d, reason), n, "{reason}: {d}");
    }
    // The next hop still resolves.
    inject(&mut r, "ni", pkt(&good));
    assert_eq!(tags(&taken(&mut r, "o")), [1]);
}

#[test]
fn solicitor_configuration() {
    let e = config_error("Idle -> n :: IP6NDSolicitor(2001:db8::1) -> Discard; Idle -> [1]n");
    assert!(e.contains("missing mandatory ETH argument"), "{e}");
    let e = config_error(
        "Idle -> n :: IP6NDSolicitor(2001:db8::1, 02:00:00:00:00:01, RETRANSMIT 0) -> Discard;
         Idle -> [1]n",
    );
    assert!(e.contains("RETRANSMIT must be positive"), "{e}");
    let e = config_error(
        "Idle -> n :: IP6NDSolicitor(2001:db8::1, 02:00:00:00:00:01, MAX_SOLICIT 0) -> Discard;
         Idle -> [1]n",
    );
    assert!(e.contains("MAX_SOLICIT must be at least 1"), "{e}");
}

#[test]
fn solicitor_hot_swap_keeps_its_table() {
    let conf = |ip: &str| {
        format!(
            "i :: TestInject -> nds :: IP6NDSolicitor({ip}, 02:00:00:00:00:01) -> o :: TestCapture;
             nds[1] -> q :: TestCapture; Idle -> [1]nds;"
        )
    };
    let mut r = Kit::sim().hot_swap().router(&conf(R));
    r.write_path("nds.insert", "2001:db8::2 02:00:00:00:00:02")
        .unwrap();
    inject(&mut r, "i", to("2001:db8:9::1", "2001:db8::3", 1));
    r.write_path("hotconfig", &conf(R)).unwrap();
    // The new element took the table, its waiting packet and the counters: its timer
    // retransmits twice and gives up; the known entry expires.
    r.run_until_idle();
    assert_eq!(read(&mut r, "nds.queries"), "3");
    assert_eq!(read(&mut r, "nds.count"), "0");
    assert!(read(&mut r, "nds.drop_details").contains("1 unresolved"));
    // Another address: a fresh table.
    r.write_path("nds.insert", "2001:db8::2 02:00:00:00:00:02")
        .unwrap();
    r.write_path("hotconfig", &conf("2001:db8::9")).unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "nds.count"), "0");
    assert_eq!(read(&mut r, "nds.queries"), "0");
}
