//! Shared helpers of the IPv4 element tests: a router under simulated time with test
//! elements that inject packets and capture what reaches them, handler reads, and IPv4
//! packet builders.

#![allow(dead_code)]

use std::sync::Arc;

use sluice_core::{
    Batch, Cx, Element, ElementClass, Library, Packet, Reconfigure, Router, RouterOptions,
};
use sluice_wire::checksum::checksum;

/// Test source: packets are pushed from outside through `inject`.
pub struct Inject;
impl Element for Inject {}

/// Test sink: keeps every packet it receives.
#[derive(Default)]
pub struct Capture {
    got: Vec<Packet>,
}
impl Element for Capture {
    fn push(&mut self, _port: usize, batch: Batch, _cx: &mut Cx) {
        self.got.extend(batch);
    }
}

/// The test elements, `TestInject` and `TestCapture`.
pub const TEST_CLASSES: &[ElementClass] = &[
    ElementClass {
        name: "TestInject",
        ports: "0/1",
        processing: "h/h",
        flow: "",
        source: "",
        make: || Box::new(Inject),
    },
    ElementClass {
        name: "TestCapture",
        ports: "1/0",
        processing: "h/h",
        flow: "",
        source: "",
        make: || Box::<Capture>::default(),
    },
];

/// The element library with the test elements.
fn library() -> Library {
    let mut lib: Library = sluice_elements::library();
    lib.add(TEST_CLASSES);
    lib
}

/// A router for `conf` (test elements included) with `opts`.
fn router_with(conf: &str, opts: RouterOptions) -> Router {
    let flat = sluice_lang::parse_config(conf, "test.click", &[]).expect("parses");
    Router::new(flat, &library(), opts).unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

/// A router for `conf` (test elements included) on simulated time.
pub fn router(conf: &str) -> Router {
    router_with(
        conf,
        RouterOptions {
            simtime: true,
            ..Default::default()
        },
    )
}

/// Like `router`, on `threads` threads, with Click's `-R`: a `hotconfig` write installs a
/// new configuration.
pub fn reconfigurable(conf: &str, threads: usize) -> Router {
    let parse = |text: &str| {
        sluice_lang::parse_config(text, "config", &[])
            .map_err(|d| d.iter().map(|e| e.to_string()).collect::<Vec<_>>())
    };
    router_with(
        conf,
        RouterOptions {
            simtime: true,
            threads,
            reconfigure: Some(Reconfigure {
                library: library(),
                parse: Arc::new(parse),
            }),
            ..Default::default()
        },
    )
}

/// The errors of a configuration that must fail.
pub fn config_error(conf: &str) -> String {
    let flat = sluice_lang::parse_config(conf, "test.click", &[]).expect("parses");
    match Router::new(flat, &library(), RouterOptions::default()) {
        Ok(_) => panic!("configuration should fail"),
        Err(e) => e.join("\n"),
    }
}

/// Pushes `p` out of the TestInject `name`.
pub fn inject(r: &mut Router, name: &str, p: Packet) {
    let e = r.element_index(name).expect("inject element");
    r.with_element(e, |_, cx| cx.push_one(0, p)).expect("idle");
}

/// Takes the packets the TestCapture `name` received so far.
pub fn taken(r: &mut Router, name: &str) -> Vec<Packet> {
    let e = r.element_index(name).expect("capture element");
    r.with_element(e, |el, _| {
        let c = el
            .as_any_mut()
            .downcast_mut::<Capture>()
            .expect("a TestCapture");
        std::mem::take(&mut c.got)
    })
    .expect("idle")
}

/// Reads handler `path`, trimmed.
pub fn h(r: &mut Router, path: &str) -> String {
    r.read_path(path).unwrap().trim().to_string()
}

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
