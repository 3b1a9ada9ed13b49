//! The two structures that keep DFQSched's cost per packet independent of the number of
//! flows: a hierarchical bitset of flow ids, walked in id order, and a timing wheel of
//! flows waiting for credit, keyed by the scheduling cycle in which they wake.

/// A set of ids below a bound, as a 64-ary tree of bitmaps: level 0 has one bit per id, each
/// higher level one bit per non-empty word of the level below. Insert, remove and "next id
/// at or after" touch one word per level (four levels cover 2^24 ids).
pub(crate) struct IdSet {
    levels: Vec<Vec<u64>>,
}

impl IdSet {
    /// An empty set of ids below `n`.
    pub(crate) fn new(n: usize) -> IdSet {
        let mut levels = Vec::new();
        let mut len = n.max(1);
        loop {
            let words = len.div_ceil(64);
            levels.push(vec![0; words]);
            if words == 1 {
                return IdSet { levels };
            }
            len = words;
        }
    }

    /// Adds `id`.
    pub(crate) fn insert(&mut self, id: usize) {
        let mut i = id;
        for level in &mut self.levels {
            let w = &mut level[i >> 6];
            let was = *w;
            *w |= 1 << (i & 63);
            if was != 0 {
                return;
            }
            i >>= 6;
        }
    }

    /// Removes `id`.
    pub(crate) fn remove(&mut self, id: usize) {
        let mut i = id;
        for level in &mut self.levels {
            let w = &mut level[i >> 6];
            *w &= !(1 << (i & 63));
            if *w != 0 {
                return;
            }
            i >>= 6;
        }
    }

    /// True if the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.levels.last().is_some_and(|top| top[0] == 0)
    }

    /// The smallest id in the set at or after `from`.
    pub(crate) fn next(&self, from: usize) -> Option<usize> {
        let mut i = from;
        let mut l = 0;
        loop {
            let level = self.levels.get(l)?;
            let w = i >> 6;
            let bits = level.get(w)? & (!0u64 << (i & 63));
            if bits != 0 {
                i = (w << 6) + bits.trailing_zeros() as usize;
                break;
            }
            i = w + 1;
            l += 1;
        }
        while l > 0 {
            l -= 1;
            i = (i << 6) + self.levels[l][i].trailing_zeros() as usize;
        }
        Some(i)
    }
}

/// Slots of the timing wheel (a power of two).
pub(crate) const WHEEL_SLOTS: u64 = 1024;

/// No flow: the end of a wheel slot's list.
pub(crate) const NONE: u32 = u32::MAX;

/// A timing wheel of flows keyed by wake cycle. Slot `c % WHEEL_SLOTS` holds the flows that
/// wake in cycle `c` as an intrusive list (the caller keeps each flow's link and wake cycle);
/// a flow waking more than a turn away sits in its slot until the wheel comes round to the
/// right turn. A bitmap of non-empty slots finds the next occupied slot in constant time.
pub(crate) struct Wheel {
    heads: Vec<u32>,
    occupied: [u64; (WHEEL_SLOTS / 64) as usize],
    /// Flows in the wheel.
    pub(crate) len: usize,
}

impl Wheel {
    /// An empty wheel.
    pub(crate) fn new() -> Wheel {
        Wheel {
            heads: vec![NONE; WHEEL_SLOTS as usize],
            occupied: [0; (WHEEL_SLOTS / 64) as usize],
            len: 0,
        }
    }

    /// Puts `flow` into the slot of cycle `wake`; returns the link the flow must keep (the
    /// previous head of the slot).
    pub(crate) fn insert(&mut self, flow: u32, wake: u64) -> u32 {
        let s = (wake % WHEEL_SLOTS) as usize;
        let old = self.heads[s];
        self.heads[s] = flow;
        self.occupied[s >> 6] |= 1 << (s & 63);
        self.len += 1;
        old
    }

    /// Empties the slot of cycle `cycle` and returns the head of its list.
    pub(crate) fn take(&mut self, cycle: u64) -> u32 {
        let s = (cycle % WHEEL_SLOTS) as usize;
        self.occupied[s >> 6] &= !(1 << (s & 63));
        std::mem::replace(&mut self.heads[s], NONE)
    }

    /// True if the slot of cycle `cycle` holds flows.
    pub(crate) fn is_occupied(&self, cycle: u64) -> bool {
        let s = cycle % WHEEL_SLOTS;
        self.occupied[(s >> 6) as usize] & (1 << (s & 63)) != 0
    }

    /// The first cycle after `cycle` whose slot holds flows (at most a turn later).
    pub(crate) fn next_occupied(&self, cycle: u64) -> Option<u64> {
        if self.len == 0 {
            return None;
        }
        let start = (cycle + 1) % WHEEL_SLOTS;
        let words = self.occupied.len() as u64;
        for k in 0..=words {
            let w = ((start >> 6) + k) % words;
            let mut bits = self.occupied[w as usize];
            if k == 0 {
                bits &= !0u64 << (start & 63);
            }
            if bits != 0 {
                let s = w * 64 + u64::from(bits.trailing_zeros());
                return Some(cycle + 1 + (s + WHEEL_SLOTS - start) % WHEEL_SLOTS);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idset_walks_in_order_against_a_linear_reference() {
        for n in [1usize, 63, 64, 65, 4096, 4097, 300_000] {
            let mut s = IdSet::new(n);
            let mut reference = vec![false; n];
            let mut x: u64 = 12345;
            for _ in 0..2000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let id = (x >> 33) as usize % n;
                if x & 1 == 0 {
                    s.insert(id);
                    reference[id] = true;
                } else {
                    s.remove(id);
                    reference[id] = false;
                }
                let from = (x >> 13) as usize % n;
                let want = (from..n).find(|&i| reference[i]);
                assert_eq!(s.next(from), want, "n {n} from {from}");
                assert_eq!(s.next(id) == Some(id), reference[id]);
                assert_eq!(s.is_empty(), !reference.iter().any(|&b| b));
            }
        }
    }

    #[test]
    fn wheel_finds_the_next_occupied_cycle() {
        let mut w = Wheel::new();
        assert_eq!(w.next_occupied(5), None);
        w.insert(1, 10);
        assert_eq!(w.next_occupied(5), Some(10));
        assert_eq!(w.next_occupied(10), Some(10 + WHEEL_SLOTS));
        w.insert(2, 3);
        assert_eq!(w.next_occupied(10), Some(WHEEL_SLOTS + 3));
        assert!(w.is_occupied(3) && w.is_occupied(10) && !w.is_occupied(4));
        assert_eq!(w.take(3 + WHEEL_SLOTS), 2);
        assert_eq!(w.take(4), NONE);
    }
}
