//! A multibit trie for IPv6 longest-prefix match: LookupIP6Route's structure.
//!
//! A root table of 2^16 entries indexed by the first 16 address bits, then 256-entry chunks
//! for each further 8 bits. Every entry is either a leaf — the next hop and the length of
//! the longest prefix covering the entry's whole address range (controlled prefix
//! expansion) — or the index of the chunk that splits that range further, created only where
//! a longer prefix lies inside. A /48 is found in at most five memory accesses, a /32 in at
//! most three; a batch is looked up level by level so the loads of its addresses overlap.
//!
//! Updates touch the entries of one prefix's range (and, below them, only entries that no
//! longer prefix owns); a chunk left holding nothing longer than the range above it is
//! folded back into its parent and reused.

use super::table::{Lpm, NH_NONE};

/// Bits indexed by the root table.
const ROOT_BITS: u32 = 16;
/// Bits indexed by each chunk.
const STRIDE: u32 = 8;
/// Entries of a chunk.
const FAN: usize = 1 << STRIDE;
/// Entries at or above this value are chunk references (`CHUNK | index`).
const CHUNK: u32 = 0xff00_0000;
/// Leaf with no route.
const EMPTY: u32 = 0x00ff_ffff;

/// A leaf entry: prefix length in the top byte, next hop in the low 24 bits.
#[inline]
fn leaf(len: u8, nh: u32) -> u32 {
    ((len as u32) << 24) | (nh & 0x00ff_ffff)
}

/// The entry of `a` in the chunk that `e` refers to, `shift` bits from the address end.
#[inline]
fn slot_of(e: u32, a: u128, shift: u32) -> usize {
    (((e & !CHUNK) as usize) << STRIDE) | ((a >> shift) as usize & (FAN - 1))
}

#[inline]
fn is_chunk(e: u32) -> bool {
    e >= CHUNK
}

/// Prefix length of a leaf entry.
#[inline]
fn plen(e: u32) -> u8 {
    (e >> 24) as u8
}

/// The IPv6 trie.
pub struct Trie6 {
    root: Vec<u32>,
    chunks: Vec<u32>,
    free: Vec<u32>,
}

impl Default for Trie6 {
    fn default() -> Trie6 {
        Trie6 {
            root: vec![EMPTY; 1 << ROOT_BITS],
            chunks: Vec::new(),
            free: Vec::new(),
        }
    }
}

/// First bit indexed at `depth` (0 = root).
#[inline]
fn start_bit(depth: u32) -> u32 {
    if depth == 0 {
        0
    } else {
        ROOT_BITS + (depth - 1) * STRIDE
    }
}

/// Bits indexed at `depth`.
#[inline]
fn width(depth: u32) -> u32 {
    if depth == 0 {
        ROOT_BITS
    } else {
        STRIDE
    }
}

/// The index of `addr` at `depth`.
#[inline]
fn index(addr: u128, depth: u32) -> usize {
    let end = start_bit(depth) + width(depth);
    ((addr >> (128 - end)) as usize) & ((1 << width(depth)) - 1)
}

impl Trie6 {
    /// Entries a lookup reads from the chunk that entry `e` refers to down, on average over
    /// the addresses reaching it.
    fn chunk_accesses(&self, e: u32) -> f64 {
        let first = ((e & !CHUNK) as usize) << STRIDE;
        let below: f64 = self.chunks[first..first + FAN]
            .iter()
            .filter(|&&x| is_chunk(x))
            .map(|&x| self.chunk_accesses(x))
            .sum();
        1.0 + below / FAN as f64
    }

    /// Number of chunks in use.
    pub fn chunks(&self) -> usize {
        self.chunks.len() / FAN - self.free.len()
    }

    fn slots(&mut self, chunk: Option<u32>) -> &mut [u32] {
        match chunk {
            None => &mut self.root,
            Some(c) => &mut self.chunks[c as usize * FAN..(c as usize + 1) * FAN],
        }
    }

