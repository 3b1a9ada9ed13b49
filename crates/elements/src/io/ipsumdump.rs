//! Click's IP summary dump text format, shared by FromIPSummaryDump and ToIPSummaryDump: the
//! field names, each field's text on output (read from a packet) and on input (written into
//! the packet being built), and the IP and TCP option notations.

use std::fmt::Write;
use std::net::Ipv4Addr;

use sluice_core::{Packet, Timestamp};

use super::extra_length;
use crate::ip::common::ip_offset;

/// A field of a summary dump line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// `timestamp`: `SEC.USEC`.
    Timestamp,
    /// `ts_sec`.
    TsSec,
    /// `ts_usec`.
    TsUsec,
    /// `ts_usec1`: microseconds since the epoch.
    TsUsec1,
    /// `ip_src`.
    Src,
    /// `ip_dst`.
    Dst,
    /// `ip_tos`.
    Tos,
    /// `ip_dscp`.
    Dscp,
    /// `ip_ecn`: `no`, `ect1`, `ect2`, `ce`.
    Ecn,
    /// `ip_ttl`.
    Ttl,
    /// `ip_frag`: `F`, `f`, `!`, `.`.
    Frag,
    /// `ip_fragoff`: offset in bytes, `+` for MF, `!` for DF.
    FragOff,
    /// `ip_id`.
    Id,
    /// `ip_sum`.
    Sum,
    /// `ip_proto`: `T`, `U`, `I` or a number.
    Proto,
    /// `ip_hl`.
    Hl,
    /// `ip_len` (for a packet without an IP header, its length plus the extra-length
    /// annotation).
    Len,
    /// `ip_capture_len`.
    CaptureLen,
    /// `ip_opt`.
    IpOpt,
    /// `sport`.
    Sport,
    /// `dport`.
    Dport,
    /// `tcp_seq`.
    Seq,
    /// `tcp_ack`.
    Ack,
    /// `tcp_off`.
    TcpOff,
    /// `tcp_flags`.
    Flags,
    /// `tcp_window`.
    Window,
    /// `tcp_urp`.
    Urp,
    /// `tcp_opt`.
    TcpOpt,
    /// `udp_len`.
    UdpLen,
    /// `icmp_type`.
    IcmpType,
    /// `icmp_code`.
    IcmpCode,
    /// `icmp_type_name`.
    IcmpTypeName,
    /// `icmp_code_name`.
    IcmpCodeName,
    /// `icmp_flowid`.
    IcmpFlowid,
    /// `icmp_seq`.
    IcmpSeq,
    /// `icmp_nextmtu`.
    IcmpNextMtu,
    /// `payload`: a quoted string.
    Payload,
    /// `payload_len`.
    PayloadLen,
    /// `payload_md5`: the payload's MD5 digest in Click's 22-character text form.
    PayloadMd5,
    /// `payload_md5_hex`: the payload's MD5 digest in hexadecimal.
    PayloadMd5Hex,
    /// `count`.
    Count,
    /// `paint`, `link`: the paint annotation.
    Paint,
    /// `direction`: the paint annotation, written `>` for 0 and `<` for 1.
    Direction,
    /// `aggregate`.
    Aggregate,
    /// `wire_len`.
    WireLen,
}

const NAMES: &[(&str, Field)] = &[
    ("timestamp", Field::Timestamp),
    ("ts", Field::Timestamp),
    ("utimestamp", Field::Timestamp),
    ("ts_sec", Field::TsSec),
    ("sec", Field::TsSec),
    ("ts_usec", Field::TsUsec),
    ("usec", Field::TsUsec),
    ("ts_usec1", Field::TsUsec1),
    ("usec1", Field::TsUsec1),
    ("ip_src", Field::Src),
    ("src", Field::Src),
    ("ip_dst", Field::Dst),
    ("dst", Field::Dst),
    ("ip_tos", Field::Tos),
    ("ip_dscp", Field::Dscp),
    ("ip_ecn", Field::Ecn),
    ("ip_ttl", Field::Ttl),
    ("ip_frag", Field::Frag),
    ("ip_fragoff", Field::FragOff),
    ("ip_id", Field::Id),
    ("ip_sum", Field::Sum),
    ("ip_proto", Field::Proto),
    ("ip_p", Field::Proto),
    ("proto", Field::Proto),
    ("ip_hl", Field::Hl),
    ("ip_len", Field::Len),
    ("len", Field::Len),
    ("length", Field::Len),
    ("ip_capture_len", Field::CaptureLen),
    ("ip_opt", Field::IpOpt),
    ("sport", Field::Sport),
    ("dport", Field::Dport),
    ("tcp_seq", Field::Seq),
    ("tcp_seqno", Field::Seq),
    ("tcp_ack", Field::Ack),
    ("tcp_ackno", Field::Ack),
    ("tcp_off", Field::TcpOff),
    ("tcp_flags", Field::Flags),
    ("tcp_window", Field::Window),
    ("tcp_win", Field::Window),
    ("tcp_urp", Field::Urp),
    ("tcp_opt", Field::TcpOpt),
    ("udp_len", Field::UdpLen),
    ("icmp_type", Field::IcmpType),
    ("icmp_code", Field::IcmpCode),
    ("icmp_type_name", Field::IcmpTypeName),
    ("icmp_code_name", Field::IcmpCodeName),
    ("icmp_flowid", Field::IcmpFlowid),
    ("icmp_seq", Field::IcmpSeq),
    ("icmp_nextmtu", Field::IcmpNextMtu),
    ("payload", Field::Payload),
    ("payload_len", Field::PayloadLen),
    ("payload_length", Field::PayloadLen),
    ("payload_md5", Field::PayloadMd5),
    ("payload_md5_hex", Field::PayloadMd5Hex),
    ("count", Field::Count),
    ("pkt_count", Field::Count),
    ("packet_count", Field::Count),
    ("paint", Field::Paint),
    ("link", Field::Paint),
    ("direction", Field::Direction),
    ("aggregate", Field::Aggregate),
    ("agg", Field::Aggregate),
    ("wire_len", Field::WireLen),
    ("wire_length", Field::WireLen),
];

/// The field named `name` (case and spaces instead of underscores allowed).
pub fn field(name: &str) -> Option<Field> {
    let n = name.trim().to_ascii_lowercase().replace(' ', "_");
    NAMES.iter().find(|(k, _)| *k == n).map(|(_, f)| *f)
}

/// The canonical name of `f`, as in a `!data` line.
pub fn name(f: Field) -> &'static str {
    NAMES.iter().find(|(_, g)| *g == f).map_or("?", |(k, _)| *k)
}

const TCP_FLAGS: &[u8] = b"FSRPAUECN";

