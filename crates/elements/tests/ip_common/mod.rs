//! Shared helpers of the IPv4 element tests: IPv4, UDP and ARP packet builders and test
//! addresses. Routers, packet injection and capture come from `sluice_testkit`.

#![allow(dead_code)]

use sluice_wire::checksum::checksum;

/// An IPv4 address as bytes.
pub type Addr = [u8; 4];

/// An IPv4 packet: header (with options) + payload, valid checksum.
pub fn ip_packet(src: Addr, dst: Addr, ttl: u8, proto: u8, opts: &[u8], payload: &[u8]) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let hl = 20 + opts.len();
    let total = hl + payload.len();
    let mut v = vec![0x40 | (hl / 4) as u8, 0];
    v.extend_from_slice(&(total as u16).to_be_bytes());
    v.extend_from_slice(&[0x12, 0x34, 0, 0, ttl, proto, 0, 0]);
    v.extend_from_slice(&src);
    v.extend_from_slice(&dst);
    v.extend_from_slice(opts);
    let c = checksum(&v);
    v[10..12].copy_from_slice(&c.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A UDP packet with `n` payload bytes 0, 1, 2, ….
pub fn udp(src: Addr, dst: Addr, ttl: u8, n: usize) -> Vec<u8> {
    let mut pl = vec![0x13, 0x69, 0x13, 0x69];
    pl.extend_from_slice(&((8 + n) as u16).to_be_bytes());
    pl.extend_from_slice(&[0, 0]);
    pl.extend((0..n).map(|i| i as u8));
    ip_packet(src, dst, ttl, 17, &[], &pl)
}

/// True if the IP header at the start of `b` has a valid checksum.
pub fn header_ok(b: &[u8]) -> bool {
    let hl = ((b[0] & 0xf) as usize) * 4;
    checksum(&b[..hl]) == 0
}

/// Test addresses.
pub const A: Addr = [198, 18, 0, 2];
pub const B: Addr = [198, 19, 0, 2];

/// An Ethernet ARP frame to `dst`: operation `op`, sender `sha`/`spa`, target `tha`/`tpa`.
pub fn arp(op: u16, sha: [u8; 6], spa: Addr, tha: [u8; 6], tpa: Addr, dst: [u8; 6]) -> Vec<u8> {
    let mut f = dst.to_vec();
    f.extend_from_slice(&sha);
    f.extend_from_slice(&[0x08, 0x06, 0, 1, 8, 0, 6, 4]);
    f.extend_from_slice(&op.to_be_bytes());
    f.extend_from_slice(&sha);
    f.extend_from_slice(&spa);
    f.extend_from_slice(&tha);
    f.extend_from_slice(&tpa);
    f
}
