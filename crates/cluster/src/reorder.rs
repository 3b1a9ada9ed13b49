//! The reordering metric of RouteBricks (§6.2), and `sluice cluster reorder`.
//!
//! **Metric.** Each packet of a flow carries its ingress sequence number, the order in which
//! it entered the router within its flow (0, 1, 2, ...). Taking a flow's packets in egress
//! order, a *reordered sequence* is counted at each packet whose ingress number is lower than
//! that of the flow's previous egress packet. The *fraction* is reordered sequences over
//! same-flow consecutive pairs (a flow of n egress packets has n − 1 pairs). So ⟨p1, p4, p2,
//! p3, p5⟩ counts one reordered sequence in four pairs (the paper's example) and ⟨p3, p2, p1⟩
//! counts two in two. The paper reports 0.15 % for RB4 with its flowlet extension and 5.5 %
//! without.
//!
//! A second figure follows RFC 4737: a packet is *late* when its number is lower than the
//! highest number of its flow seen so far at egress (⟨p1, p4, p2, p3, p5⟩ has two late packets,
//! p2 and p3). Lost packets leave gaps, which are not reordering; a duplicate at egress (the
//! same number twice in a row) is not counted either.
//!
//! [`ReorderMeter`] is the streaming core, used by the simulation ([`crate::sim`]) and by the
//! capture comparison ([`compare_pcaps`], [`compare_files`]), which numbers each IPv4 TCP/UDP
//! flow's packets in the ingress capture and finds each egress packet among them by flow,
//! IP identification and a digest of the transport segment (what a router leaves intact).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write as _;
use std::fs::File;
use std::hash::Hash;
use std::io::{BufReader, Read};
use std::path::Path;

use sluice_wire::pcap::{LinkKind, PcapReader};

/// Usage of `sluice cluster reorder`.
pub const USAGE: &str = "\
Usage: sluice cluster reorder INGRESS.pcap EGRESS.pcap [--json]

Measures the reordering a router introduced, from a capture of what entered it (INGRESS) and
of what left it (EGRESS). Both are libpcap files, Ethernet or raw IP. IPv4 TCP and UDP packets
are compared (others, and IP fragments, are ignored and counted); a flow is a 5-tuple.

Each flow's packets are numbered in ingress order; an egress packet is the earliest unmatched
ingress packet with the same flow, IP identification and transport segment (checksums, TTL
and MAC addresses may differ). Both captures should hold whole packets (the same snap length
at least).

Reordered sequences: for each flow, in egress order, the packets whose ingress number is lower
than that of the flow's previous egress packet (RouteBricks §6.2); the fraction is over
same-flow consecutive pairs. Late packets (RFC 4737): lower than the flow's highest number so
far.

Options:
  --json     one JSON object instead of text
  -h, --help this text
";

/// What a [`ReorderMeter`] has counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReorderStats {
    /// Distinct flows seen.
    pub flows: u64,
    /// Packets recorded.
    pub packets: u64,
    /// Same-flow consecutive pairs (each packet after the first of its flow).
    pub pairs: u64,
    /// Reordered sequences: packets with a lower number than their flow's previous packet.
    pub reordered: u64,
    /// Late packets (RFC 4737): lower than their flow's highest number so far.
    pub late: u64,
}

impl ReorderStats {
    /// Reordered sequences over same-flow pairs (0 when there is no pair).
    pub fn fraction(&self) -> f64 {
        ratio(self.reordered, self.pairs)
    }

    /// [`fraction`](Self::fraction) in percent.
    pub fn percent(&self) -> f64 {
        100.0 * self.fraction()
    }

    /// Late packets over packets (0 when there is none).
    pub fn late_fraction(&self) -> f64 {
        ratio(self.late, self.packets)
    }

