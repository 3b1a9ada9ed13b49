//! ICMP6Error — generates ICMPv6 error messages in response to bad IPv6 packets
//!
//! Synopsis: `ICMP6Error(SRC, TYPE [, CODE], [keywords MTU, SET_FIX_ANNO])`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Each input packet is an IPv6 packet that provoked an error (network header annotation
//! set, or the IPv6 header at the start). ICMP6Error consumes it and emits, on output 0, a new
//! IPv6 packet from SRC to the original source holding an ICMPv6 message (RFC 4443) of TYPE
//! and CODE that quotes as much of the original packet, from its IPv6 header on, as fits in
//! an error of 1280 bytes, the IPv6 minimum MTU (RFC 4443 §2.4(c)). The error has traffic
//! class and flow label 0 and hop limit 255; its checksum covers the IPv6 pseudo-header; its
//! timestamp annotation is the current time, its destination IPv6 annotation the original
//! source (ready for a route lookup), and — unless SET_FIX_ANNO is false — its fix-IP-source
//! annotation is set, as Click does.
//!
//! Type-specific fields: Packet Too Big (2) carries MTU, the MTU of the link the packet could
//! not be sent on. Parameter Problem (4) carries the pointer from the packet's `param_off`
//! annotation (Click sets it for code 0 only; ICMP6Error for every code, as RFC 4443 §3.4
//! has the pointer in all three). Redirect (137, RFC 4861 §4.5) carries the target from the
//! packet's destination IPv6 annotation (the next hop a route lookup chose; the original
//! destination when it is `::`), the original destination, and the quoted packet in a
//! Redirected Header option padded to 8 bytes.
//!
//! No error is sent (RFC 4443 §2.4(e)), and the packet goes to output 1 if connected or is
//! dropped, counted per reason in `drops` / `drop_details` either way, when: the packet has
//! no IPv6 header; it is itself an ICMPv6 error or redirect, or too short to tell (the
//! extension headers before it are skipped); its source does not identify one node (`::`,
//! `::1`, multicast); or its destination is multicast, or it arrived as a link-level
//! broadcast or multicast — except for Packet Too Big, and for Parameter Problem code 2
//! pointing at an unrecognized option whose type's two high bits are 10.
//!
//! ICMP6Error does not limit its rate (RFC 4443 §2.4(f)): put a RatedSplitter after it.
//!
//! Arguments:
//! - `SRC`: the source address of errors (an AddressInfo name is fine).
//! - `TYPE`: number or name: `unreachable` (also `destunreachable`, `unreach`), `toobig`
//!   (also `packettoobig`, `pkttoobig`), `timeexceeded` (also `hoplimit`, `timxceed`),
//!   `parameterproblem` (also `paramprob`), `redirect`; case, dashes and underscores are
//!   ignored. Click accepts numbers only. Other types are refused, as in Click.
//! - `CODE`: number or name (default 0): unreachable `noroute`, `adminprohibited`,
//!   `beyondscope`, `address` (also `host`), `port`, `sourcepolicy`, `rejectroute`;
//!   timeexceeded `transit` (also `hoplimit`), `reassembly`; parameterproblem `header`,
//!   `nextheader`, `option`. Click requires CODE.
//! - `MTU` (unsigned, default 1500; `PMTU` is a synonym, after ICMPError's keyword): the MTU
//!   reported in Packet Too Big errors.
//! - `SET_FIX_ANNO` (bool, default true).
//!
//! Handlers: `src`, `mtu` (r/w); `sent` (r), `drops` (r), `drop_details` (r).
//!
//! Example: `dec :: DecIP6HLIM; dec[1] -> ICMP6Error(2001:db8::1, timeexceeded, transit) ->
//! rt;` and, on a link of MTU 1500, `... -> ICMP6Error(2001:db8::1, toobig, MTU 1500) -> rt;`

use std::net::Ipv6Addr;

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, PacketType, Table};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::icmpv6::*;
use sluice_wire::ipv6::{self, NH_AH, NH_DSTOPTS, NH_FRAGMENT, NH_HOPOPTS, NH_ICMPV6, NH_ROUTING};
use sluice_wire::Ipv6Packet;

