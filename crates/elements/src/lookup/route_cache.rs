//! Aggregate route caching (Panama, 003_*, after Pradhan and Chiueh): a small direct-mapped
//! cache in front of any IPv4 longest-prefix-match structure, indexed by address bits chosen
//! from the routing table's structure.
//!
//! **Index bits.** A cache of 2^k sets is indexed by k address bits. Panama chooses them
//! greedily: with k' bits chosen, the address space falls into 2^k' partitions; the next bit is
//! the one that minimises both the total number of address ranges and the variance of their
//! number across the 2^(k'+1) partitions. [`Cached`] does the same with one objective that
//! grows with both, the sum over partitions of the squared number of ranges (`Σ n_p² =
//! P·(variance + mean²)`), taking the routes (a deterministic sample of at most 4096) as the
//! ranges: a route falls into the partition its bits select when every chosen bit lies inside
//! its prefix, and into each of the partitions it spans otherwise (a bit below the prefix length
//! splits the route's range into two ranges, which is what makes bits inside the common prefix
//! lengths win). Ties go to the bit nearest above /24, the most common route length. The bits
//! are chosen again (and the cache emptied) after a material change: more route changes since
//! the last choice than half the routes it saw, plus 64.
//!
//! **Entries and aggregates.** On a miss the full structure answers, and the entry caches a
//! whole *aggregate*: the shortest prefix `a/L` around the address such that no route lies
//! strictly inside `a/L` *within this set's partition* (routes whose chosen bits inside their
//! prefix differ from the set's cannot be reached through this set, so they do not split the
//! aggregate: Panama's merging of ranges that are not adjacent in the address space but are in
//! the partition). Across such an aggregate every address of the partition has the same answer
//! (the longest route covering it is the one covering `a/L`), so a hit is one masked compare:
//! `addr & mask == tag`. Unrouted space is cached the same way (answer [`NH_NONE`]). The search
//! for `L` starts from the nearest routes on each side of the address in an ordered copy of
//! the prefixes: the longest route covering it and the bits it shares with the nearest ones
//! that do not give the shortest `L` with no route strictly inside at all. When that `L` is
//! longer than the position of every index bit, a route inside any shorter prefix lies in
//! this set's partition, and `L` is the answer (about 34 routes looked at). Otherwise a
//! binary search below it tests the partition, examining at most a few dozen routes per
//! probe; when it stops early it keeps the longer (smaller, still exact) aggregate.
//!
//! A structure that can tell the aggregate itself at little more than a lookup's cost
//! ([`Lpm::lookup_aggregate`]: DIR-24-8 widens the address's block while its neighbours have
//! the same next hop, up to /16) answers the miss with it instead, and no search is made: its
//! aggregates merge neighbouring routes with the same next hop but not ranges of the
//! partition that are apart, and stop at /16.
//!
//! **Route changes.** A cached answer never outlives its route: a change to prefix `P` empties
//! every entry whose aggregate overlaps `P`, in every set that an address of `P` can index (the
//! sets agreeing with `P` on the chosen bits inside `P`'s length; other sets are never reached
//! by an address of `P`, and the answers of all other addresses are unchanged). A /24 or longer
//! change thus looks at one set when the chosen bits lie above /24, the default route at all of
//! them. Emptied entries are counted (`invalidations`), as are those dropped when the bits are
//! chosen again or the table is flushed.

use std::cell::Cell;
use std::collections::BTreeSet;

use super::range::Ranges;
use super::table::{mask_of, Linear, Lpm, NH_NONE};
use super::trie6::Trie6;

/// Largest number of index bits (a cache of 2^20 entries).
pub const MAX_BITS: u8 = 20;

/// Routes sampled when choosing the index bits.
const SAMPLE: usize = 4096;

/// Routes examined per probe of the aggregate search before it settles for a longer prefix.
const PROBE_ROUTES: usize = 48;

/// Lookups probed together in a batch (misses are then looked up as one batch).
const BATCH: usize = 64;

/// One cache entry: addresses with `addr & mask == tag` (in this set) have next hop `nh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    tag: u32,
    mask: u32,
    nh: u32,
}

impl Entry {
    /// An empty entry: no address matches (a tag with host bits set).
    const EMPTY: Entry = Entry {
        tag: 1,
        mask: 0,
        nh: NH_NONE,
    };

    #[inline]
    fn is_valid(&self) -> bool {
        self.tag & !self.mask == 0
    }

