//! Helpers shared by the IPv4 router elements: address arguments that understand AddressInfo
//! names, output batching for elements with a second (error) output, drop counters, and
//! the IPv4 header of the encapsulating elements.

use std::fmt;
use std::net::Ipv4Addr;

use sluice_core::{Batch, Cx, Handler, Packet};
use sluice_lang::args::{split_words, FromArg};
use sluice_wire::ipv4::HEADER_LEN;
use sluice_wire::{EtherAddr, Ipv4Packet, Ipv4Prefix, Ipv4Repr};

/// An IPv4 address argument: dotted quad, or an AddressInfo name (`eth0`, `eth0:ip`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpArg(pub Ipv4Addr);

impl FromArg for IpArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ipv4Addr::from_arg(s).map(IpArg)
    }
}

/// A destination address argument that may also be `DST_ANNO`, meaning each packet's
/// destination IP annotation (`None`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DstArg(pub Option<Ipv4Addr>);

impl FromArg for DstArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        if s.trim() == "DST_ANNO" {
            return Ok(DstArg(None));
        }
        IpArg::from_arg(s).map(|a| DstArg(Some(a.0)))
    }
}

impl fmt::Display for DstArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(a) => a.fmt(f),
            None => f.write_str("DST_ANNO"),
        }
    }
}

/// An Ethernet address argument: `00:11:22:33:44:55`, or an AddressInfo name (`eth0`,
/// `eth0:eth`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthArg(pub EtherAddr);

impl FromArg for EthArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        EtherAddr::from_arg(s).map(EthArg)
    }
}

/// An IPv4 prefix argument: `A.B.C.D/LEN`, `A.B.C.D/MASK`, `A.B.C.D MASK`, a bare address,
/// or an AddressInfo name (its address as a /32; `NAME:ipnet` for its network prefix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrefixArg(pub Ipv4Prefix);

impl FromArg for PrefixArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        Ipv4Prefix::from_arg(s).map(PrefixArg)
    }
}

/// A space-separated list of IPv4 addresses (names allowed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IpList(pub Vec<Ipv4Addr>);

impl FromArg for IpList {
    fn from_arg(s: &str) -> Result<Self, String> {
        let mut v = Vec::new();
        for w in split_words(s) {
            v.push(IpArg::from_arg(&w)?.0);
        }
        Ok(IpList(v))
    }
}

/// Collects packets for one output port and pushes them in batches.
pub struct OutBatch {
    port: usize,
    batch: Batch,
}

impl OutBatch {
    /// A collector for output `port`.
    pub fn new(port: usize) -> OutBatch {
        OutBatch {
            port,
            batch: Batch::new(),
        }
    }

    /// Adds a packet, pushing a full batch first.
    #[inline]
    pub fn add(&mut self, p: Packet, cx: &mut Cx) {
        if let Err(p) = self.batch.push(p) {
            let full = std::mem::take(&mut self.batch);
            cx.push(self.port, full);
            let _ = self.batch.push(p);
        }
    }

    /// Pushes what is left.
    #[inline]
    pub fn flush(self, cx: &mut Cx) {
        if !self.batch.is_empty() {
            cx.push(self.port, self.batch);
        }
    }
}

/// True for the limited broadcast address, class D multicast or class E addresses, which
/// are never valid sources.
pub fn is_martian_src(a: Ipv4Addr) -> bool {
    a.is_broadcast() || a.is_multicast() || a.octets()[0] >= 240
}

/// Formats per-reason counters as `reason count` lines (Click's `drop_details` layout).
pub fn details(names: &[&str], counts: &[u64]) -> String {
    let mut s = String::new();
    for (n, c) in names.iter().zip(counts) {
        s.push_str(&format!("{:>12} {}\n", c, n));
    }
    s
}

/// Parses a boolean handler value.
pub fn parse_bool(v: &str) -> Result<bool, String> {
    bool::from_arg(v).map_err(|e| e.to_string())
}

/// Where a packet goes after an element looked at it.
pub enum Verdict {
    /// Emit on this output port (dropped if the port is not connected).
    Out(usize, Packet),
    /// The packet was consumed (dropped and counted by the element).
    Gone,
}

/// Push path for elements that sort packets between outputs: applies `f` to each packet of
/// `batch` and pushes the results, one batch per output port, order kept within a port.
/// Returns the number of packets sent to an unconnected port (and therefore dropped).
///
/// Packets for output 0 stay in the input batch (no copy into a new batch), which is then
/// pushed before the packets of the other outputs.
pub fn push_sorted(
    mut batch: Batch,
    cx: &mut Cx,
    mut f: impl FnMut(Packet, &mut Cx) -> Verdict,
) -> u64 {
    let n = cx.noutputs();
    let mut o1: Option<Batch> = None;
    let mut lost = 0;
    batch.filter_map(|p| match f(p, cx) {
        Verdict::Out(k, p) if k >= n => {
            drop(p);
            lost += 1;
            None
        }
        Verdict::Out(0, p) => Some(p),
        Verdict::Out(1, p) => {
            let b = o1.get_or_insert_with(Batch::new);
            if let Err(p) = b.push(p) {
                // Cannot happen (a batch never holds more than BATCH_MAX packets), but
                // stay correct: send the full batch on.
                cx.push(1, std::mem::take(b));
                let _ = b.push(p);
            }
            None
        }
        Verdict::Out(k, p) => {
            cx.push_one(k, p);
            None
        }
        Verdict::Gone => None,
    });
    if !batch.is_empty() {
        cx.push(0, batch);
    }
    if let Some(b) = o1 {
        if !b.is_empty() {
            cx.push(1, b);
        }
    }
    lost
}

