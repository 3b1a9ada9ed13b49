//! The engine of the rewriter classes (Click's `IPRewriterBase` and its subclasses):
//! configuration, the per-packet path, the reap timer and the handlers. Each class's file
//! (`ip_rewriter.rs`, `tcp_rewriter.rs`, ...) documents it and makes a [`Rewriter`] of its
//! [`Variant`].

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use sluice_core::toolkit::{push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, Handlers, InitCx};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};

use super::flow_table::{lock, Flow, FlowId, FlowTable, Kind, Origin, Policy, SharedTable};
use super::ip_rewriter_patterns::IPRewriterPatterns;
use super::rewrite::{self, Headers, PortMode, DCCP, TCP, UDP};
use super::spec::{InputSpec, Pattern, PatternRef};
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

/// A rewriter of any class.
pub struct Rewriter {
    variant: Variant,
    specs: Vec<InputSpec>,
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
    noutputs: usize,
    /// The time of the last packet, timer or handler write (for the `table` handlers).
    now: Timestamp,
    failures: u64,
    drops: Drops<Reason>,
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

/// Looks up a named pattern of `spec` (a copy: each input keeps its own search position).
fn resolve(spec: &mut InputSpec, cx: &Cx) -> Result<(), String> {
    if let InputSpec::Pattern(p, ..) = spec {
        if let PatternRef::Named(name) = p {
            let found =
                named_pattern(name, cx).ok_or_else(|| format!("no such pattern '{name}'"))?;
            *p = PatternRef::Own(found);
        }
    }
    Ok(())
}

impl Rewriter {
    /// An unconfigured rewriter of class `variant`, with Click's defaults.
    pub fn new(variant: Variant) -> Rewriter {
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
        };
        Rewriter {
            variant,
            specs: Vec::new(),
            policies,
            dst_anno: true,
            reply_anno: None,
            reap: secs(900.0),
            capacity: Capacity::Own,
            table: Arc::new(Mutex::new(FlowTable::new(MAX_CAPACITY))),
            owner: None,
            noutputs: 0,
            now: Timestamp::ZERO,
            failures: 0,
            drops: Drops::default(),
        }
    }

