//! AggregateIPFlows — sets the aggregate annotation to a flow number
//!
//! Synopsis: `AggregateIPFlows([keywords TCP_TIMEOUT, TCP_DONE_TIMEOUT, UDP_TIMEOUT,
//! FRAGMENT_TIMEOUT, REAP, ICMP, FRAGMENTS])`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, output 1 push.
//!
//! Follows TCP and UDP flows, identified by their addresses and ports, and sets each passing
//! packet's aggregate annotation to its flow's number and its paint annotation to its
//! direction: 0 for the direction of the flow's first packet, 1 for replies. Flow numbers
//! count from 1 in the order flows appear. A flow idle for longer than its timeout (packet
//! time, whole seconds) ends: its next packet starts a new flow with a new number; so does a
//! SYN on a TCP flow that was reset or closed in both directions. Packets between one host
//! and itself take their direction from the order of their ports.
//!
//! Other packets — not TCP or UDP, no network header, both addresses 0.0.0.0, or too short
//! for the ports — leave on output 1, or are dropped and counted if it is not connected.
//!
//! Fragments: with FRAGMENTS (the default when the input is push), second and later fragments
//! wait until the first fragment of their datagram (which has the ports) gives them its flow;
//! while fragments wait, later packets between the same two hosts wait behind them, so the
//! order between two hosts is kept. Fragments that found no first fragment after
//! FRAGMENT_TIMEOUT seconds of packet time are dropped and counted. Without FRAGMENTS, later
//! fragments go to output 1. The `clear` handler sends or drops every waiting fragment;
//! fragments still waiting when the router stops are counted as drops.
//!
//! With ICMP true, ICMP errors (unreachable, time exceeded, parameter problem, source quench,
//! redirect) about a TCP or UDP packet get that packet's flow, with paint 2 plus the quoted
//! packet's direction.
//!
//! A packet without a timestamp gets the current time (with a warning, once).
//!
//! Arguments:
//! - `TCP_TIMEOUT` (seconds, default 86400): for TCP flows in progress.
//! - `TCP_DONE_TIMEOUT` (seconds, default 30): for TCP flows reset, or closed both ways.
//! - `UDP_TIMEOUT` (seconds, default 60).
//! - `FRAGMENT_TIMEOUT` (seconds, default 30).
//! - `REAP` (seconds, default 1200): how often (in packet time) ended flows are forgotten.
//! - `ICMP` (bool, default false).
//! - `FRAGMENTS` (bool, default true with a push input, false with a pull input, where it
//!   cannot be true).
//!
//! Handlers: `clear` (w: ends every flow and flushes waiting fragments; later packets get
//! new numbers), `drops`, `drop_details` (r: packets dropped, by reason), `count` (r: flows
//! started).
//!
//! Example: `FromDump(trace.pcap, STOP true, FORCE_IP true) -> af :: AggregateIPFlows
//! -> AggregateCounter -> Discard; DriverManager(wait, write af.clear)`

use std::collections::{HashMap, VecDeque};

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp};
use sluice_lang::args::{Args, Seconds};
use sluice_wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use sluice_wire::Ipv4Packet;

drop_reasons! {
    /// Why AggregateIPFlows drops a packet.
    enum Reason {
        /// A fragment whose datagram's first fragment never came.
        NoFirstFragment => "fragment without first fragment",
        /// A fragment still waiting when the router stopped.
        AtStop => "fragment waiting at stop",
    }
}

/// One flow between a pair of hosts.
struct Flow {
    /// The ports as Click keeps them (the two 16-bit port fields in memory order, read as a
    /// little-endian word), in the flow's canonical direction.
    ports: u32,
    aggregate: u32,
    last_sec: i64,
    /// TCP FINs seen per direction (bits 0 and 1); 3 also after a RST.
    over: u8,
    reverse: bool,
}

