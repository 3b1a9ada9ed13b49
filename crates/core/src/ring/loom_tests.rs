//! Loom models of the rings: every interleaving of a few threads (up to a preemption bound)
//! and every value the memory model lets each atomic load return, with loom's checks that
//! no slot is read and written at once. Run with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test --profile tests -p sluice-core --lib ring::loom_tests`.
//!
//! [`Ring`] takes any number of producers and consumers, so it is checked with one of each
//! and with two on one side; [`SpscRing`] with one producer and one consumer, and with two
//! producers to check that a second one is turned away rather than racing.

use super::{Ring, SpscRing};
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use loom::sync::Arc;
use loom::thread;

/// Explores `f` under loom with at most `preemptions` preemptions per execution (unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise): loom's documentation finds that a bound of two or
/// three catches most bugs, and the bound keeps the whole run short.
fn model(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = b.preemption_bound.or(Some(preemptions));
    b.check(f);
}

/// Pushes `v` onto `r`, yielding while the ring is full. (Only one thread of a model may
/// wait like this: loom cannot rule out two waiting threads taking turns forever.)
fn push(r: &Ring<usize>, mut v: usize) {
    while let Err(back) = r.push(v) {
        assert_eq!(back, v, "a refused push gives the item back");
        v = back;
        thread::yield_now();
    }
}

/// Pops one item from `r`, yielding while the ring is empty.
fn pop<T>(r: &Ring<T>) -> T {
    loop {
        if let Some(v) = r.pop() {
            return v;
        }
        thread::yield_now();
    }
}

#[test]
fn one_producer_one_consumer_in_order() {
    model(3, || {
        let r = Arc::new(Ring::new(2).unwrap());
        let p = r.clone();
        // Three items through two slots: the third push reuses the first slot.
        let h = thread::spawn(move || (0..3).for_each(|i| push(&p, i)));
        for i in 0..3 {
            assert_eq!(pop(&r), i, "items arrive once and in order");
        }
        h.join().unwrap();
        assert_eq!(r.pop(), None);
        assert_eq!(r.len(), 0);
    });
}

/// What the batch model needs of a ring: both kinds move items in batches the same way.
trait Batches: Send + Sync + 'static {
    fn push_many(&self, items: &mut std::ops::Range<usize>, max: usize) -> usize;
    fn pop_many(&self, max: usize, f: impl FnMut(usize)) -> usize;
    fn len(&self) -> usize;
}

impl Batches for Ring<usize> {
    fn push_many(&self, items: &mut std::ops::Range<usize>, max: usize) -> usize {
        Ring::push_many(self, items, max)
    }
    fn pop_many(&self, max: usize, f: impl FnMut(usize)) -> usize {
        Ring::pop_many(self, max, f)
    }
    fn len(&self) -> usize {
        Ring::len(self)
    }
}

impl Batches for SpscRing<usize> {
    fn push_many(&self, items: &mut std::ops::Range<usize>, max: usize) -> usize {
        SpscRing::push_many(self, items, max)
    }
    fn pop_many(&self, max: usize, f: impl FnMut(usize)) -> usize {
        SpscRing::pop_many(self, max, f)
    }
    fn len(&self) -> usize {
        SpscRing::len(self)
    }
}

/// One producer pushes three items in batches into a ring of two slots made by `make`, one
/// consumer pops them in batches: they arrive once and in order, and the ring ends empty.
fn batches_in_order<R: Batches>(make: fn() -> R) {
    model(3, move || {
        let r = Arc::new(make());
        let p = r.clone();
        let h = thread::spawn(move || {
            let mut items = 0..3;
            while !items.is_empty() {
                let want = items.len();
                if p.push_many(&mut items, want) == 0 {
                    thread::yield_now();
                }
            }
        });
        let mut got = Vec::new();
        while got.len() < 3 {
            if r.pop_many(2, |v| got.push(v)) == 0 {
                thread::yield_now();
            }
        }
        h.join().unwrap();
        assert_eq!(got, [0, 1, 2], "items arrive once and in order");
        assert_eq!(r.len(), 0);
    });
}

#[test]
fn batches_one_producer_one_consumer_in_order() {
    batches_in_order(|| Ring::new(2).unwrap());
}

/// What a producer that tries each item once saw: the items the ring took, and for each
/// refusal the consumers' pop count read just before the attempt.
#[derive(Default)]
struct Offered {
    taken: Vec<usize>,
    refused_after_pops: Vec<usize>,
}

