//! Behaviour tests of the ESP tunnel elements (ipsec/): ESPEncap then ESPDecap restore every
//! packet byte for byte with both algorithm suites; the outer header and ESP fields are as
//! RFC 4303 lays them out; replayed, tampered, unknown and malformed packets are dropped and
//! counted by reason; keys never appear in handlers.

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use sluice_core::{Packet, Router};
use sluice_testkit::{config_error, inject, num, read, router, taken};
use sluice_wire::checksum::checksum;
use sluice_wire::Ipv4Packet;

const GCM: &str = "aead 0x4a9f2e1c7b3d5a6e8f0112233445566778899aab\n";
const CBC: &str = "# outbound\nenc 0x00112233445566778899aabbccddeeff\n\
                   auth 0x0123456789abcdef0123456789abcdef01234567\n";

/// Writes `text` to a key file of its own (tests run in parallel) and returns its path.
fn key_file(name: &str, text: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir: PathBuf = std::env::temp_dir().join(format!("sluice-ipsec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{}-{name}", NEXT.fetch_add(1, Ordering::Relaxed)));
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// A tunnel: `i` → ESPEncap `enc` → `wire` (capture); `w` → ESPDecap `dec` → `out`.
fn tunnel(alg: &str, keys: &str, extra: &str) -> Router {
    let f = key_file(&format!("{alg}.keys"), keys);
    router(&format!(
        "i :: TestInject -> enc :: ESPEncap(0x1001, 198.18.0.1, 198.19.0.1, ALG {alg}, KEYFILE {f})
           -> wire :: TestCapture;
         w :: TestInject -> dec :: ESPDecap(0x1001, ALG {alg}, KEYFILE {f}{extra}) -> out :: TestCapture;"
    ))
}

/// An IPv4 UDP packet with `n` payload bytes and TOS `tos`.
fn inner(n: usize, tos: u8, id: u16) -> Vec<u8> {
    let total = 28 + n;
    let mut v = vec![0x45, tos];
    v.extend_from_slice(&(total as u16).to_be_bytes());
    v.extend_from_slice(&id.to_be_bytes());
    v.extend_from_slice(&[0, 0, 64, 17, 0, 0, 198, 18, 5, 2, 198, 19, 7, 9]);
    let c = checksum(&v);
    v[10..12].copy_from_slice(&c.to_be_bytes());
    v.extend_from_slice(&[0x30, 0x39, 0x00, 0x35]);
    v.extend_from_slice(&((8 + n) as u16).to_be_bytes());
    v.extend_from_slice(&[0, 0]);
    v.extend((0..n).map(|i| (i * 7) as u8));
    v
}

fn through(r: &mut Router, packets: &[Vec<u8>]) -> Vec<Packet> {
    for d in packets {
        inject(r, "i", Packet::from_bytes(d));
    }
    taken(r, "wire")
}

fn decap(r: &mut Router, wire: Vec<Packet>) -> Vec<Vec<u8>> {
    for p in wire {
        inject(r, "w", p);
    }
    taken(r, "out").iter().map(|p| p.data().to_vec()).collect()
}

fn details(r: &mut Router, el: &str) -> String {
    read(r, &format!("{el}.drop_details"))
}

#[test]
fn both_suites_restore_every_packet() {
    for (alg, keys, iv, icv, block) in [
        ("aes-gcm-128", GCM, 8, 16, 4),
        ("aes-cbc-128-hmac-sha1", CBC, 16, 12, 16),
    ] {
        let mut r = tunnel(alg, keys, "");
        let sent: Vec<Vec<u8>> = (0..40).map(|n| inner(n * 37, 0xb8, n as u16)).collect();
        let wire = through(&mut r, &sent);
        assert_eq!(wire.len(), sent.len());
        for (k, (p, s)) in wire.iter().zip(&sent).enumerate() {
            let d = p.data();
            let ip = Ipv4Packet::new_unchecked(d);
            assert!(ip.verify_checksum(), "{alg}: outer checksum");
            assert_eq!(ip.protocol(), 50);
            assert_eq!(ip.tos(), 0xb8, "{alg}: TOS copied");
            assert_eq!(ip.ttl(), 64);
            assert_eq!(ip.src(), Ipv4Addr::new(198, 18, 0, 1));
            assert_eq!(ip.dst(), Ipv4Addr::new(198, 19, 0, 1));
            assert_eq!(ip.total_len() as usize, d.len());
            assert_eq!(&d[20..24], &[0, 0, 0x10, 0x01], "{alg}: SPI");
            assert_eq!(
                u32::from_be_bytes(d[24..28].try_into().unwrap()),
                k as u32 + 1
            );
            let text = d.len() - 28 - iv - icv;
            assert_eq!(text % block, 0, "{alg}: whole blocks");
            assert!(
                text >= s.len() + 2 && text < s.len() + 2 + block,
                "{alg}: minimal padding"
            );
            if s.len() >= 44 {
                assert!(
                    !d.windows(16).any(|w| w == &s[28..44]),
                    "{alg}: payload hidden"
                );
            }
        }
        assert_eq!(num(&mut r, "enc.seq"), 40);
        assert_eq!(decap(&mut r, wire), sent, "{alg}: inner packets restored");
        assert_eq!(num(&mut r, "dec.count"), 40);
        assert_eq!(num(&mut r, "dec.drops"), 0);
        assert!(read(&mut r, "dec.table")
            .contains(&format!("0x00001001 {alg} seq 40 window 64 packets 40")));
    }
}

#[test]
fn replays_are_refused_and_reordering_within_the_window_accepted() {
    let mut r = tunnel("aes-gcm-128", GCM, ", REPLAY_WINDOW 32");
    let sent: Vec<Vec<u8>> = (0..100).map(|n| inner(20, 0, n)).collect();
    let wire = through(&mut r, &sent);
    let copy = |i: usize| Packet::from_bytes(wire[i].data());
    // 50 first, then 20..50 in reverse (inside the window), then 10 (outside), then 50 again.
    let mut order = vec![copy(50)];
    order.extend((20..50).rev().map(copy));
    order.push(copy(10));
    order.push(copy(50));
    order.push(copy(35));
    let got = decap(&mut r, order);
    // Sequence numbers are index + 1: 51 opens a window of 20..51, so index 19 (seq 20) is
    // the oldest accepted.
    assert_eq!(got.len(), 1 + 30);
    assert_eq!(got[0], sent[50]);
    assert_eq!(got[30], sent[20]);
    assert!(details(&mut r, "dec").contains("3 replayed"));
    assert_eq!(num(&mut r, "dec.drops"), 3);
}

#[test]
fn tampered_unknown_and_malformed_packets_are_counted() {
    let mut r = tunnel("aes-cbc-128-hmac-sha1", CBC, "");
    let wire = through(
        &mut r,
        &[inner(100, 0, 1), inner(100, 0, 2), inner(100, 0, 3)],
    );
    let d = |i: usize| wire[i].data().to_vec();
    let mut flipped = d(0);
    flipped[60] ^= 0x40;
    let mut other_spi = d(1);
    other_spi[23] = 0x02;
    let short = d(2)[..40].to_vec();
    let mut partial = d(2);
    partial.truncate(partial.len() - 5);
    let len = (partial.len() as u16).to_be_bytes();
    partial[2..4].copy_from_slice(&len);
    let mut not_esp = d(2);
    not_esp[9] = 17;
    let bad = [flipped, other_spi, short, partial, not_esp];
    let got = decap(&mut r, bad.iter().map(|b| Packet::from_bytes(b)).collect());
    assert!(got.is_empty());
    let text = details(&mut r, "dec");
    for reason in ["1 bad ICV", "1 unknown SPI", "3 malformed ESP"] {
        assert!(text.contains(reason), "{reason} in {text}");
    }
    // The untouched packets still open afterwards: failures do not move the window.
    assert_eq!(decap(&mut r, vec![Packet::from_bytes(&d(0))]).len(), 1);
}

#[test]
fn several_sas_and_ipv6_inside() {
    let fa = key_file("a.keys", GCM);
    let fb = key_file("b.keys", CBC);
    let mut r = router(&format!(
        "a :: TestInject -> ESPEncap(0x2000, 198.18.0.1, 198.19.0.1, ALG aes-gcm-128, KEYFILE {fa}) -> m :: TestCapture;
         b :: TestInject -> ESPEncap(0x3000, 198.18.0.1, 198.19.0.1, ALG aes-cbc-128-hmac-sha1, KEYFILE {fb}) -> m2 :: TestCapture;
         w :: TestInject -> dec :: ESPDecap(SA 0x3000 aes-cbc-128-hmac-sha1 {fb}, SA 0x2000 aes-gcm-128 {fa}) -> out :: TestCapture;"
    ));
    let mut v6 = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
    v6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6.extend_from_slice(&[0; 12]);
    v6.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
    v6.extend_from_slice(&[0; 11]);
    v6.push(1);
    v6.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    inject(&mut r, "a", Packet::from_bytes(&v6));
    inject(&mut r, "b", Packet::from_bytes(&inner(9, 0, 1)));
    let mut wire = taken(&mut r, "m");
    wire.extend(taken(&mut r, "m2"));
    for p in wire {
        inject(&mut r, "w", p);
    }
    let got = taken(&mut r, "out");
    assert_eq!(got[0].data(), &v6[..]);
    assert_eq!(got[1].data(), &inner(9, 0, 1)[..]);
    assert_eq!(read(&mut r, "dec.table").lines().count(), 2);
}

#[test]
fn congestion_experienced_reaches_the_inner_header() {
    let mut r = tunnel("aes-gcm-128", GCM, "");
    let sent = inner(30, 0x02, 7);
    let mut wire = through(&mut r, std::slice::from_ref(&sent));
    let mut ip = Ipv4Packet::new_unchecked(wire[0].data_mut());
    ip.set_tos_update_checksum(0x03);
    let got = decap(&mut r, wire);
    let ip = Ipv4Packet::new_unchecked(&got[0][..]);
    assert_eq!(ip.ecn(), 3);
    assert!(ip.verify_checksum());
}

#[test]
fn keys_stay_secret_and_bad_configurations_are_refused() {
    let mut r = tunnel("aes-cbc-128-hmac-sha1", CBC, "");
    for h in [
        "enc.spi",
        "enc.alg",
        "enc.seq",
        "enc.src",
        "enc.dst",
        "dec.table",
        "dec.count",
    ] {
        let v = read(&mut r, h);
        assert!(
            !v.contains("00112233") && !v.contains("01234567"),
            "{h}: {v}"
        );
    }
    assert_eq!(read(&mut r, "enc.spi").trim(), "0x00001001");
    let short = key_file("short.keys", "enc 0xabcd\nauth 0x00");
    let e = config_error(&format!(
        "Idle -> ESPEncap(0x1001, 198.18.0.1, 198.19.0.1, ALG aes-cbc-128-hmac-sha1, KEYFILE {short}) -> Discard"
    ));
    assert!(
        e.contains("'enc' key has 2 bytes, not 16") && !e.contains("abcd"),
        "{e}"
    );
    let e = config_error(&format!(
        "Idle -> ESPDecap(200, ALG aes-gcm-128, KEYFILE {short}) -> Discard"
    ));
    assert!(e.contains("reserved"), "{e}");
    let e = config_error(
        "Idle -> ESPDecap(0x1001, ALG aes-gcm-128, KEYFILE /nonexistent/k) -> Discard",
    );
    assert!(e.contains("/nonexistent/k"), "{e}");
}
