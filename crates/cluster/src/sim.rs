//! A packet-level discrete-event simulation of a Direct VLB full mesh (`sluice cluster sim`).
//!
//! Every node runs the real decision procedure of the DirectVLB element
//! ([`sluice_elements::cluster::vlb::Vlb`]): phase 1 (`choose`) where a packet enters the
//! cluster, phase 2 (`forward`) at an intermediate. Around it the simulation models:
//!
//! * **Ports.** Each node has `ports_per_node` external ports of rate R. A port's input line
//!   and its output are FIFOs at R. With more than [`MAX_NODES`] (64) ports, several ports share
//!   a node: 1024 ports are 64 nodes of 16 ports, each node an external rate of 16R, so the
//!   direct share of a node pair is 16R/64 and the internal links are 2·16R/64 = R/2. This is a
//!   1024-port router built from 64 servers, faithful to what [`Vlb`] decides there; a mesh of
//!   1024 single-port servers would need [`Vlb`] to keep reachability in more than one `u64`
//!   per node (and exceeds any server's fanout, which the paper answers with a butterfly).
//! * **Internal links.** One per ordered node pair, capacity 2·(node rate)/N unless set; a
//!   bounded FIFO (by default 2 ms at its rate; drops counted), serialization
//!   `bytes·8/capacity`, then a propagation delay. The VLB meters (direct shares and links)
//!   are by default 1 ms deep at the link rate: shallower ones move flowlets off their path
//!   more often, deeper ones let longer queues build before they do (either reorders).
//! * **Nodes.** A packet waits a processing delay (a base plus uniform jitter) at each node it
//!   crosses, in one of several FIFO "cores" chosen by flow hash, so a flow keeps its order
//!   within a node (as with RB4's per-flow receive queues) while other flows may pass it.
//!   Paths of two and three nodes thus differ in latency, which is what reorders packets.
//! * **Traffic.** Flows arrive at each active input port as a Poisson process. A flow sends
//!   a heavy-tailed number of flowlets (bursts) of a heavy-tailed number of packets, each
//!   packet sent at the flow's own peak rate (log-uniform between two fractions of R), with
//!   Pareto gaps between flowlets (by default 5 ms to 2 s, α = 1: 5 % longer than 100 ms).
//!   Packet sizes follow the simple IMIX (64, 594 and 1518 bytes, 7:4:1). Flows start a
//!   warm-up period before the measured window, so that the window sees steady traffic, and
//!   the network runs a settling period before it (queues fill, the VLB buckets spend their
//!   initial allowance); only packets sent in the window are counted.
//! * **Matrices.** `uniform`: each input spreads over all outputs. `one-to-one`: only port 0
//!   sends, all of it to the last port (node 0 to node N−1), as in RB4's reordering
//!   experiment. `hotspot`: each port sends half its traffic to one partner port on the next
//!   node and spreads the rest uniformly (each output still receives the load it would under
//!   `uniform`, so the matrix stays admissible).
//!
//! Reports: the load of every internal link against the Direct VLB ideal (a node pair's rate
//! up to the direct share goes straight, the excess is split evenly over the N − 2
//! intermediates on both hops; see [`vlb_ideal`]), for the nominal matrix and for the traffic
//! actually offered, drops, latency, and reordering with [`crate::reorder::ReorderMeter`].
//! Runs are deterministic for a seed, and the traffic does not depend on the balancing, so
//! runs with and without flowlets see the same packets.

use std::fmt::Write as _;
use std::time::Instant;

use sluice_elements::cluster::vlb::{Vlb, VlbConfig, MAX_NODES};

use crate::reorder::{json_f64, ReorderMeter, ReorderStats};

/// Usage of `sluice cluster sim`.
pub const USAGE: &str = "\
Usage: sluice cluster sim [OPTIONS]

Packet-level simulation of an N-node Direct VLB full mesh, with the DirectVLB element's own
balancing code at every node. Reports internal link loads against the VLB ideal, drops,
latency and reordering (RouteBricks' metric: see `sluice cluster reorder --help`).

Options:
  --nodes N          nodes in the mesh, 2 to 64 [4]
  --ports P          external ports; above 64 they are grouped on 64 nodes or fewer
                     (1024 ports: 64 nodes of 16 ports) [one per node]
  --rate R           external port rate, bits/s (k, M, G suffixes) [10G]
  --link-rate L      internal link capacity [2 x node rate / N]
  --flowlets LIST    flowlet gap(s) δ, one run each, comma-separated: 100ms, 50us, 0.1
                     (seconds) or off [100ms,off]
  --no-flowlets      the same as --flowlets off
  --matrix M         uniform | one-to-one | hotspot [uniform]
  --load F           offered load of each sending port, fraction of R [0.9]
  --duration S       simulated time measured [about 4 million packets, at most 1 s]
  --warmup S         flows start this long before the measured window [0.5 s or less]
  --settle S         the network runs this long before the measured window [2ms, at most
                     half the duration]
  --seed X           random seed [1]
  --proc T           processing delay per node [5us]
  --jitter T         extra uniform random processing delay per node [10us]
  --cores C          processing FIFOs per node; a flow keeps to one [8]
  --prop T           propagation delay of an internal link [1us]
  --queue Q          what each link, input and output FIFO holds: bytes (512k) or a time
                     at the FIFO's rate (2ms) [2ms]
  --burst B          depth of the VLB direct-share and link buckets: bytes (64k) or a time
                     at the link rate (1ms) [1ms]
  --slots N          flowlet table slots per node [from the expected flow count]
  --links            list every internal link
  --json             one JSON object instead of text
  -h, --help         this text
";

/// How the traffic is spread over outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    /// Every input port spreads its traffic evenly over all output ports.
    Uniform,
    /// Only port 0 sends, all of it to the last port (node 0 to node N−1).
    OneToOne,
    /// Each port sends [`Traffic::hot_share`] of its traffic to the same port of the next
    /// node, the rest uniformly.
    Hotspot,
}

impl Matrix {
    /// The matrix named on the command line.
    pub fn parse(s: &str) -> Option<Matrix> {
        match s {
            "uniform" => Some(Matrix::Uniform),
            "one-to-one" | "onetoone" | "1to1" => Some(Matrix::OneToOne),
            "hotspot" => Some(Matrix::Hotspot),
            _ => None,
        }
    }

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Matrix::Uniform => "uniform",
            Matrix::OneToOne => "one-to-one",
            Matrix::Hotspot => "hotspot",
        }
    }
}

/// The traffic model (see the module documentation).
#[derive(Clone, Debug)]
pub struct Traffic {
    /// Slowest per-flow sending rate within a flowlet, fraction of R.
    pub peak_min: f64,
    /// Fastest per-flow sending rate within a flowlet, fraction of R.
    pub peak_max: f64,
    /// Tail index of the number of flowlets per flow (P(n ≥ k) = k^−α, k ≤ cap).
    pub flowlets_alpha: f64,
    /// Most flowlets per flow.
    pub flowlets_cap: u32,
    /// Tail index of the number of packets per flowlet.
    pub packets_alpha: f64,
    /// Most packets per flowlet.
    pub packets_cap: u32,
    /// Shortest gap between flowlets, seconds (the Pareto scale).
    pub gap_min_s: f64,
    /// Tail index of the gaps.
    pub gap_alpha: f64,
    /// Longest gap, seconds.
    pub gap_max_s: f64,
    /// Packet sizes in bytes with their weights.
    pub sizes: Vec<(u32, u32)>,
    /// Share of a port's traffic to its partner under [`Matrix::Hotspot`].
    pub hot_share: f64,
}

impl Default for Traffic {
    fn default() -> Self {
        Traffic {
            peak_min: 0.001,
            peak_max: 0.1,
            flowlets_alpha: 1.2,
            flowlets_cap: 100,
            packets_alpha: 1.2,
            packets_cap: 200,
            gap_min_s: 0.005,
            gap_alpha: 1.0,
            gap_max_s: 2.0,
            sizes: vec![(64, 7), (594, 4), (1518, 1)],
            hot_share: 0.5,
        }
    }
}

impl Traffic {
    /// Mean packet size in bytes.
    pub fn mean_size(&self) -> f64 {
        let w: u32 = self.sizes.iter().map(|s| s.1).sum();
        self.sizes
            .iter()
            .map(|&(b, n)| b as f64 * n as f64)
            .sum::<f64>()
            / w as f64
    }

    /// Mean flowlets per flow.
    pub fn mean_flowlets(&self) -> f64 {
        (1..=self.flowlets_cap)
            .map(|k| (k as f64).powf(-self.flowlets_alpha))
            .sum()
    }

    /// Mean packets per flowlet.
    pub fn mean_packets(&self) -> f64 {
        (1..=self.packets_cap)
            .map(|k| (k as f64).powf(-self.packets_alpha))
            .sum()
    }

    /// Mean bytes per flow.
    pub fn mean_flow_bytes(&self) -> f64 {
        self.mean_flowlets() * self.mean_packets() * self.mean_size()
    }
}

