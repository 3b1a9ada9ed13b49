//! ICMPError — generates ICMP error messages in response to bad packets
//!
//! Synopsis: `ICMPError(SRC, TYPE [, CODE, BADADDRS], [keywords MTU, PMTU, SET_FIX_ANNO])`
//!
//! Ports: 1 input, 1 or 2 outputs, agnostic (output 1 push).
//!
//! Each input packet is an IP packet that provoked an error (network header annotation set, or
//! the IP header at the start). ICMPError consumes it and emits, on output 0, a new IP packet
//! from SRC to the original source holding an ICMP message of TYPE and CODE that quotes as
//! much of the original datagram, from its IP header on, as fits in an error of MTU bytes
//! (RFC 1812 §4.3.2.3). The error has TOS 0, TTL 200, and IP IDs 1, 2, 3, … counted over
//! every ICMPError of the process (as Click does); the checksums are filled in, the timestamp
//! annotation is the current time, the destination IP annotation is the original source
//! (ready for a route lookup) and — unless SET_FIX_ANNO is false — the fix-IP-source
//! annotation is set, so a FixIPSrc on the way out replaces SRC with the address of the
//! outgoing interface.
//!
//! Type-specific fields: Redirect carries the gateway from the packet's destination IP
//! annotation (the next hop the route lookup chose); Unreachable/needfrag carries PMTU as the
//! next-hop MTU; Parameter Problem (code 0) carries the pointer from the packet's `param_off`
//! annotation (set by IPGWOptions). When the original has a loose or strict source route
//! option, the error carries the route's hops travelled so far, reversed (RFC 1812
//! §4.3.2.6) — except for a Parameter Problem that points into that option.
//!
//! No error is sent (RFC 1812 §4.3.2.7), and the packet goes to output 1 if connected or is
//! dropped, counted per reason in `drops` / `drop_details` either way, when: the packet has
//! no valid IP header; it is itself an ICMP error message (or too short to tell); the destination is
//! 255.255.255.255, multicast or in BADADDRS, or the packet arrived as a link-level
//! broadcast/multicast; the source is not a valid unicast address (0.x.x.x, 127.x.x.x,
//! 255.255.255.255, multicast, class E, or in BADADDRS); it is a non-first fragment; or a
//! Redirect is asked for a source-routed packet.
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
//! - `MTU` (unsigned, default 576): the largest error datagram generated.
//! - `PMTU` (unsigned, default 0): the next-hop MTU reported in fragmentation-needed errors.
//! - `SET_FIX_ANNO` (bool, default true).
//!
//! Handlers: `src`, `mtu`, `pmtu` (r/w); `sent` (r), `drops` (r), `drop_details` (r).
//!
//! Example: `fr[1] -> ICMPError(198.18.0.1, unreachable, needfrag, PMTU 1500) -> rt;`

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicU32, Ordering};

use sluice_core::toolkit::{pull_sorted, push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, PacketType, Table};
use sluice_lang::args::{Args, FromArg};
use sluice_wire::icmp::*;
use sluice_wire::ipv4::{OPT_EOL, OPT_LSRR, OPT_NOP, OPT_SSRR, PROTO_ICMP};
use sluice_wire::{IcmpPacket, Ipv4Packet};

use crate::ip::common::{ip_offset, IpList};

/// The IP ID of the next error, shared by every ICMPError as Click's is.
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

drop_reasons! {
    /// Why no error is sent for a packet.
    enum Reason {
        BadHeader => "bad IP header",
        BadSource => "bad source address",
        BadDestination => "broadcast or multicast destination",
        Fragment => "non-first fragment",
        IcmpError => "ICMP error",
        SourceRouted => "source-routed redirect",
    }
}

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

/// The offset, in IP header `h`, of a usable loose or strict source route option (its
/// pointer at an address boundary inside the option).
fn source_route(h: &[u8]) -> Option<usize> {
    let mut i = 20;
    while i < h.len() {
        match h[i] {
            OPT_NOP => i += 1,
            OPT_EOL => return None,
            t => {
                let len = *h.get(i + 1)? as usize;
                if len < 2 || i + len > h.len() {
                    return None;
                }
                if (t == OPT_LSRR || t == OPT_SSRR) && len >= 3 {
                    let ptr = h[i + 2] as usize;
                    if ptr >= 4 && ptr.is_multiple_of(4) && ptr <= len + 1 {
                        return Some(i);
                    }
                }
                i += len;
            }
        }
    }
    None
}

/// The ICMPError element.
pub struct ICMPError {
    src: Ipv4Addr,
    ty: u8,
    code: u8,
    bad: Vec<Ipv4Addr>,
    mtu: u32,
    pmtu: u16,
    set_fix: bool,
    sent: u64,
    /// Packets refused, whether sent to output 1 or dropped (the `drops` handler).
    refused: Drops<Reason>,
    /// Packets refused and dropped (output 1 not connected).
    dropped: Drops<Reason>,
}

impl Default for ICMPError {
    fn default() -> Self {
        ICMPError {
            src: Ipv4Addr::UNSPECIFIED,
            ty: 0,
            code: 0,
            bad: Vec::new(),
            mtu: 576,
            pmtu: 0,
            set_fix: true,
            sent: 0,
            refused: Drops::default(),
            dropped: Drops::default(),
        }
    }
}

impl ICMPError {
    /// True unless `a` is limited broadcast, multicast or a BADADDRS address.
    fn unicast(&self, a: Ipv4Addr) -> bool {
        !(a.is_broadcast() || a.is_multicast() || self.bad.contains(&a))
    }