const ICMP_TYPES: &[(u8, &str)] = &[
    (0, "echo-reply"),
    (3, "unreachable"),
    (4, "sourcequench"),
    (5, "redirect"),
    (8, "echo"),
    (9, "routeradvert"),
    (10, "routersolicit"),
    (11, "timeexceeded"),
    (12, "parameterproblem"),
    (13, "timestamp"),
    (14, "timestamp-reply"),
    (15, "inforeq"),
    (16, "inforeq-reply"),
    (17, "maskreq"),
    (18, "maskreq-reply"),
];

const ICMP_CODES: &[(u8, u8, &str)] = &[
    (3, 0, "net"),
    (3, 1, "host"),
    (3, 2, "protocol"),
    (3, 3, "port"),
    (3, 4, "needfrag"),
    (3, 5, "srcroutefail"),
    (3, 6, "netunknown"),
    (3, 7, "hostunknown"),
    (3, 8, "isolated"),
    (3, 9, "netprohibited"),
    (3, 10, "hostprohibited"),
    (3, 11, "tosnet"),
    (3, 12, "toshost"),
    (3, 13, "filterprohibited"),
    (3, 14, "hostprecedence"),
    (3, 15, "precedencecutoff"),
    (5, 0, "net"),
    (5, 1, "host"),
    (5, 2, "tosnet"),
    (5, 3, "toshost"),
    (11, 0, "transit"),
    (11, 1, "reassembly"),
    (12, 0, "erroratptr"),
    (12, 1, "missingopt"),
    (12, 2, "length"),
];

/// Click's name of ICMP type `ty`.
pub fn icmp_type_name(ty: u8) -> Option<&'static str> {
    ICMP_TYPES.iter().find(|(k, _)| *k == ty).map(|(_, n)| *n)
}

/// Click's name of code `code` of ICMP type `ty`.
pub fn icmp_code_name(ty: u8, code: u8) -> Option<&'static str> {
    ICMP_CODES
        .iter()
        .find(|(a, b, _)| *a == ty && *b == code)
        .map(|(_, _, n)| *n)
}

/// Click's name of IP protocol `proto`.
pub fn ip_proto_name(proto: u8) -> Option<&'static str> {
    Some(match proto {
        1 => "icmp",
        2 => "igmp",
        4 => "ipip",
        6 => "tcp",
        17 => "udp",
        33 => "dccp",
        47 => "gre",
        132 => "sctp",
        _ => return None,
    })
}

/// What a packet looks like to the output fields: the IP header and transport header
/// positions (Click's PacketDesc).
struct View<'a> {
    p: &'a Packet,
    /// From the network header to the end of the packet.
    net: &'a [u8],
    ip: bool,
    hl: usize,
    proto: u8,
    first_frag: bool,
}

