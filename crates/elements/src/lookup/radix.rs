//! A multibit trie for IPv4 longest-prefix match (RadixIPLookup's structure).
//!
//! The root level indexes the first 16 address bits directly (65,536 slots); every further
//! level indexes 4 bits (16-slot nodes), so a lookup visits at most five slots (three for
//! prefixes up to /24). Prefixes are expanded only inside the node of their level; a lookup
//! remembers the last non-empty slot on its way down, so a longer prefix at a deeper level
//! overrides the shorter ones above it and a removal only touches its own node. Nodes left
//! with neither prefixes nor children after a removal are unlinked and reused.

use super::table::{Lpm, NH_NONE};

#[derive(Clone, Copy, Default)]
struct Slot {
    /// Child node index (0 = none).
    child: u32,
    /// `(len + 1) << 24 | nh`; 0 = empty.
    info: u32,
}

const ROOT_BITS: u32 = 16;
const STRIDE: u32 = 4;
const FAN: usize = 1 << STRIDE;

/// The multibit trie.
pub struct Radix {
    root: Vec<Slot>,
    nodes: Vec<Slot>,
    free: Vec<u32>,
}

impl Default for Radix {
    fn default() -> Radix {
        Radix {
            root: vec![Slot::default(); 1 << ROOT_BITS],
            // Node 0 is reserved: a child index of 0 means "none".
            nodes: vec![Slot::default(); FAN],
            free: Vec::new(),
        }
    }
}

#[inline]
fn plen(info: u32) -> u32 {
    info >> 24
}

impl Radix {
    /// Slots a lookup reads from node `n` down, on average over the addresses reaching it.
    fn node_accesses(&self, n: u32) -> f64 {
        let slots = &self.nodes[n as usize * FAN..(n as usize + 1) * FAN];
        let below: f64 = slots
            .iter()
            .filter(|s| s.child != 0)
            .map(|s| self.node_accesses(s.child))
            .sum();
        1.0 + below / FAN as f64
    }

    fn new_node(&mut self) -> u32 {
        if let Some(n) = self.free.pop() {
            return n;
        }
        let n = (self.nodes.len() / FAN) as u32;
        self.nodes.extend_from_slice(&[Slot::default(); FAN]);
        n
    }

    /// The node holding prefixes of length `len` (> 16) under `addr`, and its level start
    /// bit; created on the way when `create`.
    fn node_for(&mut self, addr: u32, len: u8, create: bool) -> Option<(u32, u32)> {
        let len = len as u32;
        let ri = (addr >> (32 - ROOT_BITS)) as usize;
        let mut node = self.root[ri].child;
        if node == 0 {
            if !create {
                return None;
            }
            node = self.new_node();
            self.root[ri].child = node;
        }
        let mut start = ROOT_BITS;
        while len > start + STRIDE {
            let i = node as usize * FAN + ((addr >> (32 - start - STRIDE)) as usize & (FAN - 1));
            let mut c = self.nodes[i].child;
            if c == 0 {
                if !create {
                    return None;
                }
                c = self.new_node();
                self.nodes[i].child = c;
            }
            node = c;
            start += STRIDE;
        }
        Some((node, start))
    }

    /// Frees the nodes on the path to `addr/len` (> 16) that no longer hold a prefix or a
    /// child, deepest first, unlinking each from its parent.
    fn prune(&mut self, addr: u32, len: u8) {
        let ri = (addr >> (32 - ROOT_BITS)) as usize;
        let mut node = self.root[ri].child;
        // (parent slot: None for the root slot, else its index in `nodes`; the node)
        let mut chain: Vec<(Option<usize>, u32)> = Vec::new();
        let mut parent = None;
        let mut start = ROOT_BITS;
        while node != 0 {
            chain.push((parent, node));
            if len as u32 <= start + STRIDE {
                break;
            }
            let i = node as usize * FAN + ((addr >> (32 - start - STRIDE)) as usize & (FAN - 1));
            parent = Some(i);
            node = self.nodes[i].child;
            start += STRIDE;
        }
        for (parent, node) in chain.into_iter().rev() {
            let b = node as usize * FAN;
            if self.nodes[b..b + FAN]
                .iter()
                .any(|s| s.info != 0 || s.child != 0)
            {
                break;
            }
            match parent {
                None => self.root[ri].child = 0,
                Some(i) => self.nodes[i].child = 0,
            }
            self.free.push(node);
        }
    }

    fn range(addr: u32, len: u8, start: u32) -> (usize, usize) {
        let len = len as u32;
        let idx = (addr >> (32 - start - STRIDE)) as usize & (FAN - 1);
        let count = 1usize << (start + STRIDE - len);
        (idx & !(count - 1), count)
    }
}

impl Lpm for Radix {
    type Addr = u32;

