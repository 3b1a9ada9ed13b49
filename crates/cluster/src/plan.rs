//! `sluice cluster plan`: how many servers a cluster router of N external ports needs.
//!
//! This follows RouteBricks §3.3 and reproduces its Figure 3. Each server gets as many router
//! ports as it can process (s), which gives S = ⌈N/s⌉ I/O servers. If every I/O server has
//! enough NIC ports left, after its external ones, to link to each of its S − 1 peers at the
//! Direct VLB mesh rate 2sR/S (several parallel ports per peer where one is too slow), the
//! servers form a full mesh. Where only the link rate stands in the way, a few relay-only
//! servers may join the mesh to lower that rate. Otherwise the I/O servers are joined by a
//! k-ary n-fly, where k is the number of internal links an I/O server can make and
//! n = ⌈log_k S⌉. Each of the n stages has S servers, because a stage carries the traffic of
//! all S I/O servers and an intermediate server carries as much as an I/O server does. That
//! makes n·S intermediate servers.
//!
//! [`switched`] prices the design the paper rejected: N servers that each handle one port,
//! joined by 48-port switches. Its cost is counted in servers, at 4 switch ports per server.
//!
//! The model and its assumptions are described in `bench/cluster/README.md`.

use std::collections::HashMap;
use std::fmt::Write as _;

/// Bits a 64-byte packet takes on an Ethernet wire: 64 bytes, plus 8 bytes of preamble and 12
/// bytes of inter-frame gap.
pub const WIRE_BITS_64B: u64 = 84 * 8;

/// Per-core rate of Sluice's Figure 8 IP router, in packets per second, for 64-byte packets
/// (README, Performance: `conf/fake-iprouter.click`, one thread, no NIC I/O).
pub const SLUICE_PPS_PER_CORE: f64 = 18.3e6;

/// Cores assumed for the `today` profile.
pub const TODAY_CORES: u32 = 32;

/// Ports of one switch in the switched cluster.
pub const SWITCH_PORTS: u64 = 48;

/// Switch ports that cost as much as one server (RouteBricks: $500 per port against $2000 per
/// server).
pub const SWITCH_PORTS_PER_SERVER: u64 = 4;

/// Names of the built-in server profiles, in the order of the Figure 3 columns.
pub const PROFILES: [&str; 4] = ["current", "more-nics", "faster", "today"];

/// The largest number of NIC combinations the planner will try for one server.
const MAX_ALLOCATIONS: u64 = 20_000;

const GBPS: u64 = 1_000_000_000;

/// A kind of NIC: `ports` ports of `rate` bits/s each, written `PORTSxRATE` (`2x10G`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nic {
    /// Ports on one card.
    pub ports: u32,
    /// Rate of each port, bits/s.
    pub rate: u64,
}

impl Nic {
    /// Parses `PORTSxRATE`, such as `2x10G` or `8x1Gbps`.
    pub fn parse(s: &str) -> Result<Nic, String> {
        let bad = || {
            format!(
                "bad NIC '{}': expected PORTSxRATE, such as 2x10G or 8x1Gbps",
                s
            )
        };
        let (ports, rate) = s.split_once(['x', 'X']).ok_or_else(bad)?;
        let ports: u32 = ports.trim().parse().map_err(|_| bad())?;
        if ports == 0 || ports > 64 {
            return Err(format!("bad NIC '{}': 1 to 64 ports per NIC", s));
        }
        Ok(Nic {
            ports,
            rate: parse_rate(rate).map_err(|e| format!("bad NIC '{}': {}", s, e))?,
        })
    }
}

impl std::fmt::Display for Nic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}x{}", self.ports, short_rate(self.rate))
    }
}

/// How much traffic a server can process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Capacity {
    /// A fixed number of router ports, whatever the port rate and traffic. The paper's three
    /// profiles state their capacity this way.
    Ports(u32),
    /// A forwarding rate in packets per second for 64-byte packets. The ports it handles are
    /// the rate divided by what one port costs: 2R or 3R (see [`Traffic`]) at
    /// [`WIRE_BITS_64B`] bits per packet.
    PacketRate(f64),
}

/// The traffic matrix a server is sized for. Under Direct VLB a server processes each of its
/// ports' traffic 3 times (3R) in the worst case and 2 times (2R) with a uniform matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Any matrix: 3R per port.
    Worst,
    /// A uniform matrix: 2R per port.
    Uniform,
}

impl Traffic {
    /// Times R that a server processes per router port.
    pub fn factor(self) -> u64 {
        match self {
            Traffic::Worst => 3,
            Traffic::Uniform => 2,
        }
    }
}

/// A server profile: what one cluster server can process and which NICs it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Server {
    /// Profile name, as printed.
    pub name: String,
    /// Router ports it can process.
    pub capacity: Capacity,
    /// NIC slots.
    pub nic_slots: u32,
    /// Kinds of NIC that fit a slot. Any mix may be used, one kind per slot.
    pub nics: Vec<Nic>,
}

impl Server {
    /// A built-in profile, for R = 10 Gb/s.
    ///
    /// - `current`: 1 router port, 5 NIC slots, 2x10G or 8x1G NICs (RouteBricks "current
    ///   servers").
    /// - `more-nics`: 1 router port, 20 slots, the same NICs.
    /// - `faster`: 2 router ports, 20 slots, the same NICs.
    /// - `today`: 8 slots of dual-port 100G NICs. Each 100G port can also be broken out into
    ///   4 × 10G, so a card is 2x100G or 8x10G. The server forwards [`TODAY_CORES`] ×
    ///   [`SLUICE_PPS_PER_CORE`] = 585.6 Mpps, assuming Sluice's one-core Figure 8 router
    ///   rate scales linearly with cores and with the cost of NIC I/O left out. A 10 Gb/s port
    ///   is 14.88 Mpps of 64-byte packets, so that is 13 ports at 3R or 19 ports at 2R.
    pub fn builtin(name: &str) -> Option<Server> {
        let classic = vec![
            Nic {
                ports: 2,
                rate: 10 * GBPS,
            },
            Nic {
                ports: 8,
                rate: GBPS,
            },
        ];
        let (capacity, nic_slots, nics) = match name {
            "current" => (Capacity::Ports(1), 5, classic),
            "more-nics" => (Capacity::Ports(1), 20, classic),
            "faster" => (Capacity::Ports(2), 20, classic),
            "today" => (
                Capacity::PacketRate(SLUICE_PPS_PER_CORE * f64::from(TODAY_CORES)),
                8,
                vec![
                    Nic {
                        ports: 2,
                        rate: 100 * GBPS,
                    },
                    Nic {
                        ports: 8,
                        rate: 10 * GBPS,
                    },
                ],
            ),
            _ => return None,
        };
        Some(Server {
            name: name.to_string(),
            capacity,
            nic_slots,
            nics,
        })
    }