    /// True if the entry's aggregate overlaps prefix `addr/len`.
    #[inline]
    fn overlaps(&self, addr: u32, len: u8) -> bool {
        self.is_valid() && (self.tag ^ addr) & self.mask & mask_of(len) == 0
    }
}

/// The counters and index bits of a route cache.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Lookups answered by the cache.
    pub hits: u64,
    /// Lookups that went to the full structure.
    pub misses: u64,
    /// Valid entries emptied by route changes, a new choice of index bits or a flush.
    pub invalidations: u64,
    /// The index bits, as bit positions counted from the most significant (0) to the least
    /// significant (31) address bit, in index order (most significant index bit first).
    pub bits: Vec<u8>,
}

impl CacheStats {
    /// Hits over lookups (0 without lookups).
    pub fn hit_ratio(&self) -> f64 {
        let n = self.hits + self.misses;
        if n == 0 {
            0.0
        } else {
            self.hits as f64 / n as f64
        }
    }
}

/// The bit of `a` at position `pos` (0 = most significant).
#[inline]
fn bit(a: u32, pos: u8) -> u32 {
    (a >> (31 - pos)) & 1
}

/// A route cache in front of the IPv4 structure `T`; itself an [`Lpm`], so any lookup element
/// can use it. Without index bits ([`Cached::default`], or [`Cached::set_bits`] with 0) it is
/// `T` unchanged: lookups go straight through and no copy of the prefixes is kept.
pub struct Cached<T> {
    /// The full structure.
    inner: T,
    /// Chosen bit positions, index bit `k-1-j` for `bits[j]` (0 = most significant address bit).
    bits: Vec<u8>,
    /// Per address byte, the index bits its value contributes.
    sel: Box<[[u32; 256]; 4]>,
    /// Per prefix length, the index bits that lie inside the prefix.
    fixed: [u32; 33],
    /// One more than the position of the least significant index bit: prefixes at least this
    /// long have every index bit inside.
    below_bits: u8,
    /// The 2^k sets (empty when there is no cache).
    entries: Box<[Cell<Entry>]>,
    /// Every prefix, ordered (for the aggregate search and the choice of bits).
    prefixes: BTreeSet<(u32, u8)>,
    /// Route changes since the bits were chosen.
    changes: usize,
    /// Routes when the bits were chosen.
    chosen_at: usize,
    /// Routes were set without a cache (so the prefixes are not all known).
    untracked: bool,
    hits: Cell<u64>,
    misses: Cell<u64>,
    invalidations: u64,
}

impl<T: Default> Default for Cached<T> {
    fn default() -> Self {
        Cached::new(T::default())
    }
}

impl<T> Cached<T> {
    /// `inner` without a cache.
    pub fn new(inner: T) -> Self {
        Cached {
            inner,
            bits: Vec::new(),
            sel: Box::new([[0; 256]; 4]),
            fixed: [0; 33],
            below_bits: 0,
            entries: Box::new([]),
            prefixes: BTreeSet::new(),
            changes: 0,
            chosen_at: 0,
            untracked: false,
            hits: Cell::new(0),
            misses: Cell::new(0),
            invalidations: 0,
        }
    }

    /// `inner` with a cache of 2^`bits` entries.
    pub fn with_bits(inner: T, bits: u8) -> Result<Self, String> {
        let mut c = Cached::new(inner);
        c.set_bits(bits)?;
        Ok(c)
    }

    /// The full structure.
    pub fn inner(&self) -> &T {
        &self.inner
    }

    /// True if a cache is in use.
    pub fn enabled(&self) -> bool {
        !self.entries.is_empty()
    }

    /// Sets the cache to 2^`bits` entries, or none with 0. A cache can be added only before
    /// the first route (it keeps its own copy of the prefixes from the start) or after a
    /// [`Lpm::clear`].
    pub fn set_bits(&mut self, bits: u8) -> Result<(), String> {
        if bits > MAX_BITS {
            return Err(format!("CACHE {} out of range (0 to {})", bits, MAX_BITS));
        }
        if bits > 0 && !self.enabled() && self.untracked {
            return Err("a route cache must be set before routes are added".into());
        }
        if bits == 0 {
            self.entries = Box::new([]);
            self.prefixes.clear();
            self.bits.clear();
            return Ok(());
        }
        self.entries = (0..1usize << bits)
            .map(|_| Cell::new(Entry::EMPTY))
            .collect();
        self.choose_bits();
        Ok(())
    }