    fn set(&mut self, addr: u32, len: u8, nh: u32) {
        let info = ((len as u32 + 1) << 24) | nh;
        let slots: &mut [Slot] = if len as u32 <= ROOT_BITS {
            let first = (addr >> (32 - ROOT_BITS)) as usize;
            let count = 1usize << (ROOT_BITS - len as u32);
            &mut self.root[first..first + count]
        } else {
            let (node, start) = self.node_for(addr, len, true).expect("created");
            let (first, count) = Self::range(addr, len, start);
            let b = node as usize * FAN + first;
            &mut self.nodes[b..b + count]
        };
        for s in slots {
            if plen(s.info) <= len as u32 + 1 {
                s.info = info;
            }
        }
    }

    fn remove(&mut self, addr: u32, len: u8, cover: Option<(u8, u32)>) {
        let l1 = len as u32 + 1;
        let (slots, min_cover): (&mut [Slot], u32) = if len as u32 <= ROOT_BITS {
            let first = (addr >> (32 - ROOT_BITS)) as usize;
            let count = 1usize << (ROOT_BITS - len as u32);
            (&mut self.root[first..first + count], 0)
        } else {
            let Some((node, start)) = self.node_for(addr, len, false) else {
                return;
            };
            let (first, count) = Self::range(addr, len, start);
            let b = node as usize * FAN + first;
            (&mut self.nodes[b..b + count], start + 1)
        };
        // A covering prefix from a shallower level is found there by the lookup itself.
        let repl = match cover {
            Some((cl, nh)) if cl as u32 >= min_cover => ((cl as u32 + 1) << 24) | nh,
            _ => 0,
        };
        for s in slots {
            if plen(s.info) == l1 {
                s.info = repl;
            }
        }
        if len as u32 > ROOT_BITS {
            self.prune(addr, len);
        }
    }

    #[inline]
    fn lookup(&self, a: u32) -> u32 {
        let s = &self.root[(a >> (32 - ROOT_BITS)) as usize];
        let mut best = s.info;
        let mut c = s.child;
        let mut shift = 32 - ROOT_BITS;
        while c != 0 {
            shift = shift.wrapping_sub(STRIDE);
            let s = &self.nodes[c as usize * FAN + ((a >> (shift & 31)) as usize & (FAN - 1))];
            if s.info != 0 {
                best = s.info;
            }
            c = s.child;
        }
        if best == 0 {
            NH_NONE
        } else {
            best & 0x00ff_ffff
        }
    }

    fn mem_bytes(&self) -> usize {
        (self.root.len() + self.nodes.capacity()) * std::mem::size_of::<Slot>()
            + self.free.capacity() * 4
    }

    /// One root slot, then one slot per node on the way down: each node is reached by the
    /// share of addresses its parent slot covers.
    fn accesses(&self) -> f64 {
        let below: f64 = self
            .root
            .iter()
            .filter(|s| s.child != 0)
            .map(|s| self.node_accesses(s.child))
            .sum();
        1.0 + below / self.root.len() as f64
    }

    fn clear(&mut self) {
        *self = Radix::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removals_free_nodes_for_reuse() {
        let mut r = Radix::default();
        let mut seed = 0x2545_f491_u32;
        let mut prefixes = Vec::new();
        for _ in 0..2000 {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let len = 17 + (seed % 16) as u8;
            let addr = seed & (u32::MAX << (32 - len as u32));
            prefixes.push((addr, len));
        }
        for &(a, l) in &prefixes {
            r.set(a, l, 7);
        }
        let grown = r.nodes.len();
        assert!(grown > FAN);
        for &(a, _) in &prefixes {
            assert_eq!(r.lookup(a), 7);
        }
        for &(a, l) in &prefixes {
            r.remove(a, l, None);
        }
        for &(a, _) in &prefixes {
            assert_eq!(r.lookup(a), NH_NONE);
        }
        assert!(r.root.iter().all(|s| s.child == 0));
        assert_eq!(
            r.free.len(),
            grown / FAN - 1,
            "every node but the reserved one is free"
        );
        for &(a, l) in &prefixes {
            r.set(a, l, 3);
        }
        assert_eq!(r.nodes.len(), grown, "re-adding reuses the freed nodes");
        assert_eq!(r.lookup(prefixes[0].0), 3);
    }

    #[test]
    fn a_node_with_a_remaining_prefix_stays() {
        let mut r = Radix::default();
        r.set(0xc612_0100, 24, 1);
        r.set(0xc612_0180, 25, 2);
        r.remove(0xc612_0180, 25, Some((24, 1)));
        assert_eq!(r.lookup(0xc612_01ff), 1);
        r.remove(0xc612_0100, 24, None);
        assert_eq!(r.lookup(0xc612_01ff), NH_NONE);
        assert!(r.root.iter().all(|s| s.child == 0));
    }
}
