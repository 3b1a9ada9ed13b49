//! DIR-24-8-BASIC (Gupta, Lin and McKeown): DirectIPLookup's structure.
//!
//! A first-level table of 2^24 entries indexed by the top 24 address bits holds, for each
//! /24, either the next hop of the longest prefix of length ≤ 24 covering it, or the index of
//! a 256-entry second-level chunk indexed by the last 8 bits (when some prefix longer than /24
//! lies inside). A lookup is one memory access, or two. Entries carry the prefix length that
//! put them there, so overlapping updates keep the longest match; chunks whose last long
//! prefix is removed are freed.

use super::table::{Lpm, NH_NONE};

const CHUNK: u32 = 0x8000_0000;

/// Doublings an aggregate may make beyond the lookup's entry: two, four entries at most.
/// Each doubling costs compares and a branch on every miss of a route cache; wider
/// aggregates raised hit ratios by 1 to 4 points on the full table but made a miss cost more
/// than they saved (`bench/lpm/route-cache.md`).
const WIDEN_BITS: u32 = 2;

/// The next hop an entry `(len + 1) << 24 | nh` (0: no route) gives.
#[inline]
fn nh_of(info: u32) -> u32 {
    if info == 0 {
        NH_NONE
    } else {
        info & 0x00ff_ffff
    }
}

/// The largest `b` such that `same` holds for every entry of the aligned block of 2^b entries
/// that holds `entries[k]`, and the block lies in the cache line that holds `entries[k]` (the
/// block doubles while its sibling half agrees): finding an aggregate reads no memory that
/// the lookup did not.
fn uniform_bits(entries: &[u32], k: usize, same: impl Fn(u32) -> bool) -> u32 {
    let line = |i: usize| (entries.as_ptr() as usize + 4 * i) / 64;
    let mut b = 0;
    while b < WIDEN_BITS {
        let size = 1usize << b;
        let sibling = (k ^ size) & !(size - 1);
        let Some(half) = entries.get(sibling..sibling + size) else {
            return b;
        };
        if line(sibling) != line(k) || line(sibling + size - 1) != line(k) {
            return b;
        }
        if !half.iter().all(|&x| same(x)) {
            return b;
        }
        b += 1;
    }
    b
}

/// The DIR-24-8 tables.
pub struct Dir24 {
    /// 2^24 entries: `CHUNK | index`, or `(len + 1) << 24 | nh` (0 = no route).
    tbl24: Vec<u32>,
    /// Chunks of 256 entries `(len + 1) << 24 | nh`.
    tbl8: Vec<u32>,
    /// Per chunk: the ≤ /24 entry it replaced (restored when the chunk is freed).
    chunk_base: Vec<u32>,
    free: Vec<u32>,
}

impl Default for Dir24 {
    fn default() -> Dir24 {
        Dir24 {
            tbl24: vec![0; 1 << 24],
            tbl8: Vec::new(),
            chunk_base: Vec::new(),
            free: Vec::new(),
        }
    }
}

#[inline]
fn plen(info: u32) -> u32 {
    info >> 24
}

impl Dir24 {
    fn chunk_of(&mut self, i: usize) -> usize {
        let e = self.tbl24[i];
        if e & CHUNK != 0 {
            return (e & !CHUNK) as usize;
        }
        let c = match self.free.pop() {
            Some(c) => c as usize,
            None => {
                self.tbl8.extend_from_slice(&[0; 256]);
                self.chunk_base.push(0);
                self.chunk_base.len() - 1
            }
        };
        self.tbl8[c * 256..c * 256 + 256].fill(e);
        self.chunk_base[c] = e;
        self.tbl24[i] = CHUNK | c as u32;
        c
    }

    /// Number of second-level chunks in use.
    pub fn chunks(&self) -> usize {
        self.chunk_base.len() - self.free.len()
    }

