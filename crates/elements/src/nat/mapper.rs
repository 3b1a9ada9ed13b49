//! The mapper elements (Click's `IPMapper`s), RoundRobinIPMapper and SourceIPHashMapper:
//! configuration, and the choice of a pattern and outputs for each new mapping of a rewriter
//! input that names one. Each class's file (`round_robin_ip_mapper.rs`,
//! `source_ip_hash_mapper.rs`) documents it and makes an [`IPMapper`] of its
//! [`MapperClass`]. A mapper's state is shared with the rewriters that use it.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use sluice_core::{ConfigCx, Element, InitCx};
use sluice_lang::args::{split_words, Args};

use super::flow_table::{lock, FlowId};
use super::rewriter::resolve_pattern;
use super::spec::{InputSpec, PatternRef};

/// Which mapper class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapperClass {
    /// RoundRobinIPMapper: patterns in turn.
    RoundRobin,
    /// SourceIPHashMapper: the pattern a consistent hash of the source address picks.
    SourceHash,
}

/// A pattern and the outputs of the mappings it makes.
#[derive(Debug)]
struct Choice {
    pattern: PatternRef,
    outputs: [usize; 2],
}

/// How a mapper picks its pattern.
#[derive(Debug)]
enum Policy {
    /// The pattern tried first next.
    RoundRobin(usize),
    /// The consistent-hash ring.
    SourceHash(Ring),
}

/// A mapper's patterns and choice state.
#[derive(Debug)]
pub struct Mapper {
    choices: Vec<Choice>,
    policy: Policy,
}

/// A mapper shared by its element and the rewriters using it.
pub type SharedMapper = Arc<Mutex<Mapper>>;

impl Mapper {
    /// The rewritten flow and outputs of a new mapping for `flow` (Click's
    /// `IPMapper::rewrite_flowid`), or `None` when no pattern has a free value. `taken`
    /// says whether a reply entry exists, as for [`super::spec::Pattern::rewrite`].
    /// RoundRobinIPMapper tries its patterns in turn from the one after the last tried;
    /// SourceIPHashMapper tries only the one its hash picks.
    pub fn rewrite(
        &mut self,
        flow: &FlowId,
        taken: impl Fn(&FlowId) -> bool,
    ) -> Option<(FlowId, [usize; 2])> {
        let n = self.choices.len();
        let (first, tries) = match &mut self.policy {
            Policy::RoundRobin(next) => {
                let first = *next;
                (first, n)
            }
            Policy::SourceHash(ring) => (ring.index(flow.saddr), 1),
        };
        for k in 0..tries {
            let i = (first + k) % n;
            if let Policy::RoundRobin(next) = &mut self.policy {
                *next = (i + 1) % n;
            }
            let c = &mut self.choices[i];
            if let PatternRef::Own(p) = &mut c.pattern {
                if let Some(rw) = p.rewrite(flow, &taken) {
                    return Some((rw, c.outputs));
                }
            }
        }
        None
    }
}

/// Glibc's `random()` after `srandom(seed)` (the additive feedback generator of degree 31),
/// which Click's user-level `click_random` is: SourceIPHashMapper's ring must be Click's.
struct GlibcRandom {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRandom {
    fn new(seed: u32) -> GlibcRandom {
        let mut state = [0u32; 31];
        let mut word = if seed == 0 { 1 } else { seed as i32 };
        state[0] = word as u32;
        for s in state.iter_mut().skip(1) {
            // 16807 * word mod (2^31 - 1), by Schrage's method, as glibc does.
            let (hi, lo) = (word / 127_773, word % 127_773);
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *s = word as u32;
        }
        let mut r = GlibcRandom {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            r.next();
        }
        r
    }

