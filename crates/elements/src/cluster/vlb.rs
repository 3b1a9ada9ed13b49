//! Direct Valiant load balancing over a full mesh, with flowlets (RouteBricks §3.2, §6.1).
//!
//! [`Vlb`] is the decision procedure of one cluster node, free of packets and clocks so that
//! the DirectVLB element and the cluster simulation (`sluice cluster sim`) run the same code.
//!
//! Phase 1 (a packet entering the cluster at this node, for output node D): up to the direct
//! share (R/N) of traffic to D goes straight to D; the excess goes to an intermediate node
//! chosen at random among those that can reach D. Phase 2 (a packet that arrived from another
//! node): it goes to its output node directly. Each internal link is metered against its
//! capacity; a link whose meter has run dry is "full".
//!
//! With flowlets, packets of one flow arriving within δ of the previous one keep the path of
//! their flowlet (direct, or through the same intermediate) unless that path's link is full;
//! then the packet takes a fresh phase-1 decision, which the flowlet keeps from then on. The
//! flowlet table has a fixed number of slots indexed by the flow hash; an entry older than δ
//! is free, so the state is bounded and expires by itself.

/// A token bucket in bytes: `rate` bytes per second, at most `burst` banked. Tokens may go
/// negative (a packet sent on a full path is owed), so a long overload stays visible.
#[derive(Clone, Debug)]
pub struct Bucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last_ns: i64,
}

impl Bucket {
    /// A full bucket.
    pub fn new(rate: f64, burst: f64) -> Bucket {
        Bucket {
            rate,
            burst,
            tokens: burst,
            last_ns: i64::MIN,
        }
    }

    fn refill(&mut self, now_ns: i64) {
        if self.last_ns == i64::MIN {
            self.last_ns = now_ns;
            return;
        }
        let dt = (now_ns - self.last_ns).max(0) as f64 * 1e-9;
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
        self.last_ns = self.last_ns.max(now_ns);
    }

    /// Whether `bytes` fit now.
    pub fn has(&mut self, bytes: u32, now_ns: i64) -> bool {
        self.refill(now_ns);
        self.tokens >= bytes as f64
    }

    /// Takes `bytes` (the balance may go negative).
    pub fn take(&mut self, bytes: u32, now_ns: i64) {
        self.refill(now_ns);
        self.tokens -= bytes as f64;
    }
}

/// Settings of one node's balancer.
#[derive(Clone, Debug)]
pub struct VlbConfig {
    /// This node's index, 0-based.
    pub node: usize,
    /// Number of nodes in the mesh (at most [`MAX_NODES`]).
    pub nodes: usize,
    /// Bytes per second sent directly to each output node before spreading (R/N).
    pub direct_rate: f64,
    /// Capacity of each internal link, bytes per second (2R/N in a VLB mesh).
    pub link_rate: f64,
    /// Bucket depth in bytes, for the direct shares and the links.
    pub burst: f64,
    /// Flowlet gap δ in nanoseconds; `None`: every packet is balanced on its own.
    pub flowlet_ns: Option<i64>,
    /// Slots in the flowlet table (rounded up to a power of two).
    pub flowlet_slots: usize,
}

/// The largest mesh: reachability is kept as one 64-bit mask per node.
pub const MAX_NODES: usize = 64;

/// Counters of one node's decisions.
#[derive(Clone, Debug, Default)]
pub struct VlbStats {
    /// Phase-1 packets sent straight to their output node, by output node.
    pub direct: Vec<u64>,
    /// Phase-1 packets sent through an intermediate, by intermediate node.
    pub via: Vec<u64>,
    /// Phase-2 packets forwarded to their output node, by output node.
    pub forwarded: Vec<u64>,
    /// Bytes sent on each link (all phases), by peer node.
    pub link_bytes: Vec<u64>,
    /// Packets sent on each link (all phases), by peer node.
    pub link_packets: Vec<u64>,
    /// Packets that kept their flowlet's path.
    pub flowlet_hits: u64,
    /// Flowlets started (no live entry for the flow).
    pub flowlet_new: u64,
    /// Packets whose flowlet's path was full or down and that took a new path.
    pub flowlet_moved: u64,
    /// Packets with no live path to their output node.
    pub unreachable: u64,
}