    /// Router ports of `rate` bits/s this server can process (s). The result is at least 0.
    pub fn router_ports(&self, rate: u64, traffic: Traffic) -> u64 {
        match self.capacity {
            Capacity::Ports(s) => u64::from(s),
            Capacity::PacketRate(pps) => {
                let per_port = (traffic.factor() * rate) as f64 / WIRE_BITS_64B as f64;
                // The small margin keeps an exact multiple from rounding down.
                (pps / per_port * (1.0 + 1e-12)).floor() as u64
            }
        }
    }

    /// A one-line description.
    pub fn describe(&self, rate: u64, traffic: Traffic) -> String {
        let nics: Vec<String> = self.nics.iter().map(Nic::to_string).collect();
        let cap = match self.capacity {
            Capacity::Ports(_) => String::new(),
            Capacity::PacketRate(pps) => {
                format!(" ({:.1} Mpps at {}R per port)", pps / 1e6, traffic.factor())
            }
        };
        format!(
            "{} router port(s) per server{}, {} NIC slots, NICs {}",
            self.router_ports(rate, traffic),
            cap,
            self.nic_slots,
            nics.join(" or ")
        )
    }
}

/// How the I/O servers are interconnected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Topology {
    /// One server handles every port, so there is no interconnect.
    Single,
    /// Every server links directly to every other one. Where the I/O servers' ports are too
    /// slow for 2sR/S, the mesh may include relay-only servers (no router ports), which lower
    /// the rate to 2sR/M for a mesh of M servers.
    FullMesh,
    /// A k-ary n-fly of intermediate servers: n stages of S servers each, with k links per
    /// server.
    Fly {
        /// Links per server (fanout).
        k: u64,
        /// Stages of intermediate servers, ⌈log_k S⌉.
        n: u32,
    },
}

/// Internal links of one rate: `links` links, each made of `ports_each` parallel ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkGroup {
    /// Links (peers, in a mesh).
    pub links: u64,
    /// Parallel ports per link.
    pub ports_each: u64,
    /// Rate of each port, bits/s.
    pub port_rate: u64,
}

/// The planner's answer for one router.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// External router ports (N).
    pub ports: u64,
    /// Rate of each router port (R), bits/s.
    pub rate: u64,
    /// Router ports per I/O server (s).
    pub ports_per_server: u64,
    /// I/O servers, S = ⌈N/s⌉.
    pub io_servers: u64,
    /// Intermediate servers: n·S for a fly, the relay-only servers of a padded mesh, else 0.
    pub intermediate_servers: u64,
    /// How the I/O servers are joined.
    pub topology: Topology,
    /// Rate each internal link must carry, bits/s: 2sR/M in a mesh of M servers, 2sR/k in a
    /// fly.
    pub link_rate: f64,
    /// Internal links an I/O server can make at the mesh rate 2sR/S (its mesh fanout).
    pub mesh_fanout: u64,
    /// NICs in each I/O server, as (kind, count).
    pub nics: Vec<(Nic, u32)>,
    /// How one server's internal links are made.
    pub links: Vec<LinkGroup>,
    /// Why this topology, in words.
    pub reason: String,
}

impl Plan {
    /// All servers: I/O and intermediate.
    pub fn total_servers(&self) -> u64 {
        self.io_servers + self.intermediate_servers
    }

    /// Internal links of one I/O server.
    pub fn links_per_server(&self) -> u64 {
        self.links.iter().map(|g| g.links).sum()
    }

    /// Internal NIC ports of one I/O server that carry those links.
    pub fn internal_ports_per_server(&self) -> u64 {
        self.links.iter().map(|g| g.links * g.ports_each).sum()
    }

    /// A short label for tables: `single`, `mesh`, `mesh+X` (X relay-only servers), or
    /// `fly k=K n=N`.
    pub fn label(&self) -> String {
        match self.topology {
            Topology::Single => "single".into(),
            Topology::FullMesh if self.intermediate_servers > 0 => {
                format!("mesh+{}", self.intermediate_servers)
            }
            Topology::FullMesh => "mesh".into(),
            Topology::Fly { k, n } => format!("fly k={} n={}", k, n),
        }
    }
}

/// The NIC combinations a server can hold: for each, the count of each kind in `server.nics`.
fn allocations(server: &Server) -> Result<Vec<Vec<u32>>, String> {
    let kinds = server.nics.len() as u64;
    // C(slots + kinds, kinds): combinations of at most `slots` cards of `kinds` kinds.
    let mut count = 1u64;
    for i in 1..=kinds {
        count = count.saturating_mul(u64::from(server.nic_slots) + i) / i;
    }
    if count > MAX_ALLOCATIONS {
        return Err(format!(
            "{} NIC slots with {} NIC kinds are too many combinations to try; use fewer",
            server.nic_slots, kinds
        ));
    }
    fn fill(kind: usize, left: u32, cur: &mut Vec<u32>, out: &mut Vec<Vec<u32>>, kinds: usize) {
        if kind == kinds {
            out.push(cur.clone());
            return;
        }
        for c in 0..=left {
            cur.push(c);
            fill(kind + 1, left - c, cur, out, kinds);
            cur.pop();
        }
    }
    let mut out = Vec::new();
    fill(
        0,
        server.nic_slots,
        &mut Vec::new(),
        &mut out,
        server.nics.len(),
    );
    Ok(out)
}

/// One NIC combination's ports left for internal links, by rate ascending, after `s`
/// external ports of rate `rate` take the slowest ports that are at least that fast. `None` if
/// the combination lacks ports for the external ones.
fn spare_ports(server: &Server, alloc: &[u32], s: u64, rate: u64) -> Option<Vec<(u64, u64)>> {
    let mut by_rate: Vec<(u64, u64)> = Vec::new();
    for (nic, &count) in server.nics.iter().zip(alloc) {
        let ports = u64::from(nic.ports) * u64::from(count);
        if ports == 0 {
            continue;
        }
        match by_rate.iter_mut().find(|(r, _)| *r == nic.rate) {
            Some((_, p)) => *p += ports,
            None => by_rate.push((nic.rate, ports)),
        }
    }
    by_rate.sort_unstable();
    let mut external = s;
    for (r, p) in by_rate.iter_mut() {
        if *r >= rate {
            let take = external.min(*p);
            *p -= take;
            external -= take;
        }
    }
    (external == 0).then_some(by_rate)
}

