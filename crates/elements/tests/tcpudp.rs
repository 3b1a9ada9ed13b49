//! Behaviour tests of the header checks and checksum setters (tcpudp/, icmp/): packets are
//! injected into a router and captured at its sinks; checksums are computed independently.

mod ip_common;

use ip_common::*;
use sluice_core::Packet;
use sluice_wire::checksum::{checksum, fold, sum16};

/// The transport checksum over the IPv4 pseudo header, computed here from the bytes.
fn pseudo_sum(p: &[u8], proto: u8, len: usize) -> u16 {
    let mut ph = p[12..20].to_vec();
    ph.extend_from_slice(&[0, proto]);
    ph.extend_from_slice(&(len as u16).to_be_bytes());
    fold(sum16(&ph) + sum16(&p[20..20 + len]))
}

/// A TCP packet (20-byte header, flags ACK) with `n` payload bytes and a right checksum.
fn tcp(n: usize) -> Vec<u8> {
    let mut seg = vec![
        0x04, 0x00, 0x00, 0x50, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x10, 0xff, 0xff,
    ];
    seg.extend_from_slice(&[0, 0, 0, 0]);
    seg.extend((0..n).map(|i| i as u8));
    let mut p = ip_packet(A, B, 64, 6, &[], &seg);
    let c = !pseudo_sum(&p, 6, 20 + n);
    p[36..38].copy_from_slice(&c.to_be_bytes());
    p
}

fn with_udp_checksum(mut p: Vec<u8>) -> Vec<u8> {
    let len = p.len() - 20;
    p[26] = 0;
    p[27] = 0;
    let c = !pseudo_sum(&p, 17, len);
    p[26..28].copy_from_slice(&c.to_be_bytes());
    p
}

#[test]
fn check_tcp_header_sorts_by_reason() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> c :: CheckTCPHeader -> ok :: TestCapture; c[1] -> bad :: TestCapture;
         i2 :: TestInject -> MarkIPHeader -> c2 :: CheckTCPHeader(DETAILS true) -> ok2 :: TestCapture;",
    );
    let good = tcp(10);
    assert_eq!(pseudo_sum(&good, 6, 30), 0xffff);
    inject(&mut r, "i", Packet::from_bytes(&good));
    let mut badsum = good.clone();
    badsum[45] ^= 1;
    inject(&mut r, "i", Packet::from_bytes(&badsum));
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 4)));
    let mut badoff = good.clone();
    badoff[32] = 0x40;
    inject(&mut r, "i", Packet::from_bytes(&badoff));
    inject(&mut r, "i", Packet::from_bytes(&good[..good.len() - 1]));
    assert_eq!(taken(&mut r, "ok").len(), 1);
    assert_eq!(taken(&mut r, "bad").len(), 4);
    assert_eq!(h(&mut r, "c.drops"), "4");
    assert_eq!(
        r.read_path("c.drop_details").unwrap(),
        "1\tnot TCP\n2\tbad packet length\n1\tbad TCP checksum\n"
    );
    // Without output 1 a bad packet is dropped, still counted.
    inject(&mut r, "i2", Packet::from_bytes(&badsum));
    assert!(taken(&mut r, "ok2").is_empty());
    assert_eq!(h(&mut r, "c2.drops"), "1");
}

#[test]
fn check_udp_header_accepts_zero_checksum() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> c :: CheckUDPHeader -> ok :: TestCapture; c[1] -> bad :: TestCapture;",
    );
    let none = udp(A, B, 64, 7);
    let good = with_udp_checksum(none.clone());
    let mut badsum = good.clone();
    badsum[30] ^= 0x80;
    let mut badlen = good.clone();
    badlen[25] = 200;
    for p in [&none, &good, &badsum, &badlen, &tcp(0)] {
        inject(&mut r, "i", Packet::from_bytes(p));
    }
    assert_eq!(taken(&mut r, "ok").len(), 2);
    assert_eq!(
        r.read_path("c.drop_details").unwrap(),
        "1\tnot UDP\n1\tbad packet length\n1\tbad UDP checksum\n"
    );
}