    /// The next hops of the /16 `block` as ranges: `(first address's low 16 bits, next hop)`,
    /// in address order, each differing from the one before.
    pub fn block_ranges(&self, block: usize, out: &mut Vec<(u16, u32)>) {
        out.clear();
        let mut add = |low: usize, info: u32| {
            let nh = nh_of(info);
            if out.last().is_none_or(|l| l.1 != nh) {
                out.push((low as u16, nh));
            }
        };
        for (k, &e) in self.tbl24[block << 8..(block + 1) << 8].iter().enumerate() {
            if e & CHUNK == 0 {
                add(k << 8, e);
            } else {
                let c = (e & !CHUNK) as usize;
                for (j, &x) in self.tbl8[c << 8..(c + 1) << 8].iter().enumerate() {
                    add(k << 8 | j, x);
                }
            }
        }
    }
}

impl Lpm for Dir24 {
    type Addr = u32;

    const DEFAULT_ROUTE_FIRST: bool = true;

    fn set(&mut self, addr: u32, len: u8, nh: u32) {
        let l1 = len as u32 + 1;
        let info = (l1 << 24) | nh;
        if len <= 24 {
            let first = (addr >> 8) as usize;
            let count = 1usize << (24 - len);
            for i in first..first + count {
                let e = self.tbl24[i];
                if e & CHUNK != 0 {
                    let c = (e & !CHUNK) as usize;
                    if plen(self.chunk_base[c]) <= l1 {
                        self.chunk_base[c] = info;
                    }
                    for x in &mut self.tbl8[c * 256..c * 256 + 256] {
                        if plen(*x) <= l1 {
                            *x = info;
                        }
                    }
                } else if plen(e) <= l1 {
                    self.tbl24[i] = info;
                }
            }
        } else {
            let c = self.chunk_of((addr >> 8) as usize);
            let first = (addr & 255) as usize;
            let count = 1usize << (32 - len);
            for x in &mut self.tbl8[c * 256 + first..c * 256 + first + count] {
                if plen(*x) <= l1 {
                    *x = info;
                }
            }
        }
    }

    fn remove(&mut self, addr: u32, len: u8, cover: Option<(u8, u32)>) {
        let l1 = len as u32 + 1;
        let repl = cover.map_or(0, |(cl, nh)| ((cl as u32 + 1) << 24) | nh);
        if len <= 24 {
            let first = (addr >> 8) as usize;
            let count = 1usize << (24 - len);
            for i in first..first + count {
                let e = self.tbl24[i];
                if e & CHUNK != 0 {
                    let c = (e & !CHUNK) as usize;
                    if plen(self.chunk_base[c]) == l1 {
                        self.chunk_base[c] = repl;
                    }
                    for x in &mut self.tbl8[c * 256..c * 256 + 256] {
                        if plen(*x) == l1 {
                            *x = repl;
                        }
                    }
                } else if plen(e) == l1 {
                    self.tbl24[i] = repl;
                }
            }
        } else {
            let i = (addr >> 8) as usize;
            let e = self.tbl24[i];
            if e & CHUNK == 0 {
                return;
            }
            let c = (e & !CHUNK) as usize;
            let first = (addr & 255) as usize;
            let count = 1usize << (32 - len);
            let chunk = &mut self.tbl8[c * 256..c * 256 + 256];
            for x in &mut chunk[first..first + count] {
                if plen(*x) == l1 {
                    *x = repl;
                }
            }
            if chunk.iter().all(|x| plen(*x) <= 25) {
                self.tbl24[i] = self.chunk_base[c];
                self.free.push(c as u32);
            }
        }
    }

    #[inline]
    fn lookup(&self, a: u32) -> u32 {
        let e = self.tbl24[(a >> 8) as usize];
        let info = if e & CHUNK == 0 {
            e
        } else {
            self.tbl8[(((e & !CHUNK) as usize) << 8) | (a & 255) as usize]
        };
        nh_of(info)
    }

    /// Widens the address's block while the sibling half has the same next hop and lies in
    /// the cache line the lookup read, at most four entries: inside its second-level chunk
    /// from /32 up to /30, or across first-level entries from /24 up to /22 (a neighbour with
    /// a chunk differs).
    fn lookup_aggregate(&self, a: u32) -> Option<(u32, u8)> {
        let i = (a >> 8) as usize;
        let e = self.tbl24[i];
        if e & CHUNK != 0 {
            let c = ((e & !CHUNK) as usize) << 8;
            let chunk = &self.tbl8[c..c + 256];
            let k = (a & 255) as usize;
            let nh = nh_of(chunk[k]);
            let b = uniform_bits(chunk, k, |x| nh_of(x) == nh);
            return Some((nh, (32 - b) as u8));
        }
        let nh = nh_of(e);
        let b = uniform_bits(&self.tbl24, i, |x| x & CHUNK == 0 && nh_of(x) == nh);
        Some((nh, (24 - b) as u8))
    }

