//! The cluster description: one TOML file that says what a cluster router is made of.
//!
//! ```toml
//! name = "rb4"            # [a-z0-9-], names the namespaces and the output directory
//! rate = "100Mbps"        # R, the rate of every external port (Click bandwidth)
//! flowlet = "100ms"       # flowlet gap δ, or "off"
//! # link_rate = "50Mbps"  # internal link capacity (default 2·R·ports_per_node/N)
//! # burst = 16384         # meter depth in bytes (default: DirectVLB's)
//! # hello = "10ms"        # hello interval;  dead = "50ms": silence before a link is down
//!
//! [[node]]
//! name = "n1"             # [a-z0-9-], at most 12 characters
//! [[node.port]]           # external ports, in order (port 0, 1, ...)
//! device = "ext0"         # default ext0, ext1, ...
//! address = "198.18.1.1/24"
//! # ether = "02:53:4c:00:00:00"  # default derived from the node and port index
//! # mtu = 1500
//! routes = ["198.19.0.0/16 198.18.1.254"]  # "PREFIX" or "PREFIX GATEWAY"
//! host = "198.18.1.2/24"  # `cluster up`: a host namespace on this port
//!
//! [[link]]                # optional: internal link device names (default to-<peer>)
//! a = "n1"
//! b = "n2"
//! a_device = "n1n2"
//! b_device = "n2n1"
//! ```
//!
//! [`parse`] checks everything `sluice cluster build` and `up` rely on and names the field
//! at fault; the result ([`Cluster`]) is complete: every default is filled in.

use std::collections::HashMap;
use std::fmt;
use std::net::Ipv4Addr;

use serde::Deserialize;
use sluice_elements::threads::synthetic_load::parse_size;
use sluice_lang::args::{Bandwidth, FromArg, Seconds};

/// The largest cluster: DirectVLB keeps reachability as one 64-bit mask per node.
pub const MAX_NODES: usize = 64;
/// The most external ports of one node (ClusterEncap's PORT is 0 to 254).
pub const MAX_PORTS: usize = 255;
/// The longest node name (so that the default link device `to-NAME` is a valid interface name).
pub const MAX_NODE_NAME: usize = 12;
/// The longest Linux interface name.
pub const MAX_IFNAME: usize = 15;

/// An IPv4 prefix `ADDR/LEN`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Prefix {
    /// The address (for a route, the network: host bits are zero).
    pub addr: Ipv4Addr,
    /// The prefix length, 0 to 32.
    pub len: u8,
}

