//! RangeIPLookup's structure: the address space cut into ranges of equal next hop, searched
//! by binary search within the address's /16.
//!
//! Updates go to a DIR-24-8 table (as in Click, where RangeIPLookup keeps a DirectIPLookup
//! for updates); after each, the ranges of the /16 blocks the prefix touches are recomputed
//! from it. Lookups touch only the ranges: one index by the top 16 bits, then a binary search
//! over that block's few ranges. Blocks are separate arrays, so the table has no size limit
//! (Click's fixed range array fails past 262,144 ranges).

use super::dir24::Dir24;
use super::table::{Lpm, NH_NONE};

/// The range tables.
pub struct Ranges {
    dir: Dir24,
    /// Per /16: `(low 16 bits of the range's first address, next hop)`, ascending.
    blocks: Vec<Box<[(u16, u32)]>>,
    scratch: Vec<(u16, u32)>,
}

impl Default for Ranges {
    fn default() -> Ranges {
        Ranges {
            dir: Dir24::default(),
            blocks: vec![Box::from([(0u16, NH_NONE)].as_slice()); 1 << 16],
            scratch: Vec::new(),
        }
    }
}

impl Ranges {
    /// Recomputes the blocks that `addr/len` touches.
    fn rebuild(&mut self, addr: u32, len: u8) {
        let first = (addr >> 16) as usize;
        let count = if len >= 16 { 1 } else { 1 << (16 - len) };
        for b in first..first + count {
            self.dir.block_ranges(b, &mut self.scratch);
            self.blocks[b] = self.scratch.as_slice().into();
        }
    }

    /// Number of ranges.
    pub fn ranges(&self) -> usize {
        self.blocks.iter().map(|b| b.len()).sum()
    }
}

impl Lpm for Ranges {
    type Addr = u32;

    const DEFAULT_ROUTE_FIRST: bool = true;

    fn set(&mut self, addr: u32, len: u8, nh: u32) {
        self.dir.set(addr, len, nh);
        self.rebuild(addr, len);
    }

    fn remove(&mut self, addr: u32, len: u8, cover: Option<(u8, u32)>) {
        self.dir.remove(addr, len, cover);
        self.rebuild(addr, len);
    }

    #[inline]
    fn lookup(&self, a: u32) -> u32 {
        let b = &self.blocks[(a >> 16) as usize];
        let low = a as u16;
        let i = b.partition_point(|r| r.0 <= low);
        b[i.saturating_sub(1)].1
    }

    fn mem_bytes(&self) -> usize {
        self.dir.mem_bytes() + self.ranges() * 6 + self.blocks.len() * 16
    }

    /// The index and the blocks.
    fn lookup_bytes(&self) -> usize {
        self.ranges() * std::mem::size_of::<(u16, u32)>() + self.blocks.len() * 16
    }

    /// The block's slot in the index, then a binary search over the block's cache lines
    /// (the DIR-24-8 table only serves updates).
    fn accesses(&self) -> f64 {
        let per_line = 64 / std::mem::size_of::<(u16, u32)>();
        let search: f64 = self
            .blocks
            .iter()
            .map(|b| 1.0 + (b.len().div_ceil(per_line) as f64).log2())
            .sum();
        1.0 + search / self.blocks.len() as f64
    }

    fn clear(&mut self) {
        *self = Ranges::default();
    }
}
