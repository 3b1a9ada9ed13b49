//! IPClassifier — classifies IPv4 and IPv6 packets with tcpdump-like patterns
//!
//! Synopsis: `IPClassifier(PATTERN_1, ..., PATTERN_N)`
//!
//! Ports: 1 input, N outputs (one per pattern), push.
//!
//! A packet goes to the output of the first pattern it matches; packets matching none are
//! dropped and counted in `drops`. Patterns read the IP header at the packet's network header
//! annotation (set by CheckIPHeader, MarkIPHeader, MarkIP6Header...); when none is set, at the
//! data start. A packet whose version nibble is 6 is IPv6; every other packet is read as
//! IPv4. IPv4 transport headers are found through the IP header length (IP options are
//! handled); an IPv6 transport header is the one right after the 40-byte fixed header, so
//! transport primitives match only IPv6 packets whose next header is that protocol (as
//! tcpdump's `ip6 proto`; extension headers are not followed). All patterns are compiled at
//! configuration time into one decision DAG per IP version, chosen by the version nibble
//! (`program` handler). Tests on bytes past the packet end fail: short or malformed packets
//! never match them.
//!
//! Primitives (IPv4 ones never match IPv6 packets, IPv6 ones never match IPv4 packets; those
//! marked *both* match either):
//! - `[SRCDST] host ADDR`, `[SRCDST] net ADDR/LEN` (or `ADDR mask MASK`), with an IPv4 or an
//!   IPv6 address (`2001:db8::1`, `2001:db8::/32`, `2001:db8:: mask ffff:ffff::`), which
//!   decides the version; SRCDST is `src`, `dst`, `src or dst` (the default) or `src and dst`.
//!   An optional `ip` or `ip6` in front insists on the version.
//! - `[SRCDST] [tcp|udp|tcpudp] port PORT` (number or name: www, http, ssh, domain, ...);
//!   without `tcp`/`udp` (or with `tcpudp`) either protocol matches; *both*, or one version
//!   after `ip` or `ip6` (`ip6 dst port 53`).
//! - `[SRCDST] ether host ETH` (or a bare Ethernet address after `src`, `dst` or `host`:
//!   `src 0:1:2:3:4:5`): the source and/or destination address of the Ethernet header at
//!   the packet's MAC header annotation (set by FromDevice, FromDump, MarkMACHeader); a
//!   packet without one does not match. *Both*.
//! - `ip`, `ip6` alone: the packet is IPv4 (version 4), IPv6 (version 6).
//! - `tcp`, `udp` (*both*), `icmp`, `igmp`, `ipip` (IPv4), `icmp6` (IPv6); `proto PROTO`
//!   (*both*: IPv4 protocol or IPv6 next header), `ip proto PROTO` (IPv4), `ip6 proto PROTO`
//!   or `ip6 nxt PROTO` (IPv6 next header: the first one, not the header chain); PROTO is a
//!   number or tcp, udp, icmp, igmp, ipip, icmp6.
//! - IPv4 header fields: `ip vers V` (the version nibble of any packet), `ip hl HL`,
//!   `ip id ID`, `ip tos TOS`, `ip dscp DSCP`, `ip ttl TTL`, `ip ect`, `ip ce`, `ip frag` (MF
//!   set or nonzero offset), `ip unfrag`; without the `ip` they mean the same.
//! - IPv6 header fields: `ip6 hlim N` (hop limit), `ip6 flow N` (flow label), `ip6 tc N`
//!   (traffic class), `ip6 dscp N`, `ip6 ect`, `ip6 ce` (ECN bits of the traffic class),
//!   `ip6 plen N` (payload length), `ip6 frag` (the first extension header is a Fragment
//!   header), `ip6 unfrag`; `hlim`, `flow`, `tc`, `plen`, `nxt` need no `ip6`.
//! - `tcp opt FLAG` (syn, fin, ack, rst, psh, urg; several names all must be set),
//!   `tcp win N` (*both*); `icmp type TYPE` (IPv4: echo, echo-reply, unreachable,
//!   timeexceeded, ... or a number); `icmp6 type TYPE` (IPv6: echo or echo-request 128,
//!   echo-reply 129, unreachable 1, packettoobig 2, timeexceeded 3, parameterproblem 4,
//!   mld-query 130, mld-report 131, mld-done 132, routersolicit 133, routeradvert 134,
//!   neighborsolicit or neighbor-solicitation 135, neighboradvert or neighbor-advertisement
//!   136, redirect 137, mld2-report 143, or a number).
//! - `ip[POS:LEN] VALUE`: the LEN bytes (1 to 4, default 1: `ip[POS]`) at byte POS of the IP
//!   header, as a big-endian number (of either version: the bytes as they are);
//!   `transp[POS:LEN] VALUE`: the same in the transport header (IPv4 first fragments; for
//!   IPv6, the bytes after the fixed header). E.g. `ip[8] < 5`, `transp[13] & 0x12 == 0x12`.
//! - `true`, `false`; a whole pattern `-`, `any` or `all` matches everything.
//!
//! Integer primitives take an optional relation `==`, `!=`, `<`, `>`, `<=`, `>=` before the
//! value and a mask `& MASK`; an IPv6 address compares as a 128-bit number, under an IPv6
//! mask (`src & ffff:ffff:: == 2001:db8::`). Port, ICMP type and TCP primitives match first
//! fragments of their protocol only; `src tcp port != 5` does not match UDP packets, `not src
//! tcp port 5` does; likewise `src host != 2001:db8::1` matches IPv6 packets only.
//!
//! Connectives: `and`/`&&`, `or`/`||`, `not`/`!`, parentheses, `C ? A : B`; adjacent
//! primitives are ANDed. Shorthands: `tcp` (= `proto tcp`), `www` / `80` after a port
//! primitive (`src port 80 or 81`), `syn` (= `tcp opt syn`), `10.0.0.0/8`, `2001:db8::/32`
//! (= `net ...`), `1.2.3.4`, `2001:db8::1` (= `host ...`), `frag`/`unfrag` (IPv4),
//! `icmp echo`, `icmp6 echo-request` (= `... type ...`), `ip6 tcp` (= `ip6 proto tcp`).
//!
//! Differences from Click, whose IPClassifier knows IPv4 only: Click reads every packet as
//! IPv4, so an IPv6 packet may match IPv4 primitives by the bytes at their offsets; here IPv4
//! primitives (and `ip proto`, `icmp`, `ip frag`...) never match a packet whose version is
//! 6, while packets of any other version are still read as IPv4, as in Click.
//!
//! Arguments:
//! - `PATTERN` (one per output, mandatory): an expression of the primitives and connectives
//!   above; pattern *i* sends its packets to output *i*.
//!
//! Handlers: `program` (r: the decision DAG for packets other than IPv6 in Click's layout,
//! then, after `ipv6 (version 6) packets:`, the one for IPv6 packets unless it drops them
//! all or equals the first), `drops` (r), `drop_details` (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! IPClassifier(10.0.0.0/24 and syn, dst tcp port 8000 or 8080, icmp type echo,
//!              icmp6 type neighbor-solicitation, ip6 src net 2001:db8::/32, -)
//! ```

use sluice_core::{ConfigCx, ElementClass};
use sluice_lang::args::Args;

use super::element::{classify_element, compile_patterns, ClassifyElem, Start};
use super::ipexpr;
use super::program::Program;

/// The IPClassifier element.
pub struct IPClassifier(ClassifyElem);

/// Compiles IPClassifier patterns (pattern i → output i).
pub fn compile(patterns: &[String]) -> Result<Program, String> {
    compile_patterns(patterns, ipexpr::parse, Start::Network)
}

classify_element!(
    IPClassifier,
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.0.configure_patterns(args, cx, ipexpr::parse)
    }
);

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPClassifier",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("ip_classifier.rs"),
    make: || Box::new(IPClassifier(ClassifyElem::new(Start::Network))),
};
