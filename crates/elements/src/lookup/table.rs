//! Route tables shared by the IPv4 and IPv6 lookup elements: route parsing and printing in
//! Click's syntax, the authoritative route set, next-hop interning, and the [`Lpm`] interface
//! that each lookup structure (linear, radix, DIR-24-8, the IPv6 trie) implements.
//!
//! The structures store small *next-hop ids* (an index into a table of distinct
//! `(gateway, port)` pairs) together with the matching prefix length, so that the hot lookup
//! touches only the structure and a tiny next-hop table. Removing a prefix asks the route set
//! for the longest shorter prefix covering it, which then takes its place.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write;
use std::net::Ipv4Addr;

pub use super::family::RouteAddr;

/// No next hop (lookup miss).
pub const NH_NONE: u32 = u32::MAX;

/// Largest next-hop id a structure can store (24 bits).
pub const NH_MAX: u32 = (1 << 24) - 2;

/// Mask of a prefix length.
#[inline]
pub fn mask_of(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len as u32)
    }
}

/// Parses an IPv4 prefix in Click's forms: `A.B.C.D/LEN`, `A.B.C.D/M.A.S.K`, a bare address
/// (`/32`), abbreviated network addresses (`18.26.4/24`, `10/8`, `0/0`), and AddressInfo
/// names (a name's address as a /32 before its prefix; `NAME:ipnet` for the prefix). Host
/// bits are cleared.
pub fn parse_prefix(s: &str) -> Result<(u32, u8), String> {
    let s = s.trim();
    parse_literal_prefix(s).or_else(|e| {
        use sluice_lang::args::FromArg;
        if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            return Err(e);
        }
        sluice_wire::Ipv4Prefix::from_arg(s)
            .map(|p| (u32::from(p.addr), p.len))
            .map_err(|_| e)
    })
}

fn parse_literal_prefix(s: &str) -> Result<(u32, u8), String> {
    let bad = || format!("expected IP prefix, got '{}'", s);
    let (a, m) = match s.split_once('/') {
        Some((a, m)) => (a, Some(m)),
        None => (s, None),
    };
    let parts: Vec<&str> = a.split('.').collect();
    if parts.is_empty() || parts.len() > 4 || (m.is_none() && parts.len() != 4) {
        return Err(bad());
    }
    let mut addr = 0u32;
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let v: u32 = p.parse().map_err(|_| bad())?;
        if v > 255 {
            return Err(bad());
        }
        addr |= v << (24 - 8 * i);
    }
    let len = match m {
        None => 32,
        Some(m) if m.contains('.') => {
            let mask: Ipv4Addr = m.parse().map_err(|_| bad())?;
            let mask = u32::from(mask);
            let len = mask.leading_ones();
            if mask_of(len as u8) != mask {
                return Err(bad());
            }
            len as u8
        }
        Some(m) => {
            if m.is_empty() || m.len() > 2 || !m.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            let l: u8 = m.parse().map_err(|_| bad())?;
            if l > 32 {
                return Err(bad());
            }
            l
        }
    };
    Ok((addr & mask_of(len), len))
}

/// One route: `ADDR/LEN [GW] OUT`, of address family `A` (IPv4 by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Route<A = u32> {
    /// Network address (host bits clear).
    pub addr: A,
    /// Prefix length.
    pub len: u8,
    /// Gateway, or 0 for none.
    pub gw: A,
    /// Output port.
    pub port: u32,
}

impl<A: RouteAddr> Route<A> {
    /// Parses `ADDR/MASK [GW] OUT` (also `ADDR MASK [GW] OUT`).
    pub fn parse(s: &str) -> Result<Route<A>, String> {
        let w: Vec<&str> = s.split_whitespace().collect();
        let (pfx, rest) = match w.len() {
            2 => (w[0].to_string(), &w[1..]),
            // `ADDR MASK OUT` when the second word is a netmask, else `ADDR GW OUT`.
            3 if !w[0].contains('/')
                && w[1].contains('.')
                && A::parse_prefix(&format!("{}/{}", w[0], w[1])).is_ok() =>
            {
                (format!("{}/{}", w[0], w[1]), &w[2..])
            }
            3 => (w[0].to_string(), &w[1..]),
            4 => (format!("{}/{}", w[0], w[1]), &w[2..]),
            _ => return Err(format!("expected 'ADDR/MASK [GW] OUT', got '{}'", s.trim())),
        };
        let (addr, len) = A::parse_prefix(&pfx)?;
        let (gw, out) = match rest {
            [out] => (A::default(), *out),
            [gw, out] => {
                let g = A::parse_addr(gw)
                    .map_err(|_| format!("bad gateway '{}' in route '{}'", gw, s.trim()))?;
                (g, *out)
            }
            _ => unreachable!(),
        };
        let port: u32 = out
            .parse()
            .map_err(|_| format!("bad output port '{}' in route '{}'", out, s.trim()))?;
        Ok(Route {
            addr,
            len,
            gw,
            port,
        })
    }