/// Links of rate `num/den` bits/s that `spare` ports can make, at most `want`, slower ports
/// first (several parallel ports per link where one is too slow).
fn make_links(spare: &[(u64, u64)], num: u128, den: u128, want: u64) -> Vec<LinkGroup> {
    let mut groups = Vec::new();
    let mut left = want;
    for &(rate, ports) in spare {
        if left == 0 {
            break;
        }
        // ⌈num / (den · rate)⌉, at least 1.
        let each = num.div_ceil(den * u128::from(rate)).max(1);
        let links = (u128::from(ports) / each).min(u128::from(left)) as u64;
        if links > 0 {
            groups.push(LinkGroup {
                links,
                ports_each: each as u64,
                port_rate: rate,
            });
            left -= links;
        }
    }
    groups
}

fn count_links(groups: &[LinkGroup]) -> u64 {
    groups.iter().map(|g| g.links).sum()
}

fn nic_list(server: &Server, alloc: &[u32]) -> Vec<(Nic, u32)> {
    server
        .nics
        .iter()
        .copied()
        .zip(alloc.iter().copied())
        .filter(|&(_, c)| c > 0)
        .collect()
}

/// One NIC combination (the count of each kind) and the ports it leaves for internal links.
struct Candidate {
    alloc: Vec<u32>,
    /// (rate, ports), by rate ascending.
    spare: Vec<(u64, u64)>,
}

/// The NIC combination (fewest cards) whose spare ports make `want` links of rate
/// `num/den`, with those links; else `Err` with the most links any combination makes.
fn best_links(
    spares: &[Candidate],
    num: u128,
    den: u128,
    want: u64,
) -> Result<(Vec<u32>, Vec<LinkGroup>), u64> {
    let mut best: Option<(u32, &Vec<u32>, Vec<LinkGroup>)> = None;
    let mut most = 0;
    for Candidate { alloc, spare } in spares {
        let groups = make_links(spare, num, den, u64::MAX);
        let n = count_links(&groups);
        most = most.max(n);
        if n >= want {
            let cards: u32 = alloc.iter().sum();
            if best.as_ref().is_none_or(|b| cards < b.0) {
                best = Some((cards, alloc, make_links(spare, num, den, want)));
            }
        }
    }
    best.map(|(_, a, g)| (a.clone(), g)).ok_or(most)
}

/// Smallest n with k^n ≥ s (k ≥ 2).
fn stages(k: u64, s: u64) -> u32 {
    let mut n = 0;
    let mut reach: u128 = 1;
    while reach < u128::from(s) {
        reach *= u128::from(k);
        n += 1;
    }
    n
}

/// What one server can do, computed once for a server, port rate and count of external
/// ports: the NIC combinations that hold the external ports, for which mesh sizes M an I/O
/// server can link to its M − 1 peers at 2sR/M, and the largest fly fanout k.
struct Planner<'a> {
    server: &'a Server,
    /// Router ports per server, s.
    s: u64,
    rate: u64,
    spares: Vec<Candidate>,
    /// 2sR, the numerator of every link rate.
    num: u128,
    /// `mesh_ok[m]`: an I/O server makes m − 1 links of 2sR/m.
    mesh_ok: Vec<bool>,
    /// The largest k ≥ 2 for which an I/O server makes k links of 2sR/k.
    fly_k: Option<u64>,
}

impl<'a> Planner<'a> {
    fn new(
        server: &'a Server,
        rate: u64,
        traffic: Traffic,
        externals: u64,
    ) -> Result<Self, String> {
        if rate == 0 {
            return Err("the port rate must be positive".into());
        }
        let s = server.router_ports(rate, traffic);
        if s == 0 {
            return Err(format!(
                "a '{}' server cannot process even one port of {} at {}R",
                server.name,
                fmt_rate(rate as f64),
                traffic.factor()
            ));
        }
        let externals = externals.min(s);
        let spares: Vec<Candidate> = allocations(server)?
            .into_iter()
            .filter_map(|a| {
                spare_ports(server, &a, externals, rate).map(|spare| Candidate { alloc: a, spare })
            })
            .collect();
        if spares.is_empty() {
            return Err(format!(
                "a '{}' server's NIC slots do not hold {} external port(s) of {}",
                server.name,
                externals,
                fmt_rate(rate as f64)
            ));
        }
        let num = 2 * u128::from(s) * u128::from(rate);
        // No server makes more links than it has NIC ports.
        let kmax = u64::from(server.nic_slots)
            * server
                .nics
                .iter()
                .map(|n| u64::from(n.ports))
                .max()
                .unwrap_or(0);
        let mesh_ok = (0..=kmax + 1)
            .map(|m| m >= 2 && best_links(&spares, num, u128::from(m), m - 1).is_ok())
            .collect();
        let fly_k = (2..=kmax)
            .rev()
            .find(|&k| best_links(&spares, num, u128::from(k), k).is_ok());
        Ok(Planner {
            server,
            s,
            rate,
            spares,
            num,
            mesh_ok,
            fly_k,
        })
    }

    /// The smallest mesh of at least `io` servers an I/O server can join.
    fn mesh_size(&self, io: u64) -> Option<u64> {
        (io..self.mesh_ok.len() as u64).find(|&m| self.mesh_ok[m as usize])
    }