/// Settings of one simulation run.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Nodes in the full mesh (2 to [`MAX_NODES`]).
    pub nodes: usize,
    /// External ports per node.
    pub ports_per_node: usize,
    /// External port rate R, bits per second.
    pub rate_bps: f64,
    /// Internal link capacity, bits per second; 0: 2·(node rate)/N.
    pub link_bps: f64,
    /// Flowlet gap δ in nanoseconds; `None`: per-packet balancing.
    pub flowlet_ns: Option<i64>,
    /// The traffic matrix.
    pub matrix: Matrix,
    /// Offered load of each sending port, fraction of R.
    pub load: f64,
    /// Measured simulated time, seconds.
    pub duration_s: f64,
    /// Flows start this long before the measured window, seconds.
    pub warmup_s: f64,
    /// The network runs this long before the measured window (filling queues, draining the
    /// VLB buckets' initial allowance); its packets are not counted, seconds.
    pub settle_s: f64,
    /// Random seed.
    pub seed: u64,
    /// Processing delay per node, nanoseconds.
    pub proc_ns: f64,
    /// Extra uniform random processing delay per node, nanoseconds.
    pub jitter_ns: f64,
    /// Processing FIFOs per node.
    pub cores: usize,
    /// Propagation delay of an internal link, nanoseconds.
    pub prop_ns: f64,
    /// Bytes every link, input and output FIFO holds; 0: `queue_s` at each FIFO's rate.
    pub queue_bytes: u64,
    /// How long a FIFO's queue lasts at its rate, seconds (when `queue_bytes` is 0).
    pub queue_s: f64,
    /// Depth of the VLB buckets, bytes; 0: `burst_s` at the link rate.
    pub burst_bytes: f64,
    /// Depth of the VLB buckets as time at the link rate, seconds (when `burst_bytes` is 0).
    pub burst_s: f64,
    /// Flowlet table slots per node; 0: twice the expected concurrent flows of the node.
    pub flowlet_slots: usize,
    /// The traffic model.
    pub traffic: Traffic,
}

impl SimConfig {
    /// The defaults for a mesh of `nodes` single-port nodes (duration and warm-up still to
    /// choose: see [`SimConfig::auto_times`]).
    pub fn new(nodes: usize) -> SimConfig {
        SimConfig {
            nodes,
            ports_per_node: 1,
            rate_bps: 10e9,
            link_bps: 0.0,
            flowlet_ns: Some(100_000_000),
            matrix: Matrix::Uniform,
            load: 0.9,
            duration_s: 0.1,
            warmup_s: 0.5,
            settle_s: 2e-3,
            seed: 1,
            proc_ns: 5_000.0,
            jitter_ns: 10_000.0,
            cores: 8,
            prop_ns: 1_000.0,
            queue_bytes: 0,
            queue_s: 2e-3,
            burst_bytes: 0.0,
            burst_s: 1e-3,
            flowlet_slots: 0,
            traffic: Traffic::default(),
        }
    }

    /// All external ports.
    pub fn ports(&self) -> usize {
        self.nodes * self.ports_per_node
    }

    /// Ports that send traffic.
    pub fn sending_ports(&self) -> usize {
        match self.matrix {
            Matrix::OneToOne => 1,
            _ => self.ports(),
        }
    }

    /// The internal link capacity in bits per second.
    pub fn link_capacity(&self) -> f64 {
        if self.link_bps > 0.0 {
            self.link_bps
        } else {
            2.0 * self.node_rate() / self.nodes as f64
        }
    }

    /// The depth of the VLB buckets in bytes: `burst_bytes`, or `burst_s` at the link rate
    /// (two full-size frames at least).
    pub fn burst(&self) -> f64 {
        if self.burst_bytes > 0.0 {
            self.burst_bytes
        } else {
            (self.link_capacity() / 8.0 * self.burst_s).max(3036.0)
        }
    }

    /// The bytes a FIFO of rate `bps` holds: `queue_bytes`, or `queue_s` at that rate (two
    /// full-size frames at least).
    pub fn queue(&self, bps: f64) -> f64 {
        if self.queue_bytes > 0 {
            self.queue_bytes as f64
        } else {
            (bps / 8.0 * self.queue_s).max(3036.0)
        }
    }

    /// A node's external rate (all its ports), bits per second.
    pub fn node_rate(&self) -> f64 {
        self.rate_bps * self.ports_per_node as f64
    }

    /// The Direct VLB share of each node pair, bits per second: node rate / N.
    pub fn direct_rate(&self) -> f64 {
        self.node_rate() / self.nodes as f64
    }

    /// Expected packets per second offered to the cluster.
    pub fn packet_rate(&self) -> f64 {
        self.sending_ports() as f64 * self.load * self.rate_bps / 8.0 / self.traffic.mean_size()
    }

    /// Expected new flows per second at one sending port (in steady state).
    pub fn flow_rate(&self) -> f64 {
        self.load * self.rate_bps / 8.0 / self.traffic.mean_flow_bytes()
    }

    /// Chooses the duration (about `packets` packets, 1 ms to 1 s) and the warm-up (0.5 s,
    /// less if more than 5 million flows would start in it).
    pub fn auto_times(&mut self, duration: bool, warmup: bool, packets: f64) {
        if duration {
            self.duration_s = (packets / self.packet_rate()).clamp(0.001, 1.0);
        }
        if warmup {
            let flows = self.flow_rate() * self.sending_ports() as f64;
            self.warmup_s = (5e6 / flows).min(0.5);
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.nodes < 2 || self.nodes > MAX_NODES {
            return Err(format!(
                "{} nodes: a mesh has 2 to {} nodes (use --ports for more ports)",
                self.nodes, MAX_NODES
            ));
        }
        let pos = |x: f64| x.is_finite() && x > 0.0;
        if self.ports_per_node == 0 || !pos(self.rate_bps) || !pos(self.link_capacity()) {
            return Err("ports and rates must be positive".into());
        }
        if !pos(self.load) || self.load > 1.0 {
            return Err(format!("load {} is not in (0, 1]", self.load));
        }
        if !pos(self.duration_s)
            || self.duration_s > 1e4
            || !(0.0..=1e4).contains(&self.warmup_s)
            || !(0.0..=1e4).contains(&self.settle_s)
        {
            return Err("duration must be positive, warm-up and settling not negative".into());
        }
        let t = &self.traffic;
        if self.cores == 0
            || self.proc_ns < 0.0
            || self.jitter_ns < 0.0
            || self.prop_ns < 0.0
            || !(pos(t.peak_min) && t.peak_min <= t.peak_max)
            || !(pos(t.gap_min_s) && t.gap_min_s <= t.gap_max_s)
            || t.sizes.is_empty()
            || t.sizes.iter().any(|s| s.0 == 0 || s.0 > 65535)
            || t.sizes.iter().map(|s| s.1).sum::<u32>() == 0
            || t.flowlets_cap == 0
            || t.packets_cap == 0
        {
            return Err("bad processing or traffic settings".into());
        }
        Ok(())
    }
}

/// The Direct VLB ideal: given the rate of every node pair (`pair[s·n + d]`, any unit),
/// the load of every internal link (`[a·n + b]`, same unit). Up to `direct` of a pair's
/// rate goes straight to its output node; the excess is split evenly over the n − 2 other
/// nodes, loading the link from the input to each of them and from each of them to the
/// output. With two nodes everything goes straight.
pub fn vlb_ideal(n: usize, direct: f64, pair: &[f64]) -> Vec<f64> {
    let mut link = vec![0.0; n * n];
    for s in 0..n {
        for d in 0..n {
            let r = pair[s * n + d];
            if s == d || r <= 0.0 {
                continue;
            }
            if n <= 2 {
                link[s * n + d] += r;
                continue;
            }
            link[s * n + d] += r.min(direct);
            let each = (r - direct).max(0.0) / (n - 2) as f64;
            if each > 0.0 {
                for k in (0..n).filter(|&k| k != s && k != d) {
                    link[s * n + k] += each;
                    link[k * n + d] += each;
                }
            }
        }
    }
    link
}

/// The nominal node-pair rates of a configuration, bits per second (`[s·n + d]`).
pub fn nominal_pairs(cfg: &SimConfig) -> Vec<f64> {
    let n = cfg.nodes;
    let k = cfg.ports_per_node as f64;
    let port = cfg.load * cfg.rate_bps;
    let mut pair = vec![0.0; n * n];
    match cfg.matrix {
        Matrix::Uniform => pair.iter_mut().for_each(|p| *p = k * port / n as f64),
        Matrix::OneToOne => pair[n - 1] = port,
        Matrix::Hotspot => {
            let h = cfg.traffic.hot_share;
            for s in 0..n {
                for d in 0..n {
                    pair[s * n + d] = k * (1.0 - h) * port / n as f64;
                }
                pair[s * n + (s + 1) % n] += k * h * port;
            }
        }
    }
    pair
}

/// The measured load of one internal link.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinkLoad {
    /// Sending node.
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// Bytes sent on it (of packets offered in the measured window).
    pub bytes: u64,
    /// Bits per second over the window.
    pub bps: f64,
    /// `bps` over the link capacity.
    pub util: f64,
    /// The VLB ideal for the nominal matrix, bits per second.
    pub ideal_bps: f64,
    /// The VLB ideal for the node-pair traffic actually offered, bits per second.
    pub offered_ideal_bps: f64,
}

/// Deviation of measured link loads from an ideal.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Deviation {
    /// Largest |measured − ideal| / ideal over links with a positive ideal.
    pub max: f64,
    /// Mean of the same.
    pub mean: f64,
    /// Links with a positive ideal.
    pub links: usize,
    /// Largest load on a link whose ideal is zero, fraction of its capacity.
    pub stray: f64,
}