    /// Click's unparse of a route: as a configuration argument, or for `table` (`tabs`)
    /// in the columns of Click's listing.
    pub fn unparse(&self, tabs: bool) -> String {
        A::unparse_route(self, tabs)
    }
}

/// A longest-prefix-match structure over next-hop ids.
pub trait Lpm: Send {
    /// The address family.
    type Addr: RouteAddr;
    /// True if `table` lists the default route first, as Click's DirectIPLookup and
    /// RangeIPLookup do (their default route has a fixed first slot).
    const DEFAULT_ROUTE_FIRST: bool = false;
    /// Sets `addr/len` to next hop `nh`, replacing a route for the same prefix.
    fn set(&mut self, addr: Self::Addr, len: u8, nh: u32);
    /// Removes `addr/len`; `cover` is the longest shorter route covering it, which takes its
    /// place (`(len, nh)`).
    fn remove(&mut self, addr: Self::Addr, len: u8, cover: Option<(u8, u32)>);
    /// The next hop of `addr`, or [`NH_NONE`].
    fn lookup(&self, addr: Self::Addr) -> u32;
    /// Looks up a batch of addresses.
    #[inline]
    fn lookup_batch(&self, addrs: &[Self::Addr], out: &mut [u32]) {
        for (a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = self.lookup(*a);
        }
    }
    /// The next hop of `addr` and the length of an aligned prefix around it across which
    /// every address has that next hop (what a route cache can cache at once), when the
    /// structure tells it at little more than a lookup's cost; `None` when it cannot.
    fn lookup_aggregate(&self, addr: Self::Addr) -> Option<(u32, u8)> {
        let _ = addr;
        None
    }
    /// Bytes of memory held by the structure.
    fn mem_bytes(&self) -> usize;
    /// Bytes of it that lookups read (all of it, unless part only serves updates).
    fn lookup_bytes(&self) -> usize {
        self.mem_bytes()
    }
    /// Cache lines of the structure a lookup reads, on average over addresses spread
    /// uniformly (the placement planner's accesses per packet).
    fn accesses(&self) -> f64;
    /// Gives back memory reserved for growth (after the configured routes are loaded).
    fn shrink(&mut self) {}
    /// Removes every route.
    fn clear(&mut self);
}

/// Address of the table of structure `T`.
type AddrOf<T> = <T as Lpm>::Addr;

/// A prefix: address and length.
type PrefixOf<T> = (AddrOf<T>, u8);

/// The authoritative route set plus the lookup structure `T`.
pub struct RouteTable<T: Lpm> {
    /// Each route with its slot in `slots`.
    routes: HashMap<PrefixOf<T>, (Route<AddrOf<T>>, usize)>,
    /// The prefixes in Click's listing order: a new route takes the first free slot.
    slots: Vec<Option<PrefixOf<T>>>,
    /// The free slots, lowest first.
    free_slots: BinaryHeap<Reverse<usize>>,
    /// Distinct `(gw, port)` next hops; structures store indices into it.
    pub nexthops: Vec<(AddrOf<T>, u32)>,
    nh_index: HashMap<(AddrOf<T>, u32), u32>,
    /// Number of routes of each prefix length.
    lens: [u32; 129],
    /// The lookup structure.
    pub lpm: T,
}

impl<T: Lpm + Default> Default for RouteTable<T> {
    fn default() -> Self {
        RouteTable::with(T::default())
    }
}

impl<T: Lpm> RouteTable<T> {
    /// A table using structure `lpm`.
    pub fn with(lpm: T) -> Self {
        RouteTable {
            routes: HashMap::new(),
            slots: Vec::new(),
            free_slots: BinaryHeap::new(),
            nexthops: Vec::new(),
            nh_index: HashMap::new(),
            lens: [0; 129],
            lpm,
        }
    }

    fn intern(&mut self, gw: AddrOf<T>, port: u32) -> Result<u32, String> {
        if let Some(&i) = self.nh_index.get(&(gw, port)) {
            return Ok(i);
        }
        let i = self.nexthops.len() as u32;
        if i > NH_MAX {
            return Err("too many distinct next hops".into());
        }
        self.nexthops.push((gw, port));
        self.nh_index.insert((gw, port), i);
        Ok(i)
    }

