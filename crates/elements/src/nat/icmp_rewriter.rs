//! ICMPRewriter — translates ICMP errors about flows the named rewriters rewrote
//!
//! Synopsis: `ICMPRewriter(MAPS [, keywords DST_ANNO, REPLY_ANNO])`
//!
//! Ports: 1 input, 1 or more outputs; push.
//!
//! With Click 2.1's semantics. An ICMP error (destination unreachable, time exceeded,
//! parameter problem, source quench, redirect) quotes the header of the datagram it answers.
//! When that datagram left through a rewriter of MAPS (IPRewriter, TCPRewriter, UDPRewriter,
//! ICMPPingRewriter, IPAddrRewriter, IPAddrPairRewriter), the error is about the rewritten
//! flow; ICMPRewriter looks the quoted flow up in each rewriter's table, in the order of
//! MAPS, as a reply to it would be looked up, and rewrites the error to be about the
//! original flow:
//! - the quoted source and destination addresses, and the quoted ports (TCP, UDP, DCCP;
//!   read from a first fragment quoting at least 8 transport bytes) or the quoted echo's
//!   identifier (ICMP echo, quoting at least 6 bytes), become the original flow's;
//! - the outer destination, when it was the quoted source, becomes the original source
//!   (and, with DST_ANNO, the destination address annotation);
//! - the quoted IP checksum, the quoted TCP checksum (18 bytes quoted) or UDP checksum (when
//!   not 0), the quoted echo's ICMP checksum, the outer IP checksum and the ICMP checksum are
//!   updated incrementally, as Click does.
//!
//! The translated error leaves by output 0, or, for a rewriter named `NAME:OFFSET`, by output
//! OFFSET plus the output of the rewriter's matching mapping entry (its reply output for a
//! reply entry); an output past the last is a drop ("mapped output out of range"). Other ICMP
//! packets (other types, errors without a whole quoted IPv4 header, later fragments, errors
//! no mapping matches) leave unchanged by output 1, as Click's documentation says, or are
//! dropped ("not an error about a mapped flow") when there is no output 1. Packets that are
//! not ICMP are dropped ("not ICMP"), as are packets without a valid IP header ("bad IP
//! header"). Every drop is counted in `drops`, by reason in `drop_details`.
//!
//! Arguments:
//! - `MAPS`: space-separated rewriter names, each optionally `:OFFSET` (an output offset).
//!   The rewriter's outputs plus OFFSET must not be more than ICMPRewriter's outputs.
//! - `DST_ANNO` (bool, default true): set the destination address annotation when the outer
//!   destination is rewritten.
//! - `REPLY_ANNO` (`PAINT` or a user annotation offset): for an error matching a flow's reply
//!   entry, set this annotation byte to the flow's REPLY_ANNO byte (its rewriter's
//!   REPLY_ANNO).
//!
//! Handlers: `drops`, `drop_details` (r): packets dropped, by reason.
//!
//! Under `-j N` each thread that reaches it has its own copy (it keeps nothing but counts;
//! the rewriters' tables it consults are shared); the counts are summed.
//!
//! Example: `rw :: IPRewriter(pattern 198.18.0.1 1024-65535# - - 0 1, drop);
//! pr :: ICMPPingRewriter(pattern 198.18.0.1 - 0-65535# 0 1, drop);
//! from_outside_errors -> ICMPRewriter(rw pr) -> inside;`

use sluice_core::toolkit::{push_sorted, Verdict};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Concurrency, InitCx, Packet, Table};
use sluice_lang::args::{split_words, Args};

use super::rewrite::{self, ICMP};
use super::rewriter::{Rewriter, RewriterLink};
use crate::standard::util::AnnoByte;

drop_reasons! {
    /// Why ICMPRewriter drops a packet.
    enum Reason {
        BadIp => "bad IP header",
        NotIcmp => "not ICMP",
        Unmapped => "not an error about a mapped flow",
        NoOutput => "mapped output out of range",
    }
}