impl<'a> View<'a> {
    fn new(p: &'a Packet) -> View<'a> {
        let net = &p.data()[ip_offset(p)..];
        let ip = !net.is_empty() && net[0] >> 4 == 4;
        let hl = if ip { ((net[0] & 15) as usize) * 4 } else { 0 };
        let proto = net.get(9).copied().unwrap_or(0);
        let first_frag = net.len() >= 8 && (u16::from_be_bytes([net[6], net[7]]) & 0x1fff) == 0;
        View {
            p,
            net,
            ip,
            hl,
            proto,
            first_frag,
        }
    }

    fn b(&self, i: usize) -> u8 {
        self.net[i]
    }

    fn u16(&self, i: usize) -> u16 {
        u16::from_be_bytes([self.net[i], self.net[i + 1]])
    }

    fn u32(&self, i: usize) -> u32 {
        u32::from_be_bytes([
            self.net[i],
            self.net[i + 1],
            self.net[i + 2],
            self.net[i + 3],
        ])
    }

    /// IP header bytes `..l` are present.
    fn ip_has(&self, l: usize) -> bool {
        self.ip && self.net.len() >= l
    }

    /// The transport header of protocol `proto` exists and holds `l` bytes.
    fn tp_has(&self, protos: &[u8], l: usize) -> bool {
        self.ip
            && self.hl >= 20
            && self.net.len() > self.hl
            && self.first_frag
            && protos.contains(&self.proto)
            && self.net.len() - self.hl >= l
    }

    fn ip_len(&self) -> usize {
        if self.ip_has(4) {
            self.u16(2) as usize
        } else {
            self.p.len()
        }
    }

    /// Payload offset in `net` and length (Click's payload_info).
    fn payload(&self) -> (usize, usize) {
        if !self.ip {
            return (0, self.p.len() - ip_offset(self.p));
        }
        let mut off = self.hl;
        if self.first_frag {
            match self.proto {
                6 => {
                    let th = self.tcp_off();
                    off += th.filter(|&o| o >= 20).unwrap_or(20);
                }
                17 | 136 => off += 8,
                _ => {}
            }
        }
        (off, self.ip_len().saturating_sub(off))
    }

    fn tcp_off(&self) -> Option<usize> {
        self.tp_has(&[6], 13)
            .then(|| ((self.b(self.hl + 12) >> 4) as usize) * 4)
    }
}

fn dotted(w: &mut String, b: &[u8]) {
    let _ = write!(w, "{}.{}.{}.{}", b[0], b[1], b[2], b[3]);
}

/// What the writer of the options it knows made of one option ([`unparse_opts`]).
enum Known {
    /// Written.
    Written,
    /// Not one it knows: written as `KIND=B:B…`.
    Other,
    /// Malformed: the options are written as `?`.
    Malformed,
}

/// Writes the options `o` of an IP or TCP header in Click's notation: kind 0 ends them, kind 1
/// (padding) is skipped, and each other option, `;` between them, is written by `known` (given
/// the whole option) or else as `KIND=B:B…` with its data bytes. `.` for none; `?` alone if an
/// option's length is below 2 or runs past the end, or `known` finds it malformed.
fn unparse_opts(w: &mut String, o: &[u8], mut known: impl FnMut(&mut String, &[u8]) -> Known) {
    let start = w.len();
    let bad = |w: &mut String| {
        w.truncate(start);
        w.push('?');
    };
    let mut sep = "";
    let mut i = 0;
    while i < o.len() {
        let t = o[i];
        if t == 0 {
            break;
        }
        if t == 1 {
            i += 1;
            continue;
        }
        let opt = match o.get(i + 1) {
            Some(&l) if l >= 2 && i + l as usize <= o.len() => &o[i..i + l as usize],
            _ => return bad(w),
        };
        w.push_str(sep);
        match known(w, opt) {
            Known::Written => {}
            Known::Other => {
                let _ = write!(w, "{t}");
                for (j, b) in opt[2..].iter().enumerate() {
                    let _ = write!(w, "{}{}", if j == 0 { '=' } else { ':' }, b);
                }
            }
            Known::Malformed => return bad(w),
        }
        sep = ";";
        i += opt.len();
    }
    if w.len() == start {
        w.push('.');
    }
}

/// Writes IP options `o` in Click's notation (`.` for none, `?` if malformed).
pub fn unparse_ip_opt(w: &mut String, o: &[u8]) {
    unparse_opts(w, o, |w, opt| {
        let (t, len) = (opt[0], opt.len());
        match t {
            7 | 131 | 137 => {
                if len < 3 || opt[2] < 4 {
                    return Known::Malformed;
                }
                w.push_str(match t {
                    7 => "rr",
                    131 => "lsrr",
                    _ => "ssrr",
                });
                w.push('{');
                let ptr = opt[2] as usize - 1;
                let mut s = "";
                let mut k = 3;
                while k + 4 <= len {
                    if k == ptr {
                        if t == 7 {
                            break;
                        }
                        s = "^";
                    }
                    w.push_str(s);
                    dotted(w, &opt[k..k + 4]);
                    s = ",";
                    k += 4;
                }
                if k == len && k == ptr && t != 7 {
                    w.push('^');
                }
                w.push('}');
                if k + 4 <= len && k == ptr && t == 7 {
                    let _ = write!(w, "+{}", (len - k) / 4);
                }
            }
            68 => {
                if len < 4 || opt[2] < 5 {
                    return Known::Malformed;
                }
                let flag = opt[3] & 15;
                let size = if (1..=3).contains(&flag) { 8 } else { 4 };
                // Bytes an entry reads: an address and a timestamp unless the flag is 0. (For
                // flags above 3, Click's loop reads past the option; here the entries stop.)
                let entry = if flag == 0 { 4 } else { 8 };
                w.push_str("ts");
                match flag {
                    0 => {}
                    1 => w.push_str(".ip"),
                    3 => w.push_str(".preip"),
                    f => {
                        let _ = write!(w, ".{f}");
                    }
                }
                w.push('{');
                let ptr = opt[2] as usize - 1;
                let mut s = "";
                let mut k = 4;
                while k + entry <= len {
                    if k == ptr {
                        if flag != 3 {
                            break;
                        }
                        s = "^";
                    }
                    w.push_str(s);
                    if flag != 0 {
                        dotted(w, &opt[k..k + 4]);
                        w.push('=');
                        k += 4;
                    }
                    if flag == 3 && k > ptr {
                        w.pop();
                    } else {
                        let v = u32::from_be_bytes([opt[k], opt[k + 1], opt[k + 2], opt[k + 3]]);
                        if v & 0x8000_0000 != 0 {
                            w.push('!');
                        }
                        let _ = write!(w, "{}", v & 0x7fff_ffff);
                    }
                    s = ",";
                    k += 4;
                }
                if k == len && k == ptr {
                    w.push('^');
                }
                w.push('}');
                if k + size <= len && k == ptr {
                    let _ = write!(w, "+{}", (len - k) / size);
                }
                if opt[3] >> 4 != 0 {
                    let _ = write!(w, "++{}", opt[3] >> 4);
                }
            }
            _ => return Known::Other,
        }
        Known::Written
    })
}

/// Writes TCP options `o` in Click's notation (`.` for none, `?` if malformed).
pub fn unparse_tcp_opt(w: &mut String, o: &[u8]) {
    unparse_opts(w, o, |w, opt| {
        match (opt[0], opt.len()) {
            (2, 4) => {
                let _ = write!(w, "mss{}", u16::from_be_bytes([opt[2], opt[3]]));
            }
            (3, 3) => {
                let _ = write!(w, "wscale{}", opt[2]);
            }
            (4, 2) => w.push_str("sackok"),
            (5, l) if l % 8 == 2 => {
                for (j, b) in opt[2..].chunks_exact(8).enumerate() {
                    let l = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                    let r = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                    let _ = write!(w, "{}sack{}-{}", if j == 0 { "" } else { ";" }, l, r);
                }
            }
            (8, 10) => {
                let a = u32::from_be_bytes([opt[2], opt[3], opt[4], opt[5]]);
                let b = u32::from_be_bytes([opt[6], opt[7], opt[8], opt[9]]);
                let _ = write!(w, "ts{a}:{b}");
            }
            _ => return Known::Other,
        }
        Known::Written
    })
}

/// Writes `data` as a double-quoted string with C escapes.
fn quote(w: &mut String, data: &[u8]) {
    w.push('"');
    for &c in data {
        match c {
            b'\n' => w.push_str("\\n"),
            b'\t' => w.push_str("\\t"),
            b'\r' => w.push_str("\\r"),
            b'"' => w.push_str("\\\""),
            b'\\' => w.push_str("\\\\"),
            b'$' => w.push_str("\\$"),
            32..=126 => w.push(c as char),
            _ => {
                let _ = write!(w, "\\{:03o}", c);
            }
        }
    }
    w.push('"');
}

/// Writes field `f` of packet `p` (`-` when it does not apply or is not in the packet).
pub fn unparse(w: &mut String, f: Field, p: &Packet) {
    let v = View::new(p);
    let ts = p.timestamp();
    let num = |w: &mut String, x: Option<u64>| match x {
        Some(x) => {
            let _ = write!(w, "{x}");
        }
        None => w.push('-'),
    };
    let tcp = |l: usize| v.tp_has(&[6], l);
    let ports = |l: usize| v.tp_has(&[6, 17, 132, 33, 136], l);
    let icmp = |l: usize| v.tp_has(&[1], l);
    let t = v.hl;
    match f {
        Field::Timestamp => {
            // Negative times print as Click prints them: `-0.900000`, not `-1.100000`.
            let a = ts.0.unsigned_abs() / 1000;
            let sign = if ts.0 < 0 && a > 0 { "-" } else { "" };
            let _ = write!(w, "{}{}.{:06}", sign, a / 1_000_000, a % 1_000_000);
        }
        Field::TsSec => num(w, Some(ts.sec() as u64)),
        Field::TsUsec => num(w, Some((ts.subsec_nanos() / 1000) as u64)),
        Field::TsUsec1 => num(
            w,
            Some((ts.sec() * 1_000_000 + ts.subsec_nanos() / 1000) as u64),
        ),
        Field::Src | Field::Dst => {
            let at = if f == Field::Src { 12 } else { 16 };
            if v.ip_has(at + 4) {
                dotted(w, &v.net[at..at + 4]);
            } else {
                w.push('-');
            }
        }
        Field::Tos => num(w, v.ip_has(2).then(|| v.b(1) as u64)),
        Field::Dscp => num(w, v.ip_has(2).then(|| (v.b(1) >> 2) as u64)),
        Field::Ecn => {
            if v.ip_has(2) {
                w.push_str(["no", "ect1", "ect2", "ce"][(v.b(1) & 3) as usize]);
            } else {
                w.push('-');
            }
        }
        Field::Ttl => num(w, v.ip_has(9).then(|| v.b(8) as u64)),
        Field::Frag => {
            if v.ip_has(8) {
                let off = v.u16(6);
                w.push(if off & 0x3fff != 0 {
                    if off & 0x1fff == 0 {
                        'F'
                    } else {
                        'f'
                    }
                } else if off & 0x4000 != 0 {
                    '!'
                } else {
                    '.'
                });
            } else {
                w.push('-');
            }
        }
        Field::FragOff => {
            if v.ip_has(8) {
                let off = v.u16(6);
                let _ = write!(w, "{}", (off & 0x1fff) << 3);
                if off & 0x2000 != 0 {
                    w.push('+');
                }
                if off & 0x4000 != 0 {
                    w.push('!');
                }
            } else {
                w.push('-');
            }
        }
        Field::Id => num(w, v.ip_has(6).then(|| v.u16(4) as u64)),
        Field::Sum => num(w, v.ip_has(12).then(|| v.u16(10) as u64)),
        Field::Proto => match v.ip_has(10).then(|| v.b(9)) {
            Some(6) => w.push('T'),
            Some(17) => w.push('U'),
            Some(1) => w.push('I'),
            x => num(w, x.map(u64::from)),
        },
        Field::Hl => num(w, v.ip_has(1).then_some(t as u64)),
        // With an IP header the lengths come from it; the extra-length annotation counts
        // only for packets without one.
        Field::Len => num(
            w,
            Some(v.ip_len() as u64 + if v.ip { 0 } else { extra_length(p) as u64 }),
        ),
        Field::CaptureLen => {
            let avail = if v.ip { v.net.len() } else { p.len() };
            num(w, Some(v.ip_len().min(avail) as u64));
        }
        Field::IpOpt => {
            if !v.ip_has(20) || (t > 20 && v.net.len() < t) {
                w.push('-');
            } else {
                unparse_ip_opt(w, &v.net[20..t.max(20)]);
            }
        }
        Field::Sport => num(w, ports(2).then(|| v.u16(t) as u64)),
        Field::Dport => num(w, ports(4).then(|| v.u16(t + 2) as u64)),
        Field::Seq => num(w, tcp(8).then(|| v.u32(t + 4) as u64)),
        Field::Ack => num(w, tcp(12).then(|| v.u32(t + 8) as u64)),
        Field::TcpOff => num(w, v.tcp_off().map(|o| o as u64)),
        Field::Flags => {
            if tcp(14) {
                let fl = v.b(t + 13) as u16 | (((v.b(t + 12) & 1) as u16) << 8);
                if fl == 0 {
                    w.push('.');
                }
                for (i, c) in TCP_FLAGS.iter().enumerate() {
                    if fl & (1 << i) != 0 {
                        w.push(*c as char);
                    }
                }
            } else {
                w.push('-');
            }
        }
        Field::Window => num(w, tcp(16).then(|| v.u16(t + 14) as u64)),
        Field::Urp => num(w, tcp(20).then(|| v.u16(t + 18) as u64)),
        Field::TcpOpt => match v.tcp_off() {
            Some(o) if o <= 20 => w.push('.'),
            Some(o) if v.net.len() >= t + o => unparse_tcp_opt(w, &v.net[t + 20..t + o]),
            _ => w.push('-'),
        },
        Field::UdpLen => num(w, v.tp_has(&[17], 6).then(|| v.u16(t + 4) as u64)),
        Field::IcmpType => num(w, icmp(1).then(|| v.b(t) as u64)),
        Field::IcmpCode => num(w, icmp(2).then(|| v.b(t + 1) as u64)),
        Field::IcmpTypeName => match icmp(1).then(|| v.b(t)) {
            Some(ty) => match icmp_type_name(ty) {
                Some(n) => w.push_str(n),
                None => num(w, Some(ty as u64)),
            },
            None => w.push('-'),
        },
        Field::IcmpCodeName => match icmp(2).then(|| (v.b(t), v.b(t + 1))) {
            Some((ty, c)) => match icmp_code_name(ty, c) {
                Some(n) => w.push_str(n),
                None => num(w, Some(c as u64)),
            },
            None => w.push('-'),
        },
        Field::IcmpFlowid | Field::IcmpSeq => {
            let at = if f == Field::IcmpFlowid { 4 } else { 6 };
            let echo = icmp(at + 2) && matches!(v.b(t), 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18);
            num(w, echo.then(|| v.u16(t + at) as u64));
        }
        Field::IcmpNextMtu => {
            let nf = icmp(8) && v.b(t) == 3 && v.b(t + 1) == 4;
            num(w, nf.then(|| v.u16(t + 6) as u64));
        }
        Field::Payload => {
            let (off, len) = v.payload();
            let end = (off + len).min(v.net.len());
            quote(w, v.net.get(off..end).unwrap_or(&[]));
        }
        Field::PayloadMd5 | Field::PayloadMd5Hex => {
            let (off, len) = v.payload();
            let end = (off + len).min(v.net.len());
            let d = super::md5::digest(v.net.get(off..end).unwrap_or(&[]));
            if f == Field::PayloadMd5 {
                w.push_str(&super::md5::text(&d));
            } else {
                for b in d {
                    let _ = write!(w, "{b:02x}");
                }
            }
        }
        Field::PayloadLen => {
            let (_, len) = v.payload();
            num(
                w,
                Some(len as u64 + if v.ip { 0 } else { extra_length(p) as u64 }),
            );
        }
        Field::Count => num(w, Some(1)),
        Field::Paint => num(w, Some(p.anno().paint as u64)),
        Field::Direction => match p.anno().paint {
            0 => w.push('>'),
            1 => w.push('<'),
            v => num(w, Some(v as u64)),
        },
        Field::Aggregate => num(w, Some(p.anno().aggregate as u64)),
        Field::WireLen => num(w, Some(p.len() as u64 + extra_length(p) as u64)),
    }
}

/// The values a dump line gives, before the packet is built.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// Timestamp (whole, or from `ts_sec` and `ts_usec`).
    pub ts: Option<Timestamp>,
    ts_sec: Option<i64>,
    ts_usec: Option<i64>,
    src: Option<Ipv4Addr>,
    dst: Option<Ipv4Addr>,
    tos: Option<u8>,
    dscp: Option<u8>,
    ecn: Option<u8>,
    ttl: Option<u8>,
    frag_off: Option<u16>,
    id: Option<u16>,
    sum: Option<u16>,
    proto: Option<u8>,
    len: Option<u32>,
    ip_opt: Option<Vec<u8>>,
    /// `ip_hl`: the IP header length in bytes (rounded up to 4, at most 60).
    ip_hl: Option<usize>,
    sport: Option<u16>,
    dport: Option<u16>,
    seq: Option<u32>,
    ack: Option<u32>,
    flags: Option<u16>,
    window: Option<u16>,
    urp: Option<u16>,
    tcp_opt: Option<Vec<u8>>,
    /// `tcp_off`: the TCP header length in bytes (rounded up to 4, at most 60).
    tcp_off: Option<usize>,
    udp_len: Option<u16>,
    icmp_type: Option<u8>,
    icmp_code: Option<u8>,
    icmp_flowid: Option<u16>,
    icmp_seq: Option<u16>,
    icmp_nextmtu: Option<u16>,
    payload: Option<Vec<u8>>,
    payload_len: Option<u32>,
    /// Packet count (MULTIPACKET).
    pub count: Option<u32>,
    paint: Option<u8>,
    aggregate: Option<u32>,
}