#[derive(Clone, Copy, Default)]
struct Flowlet {
    hash: u64,
    last_ns: i64,
    dst: u16,
    hop: u16,
    used: bool,
}

/// One node's Direct VLB state: direct-share buckets per output node, a meter per link,
/// link liveness, what each peer reaches, and the flowlet table.
pub struct Vlb {
    cfg: VlbConfig,
    direct: Vec<Bucket>,
    links: Vec<Bucket>,
    alive: Vec<bool>,
    reach: Vec<u64>,
    flowlets: Vec<Flowlet>,
    candidates: Vec<usize>,
    /// Decision counters.
    pub stats: VlbStats,
}

impl Vlb {
    /// A balancer with every link up and every peer reaching every node.
    pub fn new(cfg: VlbConfig) -> Vlb {
        assert!(cfg.nodes >= 1 && cfg.nodes <= MAX_NODES && cfg.node < cfg.nodes);
        let n = cfg.nodes;
        let slots = if cfg.flowlet_ns.is_some() {
            cfg.flowlet_slots.max(1).next_power_of_two()
        } else {
            0
        };
        let all = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        Vlb {
            direct: (0..n)
                .map(|_| Bucket::new(cfg.direct_rate, cfg.burst))
                .collect(),
            links: (0..n)
                .map(|_| Bucket::new(cfg.link_rate, cfg.burst))
                .collect(),
            alive: vec![true; n],
            reach: vec![all; n],
            flowlets: vec![Flowlet::default(); slots],
            candidates: Vec::with_capacity(n),
            stats: VlbStats {
                direct: vec![0; n],
                via: vec![0; n],
                forwarded: vec![0; n],
                link_bytes: vec![0; n],
                link_packets: vec![0; n],
                ..VlbStats::default()
            },
            cfg,
        }
    }

    /// The settings.
    pub fn config(&self) -> &VlbConfig {
        &self.cfg
    }

    /// Marks the link to `peer` up or down.
    pub fn set_link(&mut self, peer: usize, up: bool) {
        self.alive[peer] = up;
    }

    /// Whether the link to `peer` is up.
    pub fn link_up(&self, peer: usize) -> bool {
        self.alive[peer]
    }

    /// Records which nodes `peer` reaches over its own links (bit i: node i).
    pub fn set_reach(&mut self, peer: usize, mask: u64) {
        self.reach[peer] = mask;
    }

    /// The nodes this node reaches directly (bit i: node i; its own bit set).
    pub fn own_reach(&self) -> u64 {
        let mut m = 1u64 << self.cfg.node;
        for (i, &up) in self.alive.iter().enumerate() {
            if up {
                m |= 1 << i;
            }
        }
        m
    }

    /// Phase 1: the next node for a packet of `bytes` entering here for output node `dst`,
    /// of flow `flow` (a hash of its 5-tuple; only flowlets use it), at `now_ns`; `rand`
    /// gives uniform random numbers and is called only when the packet is spread. `Some(dst)` is the direct path, `Some(i)` another node the intermediate,
    /// `None` that no live path leads to `dst` (counted as unreachable).
    pub fn choose(
        &mut self,
        dst: usize,
        flow: u64,
        bytes: u32,
        now_ns: i64,
        rand: &mut impl FnMut() -> u32,
    ) -> Option<usize> {
        if dst == self.cfg.node {
            return Some(dst);
        }
        let hop = match self.cfg.flowlet_ns {
            Some(delta) => self.choose_flowlet(dst, flow, bytes, now_ns, rand, delta),
            None => self.decide(dst, bytes, now_ns, rand),
        };
        match hop {
            Some(h) => {
                if h == dst {
                    self.stats.direct[dst] += 1;
                } else {
                    self.stats.via[h] += 1;
                }
                self.charge(h, bytes, now_ns);
            }
            None => self.stats.unreachable += 1,
        }
        hop
    }