impl Deviation {
    fn of(links: &[LinkLoad], cap: f64, ideal: impl Fn(&LinkLoad) -> f64) -> Deviation {
        let mut d = Deviation::default();
        let mut sum = 0.0;
        for l in links {
            let i = ideal(l);
            if i > 1e-9 * cap {
                let r = (l.bps - i).abs() / i;
                d.max = d.max.max(r);
                sum += r;
                d.links += 1;
            } else {
                d.stray = d.stray.max(l.bps / cap);
            }
        }
        if d.links > 0 {
            d.mean = sum / d.links as f64;
        }
        d
    }
}

/// The outcome of one run.
#[derive(Clone, Debug, Default)]
pub struct SimReport {
    /// The flowlet gap of the run (`None`: per packet).
    pub flowlet_ns: Option<i64>,
    /// Measured simulated time, seconds.
    pub duration_s: f64,
    /// Warm-up, seconds.
    pub warmup_s: f64,
    /// Flows that sent in the window.
    pub flows: u64,
    /// Packets offered in the window (entering the input lines).
    pub packets: u64,
    /// Bytes offered.
    pub bytes: u64,
    /// Offered load per sending port, fraction of R.
    pub offered_load: f64,
    /// Packets that left by an output port.
    pub delivered: u64,
    /// Packets dropped at a full input line.
    pub dropped_input: u64,
    /// Packets dropped at a full internal link.
    pub dropped_link: u64,
    /// Packets dropped at a full output port.
    pub dropped_output: u64,
    /// Packets with no path to their output node.
    pub unreachable: u64,
    /// Mean latency from entering the input line to leaving the output port, microseconds.
    pub latency_mean_us: f64,
    /// Largest latency, microseconds.
    pub latency_max_us: f64,
    /// Phase-1 packets sent straight to their output node.
    pub direct: u64,
    /// Phase-1 packets sent through an intermediate.
    pub via: u64,
    /// Packets that kept their flowlet's path.
    pub flowlet_hits: u64,
    /// Flowlets started.
    pub flowlet_new: u64,
    /// Packets moved off their flowlet's full path.
    pub flowlet_moved: u64,
    /// Internal link capacity, bits per second.
    pub link_capacity_bps: f64,
    /// Flowlet table slots of the busiest node (0 without flowlets).
    pub flowlet_slots: usize,
    /// Every internal link (ordered pairs, `from·n + to` order, self-pairs left out).
    pub links: Vec<LinkLoad>,
    /// Deviation from the ideal of the nominal matrix.
    pub deviation: Deviation,
    /// Deviation from the ideal of the traffic actually offered.
    pub offered_deviation: Deviation,
    /// Reordering at the output ports.
    pub reorder: ReorderStats,
    /// Events processed.
    pub events: u64,
    /// Wall-clock seconds the run took.
    pub wall_s: f64,
}

impl SimReport {
    /// Packets dropped, all causes.
    pub fn dropped(&self) -> u64 {
        self.dropped_input + self.dropped_link + self.dropped_output + self.unreachable
    }
}

/// SplitMix64: a small seedable generator, plenty for a simulation.
#[derive(Clone, Debug)]
struct Rng(u64);

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(mix(seed ^ 0x5851_f42d_4c95_7f2d))
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in (0, 1].
    fn open(&mut self) -> f64 {
        1.0 - self.unit()
    }

    fn exp(&mut self, mean: f64) -> f64 {
        -mean * self.open().ln()
    }

    /// Pareto with scale `xm` and index `alpha`.
    fn pareto(&mut self, xm: f64, alpha: f64) -> f64 {
        xm * self.open().powf(-1.0 / alpha)
    }

    /// ⌊Pareto(1, α)⌋ capped at `cap`: P(n ≥ k) = k^−α for 1 ≤ k ≤ cap.
    fn count(&mut self, alpha: f64, cap: u32) -> u32 {
        let x = self.pareto(1.0, alpha);
        if x >= cap as f64 {
            cap
        } else {
            (x as u32).max(1)
        }
    }
}

const PS: f64 = 1e12;

/// Precomputed traffic draws.
struct Draw {
    sizes: Vec<u32>,
    mean_size: f64,
    peak_lo: f64,
    peak_ratio: f64,
    f_alpha: f64,
    f_cap: u32,
    p_alpha: f64,
    p_cap: u32,
    gap_min_ps: f64,
    gap_alpha: f64,
    gap_max_ps: f64,
}

impl Draw {
    fn new(cfg: &SimConfig) -> Draw {
        let t = &cfg.traffic;
        let mut sizes = Vec::new();
        for &(b, w) in &t.sizes {
            sizes.extend(std::iter::repeat_n(b, w as usize));
        }
        Draw {
            sizes,
            mean_size: t.mean_size(),
            peak_lo: t.peak_min * cfg.rate_bps,
            peak_ratio: t.peak_max / t.peak_min,
            f_alpha: t.flowlets_alpha,
            f_cap: t.flowlets_cap,
            p_alpha: t.packets_alpha,
            p_cap: t.packets_cap,
            gap_min_ps: t.gap_min_s * PS,
            gap_alpha: t.gap_alpha,
            gap_max_ps: t.gap_max_s * PS,
        }
    }

    fn size(&self, r: &mut Rng) -> u32 {
        self.sizes[((r.next_u32() as u64 * self.sizes.len() as u64) >> 32) as usize]
    }

    /// Picoseconds per byte at the flow's peak rate.
    fn pace(&self, r: &mut Rng) -> f64 {
        let peak = self.peak_lo * self.peak_ratio.powf(r.unit());
        8.0 * PS / peak
    }

    fn gap(&self, r: &mut Rng) -> f64 {
        r.pareto(self.gap_min_ps, self.gap_alpha)
            .min(self.gap_max_ps)
    }

    /// Moves a flow whose flowlet is over to its next one; false when the flow is over.
    fn next_flowlet(&self, f: &mut Flow) -> bool {
        if f.flowlets == 0 {
            return false;
        }
        f.flowlets -= 1;
        f.t += self.gap(&mut f.rng);
        f.left = f.rng.count(self.p_alpha, self.p_cap);
        true
    }

    /// Samples flows: (fraction of bytes a window of `t` sees after a warm-up of `w`,
    /// mean flow lifetime), both picoseconds.
    fn calibrate(&self, seed: u64, w: f64, t: f64) -> (f64, f64) {
        let mut r = Rng::new(seed ^ 0xca11_b7a7e);
        let (mut seen, mut all, mut life) = (0.0, 0.0, 0.0);
        const N: usize = 20_000;
        for _ in 0..N {
            let pace = self.pace(&mut r);
            let flowlets = r.count(self.f_alpha, self.f_cap);
            let mut o = 0.0;
            for j in 0..flowlets {
                if j > 0 {
                    o += self.gap(&mut r);
                }
                let b = r.count(self.p_alpha, self.p_cap) as f64 * self.mean_size;
                seen += b * (t - (o - w).max(0.0)).max(0.0) / t;
                all += b;
                o += b * pace;
            }
            life += o;
        }
        ((seen / all).clamp(0.05, 1.0), life / N as f64)
    }
}

const ARRIVAL: u8 = 0;
const FLOW: u8 = 1;
const ARRIVE: u8 = 2;
const DONE: u8 = 3;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Ev {
    t: i64,
    /// Sequence number (ties go first in, first out) shifted left 2, ORed with the kind.
    key: u64,
    a: u32,
    b: u32,
}

/// A monotone priority queue of events at times ≥ 0 (a radix heap): an event is filed by the
/// highest bit in which its time differs from the last minimum, so a push is an append and
/// a pop moves each event O(log range) times in all. Events never go before the last one
/// popped (simulated time only moves on). With a million flows waiting for their next
/// packet, a binary heap was most of the simulation's time.
struct RadixQueue {
    last: u64,
    len: usize,
    buckets: Vec<Vec<Ev>>,
}

impl RadixQueue {
    fn new() -> RadixQueue {
        RadixQueue {
            last: 0,
            len: 0,
            buckets: (0..65).map(|_| Vec::new()).collect(),
        }
    }

    fn bucket(&self, t: i64) -> usize {
        debug_assert!(t >= 0 && t as u64 >= self.last);
        64 - (t as u64 ^ self.last).leading_zeros() as usize
    }

    fn push(&mut self, e: Ev) {
        let b = self.bucket(e.t);
        self.buckets[b].push(e);
        self.len += 1;
    }

    /// Brings the earliest events into bucket 0.
    fn settle(&mut self) -> bool {
        if !self.buckets[0].is_empty() {
            return true;
        }
        if self.len == 0 {
            return false;
        }
        let i = (1..65).find(|&i| !self.buckets[i].is_empty()).unwrap_or(0);
        let moving = std::mem::take(&mut self.buckets[i]);
        self.last = moving.iter().map(|e| e.t as u64).min().unwrap_or(self.last);
        for e in &moving {
            let b = self.bucket(e.t);
            self.buckets[b].push(*e);
        }
        self.buckets[i] = moving;
        self.buckets[i].clear();
        true
    }

    /// Takes the earliest event (the first pushed among equal times).
    fn pop(&mut self) -> Option<Ev> {
        if !self.settle() {
            return None;
        }
        let b = &mut self.buckets[0];
        let j = (0..b.len()).min_by_key(|&j| b[j]).unwrap_or(0);
        self.len -= 1;
        Some(b.swap_remove(j))
    }
}

struct Flow {
    id: u64,
    hash: u64,
    rng: Rng,
    dst: u32,
    src: u32,
    /// Time of the next packet, picoseconds.
    t: f64,
    /// Packets left in the current flowlet (the next one included).
    left: u32,
    /// Flowlets left after the current one.
    flowlets: u32,
    pace: f64,
    seq: u32,
    sent: bool,
}