    /// Bytes of the cache's sets and index tables.
    fn cache_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.entries) + std::mem::size_of_val(&*self.sel)
    }

    /// The counters and the index bits.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.get(),
            misses: self.misses.get(),
            invalidations: self.invalidations,
            bits: self.bits.clone(),
        }
    }

    /// Zeroes the hit, miss and invalidation counters.
    pub fn reset_counts(&mut self) {
        self.hits.set(0);
        self.misses.set(0);
        self.invalidations = 0;
    }

    /// The set of `a`.
    #[inline]
    fn index(&self, a: u32) -> usize {
        let s = &self.sel;
        (s[0][(a >> 24) as usize]
            | s[1][((a >> 16) & 255) as usize]
            | s[2][((a >> 8) & 255) as usize]
            | s[3][(a & 255) as usize]) as usize
    }

    /// Chooses the index bits from the prefixes (see the module documentation) and empties
    /// the cache.
    pub fn choose_bits(&mut self) {
        let k = self.entries.len().trailing_zeros() as u8;
        let step = self.prefixes.len().div_ceil(SAMPLE).max(1);
        let sample: Vec<(u32, u8)> = self.prefixes.iter().step_by(step).copied().collect();
        self.bits = greedy_bits(&sample, k);
        self.below_bits = self.bits.iter().max().map_or(0, |&p| p + 1);
        *self.sel = [[0; 256]; 4];
        for (j, &pos) in self.bits.iter().enumerate() {
            let ib = 1u32 << (k as usize - 1 - j);
            let (byte, shift) = ((pos / 8) as usize, 7 - pos % 8);
            for (v, x) in self.sel[byte].iter_mut().enumerate() {
                if (v >> shift) & 1 == 1 {
                    *x |= ib;
                }
            }
        }
        for len in 0..=32u8 {
            self.fixed[len as usize] = self
                .bits
                .iter()
                .enumerate()
                .filter(|&(_, &pos)| pos < len)
                .fold(0, |m, (j, _)| m | 1 << (k as usize - 1 - j));
        }
        self.invalidate_all();
        self.changes = 0;
        self.chosen_at = self.prefixes.len();
    }

    fn invalidate_all(&mut self) {
        for e in self.entries.iter() {
            if e.get().is_valid() {
                self.invalidations += 1;
            }
            e.set(Entry::EMPTY);
        }
    }

    /// Empties the entries that overlap `addr/len` in every set an address of it can index.
    fn invalidate(&mut self, addr: u32, len: u8) {
        let base = self.index(addr);
        let free = !self.fixed[len as usize] as usize & (self.entries.len() - 1);
        let mut s = free;
        loop {
            let e = &self.entries[base | s];
            if e.get().overlaps(addr, len) {
                e.set(Entry::EMPTY);
                self.invalidations += 1;
            }
            if s == 0 {
                break;
            }
            s = (s - 1) & free;
        }
    }

    /// After a change to `addr/len`: empties what it affects, and chooses the bits again
    /// after a material change.
    fn changed(&mut self, addr: u32, len: u8) {
        self.invalidate(addr, len);
        self.changes += 1;
        if self.changes > self.chosen_at / 2 + 64 {
            self.choose_bits();
        }
    }

    /// True if some route lies strictly inside `a/len` within the partition of set `set`
    /// (or, having examined [`PROBE_ROUTES`] routes without finding one, maybe).
    fn split(&self, a: u32, len: u8, set: usize) -> bool {
        let base = a & mask_of(len);
        let end = base | !mask_of(len);
        self.prefixes
            .range((base, len + 1)..=(end, 32))
            .take(PROBE_ROUTES)
            .enumerate()
            .any(|(i, &(p, l))| {
                i + 1 == PROBE_ROUTES
                    || (self.index(p) ^ set) & self.fixed[l as usize] as usize == 0
            })
    }

    /// The shortest prefix length `L` such that no route lies strictly inside `a/L`, in any
    /// partition: the longest route covering `a`, and one more than the bits `a` shares with
    /// the nearest route on each side that does not cover it (no route further away shares
    /// more). At most 34 routes are looked at.
    fn tight(&self, a: u32) -> u8 {
        let shared = |p: u32| (a ^ p).leading_zeros() as u8 + 1;
        let mut need = 0u8;
        if let Some(&(p, _)) = self
            .prefixes
            .range((a.saturating_add(1), 0)..)
            .find(|&&(p, _)| p > a)
        {
            need = shared(p);
        }
        for &(p, l) in self.prefixes.range(..=(a, 32)).rev() {
            if (a ^ p) & mask_of(l) == 0 {
                need = need.max(l);
            } else {
                need = need.max(shared(p));
                break;
            }
        }
        need
    }

    /// Caches the aggregate around `a` (of set `set`), whose next hop is `nh`.
    fn fill(&self, a: u32, set: usize, nh: u32) {
        let tight = self.tight(a);
        // Below `tight` some route lies inside; when it lies below every index bit too, it is
        // in this set's partition, and so at every shorter length: `tight` is the answer.
        let (mut lo, mut hi) = (if tight > self.below_bits { tight } else { 0 }, tight);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.split(a, mid, set) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        self.store(a, hi, set, nh);
    }

    /// Caches `a/len`, all of whose addresses have next hop `nh`, in set `set` (that of `a`).
    #[inline]
    fn store(&self, a: u32, len: u8, set: usize, nh: u32) {
        let mask = mask_of(len);
        self.entries[set].set(Entry {
            tag: a & mask,
            mask,
            nh,
        });
    }
}

