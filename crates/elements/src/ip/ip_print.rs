//! IPPrint — pretty-prints IP packets
//!
//! Synopsis: `IPPrint([LABEL, keywords CONTENTS, PAYLOAD, MAXLENGTH, TIMESTAMP, ID, TTL, TOS,
//! LENGTH, AGGREGATE, PAINT, SWAP, ETHER, ACTIVE])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass unchanged. Expects IP packets (network
//! header annotation set, or the IP header at the start). For each packet prints one line to
//! standard error in Click's tcpdump-like format:
//!
//! `LABEL: TIMESTAMP: [#AGG[.PAINT]: ][ETHSRC > ETHDST: ][id I ][ttl T ][tos T ][length L ]PROTO…`
//!
//! where the protocol part is
//! - TCP: `SRC.SPORT > DST.DPORT: FLAGS SEQ:END(SEQLEN,PACKETLEN,IPLEN)[ ack A] win W` —
//!   FLAGS from `S`, `F`, `R`, `P` (`.` for none), SEQLEN counting SYN and FIN, PACKETLEN
//!   the whole packet's length;
//! - UDP: `SRC.SPORT > DST.DPORT: udp LEN` with the UDP header's length;
//! - ICMP: `SRC > DST: icmp echo (ID, SEQ)`, `icmp echo-reply (ID, SEQ)`,
//!   `icmp QDST unreachable CODE[ PROTO[/PORT]][ (mtu M)]` (QDST, PROTO and PORT from the
//!   quoted datagram), else `icmp TYPE[ CODE]` with Click's names (`icmp timeexceeded
//!   transit`) or numbers (`type N`, `code N`);
//! - other protocols: `SRC > DST: ip-proto-N`.
//!
//! Later fragments print `SRC > DST: tcp` (`udp`, `icmp`); every fragment adds
//! `(frag ID:LEN@OFF[+])`. A transport header too short prints `truncated-tcp` (`-udp`,
//! `-icmp`) where the field ran out, a network header shorter than 20 bytes `truncated-ip`.
//! The label and its colon are left out when LABEL is empty; the timestamp is `SEC.USEC`.
//!
//! Arguments:
//! - `LABEL` (string, default empty).
//! - `CONTENTS` (`NONE`, `HEX` or `ASCII`, or a boolean; default NONE): also print the
//!   packet's bytes from its start, on lines of 24 bytes in groups of 4 (HEX) or 48 characters
//!   in groups of 8 (ASCII). `PAYLOAD` (`false`, `HEX`/`true` or `ASCII`) does the same for
//!   the transport payload only (nothing is printed when it is empty); give at most one of
//!   the two. `MAXLENGTH` (default 1500, -1 for all) limits how many bytes.
//! - `TIMESTAMP` (bool, default true), `ID`, `TTL`, `TOS`, `LENGTH` (bool, default false):
//!   print those fields. `AGGREGATE`, `PAINT` (bool, default false): print the aggregate and
//!   paint annotations. `SWAP` (bool, default true): ICMP echo identifiers and sequence
//!   numbers in network byte order (false: as a little-endian machine reads them).
//!   `ETHER` (bool, default false): the Ethernet addresses, when the packet has a MAC header.
//!   `ACTIVE` (bool, default true).
//!
//! Handlers: `active` (rw).
//!
//! Example: `CheckIPHeader -> IPPrint(in, TTL true) -> ...`

use std::fmt::Write;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::{Args, Word};
use sluice_wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;
use crate::io::ipsumdump::{icmp_code_name, icmp_type_name, ip_proto_name};

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Contents {
    #[default]
    None,
    Hex,
    Ascii,
}

/// The IPPrint element.
pub struct IPPrint {
    label: String,
    contents: Contents,
    payload: bool,
    maxlength: i64,
    timestamp: bool,
    id: bool,
    ttl: bool,
    tos: bool,
    length: bool,
    aggregate: bool,
    paint: bool,
    swap: bool,
    ether: bool,
    active: bool,
}

impl Default for IPPrint {
    fn default() -> Self {
        IPPrint {
            label: String::new(),
            contents: Contents::None,
            payload: false,
            maxlength: 1500,
            timestamp: true,
            id: false,
            ttl: false,
            tos: false,
            length: false,
            aggregate: false,
            paint: false,
            swap: true,
            ether: false,
            active: true,
        }
    }
}