    /// Phase 2: a packet that arrived from another node, for output node `dst`. Returns
    /// `dst` when its link is up (and charges the link), `None` otherwise.
    pub fn forward(&mut self, dst: usize, bytes: u32, now_ns: i64) -> Option<usize> {
        if dst == self.cfg.node {
            return Some(dst);
        }
        if !self.alive[dst] {
            self.stats.unreachable += 1;
            return None;
        }
        self.stats.forwarded[dst] += 1;
        self.charge(dst, bytes, now_ns);
        Some(dst)
    }

    fn charge(&mut self, hop: usize, bytes: u32, now_ns: i64) {
        self.links[hop].take(bytes, now_ns);
        self.stats.link_bytes[hop] += bytes as u64;
        self.stats.link_packets[hop] += 1;
    }

    /// Whether `hop` is a usable path to `dst` now (its link up, and as an intermediate,
    /// reaching `dst`).
    fn usable(&self, hop: usize, dst: usize) -> bool {
        hop != self.cfg.node && self.alive[hop] && (hop == dst || self.reach[hop] & (1 << dst) != 0)
    }

    fn choose_flowlet(
        &mut self,
        dst: usize,
        flow: u64,
        bytes: u32,
        now_ns: i64,
        rand: &mut impl FnMut() -> u32,
        delta: i64,
    ) -> Option<usize> {
        let slot = (flow as usize) & (self.flowlets.len() - 1);
        let f = self.flowlets[slot];
        let live = f.used && f.hash == flow && f.dst as usize == dst && now_ns - f.last_ns <= delta;
        if live {
            let hop = f.hop as usize;
            if self.usable(hop, dst) && self.links[hop].has(bytes, now_ns) {
                self.stats.flowlet_hits += 1;
                if hop == dst {
                    self.direct[dst].take(bytes, now_ns);
                }
                self.flowlets[slot].last_ns = now_ns;
                return Some(hop);
            }
            self.stats.flowlet_moved += 1;
        } else {
            self.stats.flowlet_new += 1;
        }
        let hop = self.decide(dst, bytes, now_ns, rand)?;
        self.flowlets[slot] = Flowlet {
            hash: flow,
            last_ns: now_ns,
            dst: dst as u16,
            hop: hop as u16,
            used: true,
        };
        Some(hop)
    }