/// Greedy choice of `k` index bits over the prefixes `routes` (see the module documentation).
fn greedy_bits(routes: &[(u32, u8)], k: u8) -> Vec<u8> {
    // Candidates in tie-break order: just above /24 first, then upwards, then below /24.
    let order: Vec<u8> = (0..24).rev().chain(24..32).collect();
    let mut chosen: Vec<u8> = Vec::new();
    // Per route, over the chosen bits (first chosen = least significant here): the values of
    // the bits inside its prefix, and the bits it spans.
    let mut val = vec![0u32; routes.len()];
    let mut free = vec![0u32; routes.len()];
    let mut counts = vec![0u32; 1 << k];
    for step in 0..k as usize {
        let mut best: Option<(u64, u8)> = None;
        for &pos in order.iter().filter(|p| !chosen.contains(p)) {
            let counts = &mut counts[..2 << step];
            counts.fill(0);
            for (i, &(addr, len)) in routes.iter().enumerate() {
                let (v, f) = if pos < len {
                    (val[i] | bit(addr, pos) << step, free[i])
                } else {
                    (val[i], free[i] | 1 << step)
                };
                let mut s = f;
                loop {
                    counts[(v | s) as usize] += 1;
                    if s == 0 {
                        break;
                    }
                    s = (s - 1) & f;
                }
            }
            let cost: u64 = counts.iter().map(|&c| c as u64 * c as u64).sum();
            if best.is_none_or(|(b, _)| cost < b) {
                best = Some((cost, pos));
            }
        }
        let (_, pos) = best.expect("a candidate bit is left");
        for (i, &(addr, len)) in routes.iter().enumerate() {
            if pos < len {
                val[i] |= bit(addr, pos) << step;
            } else {
                free[i] |= 1 << step;
            }
        }
        chosen.push(pos);
    }
    chosen
}

impl<T: Lpm<Addr = u32>> Lpm for Cached<T> {
    type Addr = u32;

    const DEFAULT_ROUTE_FIRST: bool = T::DEFAULT_ROUTE_FIRST;

    fn set(&mut self, addr: u32, len: u8, nh: u32) {
        self.inner.set(addr, len, nh);
        if self.enabled() {
            self.prefixes.insert((addr, len));
            self.changed(addr, len);
        } else {
            self.untracked = true;
        }
    }

    fn remove(&mut self, addr: u32, len: u8, cover: Option<(u8, u32)>) {
        self.inner.remove(addr, len, cover);
        if self.enabled() {
            self.prefixes.remove(&(addr, len));
            self.changed(addr, len);
        }
    }

    #[inline]
    fn lookup(&self, a: u32) -> u32 {
        if !self.enabled() {
            return self.inner.lookup(a);
        }
        let set = self.index(a);
        let e = self.entries[set].get();
        if a & e.mask == e.tag {
            self.hits.set(self.hits.get() + 1);
            return e.nh;
        }
        self.misses.set(self.misses.get() + 1);
        if let Some((nh, len)) = self.inner.lookup_aggregate(a) {
            self.store(a, len, set, nh);
            return nh;
        }
        let nh = self.inner.lookup(a);
        self.fill(a, set, nh);
        nh
    }

