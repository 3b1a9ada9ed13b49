//! Adaptive placement: task groups move between threads by measured cost, losing nothing.

use sluice_core::{Router, RouterOptions};

fn router(conf: &str) -> Router {
    let flat = sluice_lang::parse_config(conf, "balance.click", &[]).expect("parses");
    Router::new(
        flat,
        &sluice_elements::library(),
        RouterOptions {
            threads: 2,
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}", e.join("\n")))
}

fn num(r: &mut Router, path: &str) -> u64 {
    r.read_path(path).unwrap().trim().parse().unwrap()
}

/// Thread of each task, from the `tasks` handler.
fn threads_of(r: &mut Router) -> Vec<(String, usize)> {
    r.read_path("tasks")
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[1].to_string(), f[0].parse().unwrap())
        })
        .collect()
}

const HEAVY_TWO_LIGHT_ONE: &str = "
    s0 :: InfiniteSource(LIMIT 3000000) -> SyntheticLoad(1, 1K, CYCLES 300) -> c0 :: Counter -> Discard;
    s1 :: InfiniteSource(LIMIT 3000000) -> c1 :: Counter -> Discard;
    s2 :: InfiniteSource(LIMIT 3000000) -> SyntheticLoad(1, 1K, CYCLES 300) -> c2 :: Counter -> Discard;";

#[test]
fn heavy_groups_spread_over_threads_and_nothing_is_lost() {
    // By count, s0 and s2 (both heavy) start on thread 0 and the light s1 on thread 1; the
    // balancer measures their cost and moves one heavy group to thread 1.
    let mut r = router(HEAVY_TWO_LIGHT_ONE);
    r.run_until_idle();
    for c in ["c0", "c1", "c2"] {
        assert_eq!(num(&mut r, &format!("{}.count", c)), 3_000_000, "{}", c);
    }
    let th = threads_of(&mut r);
    let t0 = th.iter().find(|(n, _)| n == "s0").unwrap().1;
    let t2 = th.iter().find(|(n, _)| n == "s2").unwrap().1;
    assert_ne!(t0, t2, "heavy groups end on different threads: {:?}", th);
}

#[test]
fn statically_placed_groups_stay() {
    let conf = format!(
        "{} StaticThreadSched(s0 0, s2 0, s1 1);",
        HEAVY_TWO_LIGHT_ONE
    );
    let mut r = router(&conf);
    r.run_until_idle();
    let th = threads_of(&mut r);
    assert!(
        th.iter().all(|(n, t)| *t == if n == "s1" { 1 } else { 0 }),
        "{:?}",
        th
    );
    assert_eq!(num(&mut r, "c2.count"), 3_000_000);
}
