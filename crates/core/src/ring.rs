//! Lock-free bounded rings for moving items between threads.
//!
//! [`Ring`] is a multi-producer, multi-consumer bounded queue after Vyukov's design: every slot
//! carries a sequence number that tells producers and consumers whose turn it is, so an
//! enqueue or dequeue is one compare-and-swap on a shared index plus one store on the slot.
//! With a single producer and a single consumer the CAS never fails. Batch operations claim
//! several slots with one CAS.
//!
//! Both rings take their slots as zeroed memory that nothing writes at creation, so the
//! operating system commits a page only when the ring first reaches it: a large ring costs
//! address space, and memory only as far as it fills. Creation fails cleanly (`None`) when
//! the capacity is above [`MAX_CAPACITY`] or the address space cannot be had.
//!
//! Built with `RUSTFLAGS="--cfg loom"`, the rings use loom's atomics and cells instead of
//! std's, and the tests in `ring/loom_tests.rs` explore the interleavings of small models up
//! to a preemption bound (scripts/test.sh has the command).

use std::mem::MaybeUninit;

#[cfg(loom)]
use loom::cell::UnsafeCell;
#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std_cell::UnsafeCell;

#[cfg(all(test, loom))]
mod loom_tests;

/// std's `UnsafeCell` behind the closure API of loom's, so that slot accesses read the same
/// in both builds (loom's checks every access against the memory model).
#[cfg(not(loom))]
mod std_cell {
    /// Zero bytes are a valid one whenever they are a valid `T` (`repr(transparent)`).
    #[repr(transparent)]
    pub(super) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        /// Calls `f` with a pointer to the value.
        #[inline(always)]
        pub(super) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

/// Moves `v` into a slot.
///
/// # Safety
/// The calling thread owns the slot (no other thread touches it until this one publishes it)
/// and the slot holds no value.
#[inline(always)]
unsafe fn put<T>(slot: &UnsafeCell<MaybeUninit<T>>, v: T) {
    // SAFETY: the caller's promise: the pointer is valid and nobody else accesses the slot.
    slot.with_mut(|p| unsafe { (*p).write(v) });
}

/// Moves the value out of a slot, which is then logically empty.
///
/// # Safety
/// The calling thread owns the slot (no other thread touches it until this one hands it back)
/// and the slot holds an initialised value.
#[inline(always)]
unsafe fn take<T>(slot: &UnsafeCell<MaybeUninit<T>>) -> T {
    // SAFETY: the caller's promise: the pointer is valid, nobody else accesses the slot, and
    // the value is initialised; the caller treats it as gone afterwards.
    slot.with_mut(|p| unsafe { (*p).assume_init_read() })
}

/// Largest ring, in items (2^24 = 16,777,216): ThreadSafeQueue and CPUQueue refuse a larger
/// CAPACITY. A full ring of this size holds 32 GiB of 2 KiB packet buffers; its slots take
/// 256 MiB of address space.
pub const MAX_CAPACITY: usize = 1 << 24;

/// `n` slots of all-zero bytes, allocated without being written (calloc hands out fresh
/// pages the kernel commits on first touch); `None` if the memory cannot be had.
///
/// # Safety
/// All-zero bytes must be a valid `S`.
#[cfg(not(loom))]
unsafe fn zeroed_slots<S>(n: usize) -> Option<Box<[S]>> {
    let layout = std::alloc::Layout::array::<S>(n).ok()?;
    if layout.size() == 0 {
        let dangling = std::ptr::NonNull::<S>::dangling().as_ptr();
        // SAFETY: a slice of zero-sized values needs no memory; a dangling, aligned pointer
        // is what `Box` uses for them and never frees.
        return Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(dangling, n)) });
    }
    // SAFETY: the layout has a non-zero size (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<S>();
    if ptr.is_null() {
        return None;
    }
    // SAFETY: `ptr` comes from the global allocator with the layout of `[S; n]`, which is the
    // layout `Box<[S]>` frees with; its `n` elements are zero bytes, a valid `S` (the caller's
    // promise).
    Some(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) })
}

