//! ICMPError — generates ICMP error messages in response to bad packets
//!
//! Synopsis: `ICMPError(SRC, TYPE [, CODE], [keywords BADADDRS, MTU, SET_FIX_ANNO])`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Each input packet is an IP packet that provoked an error (network header annotation set, or
//! the IP header at the start). ICMPError consumes it and emits, on output 0, a new IP packet
//! from SRC to the original source holding an ICMP message of TYPE and CODE that quotes the
//! original IP header (with options) and the first 8 bytes of its data (RFC 792, RFC 1812
//! §4.3.2.3). TTL is 255, TOS is copied from the original, the checksums are filled in, the
//! destination IP annotation is the original source (ready for a route lookup) and — unless
//! SET_FIX_ANNO is false — the fix-IP-source annotation is set, so a FixIPSrc on the way out
//! replaces SRC with the address of the outgoing interface.
//!
//! Type-specific fields: Redirect carries the gateway from the packet's destination IP
//! annotation (the next hop the route lookup chose); Unreachable/needfrag carries the next-hop
//! MTU from the MTU argument, else the packet's MTU annotation (set by IPFragmenter), else 576;
//! Parameter Problem (code 0) carries the pointer from the packet's `param_off` annotation
//! (set by IPGWOptions).
//!
//! No error is sent (RFC 1812 §4.3.2.7), and the packet goes to output 1 if connected or is
//! dropped, counted per reason in `drops` / `drop_details`, when: the packet has no valid IP
//! header; the source is not a unicast address (0.0.0.0, 255.255.255.255, multicast, class E,
//! or in BADADDRS); the destination is 255.255.255.255, multicast or in BADADDRS, or the packet
//! arrived as a link-level broadcast/multicast; it is a non-first fragment; it is itself an
//! ICMP error message; or a Redirect is asked for a source-routed packet (LSRR/SSRR option).
//!
//! Arguments:
//! - `SRC`: the source address of errors (an AddressInfo name is fine).
//! - `TYPE`: number or name: `unreachable`, `sourcequench`, `redirect`, `timeexceeded`,
//!   `parameterproblem` (also `echo`, `echo-reply`, ...; dashes and underscores are ignored).
//! - `CODE`: number or name (default 0): unreachable `net`, `host`, `protocol`, `port`,
//!   `needfrag`, `srcroutefail`, `net-unknown`, `host-unknown`, `isolated`, `net-prohibited`,
//!   `host-prohibited`, `tosnet`, `toshost`, `admin-prohibited`, ...; redirect `net`, `host`,
//!   `tosnet`, `toshost`; timeexceeded `transit`, `reassembly`; parameterproblem `erroratptr`,
//!   `missingopt`, `length`.
//! - `BADADDRS` (space-separated addresses): broadcast addresses of the router's networks.
//! - `MTU` (unsigned): next-hop MTU for needfrag.
//! - `SET_FIX_ANNO` (bool, default true).
//!
//! Handlers: `sent` (r), `drops` (r), `drop_details` (r).
//!
//! Example: `dt[1] -> ICMPError(198.18.0.1, timeexceeded) -> rt;`

use std::net::Ipv4Addr;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, Packet, PacketType};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::icmp::*;
use sluice_wire::ipv4::{OPT_LSRR, OPT_SSRR, PROTO_ICMP};
use sluice_wire::{IcmpPacket, Ipv4OptionKind, Ipv4Packet};

use crate::ip::common::{
    details, ip_offset, is_martian_src, pull_sorted, push_sorted, IpArg, IpList, Verdict,
};

const REASONS: [&str; 6] = [
    "bad IP header",
    "bad source address",
    "broadcast or multicast destination",
    "non-first fragment",
    "ICMP error",
    "source-routed redirect",
];

/// Parses an ICMP type name or number.
pub fn parse_type(s: &str) -> Option<u8> {
    let t: String = s
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect();
    Some(match t.as_str() {
        "echoreply" => TYPE_ECHO_REPLY,
        "unreachable" | "destunreachable" | "unreach" => TYPE_UNREACH,
        "sourcequench" => TYPE_SOURCE_QUENCH,
        "redirect" => TYPE_REDIRECT,
        "echo" | "echorequest" => TYPE_ECHO,
        "routeradvert" => TYPE_ROUTER_ADVERT,
        "routersolicit" => TYPE_ROUTER_SOLICIT,
        "timeexceeded" | "timxceed" => TYPE_TIME_EXCEEDED,
        "parameterproblem" | "paramprob" => TYPE_PARAM_PROBLEM,
        "timestamp" => TYPE_TIMESTAMP,
        "timestampreply" => TYPE_TIMESTAMP_REPLY,
        "inforequest" => TYPE_INFO_REQUEST,
        "inforeply" => TYPE_INFO_REPLY,
        "maskrequest" => TYPE_MASK_REQUEST,
        "maskreply" => TYPE_MASK_REPLY,
        _ => return u8::from_arg(s).ok(),
    })
}

