//! Batches: up to [`BATCH_MAX`] packets that travel through the graph together.
//!
//! A batch is a pointer to a slot array taken from a per-thread pool, so handing a batch from
//! element to element moves two words, and making or dropping one allocates nothing once the
//! pool is warm.

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use crate::packet::Packet;

/// Largest number of packets in one batch.
pub const BATCH_MAX: usize = 32;

type Slots = [Option<Packet>; BATCH_MAX];

/// Slot arrays kept per thread for reuse.
const SLOT_POOL: usize = 256;

/// Slot arrays stay boxed in the pool: a batch points at its array, so recycling moves
/// pointers, not arrays.
#[allow(clippy::vec_box)]
type SlotPool = Vec<Box<Slots>>;

thread_local! {
    static SLOTS: RefCell<SlotPool> = const { RefCell::new(Vec::new()) };
}

/// Puts `p` in `slot`, which is empty: slots at and past a batch's length always are, and
/// the batch code empties a slot before refilling it. Nothing is dropped, so no drop code is
/// emitted on the hot path.
#[inline(always)]
fn fill(slot: &mut Option<Packet>, p: Packet) {
    debug_assert!(slot.is_none());
    std::mem::forget(slot.replace(p));
}

/// An ordered group of packets moving through one port. Fixed capacity, pooled storage.
pub struct Batch {
    len: usize,
    slots: ManuallyDrop<Box<Slots>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        crate::packet::free_all(&mut self.slots[..self.len]);
        // SAFETY: the box is taken exactly once, here, and `self` is never used again.
        let slots = unsafe { ManuallyDrop::take(&mut self.slots) };
        let _ = SLOTS.try_with(|p| {
            let mut p = p.borrow_mut();
            if p.len() < SLOT_POOL {
                p.push(slots);
            }
        });
    }
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

impl Batch {
    /// An empty batch.
    #[inline]
    pub fn new() -> Batch {
        let slots = SLOTS
            .try_with(|p| p.borrow_mut().pop())
            .ok()
            .flatten()
            .unwrap_or_else(|| Box::new([const { None }; BATCH_MAX]));
        Batch {
            len: 0,
            slots: ManuallyDrop::new(slots),
        }
    }

    /// A batch of `n` (at most [`BATCH_MAX`]) fresh packets, each a copy of `data`.
    pub fn copies(data: &[u8], n: usize) -> Batch {
        let mut b = Batch::new();
        let n = n.min(BATCH_MAX);
        crate::packet::fill_copies(&mut b.slots[..n], data);
        b.len = n;
        b
    }

    /// A batch holding one packet.
    #[inline]
    pub fn one(p: Packet) -> Batch {
        let mut b = Batch::new();
        fill(&mut b.slots[0], p);
        b.len = 1;
        b
    }

    /// Number of packets.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the batch holds no packet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True if no more packets fit.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.len == BATCH_MAX
    }

    /// Appends a packet; gives it back if the batch is full.
    #[inline]
    pub fn push(&mut self, p: Packet) -> Result<(), Packet> {
        if self.len == BATCH_MAX {
            return Err(p);
        }
        fill(&mut self.slots[self.len], p);
        self.len += 1;
        Ok(())
    }

    /// Removes and returns the last packet.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        self.slots[self.len].take()
    }

    /// Iterates over the packets in order.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.slots[..self.len].iter().flatten()
    }

    /// Iterates mutably over the packets in order.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Packet> {
        self.slots[..self.len].iter_mut().flatten()
    }

    /// Total bytes of packet data in the batch.
    pub fn byte_len(&self) -> usize {
        self.iter().map(|p| p.len()).sum()
    }

    /// Keeps the packets for which `f` returns true, preserving order; drops the others.
    pub fn retain(&mut self, mut f: impl FnMut(&mut Packet) -> bool) {
        self.filter_map(|mut p| f(&mut p).then_some(p));
    }

    /// Replaces each packet with `f(packet)`, dropping those mapped to `None`, preserving order.
    #[inline]
    pub fn filter_map(&mut self, mut f: impl FnMut(Packet) -> Option<Packet>) {
        let slots = &mut self.slots[..self.len];
        let mut w = 0;
        for r in 0..slots.len() {
            let Some(p) = slots[r].take() else { continue };
            if let Some(q) = f(p) {
                // Slot `w` (at or before `r`) was emptied above.
                fill(&mut slots[w], q);
                w += 1;
            }
        }
        self.len = w;
    }
}

impl IntoIterator for Batch {
    type Item = Packet;
    type IntoIter = BatchIter;
    fn into_iter(self) -> BatchIter {
        BatchIter {
            batch: self,
            next: 0,
        }
    }
}

/// Owning iterator over a batch, in order.
pub struct BatchIter {
    batch: Batch,
    next: usize,
}

impl Iterator for BatchIter {
    type Item = Packet;
    #[inline]
    fn next(&mut self) -> Option<Packet> {
        if self.next >= self.batch.len {
            return None;
        }
        let p = self.batch.slots[self.next].take();
        self.next += 1;
        p
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Batch({} packets)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tagged(n: u8) -> Packet {
        Packet::from_bytes(&[n])
    }

    #[test]
    fn order_is_kept() {
        let mut b = Batch::new();
        for i in 0..BATCH_MAX as u8 {
            b.push(tagged(i)).unwrap();
        }
        assert!(b.push(tagged(99)).is_err());
        b.retain(|p| p.data()[0] % 3 != 0);
        b.filter_map(|p| (p.data()[0] != 4).then_some(p));
        let seen: Vec<u8> = b.into_iter().map(|p| p.data()[0]).collect();
        let want: Vec<u8> = (0..BATCH_MAX as u8)
            .filter(|i| i % 3 != 0 && *i != 4)
            .collect();
        assert_eq!(seen, want);
    }
}