use crate::ip::common::ip_offset;

/// The largest error generated: the IPv6 minimum MTU.
const MIN_MTU: usize = 1280;

/// Parameter Problem code 2: unrecognized IPv6 option.
const PARAMPROB_OPTION: u8 = 2;

drop_reasons! {
    /// Why no error is sent for a packet.
    enum Reason {
        BadHeader => "bad IPv6 header",
        IcmpError => "ICMPv6 error",
        BadSource => "bad source address",
        BadDestination => "multicast destination",
    }
}

/// Parses an ICMPv6 type name or number.
fn parse_type(s: &str) -> Option<u8> {
    Some(match squash(s).as_str() {
        "unreachable" | "destunreachable" | "unreach" => TYPE_DST_UNREACH,
        "toobig" | "packettoobig" | "pkttoobig" => TYPE_PACKET_TOO_BIG,
        "timeexceeded" | "hoplimit" | "timxceed" => TYPE_TIME_EXCEEDED,
        "parameterproblem" | "paramprob" => TYPE_PARAM_PROBLEM,
        "redirect" => TYPE_REDIRECT,
        _ => return u8::from_arg(s).ok(),
    })
}

/// Parses a code name (for type `ty`) or number.
fn parse_code(ty: u8, s: &str) -> Option<u8> {
    let named = match (ty, squash(s).as_str()) {
        (TYPE_DST_UNREACH, "noroute") => Some(0),
        (TYPE_DST_UNREACH, "adminprohibited") => Some(1),
        (TYPE_DST_UNREACH, "beyondscope") => Some(2),
        (TYPE_DST_UNREACH, "address" | "host") => Some(3),
        (TYPE_DST_UNREACH, "port") => Some(4),
        (TYPE_DST_UNREACH, "sourcepolicy") => Some(5),
        (TYPE_DST_UNREACH, "rejectroute") => Some(6),
        (TYPE_TIME_EXCEEDED, "transit" | "hoplimit") => Some(0),
        (TYPE_TIME_EXCEEDED, "reassembly") => Some(1),
        (TYPE_PARAM_PROBLEM, "header") => Some(0),
        (TYPE_PARAM_PROBLEM, "nextheader") => Some(1),
        (TYPE_PARAM_PROBLEM, "option") => Some(PARAMPROB_OPTION),
        _ => None,
    };
    named.or_else(|| u8::from_arg(s).ok())
}

/// Lower case without dashes and underscores.
fn squash(s: &str) -> String {
    s.trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect()
}

/// The upper-layer header of IPv6 packet `b` (header checked) and its offset, after the
/// extension headers; `None` when they run past the data. A non-first fragment has no
/// upper-layer header: it is reported as [`ipv6::NH_NONE`].
fn upper_layer(b: &[u8]) -> Option<(u8, usize)> {
    let mut nh = b[6];
    let mut at = ipv6::HEADER_LEN;
    loop {
        let len = match nh {
            NH_HOPOPTS | NH_ROUTING | NH_DSTOPTS => (*b.get(at + 1)? as usize + 1) * 8,
            NH_AH => (*b.get(at + 1)? as usize + 2) * 4,
            NH_FRAGMENT => {
                let off = u16::from_be_bytes([*b.get(at + 2)?, *b.get(at + 3)?]) & 0xfff8;
                if off != 0 {
                    return Some((ipv6::NH_NONE, at));
                }
                8
            }
            _ => return Some((nh, at)),
        };
        nh = *b.get(at)?;
        at += len;
        if at > b.len() {
            return None;
        }
    }
}

/// The ICMP6Error element.
pub struct ICMP6Error {
    src: Ipv6Addr,
    ty: u8,
    code: u8,
    mtu: u32,
    set_fix: bool,
    sent: u64,
    /// Packets refused, whether sent to output 1 or dropped (the `drops` handler).
    refused: Drops<Reason>,
    /// Packets refused and dropped (output 1 not connected).
    dropped: Drops<Reason>,
}