/// Parses a code name (for `ty`) or number.
pub fn parse_code(ty: u8, s: &str) -> Option<u8> {
    let t: String = s
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .collect();
    let named = match (ty, t.as_str()) {
        (TYPE_UNREACH, "net") => Some(UNREACH_NET),
        (TYPE_UNREACH, "host") => Some(UNREACH_HOST),
        (TYPE_UNREACH, "protocol") => Some(UNREACH_PROTOCOL),
        (TYPE_UNREACH, "port") => Some(UNREACH_PORT),
        (TYPE_UNREACH, "needfrag") => Some(UNREACH_NEEDFRAG),
        (TYPE_UNREACH, "srcroutefail") => Some(UNREACH_SRCFAIL),
        (TYPE_UNREACH, "netunknown") => Some(UNREACH_NET_UNKNOWN),
        (TYPE_UNREACH, "hostunknown") => Some(UNREACH_HOST_UNKNOWN),
        (TYPE_UNREACH, "isolated") => Some(UNREACH_ISOLATED),
        (TYPE_UNREACH, "netprohibited") => Some(UNREACH_NET_PROHIB),
        (TYPE_UNREACH, "hostprohibited") => Some(UNREACH_HOST_PROHIB),
        (TYPE_UNREACH, "tosnet") => Some(UNREACH_TOSNET),
        (TYPE_UNREACH, "toshost") => Some(UNREACH_TOSHOST),
        (TYPE_UNREACH, "filterprohibited") | (TYPE_UNREACH, "adminprohibited") => {
            Some(UNREACH_FILTER_PROHIB)
        }
        (TYPE_UNREACH, "hostprecedence") => Some(UNREACH_HOST_PRECEDENCE),
        (TYPE_UNREACH, "precedencecutoff") => Some(UNREACH_PRECEDENCE_CUTOFF),
        (TYPE_REDIRECT, "net") => Some(REDIRECT_NET),
        (TYPE_REDIRECT, "host") => Some(REDIRECT_HOST),
        (TYPE_REDIRECT, "tosnet") => Some(REDIRECT_TOSNET),
        (TYPE_REDIRECT, "toshost") => Some(REDIRECT_TOSHOST),
        (TYPE_TIME_EXCEEDED, "transit") => Some(TIMXCEED_TRANSIT),
        (TYPE_TIME_EXCEEDED, "reassembly") => Some(TIMXCEED_REASSEMBLY),
        (TYPE_PARAM_PROBLEM, "erroratptr") => Some(PARAMPROB_ERRATPTR),
        (TYPE_PARAM_PROBLEM, "missingopt") => Some(PARAMPROB_OPTABSENT),
        (TYPE_PARAM_PROBLEM, "length") => Some(PARAMPROB_LENGTH),
        _ => None,
    };
    named.or_else(|| u8::from_arg(s).ok())
}

/// Reads the `TYPE` (mandatory) and `CODE` (optional, default 0) arguments, each a number or
/// a name ([`parse_type`], [`parse_code`]).
pub(crate) fn read_type_code(args: &mut Args) -> Result<(u8, u8), ()> {
    let t: String = args.read_mp("TYPE")?;
    let Some(ty) = parse_type(&t) else {
        args.error("TYPE: expected ICMP type");
        return Err(());
    };
    let code = match args.read_p::<String>("CODE")? {
        Some(c) => parse_code(ty, &c).ok_or_else(|| args.error("CODE: expected ICMP code"))?,
        None => 0,
    };
    Ok((ty, code))
}

/// The ICMPError element.
pub struct ICMPError {
    src: Ipv4Addr,
    ty: u8,
    code: u8,
    bad: Vec<Ipv4Addr>,
    mtu: Option<u16>,
    set_fix: bool,
    id: u16,
    sent: u64,
    drops: [u64; 6],
}

