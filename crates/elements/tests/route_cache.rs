//! The aggregate route cache (Panama's, 003_*): in front of DIR-24-8 on the real Internet
//! table in ../shared/data/ipv4-prefixes.txt.gz (derived from RouteViews, the RIRs via NRO,
//! and DB-IP, CC BY 4.0) it answers exactly as DIR-24-8 alone through route changes; and the
//! `CACHE` keyword and `cache_*` handlers of DirectIPLookup and RadixIPLookup.

use sluice_elements::lookup::dir24::Dir24;
use sluice_elements::lookup::route_cache::Cached;
use sluice_elements::lookup::table::{mask_of, Lpm, Route, RouteTable};
use sluice_testkit::{config_error, num, router};

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The shared routing table, `../shared/data/` beside the repository.
const TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/ipv4-prefixes.txt.gz"
);

fn load_real_table() -> Vec<Route> {
    let out = std::process::Command::new("gzip")
        .args(["-dc", TABLE])
        .output()
        .unwrap_or_else(|e| panic!("cannot run gzip on {TABLE}: {e}"));
    assert!(out.status.success(), "cannot read {TABLE}");
    String::from_utf8(out.stdout)
        .expect("utf-8 table")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| Route::parse(l).expect("table line parses"))
        .collect()
}

/// A destination with locality: a random host inside a prefix drawn with a strong skew
/// towards the first prefixes of `hot`, or (one in four) a uniformly random address.
fn destination(rng: &mut XorShift, hot: &[Route]) -> u32 {
    let x = rng.next();
    if x.is_multiple_of(4) {
        return (x >> 32) as u32;
    }
    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
    let r = hot[((u * u * u * u) * hot.len() as f64) as usize];
    r.addr | (rng.next() as u32 & !mask_of(r.len))
}

#[test]
fn real_table_cached_dir24_equals_dir24_through_route_changes() {
    let routes = load_real_table();
    assert!(routes.len() > 500_000);
    let mut plain: RouteTable<Dir24> = RouteTable::default();
    let mut cached = RouteTable::with(Cached::with_bits(Dir24::default(), 14).unwrap());
    for r in &routes {
        plain.add(*r, true).unwrap();
        cached.add(*r, true).unwrap();
    }
    let mut hot = routes.clone();
    let mut rng = XorShift(0x5eed_cafe);
    for i in (1..hot.len()).rev() {
        hot.swap(i, rng.next() as usize % (i + 1));
    }
    let check = |plain: &RouteTable<Dir24>,
                 cached: &RouteTable<Cached<Dir24>>,
                 rng: &mut XorShift,
                 what: &str| {
        let addrs: Vec<u32> = (0..200_000).map(|_| destination(rng, &hot)).collect();
        let mut out = vec![0; addrs.len()];
        cached.lpm.lookup_batch(&addrs, &mut out);
        for (&a, &nh) in addrs.iter().zip(&out) {
            let want = plain.lookup(a);
            assert_eq!(
                cached.nexthops.get(nh as usize).copied(),
                want,
                "{what} {a:08x}"
            );
            assert_eq!(cached.lookup(a), want, "{what} {a:08x}");
        }
    };
    check(&plain, &cached, &mut rng, "full");
    let s = cached.lpm.stats();
    assert!(s.hits > 0 && s.misses > 0, "{s:?}");
    // Route changes among the hot prefixes between lookups: remove some, move others to
    // another port, and add more specifics inside others.
    for round in 0..5 {
        for (i, r) in hot.iter().take(400).enumerate() {
            match (i + round) % 3 {
                0 => {
                    let gone = plain.remove(r.addr, r.len);
                    assert_eq!(cached.remove(r.addr, r.len), gone);
                }
                1 => {
                    let moved = Route {
                        port: (r.port + 1 + round as u32) % 16,
                        ..*r
                    };
                    plain.add(moved, true).unwrap();
                    cached.add(moved, true).unwrap();
                }
                _ if r.len < 32 => {
                    let inner = Route {
                        len: r.len + 1,
                        port: 15 - r.port,
                        ..*r
                    };
                    plain.add(inner, true).unwrap();
                    cached.add(inner, true).unwrap();
                }
                _ => {}
            }
        }
        check(&plain, &cached, &mut rng, &format!("after changes {round}"));
    }
    let s = cached.lpm.stats();
    assert!(s.invalidations > 0, "{s:?}");
    assert_eq!(s.bits.len(), 14);
}

#[test]
fn cache_keyword_and_handlers() {
    for class in ["DirectIPLookup", "RadixIPLookup"] {
        let mut r = router(&format!(
            "InfiniteSource(LIMIT 0) -> rt :: {class}(18.26.4/24 1, 0/0 18.26.4.1 0, CACHE 6); \
             rt[0] -> Discard; rt[1] -> Discard"
        ));
        let look = |r: &mut sluice_core::Router, a: &str| {
            r.read_path_param("rt.lookup", Some(a))
                .unwrap()
                .trim()
                .to_string()
        };
        assert_eq!(look(&mut r, "18.26.4.9"), "1");
        assert_eq!(look(&mut r, "18.26.4.10"), "1");
        assert_eq!(num(&mut r, "rt.cache_misses"), 1, "{class}");
        assert_eq!(num(&mut r, "rt.cache_hits"), 1, "{class}");
        let bits = r.read_path("rt.cache_bits").unwrap();
        assert_eq!(bits.split_whitespace().count(), 6, "{class}: {bits}");
        r.write_path("rt.add", "18.26.4.128/25 10.0.0.2 0").unwrap();
        assert!(num(&mut r, "rt.cache_invalidations") >= 1, "{class}");
        assert_eq!(look(&mut r, "18.26.4.200"), "0 10.0.0.2");
        assert_eq!(look(&mut r, "18.26.4.10"), "1");
        r.write_path("rt.reset_counts", "").unwrap();
        assert_eq!(num(&mut r, "rt.cache_hits"), 0, "{class}");
        // Without CACHE there is no cache, and the handlers say so.
        let mut r = router(&format!(
            "InfiniteSource(LIMIT 0) -> rt :: {class}(0/0 0); rt[0] -> Discard"
        ));
        assert_eq!(look(&mut r, "1.2.3.4"), "0");
        assert_eq!(num(&mut r, "rt.cache_misses"), 0, "{class}");
        assert_eq!(r.read_path("rt.cache_bits").unwrap().trim(), "");
        let e = config_error(&format!(
            "InfiniteSource(LIMIT 0) -> {class}(0/0 0, CACHE 21) -> Discard"
        ));
        assert!(e.contains("CACHE"), "{class}: {e}");
    }
    let e = config_error("InfiniteSource(LIMIT 0) -> LinearIPLookup(0/0 0, CACHE 4) -> Discard");
    assert!(e.contains("CACHE"), "{e}");
}