/// The slot count for a requested capacity (a power of two, at least 2), or `None` above
/// [`MAX_CAPACITY`].
fn slot_count(capacity: usize) -> Option<usize> {
    (capacity <= MAX_CAPACITY).then(|| capacity.max(2).next_power_of_two())
}

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
    /// A ring holding at least `capacity` items (rounded up to a power of two, at least 2);
    /// `None` above [`MAX_CAPACITY`] or when memory is short.
    pub fn new(capacity: usize) -> Option<Ring<T>> {
        let cap = slot_count(capacity)?;
        #[cfg(not(loom))]
        // SAFETY: a zero sequence number and an uninitialised value are a valid slot not used
        // yet (see `claim`).
        let slots = unsafe { zeroed_slots::<Slot<T>>(cap) }?;
        // Loom's atomics and cells hold model state, so zero bytes are no valid slot there.
        #[cfg(loom)]
        let slots: Box<[Slot<T>]> = (0..cap)
            .map(|_| Slot {
                seq: AtomicUsize::new(0),
                val: UnsafeCell::new(MaybeUninit::uninit()),
            })
            .collect();
        Some(Ring {
            slots,
            mask: cap - 1,
            head: CachePadded(AtomicUsize::new(0)),
            tail: CachePadded(AtomicUsize::new(0)),
        })
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
                // A slot not used yet still holds the 0 of its fresh memory: it is free for
                // a producer in the first lap.
                if seq != p.wrapping_add(lag) && !(lag == 0 && seq == 0 && p <= self.mask) {
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
        unsafe { put(&slot.val, v) };
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
                    unsafe { put(&slot.val, v) };
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
        let v = unsafe { take(&slot.val) };
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
            let v = unsafe { take(&slot.val) };
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_and_bounds() {
        let r = Ring::new(4).unwrap();
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

    /// Resident memory of this process, in bytes.
    fn rss() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
        let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
        pages * 4096
    }

    #[test]
    fn capacity_is_bounded_and_memory_committed_as_used() {
        assert!(Ring::<u64>::new(MAX_CAPACITY + 1).is_none());
        assert!(SpscRing::<u64>::new(usize::MAX).is_none());
        let before = rss();
        let r = Ring::<u64>::new(MAX_CAPACITY).unwrap();
        let s = SpscRing::<u64>::new(MAX_CAPACITY).unwrap();
        assert_eq!(r.capacity(), MAX_CAPACITY);
        // 384 MiB of slots, not touched yet: far less is resident.
        assert!(rss().saturating_sub(before) < 64 << 20);
        for i in 0..1000 {
            r.push(i).unwrap();
        }
        assert_eq!(r.pop_many(2000, drop), 1000);
        assert_eq!(s.push_many(&mut (0..10), 10), 10);
        let z = SpscRing::<()>::new(4).unwrap();
        assert_eq!(z.push_many(&mut std::iter::repeat_n((), 9), 9), 4);
    }

    #[test]
    fn drops_remaining_items() {
        let v = Arc::new(());
        {
            let r = Ring::new(8).unwrap();
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
        let r = Arc::new(Ring::new(256).unwrap());
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

/// A bounded single-producer, single-consumer ring. The producer and the consumer each keep
/// their position on their own cache line and a cached copy of the other's, so a batch moves
/// with one look at the other side's line at most, and slots carry no sequence numbers.
///
/// It stays safe if misused: a second thread pushing (or popping) while another one does is
/// turned away (the call moves nothing) instead of racing.
pub struct SpscRing<T> {
    slots: Box<[UnsafeCell<MaybeUninit<T>>]>,
    mask: usize,
    prod: CachePadded<Side>,
    cons: CachePadded<Side>,
}

/// One side's state: its own position, its cached copy of the other side's, and a busy flag.
struct Side {
    pos: AtomicUsize,
    seen: AtomicUsize,
    busy: AtomicBool,
}

impl Side {
    fn new() -> Side {
        Side {
            pos: AtomicUsize::new(0),
            seen: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
        }
    }
}

// SAFETY: a slot is written only by the producer between its claim (tail not yet published)
// and the release store of the new tail, and read only by the consumer after acquiring that
// tail and before publishing its new head; the busy flags keep each side to one thread at a
// time. `T: Send` is enough to move values across threads.
unsafe impl<T: Send> Send for SpscRing<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for SpscRing<T> {}

impl<T> SpscRing<T> {
    /// A ring of at least `capacity` slots (rounded up to a power of two, at least 2); `None`
    /// above [`MAX_CAPACITY`] or when memory is short.
    pub fn new(capacity: usize) -> Option<SpscRing<T>> {
        let cap = slot_count(capacity)?;
        #[cfg(not(loom))]
        // SAFETY: any bytes are a valid uninitialised slot.
        let slots = unsafe { zeroed_slots::<UnsafeCell<MaybeUninit<T>>>(cap) }?;
        // Loom's cells hold model state, so zero bytes are no valid slot there.
        #[cfg(loom)]
        let slots: Box<[_]> = (0..cap)
            .map(|_| UnsafeCell::new(MaybeUninit::uninit()))
            .collect();
        Some(SpscRing {
            slots,
            mask: cap - 1,
            prod: CachePadded(Side::new()),
            cons: CachePadded(Side::new()),
        })
    }

    /// Slots in the ring.
    pub fn capacity(&self) -> usize {
        self.mask + 1
    }

    /// Items in the ring (exact when no operation is in flight).
    pub fn len(&self) -> usize {
        let h = self.cons.0.pos.load(Ordering::SeqCst);
        let t = self.prod.0.pos.load(Ordering::SeqCst);
        t.wrapping_sub(h)
    }

    /// True if the ring looks empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The producer's estimate of the length (never below the true length).
    pub fn producer_len(&self) -> usize {
        let p = &self.prod.0;
        p.pos
            .load(Ordering::Relaxed)
            .wrapping_sub(p.seen.load(Ordering::Relaxed))
    }

    /// The consumer's estimate of the length (never above the true length).
    pub fn consumer_len(&self) -> usize {
        let c = &self.cons.0;
        c.seen
            .load(Ordering::Relaxed)
            .wrapping_sub(c.pos.load(Ordering::Relaxed))
    }

    /// Adds up to `max` items from `items`, in order; returns how many went in (0 if the ring
    /// is full or another thread is pushing).
    pub fn push_many(&self, items: &mut impl Iterator<Item = T>, max: usize) -> usize {
        let p = &self.prod.0;
        if max == 0 || p.busy.swap(true, Ordering::Acquire) {
            return 0;
        }
        let tail = p.pos.load(Ordering::Relaxed);
        let mut head = p.seen.load(Ordering::Relaxed);
        if self.capacity() - tail.wrapping_sub(head) < max {
            head = self.cons.0.pos.load(Ordering::Acquire);
            p.seen.store(head, Ordering::Relaxed);
        }
        let room = self.capacity() - tail.wrapping_sub(head);
        let mut n = 0;
        while n < max.min(room) {
            let Some(v) = items.next() else { break };
            // SAFETY: slots from tail to head + capacity are free and owned by the producer
            // until the release store below publishes them.
            unsafe { put(&self.slots[tail.wrapping_add(n) & self.mask], v) };
            n += 1;
        }
        p.pos.store(tail.wrapping_add(n), Ordering::Release);
        p.busy.store(false, Ordering::Release);
        n
    }

    /// Removes up to `max` items, passing each to `f` in order; returns how many (0 if empty
    /// or another thread is popping).
    pub fn pop_many(&self, max: usize, mut f: impl FnMut(T)) -> usize {
        let c = &self.cons.0;
        if max == 0 || c.busy.swap(true, Ordering::Acquire) {
            return 0;
        }
        let head = c.pos.load(Ordering::Relaxed);
        let mut tail = c.seen.load(Ordering::Relaxed);
        if tail.wrapping_sub(head) < max {
            tail = self.prod.0.pos.load(Ordering::Acquire);
            c.seen.store(tail, Ordering::Relaxed);
        }
        let n = tail.wrapping_sub(head).min(max);
        for i in 0..n {
            // SAFETY: slots from head to tail were published by the producer's release store
            // (acquired above) and belong to the consumer until its release store below.
            let v = unsafe { take(&self.slots[head.wrapping_add(i) & self.mask]) };
            f(v);
        }
        c.pos.store(head.wrapping_add(n), Ordering::Release);
        c.busy.store(false, Ordering::Release);
        n
    }
}

impl<T> Drop for SpscRing<T> {
    fn drop(&mut self) {
        while self.pop_many(64, drop) > 0 {}
    }
}

#[cfg(all(test, not(loom)))]
mod spsc_tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fifo_bounds_and_drop() {
        let r = SpscRing::new(4).unwrap();
        assert_eq!(r.push_many(&mut (0..10), 10), 4);
        assert_eq!(r.len(), 4);
        let mut got = Vec::new();
        assert_eq!(r.pop_many(3, |v| got.push(v)), 3);
        assert_eq!(r.push_many(&mut (10..20), 10), 3);
        r.pop_many(10, |v| got.push(v));
        assert_eq!(got, vec![0, 1, 2, 3, 10, 11, 12]);
        let v = Arc::new(());
        let r2 = SpscRing::new(8).unwrap();
        r2.push_many(&mut std::iter::repeat_n(v.clone(), 3), 3);
        drop(r2);
        assert_eq!(Arc::strong_count(&v), 1);
    }

    #[test]
    fn one_producer_one_consumer_lose_nothing() {
        const N: usize = 1_000_000;
        let r = Arc::new(SpscRing::new(256).unwrap());
        let p = r.clone();
        let h = std::thread::spawn(move || {
            let mut i = 0;
            while i < N {
                let n = p.push_many(&mut (i..(i + 16).min(N)), (N - i).min(16));
                i += n;
                if n == 0 {
                    std::thread::yield_now();
                }
            }
        });
        let mut next = 0;
        while next < N {
            if r.pop_many(32, |v| {
                assert_eq!(v, next);
                next += 1;
            }) == 0
            {
                std::thread::yield_now();
            }
        }
        h.join().unwrap();
        assert!(r.is_empty());
    }
}