    /// A chunk whose entries all hold `e`.
    fn new_chunk(&mut self, e: u32) -> u32 {
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                self.chunks.resize(self.chunks.len() + FAN, EMPTY);
                (self.chunks.len() / FAN - 1) as u32
            }
        };
        self.slots(Some(c)).fill(e);
        c
    }

    /// Walks to the table where a prefix of length `len` expands: `(chunk, depth)` of the
    /// table (`None` = root), creating chunks on the way if `create`.
    fn walk(
        &mut self,
        addr: u128,
        len: u8,
        create: bool,
        path: &mut Vec<(Option<u32>, usize)>,
    ) -> Option<(Option<u32>, u32)> {
        let mut table = None;
        let mut depth = 0;
        while len as u32 > start_bit(depth) + width(depth) {
            let i = index(addr, depth);
            let e = self.slots(table)[i];
            path.push((table, i));
            let c = if is_chunk(e) {
                e & !CHUNK
            } else if create {
                let c = self.new_chunk(e);
                self.slots(table)[i] = CHUNK | c;
                c
            } else {
                return None;
            };
            table = Some(c);
            depth += 1;
        }
        Some((table, depth))
    }

    /// The range of entries of table at `depth` that `addr/len` covers.
    fn range(addr: u128, len: u8, depth: u32) -> std::ops::Range<usize> {
        let first = index(addr, depth);
        let count = 1usize << (start_bit(depth) + width(depth) - len as u32);
        first & !(count - 1)..(first & !(count - 1)) + count
    }

    /// Stores `new` in every entry of chunk `c` (and chunks below) whose prefix `owns` says
    /// it may be overwritten.
    fn fill_down(&mut self, c: u32, new: u32, owns: &impl Fn(u32) -> bool) {
        let mut stack = vec![c];
        while let Some(c) = stack.pop() {
            for e in self.slots(Some(c)) {
                if is_chunk(*e) {
                    stack.push(*e & !CHUNK);
                } else if owns(*e) {
                    *e = new;
                }
            }
        }
    }

    /// Stores `new` over the range of `addr/len` where `owns` allows.
    fn update(&mut self, addr: u128, len: u8, new: u32, owns: impl Fn(u32) -> bool) {
        let Some((table, depth)) = self.walk(addr, len, true, &mut Vec::new()) else {
            return;
        };
        let mut below = Vec::new();
        for e in &mut self.slots(table)[Self::range(addr, len, depth)] {
            if is_chunk(*e) {
                below.push(*e & !CHUNK);
            } else if owns(*e) {
                *e = new;
            }
        }
        for c in below {
            self.fill_down(c, new, &owns);
        }
    }

    /// Folds the chunks on the path to `addr/len` that hold nothing longer than the range
    /// above them back into their parents, deepest first.
    fn fold(&mut self, addr: u128, len: u8) {
        let mut path = Vec::new();
        if self.walk(addr, len, false, &mut path).is_none() {
            return;
        }
        for (depth, &(table, i)) in path.iter().enumerate().rev() {
            let c = self.slots(table)[i] & !CHUNK;
            let above = start_bit(depth as u32 + 1) as u8;
            let chunk = self.slots(Some(c));
            if chunk.iter().any(|&e| is_chunk(e) || plen(e) > above) {
                return;
            }
            let e = chunk[0];
            self.slots(table)[i] = e;
            self.free.push(c);
        }
    }
}

impl Lpm for Trie6 {
    type Addr = u128;

    fn set(&mut self, addr: u128, len: u8, nh: u32) {
        self.update(addr, len, leaf(len, nh), |e| e == EMPTY || plen(e) <= len);
    }

    fn remove(&mut self, addr: u128, len: u8, cover: Option<(u8, u32)>) {
        let repl = cover.map_or(EMPTY, |(cl, nh)| leaf(cl, nh));
        if self.walk(addr, len, false, &mut Vec::new()).is_none() {
            return;
        }
        self.update(addr, len, repl, |e| e != EMPTY && plen(e) == len);
        self.fold(addr, len);
    }

    #[inline]
    fn lookup(&self, a: u128) -> u32 {
        let mut e = self.root[(a >> (128 - ROOT_BITS)) as usize];
        let mut shift = 128 - ROOT_BITS;
        while is_chunk(e) {
            shift -= STRIDE;
            e = self.chunks[slot_of(e, a, shift)];
        }
        if e == EMPTY {
            NH_NONE
        } else {
            e & 0x00ff_ffff
        }
    }

