//! Behaviour tests of UDPIPEncap, ICMPIPEncap and MarkIPCE through real configurations. The
//! expected packets, checksums included, were computed independently of Sluice's code.

use std::net::Ipv4Addr;

use sluice_core::{Packet, Router};
use sluice_testkit::{config_error, inject, read, router, taken};

/// Asserts that the packet data is `expected`, given in hex (white space ignored).
#[track_caller]
fn assert_data(p: &Packet, expected: &str) {
    let want: String = expected.split_whitespace().collect();
    let got: String = p.data().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(got, want);
}

/// Checks the annotations an encapsulating element sets.
#[track_caller]
fn assert_encap_annos(p: &Packet, dst: Ipv4Addr) {
    assert_eq!(p.network_offset(), Some(0));
    assert_eq!(p.transport_offset(), Some(20));
    assert_eq!(p.dst_ip_anno(), dst);
}

/// Injects `n` copies of `payload` into `inject` and returns what reached `capture`.
fn run(r: &mut Router, inject_at: &str, capture: &str, payload: &[u8], n: usize) -> Vec<Packet> {
    for _ in 0..n {
        inject(r, inject_at, Packet::from_bytes(payload));
    }
    taken(r, capture)
}

const DST: Ipv4Addr = Ipv4Addr::new(198, 19, 0, 2);
const HELLO: &str = "68656c6c6f";
const ABCD: &str = "61626364";

#[test]
fn udp_ip_encap_builds_headers_and_checksums() {
    let mut r = router(
        "i :: TestInject -> e :: UDPIPEncap(198.18.0.1, 1234, 198.19.0.2, 5678) -> o :: TestCapture;
         j :: TestInject -> a :: UDPIPEncap(198.18.0.1, 1234, DST_ANNO, 5678, false) -> oa :: TestCapture;",
    );
    let o = run(&mut r, "i", "o", b"hello", 2);
    // TTL 250, protocol 17, identification 0 then 1; UDP length 13, checksum 0x14d9.
    assert_data(
        &o[0],
        &format!("4500002100000000fa1134a3c6120001c6130002 04d2162e000d14d9 {HELLO}"),
    );
    assert_data(
        &o[1],
        &format!("4500002100010000fa1134a2c6120001c6130002 04d2162e000d14d9 {HELLO}"),
    );
    assert_encap_annos(&o[0], DST);

    let dst = Ipv4Addr::new(198, 19, 0, 9);
    let mut p = Packet::from_bytes(b"hello");
    p.set_dst_ip_anno(dst);
    inject(&mut r, "j", p);
    let o = taken(&mut r, "oa");
    // Destination from the annotation; no UDP checksum.
    assert_data(
        &o[0],
        &format!("4500002100000000fa11349cc6120001c6130009 04d2162e000d0000 {HELLO}"),
    );
    assert_encap_annos(&o[0], dst);
    assert_eq!(read(&mut r, "a.dst"), "DST_ANNO");
}

#[test]
fn udp_ip_encap_handlers() {
    let mut r = router(
        "i :: TestInject -> e :: UDPIPEncap(198.18.0.1, 1234, 198.19.0.2, 5678, CHECKSUM true) -> o :: TestCapture;",
    );
    assert_eq!(read(&mut r, "e.src"), "198.18.0.1");
    assert_eq!(read(&mut r, "e.sport"), "1234");
    assert_eq!(read(&mut r, "e.dst"), "198.19.0.2");
    assert_eq!(read(&mut r, "e.dport"), "5678");
    inject(&mut r, "i", Packet::from_bytes(b"hello"));
    r.write_path("e.dst", "198.19.0.9").unwrap();
    let o = run(&mut r, "i", "o", b"hello", 1);
    // Identification 1, destination 198.19.0.9; the checksum follows the new pseudo-header.
    assert_data(
        &o[1],
        &format!("4500002100010000fa11349bc6120001c6130009 04d2162e000d14d2 {HELLO}"),
    );
    r.write_path("e.sport", "53").unwrap();
    r.write_path("e.dport", "0x35").unwrap();
    r.write_path("e.src", "198.18.0.7").unwrap();
    r.write_path("e.dst", "DST_ANNO").unwrap();
    assert_eq!(read(&mut r, "e.sport"), "53");
    assert_eq!(read(&mut r, "e.dport"), "53");
    assert_eq!(read(&mut r, "e.src"), "198.18.0.7");
    assert_eq!(read(&mut r, "e.dst"), "DST_ANNO");
    assert!(r.write_path("e.sport", "65536").is_err());
    assert!(r.write_path("e.src", "bogus").is_err());
    r.write_path("e.sport", "www").unwrap();
    assert_eq!(read(&mut r, "e.sport"), "80");
    assert!(r.write_path("e.dport", "nosuchservice").is_err());
    let mut named = router(
        "TestInject -> e :: UDPIPEncap(198.18.0.1, domain, 198.19.0.2, ntp) -> TestCapture;",
    );
    assert_eq!(read(&mut named, "e.sport"), "53");
    assert_eq!(read(&mut named, "e.dport"), "123");

    for (conf, arg) in [
        ("198.18.0.1, 70000, 198.19.0.2, 1", "SPORT"),
        ("198.18.0.1, 1, nowhere, 1", "DST"),
        ("198.18.0.1, 1, 198.19.0.2", "DPORT"),
        ("198.18.0.1, 1, 198.19.0.2, 1, maybe", "CHECKSUM"),
    ] {
        let e = config_error(&format!("TestInject -> UDPIPEncap({conf}) -> Discard"));
        assert!(e.contains(arg), "{}", e);
    }
}