#[derive(Clone, Copy, Default)]
struct Pkt {
    flow: u64,
    hash: u64,
    t_gen: i64,
    seq: u32,
    size: u32,
    dst_port: u32,
    dst_node: u16,
    phase2: bool,
}

struct Sim<'a> {
    cfg: &'a SimConfig,
    draw: Draw,
    n: usize,
    k: usize,
    /// Start of the measured window (the network runs `settle_s` before it), picoseconds.
    w0: i64,
    end: i64,
    /// Pending events.
    queue: RadixQueue,
    seq: u64,
    flows: Vec<Flow>,
    free_flows: Vec<u32>,
    pkts: Vec<Pkt>,
    free_pkts: Vec<u32>,
    vlb: Vec<Vlb>,
    node_rng: Vec<Rng>,
    core_free: Vec<i64>,
    link_free: Vec<i64>,
    link_bytes: Vec<u64>,
    link_pace: f64,
    link_bpps: f64,
    link_queue: f64,
    port_queue: f64,
    port_pace: f64,
    port_bpps: f64,
    in_free: Vec<i64>,
    out_free: Vec<i64>,
    port_rng: Vec<Rng>,
    port_flows: Vec<u64>,
    flow_gap_ps: f64,
    pair_bytes: Vec<u64>,
    meter: ReorderMeter<u64>,
    r: SimReport,
    latency_sum: f64,
    latency_max: i64,
}

/// A FIFO served at a fixed rate, whose last byte leaves at `free`: admits `bytes` arriving
/// at `now` unless its backlog (`free − now` at `rate.0` bytes per unit, may be negative
/// when idle) plus `bytes` exceeds `rate.1` bytes; then returns when they have left, at
/// `rate.2` units per byte.
fn admit(free: &mut i64, now: i64, bytes: u32, rate: (f64, f64, f64)) -> Option<i64> {
    let (bytes_per_unit, cap, pace) = rate;
    if (*free - now) as f64 * bytes_per_unit + bytes as f64 > cap {
        return None;
    }
    *free = (*free).max(now) + (bytes as f64 * pace) as i64;
    Some(*free)
}

impl<'a> Sim<'a> {
    fn push(&mut self, t: i64, kind: u8, a: u32, b: u32) {
        debug_assert!(kind <= DONE);
        self.seq += 1;
        self.queue.push(Ev {
            t,
            key: self.seq << 2 | kind as u64,
            a,
            b,
        });
    }

    /// A new flow at `port` starting at `t0` (picoseconds, maybe before the network starts);
    /// fast-forwarded to its first packet after that, and scheduled.
    fn start_flow(&mut self, port: usize, t0: f64) {
        let cfg = self.cfg;
        let ports = cfg.ports();
        let id = port as u64 + ports as u64 * self.port_flows[port];
        self.port_flows[port] += 1;
        let mut rng = Rng::new(cfg.seed.wrapping_mul(0x9e37_79b9).wrapping_add(mix(id + 1)));
        let dst = match cfg.matrix {
            Matrix::OneToOne => ports - 1,
            Matrix::Uniform => ((rng.next_u32() as u64 * ports as u64) >> 32) as usize,
            Matrix::Hotspot => {
                if rng.unit() < cfg.traffic.hot_share {
                    (port + self.k) % ports
                } else {
                    ((rng.next_u32() as u64 * ports as u64) >> 32) as usize
                }
            }
        };
        let pace = self.draw.pace(&mut rng);
        let flowlets = rng.count(self.draw.f_alpha, self.draw.f_cap) - 1;
        let left = rng.count(self.draw.p_alpha, self.draw.p_cap);
        let mut f = Flow {
            id,
            hash: mix(id ^ cfg.seed.rotate_left(17) ^ 0x0f10_f10f),
            rng,
            dst: dst as u32,
            src: port as u32,
            t: t0,
            left,
            flowlets,
            pace,
            seq: 0,
            sent: false,
        };
        let max_size = *self.draw.sizes.iter().max().unwrap_or(&1518) as f64;
        while f.t < 0.0 {
            if f.t + f.left as f64 * max_size * f.pace < 0.0 {
                // The whole flowlet falls before the window: skip it at its mean length.
                f.t += f.left as f64 * self.draw.mean_size * f.pace;
                f.left = 0;
            } else {
                let s = self.draw.size(&mut f.rng);
                f.t += s as f64 * f.pace;
                f.left -= 1;
            }
            if f.left == 0 && !self.draw.next_flowlet(&mut f) {
                return;
            }
        }
        if f.t >= self.end as f64 {
            return;
        }
        let t = f.t as i64;
        let slot = match self.free_flows.pop() {
            Some(s) => {
                self.flows[s as usize] = f;
                s
            }
            None => {
                self.flows.push(f);
                (self.flows.len() - 1) as u32
            }
        };
        self.push(t, FLOW, slot, 0);
    }

    fn on_arrival(&mut self, now: i64, port: usize) {
        self.start_flow(port, now as f64);
        let gap = self.port_rng[port].exp(self.flow_gap_ps);
        let next = now + gap.max(1.0) as i64;
        if next < self.end {
            self.push(next, ARRIVAL, port as u32, 0);
        }
    }

    fn on_flow(&mut self, now: i64, slot: u32) {
        let draw = &self.draw;
        let f = &mut self.flows[slot as usize];
        let size = draw.size(&mut f.rng);
        let pkt = Pkt {
            flow: f.id,
            hash: f.hash,
            t_gen: now,
            seq: f.seq,
            size,
            dst_port: f.dst,
            dst_node: (f.dst as usize / self.k) as u16,
            phase2: false,
        };
        let src = f.src as usize;
        let first = !f.sent && now >= self.w0;
        f.sent |= first;
        f.seq += 1;
        f.t = now as f64 + size as f64 * f.pace;
        f.left -= 1;
        let alive = f.left > 0 || draw.next_flowlet(f);
        let t_next = f.t;
        self.r.flows += first as u64;
        if alive && t_next < self.end as f64 {
            self.push(t_next as i64, FLOW, slot, 0);
        } else {
            self.free_flows.push(slot);
        }
        self.inject(now, src, pkt);
    }

    fn alloc(&mut self, p: Pkt) -> u32 {
        match self.free_pkts.pop() {
            Some(i) => {
                self.pkts[i as usize] = p;
                i
            }
            None => {
                self.pkts.push(p);
                (self.pkts.len() - 1) as u32
            }
        }
    }

    fn inject(&mut self, now: i64, port: usize, p: Pkt) {
        let m = now >= self.w0;
        let s = port / self.k;
        if m {
            self.r.packets += 1;
            self.r.bytes += p.size as u64;
            self.pair_bytes[s * self.n + p.dst_node as usize] += p.size as u64;
        }
        let Some(t) = admit(
            &mut self.in_free[port],
            now,
            p.size,
            (self.port_bpps, self.port_queue, self.port_pace),
        ) else {
            self.r.dropped_input += m as u64;
            return;
        };
        let i = self.alloc(p);
        self.push(t, ARRIVE, s as u32, i);
    }

    fn on_arrive(&mut self, now: i64, node: usize, i: u32) {
        let p = self.pkts[i as usize];
        let cores = self.cfg.cores;
        let c = node * cores + ((p.hash >> 32) % cores as u64) as usize;
        let d = self.cfg.proc_ns + self.cfg.jitter_ns * self.node_rng[node].unit();
        let t = (now + (d * 1000.0) as i64).max(self.core_free[c]);
        self.core_free[c] = t;
        self.push(t, DONE, node as u32, i);
    }

    fn on_done(&mut self, now: i64, node: usize, i: u32) {
        let p = self.pkts[i as usize];
        let m = p.t_gen >= self.w0;
        let dst = p.dst_node as usize;
        let now_ns = now / 1000;
        let hop = if !p.phase2 {
            // One number per decision, used or not, so that a seed gives the same run.
            let rand = self.node_rng[node].next_u32();
            self.vlb[node].choose(dst, p.hash, p.size, now_ns, &mut || rand)
        } else if dst != node {
            self.vlb[node].forward(dst, p.size, now_ns)
        } else {
            Some(node)
        };
        match hop {
            None => {
                self.r.unreachable += m as u64;
                self.free_pkts.push(i);
            }
            Some(h) if h == node => self.output(now, i),
            Some(h) => {
                let l = node * self.n + h;
                let link = (self.link_bpps, self.link_queue, self.link_pace);
                let Some(t) = admit(&mut self.link_free[l], now, p.size, link) else {
                    self.r.dropped_link += m as u64;
                    self.free_pkts.push(i);
                    return;
                };
                self.link_bytes[l] += if m { p.size as u64 } else { 0 };
                self.pkts[i as usize].phase2 = true;
                let arrive = t + (self.cfg.prop_ns * 1000.0) as i64;
                self.push(arrive, ARRIVE, h as u32, i);
            }
        }
    }

    fn output(&mut self, now: i64, i: u32) {
        let p = self.pkts[i as usize];
        self.free_pkts.push(i);
        let port = p.dst_port as usize;
        let m = p.t_gen >= self.w0;
        let Some(t) = admit(
            &mut self.out_free[port],
            now,
            p.size,
            (self.port_bpps, self.port_queue, self.port_pace),
        ) else {
            self.r.dropped_output += m as u64;
            return;
        };
        if !m {
            return;
        }
        self.r.delivered += 1;
        let lat = t - p.t_gen;
        self.latency_sum += lat as f64;
        self.latency_max = self.latency_max.max(lat);
        self.meter.record(p.flow, p.seq as u64);
    }
}