    /// Level by level: every address's load at one depth is issued before any at the next,
    /// so the CPU overlaps their cache misses.
    #[inline]
    fn lookup_batch(&self, addrs: &[u128], out: &mut [u32]) {
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.root[(a >> (128 - ROOT_BITS)) as usize];
        }
        let mut shift = 128 - ROOT_BITS;
        loop {
            let mut deeper = false;
            shift -= STRIDE;
            for (a, o) in addrs.iter().zip(out.iter_mut()) {
                if is_chunk(*o) {
                    *o = self.chunks[slot_of(*o, *a, shift)];
                    deeper |= is_chunk(*o);
                }
            }
            if !deeper {
                break;
            }
        }
        for o in out.iter_mut() {
            *o = if *o == EMPTY {
                NH_NONE
            } else {
                *o & 0x00ff_ffff
            };
        }
    }

    fn mem_bytes(&self) -> usize {
        (self.root.len() + self.chunks.capacity() + self.free.capacity()) * 4
    }

    /// One root entry, then one entry per chunk on the way down, each chunk reached by the
    /// share of addresses its parent entry covers.
    fn accesses(&self) -> f64 {
        let below: f64 = self
            .root
            .iter()
            .filter(|&&e| is_chunk(e))
            .map(|&e| self.chunk_accesses(e))
            .sum();
        1.0 + below / self.root.len() as f64
    }

    fn shrink(&mut self) {
        self.chunks.shrink_to_fit();
        self.free.shrink_to_fit();
    }

    fn clear(&mut self) {
        *self = Trie6::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::table::{Linear, Route, RouteAddr, RouteTable};

    struct XorShift(u64);

    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    fn same(t: &RouteTable<Trie6>, lin: &RouteTable<Linear<u128>>, addrs: &[u128]) {
        let mut batch = vec![0; addrs.len()];
        t.lpm.lookup_batch(addrs, &mut batch);
        for (&a, &b) in addrs.iter().zip(&batch) {
            assert_eq!(t.lookup(a), lin.lookup(a), "address {:x}", a);
            assert_eq!(t.lpm.lookup(a), b, "batch and single lookups agree");
        }
    }

    /// Random adds, replacements and removals of nested prefixes of many lengths (within
    /// 2001:db8::/32 so they overlap), checked against the linear reference throughout; the
    /// trie ends with no chunk once every route is gone.
    #[test]
    fn random_changes_match_linear() {
        let mut rng = XorShift(0x1234_5678);
        let mut t: RouteTable<Trie6> = RouteTable::default();
        let mut lin: RouteTable<Linear<u128>> = RouteTable::default();
        let base: u128 = 0x2001_0db8 << 96;
        let mut live: Vec<(u128, u8)> = Vec::new();
        for step in 0..3000u32 {
            let r = rng.next();
            if r.is_multiple_of(4) && !live.is_empty() {
                let (a, l) = live.swap_remove((r >> 8) as usize % live.len());
                assert!(t.remove(a, l).is_some());
                assert!(lin.remove(a, l).is_some());
            } else {
                let len =
                    [0u8, 16, 20, 24, 32, 33, 40, 44, 48, 56, 64, 127, 128][(r >> 4) as usize % 13];
                let host = ((rng.next() as u128) << 64 | rng.next() as u128) & ((1 << 96) - 1);
                let a = (base | host).masked(len);
                let route = Route {
                    addr: a,
                    len,
                    gw: 0,
                    port: (r >> 32) as u32 % 8,
                };
                if !live.contains(&(a, len)) {
                    live.push((a, len));
                }
                t.add(route, true).unwrap();
                lin.add(route, true).unwrap();
            }
            if step.is_multiple_of(100) {
                let addrs: Vec<u128> = live
                    .iter()
                    .flat_map(|&(a, _)| [a, a | 1, a | (rng.next() as u128) << 40, a ^ (1 << 80)])
                    .collect();
                same(&t, &lin, &addrs);
            }
        }
        for (a, l) in live.drain(..) {
            t.remove(a, l);
        }
        assert_eq!(t.lpm.chunks(), 0, "every chunk folded back");
        assert!(t.lpm.root.iter().all(|&e| e == EMPTY));
    }

    #[test]
    fn default_route_and_host_routes() {
        let mut t: RouteTable<Trie6> = RouteTable::default();
        t.add(Route::parse("::/0 3").unwrap(), false).unwrap();
        t.add(Route::parse("2001:db8::1/128 1").unwrap(), false)
            .unwrap();
        t.add(Route::parse("2001:db8::/32 2001:db8::ff 2").unwrap(), false)
            .unwrap();
        let a = |s: &str| u128::from(s.parse::<std::net::Ipv6Addr>().unwrap());
        assert_eq!(t.lookup(a("2001:db8::1")), Some((0, 1)));
        assert_eq!(t.lookup(a("2001:db8::2")), Some((a("2001:db8::ff"), 2)));
        assert_eq!(t.lookup(a("2001:db9::1")), Some((0, 3)));
        t.remove(0, 0);
        assert_eq!(t.lookup(a("2001:db9::1")), None);
        t.remove(a("2001:db8::"), 32);
        assert_eq!(t.lookup(a("2001:db8::2")), None);
        assert_eq!(t.lookup(a("2001:db8::1")), Some((0, 1)));
    }
}
