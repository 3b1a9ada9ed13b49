//! DirectVLB — balances a cluster router's traffic over its internal links (Direct VLB)
//!
//! Synopsis: `DirectVLB(NODE, NODES, RATE, [keywords LINK_RATE, BURST, FLOWLET,
//! FLOWLET_SLOTS, HELLO, DEAD])`
//!
//! Ports: 2 push inputs, NODES push outputs. One per node of a cluster router whose NODES
//! nodes form a full mesh (RouteBricks §3.2 and §6.1). Output i (i ≠ NODE) leads to the
//! internal link to node i; output NODE is this node's own egress (a ClusterDecap).
//!
//! Input 0 takes packets that entered the cluster here, addressed by ClusterEncap (IP header
//! after the 14-byte cluster header). VLB phase 1: up to the direct share RATE/NODES of the
//! traffic to an output node goes straight to it; the excess goes to an intermediate node
//! chosen at random among those that reach the output node. With FLOWLET δ > 0, a flow's
//! packets arriving within δ of each other keep the path of their flowlet unless its link is
//! full (its meter at LINK_RATE has run dry); then the packet takes a fresh decision, which
//! the flowlet keeps. Packets for this node leave by output NODE.
//!
//! Input 1 takes frames received on the internal links. Cluster frames for this node leave
//! by output NODE; the others are forwarded to their output node (phase 2) by their
//! destination address alone, without reading the IP header. Hellos are consumed.
//!
//! Liveness: every HELLO, a hello goes out on each link, announcing the nodes this node
//! reaches. A link from which no hello arrived for DEAD is down: phase 1 stops using it, and
//! stops using intermediates that do not reach the output node; it is up again at the next
//! hello. Packets with no live path are dropped and counted.
//!
//! Arguments:
//! - `NODE` — this node's index (0 to NODES−1); `NODES` — nodes in the mesh (at most 64).
//! - `RATE` — this node's external rate R (bandwidth, e.g. `10Gbps`); direct share R/NODES.
//! - `LINK_RATE` — capacity of each internal link (default 2·RATE/NODES, the VLB mesh's).
//! - `BURST` — depth of the direct-share and link meters in bytes (default 10 ms at
//!   LINK_RATE, at least 16 KiB).
//! - `FLOWLET` — flowlet gap δ (time; default 0: every packet balanced on its own;
//!   RouteBricks used 100ms). `FLOWLET_SLOTS` — flowlet table size (default 65536).
//! - `HELLO` — hello interval (default 10ms); `DEAD` — silence after which a link is down
//!   (default 50ms).
//!
//! Handlers: `direct`, `via`, `forwarded` (r): phase-1 packets sent direct by output node,
//! phase-1 packets sent through each intermediate, phase-2 packets forwarded by output node
//! (one number per node, space-separated). `link_packets`, `link_bytes` (r): sent on each
//! link. `links` (r): `up`, `down` or `self` per node. `flowlet_hits`, `flowlet_new`,
//! `flowlet_moved` (r): packets that kept their flowlet's path, flowlets started, packets
//! moved off a full or dead path. `hellos_sent`, `hellos_received` (r). `rate` (r): RATE in
//! bytes per second. `stats` (r): all of it, one line per node. `drops`, `drop_details` (r).
//!
//! Example:
//! `vlb :: DirectVLB(0, 4, 100Mbps, FLOWLET 100ms); FromDevice(to-n2, PROMISC true) -> [1]vlb;
//! vlb[1] -> Queue -> ToDevice(to-n2)`

use std::fmt::Write;

use sluice_core::{
    drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers, InitCx, Packet,
    Table, Timestamp,
};
use sluice_lang::args::{Args, Bandwidth, Seconds};

use super::frame;
use super::vlb::{Vlb, VlbConfig, MAX_NODES};
use crate::standard::util::{random_u32, PortBatches};

drop_reasons! {
    /// Why DirectVLB drops a packet.
    enum Reason {
        NotCluster => "not a cluster frame",
        BadNode => "output node out of range",
        Unreachable => "no live path to the output node",
        BadHello => "malformed hello",
    }
}

const HELLO_TIMER: usize = 0;

/// The DirectVLB element.
pub struct DirectVLB {
    vlb: Vlb,
    rate: f64,
    hello: Timestamp,
    dead: Timestamp,
    last_hello: Vec<Timestamp>,
    heard: Vec<bool>,
    hellos_sent: u64,
    hellos_received: u64,
    outs: PortBatches,
    drops: Drops<Reason>,
}