impl ICMPError {
    /// Why no error may be sent for `ip`, if so.
    fn refuse(&self, p: &Packet, b: &[u8]) -> Option<usize> {
        let ip = match Ipv4Packet::new_checked_truncated(b) {
            Ok(ip) => ip,
            Err(_) => return Some(0),
        };
        let (src, dst) = (ip.src(), ip.dst());
        if src.is_unspecified() || is_martian_src(src) || self.bad.contains(&src) {
            return Some(1);
        }
        if dst.is_broadcast()
            || dst.is_multicast()
            || self.bad.contains(&dst)
            || matches!(
                p.anno().packet_type,
                PacketType::Broadcast | PacketType::Multicast
            )
        {
            return Some(2);
        }
        if ip.frag_offset() != 0 {
            return Some(3);
        }
        if ip.protocol() == PROTO_ICMP {
            // An unreadable ICMP header counts as an error message: never answer it.
            match IcmpPacket::new_checked(ip.payload()) {
                Ok(icmp) if !icmp.is_error() => {}
                _ => return Some(4),
            }
        }
        if self.ty == TYPE_REDIRECT {
            let sr = ip.option_iter().any(|o| {
                matches!(
                    o,
                    Ok(o) if matches!(o.kind, Ipv4OptionKind::LooseSourceRoute(_) | Ipv4OptionKind::StrictSourceRoute(_))
                        || matches!(o.kind, Ipv4OptionKind::Unknown { kind, .. } if kind == OPT_LSRR || kind == OPT_SSRR)
                )
            });
            if sr {
                return Some(5);
            }
        }
        None
    }

    fn action(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        let off = ip_offset(&p);
        let b = &p.data()[off..];
        if let Some(r) = self.refuse(&p, b) {
            self.drops[r] += 1;
            return Verdict::Out(1, p);
        }
        let _ = cx;
        let ip = Ipv4Packet::new_unchecked(b);
        let hl = ip.header_len();
        let avail = (ip.total_len() as usize).min(b.len());
        let quote = (hl + 8).min(avail);
        let len = 20 + 8 + quote;
        let mut q = Packet::new(len);
        q.anno_mut().timestamp = p.anno().timestamp;
        self.id = self.id.wrapping_add(1);
        let orig_src = ip.src();
        {
            let d = q.data_mut();
            d[28..].copy_from_slice(&b[..quote]);
            let mut h = Ipv4Packet::new_unchecked(&mut d[..20]);
            h.set_version(4);
            h.set_header_len(20);
            h.set_tos(ip.tos());
            h.set_total_len(len as u16);
            h.set_ident(self.id);
            h.set_flags_frag(0);
            h.set_ttl(255);
            h.set_protocol(PROTO_ICMP);
            h.set_src(self.src);
            h.set_dst(orig_src);
            h.fill_checksum();
            let mut icmp = IcmpPacket::new_unchecked(&mut d[20..]);
            icmp.set_msg_type(self.ty);
            icmp.set_code(self.code);
            icmp.set_rest_of_header(0);
            match self.ty {
                TYPE_REDIRECT => icmp.set_gateway(p.dst_ip_anno()),
                TYPE_UNREACH if self.code == UNREACH_NEEDFRAG => {
                    let anno = crate::ip::ip_fragmenter_mtu_anno(&p);
                    let mtu = self.mtu.unwrap_or(if anno != 0 { anno } else { 576 });
                    icmp.set_next_hop_mtu(mtu);
                }
                TYPE_PARAM_PROBLEM if self.code == PARAMPROB_ERRATPTR => {
                    icmp.set_pointer(p.anno().param_off.min(255) as u8)
                }
                _ => {}
            }
            icmp.fill_checksum();
        }
        q.set_network_offset(0);
        q.set_transport_offset(20);
        q.set_dst_ip_anno(orig_src);
        q.anno_mut().fix_ip_src = self.set_fix;
        self.sent += 1;
        Verdict::Out(0, q)
    }
}

impl Element for ICMPError {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<IpArg>("SRC")?.0;
        (self.ty, self.code) = read_type_code(args)?;
        self.bad = args.read::<IpList>("BADADDRS")?.unwrap_or_default().0;
        self.mtu = args.read::<u16>("MTU")?;
        self.set_fix = args.read::<bool>("SET_FIX_ANNO")?.unwrap_or(true);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, cx| self.action(p, cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_sorted(max, cx, |p, cx| self.action(p, cx)).0
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::r("sent"),
                Handler::r("drops"),
                Handler::r("drop_details"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "sent" => self.sent.to_string(),
            "drops" => self.drops.iter().sum::<u64>().to_string(),
            "drop_details" => details(&REASONS, &self.drops),
            _ => return None,
        })
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPError",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("icmp_error.rs"),
    make: || {
        Box::new(ICMPError {
            src: Ipv4Addr::UNSPECIFIED,
            ty: 0,
            code: 0,
            bad: Vec::new(),
            mtu: None,
            set_fix: true,
            id: 0,
            sent: 0,
            drops: [0; 6],
        })
    },
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_type("timeexceeded"), Some(11));
        assert_eq!(parse_type("parameter-problem"), Some(12));
        assert_eq!(parse_type("3"), Some(3));
        assert_eq!(parse_type("bogus"), None);
        assert_eq!(parse_code(3, "needfrag"), Some(4));
        assert_eq!(parse_code(5, "host"), Some(1));
        assert_eq!(parse_code(11, "transit"), Some(0));
        assert_eq!(parse_code(5, "needfrag"), None);
    }
}
