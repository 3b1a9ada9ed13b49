//! LookupIP6Route: routing real IPv6 packets, Click's handlers, and the trie checked against
//! an exact reference on the real IPv6 Internet table in ../shared/data/ipv6-prefixes.txt.gz
//! (derived from RouteViews, the RIRs via NRO, and DB-IP, CC BY 4.0), loaded as a Click
//! configuration.

use std::collections::HashMap;
use std::net::Ipv6Addr;
use std::time::Instant;

use sluice_core::{Packet, Router};
use sluice_elements::lookup::table::{Route, RouteAddr, RouteTable};
use sluice_elements::lookup::trie6::Trie6;
use sluice_testkit::{inject_packets, read, router, taken, Kit};

const TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/ipv6-prefixes.txt.gz"
);

fn addr(s: &str) -> Ipv6Addr {
    s.parse().unwrap()
}

/// A UDP-in-IPv6 packet to `dst`.
fn ip6_to(dst: &str) -> Packet {
    let mut p = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
    p.extend_from_slice(&addr("2001:db8:ffff::1").octets());
    p.extend_from_slice(&addr(dst).octets());
    p.extend_from_slice(&[0, 1, 0, 2, 0, 8, 0, 0]);
    Packet::from_bytes(&p)
}

/// A router whose LookupIP6Route `rt` has `routes` and outputs to TestCaptures `o0`..;
/// packets enter at TestInject `in`.
fn lookup_router(routes: &str, nout: usize) -> Router {
    let mut conf = format!("in :: TestInject -> rt :: LookupIP6Route({routes});\n");
    for i in 0..nout {
        conf += &format!("rt[{i}] -> o{i} :: TestCapture;\n");
    }
    router(&conf)
}

/// Sends a packet to each destination; returns the output each left by (None: dropped)
/// and the destination annotation it left with.
fn route_all(r: &mut Router, nout: usize, dsts: &[&str]) -> Vec<Option<(usize, Ipv6Addr)>> {
    let mut got = Vec::new();
    for d in dsts {
        inject_packets(r, "in", 0, [ip6_to(d)]);
        let mut out = None;
        for i in 0..nout {
            for p in taken(r, &format!("o{i}")) {
                assert!(out.is_none(), "one packet, one output");
                out = Some((i, p.anno().dst_ip6));
            }
        }
        got.push(out);
    }
    got
}

#[test]
fn routes_by_longest_prefix_and_sets_gateway() {
    let mut r = lookup_router(
        "2001:db8:1::1/128 0, 2001:db8:1::/64 1, 2001:db8::/32 2001:db8:2::fe 2, ::/0 2001:db8:3::1 3",
        4,
    );
    let got = route_all(
        &mut r,
        4,
        &[
            "2001:db8:1::1",
            "2001:db8:1::7",
            "2001:db8:9::1",
            "2001:db9::1",
        ],
    );
    assert_eq!(
        got,
        vec![
            Some((0, addr("2001:db8:1::1"))),
            Some((1, addr("2001:db8:1::7"))),
            Some((2, addr("2001:db8:2::fe"))),
            Some((3, addr("2001:db8:3::1"))),
        ]
    );
    let mut r = lookup_router("2001:db8::/32 0", 1);
    assert_eq!(route_all(&mut r, 1, &["2001:db9::1"]), vec![None]);
    assert_eq!(read(&mut r, "rt.drops").trim(), "1");
    assert!(read(&mut r, "rt.drop_details").contains("no route"));
}

#[test]
fn destination_annotation_wins_over_header() {
    let mut r = router(
        "in :: TestInject -> SetIP6Address(2001:db8:2::1) -> rt :: LookupIP6Route(2001:db8:1::/48 0, 2001:db8:2::/48 1);
         rt[0] -> o0 :: TestCapture; rt[1] -> o1 :: TestCapture;",
    );
    inject_packets(&mut r, "in", 0, [ip6_to("2001:db8:1::5")]);
    assert_eq!(taken(&mut r, "o0").len(), 0);
    assert_eq!(taken(&mut r, "o1").len(), 1);
}