/// Checks a run of producers that tried each item once against what the consumers got
/// (`got`: each consumer's items in the order it popped them, the last one the leftovers
/// drained after every thread ended).
fn check_run(r: &Ring<usize>, offered: &[Offered], got: &[Vec<usize>]) {
    let mut all_got: Vec<usize> = got.concat();
    all_got.sort_unstable();
    let mut all_taken: Vec<usize> = offered.iter().flat_map(|o| o.taken.clone()).collect();
    all_taken.sort_unstable();
    assert_eq!(all_got, all_taken, "every item taken arrives exactly once");
    for o in offered {
        assert!(o.taken.is_sorted());
        for g in got {
            let mine: Vec<usize> = g.iter().copied().filter(|v| o.taken.contains(v)).collect();
            assert!(mine.is_sorted(), "a producer's items arrive in its order");
        }
        // A push is refused only when `capacity` items are in the ring or on their way out:
        // at most `taken - pops seen` of them can be.
        for &pops in &o.refused_after_pops {
            assert!(
                all_taken.len() - pops >= r.capacity(),
                "'full' with {} items taken and {pops} already popped",
                all_taken.len()
            );
        }
    }
}

/// Pops what is left once every thread has ended.
fn drain(r: &Ring<usize>) -> Vec<usize> {
    std::iter::from_fn(|| r.pop()).collect()
}

#[test]
fn two_producers_one_consumer_lose_nothing() {
    // Threads that wait for each other can starve a third under loom's scheduler, so every
    // thread tries a bounded number of times; what is left is drained at the end. Four items
    // through two slots: producers race for slots, meet a full ring, and wrap around when
    // the consumer made room. One producer pushes one at a time, the other a batch of two.
    // The largest model here: two preemptions explore it in seconds (three take minutes).
    model(2, || {
        let r = Arc::new(Ring::new(2).unwrap());
        let pops = Arc::new(AtomicUsize::new(0));
        let done = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let single = {
            let (p, pops, done) = (r.clone(), pops.clone(), done.clone());
            thread::spawn(move || {
                let mut o = Offered::default();
                for v in [0, 1] {
                    let seen = pops.load(Ordering::Acquire);
                    match p.push(v) {
                        Ok(()) => o.taken.push(v),
                        Err(back) => {
                            assert_eq!(back, v, "a refused push gives the item back");
                            o.refused_after_pops.push(seen);
                        }
                    }
                }
                done[0].store(true, Ordering::Release);
                o
            })
        };
        let batch = {
            let (p, pops, done) = (r.clone(), pops.clone(), done.clone());
            thread::spawn(move || {
                let mut o = Offered::default();
                let seen = pops.load(Ordering::Acquire);
                let mut items = [2, 3].into_iter();
                let n = p.push_many(&mut items, 2);
                o.taken.extend([2, 3].into_iter().take(n));
                assert_eq!(items.len(), 2 - n, "a batch takes only what it pushed");
                if n < 2 {
                    o.refused_after_pops.push(seen);
                }
                done[1].store(true, Ordering::Release);
                o
            })
        };
        let mut got = Vec::new();
        let mut saw_final_empty = false;
        for _ in 0..3 {
            let finished = done.iter().all(|d| d.load(Ordering::Acquire));
            match r.pop() {
                Some(v) => {
                    got.push(v);
                    pops.store(got.len(), Ordering::Release);
                }
                None => {
                    saw_final_empty = finished;
                    if finished {
                        break;
                    }
                }
            }
        }
        let offered = [single.join().unwrap(), batch.join().unwrap()];
        let rest = drain(&r);
        assert!(
            !saw_final_empty || rest.is_empty(),
            "'empty' after both producers finished, yet {rest:?} was left"
        );
        check_run(&r, &offered, &[got, rest]);
        assert!(r.is_empty());
    });
}