/// The flows and waiting fragments between two hosts.
#[derive(Default)]
struct HostPair {
    /// Most recently used first.
    flows: Vec<Flow>,
    fragments: VecDeque<Packet>,
}

/// Host pairs by (lower address, higher address).
type Map = HashMap<(u32, u32), HostPair>;

/// What the packet's headers say, for the flow lookup.
struct Key {
    tcp: bool,
    hosts: (u32, u32),
    /// Direction bit (and 2 for an ICMP error).
    paint: u8,
    /// The ports of a first fragment, in canonical order.
    ports: Option<u32>,
    is_frag: bool,
    syn: bool,
}

/// The AggregateIPFlows element.
pub struct AggregateIPFlows {
    tcp_timeout: i64,
    tcp_done_timeout: i64,
    udp_timeout: i64,
    smallest_timeout: i64,
    fragment_timeout: i64,
    reap_interval: i64,
    icmp: bool,
    fragments: Option<bool>,
    tcp: Map,
    udp: Map,
    next: u32,
    active_sec: i64,
    gc_sec: i64,
    warned: bool,
    drops: Drops<Reason>,
}

impl Default for AggregateIPFlows {
    fn default() -> Self {
        AggregateIPFlows {
            tcp_timeout: 24 * 60 * 60,
            tcp_done_timeout: 30,
            udp_timeout: 60,
            smallest_timeout: 30,
            fragment_timeout: 30,
            reap_interval: 20 * 60,
            icmp: false,
            fragments: None,
            tcp: Map::new(),
            udp: Map::new(),
            next: 1,
            active_sec: 0,
            gc_sec: 0,
            warned: false,
            drops: Drops::default(),
        }
    }
}

/// Whether Click orders these ports the other way round for a host talking to itself.
fn ports_reverse_order(ports: u32) -> bool {
    ((ports << 16).wrapping_sub(ports) as i32) < 0
}

fn flip_ports(ports: u32) -> u32 {
    ports.rotate_left(16)
}

/// The quoted IP header of an ICMP error in `t` (the ICMP message), if it is one.
fn icmp_quoted(t: &[u8]) -> Option<&[u8]> {
    if !matches!(t.first()?, 3 | 4 | 5 | 11 | 12) {
        return None;
    }
    let q = t.get(8..)?;
    let hl = (*q.first()? as usize & 15) * 4;
    (hl >= 20 && q.len() >= hl).then_some(q)
}

impl AggregateIPFlows {
    /// Reads the packet's headers; `None` for a packet that belongs to no flow.
    fn key(&self, p: &Packet) -> Option<Key> {
        let net = p.network_header()?;
        let ip = Ipv4Packet::new_checked_truncated(net).ok()?;
        let (mut hdr, mut paint) = (net, 0u8);
        if ip.protocol() == PROTO_ICMP && ip.frag_offset() == 0 && self.icmp {
            hdr = icmp_quoted(net.get(ip.header_len()..)?)?;
            paint = 2;
        }
        let q = Ipv4Packet::new_checked_truncated(hdr).ok()?;
        let tcp = match q.protocol() {
            PROTO_TCP => true,
            PROTO_UDP => false,
            _ => return None,
        };
        let (src, dst) = (u32::from(q.src()), u32::from(q.dst()));
        if src == 0 && dst == 0 {
            return None;
        }
        let hosts = (src.min(dst), src.max(dst));
        if hosts.0 != src {
            paint ^= 1;
        }
        let t = hdr.get(q.header_len()..).unwrap_or(&[]);
        let ports = if q.frag_offset() == 0 {
            let b = t.get(..4)?;
            let mut ports = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            if hosts.0 == hosts.1 && ports_reverse_order(ports) {
                paint ^= 1;
            }
            if paint & 1 != 0 {
                ports = flip_ports(ports);
            }
            Some(ports)
        } else {
            None
        };
        Some(Key {
            tcp,
            hosts,
            paint,
            ports,
            is_frag: q.is_fragment(),
            syn: tcp && paint < 2 && t.get(13).is_some_and(|f| f & 0x02 != 0),
        })
    }