/// Phase-1 direct and via packets, flowlet hits, starts and moves of all nodes.
fn vlb_totals(vlb: &[Vlb]) -> [u64; 5] {
    let mut t = [0; 5];
    for v in vlb {
        t[0] += v.stats.direct.iter().sum::<u64>();
        t[1] += v.stats.via.iter().sum::<u64>();
        t[2] += v.stats.flowlet_hits;
        t[3] += v.stats.flowlet_new;
        t[4] += v.stats.flowlet_moved;
    }
    t
}

/// Runs one simulation.
pub fn run(cfg: &SimConfig) -> Result<SimReport, String> {
    cfg.check()?;
    let wall = Instant::now();
    let n = cfg.nodes;
    let k = cfg.ports_per_node;
    let ports = cfg.ports();
    let draw = Draw::new(cfg);
    // Simulated time starts when the network does, `settle_s` before the measured window;
    // flows start `warmup_s` before the window (or with the network, if earlier).
    let w0 = (cfg.settle_s * PS) as i64;
    let end = w0 + (cfg.duration_s * PS) as i64;
    let warm = (cfg.warmup_s * PS).max(w0 as f64);
    let (seen, life_ps) = draw.calibrate(cfg.seed, warm, cfg.duration_s * PS);
    // Flows per second per sending port, raised by the share of traffic that belongs to flows
    // started before the warm-up.
    let lambda = cfg.flow_rate() / seen;
    let link_cap = cfg.link_capacity();
    // Flowlet table slots: twice the flows a node is expected to have live (sent within δ),
    // at most 2^24 entries (400 MB) over the whole mesh.
    let slots = |node: usize| {
        if cfg.flowlet_slots > 0 {
            return cfg.flowlet_slots;
        }
        let senders = (node * k..(node + 1) * k)
            .filter(|&p| p < cfg.sending_ports())
            .count();
        let span = life_ps / PS + (cfg.flowlet_ns.unwrap_or(0) as f64 * 1e-9).min(cfg.duration_s);
        let live = cfg.flow_rate() * senders as f64 * span;
        ((2.0 * live) as usize).clamp(1024, (1 << 24) / n)
    };
    let vlb: Vec<Vlb> = (0..n)
        .map(|node| {
            Vlb::new(VlbConfig {
                node,
                nodes: n,
                direct_rate: cfg.direct_rate() / 8.0,
                link_rate: link_cap / 8.0,
                burst: cfg.burst(),
                flowlet_ns: cfg.flowlet_ns,
                flowlet_slots: slots(node),
            })
        })
        .collect();
    let mut sim = Sim {
        cfg,
        draw,
        n,
        k,
        w0,
        end,
        queue: RadixQueue::new(),
        seq: 0,
        flows: Vec::new(),
        free_flows: Vec::new(),
        pkts: Vec::new(),
        free_pkts: Vec::new(),
        vlb,
        node_rng: (0..n)
            .map(|i| Rng::new(cfg.seed ^ mix(0x1000 + i as u64)))
            .collect(),
        core_free: vec![i64::MIN; n * cfg.cores],
        link_free: vec![0; n * n],
        link_bytes: vec![0; n * n],
        link_pace: 8.0 * PS / link_cap,
        link_bpps: link_cap / 8.0 / PS,
        link_queue: cfg.queue(link_cap),
        port_queue: cfg.queue(cfg.rate_bps),
        port_pace: 8.0 * PS / cfg.rate_bps,
        port_bpps: cfg.rate_bps / 8.0 / PS,
        in_free: vec![0; ports],
        out_free: vec![0; ports],
        port_rng: (0..ports)
            .map(|i| Rng::new(cfg.seed ^ mix(0x10_0000 + i as u64)))
            .collect(),
        port_flows: vec![0; ports],
        flow_gap_ps: PS / lambda,
        pair_bytes: vec![0; n * n],
        meter: ReorderMeter::new(),
        r: SimReport {
            flowlet_ns: cfg.flowlet_ns,
            duration_s: cfg.duration_s,
            warmup_s: cfg.warmup_s,
            link_capacity_bps: link_cap,
            ..SimReport::default()
        },
        latency_sum: 0.0,
        latency_max: 0,
    };
    // Flows of the warm-up before the network starts, then the first arrival after, port by
    // port.
    for port in 0..cfg.sending_ports() {
        let mut t = w0 as f64 - warm;
        loop {
            t += sim.port_rng[port].exp(sim.flow_gap_ps);
            if t >= 0.0 {
                break;
            }
            sim.start_flow(port, t);
        }
        if (t as i64) < end {
            sim.push(t as i64, ARRIVAL, port as u32, 0);
        }
    }
    let mut before = None;
    while let Some(e) = sim.queue.pop() {
        if before.is_none() && e.t >= w0 {
            before = Some(vlb_totals(&sim.vlb));
        }
        sim.r.events += 1;
        match (e.key & 3) as u8 {
            ARRIVAL => sim.on_arrival(e.t, e.a as usize),
            FLOW => sim.on_flow(e.t, e.a),
            ARRIVE => sim.on_arrive(e.t, e.a as usize, e.b),
            _ => sim.on_done(e.t, e.a as usize, e.b),
        }
    }
    let mut r = sim.r;
    if cfg.flowlet_ns.is_some() {
        r.flowlet_slots = (0..n).map(slots).max().unwrap_or(0).next_power_of_two();
    }
    let secs = cfg.duration_s;
    r.offered_load = r.bytes as f64 * 8.0 / secs / (cfg.sending_ports() as f64 * cfg.rate_bps);
    if r.delivered > 0 {
        r.latency_mean_us = sim.latency_sum / r.delivered as f64 / 1e6;
    }
    r.latency_max_us = sim.latency_max as f64 / 1e6;
    let after = vlb_totals(&sim.vlb);
    let before = before.unwrap_or(after);
    // Decisions taken in the window (and after, for packets still crossing).
    r.direct = after[0] - before[0];
    r.via = after[1] - before[1];
    r.flowlet_hits = after[2] - before[2];
    r.flowlet_new = after[3] - before[3];
    r.flowlet_moved = after[4] - before[4];
    let nominal = vlb_ideal(n, cfg.direct_rate(), &nominal_pairs(cfg));
    let offered: Vec<f64> = sim
        .pair_bytes
        .iter()
        .map(|&b| b as f64 * 8.0 / secs)
        .collect();
    let offered = vlb_ideal(n, cfg.direct_rate(), &offered);
    for a in 0..n {
        for b in (0..n).filter(|&b| b != a) {
            let l = a * n + b;
            let bps = sim.link_bytes[l] as f64 * 8.0 / secs;
            r.links.push(LinkLoad {
                from: a,
                to: b,
                bytes: sim.link_bytes[l],
                bps,
                util: bps / link_cap,
                ideal_bps: nominal[l],
                offered_ideal_bps: offered[l],
            });
        }
    }
    r.deviation = Deviation::of(&r.links, link_cap, |l| l.ideal_bps);
    r.offered_deviation = Deviation::of(&r.links, link_cap, |l| l.offered_ideal_bps);
    r.reorder = sim.meter.stats();
    r.wall_s = wall.elapsed().as_secs_f64();
    Ok(r)
}

// ---------------------------------------------------------------------------------------
// Command line.

/// Parses a time: a number with `ns`, `us` (or `µs`), `ms` or `s`, or plain seconds.
pub fn parse_seconds(s: &str) -> Result<f64, String> {
    let (num, mul) = [
        ("ns", 1e-9),
        ("us", 1e-6),
        ("µs", 1e-6),
        ("ms", 1e-3),
        ("s", 1.0),
    ]
    .iter()
    .find_map(|&(suf, m)| s.strip_suffix(suf).map(|n| (n, m)))
    .unwrap_or((s, 1.0));
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(x * mul),
        _ => Err(format!("bad time '{s}' (e.g. 100ms, 50us, 0.1)")),
    }
}

/// Parses a rate in bits per second: a number with an optional k, M, G or T (powers of
/// 1000) and an optional `bps` or `b/s`.
pub fn parse_bps(s: &str) -> Result<f64, String> {
    let t = s
        .trim_end_matches("bps")
        .trim_end_matches("b/s")
        .trim_end_matches("bit/s");
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        Some('G') => (&t[..t.len() - 1], 1e9),
        Some('T') => (&t[..t.len() - 1], 1e12),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x * mul),
        _ => Err(format!("bad rate '{s}' (e.g. 10G, 1e9, 500Mbps)")),
    }
}

fn parse_bytes(s: &str) -> Result<f64, String> {
    let t = s.trim_end_matches('B').trim_end_matches('i');
    let (num, mul) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1024.0),
        Some('M') => (&t[..t.len() - 1], 1024.0 * 1024.0),
        Some('G') => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
        _ => (t, 1.0),
    };
    match num.parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x * mul),
        _ => Err(format!("bad size '{s}' (e.g. 512k, 1M, 65536)")),
    }
}

/// Parses `--flowlets`: comma-separated gaps (see [`parse_seconds`]) or `off`, one run each.
pub fn parse_flowlets(s: &str) -> Result<Vec<Option<i64>>, String> {
    s.split(',')
        .map(|p| match p.trim() {
            "off" | "none" | "no" => Ok(None),
            p => parse_seconds(p).map(|x| Some((x * 1e9).round() as i64)),
        })
        .collect()
}