    /// The next number, 0 to 2^31 - 1.
    fn next(&mut self) -> u32 {
        let v = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = v;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        v >> 1
    }
}

/// SourceIPHashMapper's consistent-hash ring (Click's `chash_t`): NNODES random points per
/// server, kept as Click's static balanced search tree, in level order.
#[derive(Debug)]
struct Ring {
    /// (point, server's rank among the distinct server IDs) in tree order.
    tree: Vec<(i32, usize)>,
}

impl Ring {
    /// The ring of servers `ids` with `nnodes` points each, drawn from Click's generator
    /// seeded with `seed` (every ID below the largest draws its points, present or not).
    fn new(ids: &[u16], nnodes: usize, seed: i32) -> Ring {
        let mut rng = GlibcRandom::new(seed as u32);
        let top = ids.iter().max().map_or(0, |&m| usize::from(m) + 1);
        let mut points = Vec::new();
        let mut rank = 0;
        for id in 0..top {
            let present = ids.iter().any(|&i| usize::from(i) == id);
            for _ in 0..nnodes {
                let point = rng.next() as i32;
                if present {
                    points.push((point, rank));
                }
            }
            rank += usize::from(present);
        }
        points.sort_by_key(|&(k, _)| k);
        Ring {
            tree: level_order(&points),
        }
    }

    /// The rank of the server whose point follows `saddr`'s hash (Click's: the first point
    /// at or above it, else the tree's root).
    fn index(&self, saddr: Ipv4Addr) -> usize {
        let mut h = u32::from_le_bytes(saddr.octets());
        h = h.wrapping_mul(((h & 0xff) << 24) | 1) % 0x7fff_ffff;
        let key = h as i32;
        let mut i = 0;
        let mut found = None;
        while let Some(&(k, rank)) = self.tree.get(i) {
            if key == k {
                return rank;
            } else if key > k {
                i = 2 * i + 2;
            } else {
                found = Some(rank);
                i = 2 * i + 1;
            }
        }
        found.or(self.tree.first().map(|&(_, r)| r)).unwrap_or(0)
    }
}

/// Sorted `arr` laid out as Click's balanced tree (children of `i` at `2i+1`, `2i+2`): the
/// in-order positions of a complete tree of the next power of two above its size, those past
/// the size folded onto the last level's odd positions.
fn level_order<T: Copy>(arr: &[T]) -> Vec<T> {
    let sz = arr.len();
    let n = (sz + 1).next_power_of_two();
    let f = 2 * sz.div_ceil(2) + 1 - 2 * ((n - 1 - sz) / 2);
    let mut out = Vec::with_capacity(sz);
    let (mut d, mut s) = (n, n / 2);
    while s > 0 && out.len() < sz {
        let mut x = s;
        while x < n && out.len() < sz {
            let from = if x < f { x } else { (x + f - 1) / 2 };
            out.push(arr[from - 1]);
            x += d;
        }
        d = s;
        s /= 2;
    }
    out
}

/// Parses `PATTERN FOUTPUT ROUTPUT` (or `NAME FOUTPUT ROUTPUT`), with Click's messages.
fn parse_choice(text: &str) -> Result<Choice, String> {
    match InputSpec::parse(&format!("pattern {text}"), usize::MAX, |_| false)? {
        InputSpec::Pattern(pattern, f, r) => Ok(Choice {
            pattern,
            outputs: [f, r],
        }),
        _ => Err("syntax error".into()),
    }
}

/// The most points per server SourceIPHashMapper accepts.
const MAX_NODES: usize = 4096;

/// A RoundRobinIPMapper or SourceIPHashMapper element.
pub struct IPMapper {
    class: MapperClass,
    shared: SharedMapper,
}

impl IPMapper {
    /// An unconfigured mapper of class `class`.
    pub fn new(class: MapperClass) -> IPMapper {
        IPMapper {
            class,
            shared: Arc::new(Mutex::new(Mapper {
                choices: Vec::new(),
                policy: Policy::RoundRobin(0),
            })),
        }
    }

    /// The state the rewriters using this mapper share.
    pub fn shared(&self) -> SharedMapper {
        self.shared.clone()
    }

    /// Checks that every pattern's outputs are below `noutputs` (a rewriter's, the mapper
    /// being called `name` there).
    pub fn check_outputs(&self, name: &str, noutputs: usize) -> Result<(), String> {
        let m = lock(&self.shared);
        match m
            .choices
            .iter()
            .position(|c| c.outputs.iter().any(|&o| o >= noutputs))
        {
            Some(i) => Err(format!("output port out of range in {name} pattern {i}")),
            None => Ok(()),
        }
    }

