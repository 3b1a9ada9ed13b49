//! LPM benchmark: loads the IPv4 and the IPv6 routing tables into each lookup structure and
//! measures build time, memory and batched lookups per second on random destinations,
//! checking a sample of answers against an exact reference.
//!
//! Run: `cargo run --release -p sluice-elements --example lpm_bench -- [TABLE.gz] [LOOKUPS]
//! [TABLE6.gz]` (default tables ../shared/data/ipv4-prefixes.txt.gz and ipv6-prefixes.txt.gz,
//! derived from RouteViews, the RIRs via NRO, and DB-IP, CC BY 4.0). The linear structure
//! (LinearIPLookup's, and Click's LookupIP6Route's) is measured on a 10K-prefix subset only.

use std::collections::HashMap;
use std::time::Instant;

use sluice_elements::lookup::dir24::Dir24;
use sluice_elements::lookup::radix::Radix;
use sluice_elements::lookup::table::{mask_of, Linear, Lpm, Route, RouteAddr, RouteTable, NH_NONE};
use sluice_elements::lookup::trie6::Trie6;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn load<A: RouteAddr>(path: &str) -> Vec<Route<A>> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", path])
        .output()
        .expect("runs gzip");
    assert!(out.status.success(), "gzip -dc {} failed", path);
    let text = String::from_utf8(out.stdout).expect("utf-8 table");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| Route::parse(l).expect("table line"))
        .collect()
}

type Reference<A> = HashMap<(A, u8), (A, u32)>;

fn reference<A: RouteAddr>(routes: &[Route<A>]) -> Reference<A> {
    routes
        .iter()
        .map(|r| ((r.addr, r.len), (r.gw, r.port)))
        .collect()
}

fn reference_lookup<A: RouteAddr>(map: &Reference<A>, a: A) -> Option<(A, u32)> {
    (0..=A::BITS)
        .rev()
        .find_map(|l| map.get(&(a.masked(l), l)).copied())
}

fn bench<T: Lpm + Default>(
    name: &str,
    routes: &[Route<T::Addr>],
    addrs: &[T::Addr],
    reference: &Reference<T::Addr>,
) {
    let t0 = Instant::now();
    let mut t: RouteTable<T> = RouteTable::default();
    for r in routes {
        t.add(*r, true).expect("adds");
    }
    t.lpm.shrink();
    let build = t0.elapsed().as_secs_f64();
    // Batched lookups, 32 at a time as in the element.
    let mut out = [0u32; 32];
    let mut hits = 0u64;
    let mut best = f64::MAX;
    for _run in 0..3 {
        let t1 = Instant::now();
        for chunk in addrs.chunks(32) {
            t.lpm.lookup_batch(chunk, &mut out[..chunk.len()]);
            hits += out[..chunk.len()].iter().filter(|&&n| n != NH_NONE).count() as u64;
        }
        best = best.min(t1.elapsed().as_secs_f64());
    }
    let mut bad = 0;
    for &a in addrs.iter().step_by(97).take(20_000) {
        if t.lookup(a) != reference_lookup(reference, a) {
            bad += 1;
        }
    }
    println!(
        "{:<14} {:>9} {:>10.3} {:>12.1} {:>12.3} {:>8.1} {:>8}",
        name,
        routes.len(),
        build,
        t.lpm.mem_bytes() as f64 / (1 << 20) as f64,
        addrs.len() as f64 / best / 1e6,
        best * 1e9 / addrs.len() as f64,
        if bad == 0 {
            "ok".to_string()
        } else {
            format!("{} BAD", bad)
        }
    );
    std::hint::black_box(hits);
    assert_eq!(bad, 0, "{} disagrees with the reference", name);
}

/// A random sample of `n` routes.
fn subset<A: RouteAddr>(routes: &[Route<A>], n: usize) -> Vec<Route<A>> {
    let mut rng = XorShift(9);
    (0..n)
        .map(|_| routes[rng.next() as usize % routes.len()])
        .collect()
}

fn header(path: &str, prefixes: usize, n: usize, what: &str) {
    println!(
        "table {} ({} prefixes), {} destinations ({}), batches of 32",
        path, prefixes, n, what
    );
    println!(
        "{:<14} {:>9} {:>10} {:>12} {:>12} {:>8} {:>8}",
        "structure", "prefixes", "build s", "memory MiB", "Mlookups/s", "ns/look", "check"
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(String::as_str).unwrap_or(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/ipv4-prefixes.txt.gz"
    ));
    let n: usize = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let path6 = args.get(3).map(String::as_str).unwrap_or(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/ipv6-prefixes.txt.gz"
    ));

    let routes: Vec<Route<u32>> = load(path);
    let refs = reference(&routes);
    let mut rng = XorShift(0x5eed);
    // Half uniformly random destinations, half inside announced prefixes.
    let addrs: Vec<u32> = (0..n)
        .map(|i| {
            let x = rng.next();
            if i % 2 == 0 {
                x as u32
            } else {
                let r = routes[(x >> 32) as usize % routes.len()];
                r.addr | (rng.next() as u32 & !mask_of(r.len))
            }
        })
        .collect();
    header(
        path,
        routes.len(),
        n,
        "half random, half inside announced prefixes",
    );
    let sub = subset(&routes, 10_000);
    bench::<Linear>(
        "linear (10K)",
        &sub,
        &addrs[..n.min(20_000)],
        &reference(&sub),
    );
    bench::<Radix>("radix", &routes, &addrs, &refs);
    bench::<Dir24>("dir-24-8", &routes, &addrs, &refs);

    let routes: Vec<Route<u128>> = load(path6);
    let refs = reference(&routes);
    // Random addresses inside announced prefixes (a uniformly random IPv6 address is
    // almost never routed).
    let addrs: Vec<u128> = (0..n)
        .map(|_| {
            let r = routes[rng.next() as usize % routes.len()];
            let host = (rng.next() as u128) << 64 | rng.next() as u128;
            r.addr | (host & !u128::MAX.masked(r.len))
        })
        .collect();
    println!();
    header(path6, routes.len(), n, "inside announced prefixes");
    let sub = subset(&routes, 10_000);
    bench::<Linear<u128>>(
        "linear (10K)",
        &sub,
        &addrs[..n.min(20_000)],
        &reference(&sub),
    );
    bench::<Trie6>("trie6", &routes, &addrs, &refs);
}