/// Default addresses and ports (`!flowid`, FLOWID).
#[derive(Clone, Copy, Debug)]
pub struct FlowId {
    /// Source address.
    pub src: Ipv4Addr,
    /// Source port.
    pub sport: u16,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// Destination port.
    pub dport: u16,
    /// Protocol, if given.
    pub proto: Option<u8>,
}

/// Parses a protocol: `T`, `U`, `I`, a name or a number.
pub fn parse_proto(s: &str) -> Option<u8> {
    match s {
        "T" | "tcp" => Some(6),
        "U" | "udp" => Some(17),
        "I" | "icmp" => Some(1),
        _ => s.parse().ok(),
    }
}

/// Parses an `ip_hl` or `tcp_off` value: bytes, rounded up to a multiple of 4, at most 60.
fn header_len(s: &str) -> Option<usize> {
    let v: usize = s.parse().ok()?;
    (v <= 60).then_some((v + 3) & !3)
}

/// Parses `!flowid SRC SPORT DST DPORT [PROTO]` words.
pub fn parse_flowid(w: &[&str]) -> Option<FlowId> {
    if w.len() != 4 && w.len() != 5 {
        return None;
    }
    Some(FlowId {
        src: w[0].parse().ok()?,
        sport: w[1].parse().ok()?,
        dst: w[2].parse().ok()?,
        dport: w[3].parse().ok()?,
        proto: match w.get(4) {
            Some(p) => Some(parse_proto(p)?),
            None => None,
        },
    })
}