    /// Adds another meter's counts (flows are assumed disjoint).
    pub fn add(&mut self, other: &ReorderStats) {
        self.flows += other.flows;
        self.packets += other.packets;
        self.pairs += other.pairs;
        self.reordered += other.reordered;
        self.late += other.late;
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// What [`ReorderMeter::record`] concluded about one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The packet starts a reordered sequence (lower than its flow's previous packet).
    pub reordered: bool,
    /// The packet is late (lower than its flow's highest so far).
    pub late: bool,
}

#[derive(Clone, Copy, Debug)]
struct FlowState {
    last: u64,
    max: u64,
}

/// Streaming reordering meter: feed each egress packet, in egress order, with its flow key
/// and its ingress sequence number within the flow. Keeps two numbers per flow.
#[derive(Clone, Debug)]
pub struct ReorderMeter<K = u64> {
    flows: HashMap<K, FlowState>,
    stats: ReorderStats,
}

impl<K: Hash + Eq> Default for ReorderMeter<K> {
    fn default() -> Self {
        ReorderMeter {
            flows: HashMap::new(),
            stats: ReorderStats::default(),
        }
    }
}

impl<K: Hash + Eq> ReorderMeter<K> {
    /// An empty meter.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the next egress packet: `seq` is its ingress number within `flow`.
    pub fn record(&mut self, flow: K, seq: u64) -> Verdict {
        self.stats.packets += 1;
        let mut v = Verdict::default();
        match self.flows.get_mut(&flow) {
            Some(f) => {
                self.stats.pairs += 1;
                v.reordered = seq < f.last;
                v.late = seq < f.max;
                f.last = seq;
                f.max = f.max.max(seq);
            }
            None => {
                self.stats.flows += 1;
                self.flows.insert(
                    flow,
                    FlowState {
                        last: seq,
                        max: seq,
                    },
                );
            }
        }
        self.stats.reordered += v.reordered as u64;
        self.stats.late += v.late as u64;
        v
    }

    /// Drops the state of a flow that will not be seen again (its counts stay). A flow
    /// recorded again afterwards counts as a new flow.
    pub fn forget(&mut self, flow: &K) {
        self.flows.remove(flow);
    }

    /// Flows whose state is kept.
    pub fn live_flows(&self) -> usize {
        self.flows.len()
    }

    /// The counts so far.
    pub fn stats(&self) -> ReorderStats {
        self.stats
    }
}

/// An IPv4 TCP or UDP flow: its 5-tuple.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FiveTuple {
    /// Source address.
    pub src: [u8; 4],
    /// Destination address.
    pub dst: [u8; 4],
    /// IP protocol (6 TCP, 17 UDP).
    pub proto: u8,
    /// Source port.
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
}

/// What identifies one packet on both sides of a router: its flow, IP identification, IP
/// total length and a digest of its transport segment (checksum field left out).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PacketId {
    /// The flow.
    pub flow: FiveTuple,
    /// IP identification.
    pub ip_id: u16,
    /// IP total length.
    pub ip_len: u16,
    /// FNV-1a digest of the captured transport segment, its checksum field skipped.
    pub digest: u64,
}

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_VLAN: u16 = 0x8100;
const ETHERTYPE_QINQ: u16 = 0x88a8;