    /// Number of routes.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    /// True if there is no route.
    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }

    /// Adds a route; with `replace` false an existing route for the prefix is an error.
    pub fn add(&mut self, r: Route<AddrOf<T>>, replace: bool) -> Result<(), String> {
        let key = (r.addr, r.len);
        if !replace && self.routes.contains_key(&key) {
            return Err(format!(
                "conflict with existing route '{}'",
                self.routes[&key].0.unparse(false)
            ));
        }
        let nh = self.intern(r.gw, r.port)?;
        let slot = match self.routes.get(&key) {
            Some(&(_, slot)) => slot,
            None => {
                self.lens[r.len as usize] += 1;
                match self.free_slots.pop() {
                    Some(Reverse(i)) => {
                        self.slots[i] = Some(key);
                        i
                    }
                    None => {
                        self.slots.push(Some(key));
                        self.slots.len() - 1
                    }
                }
            }
        };
        self.routes.insert(key, (r, slot));
        self.lpm.set(r.addr, r.len, nh);
        Ok(())
    }

    /// The route for exactly `addr/len`.
    pub fn get(&self, addr: AddrOf<T>, len: u8) -> Option<Route<AddrOf<T>>> {
        self.routes.get(&(addr, len)).map(|(r, _)| *r)
    }

    /// Removes the route for `addr/len`; returns it.
    pub fn remove(&mut self, addr: AddrOf<T>, len: u8) -> Option<Route<AddrOf<T>>> {
        let (r, slot) = self.routes.remove(&(addr, len))?;
        self.slots[slot] = None;
        self.free_slots.push(Reverse(slot));
        self.lens[len as usize] -= 1;
        let cover = self.covering(addr, len);
        self.lpm.remove(addr, len, cover);
        Some(r)
    }

    /// The longest route strictly shorter than `len` that covers `addr/len`, as `(len, nh)`.
    pub fn covering(&self, addr: AddrOf<T>, len: u8) -> Option<(u8, u32)> {
        (0..len).rev().find_map(|l| {
            if self.lens[l as usize] == 0 {
                return None;
            }
            let (r, _) = self.routes.get(&(addr.masked(l), l))?;
            Some((l, self.nh_index[&(r.gw, r.port)]))
        })
    }

    /// Removes every route.
    pub fn flush(&mut self) {
        self.routes.clear();
        self.slots.clear();
        self.free_slots.clear();
        self.lens = [0; 129];
        self.lpm.clear();
    }

    /// Looks up `addr`: `(gw, port)`.
    #[inline]
    pub fn lookup(&self, addr: AddrOf<T>) -> Option<(AddrOf<T>, u32)> {
        let nh = self.lpm.lookup(addr);
        self.nexthops.get(nh as usize).copied()
    }

    /// The routes in Click's listing order (for `table`): in the order they were added, a
    /// route added after a removal taking the removed route's place.
    pub fn routes(&self) -> Vec<Route<AddrOf<T>>> {
        let mut v: Vec<Route<AddrOf<T>>> = self
            .slots
            .iter()
            .flatten()
            .map(|k| self.routes[k].0)
            .collect();
        if T::DEFAULT_ROUTE_FIRST {
            v.sort_by_key(|r| r.len != 0);
        }
        v
    }

    /// Click's `table` text.
    pub fn unparse(&self) -> String {
        let mut s = String::new();
        if !self.routes.is_empty() {
            s.push_str(AddrOf::<T>::TABLE_HEADING);
        }
        for r in self.routes() {
            let _ = writeln!(s, "{}", r.unparse(true));
        }
        s
    }
}

/// Linear search over the routes: the reference structure (and LinearIPLookup's), for
/// address family `A`.
///
/// Entries are kept sorted by decreasing prefix length with their masks precomputed, so
/// the first match is the longest one and the search stops there.
pub struct Linear<A = u32> {
    /// `(addr, mask, len, nh)`, longest prefixes first.
    entries: Vec<(A, A, u8, u32)>,
}

impl<A> Default for Linear<A> {
    fn default() -> Self {
        Linear {
            entries: Vec::new(),
        }
    }
}

impl<A: RouteAddr> Lpm for Linear<A> {
    type Addr = A;

    fn set(&mut self, addr: A, len: u8, nh: u32) {
        match self.entries.iter_mut().find(|e| e.0 == addr && e.2 == len) {
            Some(e) => e.3 = nh,
            None => {
                let at = self.entries.partition_point(|e| e.2 >= len);
                self.entries
                    .insert(at, (addr, A::ONES.masked(len), len, nh));
            }
        }
    }

    fn remove(&mut self, addr: A, len: u8, _cover: Option<(u8, u32)>) {
        self.entries.retain(|e| !(e.0 == addr && e.2 == len));
    }

    #[inline]
    fn lookup(&self, addr: A) -> u32 {
        for &(a, m, _, nh) in &self.entries {
            if addr & m == a {
                return nh;
            }
        }
        NH_NONE
    }

