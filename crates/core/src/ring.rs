//! Lock-free bounded rings for moving items between threads.
//!
//! [`Ring`] is a multi-producer, multi-consumer bounded queue after Vyukov's design: every slot
//! carries a sequence number that tells producers and consumers whose turn it is, so an
//! enqueue or dequeue is one compare-and-swap on a shared index plus one store on the slot.
//! With a single producer and a single consumer the CAS never fails. Batch operations claim
//! several slots with one CAS.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Pads a value to its own cache line to avoid false sharing between producer and consumer.
#[repr(align(128))]
struct CachePadded<T>(T);

struct Slot<T> {
    seq: AtomicUsize,
    val: UnsafeCell<MaybeUninit<T>>,
}

/// A bounded lock-free MPMC ring.
pub struct Ring<T> {
    slots: Box<[Slot<T>]>,
    mask: usize,
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
}

// SAFETY: values are moved in and out through slots whose ownership is handed over by the
// sequence-number protocol; a slot is accessed by exactly one thread between the acquire that
// grants it and the release that publishes it. `T: Send` is enough to move values across.
unsafe impl<T: Send> Send for Ring<T> {}
// SAFETY: as above; shared references only reach slots through that protocol.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring holding at least `capacity` items (rounded up to a power of two, at least 2).
    pub fn new(capacity: usize) -> Ring<T> {
        let cap = capacity.max(2).next_power_of_two();
        let slots = (0..cap)
            .map(|i| Slot {
                seq: AtomicUsize::new(i),
                val: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect::<Vec<_>>()
            .into_boxed_slice();
        Ring {
            slots,
            mask: cap - 1,
            head: CachePadded(AtomicUsize::new(0)),
            tail: CachePadded(AtomicUsize::new(0)),
        }
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Approximate number of items (exact when no operation is in flight).
    pub fn len(&self) -> usize {
        // Head first: tail only grows and never falls behind a head read earlier, so the
        // difference cannot underflow.
        let h = self.head.0.load(Ordering::SeqCst);
        let t = self.tail.0.load(Ordering::SeqCst);
        t.wrapping_sub(h).min(self.capacity())
    }

    /// True if the ring looks empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Claims up to `want` consecutive positions on `index` whose slots are ready (`ready(seq,
    /// pos)`); returns the first position and the count.
    fn claim(&self, index: &AtomicUsize, want: usize, lag: usize) -> Option<(usize, usize)> {
        if want == 0 {
            return None;
        }
        let mut pos = index.load(Ordering::Relaxed);
        loop {
            let mut n = 0;
            while n < want {
                let p = pos.wrapping_add(n);
                let seq = self.slots[p & self.mask].seq.load(Ordering::Acquire);
                if seq != p.wrapping_add(lag) {
                    break;
                }
                n += 1;
            }
            if n == 0 {
                let p = pos;
                let seq = self.slots[p & self.mask].seq.load(Ordering::Acquire);
                if (seq as isize).wrapping_sub(p.wrapping_add(lag) as isize) < 0 {
                    return None;
                }
                pos = index.load(Ordering::Relaxed);
                continue;
            }
            match index.compare_exchange_weak(
                pos,
                pos.wrapping_add(n),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some((pos, n)),
                Err(cur) => pos = cur,
            }
        }
    }

    /// Adds one item; gives it back if the ring is full.
    pub fn push(&self, v: T) -> Result<(), T> {
        let Some((pos, _)) = self.claim(&self.tail.0, 1, 0) else {
            return Err(v);
        };
        let slot = &self.slots[pos & self.mask];
        // SAFETY: the CAS in `claim` gave this thread exclusive ownership of the slot until the
        // release store below publishes it to consumers.
        unsafe { (*slot.val.get()).write(v) };
        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
        Ok(())
    }

    /// Adds items from `items` in order while there is room; returns how many were taken
    /// (taken from the front of the iterator).
    pub fn push_many(&self, items: &mut impl Iterator<Item = T>, max: usize) -> usize {
        let Some((pos, n)) = self.claim(&self.tail.0, max, 0) else {
            return 0;
        };
        let mut done = 0;
        for i in 0..n {
            let p = pos.wrapping_add(i);
            let slot = &self.slots[p & self.mask];
            match items.next() {
                Some(v) => {
                    // SAFETY: slot claimed by this thread in `claim`.
                    unsafe { (*slot.val.get()).write(v) };
                    slot.seq.store(p.wrapping_add(1), Ordering::Release);
                    done += 1;
                }
                None => unreachable!("push_many caller promised at least `max` items"),
            }
        }
        done
    }

    /// Removes one item.
    pub fn pop(&self) -> Option<T> {
        let (pos, _) = self.claim(&self.head.0, 1, 1)?;
        let slot = &self.slots[pos & self.mask];
        // SAFETY: claimed slot holds an initialised value published by a producer's release
        // store; we take it and hand the slot back for the producer one lap ahead.
        let v = unsafe { (*slot.val.get()).assume_init_read() };
        slot.seq
            .store(pos.wrapping_add(self.mask + 1), Ordering::Release);
        Some(v)
    }

    /// Removes up to `max` items, passing each to `f` in order; returns how many.
    pub fn pop_many(&self, max: usize, mut f: impl FnMut(T)) -> usize {
        let Some((pos, n)) = self.claim(&self.head.0, max, 1) else {
            return 0;
        };
        for i in 0..n {
            let p = pos.wrapping_add(i);
            let slot = &self.slots[p & self.mask];
            // SAFETY: as in `pop`.
            let v = unsafe { (*slot.val.get()).assume_init_read() };
            slot.seq
                .store(p.wrapping_add(self.mask + 1), Ordering::Release);
            f(v);
        }
        n
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        while self.pop().is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_and_bounds() {
        let r = Ring::new(4);
        for i in 0..4 {
            r.push(i).unwrap();
        }
        assert_eq!(r.push(9), Err(9));
        assert_eq!(r.pop(), Some(0));
        r.push(4).unwrap();
        let mut got = Vec::new();
        r.pop_many(10, |v| got.push(v));
        assert_eq!(got, vec![1, 2, 3, 4]);
        assert!(r.pop().is_none());
        let mut it = 10..13;
        assert_eq!(r.push_many(&mut it, 0), 0);
        assert_eq!(r.pop_many(0, |_| ()), 0);
        assert_eq!(r.push_many(&mut it, 3), 3);
        assert_eq!(r.len(), 3);
    }

    #[test]
    fn drops_remaining_items() {
        let v = Arc::new(());
        {
            let r = Ring::new(8);
            r.push(v.clone()).unwrap();
            r.push(v.clone()).unwrap();
            assert_eq!(Arc::strong_count(&v), 3);
        }
        assert_eq!(Arc::strong_count(&v), 1);
    }

    #[test]
    fn many_producers_one_consumer_lose_nothing() {
        const PER: usize = 200_000;
        const PRODUCERS: usize = 4;
        let r = Arc::new(Ring::new(256));
        let mut hs = Vec::new();
        for t in 0..PRODUCERS {
            let r = r.clone();
            hs.push(std::thread::spawn(move || {
                let mut i = 0;
                while i < PER {
                    let mut it = (i..(i + 8).min(PER)).map(|x| (t, x));
                    let want = (PER - i).min(8);
                    let n = r.push_many(&mut it, want);
                    i += n;
                    if n == 0 {
                        std::thread::yield_now();
                    }
                }
            }));
        }
        let mut next = [0usize; PRODUCERS];
        let mut total = 0;
        while total < PER * PRODUCERS {
            let n = r.pop_many(32, |(t, x)| {
                assert_eq!(
                    x, next[t],
                    "per-producer order kept, nothing lost or duplicated"
                );
                next[t] += 1;
            });
            total += n;
            if n == 0 {
                std::thread::yield_now();
            }
        }
        for h in hs {
            h.join().unwrap();
        }
        assert!(r.pop().is_none());
    }
}