    /// The plan for `ports` router ports.
    fn plan(&self, ports: u64) -> Result<Plan, String> {
        let (s, num) = (self.s, self.num);
        let io = ports.div_ceil(s);
        let mut plan = Plan {
            ports,
            rate: self.rate,
            ports_per_server: s,
            io_servers: io,
            intermediate_servers: 0,
            topology: Topology::Single,
            link_rate: 0.0,
            mesh_fanout: 0,
            nics: Vec::new(),
            links: Vec::new(),
            reason: String::new(),
        };
        if io == 1 {
            let fewest = self
                .spares
                .iter()
                .min_by_key(|c| c.alloc.iter().sum::<u32>());
            plan.nics = nic_list(self.server, &fewest.expect("checked by new").alloc);
            plan.reason = format!("N = {} ≤ s = {}: one server handles every port", ports, s);
            return Ok(plan);
        }
        // Direct VLB full mesh: each of the S − 1 peers at 2sR/S.
        let peers = io - 1;
        let mesh_rate = fmt_rate(num as f64 / io as f64);
        plan.mesh_fanout = match best_links(&self.spares, num, u128::from(io), peers) {
            Ok(_) => peers,
            Err(most) => most,
        };
        let fly = self.fly_k.map(|k| (k, stages(k, io)));
        // Else a mesh padded with servers that have no router ports and only relay VLB
        // traffic: more peers, but a lower rate 2sR/M per link, which helps where parallel
        // ports were needed. Else the fly, whichever needs fewer servers.
        let mesh = self
            .mesh_size(io)
            .filter(|&m| m == io || fly.is_none_or(|(_, n)| m < (u64::from(n) + 1) * io));
        let (width, want) = match (mesh, fly) {
            (Some(m), _) => (m, m - 1),
            (None, Some((k, _))) => (k, k),
            (None, None) => {
                return Err(format!(
                    "no topology: {} I/O servers cannot form a full mesh (fanout {} < {} peers) \
                     and a server cannot make even 2 internal links of 2sR/2 = {}",
                    io,
                    plan.mesh_fanout,
                    peers,
                    fmt_rate(num as f64 / 2.0)
                ))
            }
        };
        let (alloc, links) =
            best_links(&self.spares, num, u128::from(width), want).expect("checked by new");
        plan.nics = nic_list(self.server, &alloc);
        plan.links = links;
        plan.link_rate = num as f64 / width as f64;
        let rate = fmt_rate(plan.link_rate);
        if let Some(m) = mesh {
            plan.topology = Topology::FullMesh;
            plan.intermediate_servers = m - io;
            plan.reason = if m == io {
                format!(
                    "fanout ≥ {} peers at 2sR/S = {} per link: full mesh feasible",
                    peers, rate
                )
            } else {
                format!(
                    "fanout {} < {} peers at 2sR/S = {} per link: full mesh of the I/O servers \
                     infeasible; {} more server(s) without router ports, relaying VLB traffic, \
                     lower the rate to 2sR/{} = {}: full mesh of {}",
                    plan.mesh_fanout,
                    peers,
                    mesh_rate,
                    m - io,
                    m,
                    rate,
                    m
                )
            };
        } else if let Some((k, n)) = fly {
            plan.topology = Topology::Fly { k, n };
            plan.intermediate_servers = u64::from(n) * io;
            plan.reason = format!(
                "fanout {} < {} peers at 2sR/S = {} per link: full mesh infeasible; \
                 a {}-ary n-fly (2sR/k = {} per link) needs n = ⌈log_{} {}⌉ = {} stage(s) \
                 of {} servers",
                plan.mesh_fanout, peers, mesh_rate, k, rate, k, io, n, io
            );
        }
        Ok(plan)
    }
}

/// Plans a router of `ports` external ports of `rate` bits/s built from `server`s sized for
/// `traffic` (RouteBricks §3.3; see the module documentation).
pub fn plan(server: &Server, ports: u64, rate: u64, traffic: Traffic) -> Result<Plan, String> {
    if ports == 0 {
        return Err("a router needs at least one port".into());
    }
    Planner::new(server, rate, traffic, ports)?.plan(ports)
}

/// The largest N ≤ `limit` for which `server` needs no n-fly (a single server or a full
/// mesh), or 0 if it cannot handle one port. Only the largest N of each S is tried: the
/// topology depends on S alone.
pub fn max_full_mesh(server: &Server, rate: u64, traffic: Traffic, limit: u64) -> u64 {
    let Ok(one) = Planner::new(server, rate, traffic, u64::MAX) else {
        return 0;
    };
    let mut best = 0;
    for io in 1..=one.mesh_ok.len() as u64 {
        if (io - 1) * one.s >= limit {
            break;
        }
        let n = (io * one.s).min(limit);
        if matches!(one.plan(n), Ok(p) if !matches!(p.topology, Topology::Fly { .. })) {
            best = n;
        }
    }
    best
}

/// One level of a folded, strictly non-blocking 3-stage Clos network of switches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clos {
    /// Terminal ports the network offers.
    pub ports: u64,
    /// Terminal ports on each edge switch (n).
    pub edge_ports: u64,
    /// Edge switches, r = ⌈ports/n⌉.
    pub edges: u64,
    /// Middle switches, m = 2n − 1 (Clos's condition for strict non-blocking). Each has r
    /// ports, one to each edge switch.
    pub middles: u64,
    /// Physical switches in all: r edge switches and m middle networks of r ports each.
    pub switches: u64,
}

/// Physical `radix`-port switches in a strictly non-blocking network of `ports` full-duplex
/// ports, and the top level of that network (`None` when one switch is enough).
///
/// A network with more than `radix` ports is a folded 3-stage Clos. It has r edge switches,
/// each with n terminal ports and m = 2n − 1 uplinks, so n + m ≤ radix. It also has m middle
/// networks of r ports each, with one port to every edge switch. A middle network that is too
/// big for one switch is built the same way, recursively; a 3-stage Clos whose middle stages
/// are strictly non-blocking networks is itself strictly non-blocking. The n that needs the
/// fewest switches in all is chosen.
pub fn clos(ports: u64, radix: u64) -> (u64, Option<Clos>) {
    fn cost(
        ports: u64,
        radix: u64,
        memo: &mut HashMap<u64, (u64, Option<Clos>)>,
    ) -> (u64, Option<Clos>) {
        if ports <= radix {
            return (1, None);
        }
        if let Some(&c) = memo.get(&ports) {
            return c;
        }
        let mut best: Option<Clos> = None;
        // n ≥ 2, so each middle network has fewer ports than this one.
        for n in 2..=(radix + 1) / 3 {
            let r = ports.div_ceil(n);
            let m = 2 * n - 1;
            let middle = cost(r, radix, memo).0;
            let switches = r + m * middle;
            if best.is_none_or(|b| switches < b.switches) {
                best = Some(Clos {
                    ports,
                    edge_ports: n,
                    edges: r,
                    middles: m,
                    switches,
                });
            }
        }
        let out = (best.map_or(u64::MAX, |b| b.switches), best);
        memo.insert(ports, out);
        out
    }
    assert!(radix >= 5, "a Clos needs switches of at least 5 ports");
    cost(ports, radix, &mut HashMap::new())
}

/// The switched cluster the paper rejected: N servers, one router port each (processing 2R),
/// joined by a strictly non-blocking network of [`SWITCH_PORTS`]-port switches (see [`clos`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Switched {
    /// Router ports, N.
    pub ports: u64,
    /// Servers, N.
    pub servers: u64,
    /// Whole switches bought.
    pub switches: u64,
    /// The network's top level, `None` for a single switch.
    pub clos: Option<Clos>,
    /// Servers plus the switches' cost in servers, [`SWITCH_PORTS_PER_SERVER`] switch ports
    /// (all ports of every switch bought) per server, rounded up.
    pub server_equivalents: u64,
}