impl Prefix {
    /// The netmask as a number.
    pub fn mask(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - self.len)
        }
    }

    /// The network address.
    pub fn network(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) & self.mask())
    }

    /// The subnet broadcast address.
    pub fn broadcast(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) | !self.mask())
    }

    /// The prefix `network/len`.
    pub fn net(&self) -> Prefix {
        Prefix {
            addr: self.network(),
            len: self.len,
        }
    }

    /// Whether `a` lies inside this prefix.
    pub fn contains(&self, a: Ipv4Addr) -> bool {
        u32::from(a) & self.mask() == u32::from(self.network())
    }

    /// Whether the two prefixes share an address.
    pub fn overlaps(&self, o: &Prefix) -> bool {
        let m = self.mask() & o.mask();
        u32::from(self.addr) & m == u32::from(o.addr) & m
    }

    /// The subnet's network and broadcast addresses, which are not hosts (none for /31, /32).
    pub fn special_addrs(&self) -> Vec<Ipv4Addr> {
        if self.len <= 30 {
            vec![self.network(), self.broadcast()]
        } else {
            Vec::new()
        }
    }

    /// Parses `A.B.C.D/LEN`.
    pub fn parse(s: &str) -> Result<Prefix, String> {
        let (a, l) = s
            .trim()
            .split_once('/')
            .ok_or_else(|| format!("'{s}' is not ADDR/LEN"))?;
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("'{a}' is not an IPv4 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|l| *l <= 32)
            .ok_or_else(|| format!("'{l}' is not a prefix length (0 to 32)"))?;
        Ok(Prefix { addr, len })
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

/// An Ethernet address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ether(pub [u8; 6]);

impl Ether {
    /// Parses `xx:xx:xx:xx:xx:xx` (or with `-`).
    pub fn parse(s: &str) -> Result<Ether, String> {
        let parts: Vec<&str> = s.trim().split([':', '-']).collect();
        let mut b = [0u8; 6];
        if parts.len() != 6 {
            return Err(format!(
                "'{s}' is not an Ethernet address (xx:xx:xx:xx:xx:xx)"
            ));
        }
        for (i, p) in parts.iter().enumerate() {
            b[i] = (p.len() <= 2)
                .then(|| u8::from_str_radix(p, 16).ok())
                .flatten()
                .ok_or_else(|| format!("'{s}' is not an Ethernet address (xx:xx:xx:xx:xx:xx)"))?;
        }
        Ok(Ether(b))
    }

    /// The default address of port `port` of node `node`: locally administered, unicast,
    /// `02:53:4c:00:NODE:PORT` ("SL").
    pub fn derived(node: usize, port: usize) -> Ether {
        Ether([0x02, 0x53, 0x4c, 0x00, node as u8, port as u8])
    }
}

impl fmt::Display for Ether {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

/// A route through an external port: `prefix` reached directly or through `gateway`.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    /// The destinations (host bits zero).
    pub prefix: Prefix,
    /// The next hop, inside the port's subnet; `None`: the destinations are on the link.
    pub gateway: Option<Ipv4Addr>,
}

/// One external port of a node.
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    /// The interface name (in the node's namespace under `cluster up`).
    pub device: String,
    /// The port's address and subnet.
    pub address: Prefix,
    /// The port's Ethernet address.
    pub ether: Ether,
    /// The largest IP packet sent on the port.
    pub mtu: u32,
    /// Prefixes reached through this port besides its own subnet.
    pub routes: Vec<Route>,
    /// For `cluster up`: a host namespace on this port, with this address.
    pub host: Option<Prefix>,
}

/// One server of the cluster.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Short name ([a-z0-9-]).
    pub name: String,
    /// External ports, port index order.
    pub ports: Vec<Port>,
    /// `links[i]`: the device of the internal link to node i (empty for the node itself).
    pub links: Vec<String>,
}

/// A validated cluster description, every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    /// Cluster name ([a-z0-9-]).
    pub name: String,
    /// R, the rate of each external port, bits per second.
    pub rate_bps: u64,
    /// Capacity of each internal link, bits per second.
    pub link_rate_bps: u64,
    /// Depth of DirectVLB's meters in bytes; `None`: the element's default.
    pub burst: Option<u64>,
    /// Flowlet gap δ as written (a Click time); `None`: off.
    pub flowlet: Option<String>,
    /// Hello interval, a Click time.
    pub hello: String,
    /// Silence after which a link is down, a Click time.
    pub dead: String,
    /// The nodes, index order.
    pub nodes: Vec<Node>,
}

/// One egress of the cluster: external port `port` of node `node`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Egress {
    /// The output node's index.
    pub node: usize,
    /// The port's index on that node.
    pub port: usize,
}

impl Cluster {
    /// Every external port of the cluster, node by node: egress e is route table output e+1.
    pub fn egresses(&self) -> Vec<Egress> {
        let mut v = Vec::new();
        for (node, n) in self.nodes.iter().enumerate() {
            for port in 0..n.ports.len() {
                v.push(Egress { node, port });
            }
        }
        v
    }

    /// The port of an egress.
    pub fn port(&self, e: Egress) -> &Port {
        &self.nodes[e.node].ports[e.port]
    }

    /// Node `k`'s external rate in bits per second (R times its ports).
    pub fn node_rate_bps(&self, k: usize) -> u64 {
        self.rate_bps * self.nodes[k].ports.len() as u64
    }

    /// The index of the node called `name`.
    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }
}

