//! The engine of the rewriter classes (Click's `IPRewriterBase` and its subclasses):
//! configuration, the per-packet path, the reap timer and the handlers. Each class's file
//! (`ip_rewriter.rs`, `tcp_rewriter.rs`, `icmp_ping_rewriter.rs`, ...) documents it and makes
//! a [`Rewriter`] of its [`Variant`]. ICMPRewriter consults rewriters through their
//! [`RewriterLink`]. A rewriter that several threads reach becomes a [`SharedRewriter`]: the
//! same engine and flow table, its counts in atomics.

use std::any::Any;
use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use sluice_core::toolkit::{push_by_port, Verdict, NO_PORT};
use sluice_core::BATCH_MAX;
use sluice_core::{drop_reasons, Batch, Concurrency, ConfigCx, Cx, Drops, Element, Handlers};
use sluice_core::{DropReason, InitCx, Packet, SharedElement, Sharing, Table, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};

use super::flow_table::{lock, Flow, FlowId, FlowTable, Kind, Origin, Policy, SharedTable};
use super::ip_rewriter_patterns::IPRewriterPatterns;
use super::mapper::IPMapper;
use super::rewrite::{self, Headers, PortMode, DCCP, ICMP, TCP, UDP};
use super::spec::{InputSpec, MapperRef, Pattern, PatternRef};
use crate::standard::util::AnnoByte;

drop_reasons! {
    /// Why a rewriter drops a packet.
    pub enum Reason {
        BadIp => "bad IP header",
        NotRewritable => "not rewritable (protocol, fragment or length)",
        Refused => "dropped by input spec",
        NoMapping => "no free port or address",
        TableFull => "mapping table full",
        BadPattern => "pattern rewrites fields this class keeps",
        UnexpectedReply => "echo reply without a mapping",
    }
}

/// Which class a rewriter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// IPRewriter: TCP and UDP, in separate maps.
    Ip,
    /// TCPRewriter: TCP only.
    Tcp,
    /// UDPRewriter: UDP, TCP and DCCP in one map, with UDP timeouts.
    Udp,
    /// IPAddrRewriter: source addresses, any protocol.
    Addr,
    /// IPAddrPairRewriter: address pairs, any protocol.
    AddrPair,
    /// ICMPPingRewriter: ICMP echoes and replies, the identifier as the port.
    Ping,
}

/// The map a packet of protocol `proto` with ports belongs to in a rewriter of class
/// `variant` (for ICMPRewriter's quoted datagrams, with or without ports).
fn map_for(variant: Variant, proto: u8) -> Option<u8> {
    match (variant, proto) {
        (Variant::Addr | Variant::AddrPair, _) => Some(0),
        (Variant::Ip | Variant::Tcp, TCP) | (Variant::Udp, TCP | UDP | DCCP) => Some(0),
        (Variant::Ip, UDP) => Some(1),
        (Variant::Ping, ICMP) => Some(0),
        _ => None,
    }
}

/// The entry of the mapping for flow `id` in `owner`'s map `map`, as (flow, direction).
fn lookup(
    variant: Variant,
    t: &FlowTable,
    owner: u32,
    map: u8,
    id: &FlowId,
) -> Option<(usize, usize)> {
    let any = Ipv4Addr::UNSPECIFIED;
    match variant {
        Variant::Addr => t
            .get(owner, map, &addr_key(id.saddr, any))
            .or_else(|| t.get(owner, map, &addr_key(any, id.daddr))),
        Variant::AddrPair => t.get(owner, map, &addr_key(id.saddr, id.daddr)),
        _ => t.get(owner, map, id),
    }
}

/// What a packet of flow `id` in direction `dir` of flow `f` is rewritten to.
fn target(variant: Variant, f: &Flow, dir: usize, id: &FlowId) -> FlowId {
    let rw = f.rewritten(dir);
    match variant {
        Variant::Addr if dir == 0 => FlowId {
            saddr: f.ids[1].daddr,
            ..*id
        },
        Variant::Addr => FlowId {
            daddr: f.ids[0].saddr,
            ..*id
        },
        Variant::AddrPair => FlowId {
            saddr: rw.saddr,
            daddr: rw.daddr,
            ..*id
        },
        _ => rw,
    }
}

/// The key of the mapping entry of an echo (identifier `ident`, from `saddr` to `daddr`) or
/// of an echo reply (Click's: the identifier, and one more, as the ports; a reply's key is
/// the reverse of its echo's).
fn ping_key(saddr: Ipv4Addr, daddr: Ipv4Addr, ident: u16, echo: bool) -> FlowId {
    let next = ident.wrapping_add(1);
    let (sport, dport) = if echo { (ident, next) } else { (next, ident) };
    FlowId {
        saddr,
        sport,
        daddr,
        dport,
    }
}

/// What ICMPRewriter finds for a quoted flow in a rewriter's table.
#[derive(Clone, Copy, Debug)]
pub struct Reply {
    /// What a reply to the quoted flow is rewritten to.
    pub to: FlowId,
    /// The output of the entry's direction.
    pub output: usize,
    /// The flow's REPLY_ANNO byte, when the entry is its reply direction.
    pub reply_anno: Option<u8>,
}