/// The big-endian 16-bit value at `at` of `b`.
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// The big-endian 32-bit value at `at` of `b`.
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl IPPrint {
    /// The TCP part; `t` is the transport header, cut to the IP payload length.
    fn tcp(&self, s: &mut String, ip: &Ipv4Packet<&[u8]>, t: &[u8], plen: usize) {
        let first = ip.frag_offset() == 0;
        if t.len() < 4 || !first {
            let what = if first { "truncated-tcp" } else { "tcp" };
            let _ = write!(s, "{} > {}: {}", ip.src(), ip.dst(), what);
            return;
        }
        let _ = write!(
            s,
            "{}.{} > {}.{}: ",
            ip.src(),
            be16(t, 0),
            ip.dst(),
            be16(t, 2)
        );
        if t.len() < 14 {
            s.push_str("truncated-tcp");
            return;
        }
        let flags = t[13];
        let off = (t[12] >> 4) as i64 * 4;
        let mut seqlen = ip.total_len() as i64 - ip.header_len() as i64 - off;
        for (bit, c, counts) in [
            (0x02, 'S', 1),
            (0x01, 'F', 1),
            (0x04, 'R', 0),
            (0x08, 'P', 0),
        ] {
            if flags & bit != 0 {
                s.push(c);
                seqlen += counts;
            }
        }
        if flags & 0x0f == 0 {
            s.push('.');
        }
        let seq = be32(t, 4);
        let _ = write!(
            s,
            " {}:{}({},{},{})",
            seq,
            seq.wrapping_add(seqlen as u32),
            seqlen,
            plen,
            ip.total_len()
        );
        if flags & 0x10 != 0 {
            let _ = write!(s, " ack {}", be32(t, 8));
        }
        if t.len() < 16 {
            s.push_str("truncated-tcp");
            return;
        }
        let _ = write!(s, " win {}", be16(t, 14));
    }

    /// The UDP part.
    fn udp(&self, s: &mut String, ip: &Ipv4Packet<&[u8]>, t: &[u8]) {
        let first = ip.frag_offset() == 0;
        if t.len() < 4 || !first {
            let what = if first { "truncated-udp" } else { "udp" };
            let _ = write!(s, "{} > {}: {}", ip.src(), ip.dst(), what);
            return;
        }
        let _ = write!(
            s,
            "{}.{} > {}.{}: ",
            ip.src(),
            be16(t, 0),
            ip.dst(),
            be16(t, 2)
        );
        if t.len() < 8 {
            s.push_str("truncated-udp");
        } else {
            let _ = write!(s, "udp {}", be16(t, 4));
        }
    }

    /// The ICMP part.
    fn icmp(&self, s: &mut String, ip: &Ipv4Packet<&[u8]>, t: &[u8]) {
        let _ = write!(s, "{} > {}: ", ip.src(), ip.dst());
        if ip.frag_offset() != 0 {
            s.push_str("icmp");
            return;
        }
        if t.len() < 2 {
            s.push_str("truncated-icmp");
            return;
        }
        let (ty, code) = (t[0], t[1]);
        match ty {
            0 | 8 => {
                s.push_str(if ty == 0 {
                    "icmp echo-reply "
                } else {
                    "icmp echo "
                });
                if t.len() < 8 {
                    s.push_str("truncated-icmp");
                    return;
                }
                let v = |at: usize| {
                    if self.swap {
                        be16(t, at)
                    } else {
                        u16::from_le_bytes([t[at], t[at + 1]])
                    }
                };
                let _ = write!(s, "({}, {})", v(4), v(6));
            }
            3 => {
                let name = icmp_code_name(ty, code)
                    .map_or_else(|| format!("code {}", code), str::to_string);
                let quoted = t.get(8..).unwrap_or(&[]);
                if quoted.len() < 20 {
                    let _ = write!(s, "icmp unreachable {} truncated-icmp", name);
                    return;
                }
                let q = Ipv4Packet::new_unchecked(quoted);
                let qt = quoted.get(q.header_len()..).unwrap_or(&[]);
                let _ = write!(s, "icmp {} unreachable {}", q.dst(), name);
                match code {
                    2 => match ip_proto_name(q.protocol()) {
                        Some(n) => {
                            let _ = write!(s, " {}", n);
                        }
                        None => {
                            let _ = write!(s, " {}", q.protocol());
                        }
                    },
                    3 => {
                        match ip_proto_name(q.protocol()) {
                            Some(n) => {
                                let _ = write!(s, " {}", n);
                            }
                            None => {
                                let _ = write!(s, " protocol {}", q.protocol());
                            }
                        }
                        if qt.len() < 4 {
                            s.push_str("truncated-icmp");
                        } else {
                            let _ = write!(s, "/{}", be16(qt, 2));
                        }
                    }
                    4 if t.len() >= 8 && be16(t, 6) != 0 => {
                        let _ = write!(s, " (mtu {})", be16(t, 6));
                    }
                    _ => {}
                }
            }
            _ => {
                s.push_str("icmp ");
                match icmp_type_name(ty) {
                    Some(n) => s.push_str(n),
                    None => {
                        let _ = write!(s, "type {}", ty);
                    }
                }
                match icmp_code_name(ty, code) {
                    Some(n) => {
                        let _ = write!(s, " {}", n);
                    }
                    None if code != 0 => {
                        let _ = write!(s, " code {}", code);
                    }
                    None => {}
                }
            }
        }
    }

    /// Formats the line for `p` (without the trailing newline).
    pub fn format(&self, p: &Packet) -> String {
        let mut s = String::new();
        if !self.label.is_empty() {
            let _ = write!(s, "{}: ", self.label);
        }
        if self.timestamp {
            let t = p.timestamp();
            let _ = write!(s, "{}.{:06}: ", t.sec(), t.subsec_nanos() / 1000);
        }
        if self.aggregate {
            let _ = write!(s, "#{}", p.anno().aggregate);
        }
        if self.paint {
            let sep = if self.aggregate { "." } else { "paint " };
            let _ = write!(s, "{}{}", sep, p.anno().paint);
        }
        if self.aggregate || self.paint {
            s.push_str(": ");
        }
        let off = ip_offset(p);
        let d = p.data();
        let net = &d[off.min(d.len())..];
        if net.len() < 20 {
            s.push_str("truncated-ip");
            return s;
        }
        // At least 20 bytes: the fixed header fields can be read; the header length and total
        // length are used only through the bounds-checked slices below.
        let ip = Ipv4Packet::new_unchecked(net);
        if self.ether {
            if let Some(m) = p.mac_header().filter(|m| m.len() >= 14) {
                let e = |b: &[u8]| {
                    b.iter()
                        .map(|x| format!("{:02x}", x))
                        .collect::<Vec<_>>()
                        .join(":")
                };
                let _ = write!(s, "{} > {}: ", e(&m[6..12]), e(&m[0..6]));
            }
        }
        if self.id {
            let _ = write!(s, "id {} ", ip.ident());
        }
        if self.ttl {
            let _ = write!(s, "ttl {} ", ip.ttl());
        }
        if self.tos {
            let _ = write!(s, "tos {} ", ip.tos());
        }
        if self.length {
            let _ = write!(s, "length {} ", ip.total_len());
        }
        let hl = ip.header_len();
        let payload_len = ip.total_len() as i64 - hl as i64;
        // The transport header, cut to the IP payload length (Click's transport_length).
        let transport = net.get(hl..).unwrap_or(&[]);
        let transport = &transport[..transport.len().min(payload_len.max(0) as usize)];
        match ip.protocol() {
            PROTO_TCP => self.tcp(&mut s, &ip, transport, d.len()),
            PROTO_UDP => self.udp(&mut s, &ip, transport),
            PROTO_ICMP => self.icmp(&mut s, &ip, transport),
            proto => {
                let _ = write!(s, "{} > {}: ip-proto-{}", ip.src(), ip.dst(), proto);
            }
        }
        if ip.is_fragment() {
            let _ = write!(
                s,
                " (frag {}:{}@{}{})",
                ip.ident(),
                payload_len,
                ip.frag_offset() as usize * 8,
                if ip.more_frags() { "+" } else { "" }
            );
        }
        if self.contents != Contents::None {
            let from = if !self.payload {
                0
            } else {
                let t = off + hl;
                let first = ip.frag_offset() == 0;
                match ip.protocol() {
                    PROTO_TCP if first => t + d.get(t + 12).map_or(0, |b| (b >> 4) as usize * 4),
                    PROTO_UDP if first => t + 8,
                    _ => t,
                }
            };
            let bytes = d.get(from..).unwrap_or(&[]);
            let n = if self.maxlength < 0 {
                bytes.len()
            } else {
                bytes.len().min(self.maxlength as usize)
            };
            let (line, group) = if self.contents == Contents::Hex {
                (24, 4)
            } else {
                (48, 8)
            };
            for (i, b) in bytes[..n].iter().enumerate() {
                if i % line == 0 {
                    s.push_str("\n  ");
                } else if i % group == 0 {
                    s.push(' ');
                }
                if self.contents == Contents::Hex {
                    let _ = write!(s, "{:02x}", b);
                } else if (32..=126).contains(b) {
                    s.push(*b as char);
                } else {
                    s.push('.');
                }
            }
        }
        s
    }
}