    /// The flow for `ports` (moved to the front), created or renewed as needed; its number.
    fn flow(&mut self, k: &Key, ports: u32, now_sec: i64) -> (u32, bool) {
        let (map, timeout) = if k.tcp {
            (&mut self.tcp, None)
        } else {
            (&mut self.udp, Some(self.udp_timeout))
        };
        let hp = map.entry(k.hosts).or_default();
        let flipped = k.paint & 1 != 0;
        if let Some(i) = hp.flows.iter().position(|f| f.ports == ports) {
            let mut f = hp.flows.remove(i);
            let relevant = timeout.unwrap_or(if f.over == 3 {
                self.tcp_done_timeout
            } else {
                self.tcp_timeout
            });
            let age = now_sec - f.last_sec;
            if (age > self.smallest_timeout && age > relevant) || (f.over == 3 && k.syn) {
                f.aggregate = self.next;
                self.next += 1;
                f.reverse = flipped;
                f.over = 0;
            }
            let r = (f.aggregate, f.reverse);
            hp.flows.insert(0, f);
            return r;
        }
        hp.flows.insert(
            0,
            Flow {
                ports,
                aggregate: self.next,
                last_sec: 0,
                over: 0,
                reverse: flipped,
            },
        );
        self.next += 1;
        (self.next - 1, flipped)
    }

    /// Click's packet_emit_hook: the flow's last time and TCP state, for an emitted packet.
    fn emitted(map: &mut Map, hosts: (u32, u32), p: &Packet) {
        let Some(hp) = map.get_mut(&hosts) else {
            return;
        };
        let agg = p.anno().aggregate;
        let Some(i) = hp.flows.iter().position(|f| f.aggregate == agg) else {
            return;
        };
        let f = &mut hp.flows[i];
        f.last_sec = p.timestamp().sec();
        let paint = p.anno().paint;
        let Some(net) = p.network_header() else {
            return;
        };
        let Ok(ip) = Ipv4Packet::new_checked_truncated(net) else {
            return;
        };
        if ip.protocol() == PROTO_TCP && ip.frag_offset() == 0 && paint < 2 {
            if let Some(&flags) = net.get(ip.header_len() + 13) {
                if flags & 0x04 != 0 {
                    f.over = 3;
                } else if flags & 0x01 != 0 {
                    f.over |= 1 << paint;
                } else if flags & 0x02 != 0 {
                    f.over = 0;
                }
            }
        }
    }

    /// Sends (or drops) the first waiting fragment of host pair `hosts`, giving it the flow of
    /// a fragment of the same datagram when it has none.
    fn emit_fragment_head(&mut self, tcp: bool, hosts: (u32, u32), out: &mut Batch, cx: &mut Cx) {
        let map = if tcp { &mut self.tcp } else { &mut self.udp };
        let Some(hp) = map.get_mut(&hosts) else {
            return;
        };
        let Some(mut head) = hp.fragments.pop_front() else {
            return;
        };
        let id = frag_id(&head);
        if head.anno().aggregate != 0 {
            let (agg, paint) = (head.anno().aggregate, head.anno().paint);
            for p in hp.fragments.iter_mut().filter(|p| frag_id(p) == id) {
                p.anno_mut().aggregate = agg;
                p.anno_mut().paint = paint;
            }
        } else {
            match hp
                .fragments
                .iter()
                .find(|p| frag_id(p) == id && p.anno().aggregate != 0)
            {
                Some(p) => {
                    let (agg, paint) = (p.anno().aggregate, p.anno().paint);
                    head.anno_mut().aggregate = agg;
                    head.anno_mut().paint = paint;
                }
                None => {
                    self.drops.count(Reason::NoFirstFragment);
                    return;
                }
            }
        }
        Self::emitted(map, hosts, &head);
        if out.push(head).is_err() {
            cx.push(0, std::mem::take(out));
        }
    }