/// A bandwidth in bits per second in Click's syntax, in the largest unit that is exact
/// (`100Mbps`, `66666667bps`).
pub fn format_bps(bps: u64) -> String {
    for (div, unit) in [(1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")] {
        if bps >= div && bps.is_multiple_of(div) {
            return format!("{}{}bps", bps / div, unit);
        }
    }
    format!("{bps}bps")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    name: String,
    rate: String,
    flowlet: String,
    link_rate: Option<String>,
    burst: Option<RawSize>,
    hello: Option<String>,
    dead: Option<String>,
    #[serde(default)]
    node: Vec<RawNode>,
    #[serde(default)]
    link: Vec<RawLink>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSize {
    Int(i64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNode {
    name: String,
    #[serde(default)]
    port: Vec<RawPort>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPort {
    device: Option<String>,
    address: String,
    ether: Option<String>,
    mtu: Option<i64>,
    #[serde(default)]
    routes: Vec<String>,
    host: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    a: String,
    b: String,
    a_device: Option<String>,
    b_device: Option<String>,
}

/// Reads and checks the description in file `path`.
pub fn load(path: &str) -> Result<Cluster, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    parse(&text, path)
}

/// Parses and checks a description; `file` names it in messages.
pub fn parse(text: &str, file: &str) -> Result<Cluster, String> {
    let raw: RawCluster = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
    validate(raw).map_err(|e| format!("{file}: {e}"))
}

fn check_name(what: &str, s: &str, max: usize) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} '{s}': use 1 to {max} characters a-z, 0-9 and '-' (not first or last)"
        ))
    }
}

fn check_ifname(what: &str, s: &str) -> Result<(), String> {
    let ok = !s.is_empty()
        && s.len() <= MAX_IFNAME
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"_.-".contains(&c))
        && s != "."
        && s != ".."
        && s != "lo";
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{what} '{s}' is not a usable interface name (1 to {MAX_IFNAME} characters \
             A-Z, a-z, 0-9, '_', '.', '-'; not 'lo')"
        ))
    }
}

