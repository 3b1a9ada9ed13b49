//! CPUQueue: per-thread rings pulled round-robin.

use sluice_testkit::{num, router, router_with};

#[test]
fn producers_on_two_threads_lose_nothing() {
    let conf = "a :: InfiniteSource(LIMIT 200000) -> q :: CPUQueue(100000);
                b :: InfiniteSource(LIMIT 100000) -> q;
                q -> u :: Unqueue -> c :: Counter -> d :: Discard;
                StaticThreadSched(a 0, b 1, u 1);";
    let mut r = router_with(conf, 2, &[], &[]);
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count") + num(&mut r, "q.drops"), 300000);
    assert_eq!(num(&mut r, "q.length"), 0);
    assert_eq!(num(&mut r, "q.capacity"), 100000);
}

#[test]
fn one_thread_behaves_like_a_queue() {
    let conf = "InfiniteSource(LIMIT 5000) -> q :: CPUQueue(10000) -> u :: Unqueue -> c :: Counter -> Discard;";
    let mut r = router(conf);
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 5000);
}

#[test]
fn queue_batching_holds_packets_back_only_for_a_while() {
    // 100 packets, batches of 64: the last 36 wait for LATENCY, then the puller gets them.
    let conf = "s :: InfiniteSource(LIMIT 100) -> q :: ThreadSafeQueue(1000, BATCH 64, LATENCY 1ms)
                -> u :: Unqueue -> c :: Counter -> Discard;
                StaticThreadSched(s 0, u 1);";
    let mut r = router_with(conf, 2, &[], &[]);
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 100);
    assert_eq!(num(&mut r, "q.length"), 0);
}