fn parse_contents(w: &str) -> Option<Contents> {
    match w.to_ascii_uppercase().as_str() {
        "NONE" | "FALSE" | "NO" | "0" => Some(Contents::None),
        "HEX" | "TRUE" | "YES" | "1" => Some(Contents::Hex),
        "ASCII" => Some(Contents::Ascii),
        _ => None,
    }
}

impl Element for IPPrint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p::<String>("LABEL")?.unwrap_or_default();
        let contents = args.read::<Word>("CONTENTS")?;
        let payload = args.read::<Word>("PAYLOAD")?;
        if let Some(Word(w)) = contents {
            match parse_contents(&w) {
                Some(c) => self.contents = c,
                None => {
                    args.error(format!(
                        "bad contents value '{}'; should be 'NONE', 'HEX', or 'ASCII'",
                        w
                    ));
                    return Err(());
                }
            }
        }
        if let Some(Word(w)) = payload {
            let c = match w.to_ascii_uppercase().as_str() {
                "NO" | "FALSE" => Contents::None,
                "YES" | "TRUE" | "HEX" => Contents::Hex,
                "ASCII" => Contents::Ascii,
                _ => {
                    args.error(format!(
                        "bad payload value '{}'; should be 'false', 'hex', or 'ascii'",
                        w
                    ));
                    return Err(());
                }
            };
            if c != Contents::None && self.contents != Contents::None {
                args.error("specify at most one of PAYLOAD and CONTENTS");
                return Err(());
            }
            if c != Contents::None {
                self.contents = c;
                self.payload = true;
            }
        }
        args.read_into("MAXLENGTH", &mut self.maxlength)?;
        args.read_into("NBYTES", &mut self.maxlength)?;
        args.read_into("TIMESTAMP", &mut self.timestamp)?;
        args.read_into("ID", &mut self.id)?;
        args.read_into("TTL", &mut self.ttl)?;
        args.read_into("TOS", &mut self.tos)?;
        args.read_into("LENGTH", &mut self.length)?;
        args.read_into("AGGREGATE", &mut self.aggregate)?;
        args.read_into("PAINT", &mut self.paint)?;
        args.read_into("SWAP", &mut self.swap)?;
        args.read_into("ETHER", &mut self.ether)?;
        args.read_into("ACTIVE", &mut self.active)
    }

    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if self.active {
            eprintln!("{}", self.format(&p));
        }
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("active", |e| &mut e.active)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPPrint",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("ip_print.rs"),
    make: || Box::new(IPPrint::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_line() {
        let pr = IPPrint {
            label: "x".into(),
            timestamp: false,
            ttl: true,
            ..Default::default()
        };
        let mut b = vec![
            0x45, 0, 0, 32, 0, 1, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 2,
        ];
        b.extend_from_slice(&[0x13, 0x69, 0x00, 0x35, 0, 12, 0, 0, 1, 2, 3, 4]);
        let p = Packet::from_bytes(&b);
        assert_eq!(
            pr.format(&p),
            "x: ttl 64 198.18.0.1.4969 > 198.19.0.2.53: udp 12"
        );
    }
}