fn parse_ts(s: &str) -> Option<Timestamp> {
    let (a, b) = s.split_once('.').unwrap_or((s, ""));
    // Click reads `.1` as 0.1 s.
    let sec: i64 = match a {
        "" if !b.is_empty() => 0,
        _ => a.parse().ok()?,
    };
    if !b.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let mut frac = b.to_string();
    frac.truncate(9);
    while frac.len() < 9 {
        frac.push('0');
    }
    Some(Timestamp::from_parts(sec, frac.parse().ok()?))
}

/// Parses IP options in Click's notation (`.` for none).
pub fn parse_ip_opt(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if s == "." {
        return Some(out);
    }
    for o in s.split(';') {
        let (name, rest) = o.split_at(
            o.find(|c: char| !c.is_ascii_alphanumeric() && c != '.')
                .unwrap_or(o.len()),
        );
        match name {
            "nop" if rest.is_empty() => out.push(1),
            "eol" if rest.is_empty() => out.push(0),
            "rr" | "lsrr" | "ssrr" => {
                let t = match name {
                    "rr" => 7,
                    "lsrr" => 131,
                    _ => 137,
                };
                let body = rest.strip_prefix('{')?;
                let (inner, more) = body.split_once('}')?;
                let mut addrs = Vec::new();
                let mut ptr = None;
                for a in inner.split(',').filter(|a| !a.is_empty()) {
                    for (k, part) in a.split('^').enumerate() {
                        if k > 0 {
                            ptr = Some(addrs.len());
                        }
                        if !part.is_empty() {
                            addrs.push(part.parse::<Ipv4Addr>().ok()?);
                        }
                    }
                }
                let extra: usize = match more.strip_prefix('+') {
                    Some(n) => n.parse().ok()?,
                    None if more.is_empty() => 0,
                    None => return None,
                };
                let ptr = ptr.unwrap_or(addrs.len());
                let len = 3 + 4 * (addrs.len() + extra);
                out.extend_from_slice(&[t, len as u8, (4 + 4 * ptr) as u8]);
                for a in addrs {
                    out.extend_from_slice(&a.octets());
                }
                out.extend(std::iter::repeat_n(0, 4 * extra));
            }
            "ts" | "ts.ip" | "ts.preip" => parse_ts_opt(name, rest, &mut out)?,
            _ if name.starts_with("ts.") => parse_ts_opt(name, rest, &mut out)?,
            // An option without data is its type byte alone, as Click writes it.
            _ => match o.split_once('=') {
                Some((n, d)) => {
                    let bytes: Vec<u8> = d
                        .split(':')
                        .map(|b| b.parse().ok())
                        .collect::<Option<_>>()?;
                    out.push(n.parse().ok()?);
                    out.push(2 + bytes.len() as u8);
                    out.extend(bytes);
                }
                None => out.push(o.parse().ok()?),
            },
        }
    }
    (out.len() <= 40).then_some(out)
}

/// Parses a timestamp option body (`{…}+N++M` after `ts`, `ts.ip`, `ts.preip` or `ts.F`).
fn parse_ts_opt(name: &str, rest: &str, out: &mut Vec<u8>) -> Option<()> {
    // A plain `ts` with `ADDR=VALUE` entries is a timestamp-and-address option.
    let flag: u8 = match name {
        "ts" if rest.contains('=') => 1,
        "ts" => 0,
        "ts.ip" => 1,
        "ts.preip" => 3,
        _ => name.strip_prefix("ts.")?.parse().ok().filter(|f| *f < 16)?,
    };
    let size = if (1..=3).contains(&flag) { 8 } else { 4 };
    let (inner, more) = rest.strip_prefix('{')?.split_once('}')?;
    let mut entries: Vec<u8> = Vec::new();
    let mut ptr = None;
    let mut n = 0;
    for item in inner.split(',').filter(|a| !a.is_empty()) {
        for (k, part) in item.split('^').enumerate() {
            if k > 0 {
                ptr = Some(n);
            }
            if part.is_empty() {
                continue;
            }
            let (addr, val) = if flag == 0 {
                (None, Some(part))
            } else {
                match part.split_once('=') {
                    Some((a, v)) => (Some(a), Some(v)),
                    None => (Some(part), None),
                }
            };
            if let Some(a) = addr {
                entries.extend_from_slice(&a.parse::<Ipv4Addr>().ok()?.octets());
            }
            let v = match val {
                None | Some("?") => 0,
                Some(v) => match v.strip_prefix('!') {
                    Some(x) => x.parse::<u32>().ok()? | 0x8000_0000,
                    None => v.parse::<u32>().ok()?,
                },
            };
            entries.extend_from_slice(&v.to_be_bytes());
            n += 1;
        }
    }
    let (room, oflw) = match more.split_once("++") {
        Some((r, o)) => (r, o.parse::<u8>().ok().filter(|o| *o < 16)?),
        None => (more, 0),
    };
    let room: usize = match room.strip_prefix('+') {
        Some(r) => r.parse().ok()?,
        None if room.is_empty() => 0,
        None => return None,
    };
    let len = 4 + entries.len() + size * room;
    if len > 40 {
        return None;
    }
    let ptr = 5 + size * ptr.unwrap_or(n);
    out.extend_from_slice(&[68, len as u8, ptr as u8, oflw << 4 | flag]);
    out.extend(entries);
    out.extend(std::iter::repeat_n(0, size * room));
    Some(())
}