impl Default for ICMP6Error {
    fn default() -> Self {
        ICMP6Error {
            src: Ipv6Addr::UNSPECIFIED,
            ty: 0,
            code: 0,
            mtu: 1500,
            set_fix: true,
            sent: 0,
            refused: Drops::default(),
            dropped: Drops::default(),
        }
    }
}

impl ICMP6Error {
    /// True if this error may answer a packet sent to a multicast destination (RFC 4443
    /// §2.4(e.3)): Packet Too Big, or a Parameter Problem about an option that asks for it.
    fn multicast_ok(&self, p: &Packet, b: &[u8]) -> bool {
        match self.ty {
            TYPE_PACKET_TOO_BIG => true,
            TYPE_PARAM_PROBLEM if self.code == PARAMPROB_OPTION => b
                .get(p.anno().param_off as usize)
                .is_some_and(|t| t >> 6 == 0b10),
            _ => false,
        }
    }

    /// Why no error may be sent for IPv6 packet `b`, if so.
    fn refuse(&self, p: &Packet, b: &[u8]) -> Option<Reason> {
        let Ok(ip) = Ipv6Packet::new_checked_truncated(b) else {
            return Some(Reason::BadHeader);
        };
        match upper_layer(b) {
            Some((NH_ICMPV6, at)) => match Icmpv6Packet::new_checked(&b[at..]) {
                Ok(m) if !m.is_error() && m.msg_type() != TYPE_REDIRECT => {}
                // An unreadable ICMPv6 header counts as an error message: never answer it.
                _ => return Some(Reason::IcmpError),
            },
            Some(_) => {}
            None => return Some(Reason::IcmpError),
        }
        let src = ip.src();
        if src.is_unspecified() || src.is_loopback() || src.is_multicast() {
            return Some(Reason::BadSource);
        }
        let group = ip.dst().is_multicast()
            || matches!(
                p.anno().packet_type,
                PacketType::Broadcast | PacketType::Multicast
            );
        if group && !self.multicast_ok(p, b) {
            return Some(Reason::BadDestination);
        }
        None
    }

    /// The error for IPv6 packet `b` (already accepted by [`ICMP6Error::refuse`]).
    fn make(&self, p: &Packet, b: &[u8]) -> Packet {
        let ip = Ipv6Packet::new_unchecked(b);
        let (orig_src, orig_dst) = (ip.src(), ip.dst());
        // The packet without link-level padding (a zero length may be a jumbogram).
        let plen = ip.payload_len() as usize;
        let whole = if plen == 0 {
            b.len()
        } else {
            b.len().min(ipv6::HEADER_LEN + plen)
        };
        let redirect = self.ty == TYPE_REDIRECT;
        // ICMPv6 header, then for a redirect target, destination and the option's header.
        let head = ipv6::HEADER_LEN + HEADER_LEN + if redirect { 32 + 8 } else { 0 };
        let quote = whole.min(MIN_MTU - head);
        let body = if redirect {
            quote.next_multiple_of(8)
        } else {
            quote
        };
        let mut q = Packet::new(head + body);
        {
            let d = q.data_mut();
            d.fill(0);
            d[head..head + quote].copy_from_slice(&b[..quote]);
            let mut m = Icmpv6Packet::new_unchecked(&mut d[ipv6::HEADER_LEN..]);
            m.set_msg_type(self.ty);
            m.set_code(self.code);
            match self.ty {
                TYPE_PACKET_TOO_BIG => m.set_rest_of_header(self.mtu),
                TYPE_PARAM_PROBLEM => m.set_rest_of_header(p.anno().param_off.into()),
                _ => {}
            }
            if redirect {
                let nh = p.dst_ip6_anno();
                let target = if nh.is_unspecified() { orig_dst } else { nh };
                let r = &mut d[ipv6::HEADER_LEN + HEADER_LEN..];
                r[..16].copy_from_slice(&target.octets());
                r[16..32].copy_from_slice(&orig_dst.octets());
                r[32] = NDP_OPT_REDIRECTED;
                r[33] = ((8 + body) / 8) as u8;
            }
            // The packet is at least 48 bytes and at most 1280: this cannot fail.
            let _ = emit_ipv6_icmp(d, &self.src, &orig_src, 255);
        }
        q.set_dst_ip6_anno(orig_src);
        q.anno_mut().fix_ip_src = self.set_fix;
        q.set_network_offset(0);
        q.set_transport_offset(ipv6::HEADER_LEN as isize);
        q
    }

