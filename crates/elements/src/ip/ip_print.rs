//! IPPrint — pretty-prints IP packets
//!
//! Synopsis: `IPPrint([LABEL, keywords CONTENTS, PAYLOAD, MAXLENGTH, TIMESTAMP, ID, TTL, TOS,
//! LENGTH, ETHER, ACTIVE])`
//!
//! Ports: 1 input, 1 output, agnostic. Packets pass unchanged. Expects IP packets (network
//! header annotation set, or the IP header at the start). For each packet prints one line to
//! standard error in a tcpdump-like format, as Click does:
//!
//! `LABEL: TIMESTAMP: [ETHSRC > ETHDST: ][tos T ][ttl T ][id I ][length L ]SRC > DST: PROTO…`
//!
//! where the protocol part is `SRC.SPORT > DST.DPORT: FLAGS SEQ:END(LEN) ack A win W` for
//! TCP, `SRC.SPORT > DST.DPORT: udp LEN` for UDP, `icmp: echo request (id, seq)` and similar
//! for ICMP, and `ip-proto-N LEN` otherwise; fragments add `(frag ID:LEN@OFF[+])`. The label
//! and its colon are left out when LABEL is empty; the timestamp is `SEC.USEC`. Non-IP or
//! truncated packets print `LABEL: TIMESTAMP: truncated-ip`.
//!
//! Arguments:
//! - `LABEL` (string, default empty).
//! - `CONTENTS` (`NONE`, `HEX` or `ASCII`, default NONE): also print the packet's bytes;
//!   `PAYLOAD` is the same for the transport payload only. `MAXLENGTH` (default 1500, -1 for
//!   all) limits how many bytes.
//! - `TIMESTAMP` (bool, default true), `ID`, `TTL`, `TOS`, `LENGTH`, `ETHER` (bool, default
//!   false): print those fields. `ACTIVE` (bool, default true).
//!
//! Handlers: `active` (rw).
//!
//! Example: `CheckIPHeader -> IPPrint(in, TTL true) -> ...`

use std::fmt::Write;

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::{Args, Word};
use sluice_wire::ipv4::{PROTO_ICMP, PROTO_TCP, PROTO_UDP};
use sluice_wire::{IcmpPacket, Ipv4Packet, TcpPacket, UdpPacket};

use super::common::{ip_offset, parse_bool};

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Contents {
    #[default]
    None,
    Hex,
    Ascii,
}

/// The IPPrint element.
#[derive(Default)]
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
    ether: bool,
    active: bool,
}

fn icmp_desc(ty: u8, code: u8, icmp: &IcmpPacket<&[u8]>) -> String {
    use sluice_wire::icmp::*;
    match ty {
        TYPE_ECHO => format!("echo request ({}, {})", icmp.ident(), icmp.seq()),
        TYPE_ECHO_REPLY => format!("echo reply ({}, {})", icmp.ident(), icmp.seq()),
        TYPE_UNREACH => {
            let c = match code {
                UNREACH_NET => "net",
                UNREACH_HOST => "host",
                UNREACH_PROTOCOL => "protocol",
                UNREACH_PORT => "port",
                UNREACH_NEEDFRAG => "needfrag",
                _ => "",
            };
            if code == UNREACH_NEEDFRAG {
                format!("unreachable needfrag (mtu {})", icmp.next_hop_mtu())
            } else if c.is_empty() {
                format!("unreachable code {}", code)
            } else {
                format!("unreachable {}", c)
            }
        }
        TYPE_REDIRECT => format!("redirect code {} to {}", code, icmp.gateway()),
        TYPE_TIME_EXCEEDED => format!(
            "time exceeded {}",
            if code == 0 { "transit" } else { "reassembly" }
        ),
        TYPE_PARAM_PROBLEM => format!("parameter problem (pointer {})", icmp.pointer()),
        TYPE_SOURCE_QUENCH => "source quench".into(),
        _ => format!("type {} code {}", ty, code),
    }
}