    /// SourceIPHashMapper's `NNODES SEED` and `PATTERN... FOUTPUT ROUTPUT ID` arguments: the
    /// policy, and the choices with their server IDs.
    fn configure_hash(args: &mut Args, raw: &[String]) -> Option<(Policy, Vec<Choice>)> {
        let params = split_words(raw.first()?);
        let [nnodes, seed] = params.as_slice() else {
            args.error("requires 2 config params: numnodes seed");
            return None;
        };
        let Some(nnodes) = nnodes.parse::<usize>().ok().filter(|&n| n > 0) else {
            args.error("number of nodes must be an integer");
            return None;
        };
        if nnodes > MAX_NODES {
            args.error(format!("number of nodes must be at most {MAX_NODES}"));
            return None;
        }
        let Ok(seed) = seed.parse::<i32>() else {
            args.error("hash seed must be an integer");
            return None;
        };
        let mut choices = Vec::new();
        let mut ids = Vec::new();
        for text in &raw[1..] {
            let mut words = split_words(text);
            let id = match words.pop().map(|w| w.parse::<u16>()) {
                Some(Ok(id)) if !words.is_empty() => id,
                _ => {
                    args.error("bad server ID in pattern spec");
                    continue;
                }
            };
            match parse_choice(&words.join(" ")) {
                Ok(c) => {
                    choices.push(c);
                    ids.push(id);
                }
                Err(e) => args.error(e),
            }
        }
        Some((Policy::SourceHash(Ring::new(&ids, nnodes, seed)), choices))
    }
}

impl Element for IPMapper {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let raw = args.take_raw();
        // SourceIPHashMapper's first argument is NNODES SEED.
        let least = 1 + usize::from(self.class == MapperClass::SourceHash);
        if raw.is_empty() && self.class == MapperClass::SourceHash {
            args.error("no hash seed given");
            return Err(());
        } else if raw.len() < least {
            args.error("no patterns given");
            return Err(());
        } else if raw.len() == least {
            cx.warning("only one pattern given");
        }
        let (policy, choices) = match self.class {
            MapperClass::RoundRobin => {
                let mut choices = Vec::new();
                for text in &raw {
                    match parse_choice(text) {
                        Ok(c) => choices.push(c),
                        Err(e) => args.error(e),
                    }
                }
                (Policy::RoundRobin(0), choices)
            }
            MapperClass::SourceHash => Self::configure_hash(args, &raw).ok_or(())?,
        };
        if !args.errors().is_empty() {
            return Err(());
        }
        *lock(&self.shared) = Mapper { choices, policy };
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let mut m = lock(&self.shared);
        for (i, c) in m.choices.iter_mut().enumerate() {
            resolve_pattern(&mut c.pattern, cx).map_err(|e| format!("pattern {i}: {e}"))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glibc_random_sequence() {
        // What glibc's random() returns after srandom(SEED).
        let mut r = GlibcRandom::new(1);
        assert_eq!(
            [r.next(), r.next(), r.next()],
            [1804289383, 846930886, 1681692777]
        );
        assert_eq!(GlibcRandom::new(0x1234_5678).next(), 457715892);
        assert_eq!(GlibcRandom::new(-5i32 as u32).next(), 1469203335);
    }

    #[test]
    fn ring_picks_the_servers_clicks_ring_picks() {
        // Ranks Click's chash_t (3 servers, 5 points each, seed 42) gives these sources.
        let ring = Ring::new(&[0, 1, 2], 5, 42);
        let want = [
            1, 2, 1, 0, 1, 1, 1, 1, 1, 0, 0, 2, 2, 1, 0, 2, 2, 2, 1, 1, 2, 1, 0, 1,
        ];
        for (i, &w) in want.iter().enumerate() {
            let a = Ipv4Addr::new(
                198,
                18 + (i % 2) as u8,
                (i * 37 % 256) as u8,
                (i * 101 % 256) as u8,
            );
            assert_eq!(ring.index(a), w, "{a}");
        }
    }

    #[test]
    fn level_order_is_a_search_tree() {
        for sz in 1..40 {
            let arr: Vec<usize> = (0..sz).collect();
            let t = level_order(&arr);
            let mut seen = t.clone();
            seen.sort();
            assert_eq!(seen, arr, "size {sz}");
            for i in 0..sz {
                if 2 * i + 1 < sz {
                    assert!(t[2 * i + 1] < t[i], "size {sz}");
                }
                if 2 * i + 2 < sz {
                    assert!(t[2 * i + 2] > t[i], "size {sz}");
                }
            }
        }
    }
}