    /// Why no error may be sent for `ip`, if so.
    fn refuse(&self, p: &Packet, b: &[u8]) -> Option<Reason> {
        let ip = match Ipv4Packet::new_checked_truncated(b) {
            Ok(ip) => ip,
            Err(_) => return Some(Reason::BadHeader),
        };
        if ip.protocol() == PROTO_ICMP {
            // An unreadable ICMP header counts as an error message: never answer it.
            match IcmpPacket::new_checked(ip.payload()) {
                Ok(icmp) if !icmp.is_error() => {}
                _ => return Some(Reason::IcmpError),
            }
        }
        if !self.unicast(ip.dst())
            || matches!(
                p.anno().packet_type,
                PacketType::Broadcast | PacketType::Multicast
            )
        {
            return Some(Reason::BadDestination);
        }
        let src = ip.src();
        let net = src.octets()[0];
        if !self.unicast(src) || net == 0 || net == 127 || net >= 240 {
            return Some(Reason::BadSource);
        }
        if ip.frag_offset() != 0 {
            return Some(Reason::Fragment);
        }
        if self.ty == TYPE_REDIRECT && source_route(&b[..ip.header_len()]).is_some() {
            return Some(Reason::SourceRouted);
        }
        None
    }

    fn action(&mut self, p: Packet, cx: &mut Cx) -> Verdict {
        let off = ip_offset(&p);
        let b = &p.data()[off..];
        if let Some(r) = self.refuse(&p, b) {
            self.refused.count(r);
            if cx.noutputs() < 2 {
                self.dropped.count(r);
                return Verdict::Gone;
            }
            return Verdict::Out(1, p);
        }
        let ip = Ipv4Packet::new_unchecked(b);
        let orig_hl = ip.header_len();
        let param_off = p.anno().param_off as usize;
        // The source route travelled so far, unless a parameter problem points into it.
        let sr = source_route(&b[..orig_hl]).filter(|&o| {
            !(self.ty == TYPE_PARAM_PROBLEM
                && self.code == PARAMPROB_ERRATPTR
                && (o..o + b[o + 1] as usize).contains(&param_off))
        });
        let (opt_len, hl) = match sr {
            Some(o) => {
                let olen = b[o + 2] as usize - 1;
                (olen, (20 + olen + 3) & !3)
            }
            None => (0, 20),
        };
        let quote = (self.mtu as usize).saturating_sub(hl + 8).min(b.len());
        let len = hl + 8 + quote;
        let mut q = Packet::new(len);
        q.anno_mut().timestamp = cx.now();
        let orig_src = ip.src();
        {
            let d = q.data_mut();
            d[hl + 8..].copy_from_slice(&b[..quote]);
            if let Some(o) = sr {
                // Type, length, pointer at the first address, then the hops reversed.
                let opt = &mut d[20..hl];
                opt.fill(OPT_EOL);
                opt[..3].copy_from_slice(&[b[o], opt_len as u8, 4]);
                let hops = &b[o + 3..o + opt_len];
                for (k, hop) in hops.chunks_exact(4).rev().enumerate() {
                    opt[3 + 4 * k..7 + 4 * k].copy_from_slice(hop);
                }
            }
            let mut h = Ipv4Packet::new_unchecked(&mut d[..hl]);
            h.set_version(4);
            h.set_header_len(hl);
            h.set_tos(0);
            h.set_total_len(len as u16);
            h.set_ident(NEXT_ID.fetch_add(1, Ordering::Relaxed) as u16);
            h.set_flags_frag(0);
            h.set_ttl(200);
            h.set_protocol(PROTO_ICMP);
            h.set_src(self.src);
            h.set_dst(orig_src);
            h.fill_checksum();
            let mut icmp = IcmpPacket::new_unchecked(&mut d[hl..]);
            icmp.set_msg_type(self.ty);
            icmp.set_code(self.code);
            icmp.set_rest_of_header(0);
            match self.ty {
                TYPE_REDIRECT => icmp.set_gateway(p.dst_ip_anno()),
                TYPE_UNREACH if self.code == UNREACH_NEEDFRAG => icmp.set_next_hop_mtu(self.pmtu),
                TYPE_PARAM_PROBLEM if self.code == PARAMPROB_ERRATPTR => {
                    icmp.set_pointer(param_off.min(255) as u8)
                }
                _ => {}
            }
            icmp.fill_checksum();
        }
        q.set_network_offset(0);
        q.set_transport_offset(hl as isize);
        q.set_dst_ip_anno(orig_src);
        q.anno_mut().fix_ip_src = self.set_fix;
        self.sent += 1;
        Verdict::Out(0, q)
    }
}

impl Element for ICMPError {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.src = args.read_mp::<Ipv4Addr>("SRC")?;
        (self.ty, self.code) = read_type_code(args)?;
        self.bad = args.read_p::<IpList>("BADADDRS")?.unwrap_or_default().0;
        args.read_into("MTU", &mut self.mtu)?;
        args.read_into("PMTU", &mut self.pmtu)?;
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
            .data("pmtu", |e| &mut e.pmtu)
            .read("sent", |e| e.sent)
            .read("drops", |e| e.refused.total())
            .read("drop_details", |e| e.refused.details())
            .drops(|e| &e.dropped)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPError",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("icmp_error.rs"),
    make: || Box::<ICMPError>::default(),
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