/// Identifies a captured frame of the given link kind; `None` for anything but an
/// unfragmented IPv4 TCP or UDP packet (VLAN tags are skipped).
pub fn packet_id(link: LinkKind, frame: &[u8]) -> Option<PacketId> {
    let ip = match link {
        LinkKind::Ethernet => {
            let mut off = 12;
            let mut ty = be16(frame, off)?;
            let mut tags = 0;
            while (ty == ETHERTYPE_VLAN || ty == ETHERTYPE_QINQ) && tags < 2 {
                off += 4;
                ty = be16(frame, off)?;
                tags += 1;
            }
            if ty != ETHERTYPE_IPV4 {
                return None;
            }
            frame.get(off + 2..)?
        }
        LinkKind::RawIp | LinkKind::RawIpv4 => frame,
        LinkKind::RawIpv6 | LinkKind::Other(_) => return None,
    };
    ipv4_id(ip)
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn ipv4_id(ip: &[u8]) -> Option<PacketId> {
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        return None;
    }
    let ihl = (ip[0] & 0x0f) as usize * 4;
    let total = be16(ip, 2)? as usize;
    if ihl < 20 || ip.len() < ihl || total < ihl {
        return None;
    }
    let frag = be16(ip, 6)?;
    if frag & 0x3fff != 0 {
        return None; // a fragment (more fragments, or an offset)
    }
    let proto = ip[9];
    let csum_at = match proto {
        6 => 16,
        17 => 6,
        _ => return None,
    };
    let seg = &ip[ihl..total.min(ip.len())];
    if seg.len() < 4 {
        return None;
    }
    let mut h = Fnv::new();
    h.write(&((total - ihl) as u32).to_be_bytes());
    h.write(&seg[..csum_at.min(seg.len())]);
    if seg.len() > csum_at + 2 {
        h.write(&seg[csum_at + 2..]);
    }
    Some(PacketId {
        flow: FiveTuple {
            src: [ip[12], ip[13], ip[14], ip[15]],
            dst: [ip[16], ip[17], ip[18], ip[19]],
            proto,
            sport: be16(seg, 0)?,
            dport: be16(seg, 2)?,
        },
        ip_id: be16(ip, 4)?,
        ip_len: total as u16,
        digest: h.0,
    })
}

/// FNV-1a, 64 bits.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Ingress packets not yet matched, for one [`PacketId`]: usually one.
enum Pending {
    One(u32, u64),
    Many(VecDeque<(u32, u64)>),
}

/// Matches egress packets to ingress packets and meters reordering. Feed every ingress
/// packet first ([`ingress`](Self::ingress)), in ingress order, then every egress packet
/// ([`egress`](Self::egress)), in egress order.
#[derive(Default)]
pub struct Matcher {
    flows: HashMap<FiveTuple, (u32, u64)>,
    pending: HashMap<PacketId, Pending>,
    meter: ReorderMeter<u32>,
    report: CaptureReport,
}

impl Matcher {
    /// An empty matcher.
    pub fn new() -> Matcher {
        Matcher::default()
    }

    /// Numbers an ingress packet within its flow.
    pub fn ingress(&mut self, id: PacketId) {
        self.report.ingress_packets += 1;
        let next = self.flows.len() as u32;
        let f = self.flows.entry(id.flow).or_insert((next, 0));
        let entry = (f.0, f.1);
        f.1 += 1;
        match self.pending.get_mut(&id) {
            None => {
                self.pending.insert(id, Pending::One(entry.0, entry.1));
            }
            Some(Pending::One(a, b)) => {
                let q = VecDeque::from([(*a, *b), entry]);
                self.pending.insert(id, Pending::Many(q));
            }
            Some(Pending::Many(q)) => q.push_back(entry),
        }
    }

    /// Counts an ingress record that is not an IPv4 TCP/UDP packet.
    pub fn ingress_ignored(&mut self) {
        self.report.ingress_packets += 1;
        self.report.ingress_ignored += 1;
    }

    /// Matches an egress packet to the earliest unmatched ingress packet like it and meters
    /// it; returns its (flow index, ingress number), `None` if nothing matches.
    pub fn egress(&mut self, id: PacketId) -> Option<(u32, u64)> {
        self.report.egress_packets += 1;
        let hit = match self.pending.get_mut(&id) {
            None => None,
            Some(Pending::One(a, b)) => {
                let hit = (*a, *b);
                self.pending.remove(&id);
                Some(hit)
            }
            Some(Pending::Many(q)) => {
                let hit = q.pop_front();
                if q.is_empty() {
                    self.pending.remove(&id);
                }
                hit
            }
        };
        match hit {
            Some((flow, seq)) => {
                self.report.matched += 1;
                self.meter.record(flow, seq);
            }
            None => self.report.unmatched_egress += 1,
        }
        hit
    }

    /// Counts an egress record that is not an IPv4 TCP/UDP packet.
    pub fn egress_ignored(&mut self) {
        self.report.egress_packets += 1;
        self.report.egress_ignored += 1;
    }

    /// The comparison so far.
    pub fn report(&self) -> CaptureReport {
        let mut r = self.report;
        r.flows = self.flows.len() as u64;
        r.lost = r.ingress_packets - r.ingress_ignored - r.matched;
        r.reorder = self.meter.stats();
        r
    }
}

