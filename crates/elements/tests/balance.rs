//! Adaptive placement: task groups move between threads by measured cost, losing nothing.

use sluice_testkit::{num, router_with, task_threads};

const HEAVY_TWO_LIGHT_ONE: &str = "
    s0 :: InfiniteSource(LIMIT 3000000) -> SyntheticLoad(1, 1K, CYCLES 300) -> c0 :: Counter -> Discard;
    s1 :: InfiniteSource(LIMIT 3000000) -> c1 :: Counter -> Discard;
    s2 :: InfiniteSource(LIMIT 3000000) -> SyntheticLoad(1, 1K, CYCLES 300) -> c2 :: Counter -> Discard;";

#[test]
fn heavy_groups_spread_over_threads_and_nothing_is_lost() {
    // By count, s0 and s2 (both heavy) start on thread 0 and the light s1 on thread 1; the
    // balancer measures their cost and moves one heavy group to thread 1.
    let mut r = router_with(HEAVY_TWO_LIGHT_ONE, 2, &[], &[]);
    r.run_until_idle();
    for c in ["c0", "c1", "c2"] {
        assert_eq!(num(&mut r, &format!("{}.count", c)), 3_000_000, "{}", c);
    }
    let th = task_threads(&mut r);
    let (t0, t2) = (th["s0"], th["s2"]);
    assert_ne!(t0, t2, "heavy groups end on different threads: {:?}", th);
}

#[test]
fn statically_placed_groups_stay() {
    let conf = format!(
        "{} StaticThreadSched(s0 0, s2 0, s1 1);",
        HEAVY_TWO_LIGHT_ONE
    );
    let mut r = router_with(&conf, 2, &[], &[]);
    r.run_until_idle();
    let th = task_threads(&mut r);
    assert!(
        th.iter().all(|(n, t)| *t == if n == "s1" { 1 } else { 0 }),
        "{:?}",
        th
    );
    assert_eq!(num(&mut r, "c2.count"), 3_000_000);
}
