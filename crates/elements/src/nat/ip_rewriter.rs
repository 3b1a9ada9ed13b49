//! IPRewriter — rewrites TCP and UDP flows' addresses and ports (NAPT)
//!
//! Synopsis: `IPRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords TCP_TIMEOUT, TCP_DONE_TIMEOUT,
//! TCP_NODATA_TIMEOUT, TCP_GUARANTEE, UDP_TIMEOUT, UDP_STREAMING_TIMEOUT, UDP_GUARANTEE,
//! TIMEOUT, GUARANTEE, REAP_INTERVAL, MAPPING_CAPACITY, DST_ANNO, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! A network address and port translator with Click 2.1's semantics. A mapping table holds
//! flows: a flow maps a packet's (SADDR, SPORT, DADDR, DPORT) to a rewritten one and an
//! output, and its reply flow, the reverse of the rewritten one, back to the reverse of the
//! original (to the reply output). TCP and UDP flows are in separate maps. A packet whose
//! flow (or reply flow) is in the table is rewritten as its entry says, whatever input it
//! came in on, and leaves by the entry's output; the IP checksum and the TCP or UDP checksum
//! are updated incrementally (a UDP checksum of 0 stays 0). Other packets are handled by
//! their input's INPUTSPEC:
//! - `drop` or `discard`: dropped (counted "dropped by input spec").
//! - `pass OUTPUT` (also `passthrough`, `nochange`): sent unchanged to OUTPUT; no mapping.
//! - `keep FOUTPUT ROUTPUT`: a mapping that changes nothing, forward packets to FOUTPUT,
//!   replies to ROUTPUT.
//! - `pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT`: a mapping rewriting the fields the
//!   pattern gives (`-` keeps the packet's; three words are `SADDR DADDR SPORT`, as in
//!   Click). SPORT may be a range `L-H`: the packet's own
//!   source port is used when it is in the range and free, else a free port at random;
//!   with `L-H#` ports are allocated in order after the last one given, with `L-H?` at
//!   random. A port is free when no reply mapping would collide. When none is free the
//!   packet is dropped (counted "no free port or address" and in `mapping_failures`).
//! - `pattern NAME FOUTPUT ROUTPUT`: the pattern NAME of an IPRewriterPatterns element.
//! - `MAPPER`: the name of a RoundRobinIPMapper or SourceIPHashMapper element, which picks a
//!   pattern and the outputs of each new mapping (`sluice doc RoundRobinIPMapper`).
//!
//! Packets that are neither TCP nor UDP, later fragments and packets with fewer than 8
//! transport bytes go to the output of a `pass` input and are dropped on other inputs
//! ("not rewritable"). TCP packets with fewer than 18 transport bytes get their addresses
//! rewritten but not their ports. Packets without a valid IP header are dropped ("bad IP
//! header").
//!
//! Timeouts: each packet renews its flow. With a guarantee (TCP_GUARANTEE or GUARANTEE for
//! TCP, UDP_GUARANTEE for UDP; default 5 s), the flow is guaranteed for that long, then
//! lives as a best-effort flow for its timeout minus the guarantee; without (0), it is best
//! effort at once. A TCP flow's timeout is TCP_DONE_TIMEOUT (default 240 s) once both sides
//! sent FIN (or either sent RST), TCP_TIMEOUT or TIMEOUT (default 86400 s) once data went
//! both ways, else TCP_NODATA_TIMEOUT (300 s). A UDP flow's is UDP_STREAMING_TIMEOUT
//! (default: UDP_TIMEOUT) once it is streaming (three packets, a reply among them), else
//! UDP_TIMEOUT (300 s). Every REAP_INTERVAL (default 900 s; 0: never) expired flows are
//! removed; until then an expired flow still maps packets, as in Click.
//!
//! Capacity: MAPPING_CAPACITY (or CAPACITY) bounds the number of flows; a number, or the
//! name of another rewriter whose table (flows and capacity) this one shares. When a new
//! flow exceeds it, the best-effort flow that expires first is removed (guarantees that ran
//! out are best effort); when all are guaranteed, or the new flow expires first, the new
//! flow is refused and its packet dropped ("mapping table full", `mapping_failures`).
//!
//! Every drop is counted in `drops`, by reason in `drop_details`. ICMPRewriter (`sluice doc
//! ICMPRewriter`) translates ICMP errors about rewritten flows. Not done: TCP sequence number
//! deltas (FTPPortMapper).
//!
//! Arguments:
//! - `INPUTSPECi`: one per input, as above.
//! - `TCP_TIMEOUT`, `TIMEOUT`, `TCP_DONE_TIMEOUT`, `TCP_NODATA_TIMEOUT`, `TCP_GUARANTEE`,
//!   `GUARANTEE`, `UDP_TIMEOUT`, `UDP_STREAMING_TIMEOUT`, `UDP_GUARANTEE`, `REAP_INTERVAL`
//!   (`REAP_TIME`): seconds, as above.
//! - `MAPPING_CAPACITY` or `CAPACITY`: a number (default 2147483647) or a rewriter's name.
//! - `DST_ANNO` (bool, default true): set the destination address annotation to the
//!   rewritten destination.
//! - `REPLY_ANNO` (`PAINT` or a user annotation offset): a new flow remembers this
//!   annotation byte of its first packet and gives it to its replies.
//!
//! Handlers: `tcp_table`, `udp_table` (r): one line per entry, `FLOW => REWRITTEN [*F R] iN
//! expS` (`*` marks the entry's direction; N: the input that made it; S: seconds to its
//! best-effort expiry, at the last packet or timer), sorted. `tcp_lookup` (r with parameter
//! `SADDR SPORT DADDR DPORT`: the rewritten TCP flow, or nothing). `table_size`,
//! `nmappings` (r): flows this rewriter made. `mapping_failures` (r). `size` (r): flows in
//! the table (all rewriters sharing it). `capacity` (rw). `clear` (w): removes every flow.
//! `footprint_bytes`, `accesses_per_packet` (r): the table's bytes as allocated now and the
//! two reads of it a packet makes (the footprint `sluice plan` places the element by).
//! `patterns` (r): each input's specification, with ` [N]` for its live flows. `patternN`
//! (rw, inputs 0–7): input N's line; writing replaces its specification and removes its
//! flows. `drops`, `drop_details` (r).
//!
//! Threads: under `-j N` the router keeps the rewriter and the tasks that reach it on one
//! thread while placement is free to choose. When fixed placements (StaticThreadSched) put
//! tasks that reach it on several threads, the router makes it one thread-safe rewriter: its flow
//! table, locked once per batch, serves every thread, so a flow's mapping is found whichever
//! thread its packets arrive on and flows new on several threads at once get one mapping each;
//! drops and `mapping_failures` count from every thread. Expired flows are then reaped by the
//! first packet after each REAP_INTERVAL (there is no timer).
//!
//! Example: `rw :: IPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop);
//! inside -> [0]rw[0] -> outside; from_outside -> [1]rw[1] -> inside;`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("ip_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::Ip)),
};
