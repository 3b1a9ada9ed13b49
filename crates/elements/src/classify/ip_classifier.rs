//! IPClassifier — classifies IP packets with tcpdump-like patterns
//!
//! Synopsis: `IPClassifier(PATTERN_1, ..., PATTERN_N)`
//!
//! Ports: 1 input, N outputs (one per pattern), push.
//!
//! A packet goes to the output of the first pattern it matches; packets matching none are
//! dropped and counted in `drops`. Patterns read the IP header at the packet's network header
//! annotation (set by CheckIPHeader or MarkIPHeader); when none is set, at the data start.
//! Transport fields are found through the IP header length, so IP options are handled. All
//! patterns are compiled at configuration time into one decision DAG (`program` handler).
//! Tests on bytes past the packet end fail: short or malformed packets never match them.
//!
//! Primitives:
//! - `[SRCDST] host ADDR`, `[SRCDST] net ADDR/LEN` (or `ADDR mask MASK`); SRCDST is `src`,
//!   `dst`, `src or dst` (the default) or `src and dst`.
//! - `[SRCDST] [tcp|udp|tcpudp] port PORT` (number or name: www, http, ssh, domain, ...);
//!   without `tcp`/`udp` (or with `tcpudp`) either protocol matches.
//! - `[SRCDST] ether host ETH` (or a bare Ethernet address after `src`, `dst` or `host`:
//!   `src 0:1:2:3:4:5`): the source and/or destination address of the Ethernet header at
//!   the packet's MAC header annotation (set by FromDevice, FromDump, MarkMACHeader); a
//!   packet without one does not match.
//! - `ip proto PROTO` (tcp, udp, icmp, igmp, ipip or a number), `ip vers V`, `ip hl HL`,
//!   `ip id ID`, `ip tos TOS`, `ip dscp DSCP`, `ip ttl TTL`, `ip ect`, `ip ce`,
//!   `ip frag` (MF set or nonzero offset), `ip unfrag`.
//! - `tcp opt FLAG` (syn, fin, ack, rst, psh, urg; several names all must be set),
//!   `tcp win N`, `icmp type TYPE` (echo, echo-reply, unreachable, timeexceeded, ... or a
//!   number).
//! - `ip[POS:LEN] VALUE`: the LEN bytes (1 to 4, default 1: `ip[POS]`) at byte POS of the IP
//!   header, as a big-endian number; `transp[POS:LEN] VALUE`: the same in the transport
//!   header (first fragments only). E.g. `ip[8] < 5`, `transp[13] & 0x12 == 0x12`.
//! - `true`, `false`; a whole pattern `-`, `any` or `all` matches everything.
//!
//! Integer primitives take an optional relation `==`, `!=`, `<`, `>`, `<=`, `>=` before the
//! value and a mask `& MASK`. Port, ICMP type and TCP primitives match first fragments of their
//! protocol only; `src tcp port != 5` does not match UDP packets, `not src tcp port 5` does.
//!
//! Connectives: `and`/`&&`, `or`/`||`, `not`/`!`, parentheses, `C ? A : B`; adjacent
//! primitives are ANDed. Shorthands: `tcp` (= `ip proto tcp`), `www` / `80` after a port
//! primitive (`src port 80 or 81`), `syn` (= `tcp opt syn`), `10.0.0.0/8` (= `net ...`),
//! `1.2.3.4` (= `host ...`), `frag`/`unfrag`.
//!
//! Arguments:
//! - `PATTERN` (one per output, mandatory): an expression of the primitives and connectives
//!   above; pattern *i* sends its packets to output *i*.
//!
//! Handlers: `program` (r), `drops` (r), `drop_details` (r), `reset_counts` (w).
//!
//! Example:
//! ```text
//! IPClassifier(10.0.0.0/24 and syn, dst tcp port 8000 or 8080, icmp type echo, -)
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
    compile_patterns(patterns, ipexpr::parse)
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