/// The outcome of comparing an ingress and an egress capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaptureReport {
    /// Records in the ingress capture.
    pub ingress_packets: u64,
    /// Ingress records that are not unfragmented IPv4 TCP/UDP packets.
    pub ingress_ignored: u64,
    /// Records in the egress capture.
    pub egress_packets: u64,
    /// Egress records that are not unfragmented IPv4 TCP/UDP packets.
    pub egress_ignored: u64,
    /// Egress packets matched to an ingress packet.
    pub matched: u64,
    /// Ingress TCP/UDP packets never seen at egress.
    pub lost: u64,
    /// Egress TCP/UDP packets matching no (remaining) ingress packet.
    pub unmatched_egress: u64,
    /// Flows (5-tuples) in the ingress capture.
    pub flows: u64,
    /// Reordering of the matched packets (its `flows`: flows seen at egress).
    pub reorder: ReorderStats,
}

impl CaptureReport {
    /// The report as one JSON object.
    pub fn to_json(&self) -> String {
        let r = &self.reorder;
        format!(
            "{{\"ingress_packets\":{},\"ingress_ignored\":{},\"egress_packets\":{},\
             \"egress_ignored\":{},\"matched\":{},\"lost\":{},\"unmatched_egress\":{},\
             \"flows\":{},\"egress_flows\":{},\"pairs\":{},\"reordered\":{},\
             \"reordered_percent\":{},\"late\":{},\"late_percent\":{}}}",
            self.ingress_packets,
            self.ingress_ignored,
            self.egress_packets,
            self.egress_ignored,
            self.matched,
            self.lost,
            self.unmatched_egress,
            self.flows,
            r.flows,
            r.pairs,
            r.reordered,
            json_f64(r.percent()),
            r.late,
            json_f64(100.0 * r.late_fraction()),
        )
    }

    /// The report as a few lines of text.
    pub fn to_text(&self) -> String {
        let r = &self.reorder;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "packets in:          {} ({} IPv4 TCP/UDP, {} ignored)",
            self.ingress_packets,
            self.ingress_packets - self.ingress_ignored,
            self.ingress_ignored
        );
        let _ = writeln!(
            s,
            "packets out:         {} ({} IPv4 TCP/UDP, {} ignored)",
            self.egress_packets,
            self.egress_packets - self.egress_ignored,
            self.egress_ignored
        );
        let _ = writeln!(s, "matched:             {}", self.matched);
        let _ = writeln!(s, "lost:                {}", self.lost);
        let _ = writeln!(s, "unmatched egress:    {}", self.unmatched_egress);
        let _ = writeln!(
            s,
            "flows:               {} ({} seen at egress)",
            self.flows, r.flows
        );
        let _ = writeln!(
            s,
            "reordered sequences: {} of {} same-flow pairs ({:.4} %)",
            r.reordered,
            r.pairs,
            r.percent()
        );
        let _ = writeln!(
            s,
            "late packets:        {} ({:.4} % of matched)",
            r.late,
            100.0 * r.late_fraction()
        );
        s
    }
}

/// A finite number as JSON (`null` otherwise).
pub(crate) fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{}", x)
    } else {
        "null".into()
    }
}

fn feed<R: Read>(
    what: &str,
    input: R,
    m: &mut Matcher,
    mut add: impl FnMut(&mut Matcher, Option<PacketId>),
) -> Result<(), String> {
    let mut rd = PcapReader::new(input).map_err(|e| format!("{what}: {e}"))?;
    let link = rd.link_kind();
    if matches!(link, LinkKind::Other(_) | LinkKind::RawIpv6) {
        return Err(format!(
            "{what}: link type {} is not supported (Ethernet or raw IP only)",
            rd.link_type()
        ));
    }
    let mut buf = Vec::new();
    while rd
        .next_into(&mut buf)
        .map_err(|e| format!("{what}: {e}"))?
        .is_some()
    {
        add(m, packet_id(link, &buf));
    }
    Ok(())
}