    /// Sends the waiting fragments of `hosts` that are no longer fragments (packets waiting
    /// behind fragments) or older than FRAGMENT_TIMEOUT, oldest first; `all` sends them all.
    fn flush_fragments(
        &mut self,
        tcp: bool,
        hosts: (u32, u32),
        all: bool,
        out: &mut Batch,
        cx: &mut Cx,
    ) {
        let limit = self.active_sec - self.fragment_timeout;
        loop {
            let map = if tcp { &self.tcp } else { &self.udp };
            let Some(head) = map.get(&hosts).and_then(|hp| hp.fragments.front()) else {
                return;
            };
            let still_frag = self.key(head).is_some_and(|k| k.is_frag);
            if !all && head.timestamp().sec() >= limit && still_frag {
                return;
            }
            self.emit_fragment_head(tcp, hosts, out, cx);
        }
    }

    /// Forgets ended flows (and sends timed-out fragments), every REAP seconds; `all` flushes
    /// every fragment and forgets every flow.
    fn reap(&mut self, all: bool, out: &mut Batch, cx: &mut Cx) {
        if self.gc_sec != 0 || all {
            for tcp in [true, false] {
                let map = if tcp { &self.tcp } else { &self.udp };
                let keys: Vec<(u32, u32)> = map.keys().copied().collect();
                for hosts in keys {
                    self.flush_fragments(tcp, hosts, all, out, cx);
                    let (timeout, done) = if tcp {
                        (self.tcp_timeout, self.tcp_done_timeout)
                    } else {
                        (self.udp_timeout, self.udp_timeout)
                    };
                    let now = self.active_sec;
                    let map = if tcp { &mut self.tcp } else { &mut self.udp };
                    if let Some(hp) = map.get_mut(&hosts) {
                        if hp.fragments.is_empty() {
                            hp.flows.retain(|f| {
                                let t = if f.over == 3 { done } else { timeout };
                                !all && f.last_sec >= now - t
                            });
                        }
                    }
                }
            }
        }
        self.gc_sec = self.active_sec + self.reap_interval;
    }

    /// Handles one packet: `Some(true)` to emit it on output 0, `Some(false)` for output 1,
    /// `None` when it waits with the fragments.
    fn handle(&mut self, p: &mut Option<Packet>, out: &mut Batch, cx: &mut Cx) -> Option<bool> {
        let pk = p.as_mut()?;
        if pk.timestamp() == Timestamp::ZERO {
            if !self.warned {
                eprintln!("{}: warning: packet received without timestamp", cx.name());
                self.warned = true;
            }
            pk.set_timestamp(cx.now());
        }
        let Some(k) = self.key(pk) else {
            return Some(false);
        };
        let sec = pk.timestamp().sec();
        let mut paint = k.paint;
        let has_flow = match k.ports {
            Some(ports) => {
                let (agg, reverse) = self.flow(&k, ports, sec);
                if reverse {
                    paint ^= 1;
                }
                pk.anno_mut().aggregate = agg;
                true
            }
            None => {
                pk.anno_mut().aggregate = 0;
                false
            }
        };
        pk.anno_mut().paint = paint;
        let frags = self.fragments == Some(true);
        let map = if k.tcp { &mut self.tcp } else { &mut self.udp };
        let hp = map.entry(k.hosts).or_default();
        if (frags && k.is_frag) || !hp.fragments.is_empty() {
            hp.fragments.extend(p.take());
            self.active_sec = sec;
            self.flush_fragments(k.tcp, k.hosts, false, out, cx);
            return None;
        }
        if !has_flow {
            return Some(false);
        }
        self.active_sec = sec;
        if let Some(pk) = p.as_ref() {
            Self::emitted(map, k.hosts, pk);
        }
        Some(true)
    }