    /// Probes the cache for the whole batch, then looks the misses up in the full structure
    /// as one batch.
    fn lookup_batch(&self, addrs: &[u32], out: &mut [u32]) {
        if !self.enabled() {
            return self.inner.lookup_batch(addrs, out);
        }
        let mut miss_at = [0usize; BATCH];
        let mut miss_addr = [0u32; BATCH];
        let mut miss_nh = [0u32; BATCH];
        for (addrs, out) in addrs.chunks(BATCH).zip(out.chunks_mut(BATCH)) {
            let mut n = 0;
            for (i, (&a, o)) in addrs.iter().zip(out.iter_mut()).enumerate() {
                let e = self.entries[self.index(a)].get();
                if a & e.mask == e.tag {
                    *o = e.nh;
                } else {
                    miss_at[n] = i;
                    miss_addr[n] = a;
                    n += 1;
                }
            }
            self.hits.set(self.hits.get() + (addrs.len() - n) as u64);
            if n == 0 {
                continue;
            }
            self.misses.set(self.misses.get() + n as u64);
            // The structure's batch lookup overlaps the misses' memory accesses; the aggregate
            // it can tell (re-reading what that lookup brought in) is cached at once, or else
            // searched for.
            self.inner.lookup_batch(&miss_addr[..n], &mut miss_nh[..n]);
            for j in 0..n {
                let (a, nh) = (miss_addr[j], miss_nh[j]);
                out[miss_at[j]] = nh;
                let set = self.index(a);
                match self.inner.lookup_aggregate(a) {
                    Some((nh, len)) => self.store(a, len, set, nh),
                    None => self.fill(a, set, nh),
                }
            }
        }
    }

    fn shrink(&mut self) {
        self.inner.shrink();
    }

    /// One probe of the cache, and the structure's lookup for the share of misses (all
    /// lookups before any was made).
    fn accesses(&self) -> f64 {
        if self.entries.is_empty() {
            return self.inner.accesses();
        }
        let s = self.stats();
        let miss = if s.hits + s.misses == 0 {
            1.0
        } else {
            s.misses as f64 / (s.hits + s.misses) as f64
        };
        1.0 + miss * self.inner.accesses()
    }

    fn lookup_bytes(&self) -> usize {
        self.inner.lookup_bytes() + self.cache_bytes()
    }

    fn mem_bytes(&self) -> usize {
        self.inner.mem_bytes()
            + self.cache_bytes()
            + self.prefixes.len() * std::mem::size_of::<(u32, u8)>() * 2
    }

    fn clear(&mut self) {
        self.inner.clear();
        self.prefixes.clear();
        self.untracked = false;
        if self.enabled() {
            self.invalidate_all();
            self.changes = 0;
            self.chosen_at = 0;
        }
    }
}

/// Lookup structures as the lookup elements configure them: those with a route cache accept
/// the `CACHE` keyword and have the `cache_*` handlers.
pub trait CacheCtl {
    /// True if the structure can have a route cache.
    const CACHEABLE: bool = false;
    /// Sets the cache to 2^`bits` entries (0: none), before the first route.
    fn set_cache_bits(&mut self, _bits: u8) -> Result<(), String> {
        Err("this lookup structure has no route cache".into())
    }
    /// The cache's counters and index bits.
    fn cache_stats(&self) -> CacheStats {
        CacheStats::default()
    }
    /// Zeroes the cache's counters.
    fn reset_cache_counts(&mut self) {}
}

impl<T: Lpm<Addr = u32>> CacheCtl for Cached<T> {
    const CACHEABLE: bool = true;

    fn set_cache_bits(&mut self, bits: u8) -> Result<(), String> {
        self.set_bits(bits)
    }

    fn cache_stats(&self) -> CacheStats {
        self.stats()
    }

    fn reset_cache_counts(&mut self) {
        self.reset_counts();
    }
}

impl<A> CacheCtl for Linear<A> {}
impl CacheCtl for Ranges {}
impl CacheCtl for Trie6 {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::dir24::Dir24;
    use crate::lookup::radix::Radix;
    use crate::lookup::table::{Route, RouteTable};

    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn cached(bits: u8) -> RouteTable<Cached<Radix>> {
        RouteTable::with(Cached::with_bits(Radix::default(), bits).unwrap())
    }

    fn route(s: &str) -> Route {
        Route::parse(s).unwrap()
    }