#[test]
fn check_icmp_header_lengths_by_type() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> c :: CheckICMPHeader -> ok :: TestCapture; c[1] -> bad :: TestCapture;",
    );
    let icmp = |m: &mut Vec<u8>| {
        let c = checksum(m);
        m[2..4].copy_from_slice(&c.to_be_bytes());
        ip_packet(A, B, 64, 1, &[], m)
    };
    let echo = icmp(&mut vec![8, 0, 0, 0, 0, 1, 0, 1, b'h', b'i']);
    let short_err = icmp(&mut vec![3, 1, 0, 0, 0, 0, 0, 0, 0x45, 0, 0, 20]);
    let mut q = vec![11, 0, 0, 0, 0, 0, 0, 0];
    q.extend_from_slice(&udp(B, A, 1, 0));
    let err = icmp(&mut q);
    let tstamp = icmp(&mut vec![
        13, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
    ]);
    let long_ireq = icmp(&mut vec![15, 0, 0, 0, 0, 1, 0, 1, 0]);
    let mut badsum = echo.clone();
    badsum[29] ^= 1;
    for p in [
        &echo,
        &short_err,
        &err,
        &tstamp,
        &long_ireq,
        &badsum,
        &tcp(0),
    ] {
        inject(&mut r, "i", Packet::from_bytes(p));
    }
    let ok = taken(&mut r, "ok");
    assert_eq!(ok.len(), 3);
    assert_eq!(ok[1].data(), &err[..]);
    assert_eq!(
        r.read_path("c.drop_details").unwrap(),
        "1\tnot ICMP\n2\tbad packet length\n1\tbad ICMP checksum\n"
    );
}

#[test]
fn set_checksums_then_checks_pass() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> st :: SetTCPChecksum -> CheckTCPHeader -> o :: TestCapture;
         i2 :: TestInject -> MarkIPHeader -> su :: SetUDPChecksum -> CheckUDPHeader -> o2 :: TestCapture; su[1] -> no :: TestCapture;
         i3 :: TestInject -> MarkIPHeader -> SetTCPChecksum(true) -> o3 :: TestCapture;",
    );
    let want = tcp(33);
    let mut p = want.clone();
    p[36] = 0xde;
    p[37] = 0xad;
    inject(&mut r, "i", Packet::from_bytes(&p));
    assert_eq!(taken(&mut r, "o")[0].data(), &want[..]);
    inject(&mut r, "i", Packet::from_bytes(&udp(A, B, 64, 0)));
    assert_eq!(h(&mut r, "st.drops"), "1");
    let u = udp(A, B, 64, 9);
    inject(&mut r, "i2", Packet::from_bytes(&u));
    assert_eq!(
        taken(&mut r, "o2")[0].data(),
        &with_udp_checksum(u.clone())[..]
    );
    let mut frag = u.clone();
    frag[6] = 0x20;
    inject(&mut r, "i2", Packet::from_bytes(&frag));
    assert_eq!(taken(&mut r, "no").len(), 1);
    assert_eq!(h(&mut r, "su.drops"), "1");
    // FIXOFF repairs a data offset below 5.
    let mut bad = tcp(4);
    bad[32] = 0x20;
    inject(&mut r, "i3", Packet::from_bytes(&bad));
    let o3 = taken(&mut r, "o3");
    assert_eq!(o3[0].data()[32] >> 4, 5);
    assert_eq!(pseudo_sum(o3[0].data(), 6, 24), 0xffff);
}

#[test]
fn ip_mirror_swaps_addresses_ports_and_sequence_numbers() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> m :: IPMirror -> o :: TestCapture;
         i2 :: TestInject -> MarkIPHeader -> IPMirror(false) -> o2 :: TestCapture;",
    );
    let mut t = tcp(3);
    t[28..32].copy_from_slice(&[0, 0, 0, 9]);
    let c = !pseudo_sum(
        &{
            let mut z = t.clone();
            z[36] = 0;
            z[37] = 0;
            z
        },
        6,
        23,
    );
    t[36..38].copy_from_slice(&c.to_be_bytes());
    inject(&mut r, "i", Packet::from_bytes(&t));
    let o = taken(&mut r, "o");
    let d = o[0].data();
    assert_eq!(
        &d[12..20],
        &[B[0], B[1], B[2], B[3], A[0], A[1], A[2], A[3]]
    );
    assert_eq!(&d[20..24], &[0x00, 0x50, 0x04, 0x00]);
    assert_eq!(&d[24..32], &[0, 0, 0, 9, 0, 0, 0, 1]);
    assert!(header_ok(d));
    assert_eq!(pseudo_sum(d, 6, 23), 0xffff);
    assert_eq!(o[0].dst_ip_anno(), std::net::Ipv4Addr::from(A));
    let mut p = Packet::from_bytes(&udp(A, B, 64, 0));
    p.set_dst_ip_anno(std::net::Ipv4Addr::new(1, 2, 3, 4));
    inject(&mut r, "i2", p);
    let o2 = taken(&mut r, "o2");
    assert_eq!(&o2[0].data()[12..16], &B);
    assert_eq!(o2[0].dst_ip_anno(), std::net::Ipv4Addr::new(1, 2, 3, 4));
    inject(&mut r, "i", Packet::from_bytes(&[0x45; 10]));
    assert_eq!(h(&mut r, "m.drops"), "1");
}