/// A rewriter of MAPS.
struct Map {
    /// The word naming it.
    word: String,
    /// Its element index.
    index: usize,
    /// The output offset (`NAME:OFFSET`).
    offset: Option<usize>,
    /// How it is reached, from initialisation.
    link: Option<RewriterLink>,
}

/// The ICMPRewriter element.
pub struct ICMPRewriter {
    maps: Vec<Map>,
    dst_anno: bool,
    reply_anno: Option<AnnoByte>,
    noutputs: usize,
    drops: Drops<Reason>,
}

impl Default for ICMPRewriter {
    fn default() -> ICMPRewriter {
        ICMPRewriter {
            maps: Vec::new(),
            dst_anno: true,
            reply_anno: None,
            noutputs: 1,
            drops: Drops::default(),
        }
    }
}

impl ICMPRewriter {
    /// Sends a packet no mapping translates to output 1, or drops it.
    fn unmapped(&mut self, p: Packet) -> Verdict {
        if self.noutputs > 1 {
            return Verdict::Out(1, p);
        }
        self.drops.count(Reason::Unmapped);
        Verdict::Gone
    }

    /// Translates one packet.
    fn handle(&mut self, mut p: Packet) -> Verdict {
        let Some(h) = rewrite::parse(&p) else {
            self.drops.count(Reason::BadIp);
            return Verdict::Gone;
        };
        if h.proto != ICMP {
            self.drops.count(Reason::NotIcmp);
            return Verdict::Gone;
        }
        let found = rewrite::quoted(&p, &h)
            .filter(|_| h.first_frag)
            .and_then(|q| {
                self.maps.iter().find_map(|m| {
                    let reply = m.link.as_ref()?.reply(q.proto, &q.search)?;
                    Some((q, reply, m.offset))
                })
            });
        let Some((q, reply, offset)) = found else {
            return self.unmapped(p);
        };
        if rewrite::translate_error(&mut p, &h, &q, &reply.to) && self.dst_anno {
            p.set_dst_ip_anno(reply.to.daddr);
        }
        if let (Some(a), Some(v)) = (self.reply_anno, reply.reply_anno) {
            a.set(&mut p, v);
        }
        let out = offset.map_or(0, |o| o + reply.output);
        if out < self.noutputs {
            Verdict::Out(out, p)
        } else {
            self.drops.count(Reason::NoOutput);
            Verdict::Gone
        }
    }
}

impl Element for ICMPRewriter {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let maps: String = args.read_mp("MAPS")?;
        args.read_into("DST_ANNO", &mut self.dst_anno)?;
        self.reply_anno = args.read("REPLY_ANNO")?;
        self.noutputs = cx.noutputs();
        let mut ok = true;
        for word in split_words(&maps) {
            let (name, offset) = match word.split_once(':') {
                Some((n, o)) => (n, o.parse::<usize>().ok().map(Some)),
                None => (word.as_str(), Some(None)),
            };
            match (cx.element_index(name), offset) {
                (Some(index), Some(offset)) => self.maps.push(Map {
                    word: word.clone(),
                    index,
                    offset,
                    link: None,
                }),
                _ => {
                    args.error(format!("{word} not an IP rewriter"));
                    ok = false;
                }
            }
        }
        if self.maps.is_empty() && ok {
            args.error("no IP rewriters supplied");
            return Err(());
        }
        ok.then_some(()).ok_or(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let noutputs = self.noutputs;
        for m in &mut self.maps {
            let link = cx
                .element(m.index)
                .and_then(|e| e.as_any().downcast_ref::<Rewriter>())
                .map(Rewriter::link)
                .ok_or_else(|| format!("{} not an IP rewriter", m.word))?;
            if m.offset.is_some_and(|o| o + link.noutputs > noutputs) {
                let s = if noutputs == 1 { "output" } else { "outputs" };
                return Err(format!(
                    "{} port offset requires more than {noutputs} {s}",
                    m.word
                ));
            }
            m.link = Some(link);
        }
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_sorted(batch, cx, |p, _| self.handle(p));
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().drops(|e| &e.drops).into()
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ICMPRewriter",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("icmp_rewriter.rs"),
    make: || Box::<ICMPRewriter>::default(),
};