fn compare_named<A: Read, B: Read>(
    ingress: A,
    in_name: &str,
    egress: B,
    out_name: &str,
) -> Result<CaptureReport, String> {
    let mut m = Matcher::new();
    feed(in_name, ingress, &mut m, |m, id| match id {
        Some(id) => m.ingress(id),
        None => m.ingress_ignored(),
    })?;
    feed(out_name, egress, &mut m, |m, id| match id {
        Some(id) => {
            m.egress(id);
        }
        None => m.egress_ignored(),
    })?;
    Ok(m.report())
}

/// Compares two captures read from `ingress` and `egress` (libpcap format).
pub fn compare_pcaps<A: Read, B: Read>(ingress: A, egress: B) -> Result<CaptureReport, String> {
    compare_named(ingress, "ingress capture", egress, "egress capture")
}

/// Compares two capture files.
pub fn compare_files(ingress: &Path, egress: &Path) -> Result<CaptureReport, String> {
    let open = |p: &Path| {
        File::open(p)
            .map(BufReader::new)
            .map_err(|e| format!("cannot open {}: {}", p.display(), e))
    };
    let (a, b) = (open(ingress)?, open(egress)?);
    compare_named(
        a,
        &format!("ingress capture {}", ingress.display()),
        b,
        &format!("egress capture {}", egress.display()),
    )
}