/// A time for people: `100 ms`, `50 µs`.
pub fn fmt_time_ns(ns: i64) -> String {
    let x = ns as f64;
    let (v, unit) = if x.abs() >= 1e9 {
        (x / 1e9, "s")
    } else if x.abs() >= 1e6 {
        (x / 1e6, "ms")
    } else if x.abs() >= 1e3 {
        (x / 1e3, "µs")
    } else {
        (x, "ns")
    };
    let v = format!("{v:.3}");
    let v = v.trim_end_matches('0').trim_end_matches('.');
    format!("{v} {unit}")
}

fn fmt_delta(d: Option<i64>) -> String {
    d.map(fmt_time_ns).unwrap_or_else(|| "off".into())
}

fn fmt_bps(x: f64) -> String {
    if x >= 1e9 {
        format!("{:.4} Gb/s", x / 1e9)
    } else if x >= 1e6 {
        format!("{:.4} Mb/s", x / 1e6)
    } else {
        format!("{:.4} kb/s", x / 1e3)
    }
}

/// What the command line asked for.
#[derive(Clone, Debug)]
pub struct Options {
    /// The configuration (its `flowlet_ns` replaced per run).
    pub cfg: SimConfig,
    /// The flowlet gaps to run, in order.
    pub runs: Vec<Option<i64>>,
    /// List every link.
    pub links: bool,
    /// JSON output.
    pub json: bool,
}

/// Parses the arguments of `sluice cluster sim`; `Ok(None)` after `--help`.
pub fn parse_args(args: &[String]) -> Result<Option<Options>, String> {
    let mut nodes = None;
    let mut ports = None;
    let mut cfg = SimConfig::new(4);
    let mut runs = vec![Some(100_000_000), None];
    let (mut duration, mut warmup, mut settle) = (None, None, None);
    let (mut links, mut json) = (false, false);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (a, None),
        };
        let mut value = || -> Result<String, String> {
            if let Some(v) = inline.clone() {
                return Ok(v);
            }
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        let int = |v: String| {
            v.parse::<usize>()
                .map_err(|_| format!("{name}: bad number '{v}'"))
        };
        let num = |v: String| {
            v.parse::<f64>()
                .map_err(|_| format!("{name}: bad number '{v}'"))
        };
        match name {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(None);
            }
            "--nodes" => nodes = Some(int(value()?)?),
            "--ports" => ports = Some(int(value()?)?),
            "--rate" => cfg.rate_bps = parse_bps(&value()?)?,
            "--link-rate" => cfg.link_bps = parse_bps(&value()?)?,
            "--flowlets" => runs = parse_flowlets(&value()?)?,
            "--no-flowlets" => runs = vec![None],
            "--matrix" => {
                let v = value()?;
                cfg.matrix = Matrix::parse(&v).ok_or_else(|| {
                    format!("--matrix: '{v}' is not uniform, one-to-one or hotspot")
                })?
            }
            "--load" => cfg.load = num(value()?)?,
            "--duration" => duration = Some(parse_seconds(&value()?)?),
            "--warmup" => warmup = Some(parse_seconds(&value()?)?),
            "--settle" => settle = Some(parse_seconds(&value()?)?),
            "--seed" => {
                let v = value()?;
                cfg.seed = v.parse().map_err(|_| format!("--seed: bad number '{v}'"))?
            }
            "--proc" => cfg.proc_ns = parse_seconds(&value()?)? * 1e9,
            "--jitter" => cfg.jitter_ns = parse_seconds(&value()?)? * 1e9,
            "--cores" => cfg.cores = int(value()?)?,
            "--prop" => cfg.prop_ns = parse_seconds(&value()?)? * 1e9,
            "--queue" => {
                let v = value()?;
                match parse_bytes(&v) {
                    Ok(b) => cfg.queue_bytes = b.max(1.0) as u64,
                    Err(_) => {
                        cfg.queue_bytes = 0;
                        cfg.queue_s = parse_seconds(&v)?;
                    }
                }
            }
            "--burst" => {
                let v = value()?;
                match parse_bytes(&v) {
                    Ok(b) => cfg.burst_bytes = b,
                    Err(_) => {
                        cfg.burst_bytes = 0.0;
                        cfg.burst_s = parse_seconds(&v)?;
                    }
                }
            }
            "--slots" => cfg.flowlet_slots = int(value()?)?,
            "--links" => links = true,
            "--json" => json = true,
            _ => return Err(format!("unknown argument '{a}'\n{USAGE}")),
        }
        i += 1;
    }
    match (nodes, ports) {
        (Some(n), None) => cfg.nodes = n,
        (None, Some(p)) if p <= MAX_NODES => cfg.nodes = p,
        (None, Some(p)) => {
            let k = (p.div_ceil(MAX_NODES)..=p)
                .find(|k| p % k == 0)
                .unwrap_or(p);
            cfg.nodes = p / k;
            cfg.ports_per_node = k;
        }
        (Some(n), Some(p)) => {
            if n == 0 || p % n != 0 {
                return Err(format!("--ports {p} is not a multiple of --nodes {n}"));
            }
            cfg.nodes = n;
            cfg.ports_per_node = p / n;
        }
        (None, None) => {}
    }
    if cfg.nodes > MAX_NODES {
        return Err(format!(
            "--nodes {}: the DirectVLB code handles at most {} nodes; simulate {} ports with \
             --ports {} (several ports per node)",
            cfg.nodes, MAX_NODES, cfg.nodes, cfg.nodes
        ));
    }
    if runs.is_empty() {
        return Err("--flowlets: nothing to run".into());
    }
    if let Some(d) = duration {
        cfg.duration_s = d;
    }
    if let Some(w) = warmup {
        cfg.warmup_s = w;
    }
    cfg.auto_times(duration.is_none(), warmup.is_none(), 4e6);
    cfg.settle_s = settle.unwrap_or((2e-3f64).min(cfg.duration_s / 2.0));
    cfg.check()?;
    Ok(Some(Options {
        cfg,
        runs,
        links,
        json,
    }))
}

fn describe(cfg: &SimConfig) -> String {
    let mut s = String::new();
    let shape = if cfg.ports_per_node > 1 {
        format!(
            "{} ports on {} nodes of {}",
            cfg.ports(),
            cfg.nodes,
            cfg.ports_per_node
        )
    } else {
        format!("{} nodes", cfg.nodes)
    };
    let _ = writeln!(
        s,
        "Direct VLB full mesh: {}, R = {}, internal links {}{}, direct share {}",
        shape,
        fmt_bps(cfg.rate_bps),
        fmt_bps(cfg.link_capacity()),
        if cfg.link_bps > 0.0 {
            ""
        } else {
            " (2 x node rate / N)"
        },
        fmt_bps(cfg.direct_rate()),
    );
    let _ = writeln!(
        s,
        "traffic: {} matrix, load {} per sending port, {:.0} new flows/s per port; {} measured \
         after {} of flows ({} of network) warming up; seed {}",
        cfg.matrix.name(),
        cfg.load,
        cfg.flow_rate(),
        fmt_time_ns((cfg.duration_s * 1e9).round() as i64),
        fmt_time_ns((cfg.warmup_s.max(cfg.settle_s) * 1e9).round() as i64),
        fmt_time_ns((cfg.settle_s * 1e9).round() as i64),
        cfg.seed
    );
    let _ = writeln!(
        s,
        "nodes: {} + up to {} processing on {} FIFOs; queues: {:.0} bytes per port, {:.0} per \
         link; links: {} propagation; VLB buckets of {:.0} bytes",
        fmt_time_ns(cfg.proc_ns as i64),
        fmt_time_ns(cfg.jitter_ns as i64),
        cfg.cores,
        cfg.queue(cfg.rate_bps),
        cfg.queue(cfg.link_capacity()),
        fmt_time_ns(cfg.prop_ns as i64),
        cfg.burst(),
    );
    s
}

