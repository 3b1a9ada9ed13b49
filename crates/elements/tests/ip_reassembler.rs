//! Behaviour tests of IPReassembler: fragments built here (independently of IPFragmenter)
//! are injected in various orders, with duplicates, overlaps, losses and bad lengths, and the
//! datagrams, partial datagrams and counters are checked.

mod ip_common;

use ip_common::*;
use sluice_core::{Packet, Router};
use sluice_testkit::{bytes, config_error, elapsed, inject, read, router, taken};
use sluice_wire::checksum::checksum;

/// A UDP datagram from A to B with identification `id` and `n` bytes of payload.
fn datagram(id: u16, n: usize) -> Vec<u8> {
    let payload: Vec<u8> = (0..n).map(|i| (i * 7 + id as usize) as u8).collect();
    let mut v = ip_packet(A, B, 64, 17, &[], &payload);
    v[4..6].copy_from_slice(&id.to_be_bytes());
    refresh(&mut v);
    v
}

/// Recomputes the IP header checksum.
fn refresh(v: &mut [u8]) {
    let hl = ((v[0] & 0xf) as usize) * 4;
    v[10..12].fill(0);
    let c = checksum(&v[..hl]);
    v[10..12].copy_from_slice(&c.to_be_bytes());
}

/// A fragment of datagram `d` carrying `data` at byte offset `start`, More Fragments `mf`.
fn fragment_with(d: &[u8], start: usize, data: &[u8], mf: bool) -> Vec<u8> {
    let hl = ((d[0] & 0xf) as usize) * 4;
    let mut v = d[..hl].to_vec();
    v.extend_from_slice(data);
    v[2..4].copy_from_slice(&((hl + data.len()) as u16).to_be_bytes());
    let ff = (start / 8) as u16 | if mf { 0x2000 } else { 0 };
    v[6..8].copy_from_slice(&ff.to_be_bytes());
    refresh(&mut v);
    v
}

/// The fragment of datagram `d` with its data bytes `[start, end)`; the last one if `end`
/// is the end of the data.
fn fragment(d: &[u8], start: usize, end: usize) -> Vec<u8> {
    let hl = ((d[0] & 0xf) as usize) * 4;
    fragment_with(d, start, &d[hl + start..hl + end], hl + end < d.len())
}

/// Datagram `d` cut into fragments of `chunk` data bytes.
fn fragments(d: &[u8], chunk: usize) -> Vec<Vec<u8>> {
    let n = d.len() - ((d[0] & 0xf) as usize) * 4;
    (0..n)
        .step_by(chunk)
        .map(|s| fragment(d, s, (s + chunk).min(n)))
        .collect()
}

/// A router with IPReassembler `r` configured with `args`, fed by `i`, output 0 to `o`,
/// and the rest of the configuration `more`.
fn reassembler(args: &str, more: &str) -> Router {
    router(&format!(
        "i :: TestInject -> MarkIPHeader -> r :: IPReassembler({}) -> o :: TestCapture; {}",
        args, more
    ))
}

/// The packets that reached `o` so far, as bytes.
fn out(r: &mut Router) -> Vec<Vec<u8>> {
    bytes(&taken(r, "o"))
}

fn send(r: &mut Router, frags: &[Vec<u8>]) {
    for f in frags {
        inject(r, "i", Packet::from_bytes(f));
    }
}