/// How ICMPRewriter reaches a rewriter: its class, outputs, and table once initialised.
#[derive(Clone, Debug)]
pub struct RewriterLink {
    variant: Variant,
    /// The rewriter's number of outputs.
    pub noutputs: usize,
    table: Arc<OnceLock<(SharedTable, u32)>>,
    specs: Arc<Mutex<Vec<InputSpec>>>,
}

impl RewriterLink {
    /// Whether the rewriter is a TCPRewriter.
    pub fn is_tcp(&self) -> bool {
        self.variant == Variant::Tcp
    }

    /// The rewriter's number of inputs.
    pub fn ninputs(&self) -> usize {
        lock(&self.specs).len()
    }

    /// The REPLY_ANNO byte of the TCP mapping one of whose entries is flow `id`, if any.
    pub fn tcp_entry(&self, id: &FlowId) -> Option<u8> {
        let (table, owner) = self.table.get()?;
        let t = lock(table);
        let (i, _) = lookup(self.variant, &t, *owner, map_for(self.variant, TCP)?, id)?;
        Some(t.flow(i).reply_anno)
    }

    /// What TCP flow `id` is rewritten to, by its mapping, made at `now` by input `input`'s
    /// specification when there is none (Click's `get_entry`); the mapping's REPLY_ANNO byte
    /// becomes `reply_anno`. `None` when no mapping could be made.
    pub fn tcp_mapping(
        &self,
        id: &FlowId,
        input: usize,
        reply_anno: u8,
        now: Timestamp,
    ) -> Option<FlowId> {
        let (table, owner) = self.table.get()?;
        let map = map_for(self.variant, TCP)?;
        let mut t = lock(table);
        let (i, dir) = match lookup(self.variant, &t, *owner, map, id) {
            Some(e) => e,
            None => {
                let origin = Origin {
                    owner: *owner,
                    map,
                    input: input as u32,
                };
                let specs = &mut lock(&self.specs);
                (
                    make_flow(self.variant, specs, &mut t, origin, id, now).ok()?,
                    0,
                )
            }
        };
        let f = t.flow_mut(i);
        f.reply_anno = reply_anno;
        Some(target(self.variant, f, dir, id))
    }

    /// Records on the TCP mapping one of whose entries is flow `id` that the payload of that
    /// direction changed length by `delta` before sequence number `trigger` (see
    /// [`super::tcp_seq::SeqDeltas::update`]); false when there is no such mapping or the
    /// change is refused.
    pub fn add_seq_delta(&self, id: &FlowId, trigger: u32, delta: i32) -> bool {
        let Some((table, owner)) = self.table.get() else {
            return false;
        };
        let mut t = lock(table);
        match lookup(self.variant, &t, *owner, 0, id) {
            Some((i, dir)) => t.flow_mut(i).seq.update(dir, trigger, delta),
            None => false,
        }
    }

    /// The mapping entry matching `search`, a quoted flow of protocol `proto` reversed (an
    /// echo's identifier in `sport`), and what it rewrites a reply to.
    pub fn reply(&self, proto: u8, search: &FlowId) -> Option<Reply> {
        let (table, owner) = self.table.get()?;
        let map = map_for(self.variant, proto)?;
        let key = match self.variant {
            Variant::Ping => ping_key(search.saddr, search.daddr, search.sport, false),
            _ => *search,
        };
        let t = lock(table);
        let (i, dir) = lookup(self.variant, &t, *owner, map, &key)?;
        let f = t.flow(i);
        Some(Reply {
            to: target(self.variant, f, dir, search),
            output: f.outputs[dir],
            reply_anno: (dir == 1).then_some(f.reply_anno),
        })
    }
}

/// Why no mapping was made for a new flow.
enum Refusal {
    /// A `pass` input: the packet leaves unchanged by this output.
    Pass(usize),
    /// No mapping, for this reason.
    Drop(Reason),
}

/// The key of a new mapping of a rewriter of class `variant` for a packet of flow `id`.
fn new_key(variant: Variant, id: &FlowId) -> FlowId {
    match variant {
        Variant::Addr => addr_key(id.saddr, Ipv4Addr::UNSPECIFIED),
        Variant::AddrPair => addr_key(id.saddr, id.daddr),
        _ => *id,
    }
}