    /// A run of packets to one destination (a flow's burst) costs one scan, like the
    /// last-address cache of Click's LinearIPLookup.
    #[inline]
    fn lookup_batch(&self, addrs: &[A], out: &mut [u32]) {
        let mut last: Option<(A, u32)> = None;
        for (&a, o) in addrs.iter().zip(out.iter_mut()) {
            *o = match last {
                Some((la, nh)) if la == a => nh,
                _ => {
                    let nh = self.lookup(a);
                    last = Some((a, nh));
                    nh
                }
            };
        }
    }

    fn mem_bytes(&self) -> usize {
        self.entries.capacity() * std::mem::size_of::<(A, A, u8, u32)>()
    }

    /// A scan reads the entries up to the first match, usually all of them (the default
    /// route is last).
    fn accesses(&self) -> f64 {
        let bytes = self.entries.len() * std::mem::size_of::<(A, A, u8, u32)>();
        bytes.div_ceil(64).max(1) as f64
    }

    fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(parse_prefix("18.26.4/24").unwrap(), (0x121a0400, 24));
        assert_eq!(parse_prefix("0/0").unwrap(), (0, 0));
        assert_eq!(parse_prefix("10.1.2.3/8").unwrap(), (0x0a000000, 8));
        assert_eq!(
            parse_prefix("10.1.2.3/255.255.0.0").unwrap(),
            (0x0a010000, 16)
        );
        assert_eq!(parse_prefix("1.2.3.4").unwrap(), (0x01020304, 32));
        for b in [
            "1.2.3",
            "1.2.3.4/33",
            "1.2.3.256",
            "1.2.3.4/255.0.255.0",
            "",
            "a/8",
        ] {
            assert!(parse_prefix(b).is_err(), "{}", b);
        }
    }

    #[test]
    fn routes_parse_and_print() {
        let r = Route::<u32>::parse("0/0 18.26.4.1 1").unwrap();
        assert_eq!((r.addr, r.len, r.gw, r.port), (0, 0, 0x121a0401, 1));
        assert_eq!(r.unparse(true), "0.0.0.0/0\t\t18.26.4.1\t1");
        assert_eq!(r.unparse(false), "0.0.0.0/0 18.26.4.1 1");
        let r = Route::<u32>::parse("18.26.4.0/24 2").unwrap();
        assert_eq!(r.unparse(true), "18.26.4.0/24\t\t-\t\t2");
        let r = Route::<u32>::parse("198.162.100.200/32 2").unwrap();
        assert_eq!(r.unparse(true), "198.162.100.200/32\t-\t\t2");
        let r = Route::<u32>::parse("18.26.4.0 255.255.255.0 3").unwrap();
        assert_eq!((r.len, r.gw, r.port), (24, 0, 3));
        assert!(Route::<u32>::parse("18.26.4.0/24").is_err());
        assert!(Route::<u32>::parse("18.26.4.0/24 x").is_err());
    }

    #[test]
    fn accesses_per_lookup_of_each_structure() {
        use crate::lookup::{dir24::Dir24, radix::Radix, range::Ranges, trie6::Trie6};
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let host = 0xc612_0107; // 198.18.1.7

        let mut d = Dir24::default();
        assert_eq!(d.accesses(), 1.0);
        d.set(host, 32, 1);
        assert!(close(d.accesses(), 1.0 + 1.0 / (1u64 << 24) as f64));

        // A /32 hangs four 4-bit nodes under one of the 65,536 root slots.
        let mut r = Radix::default();
        assert_eq!(r.accesses(), 1.0);
        r.set(host, 32, 1);
        let nodes = 1.0 + (1.0 + (1.0 + 1.0 / 16.0) / 16.0) / 16.0;
        assert!(
            close(r.accesses(), 1.0 + nodes / 65536.0),
            "{}",
            r.accesses()
        );
        assert!(r.lookup_bytes() > 65536 * 8);

        // A /48 hangs four 8-bit chunks under one root entry.
        let mut t = Trie6::default();
        t.set(0x2001_0db8_0001u128 << 80, 48, 1);
        let chunks = 1.0 + (1.0 + (1.0 + 1.0 / 256.0) / 256.0) / 256.0;
        assert!(
            close(t.accesses(), 1.0 + chunks / 65536.0),
            "{}",
            t.accesses()
        );

        // Sixteen-byte entries, four to a cache line, all scanned.
        let mut l = Linear::<u32>::default();
        for i in 0..5 {
            l.set(host + (i << 8), 24, 1);
        }
        assert_eq!(l.accesses(), 2.0);

        // The index, then one line of the block's ranges; the DIR-24-8 table behind it is
        // not read by lookups.
        let mut g = Ranges::default();
        g.set(host, 32, 1);
        assert!(close(g.accesses(), 2.0));
        assert!(g.lookup_bytes() < g.mem_bytes() / 10);
    }
}