fn detail(r: &mut Router, reason: &str) -> u64 {
    let d = read(r, "r.drop_details");
    d.lines()
        .find_map(|l| l.trim().strip_suffix(reason)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {:?} in {:?}", reason, d))
}

#[test]
fn in_order_reversed_and_shuffled() {
    let orders: [&[usize]; 4] = [
        &[0, 1, 2, 3, 4, 5],
        &[5, 4, 3, 2, 1, 0],
        &[3, 0, 5, 1, 4, 2],
        &[2, 5, 0, 4, 3, 1],
    ];
    let mut r = reassembler("", "");
    for (k, order) in orders.iter().enumerate() {
        let d = datagram(k as u16 + 1, 1000);
        let frags = fragments(&d, 176);
        assert_eq!(frags.len(), 6);
        let shuffled: Vec<_> = order.iter().map(|&i| frags[i].clone()).collect();
        send(&mut r, &shuffled[..5]);
        assert_eq!(read(&mut r, "r.length"), "1");
        send(&mut r, &shuffled[5..]);
        let got = taken(&mut r, "o");
        assert_eq!(got.len(), 1, "order {:?}", order);
        assert_eq!(got[0].data(), &d[..], "order {:?}", order);
        assert_eq!(got[0].network_offset(), Some(0));
        assert_eq!(got[0].transport_offset(), Some(20));
    }
    for (handler, value) in [
        ("reassembled", "4"),
        ("fragments", "24"),
        ("drops", "0"),
        ("length", "0"),
        ("mem_size", "0"),
    ] {
        assert_eq!(
            read(&mut r, &format!("r.{}", handler)),
            value,
            "{}",
            handler
        );
    }
    // Nothing is pending, so no timer is left to run.
    r.run_until_idle();
    assert_eq!(elapsed(&r), 0.0);
}

#[test]
fn unfragmented_pass_and_datagrams_interleave() {
    let mut r = reassembler("", "");
    let (d1, d2) = (datagram(1, 300), datagram(2, 300));
    let (f1, f2) = (fragments(&d1, 104), fragments(&d2, 104));
    let whole = udp(A, B, 64, 40);
    send(&mut r, &[f1[2].clone(), f2[0].clone(), whole.clone()]);
    send(&mut r, &[f1[0].clone(), f2[2].clone(), f1[1].clone()]);
    send(&mut r, &[f2[1].clone()]);
    assert_eq!(out(&mut r), [whole, d1, d2]);
}

#[test]
fn duplicates_and_overlaps_keep_the_first_data() {
    let mut r = reassembler("", "");
    let d = datagram(9, 64);
    // [0, 24), then a copy of it with other bytes, a later fragment overlapping it with
    // other bytes where they overlap, the last fragment twice, then the rest.
    send(&mut r, &[fragment(&d, 0, 24)]);
    send(&mut r, &[fragment_with(&d, 0, &[0xee; 24], true)]);
    send(&mut r, &[fragment_with(&d, 8, &[0xee; 8], true)]);
    let mut overlap = d[20 + 16..20 + 40].to_vec();
    overlap[..8].fill(0xee);
    send(&mut r, &[fragment_with(&d, 16, &overlap, true)]);
    send(&mut r, &[fragment(&d, 56, 64), fragment(&d, 56, 64)]);
    assert!(out(&mut r).is_empty());
    send(&mut r, &[fragment(&d, 32, 64)]);
    assert_eq!(out(&mut r), [d]);
    assert_eq!(
        (detail(&mut r, "duplicate"), read(&mut r, "r.drops")),
        (3, "3".into())
    );
}

#[test]
fn fragment_zero_gives_link_header_and_annotations() {
    let mut r = router(
        "i :: TestInject -> Strip(14) -> CheckIPHeader -> r :: IPReassembler -> Unstrip(14) -> o :: TestCapture",
    );
    let d = datagram(3, 200);
    for (k, f) in fragments(&d, 64).iter().enumerate().rev() {
        // Each fragment's Ethernet source address and paint say which fragment it is.
        let mut v = vec![
            0x02, 0, 0, 0, 0, 0xff, 0x02, 0, 0, 0, 0, k as u8, 0x08, 0x00,
        ];
        v.extend_from_slice(f);
        let mut p = Packet::from_bytes(&v);
        p.anno_mut().paint = 10 + k as u8;
        inject(&mut r, "i", p);
    }
    let got = taken(&mut r, "o");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].data()[11], 0, "fragment zero's Ethernet header");
    assert_eq!(&got[0].data()[14..], &d[..]);
    assert_eq!(got[0].anno().paint, 10);
}

#[test]
fn bad_lengths_and_inconsistent_fragments_are_dropped() {
    let mut r = reassembler("", "");
    let d = datagram(4, 64);
    // Not a multiple of 8 with More Fragments; no data; past 65535 bytes.
    send(&mut r, &[fragment_with(&d, 0, &d[20..30], true)]);
    send(&mut r, &[fragment_with(&d, 8, &[], true)]);
    send(&mut r, &[fragment_with(&d, 65528, &[0; 8], false)]);
    assert_eq!(detail(&mut r, "bad length"), 3);
    assert_eq!(read(&mut r, "r.length"), "0");
    // The last fragment sets the end at 64: data past it, another end, or an end before
    // data already received are inconsistent.
    send(&mut r, &[fragment(&d, 0, 16), fragment(&d, 56, 64)]);
    send(&mut r, &[fragment_with(&d, 64, &[0; 8], true)]);
    send(&mut r, &[fragment_with(&d, 56, &[0; 16], false)]);
    let d2 = datagram(5, 64);
    let early_end = fragment_with(&d2, 16, &d2[36..44], false);
    send(&mut r, &[fragment(&d2, 0, 32), early_end]);
    assert_eq!(detail(&mut r, "inconsistent"), 3);
    send(&mut r, &[fragment(&d, 16, 56), fragment(&d2, 32, 64)]);
    assert_eq!(out(&mut r), [d, d2]);
    // Not IPv4 at all.
    send(&mut r, &[vec![0x45, 0, 0, 99]]);
    assert_eq!(detail(&mut r, "malformed"), 1);
    assert_eq!(read(&mut r, "r.drops"), "7");
}