    /// Reads the timeout keywords of this class.
    fn read_timeouts(&mut self, args: &mut Args) -> Result<(), ()> {
        let (tcp, udp) = match self.variant {
            Variant::Ip => (Some(0), Some(1)),
            Variant::Tcp => (Some(0), None),
            Variant::Udp => (None, Some(0)),
            Variant::Addr | Variant::AddrPair => (None, None),
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
        let ports = h.first_frag && h.tlen >= 8;
        match (self.variant, h.proto) {
            (Variant::Addr | Variant::AddrPair, _) => Some(0),
            (Variant::Ip, TCP) | (Variant::Tcp, TCP) if ports => Some(0),
            (Variant::Ip, UDP) if ports => Some(1),
            (Variant::Udp, TCP | UDP | DCCP) if ports => Some(0),
            _ => None,
        }
    }

    /// The existing mapping entry for a packet, as (flow, direction).
    fn lookup(&self, t: &FlowTable, owner: u32, map: u8, id: &FlowId) -> Option<(usize, usize)> {
        let any = Ipv4Addr::UNSPECIFIED;
        match self.variant {
            Variant::Addr => t
                .get(owner, map, &addr_key(id.saddr, any))
                .or_else(|| t.get(owner, map, &addr_key(any, id.daddr))),
            Variant::AddrPair => t.get(owner, map, &addr_key(id.saddr, id.daddr)),
            _ => t.get(owner, map, id),
        }
    }

    /// The key of a new mapping for a packet of flow `id`.
    fn new_key(&self, id: &FlowId) -> FlowId {
        match self.variant {
            Variant::Addr => addr_key(id.saddr, Ipv4Addr::UNSPECIFIED),
            Variant::AddrPair => addr_key(id.saddr, id.daddr),
            _ => *id,
        }
    }

    /// Makes a mapping for a packet no entry matched, as input `port`'s specification says:
    /// the flow's number, or where the packet goes instead.
    fn new_flow(
        &mut self,
        t: &mut FlowTable,
        port: usize,
        map: u8,
        h: &Headers,
        p: &Packet,
        now: Timestamp,
    ) -> Result<usize, Option<usize>> {
        let owner = self.owner.unwrap_or(0);
        let key = self.new_key(&h.id);
        let (rewritten, outputs) = match &mut self.specs[port] {
            InputSpec::Pass(o) => return Err(Some(*o)),
            InputSpec::Drop => {
                self.drops.count(Reason::Refused);
                return Err(None);
            }
            InputSpec::Keep(f, r) => (key, [*f, *r]),
            InputSpec::Pattern(PatternRef::Own(pat), f, r) => {
                match pat.rewrite(&key, |rev| t.contains(owner, map, rev)) {
                    Some(rw) => (rw, [*f, *r]),
                    None => {
                        self.failures += 1;
                        self.drops.count(Reason::NoMapping);
                        return Err(None);
                    }
                }
            }
            InputSpec::Pattern(PatternRef::Named(_), ..) => {
                self.drops.count(Reason::Refused);
                return Err(None);
            }
        };
        let keeps_ports = rewritten.sport != 0 || rewritten.dport != 0;
        let keeps_daddr = self.variant == Variant::Addr && !rewritten.daddr.is_unspecified();
        if matches!(self.variant, Variant::Addr | Variant::AddrPair) && (keeps_ports || keeps_daddr)
        {
            self.drops.count(Reason::BadPattern);
            return Err(None);
        }
        let origin = Origin {
            owner,
            map,
            input: port as u32,
        };
        let mut flow = Flow::new(origin, key, rewritten, outputs);
        if let Some(a) = self.reply_anno {
            flow.reply_anno = a.get(p);
        }
        t.add(flow, now).ok_or_else(|| {
            self.failures += 1;
            self.drops.count(Reason::TableFull);
            None
        })
    }

    /// Rewrites packet `p` as entry (`i`, `dir`) says and tracks its flow's state.
    fn apply(&self, t: &mut FlowTable, i: usize, dir: usize, h: &Headers, p: &mut Packet) {
        let f = t.flow_mut(i);
        let rw = f.rewritten(dir);
        let (to, mode) = match self.variant {
            Variant::Addr => {
                let mut to = h.id;
                if dir == 0 {
                    to.saddr = f.ids[1].daddr;
                } else {
                    to.daddr = f.ids[0].saddr;
                }
                (to, PortMode::None)
            }
            Variant::AddrPair => {
                let mut to = h.id;
                (to.saddr, to.daddr) = (rw.saddr, rw.daddr);
                (to, PortMode::None)
            }
            Variant::Ip if f.origin.map == 1 => (rw, PortMode::Any),
            Variant::Udp => (rw, PortMode::Any),
            _ => (rw, PortMode::Tcp),
        };
        rewrite::apply(p, h, &to, mode);
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
                }
            }
            PortMode::Any => f.track_udp(dir),
            PortMode::None => {}
        }
    }

    /// Handles one packet arriving on input `port`.
    fn handle(&mut self, t: &mut FlowTable, port: usize, mut p: Packet, now: Timestamp) -> Verdict {
        let Some(h) = rewrite::parse(&p) else {
            self.drops.count(Reason::BadIp);
            return Verdict::Gone;
        };
        let Some(map) = self.map_of(&h) else {
            if let InputSpec::Pass(o) = self.specs[port] {
                return Verdict::Out(o, p);
            }
            self.drops.count(Reason::NotRewritable);
            return Verdict::Gone;
        };
        let owner = self.owner.unwrap_or(0);
        let (i, dir) = match self.lookup(t, owner, map, &h.id) {
            Some(e) => e,
            None => match self.new_flow(t, port, map, &h, &p, now) {
                Ok(i) => (i, 0),
                Err(Some(o)) => return Verdict::Out(o, p),
                Err(None) => return Verdict::Gone,
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
                _ => s.push_str(&format!("{} => {}", me, f.rewritten(dir))),
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
        for (i, spec) in self.specs.iter().enumerate() {
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

    /// Replaces input `i`'s specification, removing the flows it made.
    fn set_pattern(&mut self, i: usize, value: &str, cx: &mut Cx) -> Result<(), String> {
        if i >= self.specs.len() {
            return Err(format!("no input {i}"));
        }
        let mut spec =
            InputSpec::parse(value, self.noutputs).map_err(|e| format!("input spec {i}: {e}"))?;
        resolve(&mut spec, cx)?;
        if let Some(o) = self.owner {
            lock(&self.table).remove_input(o, i as u32);
        }
        self.specs[i] = spec;
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

/// Handler names and functions of `patternN`, for the first inputs.
macro_rules! pattern_handlers {
    ($($n:literal),*) => {
        [$((
            concat!("pattern", $n),
            (|e: &Rewriter| e.patterns_text(Some($n))) as fn(&Rewriter) -> String,
            (|e: &mut Rewriter, v: &str, cx: &mut Cx| e.set_pattern($n, v, cx))
                as fn(&mut Rewriter, &str, &mut Cx) -> Result<(), String>,
        )),*]
    };
}

impl Element for Rewriter {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        if matches!(self.variant, Variant::Ip | Variant::Tcp | Variant::Udp) {
            args.read_into("DST_ANNO", &mut self.dst_anno)?;
        }
        self.reply_anno = args.read("REPLY_ANNO")?;
        self.read_timeouts(args)?;
        let mut cap: Option<String> = args.read("CAPACITY")?;
        if let Some(c) = args.read::<String>("MAPPING_CAPACITY")? {
            cap = Some(c);
        }
        if let Some(Seconds(s)) = args.read("REAP_TIME")? {
            self.reap = secs(s);
        }
        if let Some(Seconds(s)) = args.read("REAP_INTERVAL")? {
            self.reap = secs(s);
        }
        match cap {
            Some(c) => match c.trim().parse::<u64>() {
                Ok(n) if n <= MAX_CAPACITY => lock(&self.table).set_capacity(n, Timestamp::ZERO),
                _ => {
                    let idx = cx.element_index(c.trim());
                    if idx.is_none() {
                        args.error("bad MAPPING_CAPACITY");
                        return Err(());
                    }
                    self.capacity = Capacity::Shared(c.trim().to_string(), idx);
                }
            },
            None => self.capacity = Capacity::Own,
        }
        let specs = args.rest();
        if specs.len() != cx.ninputs() {
            args.error(format!(
                "need {} arguments, one per input port",
                cx.ninputs()
            ));
            return Err(());
        }
        self.noutputs = cx.noutputs();
        let mut ok = true;
        for (i, s) in specs.iter().enumerate() {
            match InputSpec::parse(s, self.noutputs) {
                Ok(spec) => self.specs.push(spec),
                Err(e) => {
                    args.error(format!("input spec {i}: {e}"));
                    ok = false;
                }
            }
        }
        ok.then_some(()).ok_or(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if let Capacity::Shared(name, Some(idx)) = &self.capacity {
            let other = cx
                .element(*idx)
                .and_then(|e| e.as_any().downcast_ref::<Rewriter>())
                .ok_or_else(|| format!("MAPPING_CAPACITY: '{name}' is not a rewriter"))?;
            self.table = other.table.clone();
        }
        for (i, spec) in self.specs.iter_mut().enumerate() {
            resolve(spec, cx).map_err(|e| format!("input spec {i}: {e}"))?;
        }
        self.owner = Some(lock(&self.table).register(self.policies.clone(), self.specs.len()));
        if self.reap > Timestamp::ZERO {
            cx.schedule_after(0, self.reap);
        }
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let table = self.table.clone();
        let mut t = lock(&table);
        let now = cx.now();
        self.now = now;
        push_sorted(batch, cx, |p, _| self.handle(&mut t, port, p, now));
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.now = cx.now();
        lock(&self.table).shrink(self.now, false);
        cx.schedule_after(0, self.reap);
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        if let Some(o) = self.owner {
            let mut t = lock(&self.table);
            for i in 0..self.specs.len() {
                t.remove_input(o, i as u32);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        let mut t = Table::<Self>::new()
            .read("table_size", |e| e.counts().iter().sum::<u64>())
            .read("nmappings", |e| e.counts().iter().sum::<u64>())
            .read("mapping_failures", |e| e.failures)
            .read("patterns", |e| e.patterns_text(None))
            .read("size", |e| lock(&e.table).size())
            .read("capacity", |e| lock(&e.table).capacity())
            .setting()
            .write("capacity", |e, v, cx| {
                let n = u64::from_arg(v)?.min(MAX_CAPACITY);
                lock(&e.table).set_capacity(n, cx.now());
                Ok(())
            })
            .write("clear", |e, _, cx| {
                lock(&e.table).shrink(cx.now(), true);
                Ok(())
            })
            .drops(|e| &e.drops);
        t = match self.variant {
            Variant::Ip => t
                .read_with("tcp_table", |e| e.table_text(0, e.now))
                .read_with("udp_table", |e| e.table_text(1, e.now))
                .read_param("tcp_lookup", |e, p| e.lookup_text(p)),
            Variant::Tcp => t
                .read_with("table", |e| e.table_text(0, e.now))
                .read_param("lookup", |e, p| e.lookup_text(p)),
            _ => t.read_with("table", |e| e.table_text(0, e.now)),
        };
        let handlers = pattern_handlers!(0, 1, 2, 3, 4, 5, 6, 7);
        for (name, read, write) in handlers.into_iter().take(self.specs.len()) {
            t = t.read(name, read).write(name, write);
        }
        t.into()
    }
}