    /// An address in a small part of the space (so that prefixes nest and collide), near
    /// one of the prefixes in `near` half of the time.
    fn addr(rng: &mut Rng, near: &[(u32, u8)]) -> u32 {
        let x = rng.next() as u32;
        if !near.is_empty() && rng.below(2) == 0 {
            let (p, l) = near[rng.below(near.len() as u64) as usize];
            p | (x & !mask_of(l))
        } else {
            (x & 0x030f_ffff) | 0x0a00_0000
        }
    }

    /// The cache's own memory counts once: the structure, the sets and index tables, and the
    /// ordered copy of the prefixes, of which lookups read all but the copy.
    #[test]
    fn memory_counts_the_cache_once() {
        let mut c: Cached<Radix> = Cached::with_bits(Radix::default(), 10).unwrap();
        c.set(0xc612_0000, 16, 1);
        c.set(0xc612_0100, 24, 2);
        let sets = std::mem::size_of_val(&*c.entries) + std::mem::size_of_val(&*c.sel);
        assert!(sets >= 1024 * std::mem::size_of::<Entry>());
        assert_eq!(c.lookup_bytes(), c.inner.lookup_bytes() + sets);
        let copy = 2 * 2 * std::mem::size_of::<(u32, u8)>();
        assert_eq!(c.mem_bytes(), c.inner.mem_bytes() + sets + copy);
    }

    /// `tight` is the shortest prefix around an address with no route strictly inside,
    /// checked against every length and every route.
    #[test]
    fn tight_is_the_shortest_prefix_without_a_route_inside() {
        let mut rng = Rng(7);
        let mut c: Cached<Radix> = Cached::with_bits(Radix::default(), 4).unwrap();
        let mut present: Vec<(u32, u8)> = Vec::new();
        for _ in 0..300 {
            let len = [0, 8, 12, 16, 20, 24, 24, 28, 32][rng.below(9) as usize];
            let a = addr(&mut rng, &present) & mask_of(len);
            c.set(a, len, 1);
            present.push((a, len));
        }
        for _ in 0..2000 {
            let a = addr(&mut rng, &present);
            let inside = |l: u8| {
                present
                    .iter()
                    .any(|&(p, pl)| pl > l && (p ^ a) & mask_of(l) == 0)
            };
            let want = (0..=32).find(|&l| !inside(l)).unwrap();
            assert_eq!(c.tight(a), want, "{:08x}", a);
        }
    }

    /// The key property: with random adds, replacements and removes interleaved with single
    /// and batched lookups, the cached structure answers exactly as the uncached one, for
    /// several cache sizes and through many choices of index bits.
    #[test]
    fn cached_equals_uncached_under_random_changes() {
        random_changes::<Radix>(&[(1, 1), (2, 3), (3, 6), (4, 10), (5, 12)]);
    }

    /// The same with DIR-24-8, whose misses cache the aggregates it finds itself (fewer
    /// runs: each change of a short route rewrites up to 2^24 entries).
    #[test]
    fn cached_dir24_equals_uncached_under_random_changes() {
        random_changes::<Dir24>(&[(2, 3), (4, 10)]);
    }

    /// Random changes and lookups for each `(seed, index bits)` (see above).
    fn random_changes<T: Lpm<Addr = u32> + Default>(runs: &[(u64, u8)]) {
        for &(seed, bits) in runs {
            let mut rng = Rng(seed * 0x9e37_79b9_7f4a_7c15);
            let mut c = RouteTable::with(Cached::with_bits(T::default(), bits).unwrap());
            let mut reference: RouteTable<Linear> = RouteTable::default();
            let mut present: Vec<(u32, u8)> = Vec::new();
            for step in 0..6000 {
                match rng.below(10) {
                    0..=3 => {
                        let len = [0, 8, 12, 14, 16, 16, 20, 22, 24, 24, 24, 26, 28, 32]
                            [rng.below(14) as usize];
                        let a = addr(&mut rng, &present) & mask_of(len);
                        let r = Route {
                            addr: a,
                            len,
                            gw: 0,
                            port: rng.below(4) as u32,
                        };
                        c.add(r, true).unwrap();
                        reference.add(r, true).unwrap();
                        if !present.contains(&(a, len)) {
                            present.push((a, len));
                        }
                    }
                    4 | 5 if !present.is_empty() => {
                        let (a, l) = present.swap_remove(rng.below(present.len() as u64) as usize);
                        assert_eq!(c.remove(a, l), reference.remove(a, l));
                    }
                    _ => {
                        let addrs: Vec<u32> = (0..40).map(|_| addr(&mut rng, &present)).collect();
                        let mut out = vec![0; addrs.len()];
                        c.lpm.lookup_batch(&addrs, &mut out);
                        for (&a, &nh) in addrs.iter().zip(&out) {
                            let want = reference.lookup(a);
                            assert_eq!(c.lookup(a), want, "seed {seed} step {step} {a:08x}");
                            assert_eq!(c.nexthops.get(nh as usize).copied(), want);
                        }
                    }
                }
                if step == 5000 {
                    c.flush();
                    reference.flush();
                    present.clear();
                }
            }
            let s = c.lpm.stats();
            assert_eq!(s.bits.len(), bits as usize);
            assert!(s.hits > 0 && s.misses > 0 && s.invalidations > 0, "{s:?}");
        }
    }