fn lookup(r: &mut Router, a: &str) -> String {
    r.read_path_param("rt.lookup", Some(a))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn handlers_follow_click() {
    let mut r = lookup_router("2001:db8:1::/64 1, ::/0 2001:db8::1 0", 2);
    assert_eq!(
        read(&mut r, "rt.table"),
        "# Active routes\n2001:db8:1::/64\t::\t1\n::/0\t2001:db8::1\t0"
    );
    assert_eq!(lookup(&mut r, "2001:db8:1::9"), "1");
    assert_eq!(lookup(&mut r, "2001:db9::9"), "0 2001:db8::1");
    let rt = r.element_index("rt");
    // Click's IPv6 `add` replaces a route for the same prefix.
    r.write_handler(rt, "add", "2001:db8:1::/64 0").unwrap();
    assert_eq!(lookup(&mut r, "2001:db8:1::9"), "0");
    r.write_handler(rt, "remove", "::/0").unwrap();
    assert_eq!(lookup(&mut r, "2001:db9::9"), "-1");
    // `ctrl` applies all its lines or none.
    let err = r
        .write_handler(rt, "ctrl", "add 2001:db8:2::/48 1\nadd 2001:db8:3::/48 7")
        .unwrap_err();
    assert!(format!("{err:?}").contains("out of range"), "{err:?}");
    assert_eq!(lookup(&mut r, "2001:db8:2::1"), "-1", "none applied");
    // As in Click's IPv6 table, removing a route that is not there does nothing.
    r.write_handler(rt, "remove", "2001:db8:5::/48").unwrap();
    r.write_handler(rt, "ctrl", "add 2001:db8:2::/48 1\nset 2001:db8:1::/64 1")
        .unwrap();
    assert_eq!(lookup(&mut r, "2001:db8:2::1"), "1");
    assert_eq!(lookup(&mut r, "2001:db8:1::1"), "1");
    assert!(
        r.write_handler(rt, "add", "2001:db8:3::/48 7").is_err(),
        "port out of range"
    );
    assert!(r.write_handler(rt, "add", "198.18.0.0/16 1").is_err());
}

#[test]
fn configuration_errors() {
    let kit = Kit::new();
    let e = kit.error("Idle -> LookupIP6Route(2001:db8::/32 2) -> Discard");
    assert!(e.contains("out of range"), "{e}");
    let e = kit.error("Idle -> LookupIP6Route(2001:db8::/32) -> Discard");
    assert!(e.contains("DST/LEN") || e.contains("ADDR/MASK"), "{e}");
}

fn load_real_table() -> Vec<Route<u128>> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", TABLE])
        .output()
        .unwrap_or_else(|e| panic!("gzip -dc {TABLE}: {e}"));
    assert!(out.status.success(), "cannot read {TABLE}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| Route::parse(l).expect("table line parses"))
        .collect()
}

struct Reference(HashMap<(u128, u8), (u128, u32)>);

impl Reference {
    fn lookup(&self, a: u128) -> Option<(u128, u32)> {
        (0..=128u8)
            .rev()
            .find_map(|l| self.0.get(&(a.masked(l), l)).copied())
    }
}

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Random destinations: inside announced prefixes, and a few uniformly random.
fn destinations(routes: &[Route<u128>], rng: &mut XorShift, n: usize) -> Vec<u128> {
    (0..n)
        .map(|i| {
            let host = (rng.next() as u128) << 64 | rng.next() as u128;
            if i % 10 == 0 {
                host
            } else {
                let r = routes[rng.next() as usize % routes.len()];
                r.addr | (host & !u128::ONES.masked(r.len))
            }
        })
        .collect()
}

#[test]
fn real_table_trie_agrees_with_reference() {
    let routes = load_real_table();
    assert!(routes.len() > 160_000);
    let mut reference = Reference(HashMap::new());
    let mut trie: RouteTable<Trie6> = RouteTable::default();
    for r in &routes {
        reference.0.insert((r.addr, r.len), (r.gw, r.port));
        trie.add(*r, true).unwrap();
    }
    let mut rng = XorShift(0x66);
    for a in destinations(&routes, &mut rng, 200_000) {
        assert_eq!(trie.lookup(a), reference.lookup(a), "{:x}", a);
    }
    for (i, r) in routes.iter().enumerate() {
        if i % 10 == 3 {
            reference.0.remove(&(r.addr, r.len));
            trie.remove(r.addr, r.len).unwrap();
        }
    }
    for a in destinations(&routes, &mut rng, 200_000) {
        assert_eq!(
            trie.lookup(a),
            reference.lookup(a),
            "after removals {:x}",
            a
        );
    }
    for r in &routes {
        trie.remove(r.addr, r.len);
    }
    assert_eq!(trie.lpm.chunks(), 0, "an empty table holds no chunk");
}

/// The whole table as a Click configuration: it loads in well under the second the issue
/// allows for a quiet machine (this test allows 3 s, as tests run side by side), and routes
/// as the reference does.
#[test]
fn whole_table_configuration_loads_fast_and_routes() {
    let routes = load_real_table();
    let reference = Reference(
        routes
            .iter()
            .map(|r| ((r.addr, r.len), (r.gw, r.port)))
            .collect(),
    );
    let mut conf = String::from("in :: TestInject -> rt :: LookupIP6Route(");
    for r in &routes {
        conf += &r.unparse(false);
        conf += ",\n";
    }
    conf += ");\n";
    for i in 0..16 {
        conf += &format!("rt[{i}] -> o{i} :: TestCapture;\n");
    }
    let t0 = Instant::now();
    let mut r = router(&conf);
    let load = t0.elapsed().as_secs_f64();
    eprintln!(
        "whole IPv6 table configuration: {} routes, loaded in {load:.3} s",
        routes.len()
    );
    assert!(load < 3.0, "loading took {load:.3} s");
    let mut rng = XorShift(0x77);
    let dsts = destinations(&routes, &mut rng, 2_000);
    let texts: Vec<String> = dsts
        .iter()
        .map(|&a| Ipv6Addr::from(a).to_string())
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let got = route_all(&mut r, 16, &refs);
    for (a, g) in dsts.iter().zip(got) {
        let want = reference.lookup(*a).map(|(_, port)| port as usize);
        assert_eq!(g.map(|(port, _)| port), want, "{}", Ipv6Addr::from(*a));
    }
}