#[test]
fn missing_fragment_expires_after_timeout() {
    let mut r = reassembler("TIMEOUT 5", "");
    let frags = fragments(&datagram(6, 240), 80);
    send(&mut r, &[frags[0].clone(), frags[2].clone()]);
    assert_eq!(read(&mut r, "r.length"), "1");
    r.run_until_idle();
    assert_eq!(elapsed(&r), 5.0);
    assert!(out(&mut r).is_empty());
    assert_eq!(detail(&mut r, "expired"), 2);
    let counters = ["r.drops", "r.length", "r.mem_size"].map(|c| read(&mut r, c));
    assert_eq!(counters, ["2", "0", "0"]);
    // The missing fragment alone now starts a new datagram.
    send(&mut r, &frags[1..2]);
    assert!(out(&mut r).is_empty());
    assert_eq!(read(&mut r, "r.length"), "1");
}

#[test]
fn expired_datagram_goes_to_output_1_for_icmp_error() {
    let mut r = reassembler(
        "TIMEOUT 2",
        "r[1] -> t :: Tee; t[0] -> part :: TestCapture;
         t[1] -> ICMPError(198.18.0.1, timeexceeded, reassembly) -> err :: TestCapture",
    );
    let d = datagram(7, 240);
    let frags = fragments(&d, 80);
    send(&mut r, &[frags[2].clone(), frags[0].clone()]);
    r.run_until_idle();
    assert_eq!(elapsed(&r), 2.0);
    let part = taken(&mut r, "part");
    assert_eq!(part.len(), 1);
    let p = part[0].data();
    assert!(header_ok(p));
    // Total length 260; offset 0 and More Fragments clear: the last fragment arrived.
    assert_eq!(&p[2..8], &[1, 4, 0, 7, 0, 0]);
    assert_eq!(p.len(), 260);
    let mut expect = d.clone();
    expect[100..180].fill(0);
    assert_eq!(
        &p[20..],
        &expect[20..],
        "the data at its offsets, zeros in the hole"
    );
    let err = taken(&mut r, "err");
    assert_eq!(err.len(), 1);
    let e = err[0].data();
    assert_eq!((e[20], e[21]), (11, 1), "time exceeded, reassembly");
    assert_eq!(&e[28..56], &d[..28]);
    assert_eq!(detail(&mut r, "expired"), 2);
}

#[test]
fn memory_limit_drops_the_oldest_datagrams() {
    let mut r = reassembler("HIMEM 4000", "r[1] -> part :: TestCapture");
    let ds: Vec<Vec<u8>> = (1..=4).map(|id| datagram(id, 2000)).collect();
    let fs: Vec<Vec<Vec<u8>>> = ds.iter().map(|d| fragments(d, 1000)).collect();
    // Each first half holds 64 bookkeeping + 20 header + 1000 data bytes.
    for f in &fs[..3] {
        send(&mut r, &f[..1]);
    }
    assert_eq!(read(&mut r, "r.mem_size"), "3252");
    // The fourth goes past 4000: the oldest go until at most 3000 is held.
    send(&mut r, &fs[3][..1]);
    assert_eq!(read(&mut r, "r.mem_size"), "2168");
    assert_eq!(read(&mut r, "r.length"), "2");
    assert_eq!(detail(&mut r, "memory"), 2);
    let part = taken(&mut r, "part");
    let ids: Vec<[u8; 2]> = part.iter().map(|p| [p.data()[4], p.data()[5]]).collect();
    assert_eq!(ids, [[0, 1], [0, 2]]);
    let mf = part[0].data()[6] & 0x20 != 0;
    assert!(mf, "More Fragments: the end never came");
    // The survivors complete.
    send(&mut r, &[fs[2][1].clone(), fs[3][1].clone()]);
    assert_eq!(out(&mut r), &ds[2..]);
    assert_eq!(read(&mut r, "r.mem_size"), "0");
    // MAX_MEMORY is the same setting.
    let mut r = reassembler("MAX_MEMORY 1000", "");
    send(&mut r, &fs[0][..1]);
    assert_eq!(detail(&mut r, "memory"), 1);
}

#[test]
fn round_trip_through_ip_fragmenter() {
    let mut r = router(
        "i :: TestInject -> MarkIPHeader -> IPFragmenter(300) -> f :: Counter -> r :: IPReassembler -> o :: TestCapture",
    );
    // LSRR (copied into every fragment) + RR (first fragment only).
    let opts = [131, 7, 4, 198, 19, 0, 9, 1, 7, 7, 4, 0, 0, 0, 0, 0];
    let payload: Vec<u8> = (0..3000).map(|i| (i * 13) as u8).collect();
    let orig = ip_packet(A, B, 64, 17, &opts, &payload);
    inject(&mut r, "i", Packet::from_bytes(&orig));
    assert_eq!(out(&mut r), [orig]);
    assert!(read(&mut r, "f.count").parse::<u32>().unwrap() > 10);
}

#[test]
fn bad_arguments() {
    for (args, complaint) in [
        ("HIMEM 10, MAX_MEMORY 10", "HIMEM and MAX_MEMORY"),
        ("TIMEOUT 0", "TIMEOUT"),
    ] {
        let conf = format!("TestInject -> IPReassembler({}) -> Discard", args);
        let e = config_error(&conf);
        assert!(e.contains(complaint), "{}", e);
    }
}