#[test]
fn two_producers_full_and_empty_answers_hold() {
    model(3, || {
        // Two slots and two producers of one item each: a push can never find the ring full.
        let r = Arc::new(Ring::new(2).unwrap());
        let done = Arc::new([AtomicBool::new(false), AtomicBool::new(false)]);
        let hs: Vec<_> = (0..2)
            .map(|t| {
                let (p, done) = (r.clone(), done.clone());
                thread::spawn(move || {
                    assert_eq!(p.push(t), Ok(()), "no false 'full' while producers race");
                    done[t].store(true, Ordering::Release);
                })
            })
            .collect();
        // The consumer pops once; once it has seen both pushes finish, it must get an item.
        let both_seen = done.iter().all(|d| d.load(Ordering::Acquire));
        let first = r.pop();
        if both_seen {
            assert!(
                first.is_some(),
                "no false 'empty' after both pushes finished"
            );
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(r.len(), 2 - usize::from(first.is_some()));
        let mut got: Vec<usize> = first.into_iter().chain(drain(&r)).collect();
        got.sort_unstable();
        assert_eq!(got, [0, 1], "each item once");
        // Now full and empty are exact: two pushes fit, the third is turned away.
        assert_eq!(r.push(5), Ok(()));
        assert_eq!(r.push(6), Ok(()));
        assert_eq!(r.push(7), Err(7));
    });
}

#[test]
fn one_producer_two_consumers_lose_nothing() {
    // As above, every thread tries a bounded number of times. Three items through two slots;
    // one consumer pops one at a time, the other in a batch.
    model(3, || {
        let r = Arc::new(Ring::new(2).unwrap());
        let pops = Arc::new(AtomicUsize::new(0));
        let producer = {
            let (p, pops) = (r.clone(), pops.clone());
            thread::spawn(move || {
                let mut o = Offered::default();
                for v in 0..3 {
                    let seen = pops.load(Ordering::Acquire);
                    match p.push(v) {
                        Ok(()) => o.taken.push(v),
                        Err(_) => o.refused_after_pops.push(seen),
                    }
                }
                o
            })
        };
        let batch = {
            let (c, pops) = (r.clone(), pops.clone());
            thread::spawn(move || {
                let mut got = Vec::new();
                let n = c.pop_many(2, |v| got.push(v));
                assert_eq!(n, got.len());
                pops.fetch_add(n, Ordering::AcqRel);
                got
            })
        };
        let mut got = Vec::new();
        for _ in 0..2 {
            if let Some(v) = r.pop() {
                got.push(v);
                pops.fetch_add(1, Ordering::AcqRel);
            }
        }
        let offered = [producer.join().unwrap()];
        let theirs = batch.join().unwrap();
        let rest = drain(&r);
        check_run(&r, &offered, &[got, theirs, rest]);
    });
}

/// An item that records its drop in a shared bit set, and fails on a second drop.
struct Tracked {
    id: usize,
    drops: Arc<AtomicUsize>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let before = self.drops.fetch_or(1 << self.id, Ordering::Relaxed);
        assert_eq!(before & (1 << self.id), 0, "item {} dropped twice", self.id);
    }
}

fn tracked(
    drops: &Arc<AtomicUsize>,
    ids: std::ops::Range<usize>,
) -> impl Iterator<Item = Tracked> + '_ {
    ids.map(|id| Tracked {
        id,
        drops: drops.clone(),
    })
}

#[test]
fn ring_drop_drops_each_item_once() {
    model(3, || {
        let drops = Arc::new(AtomicUsize::new(0));
        let r = Arc::new(Ring::new(4).unwrap());
        let (p, c) = (r.clone(), r.clone());
        // The last of the three handles drops the ring, with whatever is left in it, on
        // whichever thread lets go last.
        drop(r);
        let d = drops.clone();
        let producer = thread::spawn(move || {
            for item in tracked(&d, 0..3) {
                assert!(p.push(item).is_ok());
            }
        });
        let consumer = thread::spawn(move || drop(c.pop()));
        producer.join().unwrap();
        consumer.join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 0b111, "every item dropped");
    });
}

#[test]
fn spsc_one_producer_one_consumer_in_order() {
    batches_in_order(|| SpscRing::new(2).unwrap());
}

#[test]
fn spsc_second_producer_is_turned_away_not_racing() {
    model(3, || {
        // Misuse: two threads push at once. Loom fails the test if both reach a slot.
        let r = Arc::new(SpscRing::new(2).unwrap());
        let hs: Vec<_> = (0..2)
            .map(|t| {
                let p = r.clone();
                thread::spawn(move || {
                    let mut items = t..t + 1;
                    let n = p.push_many(&mut items, 1);
                    assert_eq!(items.len(), 1 - n, "a refused push takes nothing");
                    n
                })
            })
            .collect();
        let pushed: usize = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert!(pushed >= 1, "two pushes cannot both be turned away");
        let mut got = Vec::new();
        assert_eq!(r.pop_many(4, |v| got.push(v)), pushed);
    });
}

#[test]
fn spsc_drop_drops_each_item_once() {
    model(3, || {
        let drops = Arc::new(AtomicUsize::new(0));
        let r = Arc::new(SpscRing::new(4).unwrap());
        let (p, c) = (r.clone(), r.clone());
        drop(r);
        let d = drops.clone();
        let producer = thread::spawn(move || {
            assert_eq!(p.push_many(&mut tracked(&d, 0..3), 3), 3);
        });
        let consumer = thread::spawn(move || c.pop_many(1, drop));
        producer.join().unwrap();
        consumer.join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 0b111, "every item dropped");
    });
}