    /// Runs a batch through: output-0 packets stay in `batch` (fragments released meanwhile
    /// are pushed before them), the others go to output 1.
    fn process(&mut self, batch: &mut Batch, cx: &mut Cx) {
        let mut other = Batch::new();
        let mut released = Batch::new();
        batch.filter_map(|p| {
            let mut slot = Some(p);
            let verdict = self.handle(&mut slot, &mut released, cx);
            if self.active_sec >= self.gc_sec {
                self.reap(false, &mut released, cx);
            }
            match (verdict, slot) {
                (Some(true), Some(p)) => Some(p),
                (Some(false), Some(p)) => {
                    let _ = other.push(p);
                    None
                }
                _ => None,
            }
        });
        if !released.is_empty() {
            cx.push(0, released);
        }
        if !other.is_empty() {
            cx.push(1, other);
        }
    }
}

/// The IP ID of a waiting fragment (of the quoted datagram for an ICMP error).
fn frag_id(p: &Packet) -> u16 {
    let Some(net) = p.network_header() else {
        return 0;
    };
    let Ok(ip) = Ipv4Packet::new_checked_truncated(net) else {
        return 0;
    };
    if ip.protocol() == PROTO_ICMP {
        if let Some(q) = net.get(ip.header_len()..).and_then(icmp_quoted) {
            return u16::from_be_bytes([q[4], q[5]]);
        }
    }
    ip.ident()
}

impl Element for AggregateIPFlows {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let secs = |s: Seconds| s.0.max(0.0) as i64;
        for (key, slot) in [
            ("TCP_TIMEOUT", &mut self.tcp_timeout),
            ("TCP_DONE_TIMEOUT", &mut self.tcp_done_timeout),
            ("UDP_TIMEOUT", &mut self.udp_timeout),
            ("FRAGMENT_TIMEOUT", &mut self.fragment_timeout),
            ("REAP", &mut self.reap_interval),
        ] {
            if let Some(s) = args.read::<Seconds>(key)? {
                *slot = secs(s);
            }
        }
        args.read_into("ICMP", &mut self.icmp)?;
        self.fragments = args.read("FRAGMENTS")?;
        self.smallest_timeout = self
            .tcp_timeout
            .min(self.tcp_done_timeout)
            .min(self.udp_timeout);
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let push = cx.input_is_push(0);
        match self.fragments {
            Some(true) if !push => return Err(
                "'FRAGMENTS true' is incompatible with pull; run this element in a push context"
                    .into(),
            ),
            None => self.fragments = Some(push),
            _ => {}
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.process(&mut batch, cx);
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = cx.pull(0, max);
        self.process(&mut b, cx);
        b
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        for map in [&mut self.tcp, &mut self.udp] {
            for hp in map.values_mut() {
                self.drops.add(Reason::AtStop, hp.fragments.len() as u64);
                hp.fragments.clear();
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .write("clear", |e, _, cx| {
                let mut out = Batch::new();
                let gc_sec = e.gc_sec;
                e.reap(true, &mut out, cx);
                e.gc_sec = gc_sec;
                if !out.is_empty() {
                    cx.push(0, out);
                }
                Ok(())
            })
            .drops(|e| &e.drops)
            .read("count", |e| e.next - 1)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AggregateIPFlows",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "",
    source: include_str!("aggregate_ip_flows.rs"),
    make: || Box::new(AggregateIPFlows::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_order_for_a_host_talking_to_itself() {
        // Ports 30 and 41 as they lie in memory, read as a little-endian word.
        let p = |s: u16, d: u16| {
            let (s, d) = (s.to_be_bytes(), d.to_be_bytes());
            u32::from_le_bytes([s[0], s[1], d[0], d[1]])
        };
        assert!(ports_reverse_order(p(30, 41)));
        assert!(!ports_reverse_order(p(41, 30)));
        assert_eq!(flip_ports(p(30, 41)), p(41, 30));
    }
}