    /// A fresh Direct VLB decision: direct within the direct share (when the direct link has
    /// room), else a random intermediate, preferring one whose link has room; direct only
    /// when no intermediate reaches the output node.
    fn decide(
        &mut self,
        dst: usize,
        bytes: u32,
        now_ns: i64,
        rand: &mut impl FnMut() -> u32,
    ) -> Option<usize> {
        let direct_ok = self.usable(dst, dst);
        if direct_ok && self.direct[dst].has(bytes, now_ns) && self.links[dst].has(bytes, now_ns) {
            self.direct[dst].take(bytes, now_ns);
            return Some(dst);
        }
        self.candidates.clear();
        for i in 0..self.cfg.nodes {
            if i != dst && self.usable(i, dst) {
                self.candidates.push(i);
            }
        }
        if self.candidates.is_empty() {
            return direct_ok.then_some(dst);
        }
        let n = self.candidates.len();
        let start = ((rand() as u64 * n as u64) >> 32) as usize;
        for k in 0..n {
            let c = self.candidates[(start + k) % n];
            if self.links[c].has(bytes, now_ns) {
                return Some(c);
            }
        }
        Some(self.candidates[start])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(flowlet_ns: Option<i64>) -> VlbConfig {
        VlbConfig {
            node: 0,
            nodes: 4,
            direct_rate: 1000.0,
            link_rate: 2000.0,
            burst: 1000.0,
            flowlet_ns,
            flowlet_slots: 1024,
        }
    }

    /// A deterministic sequence of uniform numbers.
    fn rands() -> impl FnMut() -> u32 {
        let mut s = 0x1234_5678u64;
        move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 32) as u32
        }
    }

    #[test]
    fn direct_share_then_spread() {
        let mut v = Vlb::new(cfg(None));
        let mut r = rands();
        // 10 s at 3000 B/s to node 3: 1000 B/s direct, the rest over nodes 1 and 2.
        let mut t = 0;
        for _ in 0..30_000 {
            v.choose(3, 7, 1, t, &mut r);
            t += 333_333;
        }
        let direct = v.stats.link_bytes[3] as f64;
        let via1 = v.stats.link_bytes[1] as f64;
        let via2 = v.stats.link_bytes[2] as f64;
        assert!((direct - 11_000.0).abs() < 500.0, "direct {direct}");
        assert!((via1 - via2).abs() < 0.1 * via1, "via {via1} {via2}");
        assert_eq!(v.stats.via[0], 0);
        assert_eq!(v.stats.unreachable, 0);
    }

    #[test]
    fn flowlet_keeps_its_path_within_delta() {
        let mut v = Vlb::new(cfg(Some(100_000_000)));
        let mut r = rands();
        // Exhaust the direct share, then a new flow goes via an intermediate and stays there.
        v.choose(3, 1, 1000, 0, &mut r);
        let first = v.choose(3, 2, 100, 1_000, &mut r).unwrap();
        assert_ne!(first, 3);
        for k in 1..5 {
            assert_eq!(
                v.choose(3, 2, 100, 1_000 + k * 10_000_000, &mut r),
                Some(first)
            );
        }
        assert_eq!(v.stats.flowlet_hits, 4);
        assert_eq!(v.stats.flowlet_new, 2);
    }

    #[test]
    fn flowlet_expires_after_delta() {
        let mut v = Vlb::new(cfg(Some(100_000_000)));
        let mut r = rands();
        v.choose(3, 9, 100, 0, &mut r);
        v.choose(3, 9, 100, 200_000_000, &mut r);
        assert_eq!(v.stats.flowlet_new, 2);
        assert_eq!(v.stats.flowlet_hits, 0);
    }

    #[test]
    fn flowlet_moves_off_a_full_link() {
        let mut v = Vlb::new(cfg(Some(1_000_000_000)));
        let mut r = rands();
        let hop = v.choose(3, 5, 500, 0, &mut r).unwrap();
        assert_eq!(hop, 3);
        // Fill the direct link (2000 B/s, 1000 B burst) from elsewhere.
        v.forward(3, 1500, 0);
        let next = v.choose(3, 5, 500, 1, &mut r).unwrap();
        assert_ne!(next, 3);
        assert_eq!(v.stats.flowlet_moved, 1);
        // The flowlet now keeps its new path.
        assert_eq!(v.choose(3, 5, 10, 2, &mut r), Some(next));
    }

    #[test]
    fn dead_links_and_unreachable_nodes() {
        let mut v = Vlb::new(cfg(None));
        let mut r = rands();
        v.set_link(3, false);
        for t in 0..100 {
            let h = v.choose(3, t, 100, t as i64, &mut r).unwrap();
            assert!(h == 1 || h == 2, "{h}");
        }
        // Node 1 no longer reaches 3: only node 2 carries traffic to 3.
        v.set_reach(1, 0b0011);
        for t in 0..100 {
            assert_eq!(v.choose(3, t, 100, 1000 + t as i64, &mut r), Some(2));
        }
        v.set_link(2, false);
        assert_eq!(v.choose(3, 1, 100, 2000, &mut r), None);
        assert_eq!(v.stats.unreachable, 1);
        assert_eq!(v.forward(3, 100, 2000), None);
        assert_eq!(v.own_reach(), 0b0011);
    }
}
