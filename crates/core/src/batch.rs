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

/// An ordered group of packets moving through one port. Fixed capacity, pooled storage.
pub struct Batch {
    len: usize,
    slots: ManuallyDrop<Box<Slots>>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        for s in &mut self.slots[..self.len] {
            *s = None;
        }
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

    /// A batch holding one packet.
    #[inline]
    pub fn one(p: Packet) -> Batch {
        let mut b = Batch::new();
        b.slots[0] = Some(p);
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
        self.slots[self.len] = Some(p);
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
        let mut w = 0;
        for r in 0..self.len {
            let mut p = self.slots[r]
                .take()
                .expect("batch slot below len is filled");
            if f(&mut p) {
                self.slots[w] = Some(p);
                w += 1;
            }
        }
        self.len = w;
    }

    /// Replaces each packet with `f(packet)`, dropping those mapped to `None`, preserving order.
    pub fn filter_map(&mut self, mut f: impl FnMut(Packet) -> Option<Packet>) {
        let mut w = 0;
        for r in 0..self.len {
            let p = self.slots[r]
                .take()
                .expect("batch slot below len is filled");
            if let Some(q) = f(p) {
                self.slots[w] = Some(q);
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
