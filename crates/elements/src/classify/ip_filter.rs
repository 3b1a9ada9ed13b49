//! IPFilter — filters IPv4 and IPv6 packets by tcpdump-like rules
//!
//! Synopsis: `IPFilter(ACTION_1 PATTERN_1, ..., ACTION_N PATTERN_N)`
//!
//! Ports: 1 input, any number of outputs, push.
//!
//! Packets are tested against the rules in order and handled by the first rule that matches.
//! Packets matching no rule, and packets a rule drops, are counted in `drops`. Patterns read
//! the IP header at the network header annotation (CheckIPHeader, MarkIPHeader,
//! MarkIP6Header...), or at the data start when none is set; a packet whose version nibble
//! is 6 is IPv6, any other is read as IPv4. All rules are compiled at configuration time
//! into one decision DAG per IP version (`program`).
//!
//! Patterns are in IPClassifier's syntax (`sluice doc IPClassifier`), IPv6 included: `ip6`,
//! `ip6 src host 2001:db8::1`, `dst net 2001:db8::/32`, `icmp6 type echo-request`,
//! `icmp6 type neighbor-solicitation`, `ip6 nxt 17`, `ip6 hlim < 2`, `ip6 flow N`, `ip6 tc
//! N`, `ip6 dscp N`, `ip6 frag`... IPv4 primitives never match IPv6 packets and IPv6 ones
//! never match IPv4 packets; `tcp`, `udp`, ports and `tcp opt` match both (for IPv6, a
//! transport header right after the fixed header). Click's IPFilter knows IPv4 only and reads
//! an IPv6 packet's bytes as if they were IPv4.
//!
//! Arguments:
//! - `ACTION PATTERN` (any number of rules): ACTION says what becomes of a packet that
//!   PATTERN matches: `allow` sends it to output 0, a number K to output K (below the number
//!   of outputs), `drop` or `deny` drops it.
//!
//! Handlers: `program` (r: as IPClassifier's, the IPv6 DAG after the other), `drops` (r),
//! `drop_details` (r, dropped packets are counted under "no matching pattern", whether a rule
//! dropped them or none matched), `reset_counts` (w).
//!
//! Example:
//! ```text
//! IPFilter(allow tcp dst port 80, 1 icmp type echo, 1 icmp6 type echo-request,
//!          drop ip6 hlim < 2, allow ip6 src net 2001:db8::/32, deny all)
//! ```

use sluice_core::{ConfigCx, ElementClass};
use sluice_lang::args::Args;

use super::element::{classify_element, ClassifyElem, Start};
use super::ipexpr;
use super::program::Program;

/// The IPFilter element.
pub struct IPFilter(ClassifyElem);

/// Compiles IPFilter rules for an element with `noutputs` outputs.
pub fn compile(rules: &[String], noutputs: usize) -> Result<Program, String> {
    let mut out = Vec::with_capacity(rules.len());
    for r in rules {
        let r = r.trim();
        let (action, pat) = r
            .split_once(char::is_whitespace)
            .ok_or_else(|| format!("rule '{}': expected 'ACTION PATTERN'", r))?;
        let port = match action {
            "allow" => Some(0),
            "drop" | "deny" => None,
            n => match n.parse::<u32>() {
                Ok(k) => Some(k),
                Err(_) => return Err(format!("rule '{}': unknown action '{}'", r, action)),
            },
        };
        if let Some(k) = port {
            if k as usize >= noutputs {
                return Err(format!("rule '{}': output {} out of range", r, k));
            }
        }
        out.push((ipexpr::parse(pat)?, port));
    }
    Ok(Program::compile_ip(&out))
}

classify_element!(
    IPFilter,
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let rules = args.rest();
        match compile(&rules, cx.noutputs()) {
            Ok(p) => {
                self.0.set_program(p, cx.noutputs());
                Ok(())
            }
            Err(e) => {
                args.error(e);
                Err(())
            }
        }
    }
);

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPFilter",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("ip_filter.rs"),
    make: || Box::new(IPFilter(ClassifyElem::new(Start::Network))),
};