/// A run as text (`links`: every link, else only when few carry traffic).
pub fn report_text(r: &SimReport, links: bool) -> String {
    let mut s = String::new();
    let pct = |a: u64, b: u64| {
        if b == 0 {
            0.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let _ = writeln!(s, "[flowlets {}]", fmt_delta(r.flowlet_ns));
    let _ = writeln!(
        s,
        "packets: {} offered by {} flows ({:.3} R per sending port), {} delivered; dropped: \
         {} input, {} link, {} output, {} unreachable",
        r.packets,
        r.flows,
        r.offered_load,
        r.delivered,
        r.dropped_input,
        r.dropped_link,
        r.dropped_output,
        r.unreachable
    );
    let _ = writeln!(
        s,
        "latency: mean {:.1} µs, max {:.1} µs",
        r.latency_mean_us, r.latency_max_us
    );
    let _ = write!(
        s,
        "phase-1 packets: {:.2} % direct, {:.2} % via an intermediate",
        pct(r.direct, r.direct + r.via),
        pct(r.via, r.direct + r.via)
    );
    if r.flowlet_ns.is_some() {
        let _ = write!(
            s,
            "; flowlets: {} started, {} packets kept their path, {} moved off a full one \
             ({} table slots)",
            r.flowlet_new, r.flowlet_hits, r.flowlet_moved, r.flowlet_slots
        );
    }
    s.push('\n');
    let busy: Vec<&LinkLoad> = r
        .links
        .iter()
        .filter(|l| links || l.bytes > 0 || l.ideal_bps > 0.0)
        .collect();
    if links || busy.len() <= 16 {
        let _ = writeln!(s, "links (load, fraction of capacity; VLB ideal for the matrix, for the traffic offered):");
        for l in busy {
            let cap = r.link_capacity_bps;
            let _ = writeln!(
                s,
                "  {:>2} -> {:<2} {:>12}  {:6.2} %  (ideal {:6.2} %, {:6.2} %)",
                l.from,
                l.to,
                fmt_bps(l.bps),
                100.0 * l.util,
                100.0 * l.ideal_bps / cap,
                100.0 * l.offered_ideal_bps / cap
            );
        }
    }
    let d = &r.deviation;
    let o = &r.offered_deviation;
    let _ = writeln!(
        s,
        "link load vs VLB ideal over {} links: max {:.2} %, mean {:.2} % off the matrix's ideal; \
         max {:.2} %, mean {:.2} % off the ideal of the traffic offered; other links at most \
         {:.2} % of capacity",
        d.links,
        100.0 * d.max,
        100.0 * d.mean,
        100.0 * o.max,
        100.0 * o.mean,
        100.0 * d.stray.max(o.stray)
    );
    let q = &r.reorder;
    let _ = writeln!(
        s,
        "reordering: {} reordered sequences in {} same-flow pairs ({:.4} %), {} late packets \
         ({:.4} %)",
        q.reordered,
        q.pairs,
        q.percent(),
        q.late,
        100.0 * q.late_fraction()
    );
    let _ = writeln!(s, "({} events in {:.1} s)", r.events, r.wall_s);
    s
}

fn json_deviation(d: &Deviation) -> String {
    format!(
        "{{\"max\":{},\"mean\":{},\"links\":{},\"stray\":{}}}",
        json_f64(d.max),
        json_f64(d.mean),
        d.links,
        json_f64(d.stray)
    )
}

/// A run as a JSON object (`links`: with every link).
pub fn report_json(r: &SimReport, links: bool) -> String {
    let mut s = String::from("{");
    let opt = |x: Option<i64>| x.map(|v| v.to_string()).unwrap_or_else(|| "null".into());
    let _ = write!(
        s,
        "\"flowlet_ns\":{},\"duration_s\":{},\"warmup_s\":{},\"flows\":{},\"packets\":{},\
         \"bytes\":{},\"offered_load\":{},\"delivered\":{},\"dropped_input\":{},\
         \"dropped_link\":{},\"dropped_output\":{},\"unreachable\":{},\"latency_mean_us\":{},\
         \"latency_max_us\":{},\"direct\":{},\"via\":{},\"flowlet_hits\":{},\"flowlet_new\":{},\
         \"flowlet_moved\":{},\"flowlet_slots\":{},\"link_capacity_bps\":{},\"deviation\":{},\
         \"offered_deviation\":{},\"reorder\":{{\"flows\":{},\"packets\":{},\"pairs\":{},\
         \"reordered\":{},\"reordered_percent\":{},\"late\":{},\"late_percent\":{}}},\
         \"events\":{},\"wall_s\":{}",
        opt(r.flowlet_ns),
        json_f64(r.duration_s),
        json_f64(r.warmup_s),
        r.flows,
        r.packets,
        r.bytes,
        json_f64(r.offered_load),
        r.delivered,
        r.dropped_input,
        r.dropped_link,
        r.dropped_output,
        r.unreachable,
        json_f64(r.latency_mean_us),
        json_f64(r.latency_max_us),
        r.direct,
        r.via,
        r.flowlet_hits,
        r.flowlet_new,
        r.flowlet_moved,
        r.flowlet_slots,
        json_f64(r.link_capacity_bps),
        json_deviation(&r.deviation),
        json_deviation(&r.offered_deviation),
        r.reorder.flows,
        r.reorder.packets,
        r.reorder.pairs,
        r.reorder.reordered,
        json_f64(r.reorder.percent()),
        r.reorder.late,
        json_f64(100.0 * r.reorder.late_fraction()),
        r.events,
        json_f64(r.wall_s),
    );
    if links {
        s.push_str(",\"links\":[");
        for (j, l) in r.links.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            let _ = write!(
                s,
                "{{\"from\":{},\"to\":{},\"bytes\":{},\"bps\":{},\"util\":{},\"ideal_bps\":{},\
                 \"offered_ideal_bps\":{}}}",
                l.from,
                l.to,
                l.bytes,
                json_f64(l.bps),
                json_f64(l.util),
                json_f64(l.ideal_bps),
                json_f64(l.offered_ideal_bps)
            );
        }
        s.push(']');
    }
    s.push('}');
    s
}

/// Runs `sluice cluster sim ARGS`; an error is a message for the user.
pub fn main(args: &[String]) -> Result<(), String> {
    let Some(o) = parse_args(args).map_err(|e| format!("cluster sim: {e}"))? else {
        return Ok(());
    };
    let mut reports = Vec::new();
    if !o.json {
        print!("{}", describe(&o.cfg));
    }
    for &delta in &o.runs {
        let mut cfg = o.cfg.clone();
        cfg.flowlet_ns = delta;
        let r = run(&cfg).map_err(|e| format!("cluster sim: {e}"))?;
        if !o.json {
            println!();
            print!("{}", report_text(&r, o.links));
        }
        reports.push(r);
    }
    let c = &o.cfg;
    if o.json {
        let runs: Vec<String> = reports.iter().map(|r| report_json(r, o.links)).collect();
        println!(
            "{{\"nodes\":{},\"ports_per_node\":{},\"rate_bps\":{},\"link_bps\":{},\
             \"direct_bps\":{},\"matrix\":\"{}\",\"load\":{},\"duration_s\":{},\"warmup_s\":{},\
             \"settle_s\":{},\"seed\":{},\"proc_ns\":{},\"jitter_ns\":{},\"cores\":{},\"prop_ns\":{},\
             \"port_queue_bytes\":{},\"link_queue_bytes\":{},\"burst_bytes\":{},\"runs\":[{}]}}",
            c.nodes,
            c.ports_per_node,
            json_f64(c.rate_bps),
            json_f64(c.link_capacity()),
            json_f64(c.direct_rate()),
            c.matrix.name(),
            json_f64(c.load),
            json_f64(c.duration_s),
            json_f64(c.warmup_s),
            json_f64(c.settle_s),
            c.seed,
            json_f64(c.proc_ns),
            json_f64(c.jitter_ns),
            c.cores,
            json_f64(c.prop_ns),
            json_f64(c.queue(c.rate_bps)),
            json_f64(c.queue(c.link_capacity())),
            json_f64(c.burst()),
            runs.join(",")
        );
    } else if reports.len() > 1 {
        println!();
        println!("flowlets   reordered    late        link dev max/mean (matrix)   drops");
        for r in &reports {
            println!(
                "{:<10} {:>9.4} %  {:>9.4} %  {:>7.2} % / {:>6.2} %           {}",
                fmt_delta(r.flowlet_ns),
                r.reorder.percent(),
                100.0 * r.reorder.late_fraction(),
                100.0 * r.deviation.max,
                100.0 * r.deviation.mean,
                r.dropped()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(nodes: usize, matrix: Matrix, delta: Option<i64>) -> SimConfig {
        let mut c = SimConfig::new(nodes);
        c.rate_bps = 1e9;
        c.matrix = matrix;
        c.flowlet_ns = delta;
        c.duration_s = 0.5;
        c.warmup_s = 0.2;
        c
    }

    fn conserved(r: &SimReport) {
        assert_eq!(r.packets, r.delivered + r.dropped(), "{r:?}");
        assert_eq!(r.reorder.packets, r.delivered);
    }

    #[test]
    fn ideal_by_hand() {
        // One-to-one over 4 nodes, R = 1, load 0.9: 0.25 straight, 0.65 over nodes 1 and 2.
        let mut pair = vec![0.0; 16];
        pair[3] = 0.9;
        let l = vlb_ideal(4, 0.25, &pair);
        assert_eq!(l[3], 0.25);
        for (a, b) in [(0, 1), (0, 2), (1, 3), (2, 3)] {
            assert!(
                (l[a * 4 + b] - 0.325).abs() < 1e-12,
                "{a}->{b}: {}",
                l[a * 4 + b]
            );
        }
        assert!((l.iter().sum::<f64>() - 1.55).abs() < 1e-12);
        // Within the direct share, or with two nodes, everything goes straight.
        pair[3] = 0.2;
        assert_eq!(vlb_ideal(4, 0.25, &pair).iter().sum::<f64>(), 0.2);
        assert_eq!(
            vlb_ideal(2, 0.5, &[0.0, 0.9, 0.3, 0.0]),
            vec![0.0, 0.9, 0.3, 0.0]
        );
        // The nominal matrices of a 4-node mesh, R = 1 Gb/s, load 0.9.
        let c = cfg(4, Matrix::OneToOne, None);
        let p = nominal_pairs(&c);
        assert_eq!(p[3], 0.9e9);
        assert_eq!(p.iter().sum::<f64>(), 0.9e9);
        let c = cfg(4, Matrix::Hotspot, None);
        let p = nominal_pairs(&c);
        // Half to the next node, the other half spread: 0.45 + 0.1125 to node 1.
        assert!((p[1] - 0.5625e9).abs() < 1.0 && (p[2] - 0.1125e9).abs() < 1.0);
        let into_0: f64 = (0..4).map(|s| p[s * 4]).sum();
        assert!((into_0 - 0.9e9).abs() < 1.0, "admissible: {into_0}");
    }

    #[test]
    fn four_node_one_to_one_matches_the_ideal() {
        let r = run(&cfg(4, Matrix::OneToOne, None)).unwrap();
        conserved(&r);
        assert_eq!(r.dropped(), 0);
        assert!((r.offered_load - 0.9).abs() < 0.05, "{}", r.offered_load);
        for l in &r.links {
            if l.ideal_bps > 0.0 {
                let off = (l.bps - l.ideal_bps).abs() / l.ideal_bps;
                assert!(
                    off < 0.08,
                    "{}->{}: {} vs {}",
                    l.from,
                    l.to,
                    l.bps,
                    l.ideal_bps
                );
                let off = (l.bps - l.offered_ideal_bps).abs() / l.offered_ideal_bps;
                assert!(
                    off < 0.03,
                    "{}->{}: {} vs {}",
                    l.from,
                    l.to,
                    l.bps,
                    l.offered_ideal_bps
                );
            } else {
                assert_eq!(l.bytes, 0, "{}->{}", l.from, l.to);
            }
        }
        // The direct link carries the direct share R/N.
        let direct = r.links.iter().find(|l| l.from == 0 && l.to == 3).unwrap();
        assert!((direct.bps - 0.25e9).abs() < 0.01e9, "{}", direct.bps);
        assert_eq!(r.deviation.links, 5);
        assert!(r.deviation.max < 0.08 && r.offered_deviation.max < 0.03);
    }

    #[test]
    fn flowlets_reduce_reordering() {
        let mut c = cfg(4, Matrix::OneToOne, None);
        c.rate_bps = 10e9;
        c.duration_s = 0.1;
        let per_packet = run(&c).unwrap();
        c.flowlet_ns = Some(100_000_000);
        let flowlets = run(&c).unwrap();
        conserved(&per_packet);
        conserved(&flowlets);
        // The same traffic either way.
        assert_eq!(per_packet.packets, flowlets.packets);
        assert_eq!(per_packet.bytes, flowlets.bytes);
        let (a, b) = (per_packet.reorder, flowlets.reorder);
        assert_eq!(a.pairs, b.pairs);
        assert!(a.fraction() > 0.01, "per packet {a:?}");
        assert!(
            b.fraction() < a.fraction() / 20.0,
            "flowlets {b:?} vs {a:?}"
        );
        assert!(flowlets.flowlet_hits > flowlets.flowlet_new);
        // A δ below the latency difference of the paths brings the reordering back.
        c.flowlet_ns = Some(1_000);
        let tiny = run(&c).unwrap();
        assert!(
            tiny.reorder.fraction() > 10.0 * b.fraction(),
            "{:?}",
            tiny.reorder
        );
    }

    #[test]
    fn a_single_path_never_reorders() {
        // Two nodes: every packet goes straight, and each node keeps a flow's order.
        for matrix in [Matrix::Uniform, Matrix::OneToOne] {
            let r = run(&cfg(2, matrix, None)).unwrap();
            conserved(&r);
            assert!(r.reorder.pairs > 10_000);
            assert_eq!((r.reorder.reordered, r.reorder.late, r.via), (0, 0, 0));
        }
        // Below the direct share, one-to-one traffic goes straight too.
        let mut c = cfg(4, Matrix::OneToOne, None);
        c.load = 0.05;
        c.burst_bytes = 1e6;
        let r = run(&c).unwrap();
        assert_eq!((r.via, r.reorder.reordered), (0, 0), "{r:?}");
        assert!(r.reorder.pairs > 1000);
    }

    #[test]
    fn packets_in_are_packets_out_plus_drops() {
        // Internal links at a tenth of their VLB capacity, short queues: links drop.
        let mut c = cfg(4, Matrix::Uniform, Some(1_000_000));
        c.duration_s = 0.1;
        c.link_bps = 0.05e9;
        c.queue_bytes = 16 * 1024;
        let r = run(&c).unwrap();
        conserved(&r);
        assert!(r.dropped_link > 0 && r.delivered > 0, "{r:?}");
        // An overloaded output port drops too (hotspot at full load with a slow port queue).
        let mut c = cfg(4, Matrix::Hotspot, None);
        c.load = 1.0;
        c.queue_bytes = 4096;
        c.duration_s = 0.1;
        let r = run(&c).unwrap();
        conserved(&r);
        assert!(r.dropped() > 0, "{r:?}");
    }

    #[test]
    fn the_settling_period_is_not_counted() {
        // One-to-one past the direct share: the VLB buckets start full, so without settling
        // the direct link carries an extra bucket's worth at the start of a short window.
        let mut c = cfg(4, Matrix::OneToOne, None);
        c.duration_s = 0.01;
        c.burst_bytes = 200_000.0;
        c.settle_s = 0.0;
        let cold = run(&c).unwrap();
        c.settle_s = 0.005;
        let settled = run(&c).unwrap();
        conserved(&cold);
        conserved(&settled);
        let direct = |r: &SimReport| r.links[2].bps; // 0 -> 3
        assert!(direct(&cold) > 0.25e9 * 1.1, "{}", direct(&cold));
        assert!(
            (direct(&settled) - 0.25e9).abs() < 0.25e9 * 0.05,
            "{}",
            direct(&settled)
        );
    }

    #[test]
    fn runs_are_deterministic() {
        let mut c = cfg(5, Matrix::Hotspot, Some(10_000_000));
        c.duration_s = 0.05;
        let (a, b) = (run(&c).unwrap(), run(&c).unwrap());
        assert_eq!(
            (a.packets, a.delivered, a.reorder, a.events),
            (b.packets, b.delivered, b.reorder, b.events)
        );
        assert_eq!(a.links, b.links);
        c.seed = 2;
        assert_ne!(run(&c).unwrap().packets, a.packets);
    }

    #[test]
    fn many_ports_share_nodes() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse_args(&args(&["--ports", "1024"])).unwrap().unwrap();
        assert_eq!(
            (o.cfg.nodes, o.cfg.ports_per_node, o.cfg.ports()),
            (64, 16, 1024)
        );
        assert_eq!(o.cfg.link_capacity(), 5e9); // 2 x 16 x 10G / 64 = R/2
        assert_eq!(o.cfg.direct_rate(), 2.5e9);
        let o = parse_args(&args(&["--ports", "48", "--nodes", "6"]))
            .unwrap()
            .unwrap();
        assert_eq!((o.cfg.nodes, o.cfg.ports_per_node), (6, 8));
        assert!(parse_args(&args(&["--ports", "10", "--nodes", "4"])).is_err());
        let e = parse_args(&args(&["--nodes", "1024"])).unwrap_err();
        assert!(e.contains("--ports 1024"), "{e}");
        // 128 ports on 64 nodes, uniform: traffic between the ports of one node stays there.
        let mut c = cfg(64, Matrix::Uniform, None);
        c.ports_per_node = 2;
        c.rate_bps = 1e8;
        c.duration_s = 0.02;
        c.warmup_s = 0.05;
        let r = run(&c).unwrap();
        conserved(&r);
        assert_eq!(r.links.len(), 64 * 63);
        assert!(r.reorder.pairs > 0);
    }

    #[test]
    fn command_line() {
        assert_eq!(parse_seconds("100ms").unwrap(), 0.1);
        assert!((parse_seconds("50us").unwrap() - 50e-6).abs() < 1e-15);
        assert_eq!(parse_seconds("2").unwrap(), 2.0);
        assert!(parse_seconds("fast").is_err());
        assert_eq!(parse_bps("10G").unwrap(), 10e9);
        assert_eq!(parse_bps("500Mbps").unwrap(), 500e6);
        assert_eq!(parse_bps("1e9").unwrap(), 1e9);
        assert!(parse_bps("-1").is_err());
        assert_eq!(parse_bytes("512k").unwrap(), 524288.0);
        assert_eq!(
            parse_flowlets("100ms,10us,off").unwrap(),
            vec![Some(100_000_000), Some(10_000), None]
        );
        assert_eq!(fmt_time_ns(100_000_000), "100 ms");
        assert_eq!(fmt_time_ns(10_000), "10 µs");
        assert_eq!(fmt_time_ns(21_839_117), "21.839 ms");
        assert_eq!(fmt_time_ns(1_500), "1.5 µs");
        assert_eq!(fmt_time_ns(0), "0 ns");
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse_args(&args(&[])).unwrap().unwrap();
        assert_eq!(
            (o.cfg.nodes, o.cfg.matrix, o.runs.len()),
            (4, Matrix::Uniform, 2)
        );
        assert!(o.cfg.duration_s > 0.0 && o.cfg.duration_s <= 1.0);
        let o = parse_args(&args(&[
            "--no-flowlets",
            "--matrix=one-to-one",
            "--load",
            "0.5",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            (o.runs.clone(), o.cfg.matrix, o.cfg.load),
            (vec![None], Matrix::OneToOne, 0.5)
        );
        assert!(parse_args(&args(&["--matrix", "diagonal"])).is_err());
        assert!(parse_args(&args(&["--load", "1.5"])).is_err());
        assert!(parse_args(&args(&["--rate"])).is_err());
        assert!(parse_args(&args(&["--bogus"])).is_err());
        assert!(parse_args(&args(&["--help"])).unwrap().is_none());
        main(&args(&[
            "--nodes",
            "3",
            "--rate",
            "100M",
            "--duration",
            "10ms",
            "--json",
            "--links",
        ]))
        .unwrap();
        main(&args(&[
            "--nodes",
            "3",
            "--rate",
            "100M",
            "--duration",
            "10ms",
            "--flowlets",
            "1ms",
        ]))
        .unwrap();
    }
}