/// Prices the switched cluster for `ports` router ports.
pub fn switched(ports: u64) -> Switched {
    let (switches, clos) = clos(ports, SWITCH_PORTS);
    let cost = (switches * SWITCH_PORTS).div_ceil(SWITCH_PORTS_PER_SERVER);
    Switched {
        ports,
        servers: ports,
        switches,
        clos,
        server_equivalents: ports + cost,
    }
}

/// Parses a rate in bits per second: a number with an optional unit `k`, `M`, `G` or `T`,
/// optionally followed by `bps` or `b/s` (`10Gbps`, `10G`, `100Mb/s`, `1000000000`). Bytes
/// (`GBps`, `GB/s`) are refused.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let bad = || {
        format!(
            "bad rate '{}': expected bits per second, such as 10Gbps or 1G",
            s
        )
    };
    if t.ends_with("Bps") || t.ends_with("B/s") {
        return Err(format!(
            "bad rate '{}': give bits per second (Gbps), not bytes",
            s
        ));
    }
    let t = t
        .strip_suffix("bps")
        .or_else(|| t.strip_suffix("b/s"))
        .unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult: f64 = match c {
                'k' | 'K' => 1e3,
                'm' | 'M' => 1e6,
                'g' | 'G' => 1e9,
                't' | 'T' => 1e12,
                _ => return Err(bad()),
            };
            (&t[..i], mult)
        }
        _ => (t, 1.0),
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    let bits = (v * mult).round();
    if !(1.0..=1e18).contains(&bits) {
        return Err(bad());
    }
    Ok(bits as u64)
}

/// A rate for people: `10 Gb/s`, `625 Mb/s`, `19.5 Mb/s` (three significant digits).
pub fn fmt_rate(bps: f64) -> String {
    let (v, unit) = if bps >= 1e12 {
        (bps / 1e12, "Tb/s")
    } else if bps >= 1e9 {
        (bps / 1e9, "Gb/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mb/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kb/s")
    } else {
        (bps, "b/s")
    };
    let decimals = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let mut text = format!("{:.*}", decimals, v);
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    format!("{} {}", text, unit)
}

/// A rate in NIC notation: `10G`, `100G`, `1G`, `2.5G`, `100M`.
fn short_rate(bps: u64) -> String {
    let r = fmt_rate(bps as f64);
    let (v, unit) = r.split_once(' ').unwrap_or((&r, ""));
    format!("{}{}", v, unit.trim_end_matches("b/s"))
}

/// Usage of `sluice cluster plan`.
pub const USAGE: &str = "\
Usage: sluice cluster plan --ports N [OPTIONS]
       sluice cluster plan --figure3 [--max-ports N] [OPTIONS]

How many servers a cluster router of N external ports needs (RouteBricks §3.3): each server
takes as many router ports as it can process (s), giving S = ceil(N/s) I/O servers; they form
a Direct VLB full mesh if each can link to all S-1 peers at 2sR/S, else a k-ary n-fly with
n = ceil(log_k S) stages of S intermediate servers.

Options:
  --ports N            external router ports
  --rate RATE          rate R of each router port (default 10Gbps)
  --server PROFILE     current | more-nics | faster | today (default current)
  --server-ports S     router ports a server processes (overrides the profile's capacity)
  --server-mpps MPPS   or: a server's forwarding rate, Mpps of 64-byte packets; s is that
                       over 3R per port (2R with --uniform)
  --nic-slots K        NIC slots per server (overrides the profile's)
  --nic PORTSxRATE     a kind of NIC, such as 2x10G or 8x1G; repeat for each kind
                       (replaces the profile's NICs)
  --uniform            size servers for a uniform traffic matrix (2R per port, not 3R)
  --figure3, --csv     print Figure 3 as CSV: total servers for N = 4, 8, ... for every
                       built-in profile (and the custom server, if any) and the switched
                       cluster of 48-port switches (4 switch ports cost 1 server)
  --max-ports N        largest N in the CSV (default 2048)
  -h, --help           this text

Profiles (R = 10 Gb/s; paper's NICs: 2x10G or 8x1G):
  current    1 port per server, 5 NIC slots
  more-nics  1 port per server, 20 NIC slots
  faster     2 ports per server, 20 NIC slots
  today      8 slots of 2x100G NICs (or 8x10G by breakout), 32 cores at Sluice's
             18.3 Mpps per core: 13 ports at 3R, 19 at 2R
";

/// Parsed command line.
#[derive(Debug)]
struct Args {
    ports: Option<u64>,
    rate: u64,
    server: Server,
    custom: bool,
    traffic: Traffic,
    csv: bool,
    max_ports: u64,
    help: bool,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut ports = None;
    let mut rate = 10 * GBPS;
    let mut profile: Option<String> = None;
    let mut server_ports: Option<u32> = None;
    let mut server_mpps: Option<f64> = None;
    let mut slots: Option<u32> = None;
    let mut nics: Vec<Nic> = Vec::new();
    let mut traffic = Traffic::Worst;
    let mut csv = false;
    let mut max_ports = 2048;
    let mut help = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = || -> Result<String, String> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => it
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("plan: {} needs a value", name)),
            }
        };
        let count = |v: String, what: &str| -> Result<u64, String> {
            v.parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("plan: bad {} '{}': expected a positive integer", what, v))
        };
        match name {
            "--ports" => ports = Some(count(value()?, "--ports")?),
            "--rate" => rate = parse_rate(&value()?).map_err(|e| format!("plan: {}", e))?,
            "--server" => profile = Some(value()?),
            "--server-ports" => {
                let v = count(value()?, "--server-ports")?;
                server_ports = Some(u32::try_from(v).map_err(|_| "plan: --server-ports too big")?);
            }
            "--server-mpps" => {
                let v = value()?;
                let mpps = v.parse::<f64>().ok().filter(|m| m.is_finite() && *m > 0.0);
                server_mpps = Some(mpps.ok_or_else(|| {
                    format!(
                        "plan: bad --server-mpps '{}': expected a positive number",
                        v
                    )
                })?);
            }
            "--nic-slots" => {
                let v = count(value()?, "--nic-slots")?;
                slots = Some(u32::try_from(v).map_err(|_| "plan: --nic-slots too big")?);
            }
            "--nic" => nics.push(Nic::parse(&value()?).map_err(|e| format!("plan: {}", e))?),
            "--uniform" => traffic = Traffic::Uniform,
            "--figure3" | "--csv" => csv = true,
            "--max-ports" => max_ports = count(value()?, "--max-ports")?,
            "-h" | "--help" => help = true,
            other => {
                return Err(format!(
                    "plan: unknown option '{}' (see `sluice cluster plan --help`)",
                    other
                ))
            }
        }
    }
    if server_ports.is_some() && server_mpps.is_some() {
        return Err("plan: give --server-ports or --server-mpps, not both".into());
    }
    if max_ports > 1 << 20 {
        return Err("plan: --max-ports at most 1048576".into());
    }
    if nics.len() > 4 {
        return Err("plan: at most 4 --nic kinds".into());
    }
    let name = profile.unwrap_or_else(|| "current".into());
    let mut server = Server::builtin(&name).ok_or_else(|| {
        format!(
            "plan: unknown server profile '{}' (known: {})",
            name,
            PROFILES.join(", ")
        )
    })?;
    let custom =
        server_ports.is_some() || server_mpps.is_some() || slots.is_some() || !nics.is_empty();
    if custom {
        server.name = format!("{} (modified)", server.name);
    }
    if let Some(s) = server_ports {
        server.capacity = Capacity::Ports(s);
    }
    if let Some(m) = server_mpps {
        server.capacity = Capacity::PacketRate(m * 1e6);
    }
    if let Some(k) = slots {
        server.nic_slots = k;
    }
    if !nics.is_empty() {
        server.nics = nics;
    }
    if !csv && !help && ports.is_none() {
        return Err(
            "plan: --ports N is required, or --figure3 (see `sluice cluster plan --help`)".into(),
        );
    }
    Ok(Args {
        ports,
        rate,
        server,
        custom,
        traffic,
        csv,
        max_ports,
        help,
    })
}