/// An element that sends each packet to one of its outputs and counts the packets bound for
/// an output that is not connected (and therefore dropped).
pub trait Sorter {
    /// Where `p` goes.
    fn sort(&mut self, p: Packet, cx: &mut Cx) -> Verdict;

    /// The count of packets dropped for want of a connected output.
    fn lost(&mut self) -> &mut u64;

    /// Push path: [`push_sorted`] with [`Sorter::sort`], counting the packets lost.
    fn push_counted(&mut self, batch: Batch, cx: &mut Cx) {
        let lost = push_sorted(batch, cx, |p, cx| self.sort(p, cx));
        *self.lost() += lost;
    }

    /// Pull path: [`pull_sorted`] with [`Sorter::sort`], counting the packets lost.
    fn pull_counted(&mut self, max: usize, cx: &mut Cx) -> Batch {
        let (b, lost) = pull_sorted(max, cx, |p, cx| self.sort(p, cx));
        *self.lost() += lost;
        b
    }
}

/// Pushes `batch`, whose packet `i` is bound for output `ports[i]` (an output at or beyond
/// `outs.len()`, such as [`NO_PORT`], means dropped: counted in the return value), as one
/// batch per output in port order, order kept within a port. `outs` is the element's
/// scratch space, one empty batch per output. When every packet goes to the same output
/// (the common case on a forwarding path) the batch is pushed as it is, without a copy.
#[inline]
pub fn push_by_port(batch: Batch, ports: &[u32], outs: &mut [Batch], cx: &mut Cx) -> u64 {
    let n = batch.len();
    if n == 0 {
        return 0;
    }
    let first = ports[0];
    if (first as usize) < outs.len() && ports[..n].iter().all(|&o| o == first) {
        cx.push(first as usize, batch);
        return 0;
    }
    let mut lost = 0;
    for (i, p) in batch.into_iter().enumerate() {
        let o = ports[i] as usize;
        if o >= outs.len() {
            lost += 1;
            continue;
        }
        if let Err(p) = outs[o].push(p) {
            cx.push(o, std::mem::take(&mut outs[o]));
            let _ = outs[o].push(p);
        }
    }
    for (o, b) in outs.iter_mut().enumerate() {
        if !b.is_empty() {
            cx.push(o, std::mem::take(b));
        }
    }
    lost
}

/// The "no output" value for [`push_by_port`].
pub const NO_PORT: u32 = u32::MAX;

/// Pull path for the same elements: pulls up to `max` packets from input 0, returns those for
/// output 0 and pushes the others out of their (push) ports.
pub fn pull_sorted(
    max: usize,
    cx: &mut Cx,
    mut f: impl FnMut(Packet, &mut Cx) -> Verdict,
) -> (Batch, u64) {
    let n = cx.noutputs();
    let input = cx.pull(0, max);
    let mut out = Batch::new();
    let mut lost = 0;
    for p in input {
        match f(p, cx) {
            Verdict::Out(0, p) => {
                let _ = out.push(p);
            }
            Verdict::Out(k, p) if k < n && cx.output_is_push(k) => cx.push_one(k, p),
            Verdict::Out(_, p) => {
                drop(p);
                lost += 1;
            }
            Verdict::Gone => {}
        }
    }
    (out, lost)
}

/// Offset of the IP header in the packet data: the network header annotation, or 0.
#[inline]
pub fn ip_offset(p: &Packet) -> usize {
    match p.network_offset() {
        Some(o) if o >= 0 && (o as usize) <= p.len() => o as usize,
        _ => 0,
    }
}

/// Well-known TCP/UDP service names and their ports (a subset of `/etc/services`).
const SERVICES: &[(&str, u16)] = &[
    ("echo", 7),
    ("discard", 9),
    ("daytime", 13),
    ("chargen", 19),
    ("ftp-data", 20),
    ("ftp", 21),
    ("ssh", 22),
    ("telnet", 23),
    ("smtp", 25),
    ("domain", 53),
    ("dns", 53),
    ("bootps", 67),
    ("bootpc", 68),
    ("tftp", 69),
    ("finger", 79),
    ("www", 80),
    ("http", 80),
    ("pop3", 110),
    ("sunrpc", 111),
    ("auth", 113),
    ("nntp", 119),
    ("ntp", 123),
    ("netbios-ns", 137),
    ("netbios-dgm", 138),
    ("netbios-ssn", 139),
    ("snmp", 161),
    ("snmp-trap", 162),
    ("irc", 194),
    ("imap3", 220),
    ("https", 443),
    ("rip", 520),
    ("route", 520),
    ("imaps", 993),
    ("pop3s", 995),
];