/// Parses TCP options in Click's notation (`.` for none).
pub fn parse_tcp_opt(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    if s == "." {
        return Some(out);
    }
    for o in s.split(';') {
        if o == "nop" {
            out.push(1);
        } else if o == "eol" {
            out.push(0);
        } else if o == "sackok" {
            out.extend_from_slice(&[4, 2]);
        } else if let Some(v) = o.strip_prefix("mss") {
            out.extend_from_slice(&[2, 4]);
            out.extend_from_slice(&v.parse::<u16>().ok()?.to_be_bytes());
        } else if let Some(v) = o.strip_prefix("wscale") {
            out.extend_from_slice(&[3, 3, v.parse().ok()?]);
        } else if let Some(v) = o.strip_prefix("sack") {
            // `sackL-R` or `sackL:R`; blocks joined by `,sack` make one option, as in Click.
            let blocks: Vec<&str> = v.split(",sack").collect();
            if blocks.len() > 4 {
                return None;
            }
            out.extend_from_slice(&[5, 2 + 8 * blocks.len() as u8]);
            for b in blocks {
                let (l, r) = b.split_once(['-', ':'])?;
                out.extend_from_slice(&l.parse::<u32>().ok()?.to_be_bytes());
                out.extend_from_slice(&r.parse::<u32>().ok()?.to_be_bytes());
            }
        } else if let Some(v) = o.strip_prefix("ts") {
            let (a, b) = v.split_once(':')?;
            out.extend_from_slice(&[8, 10]);
            out.extend_from_slice(&a.parse::<u32>().ok()?.to_be_bytes());
            out.extend_from_slice(&b.parse::<u32>().ok()?.to_be_bytes());
        } else {
            let (num, data) = match o.split_once('=') {
                Some((n, d)) => (n, Some(d)),
                None => (o, None),
            };
            let t: u8 = num.parse().ok()?;
            let bytes: Vec<u8> = match data {
                Some(d) => d
                    .split(':')
                    .map(|b| b.parse().ok())
                    .collect::<Option<_>>()?,
                None => Vec::new(),
            };
            out.push(t);
            out.push(2 + bytes.len() as u8);
            out.extend(bytes);
        }
    }
    (out.len() <= 40).then_some(out)
}

fn parse_flags(s: &str) -> Option<u16> {
    if let Ok(n) = s.parse::<u16>() {
        return Some(n);
    }
    if s == "." {
        return Some(0);
    }
    let mut f = 0;
    for c in s.bytes() {
        f |= match c {
            b'W' | b'Y' => 0x80,
            b'X' => 0x40,
            _ => 1 << TCP_FLAGS.iter().position(|x| *x == c)?,
        };
    }
    Some(f)
}

impl Record {
    /// Sets field `f` from its text; false when the text is malformed.
    pub fn set(&mut self, f: Field, s: &str) -> bool {
        /// Stores `v` in `slot`; false if it is `None`.
        fn put<T>(slot: &mut Option<T>, v: Option<T>) -> bool {
            *slot = v;
            slot.is_some()
        }
        /// Stores `s` parsed in `slot`; false if it does not parse.
        fn n<T: std::str::FromStr>(slot: &mut Option<T>, s: &str) -> bool {
            put(slot, s.parse().ok())
        }
        match f {
            Field::Timestamp => put(&mut self.ts, parse_ts(s)),
            Field::TsSec => n(&mut self.ts_sec, s),
            Field::TsUsec => n(&mut self.ts_usec, s),
            Field::TsUsec1 => {
                let mut us: Option<i64> = None;
                let ok = n(&mut us, s);
                self.ts = us.map(|u| Timestamp::from_parts(u / 1_000_000, u % 1_000_000 * 1000));
                ok
            }
            Field::Src => n(&mut self.src, s),
            Field::Dst => n(&mut self.dst, s),
            Field::Tos => n(&mut self.tos, s),
            Field::Dscp => n(&mut self.dscp, s),
            Field::Ecn => put(
                &mut self.ecn,
                match s {
                    "no" | "-" => Some(0),
                    "ect1" => Some(1),
                    "ect2" => Some(2),
                    "ce" => Some(3),
                    _ => s.parse().ok().filter(|v| *v < 4),
                },
            ),
            Field::Ttl => n(&mut self.ttl, s),
            Field::Frag => put(
                &mut self.frag_off,
                match s {
                    "F" => Some(0x2000),
                    "f" => Some(0x2000 | 100),
                    "!" => Some(0x4000),
                    "." => Some(0),
                    _ => None,
                },
            ),
            Field::FragOff => {
                let digits = s.trim_end_matches(['+', '!']);
                let Ok(off) = digits.parse::<u16>() else {
                    return false;
                };
                let mut v = (off >> 3) & 0x1fff;
                if s[digits.len()..].contains('+') {
                    v |= 0x2000;
                }
                if s[digits.len()..].contains('!') {
                    v |= 0x4000;
                }
                self.frag_off = Some(v);
                true
            }
            Field::Id => n(&mut self.id, s),
            Field::Sum => n(&mut self.sum, s),
            Field::Proto => put(&mut self.proto, parse_proto(s)),
            Field::Hl => put(&mut self.ip_hl, header_len(s)),
            Field::CaptureLen | Field::WireLen => true,
            Field::Len => n(&mut self.len, s),
            Field::IpOpt => put(&mut self.ip_opt, parse_ip_opt(s)),
            Field::Sport => n(&mut self.sport, s),
            Field::Dport => n(&mut self.dport, s),
            Field::Seq => n(&mut self.seq, s),
            Field::Ack => n(&mut self.ack, s),
            Field::TcpOff => put(&mut self.tcp_off, header_len(s)),
            Field::Flags => put(&mut self.flags, parse_flags(s)),
            Field::Window => n(&mut self.window, s),
            Field::Urp => n(&mut self.urp, s),
            Field::TcpOpt => put(&mut self.tcp_opt, parse_tcp_opt(s)),
            Field::UdpLen => n(&mut self.udp_len, s),
            Field::IcmpType | Field::IcmpTypeName => put(
                &mut self.icmp_type,
                ICMP_TYPES
                    .iter()
                    .find(|(_, k)| *k == s)
                    .map(|(t, _)| *t)
                    .or_else(|| s.parse().ok()),
            ),
            Field::IcmpCode | Field::IcmpCodeName => {
                let ty = self.icmp_type.unwrap_or(255);
                put(
                    &mut self.icmp_code,
                    ICMP_CODES
                        .iter()
                        .find(|(t, _, k)| *t == ty && *k == s)
                        .map(|(_, c, _)| *c)
                        .or_else(|| s.parse().ok()),
                )
            }
            Field::IcmpFlowid => n(&mut self.icmp_flowid, s),
            Field::IcmpSeq => n(&mut self.icmp_seq, s),
            Field::IcmpNextMtu => n(&mut self.icmp_nextmtu, s),
            // A C-quoted string, or a bare word (Click's cp_string).
            Field::Payload => put(&mut self.payload, Some(sluice_lang::args::unquote_bytes(s))),
            Field::PayloadLen => n(&mut self.payload_len, s),
            // Digests cannot rebuild a payload: read and ignored, as by Click.
            Field::PayloadMd5 | Field::PayloadMd5Hex => true,
            Field::Count => n(&mut self.count, s),
            Field::Paint | Field::Direction => put(
                &mut self.paint,
                match s {
                    ">" | "L" => Some(0),
                    "<" | "R" | "X" => Some(1),
                    _ => s.parse().ok(),
                },
            ),
            Field::Aggregate => n(&mut self.aggregate, s),
        }
    }