/// The element-name form of an interface or node name (`to-n2` → `to_n2`).
pub fn tag(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn bandwidth(what: &str, s: &str) -> Result<u64, String> {
    let Bandwidth(bytes) = Bandwidth::from_arg(s)
        .map_err(|_| format!("{what} '{s}' is not a bandwidth (e.g. \"10Gbps\")"))?;
    let bps = (bytes * 8.0).round();
    if !(1.0..1e15).contains(&bps) {
        return Err(format!("{what} '{s}' must be positive"));
    }
    Ok(bps as u64)
}

fn time(what: &str, s: &str) -> Result<String, String> {
    match Seconds::from_arg(s) {
        Ok(Seconds(v)) if v > 0.0 && v.is_finite() => Ok(s.trim().to_string()),
        Ok(_) => Err(format!("{what} '{s}' must be positive")),
        Err(_) => Err(format!("{what} '{s}' is not a time (e.g. \"100ms\")")),
    }
}

fn seconds(s: &str) -> f64 {
    Seconds::from_arg(s).map(|Seconds(v)| v).unwrap_or(0.0)
}

fn size(s: &RawSize) -> Result<u64, String> {
    let bad = |t: &str| format!("burst '{t}' is not a size in bytes (e.g. 16384 or \"64KiB\")");
    let v = match s {
        RawSize::Int(i) => u64::try_from(*i).map_err(|_| bad(&i.to_string()))?,
        RawSize::Text(t) => parse_size(t).ok_or_else(|| bad(t))?,
    };
    if v == 0 {
        return Err("burst must be positive".into());
    }
    Ok(v)
}

fn validate(raw: RawCluster) -> Result<Cluster, String> {
    check_name("name", &raw.name, 32)?;
    let rate_bps = bandwidth("rate", &raw.rate)?;
    let flowlet = match raw.flowlet.trim() {
        "off" | "0" => None,
        s => Some(time("flowlet", s)?),
    };
    let hello = time("hello", raw.hello.as_deref().unwrap_or("10ms"))?;
    let dead = time("dead", raw.dead.as_deref().unwrap_or("50ms"))?;
    if seconds(&dead) <= seconds(&hello) {
        return Err(format!("dead '{dead}' must be longer than hello '{hello}'"));
    }
    let burst = raw.burst.as_ref().map(size).transpose()?;

    let n = raw.node.len();
    if n == 0 {
        return Err(
            "a cluster needs at least one [[node]] table (one node is a plain router)".into(),
        );
    }
    if n > MAX_NODES {
        return Err(format!("{n} nodes: at most {MAX_NODES}"));
    }
    let mut nodes: Vec<Node> = Vec::with_capacity(n);
    for (k, rn) in raw.node.iter().enumerate() {
        let at = format!("node[{k}]");
        check_name(&format!("{at}: name"), &rn.name, MAX_NODE_NAME)?;
        if let Some(j) = nodes.iter().position(|m| m.name == rn.name) {
            return Err(format!("{at}: name '{}' is also node[{j}]'s", rn.name));
        }
        let at = format!("node '{}'", rn.name);
        if rn.port.is_empty() {
            return Err(format!(
                "{at}: no [[node.port]]: every node needs an external port"
            ));
        }
        if rn.port.len() > MAX_PORTS {
            return Err(format!(
                "{at}: {} ports, at most {MAX_PORTS}",
                rn.port.len()
            ));
        }
        let mut ports = Vec::new();
        for (p, rp) in rn.port.iter().enumerate() {
            ports.push(port(&format!("{at} port[{p}]"), k, p, rp)?);
        }
        let links = (0..n)
            .map(|i| {
                if i == k {
                    String::new()
                } else {
                    format!("to-{}", raw.node[i].name)
                }
            })
            .collect();
        nodes.push(Node {
            name: rn.name.clone(),
            ports,
            links,
        });
    }

    // Link device overrides.
    let mut seen = HashMap::new();
    for (l, rl) in raw.link.iter().enumerate() {
        let at = format!("link[{l}]");
        let find = |f: &str, name: &str| {
            nodes
                .iter()
                .position(|m| m.name == name)
                .ok_or_else(|| format!("{at}: {f} '{name}' is not a node"))
        };
        let (a, b) = (find("a", &rl.a)?, find("b", &rl.b)?);
        if a == b {
            return Err(format!("{at}: a and b are both '{}'", rl.a));
        }
        if let Some(prev) = seen.insert((a.min(b), a.max(b)), l) {
            return Err(format!(
                "{at}: the link {}–{} is also link[{prev}]",
                rl.a, rl.b
            ));
        }
        if let Some(d) = &rl.a_device {
            nodes[a].links[b] = d.clone();
        }
        if let Some(d) = &rl.b_device {
            nodes[b].links[a] = d.clone();
        }
    }

    // Interface names, element names and Ethernet addresses.
    let mut ethers: HashMap<Ether, String> = HashMap::new();
    let mut egress_tags: HashMap<String, String> = HashMap::new();
    for node in &nodes {
        let mut devs: HashMap<String, String> = HashMap::new();
        let mut tags: HashMap<String, String> = HashMap::new();
        let named = node
            .ports
            .iter()
            .enumerate()
            .map(|(p, port)| {
                (
                    format!("node '{}' port[{p}] device", node.name),
                    &port.device,
                )
            })
            .chain(
                node.links
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !node.links[*i].is_empty())
                    .map(|(i, d)| {
                        (
                            format!("node '{}' link to '{}': device", node.name, nodes[i].name),
                            d,
                        )
                    }),
            );
        for (what, dev) in named {
            check_ifname(&what, dev)?;
            if let Some(other) = devs.insert(dev.clone(), what.clone()) {
                return Err(format!("{what} '{dev}' is also {other}"));
            }
            if let Some(other) = tags.insert(tag(dev), what.clone()) {
                return Err(format!(
                    "{what} '{dev}' makes the same element names as {other}; rename one"
                ));
            }
        }
        for (p, port) in node.ports.iter().enumerate() {
            let what = format!("node '{}' port[{p}]", node.name);
            if let Some(other) = ethers.insert(port.ether, what.clone()) {
                return Err(format!("{what}: ether {} is also {other}'s", port.ether));
            }
            let t = format!("{}_{}", tag(&node.name), tag(&port.device));
            if let Some(other) = egress_tags.insert(t, what.clone()) {
                return Err(format!(
                    "{what}: node and device names make the same element names as {other}; rename one"
                ));
            }
        }
    }

    // Addresses: distinct, subnets disjoint, route table prefixes unique.
    let all: Vec<(String, &Port)> = nodes
        .iter()
        .flat_map(|m| {
            m.ports
                .iter()
                .enumerate()
                .map(move |(p, port)| (format!("node '{}' port[{p}]", m.name), port))
        })
        .collect();
    for (i, (wa, a)) in all.iter().enumerate() {
        for (wb, b) in &all[..i] {
            if a.address.addr == b.address.addr {
                return Err(format!("{wa}: address {} is also {wb}'s", a.address.addr));
            }
            if a.address.overlaps(&b.address) {
                return Err(format!(
                    "{wa}: subnet {} overlaps {wb}'s subnet {}",
                    a.address.net(),
                    b.address.net()
                ));
            }
            if let Some(h) = b.host.filter(|h| h.addr == a.address.addr) {
                return Err(format!("{wa}: address {} is {wb}'s host", h.addr));
            }
        }
    }
    let mut table: HashMap<Prefix, String> = HashMap::new();
    let mut add = |p: Prefix, what: String| match table.get(&p) {
        Some(other) => Err(format!(
            "{what}: {p} is already in the route table ({other})"
        )),
        None => {
            table.insert(p, what);
            Ok(())
        }
    };
    let host32 = |a: Ipv4Addr| Prefix { addr: a, len: 32 };
    for (w, port) in &all {
        add(
            host32(port.address.addr),
            format!("{w}: the port's address"),
        )?;
    }
    for (w, port) in &all {
        for a in port.address.special_addrs() {
            add(
                host32(a),
                format!("{w}: its subnet's network or broadcast address"),
            )?;
        }
    }
    add(
        host32(Ipv4Addr::BROADCAST),
        "the limited broadcast address".into(),
    )?;
    add(host32(Ipv4Addr::UNSPECIFIED), "the address 0.0.0.0".into())?;
    for (w, port) in &all {
        add(port.address.net(), format!("{w}: the port's subnet"))?;
        for r in &port.routes {
            add(r.prefix, format!("{w}: route {}", r.prefix))?;
        }
    }

    let max_ports = nodes.iter().map(|m| m.ports.len()).max().unwrap_or(1) as u64;
    let link_rate_bps = match &raw.link_rate {
        Some(s) => bandwidth("link_rate", s)?,
        None => (2 * rate_bps * max_ports).div_ceil(n as u64),
    };
    Ok(Cluster {
        name: raw.name,
        rate_bps,
        link_rate_bps,
        burst,
        flowlet,
        hello,
        dead,
        nodes,
    })
}