#[test]
fn icmp_ip_encap_echo_counts_sequence_numbers() {
    let mut r = router(
        "i :: TestInject -> e :: ICMPIPEncap(198.18.0.1, 198.19.0.2, echo, IDENTIFIER 0x1234) -> o :: TestCapture;",
    );
    let o = run(&mut r, "i", "o", b"abcd", 2);
    // TTL 255, protocol 1; identification = sequence number, from 1.
    assert_data(
        &o[0],
        &format!("4500002000010000ff012fb3c6120001c6130002 0800210412340001 {ABCD}"),
    );
    assert_data(
        &o[1],
        &format!("4500002000020000ff012fb2c6120001c6130002 0800210312340002 {ABCD}"),
    );
    assert_encap_annos(&o[0], DST);
}

#[test]
fn icmp_ip_encap_types_and_codes() {
    let mut r = router(
        "i :: TestInject -> ICMPIPEncap(198.18.0.1, 198.19.0.2, unreachable, port) -> o :: TestCapture;
         t :: TestInject -> ICMPIPEncap(198.18.0.1, 198.19.0.2, 13, 0, 5, 7) -> ot :: TestCapture;
         w :: TestInject -> ICMPIPEncap(198.18.0.1, 198.19.0.2, echo-reply, SEQUENCE_NUMBER 0xffff) -> ow :: TestCapture;",
    );
    // No identifier or sequence number in an unreachable message.
    let o = run(&mut r, "i", "o", b"abcd", 1);
    assert_data(
        &o[0],
        &format!("4500002000010000ff012fb3c6120001c6130002 0303383600000000 {ABCD}"),
    );
    // A timestamp request has a 20-byte header: three zero timestamps.
    let o = run(&mut r, "t", "ot", b"abcd", 1);
    assert_data(
        &o[0],
        &format!(
            "4500002c00070000ff012fa1c6120001c6130002 0d002e2d00050007 {} {ABCD}",
            "00".repeat(12)
        ),
    );
    assert_eq!(o[0].transport_offset(), Some(20));
    // The sequence number (and IP identification) wraps from 65535 to 1.
    let o = run(&mut r, "w", "ow", b"", 2);
    assert_data(
        &o[0],
        "4500001cffff0000ff012fb8c6120001c6130002 000000000000ffff",
    );
    assert_data(
        &o[1],
        "4500001c00010000ff012fb7c6120001c6130002 0000fffe00000001",
    );
}

#[test]
fn icmp_ip_encap_handlers_and_errors() {
    let mut r = router(
        "i :: TestInject -> e :: ICMPIPEncap(198.18.0.1, 198.19.0.2, echo) -> o :: TestCapture;",
    );
    assert_eq!(read(&mut r, "e.src"), "198.18.0.1");
    assert_eq!(read(&mut r, "e.dst"), "198.19.0.2");
    r.write_path("e.src", "198.18.0.7").unwrap();
    r.write_path("e.dst", "198.19.0.9").unwrap();
    assert_eq!(read(&mut r, "e.dst"), "198.19.0.9");
    let o = run(&mut r, "i", "o", b"", 1);
    assert_data(
        &o[0],
        "4500001c00010000ff012faac6120007c6130009 0800f7fe00000001",
    );
    assert_encap_annos(&o[0], Ipv4Addr::new(198, 19, 0, 9));
    r.write_path("e.dst", "DST_ANNO").unwrap();
    let mut p = Packet::from_bytes(b"");
    p.set_dst_ip_anno(DST);
    inject(&mut r, "i", p);
    let o = taken(&mut r, "o");
    assert_eq!(&o[0].data()[16..20], &DST.octets());
    assert_encap_annos(&o[0], DST);
    assert!(r.write_path("e.dst", "bogus").is_err());

    for (conf, arg) in [
        ("bogus", "TYPE"),
        ("echo, 256", "CODE"),
        ("unreachable, nonsense", "CODE"),
        ("echo, IDENTIFIER -1", "IDENTIFIER"),
        ("echo, 0, 1, 65536", "SEQUENCE_NUMBER"),
    ] {
        let e = config_error(&format!(
            "TestInject -> ICMPIPEncap(198.18.0.1, 198.19.0.2, {conf}) -> Discard"
        ));
        assert!(e.contains(arg), "{}", e);
    }
}