/// The Figure 3 table as CSV: for N = 4, 8, …, `max_ports`, the total servers of each server
/// in `servers`, then the switched cluster's server-equivalents, then each server's topology.
pub fn figure3_csv(
    servers: &[Server],
    rate: u64,
    traffic: Traffic,
    max_ports: u64,
) -> Result<String, String> {
    let mut out = String::from("ports");
    for s in servers {
        let _ = write!(out, ",{}", s.name);
    }
    out.push_str(",switched-48");
    for s in servers {
        let _ = write!(out, ",{} topology", s.name);
    }
    out.push('\n');
    let mut n = 4;
    while n <= max_ports {
        let plans: Vec<Plan> = servers
            .iter()
            .map(|s| plan(s, n, rate, traffic))
            .collect::<Result<_, _>>()?;
        let _ = write!(out, "{}", n);
        for p in &plans {
            let _ = write!(out, ",{}", p.total_servers());
        }
        let _ = write!(out, ",{}", switched(n).server_equivalents);
        for p in &plans {
            let _ = write!(out, ",{}", p.label());
        }
        out.push('\n');
        n *= 2;
    }
    Ok(out)
}

/// The answer for one router, in words and numbers.
pub fn report(server: &Server, p: &Plan, traffic: Traffic) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "router: {} ports of {} on '{}' servers ({})",
        p.ports,
        fmt_rate(p.rate as f64),
        server.name,
        server.describe(p.rate, traffic)
    );
    let topology = match p.topology {
        Topology::Single => "single server".to_string(),
        Topology::FullMesh => "full mesh (Direct VLB)".to_string(),
        Topology::Fly { k, n } => format!("{}-ary {}-fly (k = {}, n = {})", k, n, k, n),
    };
    let _ = writeln!(out, "topology: {}", topology);
    let _ = writeln!(
        out,
        "I/O servers: {} (s = {} router port(s) each)",
        p.io_servers, p.ports_per_server
    );
    let _ = writeln!(out, "intermediate servers: {}", p.intermediate_servers);
    let _ = writeln!(
        out,
        "total servers: {} ({:.2} per router port)",
        p.total_servers(),
        p.total_servers() as f64 / p.ports as f64
    );
    if p.topology != Topology::Single {
        let _ = writeln!(out, "internal link rate: {}", fmt_rate(p.link_rate));
        let groups: Vec<String> = p
            .links
            .iter()
            .map(|g| {
                format!(
                    "{} x {} x {}",
                    g.links,
                    g.ports_each,
                    short_rate(g.port_rate)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "links per server: {} on {} NIC ports ({}; links x ports each x port rate)",
            p.links_per_server(),
            p.internal_ports_per_server(),
            groups.join(", ")
        );
    }
    let nics: Vec<String> = p
        .nics
        .iter()
        .map(|(n, c)| format!("{} x {}", c, n))
        .collect();
    let _ = writeln!(out, "NICs per I/O server: {}", nics.join(", "));
    let _ = writeln!(out, "why: {}", p.reason);
    let sw = switched(p.ports);
    let layout =
        match sw.clos {
            None => "one switch".to_string(),
            Some(c) => format!(
            "folded Clos: {} edge switches of {} server ports + {} uplinks, {} middle {} of {} \
             ports",
            c.edges,
            c.edge_ports,
            c.middles,
            c.middles,
            if c.edges > SWITCH_PORTS { "Clos networks" } else { "switches" },
            c.edges
        ),
        };
    let _ = writeln!(
        out,
        "switched alternative: {} servers + {} {}-port switches ({}) = {} server-equivalents",
        sw.servers, sw.switches, SWITCH_PORTS, layout, sw.server_equivalents
    );
    out
}

/// Runs `sluice cluster plan ARGS`; an error is a message for the user.
pub fn main(args: &[String]) -> Result<(), String> {
    let a = parse_args(args)?;
    if a.help {
        return emit(USAGE);
    }
    if a.csv {
        let mut servers: Vec<Server> = PROFILES
            .iter()
            .map(|n| Server::builtin(n).expect("built-in profile"))
            .collect();
        if a.custom {
            servers.push(a.server.clone());
        }
        let csv = figure3_csv(&servers, a.rate, a.traffic, a.max_ports)
            .map_err(|e| format!("plan: {}", e))?;
        return emit(&csv);
    }
    let ports = a.ports.expect("checked by parse_args");
    let p = plan(&a.server, ports, a.rate, a.traffic).map_err(|e| format!("plan: {}", e))?;
    let mut out = report(&a.server, &p, a.traffic);
    let max = max_full_mesh(&a.server, a.rate, a.traffic, u64::MAX);
    let _ = writeln!(
        out,
        "full mesh (no n-fly) up to N = {} with this server",
        max
    );
    emit(&out)
}

/// Writes `text` to standard output; a reader that went away (`| head`) is not an error.
fn emit(text: &str) -> Result<(), String> {
    use std::io::Write;
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("plan: {}", e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R: u64 = 10 * GBPS;

    fn p(profile: &str, n: u64) -> Plan {
        plan(&Server::builtin(profile).unwrap(), n, R, Traffic::Worst).unwrap()
    }

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn current_32_is_a_full_mesh_of_32() {
        let q = p("current", 32);
        assert_eq!(q.topology, Topology::FullMesh);
        assert_eq!(
            (q.io_servers, q.intermediate_servers, q.total_servers()),
            (32, 0, 32)
        );
        // 2 · 10 Gb/s / 32 = 625 Mb/s: one 1G port per peer, 31 peers.
        assert_eq!(q.link_rate, 625e6);
        assert_eq!(
            q.links,
            vec![LinkGroup {
                links: 31,
                ports_each: 1,
                port_rate: GBPS
            }]
        );
        // The external 10G port needs a 2x10G card; 31 1G ports need 4 8x1G cards.
        assert_eq!(
            q.nics,
            vec![
                (Nic { ports: 2, rate: R }, 1),
                (
                    Nic {
                        ports: 8,
                        rate: GBPS
                    },
                    4
                )
            ]
        );
    }

    #[test]
    fn current_mesh_limit_counts_the_spare_10g_port() {
        // 32 1G ports plus the second port of the 2x10G card: 33 peers, so N = 34.
        assert_eq!(p("current", 34).topology, Topology::FullMesh);
        let q = p("current", 35);
        assert_eq!(q.mesh_fanout, 33);
        assert_eq!(q.topology, Topology::Fly { k: 33, n: 2 });
        let cur = Server::builtin("current").unwrap();
        assert_eq!(max_full_mesh(&cur, R, Traffic::Worst, 4096), 34);
    }

    #[test]
    fn a_relay_server_rescues_a_mesh_whose_links_are_too_slow() {
        // N = 19: 2 · 10 / 19 = 1.05 Gb/s per peer needs two 1G ports: 16 peers on 32 1G
        // ports and 1 on the 10G port, 17 < 18. A 20th server without router ports lowers
        // the rate to 1 Gb/s: 19 peers on single ports.
        let q = p("current", 19);
        assert_eq!(q.mesh_fanout, 17);
        assert_eq!(q.topology, Topology::FullMesh);
        assert_eq!((q.io_servers, q.intermediate_servers), (19, 1));
        assert_eq!(q.link_rate, 1e9);
        assert_eq!(q.label(), "mesh+1");
        // N = 18 and 20 need no relay.
        assert_eq!(p("current", 18).total_servers(), 18);
        assert_eq!(p("current", 20).total_servers(), 20);
    }

    #[test]
    fn current_64_needs_a_fly() {
        let q = p("current", 64);
        assert_eq!(q.topology, Topology::Fly { k: 33, n: 2 });
        assert_eq!(
            (q.io_servers, q.intermediate_servers, q.total_servers()),
            (64, 128, 192)
        );
        assert!(q.reason.contains("fanout 33 < 63 peers"), "{}", q.reason);
        // 2sR/k = 20/33 Gb/s fits a 1G port.
        assert!((q.link_rate - 20e9 / 33.0).abs() < 1.0);
        assert_eq!(q.links_per_server(), 33);
    }

    #[test]
    fn current_1024_needs_two_intermediate_servers_per_port() {
        let q = p("current", 1024);
        assert_eq!(q.topology, Topology::Fly { k: 33, n: 2 });
        assert_eq!(q.intermediate_servers, 2 * 1024);
        assert_eq!(q.total_servers(), 3072);
        // 2048 ports: 33² = 1089 < 2048, so three stages.
        assert_eq!(p("current", 2048).topology, Topology::Fly { k: 33, n: 3 });
        assert_eq!(p("current", 2048).total_servers(), 4 * 2048);
    }

    #[test]
    fn more_nics_and_faster_mesh_limits() {
        assert_eq!(p("more-nics", 128).topology, Topology::FullMesh);
        assert_eq!(p("more-nics", 256).topology, Topology::Fly { k: 153, n: 2 });
        let more = Server::builtin("more-nics").unwrap();
        assert_eq!(max_full_mesh(&more, R, Traffic::Worst, 4096), 154);
        // Faster: s = 2, so 128 servers for 256 ports, 127 peers ≤ 152 1G ports.
        let q = p("faster", 256);
        assert_eq!((q.topology, q.io_servers), (Topology::FullMesh, 128));
        let q = p("faster", 512);
        assert_eq!(q.topology, Topology::Fly { k: 152, n: 2 });
        assert_eq!(q.total_servers(), 3 * 256);
        // The paper's N = 2048 mesh would need 1023 peers; the server has 160 ports at most.
        let q = p("faster", 2048);
        assert_ne!(q.topology, Topology::FullMesh);
        assert_eq!(q.total_servers(), 3 * 1024);
        let faster = Server::builtin("faster").unwrap();
        assert_eq!(max_full_mesh(&faster, R, Traffic::Worst, 4096), 306);
    }

    #[test]
    fn slow_links_use_parallel_ports() {
        // Faster, N = 4: 2 servers, 1 peer at 2 · 2 · 10 / 2 = 20 Gb/s: two 10G ports.
        let q = p("faster", 4);
        assert_eq!((q.topology, q.io_servers), (Topology::FullMesh, 2));
        assert_eq!(
            q.links,
            vec![LinkGroup {
                links: 1,
                ports_each: 2,
                port_rate: R
            }]
        );
        assert_eq!(q.nics, vec![(Nic { ports: 2, rate: R }, 2)]);
        // Current, N = 2: 1 peer at 10 Gb/s, the 2x10G card's second port.
        let q = p("current", 2);
        assert_eq!(
            q.links,
            vec![LinkGroup {
                links: 1,
                ports_each: 1,
                port_rate: R
            }]
        );
        // One server: no interconnect.
        let q = p("faster", 2);
        assert_eq!((q.topology, q.total_servers()), (Topology::Single, 1));
    }

    #[test]
    fn today_ports_from_the_measured_rate() {
        let t = Server::builtin("today").unwrap();
        // 585.6 Mpps over 3 · 14.88 Mpps = 13.1; over 2 · 14.88 = 19.7.
        assert_eq!(t.router_ports(R, Traffic::Worst), 13);
        assert_eq!(t.router_ports(R, Traffic::Uniform), 19);
        // 1024 ports: 79 servers; 8 cards broken out to 64 10G ports, 13 external, 51 links
        // of 2 · 13 · 10 / 51 = 5.1 Gb/s; 51 < 78 peers.
        let q = p("today", 1024);
        assert_eq!(q.io_servers, 79);
        assert_eq!(q.topology, Topology::Fly { k: 51, n: 2 });
        assert_eq!(q.total_servers(), 3 * 79);
        // 52 servers: 51 peers at exactly 10 Gb/s each.
        assert_eq!(max_full_mesh(&t, R, Traffic::Worst, 4096), 52 * 13);
    }

    #[test]
    fn clos_counts() {
        assert_eq!(clos(48, 48), (1, None));
        // 49 ports: min over n of ⌈49/n⌉ + (2n − 1); n = 5 gives 10 + 9 = 19.
        let (sw, c) = clos(49, 48);
        assert_eq!(sw, 19);
        assert_eq!(c.unwrap().edge_ports, 5);
        // 768 = 16 · 48: 48 edge switches of 16 ports + 31 uplinks, 31 middle switches.
        let (sw, c) = clos(768, 48);
        assert_eq!(sw, 48 + 31);
        assert_eq!(
            c.unwrap(),
            Clos {
                ports: 768,
                edge_ports: 16,
                edges: 48,
                middles: 31,
                switches: 79
            }
        );
        // 769 needs middle networks of more than 48 ports: a 5-stage network.
        assert!(clos(769, 48).0 > 79 + 19);
        // Every middle network must be strictly non-blocking: m = 2n − 1, n + m ≤ radix.
        let c = clos(5000, 48).1.unwrap();
        assert_eq!(c.middles, 2 * c.edge_ports - 1);
        assert!(c.edge_ports + c.middles <= 48);
    }

    #[test]
    fn switched_cost_in_servers() {
        // 32 servers and one 48-port switch: 48 / 4 = 12 servers' worth.
        assert_eq!(switched(32).server_equivalents, 44);
        assert_eq!(switched(49).server_equivalents, 49 + 19 * 12);
        // More than the server-based cluster, as in the paper, for most N.
        for n in [64, 256, 1024, 2048] {
            assert!(switched(n).server_equivalents > p("current", n).total_servers());
        }
        // But not at 512, where 63 switches (32 edge + 31 middle) cost 756 servers and the
        // 33-ary 2-fly needs 1024 intermediate servers.
        assert_eq!(switched(512).server_equivalents, 512 + 63 * 12);
        assert!(switched(512).server_equivalents < p("current", 512).total_servers());
        assert!(switched(512).server_equivalents > p("faster", 512).total_servers());
    }

    #[test]
    fn rates_parse_and_print() {
        assert_eq!(parse_rate("10Gbps"), Ok(10 * GBPS));
        assert_eq!(parse_rate("1G"), Ok(GBPS));
        assert_eq!(parse_rate("100Mb/s"), Ok(100_000_000));
        assert_eq!(parse_rate("2.5G"), Ok(2_500_000_000));
        assert!(parse_rate("10GBps").unwrap_err().contains("not bytes"));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("0").is_err());
        assert_eq!(fmt_rate(625e6), "625 Mb/s");
        assert_eq!(fmt_rate(20e9 / 1024.0), "19.5 Mb/s");
        assert_eq!(fmt_rate(10e9), "10 Gb/s");
        assert_eq!(
            Nic::parse("8x1Gbps"),
            Ok(Nic {
                ports: 8,
                rate: GBPS
            })
        );
        assert_eq!(Nic::parse("2x100G").unwrap().to_string(), "2x100G");
        assert!(Nic::parse("2x").is_err());
        assert!(Nic::parse("0x10G").is_err());
    }

    #[test]
    fn command_line() {
        let a = parse_args(&argv(
            "--ports 64 --server-ports 2 --nic-slots 3 --nic 2x10G",
        ))
        .unwrap();
        assert_eq!(a.server.capacity, Capacity::Ports(2));
        assert_eq!((a.server.nic_slots, a.server.nics.len()), (3, 1));
        assert!(a.custom);
        // 32 servers, 31 peers, but 3 cards give 6 ports, 2 of them external: no mesh; k = 4
        // links of 2 · 2 · 10 / 4 = 10 Gb/s.
        let q = plan(&a.server, 64, a.rate, a.traffic).unwrap();
        assert_eq!(q.topology, Topology::Fly { k: 4, n: 3 });
        let a = parse_args(&argv("--ports=8 --rate=1G --server today --uniform")).unwrap();
        assert_eq!(
            (a.ports, a.rate, a.traffic),
            (Some(8), GBPS, Traffic::Uniform)
        );
        assert!(parse_args(&argv("--server nope --ports 4"))
            .unwrap_err()
            .contains("unknown server"));
        assert!(parse_args(&argv("--rate 10G"))
            .unwrap_err()
            .contains("--ports N is required"));
        assert!(parse_args(&argv("--ports 0"))
            .unwrap_err()
            .contains("positive integer"));
        assert!(parse_args(&argv("--ports"))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse_args(&argv("--ports 4 --bogus"))
            .unwrap_err()
            .contains("unknown option"));
        assert!(parse_args(&argv("--figure3")).is_ok());
        // A server that cannot hold its external port.
        let s = Server {
            name: "x".into(),
            capacity: Capacity::Ports(1),
            nic_slots: 2,
            nics: vec![Nic {
                ports: 8,
                rate: GBPS,
            }],
        };
        assert!(plan(&s, 4, R, Traffic::Worst)
            .unwrap_err()
            .contains("do not hold"));
        // Too slow a server for one port.
        let s = Server {
            capacity: Capacity::PacketRate(1e6),
            ..Server::builtin("today").unwrap()
        };
        assert!(plan(&s, 4, R, Traffic::Worst)
            .unwrap_err()
            .contains("cannot process"));
    }

    #[test]
    fn figure3_table() {
        let servers: Vec<Server> = PROFILES
            .iter()
            .map(|n| Server::builtin(n).unwrap())
            .collect();
        let csv = figure3_csv(&servers, R, Traffic::Worst, 2048).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], "ports,current,more-nics,faster,today,switched-48,current topology,more-nics topology,faster topology,today topology");
        // N = 4 .. 2048: 10 rows.
        assert_eq!(lines.len(), 11);
        assert!(lines[4].starts_with("32,32,32,16,"), "{}", lines[4]);
        assert!(
            lines[9].starts_with("1024,3072,3072,1536,237,"),
            "{}",
            lines[9]
        );
    }
}