impl IPPrint {
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
        let off = ip_offset(p);
        let d = p.data();
        let Ok(ip) = Ipv4Packet::new_checked_truncated(&d[off..]) else {
            s.push_str("truncated-ip");
            return s;
        };
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
        if self.tos {
            let _ = write!(s, "tos {} ", ip.tos());
        }
        if self.ttl {
            let _ = write!(s, "ttl {} ", ip.ttl());
        }
        if self.id {
            let _ = write!(s, "id {} ", ip.ident());
        }
        if self.length {
            let _ = write!(s, "length {} ", ip.total_len());
        }
        let (src, dst) = (ip.src(), ip.dst());
        let payload = ip.payload();
        let first = ip.frag_offset() == 0;
        let plen = (ip.total_len() as usize).saturating_sub(ip.header_len());
        let mut transport_payload: &[u8] = payload;
        match ip.protocol() {
            PROTO_TCP if first => match TcpPacket::new_checked(payload) {
                Ok(t) => {
                    let mut flags = String::new();
                    for (bit, c) in [
                        (0x02, 'S'),
                        (0x01, 'F'),
                        (0x04, 'R'),
                        (0x08, 'P'),
                        (0x20, 'U'),
                    ] {
                        if t.flags() & bit != 0 {
                            flags.push(c);
                        }
                    }
                    if flags.is_empty() {
                        flags.push('.');
                    }
                    let dl = plen.saturating_sub(t.header_len()) as u32;
                    let _ = write!(
                        s,
                        "{}.{} > {}.{}: {} {}:{}({})",
                        src,
                        t.src_port(),
                        dst,
                        t.dst_port(),
                        flags,
                        t.seq(),
                        t.seq().wrapping_add(dl),
                        dl
                    );
                    if t.ack_flag() {
                        let _ = write!(s, " ack {}", t.ack());
                    }
                    let _ = write!(s, " win {}", t.window());
                    transport_payload = payload.get(t.header_len()..).unwrap_or(&[]);
                }
                Err(_) => {
                    let _ = write!(s, "{} > {}: truncated-tcp {}", src, dst, plen);
                }
            },
            PROTO_UDP if first => match UdpPacket::new_checked(payload) {
                Ok(u) => {
                    let _ = write!(
                        s,
                        "{}.{} > {}.{}: udp {}",
                        src,
                        u.src_port(),
                        dst,
                        u.dst_port(),
                        plen.saturating_sub(8)
                    );
                    transport_payload = payload.get(8..).unwrap_or(&[]);
                }
                Err(_) => {
                    let _ = write!(s, "{} > {}: truncated-udp {}", src, dst, plen);
                }
            },
            PROTO_ICMP if first => match IcmpPacket::new_checked(payload) {
                Ok(i) => {
                    let _ = write!(
                        s,
                        "{} > {}: icmp: {}",
                        src,
                        dst,
                        icmp_desc(i.msg_type(), i.code(), &i)
                    );
                    transport_payload = payload.get(8..).unwrap_or(&[]);
                }
                Err(_) => {
                    let _ = write!(s, "{} > {}: truncated-icmp {}", src, dst, plen);
                }
            },
            proto => {
                let _ = write!(s, "{} > {}: ip-proto-{} {}", src, dst, proto, plen);
            }
        }
        if ip.is_fragment() {
            let _ = write!(
                s,
                " (frag {}:{}@{}{})",
                ip.ident(),
                plen,
                ip.frag_offset() as usize * 8,
                if ip.more_frags() { "+" } else { "" }
            );
        }
        if self.contents != Contents::None {
            let bytes = if self.payload {
                transport_payload
            } else {
                &d[off..]
            };
            let n = if self.maxlength < 0 {
                bytes.len()
            } else {
                bytes.len().min(self.maxlength as usize)
            };
            s.push_str("\n  ");
            for (i, b) in bytes[..n].iter().enumerate() {
                if self.contents == Contents::Hex {
                    let _ = write!(s, "{:02x}", b);
                    if i % 4 == 3 {
                        s.push(' ');
                    }
                } else {
                    s.push(if b.is_ascii_graphic() || *b == b' ' {
                        *b as char
                    } else {
                        '.'
                    });
                }
            }
        }
        s
    }
}

fn parse_contents(w: &str) -> Option<Contents> {
    match w.to_ascii_uppercase().as_str() {
        "NONE" | "FALSE" => Some(Contents::None),
        "HEX" | "TRUE" => Some(Contents::Hex),
        "ASCII" => Some(Contents::Ascii),
        _ => None,
    }
}

impl Element for IPPrint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.label = args.read_p::<String>("LABEL")?.unwrap_or_default();
        for (key, payload) in [("CONTENTS", false), ("PAYLOAD", true)] {
            if let Some(Word(w)) = args.read::<Word>(key)? {
                match parse_contents(&w) {
                    Some(c) => {
                        self.contents = c;
                        self.payload = payload;
                    }
                    None => {
                        args.error(format!("{}: expected NONE, HEX or ASCII", key));
                        return Err(());
                    }
                }
            }
        }
        self.maxlength = args.read::<i64>("MAXLENGTH")?.unwrap_or(1500);
        self.timestamp = args.read::<bool>("TIMESTAMP")?.unwrap_or(true);
        self.id = args.read::<bool>("ID")?.unwrap_or(false);
        self.ttl = args.read::<bool>("TTL")?.unwrap_or(false);
        self.tos = args.read::<bool>("TOS")?.unwrap_or(false);
        self.length = args.read::<bool>("LENGTH")?.unwrap_or(false);
        self.ether = args.read::<bool>("ETHER")?.unwrap_or(false);
        self.active = args.read::<bool>("ACTIVE")?.unwrap_or(true);
        let _ = args.read::<String>("AGGREGATE")?;
        Ok(())
    }

    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        if self.active {
            eprintln!("{}", self.format(&p));
        }
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("active")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "active").then(|| self.active.to_string())
    }

    fn write_handler(&mut self, name: &str, v: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "active" => {
                self.active = parse_bool(v)?;
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
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
            "x: ttl 64 198.18.0.1.4969 > 198.19.0.2.53: udp 4"
        );
    }
}