/// Makes a mapping of `origin` (its rewriter, of class `variant`, map and input) in `t` for
/// flow `id` at `now`, as the input's specification of `specs` says: the flow's number.
fn make_flow(
    variant: Variant,
    specs: &mut [InputSpec],
    t: &mut FlowTable,
    origin: Origin,
    id: &FlowId,
    now: Timestamp,
) -> Result<usize, Refusal> {
    let (owner, map) = (origin.owner, origin.map);
    let key = new_key(variant, id);
    let ping = variant == Variant::Ping;
    // Whether a reply entry `rev` (the reverse of a candidate) exists; an echo's
    // candidate identifier is `rev.dport`, and its reply key has it and the next.
    let taken = |rev: &FlowId| {
        let rev = if ping {
            ping_key(rev.saddr, rev.daddr, rev.dport, false)
        } else {
            *rev
        };
        t.contains(owner, map, &rev)
    };
    let (mut rewritten, outputs) = match &mut specs[origin.input as usize] {
        InputSpec::Pass(o) => return Err(Refusal::Pass(*o)),
        InputSpec::Drop => return Err(Refusal::Drop(Reason::Refused)),
        InputSpec::Keep(f, r) => (key, [*f, *r]),
        InputSpec::Pattern(PatternRef::Own(pat), f, r) => match pat.rewrite(&key, taken) {
            Some(rw) => (rw, [*f, *r]),
            None => return Err(Refusal::Drop(Reason::NoMapping)),
        },
        InputSpec::Mapper(MapperRef::Found(m)) => match lock(m).rewrite(&key, taken) {
            Some(found) => found,
            None => return Err(Refusal::Drop(Reason::NoMapping)),
        },
        InputSpec::Pattern(PatternRef::Named(_), ..) | InputSpec::Mapper(MapperRef::Named(_)) => {
            return Err(Refusal::Drop(Reason::Refused))
        }
    };
    if ping {
        rewritten.dport = rewritten.sport.wrapping_add(1);
    }
    let keeps_ports = rewritten.sport != 0 || rewritten.dport != 0;
    let keeps_daddr = variant == Variant::Addr && !rewritten.daddr.is_unspecified();
    if matches!(variant, Variant::Addr | Variant::AddrPair) && (keeps_ports || keeps_daddr) {
        return Err(Refusal::Drop(Reason::BadPattern));
    }
    let flow = Flow::new(origin, key, rewritten, outputs);
    t.add(flow, now).ok_or(Refusal::Drop(Reason::TableFull))
}

/// Seconds as a timestamp.
fn secs(s: f64) -> Timestamp {
    Timestamp::from_secs_f64(s)
}

/// MAPPING_CAPACITY: a number, or the rewriter whose table this one shares.
#[derive(Clone, Debug)]
enum Capacity {
    Own,
    Shared(String, Option<usize>),
}

/// A rewriter of any class: its engine, what it counts, and its scratch space.
pub struct Rewriter {
    engine: Engine,
    tally: Tally,
    /// One empty batch per output, to sort packets into.
    outs: Vec<Batch>,
}

/// What both forms of a rewriter hold: its configuration and flow table.
struct Engine {
    variant: Variant,
    /// The input specifications (shared with FTPPortMapper, which makes mappings too).
    specs: Arc<Mutex<Vec<InputSpec>>>,
    /// Each map's timeouts (IPRewriter: TCP, UDP).
    policies: Vec<Policy>,
    dst_anno: bool,
    reply_anno: Option<AnnoByte>,
    /// REAP_INTERVAL: how often expired flows are removed (0: never).
    reap: Timestamp,
    capacity: Capacity,
    table: SharedTable,
    /// This rewriter's number in its table.
    owner: Option<u32>,
    /// The table and owner number, for ICMPRewriter, once initialised.
    link: Arc<OnceLock<(SharedTable, u32)>>,
    noutputs: usize,
    /// The time of the last packet or timer, in nanoseconds (for the `table` handlers).
    now: AtomicI64,
}

/// What a rewriter counts as packets pass: drops by reason, and mappings it failed to make.
#[derive(Default)]
struct Tally {
    drops: Drops<Reason>,
    failures: u64,
}

/// The largest capacity (Click's default).
const MAX_CAPACITY: u64 = 0x7fff_ffff;

/// Reads a time keyword into `slot` (seconds).
fn read_secs(args: &mut Args, key: &str, slot: &mut Timestamp) -> Result<(), ()> {
    if let Some(Seconds(s)) = args.read(key)? {
        *slot = secs(s);
    }
    Ok(())
}

/// The pattern of IPRewriterPatterns element called `name`, if any.
fn named_pattern(name: &str, cx: &Cx) -> Option<Pattern> {
    (0..cx.nelements())
        .filter_map(|i| cx.element(i))
        .filter_map(|e| e.as_any().downcast_ref::<IPRewriterPatterns>())
        .find_map(|p| p.find(name).cloned())
}

/// Looks up a named pattern (a copy: each user keeps its own search position).
pub(super) fn resolve_pattern(p: &mut PatternRef, cx: &Cx) -> Result<(), String> {
    if let PatternRef::Named(name) = p {
        let found = named_pattern(name, cx).ok_or_else(|| format!("no such pattern '{name}'"))?;
        *p = PatternRef::Own(found);
    }
    Ok(())
}