/// Runs `sluice cluster reorder ARGS`; an error is a message for the user.
pub fn main(args: &[String]) -> Result<(), String> {
    let mut json = false;
    let mut files = Vec::new();
    for a in args {
        match a.as_str() {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(());
            }
            "--json" => json = true,
            s if s.starts_with('-') && s.len() > 1 => {
                return Err(format!("cluster reorder: unknown option '{s}'\n{USAGE}"))
            }
            s => files.push(s),
        }
    }
    if files.len() != 2 {
        return Err(format!(
            "cluster reorder: expected two captures, INGRESS and EGRESS\n{USAGE}"
        ));
    }
    let r = compare_files(Path::new(files[0]), Path::new(files[1]))
        .map_err(|e| format!("cluster reorder: {e}"))?;
    if json {
        println!("{}", r.to_json());
    } else {
        print!("{}", r.to_text());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_wire::pcap::{PcapWriter, LINKTYPE_ETHERNET, LINKTYPE_RAW};

    fn meter(seqs: &[u64]) -> ReorderStats {
        let mut m = ReorderMeter::new();
        for &s in seqs {
            m.record(7u64, s);
        }
        m.stats()
    }

    #[test]
    fn paper_example_counts_one() {
        // ⟨p1, p4, p2, p3, p5⟩
        let s = meter(&[1, 4, 2, 3, 5]);
        assert_eq!(
            (s.flows, s.packets, s.pairs, s.reordered, s.late),
            (1, 5, 4, 1, 2)
        );
        assert!((s.fraction() - 0.25).abs() < 1e-12);
    }

    #[test]
    fn descending_counts_two() {
        let s = meter(&[3, 2, 1]);
        assert_eq!((s.pairs, s.reordered, s.late), (2, 2, 2));
        assert_eq!(s.fraction(), 1.0);
        let s = meter(&[0, 1, 2, 3]);
        assert_eq!((s.pairs, s.reordered, s.late), (3, 0, 0));
        assert_eq!(meter(&[]).fraction(), 0.0);
    }

    #[test]
    fn interleaved_flows_are_separate() {
        let mut m = ReorderMeter::new();
        // Flow a: 0 1 2 in order; flow b: 1 0 2; interleaved so that a global order would
        // look reordered.
        for (f, s) in [('b', 1), ('a', 0), ('b', 0), ('a', 1), ('a', 2), ('b', 2)] {
            m.record(f, s);
        }
        let s = m.stats();
        assert_eq!(
            (s.flows, s.packets, s.pairs, s.reordered, s.late),
            (2, 6, 4, 1, 1)
        );
        m.forget(&'a');
        assert_eq!(m.live_flows(), 1);
    }

    #[test]
    fn gaps_and_duplicates_are_not_reordering() {
        // 2 and 4 lost, 5 duplicated.
        let s = meter(&[0, 1, 3, 5, 5, 6]);
        assert_eq!((s.reordered, s.late), (0, 0));
    }

    /// An Ethernet frame with an IPv4 UDP or TCP packet.
    fn frame(proto: u8, sport: u16, ip_id: u16, ttl: u8, payload: &[u8]) -> Vec<u8> {
        let thl = if proto == 6 { 20 } else { 8 };
        let total = 20 + thl + payload.len();
        let mut f = vec![0u8; 14];
        f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, ttl]); // MACs change hop by hop
        f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&ip_id.to_be_bytes());
        ip[6] = 0x40; // DF
        ip[8] = ttl;
        ip[9] = proto;
        ip[10] = ttl ^ 0x55; // "checksum"
        ip[12..16].copy_from_slice(&[10, 0, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 0, 1, 1]);
        f.extend_from_slice(&ip);
        let mut t = vec![0u8; thl];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&80u16.to_be_bytes());
        let csum_at = if proto == 6 { 16 } else { 6 };
        t[csum_at] = ttl; // a checksum that differs at egress
        f.extend_from_slice(&t);
        f.extend_from_slice(payload);
        f
    }

    fn pcap(link: u32, frames: &[Vec<u8>]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), link, 65535, false).unwrap();
        for (i, f) in frames.iter().enumerate() {
            w.write_record(1, i as u32 * 1000, f.len() as u32, f)
                .unwrap();
        }
        w.into_inner()
    }

    #[test]
    fn packet_ids_ignore_what_routers_change() {
        let a = packet_id(LinkKind::Ethernet, &frame(6, 1000, 9, 64, b"hello")).unwrap();
        let b = packet_id(LinkKind::Ethernet, &frame(6, 1000, 9, 63, b"hello")).unwrap();
        assert_eq!(a, b);
        let c = packet_id(LinkKind::Ethernet, &frame(6, 1000, 9, 63, b"hellp")).unwrap();
        assert_ne!(a, c);
        // Raw IP: the same packet without its Ethernet header.
        let f = frame(17, 5, 1, 64, b"x");
        assert_eq!(
            packet_id(LinkKind::RawIp, &f[14..]),
            packet_id(LinkKind::Ethernet, &f)
        );
        // VLAN-tagged.
        let mut v = f[..12].to_vec();
        v.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
        v.extend_from_slice(&f[12..]);
        assert_eq!(
            packet_id(LinkKind::Ethernet, &v),
            packet_id(LinkKind::Ethernet, &f)
        );
        // Ethernet padding beyond the IP total length is not part of the digest.
        let mut p = f.clone();
        p.extend_from_slice(&[0; 10]);
        assert_eq!(
            packet_id(LinkKind::Ethernet, &p),
            packet_id(LinkKind::Ethernet, &f)
        );
        // A fragment, ICMP, ARP and runts are ignored.
        let mut g = f.clone();
        g[14 + 6] = 0x20;
        assert_eq!(packet_id(LinkKind::Ethernet, &g), None);
        let mut i = f.clone();
        i[14 + 9] = 1;
        assert_eq!(packet_id(LinkKind::Ethernet, &i), None);
        let mut arp = f.clone();
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(packet_id(LinkKind::Ethernet, &arp), None);
        assert_eq!(packet_id(LinkKind::Ethernet, &f[..20]), None);
    }

    #[test]
    fn pcap_round_trip_with_loss_and_duplicates() {
        // Flow A (port 1): ids 1..=5; flow B (port 2): ids 1..=3, where id 2 was sent twice
        // (the same bytes). Egress: A as ⟨1,4,2,3⟩ (5 lost), B as ⟨1,2,3,2⟩ plus one
        // packet that never entered and an ARP frame.
        let a = |id| frame(6, 1, id, 64, &[id as u8; 30]);
        let b = |id| frame(17, 2, id, 64, &[id as u8; 3]);
        let a_out = |id| frame(6, 1, id, 63, &[id as u8; 30]);
        let b_out = |id| frame(17, 2, id, 63, &[id as u8; 3]);
        let mut arp = b(9);
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        let ingress = vec![
            a(1),
            b(1),
            a(2),
            b(2),
            a(3),
            b(2),
            a(4),
            b(3),
            a(5),
            arp.clone(),
        ];
        let egress = vec![
            a_out(1),
            b_out(1),
            a_out(4),
            b_out(2),
            a_out(2),
            b_out(3),
            a_out(3),
            b_out(2),
            b_out(7),
            arp,
        ];
        let r = compare_pcaps(
            &pcap(LINKTYPE_ETHERNET, &ingress)[..],
            &pcap(LINKTYPE_ETHERNET, &egress)[..],
        )
        .unwrap();
        assert_eq!((r.ingress_packets, r.ingress_ignored), (10, 1));
        assert_eq!((r.egress_packets, r.egress_ignored), (10, 1));
        assert_eq!(
            (r.matched, r.lost, r.unmatched_egress, r.flows),
            (8, 1, 1, 2)
        );
        // A: numbers ⟨0,3,1,2⟩: one reordered, two late. B: ingress numbers 0,1,(2),3 with
        // the copies of id 2 numbered 1 and 2; egress ⟨1,2,3,2'⟩ = ⟨0,1,3,2⟩: one, one.
        assert_eq!(r.reorder.flows, 2);
        assert_eq!(r.reorder.pairs, 6);
        assert_eq!(r.reorder.reordered, 2);
        assert_eq!(r.reorder.late, 3);
        let j = r.to_json();
        assert!(
            j.contains("\"reordered\":2") && j.contains("\"lost\":1"),
            "{j}"
        );
        assert!(r.to_text().contains("reordered sequences: 2 of 6"));

        // Raw IP captures give the same answer (the ARP frame left out).
        let strip = |v: &[Vec<u8>]| {
            v.iter()
                .filter(|f| f[12..14] == [8, 0])
                .map(|f| f[14..].to_vec())
                .collect::<Vec<_>>()
        };
        let r2 = compare_pcaps(
            &pcap(LINKTYPE_RAW, &strip(&ingress))[..],
            &pcap(LINKTYPE_RAW, &strip(&egress))[..],
        )
        .unwrap();
        assert_eq!(r2.reorder, r.reorder);
        assert_eq!(r2.matched, 8);
    }

    #[test]
    fn files_and_errors() {
        let dir = std::env::temp_dir().join(format!("sluice-reorder-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (i, e, bad) = (
            dir.join("in.pcap"),
            dir.join("out.pcap"),
            dir.join("bad.pcap"),
        );
        let frames: Vec<_> = (0..4).map(|k| frame(17, 3, k, 64, b"abc")).collect();
        let mut out = frames.clone();
        out.swap(1, 2);
        std::fs::write(&i, pcap(LINKTYPE_ETHERNET, &frames)).unwrap();
        std::fs::write(&e, pcap(LINKTYPE_ETHERNET, &out)).unwrap();
        std::fs::write(&bad, b"not a capture at all").unwrap();
        let r = compare_files(&i, &e).unwrap();
        assert_eq!((r.matched, r.reorder.reordered, r.reorder.pairs), (4, 1, 3));
        let err = compare_files(&i, &dir.join("missing.pcap")).unwrap_err();
        assert!(
            err.contains("cannot open") && err.contains("missing.pcap"),
            "{err}"
        );
        let err = compare_files(&bad, &e).unwrap_err();
        assert!(
            err.contains("ingress capture") && err.contains("bad.pcap"),
            "{err}"
        );
        std::fs::write(&bad, pcap(147, &frames)).unwrap();
        let err = compare_files(&i, &bad).unwrap_err();
        assert!(err.contains("link type 147"), "{err}");
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(main(&args(&[i.to_str().unwrap()])).is_err());
        assert!(main(&args(&["--bogus"])).is_err());
        main(&args(&[i.to_str().unwrap(), e.to_str().unwrap(), "--json"])).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