fn port(at: &str, k: usize, p: usize, rp: &RawPort) -> Result<Port, String> {
    let device = rp.device.clone().unwrap_or_else(|| format!("ext{p}"));
    let address = Prefix::parse(&rp.address).map_err(|e| format!("{at}: address: {e}"))?;
    if address.len > 30 {
        return Err(format!(
            "{at}: address {address}: the subnet must hold hosts (at most /30)"
        ));
    }
    if address.special_addrs().contains(&address.addr) {
        return Err(format!(
            "{at}: address {address} is its subnet's network or broadcast address"
        ));
    }
    let ether = match &rp.ether {
        Some(s) => Ether::parse(s).map_err(|e| format!("{at}: ether: {e}"))?,
        None => Ether::derived(k, p),
    };
    if ether.0[0] & 1 != 0 || ether.0 == [0; 6] {
        return Err(format!("{at}: ether {ether} is not a unicast address"));
    }
    let mtu = match rp.mtu {
        None => 1500,
        Some(m) if (68..=65000).contains(&m) => m as u32,
        Some(m) => return Err(format!("{at}: mtu {m}: use 68 to 65000")),
    };
    let mut routes = Vec::new();
    for (r, text) in rp.routes.iter().enumerate() {
        let rat = format!("{at}: routes[{r}] '{text}'");
        let words: Vec<&str> = text.split_whitespace().collect();
        let (prefix, gateway) = match words.as_slice() {
            [p] => (*p, None),
            [p, g] => (*p, Some(*g)),
            _ => return Err(format!("{rat}: expected \"PREFIX\" or \"PREFIX GATEWAY\"")),
        };
        let prefix = Prefix::parse(prefix).map_err(|e| format!("{rat}: {e}"))?;
        if prefix.network() != prefix.addr {
            return Err(format!(
                "{rat}: host bits set (did you mean {}?)",
                prefix.net()
            ));
        }
        let gateway = match gateway {
            None => None,
            Some(g) => {
                let g: Ipv4Addr = g
                    .parse()
                    .map_err(|_| format!("{rat}: gateway '{g}' is not an IPv4 address"))?;
                if !address.contains(g) || g == address.addr || address.special_addrs().contains(&g)
                {
                    return Err(format!(
                        "{rat}: gateway {g} must be a host of the port's subnet {} other than {}",
                        address.net(),
                        address.addr
                    ));
                }
                Some(g)
            }
        };
        routes.push(Route { prefix, gateway });
    }
    let host = match &rp.host {
        None => None,
        Some(h) => {
            let h = Prefix::parse(h).map_err(|e| format!("{at}: host: {e}"))?;
            if h.len != address.len
                || !address.contains(h.addr)
                || h.addr == address.addr
                || address.special_addrs().contains(&h.addr)
            {
                return Err(format!(
                    "{at}: host {h} must be another host of the port's subnet {} (same length)",
                    address.net()
                ));
            }
            Some(h)
        }
    };
    Ok(Port {
        device,
        address,
        ether,
        mtu,
        routes,
        host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RB4: &str = include_str!("../../../conf/cluster/rb4.toml");

    fn small(extra: &str, port_extra: &str) -> String {
        format!(
            "name = \"t\"\nrate = \"1Gbps\"\nflowlet = \"off\"\n{extra}\n\
             [[node]]\nname = \"a\"\n[[node.port]]\naddress = \"198.18.1.1/24\"\n{port_extra}\n\
             [[node]]\nname = \"b\"\n[[node.port]]\naddress = \"198.18.2.1/24\"\n"
        )
    }

    fn err(text: &str) -> String {
        parse(text, "t.toml").unwrap_err()
    }

    #[test]
    fn rb4_example_parses_with_defaults() {
        let c = parse(RB4, "rb4.toml").unwrap();
        assert_eq!(c.name, "rb4");
        assert_eq!(c.nodes.len(), 4);
        assert_eq!(c.rate_bps, 100_000_000);
        assert_eq!(c.link_rate_bps, 50_000_000);
        assert_eq!(c.flowlet.as_deref(), Some("100ms"));
        assert_eq!((c.hello.as_str(), c.dead.as_str()), ("10ms", "50ms"));
        let n1 = &c.nodes[0];
        assert_eq!(n1.name, "n1");
        assert_eq!(n1.links, ["", "to-n2", "to-n3", "to-n4"]);
        assert_eq!(n1.ports[0].device, "ext0");
        assert_eq!(n1.ports[0].ether.to_string(), "02:53:4c:00:00:00");
        assert_eq!(c.nodes[3].ports[0].ether.to_string(), "02:53:4c:00:03:00");
        assert_eq!(n1.ports[0].host.unwrap().to_string(), "198.18.1.2/24");
        assert_eq!(
            c.nodes[2].ports[0].host.unwrap().to_string(),
            "198.18.3.2/24"
        );
        assert_eq!(c.egresses().len(), 4);
    }

    #[test]
    fn defaults_and_overrides() {
        let c = parse(
            &small(
                "link_rate = \"3Gbps\"\nburst = \"64KiB\"\nhello = \"5ms\"\ndead = \"20ms\"\n\
                 [[link]]\na = \"b\"\nb = \"a\"\na_device = \"ba\"",
                "device = \"eth7\"\nether = \"02:00:00:00:00:01\"\nmtu = 9000\n\
                 routes = [\"0.0.0.0/0 198.18.1.254\", \"198.20.0.0/16\"]",
            ),
            "t.toml",
        )
        .unwrap();
        assert_eq!(c.link_rate_bps, 3_000_000_000);
        assert_eq!(c.burst, Some(65536));
        assert_eq!(c.flowlet, None);
        assert_eq!(c.nodes[1].links, ["ba", ""]);
        assert_eq!(c.nodes[0].links, ["", "to-b"]);
        let p = &c.nodes[0].ports[0];
        assert_eq!((p.device.as_str(), p.mtu), ("eth7", 9000));
        assert_eq!(p.routes[0].gateway, Some(Ipv4Addr::new(198, 18, 1, 254)));
        assert_eq!(p.routes[1].prefix.to_string(), "198.20.0.0/16");
        // Default link rate: 2·R·ports/N.
        let c = parse(&small("", ""), "t.toml").unwrap();
        assert_eq!(c.link_rate_bps, 1_000_000_000);
        assert_eq!(format_bps(c.link_rate_bps), "1Gbps");
        assert_eq!(format_bps(66_666_667), "66666667bps");
    }

    #[test]
    fn errors_name_the_field() {
        assert!(err(&small("", "adress = \"x\"")).contains("adress"));
        assert!(err(&small("", "").replace("1Gbps", "fast")).contains("rate 'fast'"));
        assert!(err(&small("", "").replace("\"off\"", "\"soon\"")).contains("flowlet 'soon'"));
        assert!(err(&small("", "").replace("\"a\"", "\"A\"")).contains("node[0]: name 'A'"));
        assert!(err(&small("", "").replace("\"b\"", "\"a\"")).contains("also node[0]"));
        assert!(err(&small("", "").replace("198.18.2.1/24", "198.18.1.9/24")).contains("overlaps"));
        assert!(err(&small("", "").replace("198.18.2.1/24", "198.18.2.1"))
            .contains("node 'b' port[0]: address"));
        assert!(err(&small("", "device = \"a-very-long-name0\"")).contains("interface name"));
        assert!(err(&small("", "device = \"to-b\"")).contains("is also node 'a' port[0]"));
        assert!(
            err(&small("", "routes = [\"198.20.1.0/16\"]")).contains("did you mean 198.20.0.0/16")
        );
        assert!(err(&small("", "routes = [\"198.20.0.0/16 198.19.0.1\"]")).contains("gateway"));
        assert!(
            err(&small("", "routes = [\"198.18.2.0/24\"]")).contains("already in the route table")
        );
        assert!(err(&small("", "host = \"198.18.2.2/24\"")).contains("host"));
        assert!(err(&small("", "ether = \"02:53:4c:00:01:00\"")).contains("is also"));
        assert!(err(&small("", "ether = \"01:00:5e:00:00:01\"")).contains("unicast"));
        assert!(err(&small("hello = \"50ms\"", "")).contains("dead"));
        assert!(err(&small("[[link]]\na = \"a\"\nb = \"c\"", "")).contains("link[0]: b 'c'"));
        let none = "name = \"t\"\nrate = \"1Gbps\"\nflowlet = \"off\"\n";
        assert!(err(none).contains("at least one"));
        let long = small("", "").replace("\"b\"", "\"abcdefghijklm\"");
        assert!(err(&long).contains("1 to 12 characters"));
    }
}
