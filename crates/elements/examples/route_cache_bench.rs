//! Route cache benchmark: the aggregate route cache (Panama's, 003_*) in front of DIR-24-8
//! against DIR-24-8 alone, on the full IPv4 table, for several cache sizes and destination
//! traces: uniformly random addresses, and Zipf-distributed over the announced prefixes
//! (skews 0.8, 1.0, 1.2; a random host inside the chosen prefix; prefix ranks shuffled).
//! Prints the hit ratio and batched lookups per second of both, measured in the same run
//! (best of five passes each, alternating), and checks every answer of the cached structure
//! against DIR-24-8's.
//!
//! Run: `cargo run --release -p sluice-elements --example route_cache_bench -- [TABLE.gz]
//! [LOOKUPS]` (default table ../shared/data/ipv4-prefixes.txt.gz, derived from RouteViews,
//! the RIRs via NRO, and DB-IP, CC BY 4.0; default 4,000,000 lookups per trace).

use std::time::Instant;

use sluice_elements::lookup::dir24::Dir24;
use sluice_elements::lookup::route_cache::Cached;
use sluice_elements::lookup::table::{mask_of, Lpm, Route, RouteTable};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn load(path: &str) -> Vec<Route> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", path])
        .output()
        .expect("runs gzip");
    assert!(out.status.success(), "gzip -dc {} failed", path);
    String::from_utf8(out.stdout)
        .expect("utf-8 table")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| Route::parse(l).expect("table line"))
        .collect()
}

/// `n` destinations Zipf-distributed with skew `s` over `ranked` (rank i has weight
/// 1/(i+1)^s), each a random host inside its prefix.
fn zipf(ranked: &[Route], s: f64, n: usize, rng: &mut XorShift) -> Vec<u32> {
    let mut cdf = Vec::with_capacity(ranked.len());
    let mut sum = 0.0;
    for i in 0..ranked.len() {
        sum += 1.0 / ((i + 1) as f64).powf(s);
        cdf.push(sum);
    }
    (0..n)
        .map(|_| {
            let u = rng.unit() * sum;
            let r = ranked[cdf.partition_point(|&c| c < u).min(ranked.len() - 1)];
            r.addr | (rng.next() as u32 & !mask_of(r.len))
        })
        .collect()
}

/// Seconds for one batched pass (32 at a time, as in the element) over `addrs`.
fn pass<T: Lpm<Addr = u32>>(t: &T, addrs: &[u32], out: &mut [u32]) -> f64 {
    let t0 = Instant::now();
    for (a, o) in addrs.chunks(32).zip(out.chunks_mut(32)) {
        t.lookup_batch(a, o);
    }
    std::hint::black_box(&out);
    t0.elapsed().as_secs_f64()
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
        .unwrap_or(4_000_000);
    let routes = load(path);
    let mut plain: RouteTable<Dir24> = RouteTable::default();
    for r in &routes {
        plain.add(*r, true).expect("adds");
    }
    let mut rng = XorShift(0x5eed);
    let mut ranked = routes.clone();
    for i in (1..ranked.len()).rev() {
        ranked.swap(i, rng.next() as usize % (i + 1));
    }
    let mut traces: Vec<(String, Vec<u32>)> = vec![(
        "uniform".into(),
        (0..n).map(|_| rng.next() as u32).collect(),
    )];
    for s in [0.8, 1.0, 1.2] {
        traces.push((format!("zipf {s}"), zipf(&ranked, s, n, &mut rng)));
    }
    println!(
        "table {} ({} prefixes), {} lookups per trace, batches of 32, best of 5 passes",
        path,
        routes.len(),
        n
    );
    println!(
        "{:<10} {:>6} {:>8} {:>10} {:>14} {:>14} {:>7}  index bits",
        "trace", "cache", "load s", "hit %", "cached Ml/s", "dir24 Ml/s", "ratio"
    );
    let mut out = vec![0u32; n];
    let mut want = vec![0u32; n];
    for bits in [10u8, 14, 16] {
        let t0 = Instant::now();
        // Routes added in the same order give the same next-hop ids as the plain table.
        let mut cached =
            RouteTable::with(Cached::with_bits(Dir24::default(), bits).expect("cache bits"));
        for r in &routes {
            cached.add(*r, true).expect("adds");
        }
        let load_s = t0.elapsed().as_secs_f64();
        for (name, addrs) in &traces {
            let (mut best_c, mut best_p) = (f64::MAX, f64::MAX);
            cached.lpm.reset_counts();
            for _ in 0..5 {
                best_c = best_c.min(pass(&cached.lpm, addrs, &mut out));
                best_p = best_p.min(pass(&plain.lpm, addrs, &mut want));
            }
            assert_eq!(out, want, "cached answers differ on {name}");
            let s = cached.lpm.stats();
            println!(
                "{:<10} {:>6} {:>8.2} {:>10.2} {:>14.1} {:>14.1} {:>7.2}  {:?}",
                name,
                1u32 << bits,
                load_s,
                s.hit_ratio() * 100.0,
                n as f64 / best_c / 1e6,
                n as f64 / best_p / 1e6,
                best_p / best_c,
                s.bits
            );
        }
    }
}