/// Looks up what `spec` names: a pattern of an IPRewriterPatterns element, or a mapper
/// element (whose outputs must be below `noutputs`).
fn resolve(spec: &mut InputSpec, noutputs: usize, cx: &Cx) -> Result<(), String> {
    match spec {
        InputSpec::Pattern(p, ..) => resolve_pattern(p, cx),
        InputSpec::Mapper(m) => {
            if let MapperRef::Named(name) = m {
                let mapper = cx
                    .element_index(name)
                    .and_then(|i| cx.element(i))
                    .and_then(|e| e.as_any().downcast_ref::<IPMapper>())
                    .ok_or("element is not an IPMapper")?;
                mapper.check_outputs(name, noutputs)?;
                *m = MapperRef::Found(mapper.shared());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Handler names and functions of `patternN`, for the first inputs.
macro_rules! pattern_handlers {
    ($($n:literal),*) => {
        [$((
            concat!("pattern", $n),
            (|e: &Engine| e.patterns_text(Some($n))) as fn(&Engine) -> String,
            (|e: &Engine, v: &str, cx: &mut Cx| e.set_pattern($n, v, cx))
                as fn(&Engine, &str, &mut Cx) -> Result<(), String>,
        )),*]
    };
}

impl Rewriter {
    /// An unconfigured rewriter of class `variant`, with Click's defaults.
    pub fn new(variant: Variant) -> Rewriter {
        Rewriter {
            engine: Engine::new(variant),
            tally: Tally::default(),
            outs: Vec::new(),
        }
    }

    /// How ICMPRewriter reaches this rewriter.
    pub fn link(&self) -> RewriterLink {
        let e = &self.engine;
        RewriterLink {
            variant: e.variant,
            noutputs: e.noutputs,
            table: e.link.clone(),
            specs: e.specs.clone(),
        }
    }
}

impl Engine {
    /// An unconfigured engine of class `variant`, with Click's defaults.
    fn new(variant: Variant) -> Engine {
        let tcp = Policy {
            kind: Kind::Tcp,
            timeout: secs(300.0),
            long: secs(86400.0),
            done: secs(240.0),
            guarantee: secs(5.0),
        };
        let udp = Policy {
            kind: Kind::Udp,
            timeout: secs(300.0),
            long: secs(300.0),
            done: secs(300.0),
            guarantee: secs(5.0),
        };
        let plain = Policy {
            kind: Kind::Plain,
            timeout: secs(7200.0),
            long: secs(7200.0),
            done: secs(7200.0),
            guarantee: secs(5.0),
        };
        let policies = match variant {
            Variant::Ip => vec![tcp, udp],
            Variant::Tcp => vec![tcp],
            Variant::Udp => vec![udp],
            Variant::Addr | Variant::AddrPair => vec![plain],
            Variant::Ping => vec![Policy {
                timeout: secs(300.0),
                long: secs(300.0),
                done: secs(300.0),
                ..plain
            }],
        };
        Engine {
            variant,
            specs: Arc::default(),
            policies,
            dst_anno: true,
            reply_anno: None,
            reap: secs(900.0),
            capacity: Capacity::Own,
            table: Arc::new(Mutex::new(FlowTable::new(MAX_CAPACITY))),
            owner: None,
            link: Arc::default(),
            noutputs: 0,
            now: AtomicI64::new(0),
        }
    }

    /// Reads the timeout keywords of this class.
    fn read_timeouts(&mut self, args: &mut Args) -> Result<(), ()> {
        let (tcp, udp) = match self.variant {
            Variant::Ip => (Some(0), Some(1)),
            Variant::Tcp => (Some(0), None),
            Variant::Udp => (None, Some(0)),
            Variant::Addr | Variant::AddrPair | Variant::Ping => (None, None),
        };
        if let Some(u) = udp {
            let p = &mut self.policies[u];
            read_secs(args, "UDP_TIMEOUT", &mut p.timeout)?;
            if self.variant == Variant::Udp {
                read_secs(args, "TIMEOUT", &mut p.timeout)?;
            }
            p.long = p.timeout;
            read_secs(args, "UDP_STREAMING_TIMEOUT", &mut p.long)?;
            if self.variant == Variant::Udp {
                read_secs(args, "STREAMING_TIMEOUT", &mut p.long)?;
                read_secs(args, "GUARANTEE", &mut p.guarantee)?;
            }
            read_secs(args, "UDP_GUARANTEE", &mut p.guarantee)?;
        }
        if let Some(t) = tcp {
            let p = &mut self.policies[t];
            read_secs(args, "TCP_NODATA_TIMEOUT", &mut p.timeout)?;
            read_secs(args, "TCP_GUARANTEE", &mut p.guarantee)?;
            read_secs(args, "TIMEOUT", &mut p.long)?;
            read_secs(args, "TCP_TIMEOUT", &mut p.long)?;
            read_secs(args, "TCP_DONE_TIMEOUT", &mut p.done)?;
            read_secs(args, "GUARANTEE", &mut p.guarantee)?;
        }
        if tcp.is_none() && udp.is_none() {
            let p = &mut self.policies[0];
            read_secs(args, "TIMEOUT", &mut p.timeout)?;
            read_secs(args, "GUARANTEE", &mut p.guarantee)?;
        }
        Ok(())
    }

    /// The map a packet belongs to, or `None` when this class does not rewrite it.
    fn map_of(&self, h: &Headers) -> Option<u8> {
        match self.variant {
            Variant::Addr | Variant::AddrPair => Some(0),
            Variant::Ping => h.ping.map(|_| 0),
            v if h.first_frag && h.tlen >= 8 => map_for(v, h.proto),
            _ => None,
        }
    }

    /// The flow identifier of a packet: its addresses and ports, or an echo's key.
    fn flow_id(&self, h: &Headers) -> FlowId {
        match h.ping {
            Some((echo, ident)) if self.variant == Variant::Ping => {
                ping_key(h.id.saddr, h.id.daddr, ident, echo)
            }
            _ => h.id,
        }
    }

    /// The time of the last packet, timer or handler write.
    fn now(&self) -> Timestamp {
        Timestamp(self.now.load(Ordering::Relaxed))
    }

    /// Notes `now` as the time of the last packet, timer or handler write.
    fn seen(&self, now: Timestamp) {
        self.now.store(now.0, Ordering::Relaxed);
    }

    /// Makes a mapping for a packet no entry matched, as input `port`'s specification says:
    /// the flow's number, or why there is none.
    fn new_flow(
        &self,
        t: &mut FlowTable,
        port: usize,
        map: u8,
        id: &FlowId,
        p: &Packet,
        now: Timestamp,
    ) -> Result<usize, Refusal> {
        let origin = Origin {
            owner: self.owner.unwrap_or(0),
            map,
            input: port as u32,
        };
        let i = make_flow(self.variant, &mut lock(&self.specs), t, origin, id, now)?;
        if let Some(a) = self.reply_anno {
            t.flow_mut(i).reply_anno = a.get(p);
        }
        Ok(i)
    }

    /// The output of input `port` when it is a `pass` input.
    fn pass_output(&self, port: usize) -> Option<usize> {
        match lock(&self.specs)[port] {
            InputSpec::Pass(o) => Some(o),
            _ => None,
        }
    }

    /// Rewrites packet `p` as entry (`i`, `dir`) says and tracks its flow's state.
    fn apply(&self, t: &mut FlowTable, i: usize, dir: usize, h: &Headers, p: &mut Packet) {
        let f = t.flow_mut(i);
        let to = target(self.variant, f, dir, &h.id);
        let mode = match self.variant {
            Variant::Addr | Variant::AddrPair | Variant::Ping => PortMode::None,
            Variant::Ip if f.origin.map == 1 => PortMode::Any,
            Variant::Udp => PortMode::Any,
            _ => PortMode::Tcp,
        };
        if self.variant == Variant::Ping {
            // The echo's identifier is the rewritten source port, a reply's the destination.
            rewrite::apply_ping(p, h, &to, if dir == 0 { to.sport } else { to.dport });
        } else {
            rewrite::apply(p, h, &to, mode);
        }
        let set_dst = match self.variant {
            Variant::Addr => dir == 1,
            Variant::AddrPair => true,
            _ => self.dst_anno,
        };
        if set_dst {
            p.set_dst_ip_anno(to.daddr);
        }
        if let (Some(a), 1) = (self.reply_anno, dir) {
            a.set(p, f.reply_anno);
        }
        match mode {
            PortMode::Tcp => {
                if let Some((rst, fin, syn, payload)) = h.tcp {
                    f.track_tcp(dir, rst, fin, syn, payload);
                    if self.variant == Variant::Tcp && f.seq.any() {
                        let start = h.off + h.hl;
                        f.seq.apply(dir, &mut p.data_mut()[start..start + h.tlen]);
                    }
                }
            }
            PortMode::Any => f.track_udp(dir),
            PortMode::None => {}
        }
    }

    /// Handles one packet arriving on input `port`, counting in `tally`.
    fn handle(
        &self,
        t: &mut FlowTable,
        port: usize,
        mut p: Packet,
        now: Timestamp,
        tally: &mut Tally,
    ) -> Verdict {
        let Some(h) = rewrite::parse(&p) else {
            tally.drops.count(Reason::BadIp);
            return Verdict::Gone;
        };
        let Some(map) = self.map_of(&h) else {
            if let Some(o) = self.pass_output(port) {
                return Verdict::Out(o, p);
            }
            tally.drops.count(Reason::NotRewritable);
            return Verdict::Gone;
        };
        let owner = self.owner.unwrap_or(0);
        let id = self.flow_id(&h);
        let (i, dir) = match lookup(self.variant, t, owner, map, &id) {
            Some(e) => e,
            None if self.variant == Variant::Ping && h.ping.is_some_and(|(echo, _)| !echo) => {
                if let Some(o) = self.pass_output(port) {
                    return Verdict::Out(o, p);
                }
                tally.drops.count(Reason::UnexpectedReply);
                return Verdict::Gone;
            }
            None => match self.new_flow(t, port, map, &id, &p, now) {
                Ok(i) => (i, 0),
                Err(Refusal::Pass(o)) => return Verdict::Out(o, p),
                Err(Refusal::Drop(reason)) => {
                    if matches!(reason, Reason::NoMapping | Reason::TableFull) {
                        tally.failures += 1;
                    }
                    tally.drops.count(reason);
                    return Verdict::Gone;
                }
            },
        };
        self.apply(t, i, dir, &h, &mut p);
        t.touch(i, now);
        Verdict::Out(t.flow(i).outputs[dir], p)
    }

    /// The `table` handler of map `map`: one line per entry.
    fn table_text(&self, map: u8, now: Timestamp) -> String {
        let Some(owner) = self.owner else {
            return String::new();
        };
        let t = lock(&self.table);
        let mut s = String::new();
        for (i, dir) in t.entries(owner, map) {
            let f = t.flow(i);
            let (me, other) = (f.ids[dir], f.ids[1 - dir]);
            match self.variant {
                Variant::Addr => s.push_str(&format!("{} => {}", me.saddr, other.daddr)),
                Variant::AddrPair => s.push_str(&format!(
                    "({}, {}) => ({}, {})",
                    me.saddr, me.daddr, other.daddr, other.saddr
                )),
                Variant::Ping => {
                    // Identifiers: an echo entry's source port, a reply entry's destination.
                    let rw = f.rewritten(dir);
                    let (a, b) = if dir == 0 {
                        (me.sport, rw.sport)
                    } else {
                        (me.dport, rw.dport)
                    };
                    s.push_str(&format!(
                        "({}, {}, {a}) => ({}, {}, {b})",
                        me.saddr, me.daddr, rw.saddr, rw.daddr
                    ));
                }
                _ => s.push_str(&format!("{} => {}", me, f.rewritten(dir))),
            }
            let delta = f.seq.newest(dir);
            if self.variant == Variant::Tcp && delta != 0 {
                s.push_str(&format!(" seq {delta:+}"));
            }
            let star = |d: usize| if d == dir { "*" } else { "" };
            let left = t.shown_expiry(i).0 + 500_000_000 - now.0;
            s.push_str(&format!(
                " [{}{} {}{}] i{} exp{}\n",
                star(0),
                f.outputs[0],
                star(1),
                f.outputs[1],
                f.origin.input,
                left / 1_000_000_000
            ));
        }
        s
    }

    /// `lookup SADDR SPORT DADDR DPORT`: the rewritten flow of that TCP entry, if any.
    fn lookup_text(&self, param: &str) -> Result<String, String> {
        let w = split_words(param);
        let [sa, sp, da, dp] = w.as_slice() else {
            return Err("expected SADDR SPORT DADDR DPORT".into());
        };
        let id = FlowId {
            saddr: Ipv4Addr::from_arg(sa)?,
            sport: u16::from_arg(sp)?,
            daddr: Ipv4Addr::from_arg(da)?,
            dport: u16::from_arg(dp)?,
        };
        let Some(owner) = self.owner else {
            return Ok(String::new());
        };
        let t = lock(&self.table);
        Ok(match t.get(owner, 0, &id) {
            Some((i, dir)) => {
                let r = t.flow(i).rewritten(dir);
                format!("{} {} {} {}", r.saddr, r.sport, r.daddr, r.dport)
            }
            None => String::new(),
        })
    }

    /// Live flows by input.
    fn counts(&self) -> Vec<u64> {
        match self.owner {
            Some(o) => lock(&self.table).counts(o).to_vec(),
            None => Vec::new(),
        }
    }

    /// The `patterns` handler, or one input's line (`patternN`).
    fn patterns_text(&self, only: Option<usize>) -> String {
        let counts = self.counts();
        let mut s = String::new();
        for (i, spec) in lock(&self.specs).iter().enumerate() {
            if only.is_some_and(|o| o != i) {
                continue;
            }
            s.push_str(&spec.unparse());
            match counts.get(i) {
                Some(&n) if n > 0 => s.push_str(&format!(" [{n}]\n")),
                _ => s.push('\n'),
            }
        }
        s
    }

    /// Rewrites the packets of `batch`, arrived on input `port` at `now`, under the table's
    /// lock, keeping those that leave and counting in `tally`: the output of each packet kept.
    fn route(
        &self,
        port: usize,
        batch: &mut Batch,
        now: Timestamp,
        tally: &mut Tally,
    ) -> [u32; BATCH_MAX] {
        self.seen(now);
        let mut ports = [NO_PORT; BATCH_MAX];
        let mut t = lock(&self.table);
        let mut n = 0;
        batch.filter_map(|p| match self.handle(&mut t, port, p, now, tally) {
            Verdict::Out(o, p) => {
                ports[n] = o as u32;
                n += 1;
                Some(p)
            }
            Verdict::Gone => None,
        });
        ports
    }

    /// The `capacity` write handler.
    fn set_capacity(&self, value: &str, cx: &mut Cx) -> Result<(), String> {
        let n = u64::from_arg(value)?.min(MAX_CAPACITY);
        lock(&self.table).set_capacity(n, cx.now());
        Ok(())
    }

    /// Hot swap: takes the flows of `old`, the engine of the rewriter this one replaces, if
    /// both own their tables and have the same variant, outputs and number of inputs.
    fn take_flows(&self, old: &Engine, cx: &mut Cx) {
        let alike = self.variant == old.variant
            && matches!(
                (&self.capacity, &old.capacity),
                (Capacity::Own, Capacity::Own)
            )
            && self.noutputs == old.noutputs
            && lock(&self.specs).len() == lock(&old.specs).len();
        if alike && self.owner.is_some() && old.owner.is_some() {
            lock(&self.table).take_flows(&mut lock(&old.table), cx.now());
            // The flows' expiries show as seconds from the last time the old one saw.
            self.seen(self.now().max(old.now()));
        }
    }

    /// The handlers both forms answer through a shared reference: all but the counts.
    fn shared_table(&self) -> Table<Self> {
        let mut t = Table::<Self>::new()
            .read("table_size", |e| e.counts().iter().sum::<u64>())
            .read("nmappings", |e| e.counts().iter().sum::<u64>())
            .read("patterns", |e| e.patterns_text(None))
            .read("size", |e| lock(&e.table).size())
            .read("capacity", |e| lock(&e.table).capacity())
            .setting()
            .footprint(|e| lock(&e.table).footprint())
            .write_ref("capacity", |e, v, cx| e.set_capacity(v, cx))
            .action_ref("clear", |e| lock(&e.table).shrink(e.now(), true));
        t = match self.variant {
            Variant::Ip => t
                .read_with("tcp_table", |e| e.table_text(0, e.now()))
                .read_with("udp_table", |e| e.table_text(1, e.now()))
                .read_param("tcp_lookup", |e, p| e.lookup_text(p)),
            Variant::Tcp => t
                .read_with("table", |e| e.table_text(0, e.now()))
                .read_param("lookup", |e, p| e.lookup_text(p)),
            Variant::Ping => t
                .read_with("table", |e| e.table_text(0, e.now()))
                .read_with("mappings", |e| e.table_text(0, e.now())),
            _ => t.read_with("table", |e| e.table_text(0, e.now())),
        };
        let ninputs = lock(&self.specs).len();
        for (name, read, write) in pattern_handlers!(0, 1, 2, 3, 4, 5, 6, 7)
            .into_iter()
            .take(ninputs)
        {
            t = t.read(name, read).write_ref(name, write);
        }
        t
    }

    /// Replaces input `i`'s specification, removing the flows it made.
    fn set_pattern(&self, i: usize, value: &str, cx: &mut Cx) -> Result<(), String> {
        if i >= lock(&self.specs).len() {
            return Err(format!("no input {i}"));
        }
        let mut spec = InputSpec::parse(value, self.noutputs, |w| cx.element_index(w).is_some())
            .map_err(|e| format!("input spec {i}: {e}"))?;
        resolve(&mut spec, self.noutputs, cx).map_err(|e| format!("input spec {i}: {e}"))?;
        if let Some(o) = self.owner {
            lock(&self.table).remove_input(o, i as u32);
        }
        lock(&self.specs)[i] = spec;
        Ok(())
    }
}

/// The key of an address-only flow.
fn addr_key(saddr: Ipv4Addr, daddr: Ipv4Addr) -> FlowId {
    FlowId {
        saddr,
        sport: 0,
        daddr,
        dport: 0,
    }
}

impl Element for Rewriter {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let e = &mut self.engine;
        if matches!(
            e.variant,
            Variant::Ip | Variant::Tcp | Variant::Udp | Variant::Ping
        ) {
            args.read_into("DST_ANNO", &mut e.dst_anno)?;
        }
        e.reply_anno = args.read("REPLY_ANNO")?;
        e.read_timeouts(args)?;
        let mut cap: Option<String> = args.read("CAPACITY")?;
        if let Some(c) = args.read::<String>("MAPPING_CAPACITY")? {
            cap = Some(c);
        }
        if let Some(Seconds(s)) = args.read("REAP_TIME")? {
            e.reap = secs(s);
        }
        if let Some(Seconds(s)) = args.read("REAP_INTERVAL")? {
            e.reap = secs(s);
        }
        match cap {
            Some(c) => match c.trim().parse::<u64>() {
                Ok(n) if n <= MAX_CAPACITY => lock(&e.table).set_capacity(n, Timestamp::ZERO),
                _ => {
                    let idx = cx.element_index(c.trim());
                    if idx.is_none() {
                        args.error("bad MAPPING_CAPACITY");
                        return Err(());
                    }
                    e.capacity = Capacity::Shared(c.trim().to_string(), idx);
                }
            },
            None => e.capacity = Capacity::Own,
        }
        let specs = args.rest();
        if specs.len() != cx.ninputs() {
            args.error(format!(
                "need {} arguments, one per input port",
                cx.ninputs()
            ));
            return Err(());
        }
        e.noutputs = cx.noutputs();
        let mut ok = true;
        for (i, s) in specs.iter().enumerate() {
            match InputSpec::parse(s, e.noutputs, |w| cx.element_index(w).is_some()) {
                Ok(spec) => lock(&e.specs).push(spec),
                Err(err) => {
                    args.error(format!("input spec {i}: {err}"));
                    ok = false;
                }
            }
        }
        ok.then_some(()).ok_or(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let e = &mut self.engine;
        if let Capacity::Shared(name, Some(idx)) = &e.capacity {
            let other = cx
                .element(*idx)
                .and_then(|el| el.as_any().downcast_ref::<Rewriter>())
                .ok_or_else(|| format!("MAPPING_CAPACITY: '{name}' is not a rewriter"))?;
            e.table = other.engine.table.clone();
        }
        for (i, spec) in lock(&e.specs).iter_mut().enumerate() {
            resolve(spec, e.noutputs, cx).map_err(|err| format!("input spec {i}: {err}"))?;
        }
        let ninputs = lock(&e.specs).len();
        let owner = lock(&e.table).register(e.policies.clone(), ninputs);
        e.owner = Some(owner);
        // A fresh element is initialised once.
        let _ = e.link.set((e.table.clone(), owner));
        if e.reap > Timestamp::ZERO {
            let at = cx.now() + e.reap;
            cx.schedule_housekeeping(0, at);
        }
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, cx: &mut Cx) {
        // Sorted under the table's lock, pushed after it is released: an element downstream
        // (ICMPRewriter) may consult the table.
        let ports = self
            .engine
            .route(port, &mut batch, cx.now(), &mut self.tally);
        let unroutable = push_by_port(batch, &ports, self.engine.noutputs, &mut self.outs, cx);
        debug_assert_eq!(unroutable, 0, "outputs are checked at configuration");
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let e = &self.engine;
        e.seen(cx.now());
        lock(&e.table).shrink(cx.now(), false);
        let at = cx.now() + e.reap;
        cx.schedule_housekeeping(0, at);
    }

    /// Hot swap: a rewriter of the same class with a table of its own (shared with no other
    /// rewriter, before and after), as many inputs and outputs, takes the old one's flows (mappings, expiries, TCP sequence deltas), with its
    /// own timeouts and capacity; otherwise it starts afresh, as in Click.
    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        if let Some(old) = old.as_any().downcast_ref::<Rewriter>() {
            self.engine.take_flows(&old.engine, cx);
        }
    }

    fn take_shared_state(&mut self, old: &dyn SharedElement, cx: &mut Cx) {
        if let Some(old) = old.as_any().downcast_ref::<SharedRewriter>() {
            self.engine.take_flows(&old.engine, cx);
        }
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Separable
    }

    fn into_shared(self: Box<Self>, _sharing: Sharing) -> Option<Arc<dyn SharedElement>> {
        Some(Arc::new(SharedRewriter::new(self.engine, self.tally)))
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        let e = &self.engine;
        if let Some(o) = e.owner {
            let mut t = lock(&e.table);
            for i in 0..lock(&e.specs).len() {
                t.remove_input(o, i as u32);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest_ref(|e| Some(&e.engine), self.engine.shared_table().into())
            .read("mapping_failures", |e| e.tally.failures)
            .drops(|e| &e.tally.drops)
            .into()
    }
}

/// The thread-safe form of a rewriter, which the router makes when several threads reach
/// it: one rewriter whose flow table is locked once per batch, whichever thread pushes, its
/// counts in atomic counters (starting from the element's), and expired flows reaped by the
/// pushes that find the reap interval past (a shared element has no timer).
struct SharedRewriter {
    engine: Engine,
    /// Drops by reason, in [`Reason`]'s order.
    drops: Vec<AtomicU64>,
    failures: AtomicU64,
    /// When expired flows are next reaped, in nanoseconds.
    next_reap: AtomicI64,
}

impl SharedRewriter {
    /// The shared form of `engine`, whose element counted `tally`.
    fn new(engine: Engine, tally: Tally) -> SharedRewriter {
        let next_reap = engine.now().0.saturating_add(engine.reap.0);
        SharedRewriter {
            drops: tally.drops.counts().map(|(_, n)| n.into()).collect(),
            failures: tally.failures.into(),
            next_reap: next_reap.into(),
            engine,
        }
    }

    /// Adds the counts of one batch.
    fn add(&self, tally: &Tally) {
        for (a, (_, n)) in self.drops.iter().zip(tally.drops.counts()) {
            if n > 0 {
                a.fetch_add(n, Ordering::Relaxed);
            }
        }
        if tally.failures > 0 {
            self.failures.fetch_add(tally.failures, Ordering::Relaxed);
        }
    }

    /// Reaps expired flows if the reap interval has passed at `now` (one pusher does).
    fn reap(&self, now: Timestamp) {
        let due = self.next_reap.load(Ordering::Relaxed);
        if self.engine.reap == Timestamp::ZERO || now.0 < due {
            return;
        }
        let next = now.0.saturating_add(self.engine.reap.0);
        let won = self
            .next_reap
            .compare_exchange(due, next, Ordering::Relaxed, Ordering::Relaxed);
        if won.is_ok() {
            lock(&self.engine.table).shrink(now, false);
        }
    }
}

impl SharedElement for SharedRewriter {
    fn push(&self, port: usize, mut batch: Batch, cx: &mut Cx) {
        let now = cx.now();
        let mut tally = Tally::default();
        let ports = self.engine.route(port, &mut batch, now, &mut tally);
        self.add(&tally);
        self.reap(now);
        let unroutable = push_by_port(batch, &ports, self.engine.noutputs, &mut Vec::new(), cx);
        debug_assert_eq!(unroutable, 0, "outputs are checked at configuration");
    }

    fn pull(&self, _port: usize, _max: usize, _cx: &mut Cx) -> Batch {
        Batch::new()
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .nest_ref(|e| Some(&e.engine), self.engine.shared_table().into())
            .read("mapping_failures", |e| e.failures.load(Ordering::Relaxed))
            .drop_counts(|e| {
                Reason::NAMES
                    .iter()
                    .zip(&e.drops)
                    .map(|(&name, n)| (name, n.load(Ordering::Relaxed)))
                    .collect()
            })
            .into()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each handler's name and whether it reads and writes.
    fn specs(h: &Handlers) -> Vec<(&'static str, bool, bool)> {
        let mut v: Vec<_> = h.specs().map(|s| (s.name, s.read, s.write)).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn both_forms_list_the_same_handler_names() {
        for variant in [Variant::Ip, Variant::Tcp, Variant::Ping, Variant::Addr] {
            let element = Rewriter::new(variant);
            lock(&element.engine.specs).push(InputSpec::Drop);
            let want = specs(&element.handler_table());
            assert!(
                want.contains(&("capacity", true, true))
                    && want.contains(&("pattern0", true, true))
            );
            let shared = SharedRewriter::new(element.engine, Tally::default());
            assert_eq!(specs(&shared.handler_table()), want);
        }
    }
}