impl Default for DirectVLB {
    fn default() -> Self {
        DirectVLB {
            vlb: Vlb::new(VlbConfig {
                node: 0,
                nodes: 1,
                direct_rate: 0.0,
                link_rate: 0.0,
                burst: 0.0,
                flowlet_ns: None,
                flowlet_slots: 0,
            }),
            rate: 0.0,
            hello: Timestamp::from_secs_f64(0.01),
            dead: Timestamp::from_secs_f64(0.05),
            last_hello: Vec::new(),
            heard: Vec::new(),
            hellos_sent: 0,
            hellos_received: 0,
            outs: PortBatches::default(),
            drops: Drops::default(),
        }
    }
}

impl DirectVLB {
    /// This node's index.
    fn node(&self) -> usize {
        self.vlb.config().node
    }

    /// Nodes in the mesh.
    fn nodes(&self) -> usize {
        self.vlb.config().nodes
    }

    fn per_node(&self, f: impl Fn(&Vlb, usize) -> u64) -> String {
        let v = &self.vlb;
        (0..self.nodes())
            .map(|i| f(v, i).to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn links_text(&self) -> String {
        let v = &self.vlb;
        (0..self.nodes())
            .map(|i| {
                if i == self.node() {
                    "self"
                } else if v.link_up(i) {
                    "up"
                } else {
                    "down"
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn stats_text(&self) -> String {
        let v = &self.vlb;
        let s = &v.stats;
        let mut t = String::new();
        for i in 0..self.nodes() {
            let state = if i == self.node() {
                "self"
            } else if v.link_up(i) {
                "up"
            } else {
                "down"
            };
            let _ = writeln!(
                t,
                "node {} link {} direct {} via {} forwarded {} link_packets {} link_bytes {}",
                i, state, s.direct[i], s.via[i], s.forwarded[i], s.link_packets[i], s.link_bytes[i]
            );
        }
        let _ = writeln!(
            t,
            "flowlet_hits {} flowlet_new {} flowlet_moved {} hellos_sent {} hellos_received {}",
            s.flowlet_hits, s.flowlet_new, s.flowlet_moved, self.hellos_sent, self.hellos_received
        );
        t
    }

    /// The silence of each link counts from the first hello round or hello received, once
    /// the router's clock runs.
    fn start_clock(&mut self, now: Timestamp) {
        if self.last_hello.is_empty() {
            self.last_hello = vec![now; self.nodes()];
        }
    }

    /// Takes a hello from a peer: its link is alive, and its reach is recorded.
    fn receive_hello(&mut self, p: &Packet, now: Timestamp) {
        match frame::parse_hello(p.data()) {
            Some((from, reach))
                if usize::from(from) < self.nodes() && usize::from(from) != self.node() =>
            {
                let from = usize::from(from);
                self.hellos_received += 1;
                self.start_clock(now);
                self.last_hello[from] = now;
                self.heard[from] = true;
                if !self.vlb.link_up(from) {
                    tracing::info!(node = self.node(), peer = from, "cluster link up");
                    self.vlb.set_link(from, true);
                }
                self.vlb.set_reach(from, reach);
            }
            _ => self.drops.count(Reason::BadHello),
        }
    }

    /// Marks silent links down and sends a hello on every link.
    fn hello_round(&mut self, cx: &mut Cx) {
        let now = cx.now();
        self.start_clock(now);
        let (node, nodes) = (self.node(), self.nodes());
        for i in 0..nodes {
            if i != node && self.vlb.link_up(i) && now - self.last_hello[i] > self.dead {
                if self.heard[i] {
                    tracing::warn!(node, peer = i, "cluster link down: no hello");
                } else {
                    tracing::info!(node, peer = i, "cluster link not up yet: no hello");
                }
                self.vlb.set_link(i, false);
            }
        }
        let reach = self.vlb.own_reach();
        for i in (0..nodes).filter(|&i| i != node) {
            let f = frame::hello(node as u8, i as u8, reach);
            cx.push_one(i, Packet::from_bytes(&f));
            self.hellos_sent += 1;
        }
        cx.schedule_after(HELLO_TIMER, self.hello);
    }
}

impl Element for DirectVLB {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let node: usize = args.read_mp("NODE")?;
        let nodes: usize = args.read_mp("NODES")?;
        let Bandwidth(rate) = args.read_mp("RATE")?;
        let link_rate: Option<Bandwidth> = args.read("LINK_RATE")?;
        let burst: Option<u64> = args.read("BURST")?;
        let flowlet: Option<Seconds> = args.read("FLOWLET")?;
        let slots: Option<usize> = args.read("FLOWLET_SLOTS")?;
        let hello: Option<Seconds> = args.read("HELLO")?;
        let dead: Option<Seconds> = args.read("DEAD")?;
        if nodes == 0 || nodes > MAX_NODES || node >= nodes {
            args.error(format!("NODE, NODES: need NODE < NODES ≤ {}", MAX_NODES));
            return Err(());
        }
        if cx.noutputs() != nodes {
            args.error(format!(
                "{} outputs, expected NODES ({})",
                cx.noutputs(),
                nodes
            ));
            return Err(());
        }
        if rate <= 0.0 {
            args.error("RATE: must be positive");
            return Err(());
        }
        let link_rate = link_rate.map_or(2.0 * rate / nodes as f64, |b| b.0);
        let burst = burst.map_or((link_rate * 1e-2).max(16384.0), |b| b as f64);
        let flowlet_ns = flowlet.filter(|s| s.0 > 0.0).map(|s| (s.0 * 1e9) as i64);
        if let Some(h) = hello {
            self.hello = Timestamp::from_secs_f64(h.0.max(1e-4));
        }
        if let Some(d) = dead {
            self.dead = Timestamp::from_secs_f64(d.0);
        }
        if self.dead <= self.hello {
            args.error("DEAD: must be longer than HELLO");
            return Err(());
        }
        self.vlb = Vlb::new(VlbConfig {
            node,
            nodes,
            direct_rate: rate / nodes as f64,
            link_rate,
            burst,
            flowlet_ns,
            flowlet_slots: slots.unwrap_or(65536),
        });
        self.rate = rate;
        self.outs = PortBatches::new(nodes);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.heard = vec![false; self.nodes()];
        if self.nodes() > 1 {
            cx.schedule_after(HELLO_TIMER, Timestamp::ZERO);
        }
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let now = cx.now();
        for p in batch {
            let d = p.data();
            if port == 1 && frame::is_hello(d) {
                self.receive_hello(&p, now);
                continue;
            }
            let Some((dst, _)) = (d.len() >= 14)
                .then(|| frame::parse_dst(&d[0..6]))
                .flatten()
            else {
                self.drops.count(Reason::NotCluster);
                continue;
            };
            let dst = usize::from(dst);
            if dst >= self.nodes() {
                self.drops.count(Reason::BadNode);
                continue;
            }
            let bytes = d.len() as u32;
            let v = &mut self.vlb;
            let hop = if port == 0 {
                let flow = if v.config().flowlet_ns.is_some() {
                    frame::flow_hash(&d[14..])
                } else {
                    0
                };
                v.choose(dst, flow, bytes, now.0, &mut random_u32)
            } else {
                v.forward(dst, bytes, now.0)
            };
            match hop {
                Some(h) => self.outs.add(h, p, cx),
                None => self.drops.count(Reason::Unreachable),
            }
        }
        self.outs.flush(cx);
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.hello_round(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("direct", |e| e.per_node(|v, i| v.stats.direct[i]))
            .read("via", |e| e.per_node(|v, i| v.stats.via[i]))
            .read("forwarded", |e| e.per_node(|v, i| v.stats.forwarded[i]))
            .read("link_packets", |e| {
                e.per_node(|v, i| v.stats.link_packets[i])
            })
            .read("link_bytes", |e| e.per_node(|v, i| v.stats.link_bytes[i]))
            .read("links", Self::links_text)
            .read("flowlet_hits", |e| e.vlb.stats.flowlet_hits)
            .read("flowlet_new", |e| e.vlb.stats.flowlet_new)
            .read("flowlet_moved", |e| e.vlb.stats.flowlet_moved)
            .read("hellos_sent", |e| e.hellos_sent)
            .read("hellos_received", |e| e.hellos_received)
            .read("rate", |e| format!("{}Bps", e.rate))
            .read("stats", Self::stats_text)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DirectVLB",
    ports: "2/1-",
    processing: "h/h",
    flow: "xy/x",
    source: include_str!("direct_vlb.rs"),
    make: || Box::new(DirectVLB::default()),
};
