//! ICMPPingRewriter — rewrites ICMP echoes and echo replies (addresses and identifier)
//!
//! Synopsis: `ICMPPingRewriter(INPUTSPEC0, ..., INPUTSPECn [, keywords TIMEOUT, GUARANTEE,
//! REAP_INTERVAL, MAPPING_CAPACITY, DST_ANNO, REPLY_ANNO])`
//!
//! Ports: one input per INPUTSPEC, one or more outputs; push.
//!
//! IPRewriter (`sluice doc IPRewriter`) for pings, with Click 2.1's semantics: the ICMP
//! identifier plays the part of the port. A mapping changes an echo's (source, destination,
//! identifier) into another triple and sends it to FOUTPUT; echo replies to the rewritten
//! triple get the original one back (source and destination swapped) and go to ROUTPUT. The
//! IP and ICMP checksums are updated incrementally.
//!
//! An echo no mapping matches is handled by its input's INPUTSPEC (`drop`, `pass OUTPUT`,
//! `keep FOUTPUT ROUTPUT`, `pattern ... FOUTPUT ROUTPUT`, a pattern name, or a mapper element
//! as IPRewriter's). A pattern is usually `SADDR DADDR IDENT` (three words: the identifier
//! last, as in Click) or `SADDR IDENT DADDR -`; IDENT may be a range `L-H` (`#`: allocated in
//! order after the last one given; `?`: at random; neither: the echo's own identifier when it
//! is in the range and free, else one at random). An identifier is free when no reply mapping
//! for it exists; when none is free the echo is dropped ("no free port or address", counted in
//! `mapping_failures`).
//!
//! An echo reply no mapping matches goes to the output of a `pass` input and is dropped on
//! other inputs ("echo reply without a mapping"). Other packets (not ICMP, other ICMP
//! types, later fragments, fewer than 6 ICMP bytes) go to the output of a `pass` input and
//! are dropped on other inputs ("not rewritable"); packets without a valid IP header are
//! dropped ("bad IP header"). Every drop is counted in `drops`, by reason in `drop_details`.
//!
//! Flows time out after TIMEOUT (default 300 s) without packets; each packet guarantees its
//! flow for GUARANTEE (default 5 s), as IPRewriter's flows (capacity, admission control and
//! REAP_INTERVAL too). ICMPRewriter (`sluice doc ICMPRewriter`) translates ICMP errors about
//! the rewritten echoes.
//!
//! Arguments:
//! - `INPUTSPECi`: one per input, as above.
//! - `TIMEOUT`, `GUARANTEE`, `REAP_INTERVAL` (`REAP_TIME`): seconds, as above (REAP_INTERVAL
//!   default 900 s).
//! - `MAPPING_CAPACITY` or `CAPACITY`: a number (default 2147483647) or a rewriter's name,
//!   whose table this one shares.
//! - `DST_ANNO` (bool, default true): set the destination address annotation to the
//!   rewritten destination.
//! - `REPLY_ANNO` (`PAINT` or a user annotation offset): a new flow remembers this
//!   annotation byte of its first echo and gives it to its replies.
//!
//! Handlers: `table` (r; also `mappings`): one line per entry, `(SADDR, DADDR, IDENT) => (SADDR',
//! DADDR', IDENT') [*F R] iN expS`, as IPRewriter's `tcp_table`. `table_size`, `nmappings`,
//! `mapping_failures`, `size`, `capacity`, `footprint_bytes`, `accesses_per_packet`, `clear`,
//! `patterns`, `patternN`, `drops`, `drop_details` as IPRewriter's.
//!
//! Threads: shared by several threads as IPRewriter is (`sluice doc IPRewriter`).
//!
//! Example: `pr :: ICMPPingRewriter(pattern 198.18.0.1 - 0-65535# 0 1, drop);
//! inside -> [0]pr[0] -> outside; from_outside -> [1]pr[1] -> inside;`

use sluice_core::ElementClass;

use super::rewriter::{Rewriter, Variant};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPPingRewriter",
    ports: "1-/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("icmp_ping_rewriter.rs"),
    make: || Box::new(Rewriter::new(Variant::Ping)),
};