/// MarkIPCE as `m` behind one injector per TOS byte (DSCP 46 and each ECN codepoint), each
/// packet built by IPEncap (identification 1, total length 24, data "abcd").
fn mark_router(mark: &str, out1: bool) -> Router {
    let mut conf = String::new();
    for (k, tos) in ["0xb8", "0xb9", "0xba", "0xbb"].iter().enumerate() {
        conf.push_str(&format!(
            "i{k} :: TestInject -> IPEncap(udp, 198.18.0.1, 198.19.0.2, TOS {tos}) -> m;\n"
        ));
    }
    conf.push_str(&format!("m :: {mark} -> o :: TestCapture;\n"));
    if out1 {
        conf.push_str("m[1] -> o1 :: TestCapture;\n");
    }
    let mut r = router(&conf);
    for k in 0..4 {
        inject(&mut r, &format!("i{k}"), Packet::from_bytes(b"abcd"));
    }
    r
}

/// The packet IPEncap builds with TOS 0xbb (DSCP 46, CE).
const CE_PACKET: &str = "45bb001800010000fa1133f0c6120001c6130002 61626364";
/// The packet IPEncap builds with TOS 0xb8 (DSCP 46, not ECN-capable).
const NOT_ECT_PACKET: &str = "45b8001800010000fa1133f3c6120001c6130002 61626364";

#[test]
fn mark_ip_ce_marks_ecn_capable_packets() {
    let mut r = mark_router("MarkIPCE", true);
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 3);
    for p in &o {
        assert_data(p, CE_PACKET);
    }
    let o1 = taken(&mut r, "o1");
    assert_eq!(o1.len(), 1);
    assert_data(&o1[0], NOT_ECT_PACKET);
    assert_eq!(read(&mut r, "m.count"), "3");
    assert_eq!(read(&mut r, "m.drops"), "0");
}

#[test]
fn mark_ip_ce_drops_or_forces_not_ect() {
    let mut r = mark_router("MarkIPCE", false);
    assert_eq!(taken(&mut r, "o").len(), 3);
    assert_eq!(read(&mut r, "m.count"), "3");
    assert_eq!(read(&mut r, "m.drops"), "1");

    let mut r = mark_router("MarkIPCE(true)", true);
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 4);
    for p in &o {
        assert_data(p, CE_PACKET);
    }
    assert!(taken(&mut r, "o1").is_empty());
    assert_eq!(read(&mut r, "m.count"), "4");

    // TOS 0x02 (ECT(0)) becomes 0x03 with the checksum updated.
    let mut r = router(
        "i :: TestInject -> IPEncap(udp, 198.18.0.1, 198.19.0.2, ECT true) -> MarkIPCE(FORCE false) -> o :: TestCapture;",
    );
    let o = run(&mut r, "i", "o", b"abcd", 1);
    assert_data(
        &o[0],
        &format!("4503001800010000fa1134a8c6120001c6130002 {ABCD}"),
    );
}

#[test]
fn mark_ip_ce_needs_the_network_header() {
    let mut r = router(
        "i :: TestInject -> m :: MarkIPCE -> o :: TestCapture;
         j :: TestInject -> MarkIPHeader -> m;",
    );
    // DSCP 46, ECT(0), valid checksum.
    let ect = "45ba001800010000fa1133f1c6120001c6130002";
    let ect_bytes: Vec<u8> = (0..20)
        .map(|i| u8::from_str_radix(&ect[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    // No network header annotation: dropped, even though the bytes are an ECT packet.
    inject(&mut r, "i", Packet::from_bytes(&ect_bytes));
    // Too short for an IP header after MarkIPHeader.
    inject(&mut r, "j", Packet::from_bytes(&ect_bytes[..19]));
    assert!(taken(&mut r, "o").is_empty());
    assert_eq!(read(&mut r, "m.drops"), "2");
    assert_eq!(read(&mut r, "m.count"), "0");
    // A header after a link-level header, found through the annotation.
    let mut p = Packet::from_bytes(&[vec![0xee; 14], ect_bytes].concat());
    p.set_network_offset(14);
    inject(&mut r, "i", p);
    let o = taken(&mut r, "o");
    assert_data(
        &o[0],
        &format!(
            "{} 45bb001800010000fa1133f0c6120001c6130002",
            "ee".repeat(14)
        ),
    );
}

#[test]
fn mark_ip_ce_pull_path() {
    let mut r = router(
        "i :: TestInject -> IPEncap(udp, 198.18.0.1, 198.19.0.2, TOS 0xba) -> q :: Queue;
         j :: TestInject -> IPEncap(udp, 198.18.0.1, 198.19.0.2, TOS 0xb8) -> q;
         q -> m :: MarkIPCE -> Unqueue -> o :: TestCapture;",
    );
    inject(&mut r, "i", Packet::from_bytes(b"abcd"));
    inject(&mut r, "j", Packet::from_bytes(b"abcd"));
    r.run_until_idle();
    let o = taken(&mut r, "o");
    assert_eq!(o.len(), 1);
    assert_data(&o[0], CE_PACKET);
    assert_eq!(read(&mut r, "m.count"), "1");
    assert_eq!(read(&mut r, "m.drops"), "1");
}