    /// Builds the packet: an IPv4 header (protocol `default_proto` unless given, TTL 100),
    /// the transport header of a first fragment, the payload; the IP length is the `ip_len`
    /// field, else the headers plus `payload_len`, else what was built. With `checksum` the
    /// packet holds the whole IP length and every checksum is set; otherwise the missing
    /// bytes are in the extra-length annotation.
    pub fn build(&self, default_proto: u8, flow: Option<&FlowId>, checksum: bool) -> Packet {
        let opt = self.ip_opt.clone().unwrap_or_default();
        // A longer `ip_hl` (`tcp_off`) than the options need pads them with end-of-list
        // bytes; a shorter one only changes the header's length field, as in Click.
        let hl = ((20 + opt.len() + 3) & !3).max(self.ip_hl.unwrap_or(0));
        let proto = self
            .proto
            .or(flow.and_then(|f| f.proto))
            .unwrap_or(default_proto);
        let frag_off = self.frag_off.unwrap_or(0);
        let first = frag_off & 0x1fff == 0;
        let topt = self.tcp_opt.clone().unwrap_or_default();
        let th = match (first, proto) {
            (false, _) => 0,
            (true, 6) => ((20 + topt.len() + 3) & !3).max(self.tcp_off.unwrap_or(0)),
            (true, 17 | 136 | 1) => 8,
            _ => 0,
        };
        let payload = self.payload.clone().unwrap_or_default();
        let mut d = vec![0u8; hl + th];
        d[0] = 0x40 | (self.ip_hl.unwrap_or(hl) / 4) as u8;
        let tos = self.tos.unwrap_or(0);
        let tos = match self.dscp {
            Some(x) => (tos & 3) | (x << 2),
            None => tos,
        };
        d[1] = match self.ecn {
            Some(e) => (tos & !3) | e,
            None => tos,
        };
        d[4..6].copy_from_slice(&self.id.unwrap_or(0).to_be_bytes());
        d[6..8].copy_from_slice(&frag_off.to_be_bytes());
        d[8] = self.ttl.unwrap_or(100);
        d[9] = proto;
        d[10..12].copy_from_slice(&self.sum.unwrap_or(0).to_be_bytes());
        let src = self
            .src
            .or(flow.map(|f| f.src))
            .unwrap_or(Ipv4Addr::UNSPECIFIED);
        let dst = self
            .dst
            .or(flow.map(|f| f.dst))
            .unwrap_or(Ipv4Addr::UNSPECIFIED);
        d[12..16].copy_from_slice(&src.octets());
        d[16..20].copy_from_slice(&dst.octets());
        d[20..20 + opt.len()].copy_from_slice(&opt);
        if th > 0 {
            let t = &mut d[hl..];
            let sport = self.sport.or(flow.map(|f| f.sport)).unwrap_or(0);
            let dport = self.dport.or(flow.map(|f| f.dport)).unwrap_or(0);
            match proto {
                6 => {
                    t[0..2].copy_from_slice(&sport.to_be_bytes());
                    t[2..4].copy_from_slice(&dport.to_be_bytes());
                    t[4..8].copy_from_slice(&self.seq.unwrap_or(0).to_be_bytes());
                    t[8..12].copy_from_slice(&self.ack.unwrap_or(0).to_be_bytes());
                    let fl = self.flags.unwrap_or(0);
                    t[12] = ((self.tcp_off.unwrap_or(th) / 4) as u8) << 4 | ((fl >> 8) & 1) as u8;
                    t[13] = fl as u8;
                    t[14..16].copy_from_slice(&self.window.unwrap_or(0).to_be_bytes());
                    t[18..20].copy_from_slice(&self.urp.unwrap_or(0).to_be_bytes());
                    t[20..20 + topt.len()].copy_from_slice(&topt);
                }
                1 => {
                    t[0] = self.icmp_type.unwrap_or(0);
                    t[1] = self.icmp_code.unwrap_or(0);
                    t[4..6].copy_from_slice(&self.icmp_flowid.unwrap_or(0).to_be_bytes());
                    t[6..8].copy_from_slice(
                        &self
                            .icmp_seq
                            .or(self.icmp_nextmtu)
                            .unwrap_or(0)
                            .to_be_bytes(),
                    );
                }
                _ => {
                    t[0..2].copy_from_slice(&sport.to_be_bytes());
                    t[2..4].copy_from_slice(&dport.to_be_bytes());
                }
            }
        }
        d.extend_from_slice(&payload);
        let want = match (self.len, self.payload_len) {
            (Some(l), _) => l as usize,
            (None, Some(pl)) => hl + th + pl as usize,
            (None, None) => d.len(),
        };
        // An IP length shorter than the headers cuts the transport header short.
        if want >= hl && want < d.len() && want < hl + th {
            d.truncate(want);
        }
        let ip_len = want.min(0xffff);
        d[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        if proto == 17 && th == 8 && d.len() >= hl + 6 {
            let ul = self.udp_len.unwrap_or((ip_len.saturating_sub(hl)) as u16);
            d[hl + 4..hl + 6].copy_from_slice(&ul.to_be_bytes());
        }
        if checksum {
            if d.len() < ip_len {
                d.resize(ip_len, 0);
            }
            let end = ip_len.max(hl).min(d.len());
            set_checksums(&mut d[..end], hl, th);
        }
        let mut p = Packet::from_bytes(&d);
        p.set_network_offset(0);
        p.set_transport_offset(hl as isize);
        p.set_dst_ip_anno(dst);
        if let Some(ts) = self.ts.or_else(|| {
            self.ts_sec
                .map(|s| Timestamp::from_parts(s, self.ts_usec.unwrap_or(0) * 1000))
        }) {
            p.set_timestamp(ts);
        }
        if let Some(x) = self.paint {
            p.anno_mut().paint = x;
        }
        if let Some(x) = self.aggregate {
            p.anno_mut().aggregate = x;
        }
        if want > d.len() {
            super::set_extra_length(&mut p, (want - d.len()) as u32);
        }
        p
    }
}

/// Sets the IP header checksum and, for a whole first fragment, the TCP, UDP or ICMP
/// checksum of the datagram `d` (header length `hl`, transport header `th` bytes).
fn set_checksums(d: &mut [u8], hl: usize, th: usize) {
    use sluice_wire::checksum::{checksum, finish, pseudo_header_v4, sum16};
    d[10] = 0;
    d[11] = 0;
    let c = checksum(&d[..hl]);
    d[10..12].copy_from_slice(&c.to_be_bytes());
    if th == 0 || d.len() < hl + th {
        return;
    }
    let src = Ipv4Addr::new(d[12], d[13], d[14], d[15]);
    let dst = Ipv4Addr::new(d[16], d[17], d[18], d[19]);
    let (proto, seg) = (d[9], d.len() - hl);
    let at = match proto {
        6 => 16,
        17 => 6,
        1 => 2,
        _ => return,
    };
    d[hl + at] = 0;
    d[hl + at + 1] = 0;
    let mut s = sum16(&d[hl..]);
    if proto != 1 {
        s += pseudo_header_v4(src, dst, proto, seg as u16);
    }
    let mut c = finish(s);
    if proto == 17 && c == 0 {
        c = 0xffff;
    }
    d[hl + at..hl + at + 2].copy_from_slice(&c.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_options_round_trip() {
        for s in [
            "ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}",
            "rr{2.3.4.5}+3",
            "rr{}+1",
            "lsrr{^1.2.3.4}",
            "99=0:5:10",
            "ts{1,10000,!45}+2",
            "ts.ip{1.0.0.1=!8320,1.0.0.2=8321^}++5",
            "ts.preip{1.0.0.1=1^1.0.0.3,1.0.0.4,0.0.0.0}",
        ] {
            let b = parse_ip_opt(s).unwrap();
            let mut w = String::new();
            unparse_ip_opt(&mut w, &b);
            assert_eq!(w, s);
        }
        // Timestamp options print in Click's notation.
        let mut w = String::new();
        unparse_ip_opt(
            &mut w,
            &[
                68, 16, 17, 0x20, 0, 0, 0, 1, 0, 0, 0x27, 0x10, 0x80, 0, 0, 45,
            ],
        );
        assert_eq!(w, "ts{1,10000,!45^}++2");
        let b = parse_ip_opt("nop;nop;eol").unwrap();
        let mut w = String::new();
        unparse_ip_opt(&mut w, &b);
        assert_eq!(w, ".");
        assert_eq!(
            parse_ip_opt("ssrr{128.4.45.60,128.4.49.61,^1.1.1.1,2.2.2.2}"),
            parse_ip_opt("ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}")
        );
    }

    #[test]
    fn sack_blocks_read_as_click() {
        assert_eq!(parse_tcp_opt("sack1:18"), parse_tcp_opt("sack1-18"));
        let b = parse_tcp_opt("sack1-2,sack3:4").unwrap();
        assert_eq!(b, [5, 18, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4]);
        let mut w = String::new();
        unparse_tcp_opt(&mut w, &b);
        assert_eq!(w, "sack1-2;sack3-4");
        assert_eq!(parse_tcp_opt("sack1"), None);
    }

    #[test]
    fn tcp_options_round_trip() {
        for s in [
            "mss1400",
            "wscale10",
            "sackok;sack95-98",
            "ts669063908:38382731",
            "99=0:5",
        ] {
            let b = parse_tcp_opt(s).unwrap();
            let mut w = String::new();
            unparse_tcp_opt(&mut w, &b);
            assert_eq!(w, s);
        }
    }

    #[test]
    fn names_and_flags() {
        assert_eq!(field("ip src"), Some(Field::Src));
        assert_eq!(field("SPORT"), Some(Field::Sport));
        assert_eq!(field("bogus"), None);
        assert_eq!(parse_flags("SA"), Some(0x12));
        assert_eq!(parse_flags("."), Some(0));
        assert_eq!(parse_ts("1.00002"), Some(Timestamp::from_parts(1, 20_000)));
    }

    #[test]
    fn any_option_bytes_unparse_without_panic() {
        // Every timestamp flag (Click reads past the option for flags above 3), every pointer
        // and length, and a pseudo-random sweep of other option bytes.
        let mut w = String::new();
        for flag in 0..=255u8 {
            for len in 4..=14u8 {
                for ptr in 0..=15u8 {
                    let mut o = vec![68, len, ptr, flag];
                    o.resize(len as usize, 0x5a);
                    w.clear();
                    unparse_ip_opt(&mut w, &o);
                    assert!(!w.is_empty());
                }
            }
        }
        let mut x = 0x2545_f491_u32;
        for _ in 0..200_000 {
            let o: Vec<u8> = (0..(x % 40) as usize)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    [7, 68, 131, 137, 1, 0, 2, 3, 4, 8, 12, (x >> 8) as u8][(x % 12) as usize]
                })
                .collect();
            w.clear();
            unparse_ip_opt(&mut w, &o);
            w.clear();
            unparse_tcp_opt(&mut w, &o);
        }
    }

    #[test]
    fn odd_input_never_panics() {
        let all: Vec<Field> = NAMES.iter().map(|(_, f)| *f).collect();
        let words = [
            "rr{}+99",
            "ssrr{^}",
            "ts{1}",
            "0",
            "65535",
            "4294967296",
            "\"\\",
            "\"a\"",
            "ssrr{1.2.3.4^",
            "99=1:2:300",
            "mss",
            "sack1-",
            ".",
            "-",
            "F",
            "f",
            "5+!",
            "ce",
        ];
        for f in &all {
            for w in words {
                let mut r = Record::default();
                r.set(*f, w);
                r.set(Field::Len, "3");
                for cs in [false, true] {
                    let mut p = r.build(6, None, cs);
                    for keep in [0, 1, 9, 21, 30] {
                        if keep < p.len() {
                            let n = p.len() - keep;
                            p.take(n);
                        }
                        let mut out = String::new();
                        for g in &all {
                            unparse(&mut out, *g, &p);
                        }
                    }
                }
            }
        }
    }
}