    fn action(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        let b = &p.data()[ip_offset(&p)..];
        if let Some(r) = self.refuse(&p, b) {
            self.refused.count(r);
            if cx.noutputs() < 2 {
                self.dropped.count(r);
                return Verdict::Gone;
            }
            return Verdict::Out(1, p);
        }
        let mut q = self.make(&p, b);
        q.set_timestamp(cx.now());
        self.sent += 1;
        Verdict::Out(0, q)
    }
}

impl Element for ICMP6Error {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<Ipv6Addr>("SRC")?;
        let t: String = args.read_mp("TYPE")?;
        let Some(ty) = parse_type(&t) else {
            args.error("TYPE: expected ICMPv6 type");
            return Err(());
        };
        if !(TYPE_DST_UNREACH..=TYPE_PARAM_PROBLEM).contains(&ty) && ty != TYPE_REDIRECT {
            args.error(format!("ICMP6 type {ty} is not an error or redirect type"));
            return Err(());
        }
        self.ty = ty;
        if let Some(c) = args.read_p::<String>("CODE")? {
            let Some(code) = parse_code(ty, &c) else {
                args.error("CODE: expected ICMPv6 code");
                return Err(());
            };
            self.code = code;
        }
        args.read_into("PMTU", &mut self.mtu)?;
        args.read_into("MTU", &mut self.mtu)?;
        args.read_into("SET_FIX_ANNO", &mut self.set_fix)
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, cx| self.action(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.action(p, cx))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("src", |e| &mut e.src)
            .data("mtu", |e| &mut e.mtu)
            .read("sent", |e| e.sent)
            .read("drops", |e| e.refused.total())
            .read("drop_details", |e| e.refused.details())
            .drops(|e| &e.dropped)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMP6Error",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("icmp6_error.rs"),
    make: || Box::<ICMP6Error>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_type("Packet-Too-Big"), Some(2));
        assert_eq!(parse_type("hoplimit"), Some(3));
        assert_eq!(parse_type("param_prob"), Some(4));
        assert_eq!(parse_type("137"), Some(137));
        assert_eq!(parse_type("bogus"), None);
        assert_eq!(parse_code(1, "port"), Some(4));
        assert_eq!(parse_code(3, "reassembly"), Some(1));
        assert_eq!(parse_code(4, "option"), Some(2));
        assert_eq!(parse_code(3, "port"), None);
        assert_eq!(parse_code(3, "7"), Some(7));
    }

    #[test]
    fn extension_headers_are_skipped() {
        let mut b = vec![0u8; 40];
        b[0] = 0x60;
        b[6] = NH_HOPOPTS;
        // Hop-by-hop (8 bytes) → fragment (first) → ICMPv6.
        b.extend_from_slice(&[NH_FRAGMENT, 0, 1, 4, 0, 0, 0, 0]);
        b.extend_from_slice(&[NH_ICMPV6, 0, 0, 1, 0, 0, 0, 9]);
        assert_eq!(upper_layer(&b), Some((NH_ICMPV6, 56)));
        // A non-first fragment has no upper-layer header.
        b[50] = 0x01;
        assert_eq!(upper_layer(&b), Some((ipv6::NH_NONE, 48)));
        // Truncated extension headers.
        assert_eq!(upper_layer(&b[..41]), None);
        assert_eq!(
            upper_layer(&b[..47]),
            None,
            "extension header past the data"
        );
    }
}