    #[inline]
    fn lookup_batch(&self, addrs: &[u32], out: &mut [u32]) {
        // First pass: independent first-level loads (the CPU overlaps their misses).
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.tbl24[(a >> 8) as usize];
        }
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            let e = *o;
            let info = if e & CHUNK == 0 {
                e
            } else {
                self.tbl8[(((e & !CHUNK) as usize) << 8) | (a & 255) as usize]
            };
            *o = nh_of(info);
        }
    }

    fn mem_bytes(&self) -> usize {
        (self.tbl24.len() + self.tbl8.capacity() + self.chunk_base.capacity()) * 4
    }

    /// One entry of the first level, and a second-level one for the /24s that have a chunk.
    fn accesses(&self) -> f64 {
        1.0 + self.chunks() as f64 / (1u64 << 24) as f64
    }

    fn shrink(&mut self) {
        self.tbl8.shrink_to_fit();
        self.chunk_base.shrink_to_fit();
        self.free.shrink_to_fit();
    }

    fn clear(&mut self) {
        *self = Dir24::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(a: u8, b: u8, c: u8, d: u8) -> u32 {
        u32::from_be_bytes([a, b, c, d])
    }

    #[test]
    fn aggregates_widen_while_the_next_hop_holds() {
        let mut t = Dir24::default();
        t.set(ip(10, 0, 0, 0), 16, 1);
        t.set(ip(10, 0, 5, 0), 24, 2);
        t.set(ip(10, 0, 6, 128), 25, 1);
        // 10.0.0/24 widens to /22, but 10.0.4.0/23 holds another next hop.
        assert_eq!(t.lookup_aggregate(ip(10, 0, 0, 1)), Some((1, 22)));
        assert_eq!(t.lookup_aggregate(ip(10, 0, 4, 1)), Some((1, 24)));
        assert_eq!(t.lookup_aggregate(ip(10, 0, 5, 9)), Some((2, 24)));
        // Aggregates span four entries at most: /30 inside a chunk, /22 across /24s.
        assert_eq!(t.lookup_aggregate(ip(10, 0, 6, 5)), Some((1, 30)));
        t.set(ip(10, 0, 7, 8), 31, 3);
        assert_eq!(t.lookup_aggregate(ip(10, 0, 7, 9)), Some((3, 31)));
        assert_eq!(t.lookup_aggregate(ip(10, 0, 7, 10)), Some((1, 31)));
        assert_eq!(t.lookup_aggregate(ip(10, 0, 7, 2)), Some((1, 30)));
        assert_eq!(t.lookup_aggregate(ip(11, 3, 0, 1)), Some((NH_NONE, 22)));
    }

    #[test]
    fn every_address_of_an_aggregate_has_its_next_hop() {
        let mut t = Dir24::default();
        let mut x = 0x1234_5678u32;
        let mut rnd = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..2000 {
            let len = 8 + (rnd() % 25) as u8;
            let addr = (0x0A00_0000 | rnd() >> 8) & super::super::table::mask_of(len);
            t.set(addr, len, rnd() % 4);
        }
        for _ in 0..2000 {
            let a = 0x0A00_0000 | rnd() >> 8;
            let (nh, len) = t.lookup_aggregate(a).unwrap();
            assert_eq!(nh, t.lookup(a));
            let span = 1u64 << (32 - len);
            let base = a & super::super::table::mask_of(len);
            for k in 0..64u64 {
                let b = base.wrapping_add(
                    (k * span / 64) as u32 + (rnd() as u64 % (span / 64).max(1)) as u32,
                );
                assert_eq!(t.lookup(b), nh, "{b:#x} in {base:#x}/{len}");
            }
        }
    }
}