    /// A cached answer never outlives its route: replacing, removing and splitting the route
    /// behind a cached aggregate changes the next answer.
    #[test]
    fn cached_answer_never_outlives_its_route() {
        let mut c = cached(4);
        c.add(route("0/0 9"), false).unwrap();
        c.add(route("10.0.0.0/8 1"), false).unwrap();
        let a = 0x0a01_0203;
        assert_eq!(c.lookup(a), Some((0, 1)));
        assert_eq!(c.lookup(a), Some((0, 1)));
        assert_eq!(c.lpm.stats().hits, 1);
        c.add(route("10.0.0.0/8 2"), true).unwrap();
        assert_eq!(c.lookup(a), Some((0, 2)), "replaced");
        c.add(route("10.1.2.0/24 3"), false).unwrap();
        assert_eq!(
            c.lookup(a),
            Some((0, 3)),
            "more specific inside the aggregate"
        );
        assert_eq!(c.lookup(0x0a01_0303), Some((0, 2)));
        c.remove(0x0a01_0200, 24).unwrap();
        assert_eq!(c.lookup(a), Some((0, 2)), "more specific removed");
        c.remove(0x0a00_0000, 8).unwrap();
        assert_eq!(c.lookup(a), Some((0, 9)), "cover removed");
        c.remove(0, 0).unwrap();
        assert_eq!(c.lookup(a), None, "no route left");
        c.add(route("10.1.2.3/32 4"), false).unwrap();
        assert_eq!(c.lookup(a), Some((0, 4)), "route into unrouted space");
        assert!(c.lpm.stats().invalidations >= 6);
    }

    /// One miss caches the whole aggregate: other addresses of it hit.
    #[test]
    fn one_entry_answers_an_aggregate() {
        let mut c = cached(2);
        c.add(route("10.0.0.0/8 1"), false).unwrap();
        c.add(route("10.200.0.0/16 2"), false).unwrap();
        assert_eq!(c.lookup(0x0a01_0101), Some((0, 1)));
        for a in [0x0a01_0102u32, 0x0a02_0000, 0x0a7f_ffff] {
            if c.lpm.index(a) == c.lpm.index(0x0a01_0101) {
                assert_eq!(c.lookup(a), Some((0, 1)));
            }
        }
        let s = c.lpm.stats();
        assert_eq!(s.misses, 1, "{s:?}");
    }

    #[test]
    fn cache_only_before_routes() {
        let mut c: Cached<Radix> = Cached::default();
        assert!(!c.enabled());
        c.set(0x0a00_0000, 8, 0);
        assert!(c.set_bits(4).is_err());
        c.clear();
        assert!(c.set_bits(4).is_ok());
        assert!(c.set_bits(MAX_BITS + 1).is_err());
        assert_eq!(
            c.stats().bits,
            vec![23, 22, 21, 20],
            "no routes: the bits above /24"
        );
    }

    /// On a table of /24s spread over a /16, the chosen bits are the /24s' own bits.
    #[test]
    fn bits_follow_the_table() {
        let mut c = cached(8);
        let mut rng = Rng(42);
        for _ in 0..2000 {
            let a = 0xc612_0000 | (rng.below(256) as u32) << 8;
            c.add(
                Route {
                    addr: a,
                    len: 24,
                    gw: 0,
                    port: 0,
                },
                true,
            )
            .unwrap();
        }
        let mut bits = c.lpm.stats().bits;
        bits.sort();
        assert_eq!(bits, (16..24).collect::<Vec<u8>>());
    }
}
