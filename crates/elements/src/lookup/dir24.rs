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
            let nh = if info == 0 {
                NH_NONE
            } else {
                info & 0x00ff_ffff
            };
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
        if info == 0 {
            NH_NONE
        } else {
            info & 0x00ff_ffff
        }
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
            *o = if info == 0 {
                NH_NONE
            } else {
                info & 0x00ff_ffff
            };
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