/// The port of a well-known service name (`www`, `domain`, `ssh`, …).
pub fn service_port(name: &str) -> Option<u16> {
    sluice_lang::names::lookup_port(name, None)
        .or_else(|| SERVICES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p))
}

/// A TCP/UDP port: a number (0–65535) or a well-known service name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PortArg(pub u16);

impl FromArg for PortArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        let t = s.trim();
        match service_port(&t.to_ascii_lowercase()) {
            Some(p) => Ok(PortArg(p)),
            None => u16::from_arg(t)
                .map(PortArg)
                .map_err(|_| "expected port number or service name".into()),
        }
    }
}

/// A protocol number or name (`tcp`, `udp`, `icmp`, `ipip`, `gre`, `esp`, `ah`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtoArg(pub u8);

impl FromArg for ProtoArg {
    fn from_arg(s: &str) -> Result<Self, String> {
        use sluice_wire::ipv4::*;
        let t = s.trim().to_ascii_lowercase();
        Ok(ProtoArg(match t.as_str() {
            "icmp" => PROTO_ICMP,
            "igmp" => PROTO_IGMP,
            "ipip" => PROTO_IPIP,
            "tcp" => PROTO_TCP,
            "udp" => PROTO_UDP,
            "ipv6" => PROTO_IPV6,
            "gre" => PROTO_GRE,
            "esp" => PROTO_ESP,
            "ah" => PROTO_AH,
            "icmp6" | "ipv6-icmp" => PROTO_ICMPV6,
            "sctp" => PROTO_SCTP,
            _ => {
                return u8::from_arg(s)
                    .map(ProtoArg)
                    .map_err(|_| "expected IP protocol".into())
            }
        }))
    }
}

/// The source and destination of an encapsulating element's IPv4 header, with their `src`
/// and `dst` handlers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Endpoints {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address, or each packet's destination IP annotation.
    pub dst: DstArg,
}

impl Endpoints {
    /// Both unspecified.
    pub const UNSPECIFIED: Endpoints = Endpoints {
        src: Ipv4Addr::UNSPECIFIED,
        dst: DstArg(None),
    };

    /// The `src` and `dst` handlers.
    pub const HANDLERS: &'static [Handler] = &[Handler::rw("src"), Handler::rw("dst")];

    /// The destination of packet `p`.
    pub fn dst_of(&self, p: &Packet) -> Ipv4Addr {
        self.dst.0.unwrap_or(p.dst_ip_anno())
    }

    /// Reads the `src` or `dst` handler.
    pub fn read_handler(&self, name: &str) -> Option<String> {
        match name {
            "src" => Some(self.src.to_string()),
            "dst" => Some(self.dst.to_string()),
            _ => None,
        }
    }

    /// Writes the `src` or `dst` handler.
    pub fn write_handler(&mut self, name: &str, v: &str) -> Result<(), String> {
        match name {
            "src" => self.src = IpArg::from_arg(v)?.0,
            "dst" => self.dst = DstArg::from_arg(v)?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Implements the handler methods, inside `impl Element`, of an element whose handlers are
/// those of its [`Endpoints`] field `ends`.
macro_rules! endpoint_handlers {
    () => {
        fn handlers(&self) -> &'static [sluice_core::Handler] {
            $crate::ip::common::Endpoints::HANDLERS
        }

        fn read_handler(&self, name: &str) -> Option<String> {
            self.ends.read_handler(name)
        }

        fn write_handler(
            &mut self,
            name: &str,
            v: &str,
            _cx: &mut sluice_core::Cx,
        ) -> Result<(), String> {
            self.ends.write_handler(name, v)
        }
    };
}
pub(crate) use endpoint_handlers;

/// An option-less IPv4 header from `src` to `dst` carrying `protocol`, with TOS 0, no flags,
/// identification `ident` and TTL `ttl`, for [`push_ipv4_header`].
pub fn ipv4_header(protocol: u8, src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, ident: u16) -> Ipv4Repr {
    Ipv4Repr {
        src,
        dst,
        protocol,
        ttl,
        tos: 0,
        ident,
        dont_frag: false,
        payload_len: 0,
    }
}

/// Prepends `transport` zero bytes, for the caller to fill with a transport header, and in
/// front of them the 20-byte IPv4 header `ip` (total length and checksum filled in). Sets the
/// network and transport header annotations and the destination IP annotation to `ip.dst`.
pub fn push_ipv4_header(p: &mut Packet, ip: Ipv4Repr, transport: usize) {
    let payload_len = transport + p.len();
    let h = p.push_front(HEADER_LEN + transport);
    h[HEADER_LEN..].fill(0);
    Ipv4Repr { payload_len, ..ip }.emit(&mut Ipv4Packet::new_unchecked(&mut h[..]));
    p.set_network_offset(0);
    p.set_transport_offset(HEADER_LEN as isize);
    p.set_dst_ip_anno(ip.dst);
}
