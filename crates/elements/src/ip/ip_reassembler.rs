//! IPReassembler — reassembles fragmented IP datagrams
//!
//! Synopsis: `IPReassembler([keywords TIMEOUT, HIMEM, MAX_MEMORY])`
//!
//! Ports: 1 input, 1 or 2 outputs, push.
//!
//! Expects IP packets with the network header annotation (or starting with their IP header),
//! as CheckIPHeader or MarkIPHeader leave them. Packets that are not fragments (More Fragments
//! clear, offset 0) leave by output 0 unchanged. Fragments are held by (source, destination,
//! protocol, identification) until every byte of their datagram has arrived; the datagram then
//! leaves by output 0 in place of the fragment that completed it. It is built on fragment
//! zero: its link-level header (in the packet, or stripped into the headroom so that Unstrip
//! brings it back), its IP header with options, and its annotations, followed by the data of
//! all fragments; the total length is set, More Fragments and the offset are cleared (Don't
//! Fragment is kept) and the checksum is recomputed.
//!
//! Fragments may arrive in any order; the ranges still missing are kept as a list of holes
//! (RFC 815). Overlaps are settled in favour of the data that arrived first: a fragment only
//! fills bytes still missing, and a fragment that fills none is a duplicate and is dropped.
//! A fragment is dropped as inconsistent if it carries data past the end set by the last
//! fragment (More Fragments clear), or if it is a last fragment whose end differs from the
//! one already set or falls before data already received. Fragments without data, non-last
//! fragments whose length is not a multiple of 8, and fragments that would make the datagram
//! longer than 65535 bytes are dropped as bad length, and so is a complete datagram that
//! would be too long behind fragment zero's header.
//!
//! An incomplete datagram expires TIMEOUT after its first fragment arrived. Memory is bounded:
//! when the bytes held (`mem_size`: headers kept and data, plus 64 bytes of bookkeeping per
//! datagram) exceed HIMEM, the oldest incomplete datagrams are thrown away until at most 3/4
//! of HIMEM is held. An expired or thrown-away datagram leaves by output 1, if it exists, as
//! one packet holding all the data received at its offsets (zeros in the holes) behind the
//! header of fragment zero, or of the first fragment to arrive if fragment zero did not, with
//! offset 0, More Fragments set unless the last fragment arrived, and a fresh checksum —
//! connect it to `ICMPError(ADDR, timeexceeded, reassembly)`. Without output 1 it is dropped.
//!
//! Every fragment that does not end up in a datagram on output 0 is counted in `drops`, by
//! reason in `drop_details`: an expired or thrown-away datagram counts each of its fragments,
//! whether or not it left by output 1. Packets that are not IPv4 are dropped as malformed.
//! Datagrams still incomplete when the router stops are counted as `incomplete at stop`.
//!
//! Arguments: `TIMEOUT` (seconds, default 30); `HIMEM` (bytes, default 262144), also spelled
//! `MAX_MEMORY`.
//!
//! Handlers: `fragments` (r): fragments received. `reassembled` (r): datagrams sent on
//! output 0. `drops` (r), `drop_details` (r). `length` (r): datagrams being reassembled.
//! `mem_size` (r): bytes held.
//!
//! Example: `Strip(14) -> CheckIPHeader -> r :: IPReassembler -> ...; r[1] ->
//! ICMPError(198.18.0.1, timeexceeded, reassembly) -> rt;`

use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{Args, Seconds};
use sluice_wire::Ipv4Packet;

use super::common::ip_offset;

/// The largest IP datagram, header included.
const MAX_DATAGRAM: usize = 65535;
/// Bookkeeping bytes counted per datagram in `mem_size`.
const ENTRY_MEM: usize = 64;
/// The end of the last hole while the last fragment is missing.
const OPEN: usize = usize::MAX;

drop_reasons! {
    /// Why fragments were dropped.
    enum Reason {
        Malformed => "malformed",
        BadLength => "bad length",
        Inconsistent => "inconsistent",
        Duplicate => "duplicate",
        Expired => "expired",
        Memory => "memory",
        Stopped => "incomplete at stop",
    }
}

/// The byte ranges of a datagram's data not received yet (RFC 815 hole descriptors),
/// `[start, end)`, sorted and disjoint.
#[derive(Debug, PartialEq)]
struct Holes(Vec<(usize, usize)>);

impl Holes {
    /// Everything missing: one hole from 0 to the unknown end.
    fn new() -> Holes {
        Holes(vec![(0, OPEN)])
    }

    /// Marks `[start, end)` received and calls `f(a, b)` for each part `[a, b)` of it that
    /// was missing, in order.
    fn fill(&mut self, start: usize, end: usize, mut f: impl FnMut(usize, usize)) {
        let mut i = 0;
        while i < self.0.len() {
            let (a, b) = self.0[i];
            if b <= start {
                i += 1;
                continue;
            }
            if a >= end {
                break;
            }
            let (lo, hi) = (a.max(start), b.min(end));
            f(lo, hi);
            match (a < lo, hi < b) {
                (false, false) => {
                    self.0.remove(i);
                }
                (true, false) => {
                    self.0[i].1 = lo;
                    i += 1;
                }
                (false, true) => {
                    self.0[i].0 = hi;
                    i += 1;
                }
                (true, true) => {
                    self.0[i].1 = lo;
                    self.0.insert(i + 1, (hi, b));
                    i += 2;
                }
            }
        }
    }

    /// Sets the end of the datagram: nothing past it is missing.
    fn set_end(&mut self, end: usize) {
        self.0.retain_mut(|h| {
            h.1 = h.1.min(end);
            h.0 < h.1
        });
    }

    /// True when nothing is missing.
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A datagram's data as far as it has arrived, and what is still missing.
struct Assembly {
    data: Vec<u8>,
    holes: Holes,
    end: Option<usize>,
}

impl Assembly {
    fn new() -> Assembly {
        Assembly {
            data: Vec::new(),
            holes: Holes::new(),
            end: None,
        }
    }

    /// True if a fragment ending at `end` (the last one if `last`) contradicts the datagram
    /// end: data past a known end, a second last fragment with another end, or a last
    /// fragment ending before data already received.
    fn conflicts(&self, end: usize, last: bool) -> bool {
        match self.end {
            Some(e) if last => end != e,
            Some(e) => end > e,
            None => last && self.data.len() > end,
        }
    }

    /// Copies the bytes of a fragment at offset `start` that fill holes (data already
    /// received wins over later copies of the same bytes). True if it added data or, being
    /// the last fragment, the datagram end.
    fn fill(&mut self, start: usize, payload: &[u8], last: bool) -> bool {
        let end = start + payload.len();
        if self.data.len() < end {
            self.data.resize(end, 0);
        }
        let data = &mut self.data;
        let mut added = false;
        self.holes.fill(start, end, |a, b| {
            data[a..b].copy_from_slice(&payload[a - start..b - start]);
            added = true;
        });
        if last && self.end.is_none() {
            self.holes.set_end(end);
            self.end = Some(end);
            added = true;
        }
        added
    }
}

/// What identifies the fragments of one datagram (RFC 791).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    src: Ipv4Addr,
    dst: Ipv4Addr,
    proto: u8,
    id: u16,
}

/// A fragment: its datagram, where its data lies in the packet and in the datagram.
struct Frag {
    key: Key,
    /// Offset of the IP header in the packet.
    ip: usize,
    /// The fragment's data is `data()[lo..hi]` of the packet.
    lo: usize,
    hi: usize,
    /// Offset of the data in the datagram.
    start: usize,
    /// More Fragments is clear.
    last: bool,
}

impl Frag {
    /// Reads packet `p`'s IP header; `Ok(None)` when `p` is not a fragment.
    fn parse(p: &Packet) -> Result<Option<Frag>, Reason> {
        let off = ip_offset(p);
        let ip = Ipv4Packet::new_checked(&p.data()[off..]).map_err(|_| Reason::Malformed)?;
        if !ip.is_fragment() {
            return Ok(None);
        }
        Ok(Some(Frag {
            key: Key {
                src: ip.src(),
                dst: ip.dst(),
                proto: ip.protocol(),
                id: ip.ident(),
            },
            ip: off,
            lo: off + ip.header_len(),
            hi: off + ip.total_len() as usize,
            start: ip.frag_offset() as usize * 8,
            last: !ip.more_frags(),
        }))
    }

    /// Offset of the end of the data in the datagram.
    fn end(&self) -> usize {
        self.start + self.hi - self.lo
    }

    /// True for a fragment without data, a non-last fragment whose length is not a multiple
    /// of 8, or one that ends past the largest datagram.
    fn bad_length(&self) -> bool {
        let n = self.hi - self.lo;
        n == 0
            || (!self.last && !n.is_multiple_of(8))
            || self.lo - self.ip + self.end() > MAX_DATAGRAM
    }
}

/// A datagram being reassembled.
struct Datagram {
    /// Arrival rank, the key of the age order.
    seq: u64,
    /// The headers of fragment zero, or of the first fragment to arrive until it does.
    head: Packet,
    /// `head` is fragment zero.
    first: bool,
    asm: Assembly,
    /// Fragments that added something.
    frags: u64,
}

impl Datagram {
    /// A datagram started by fragment `p`.
    fn new(seq: u64, mut p: Packet, f: &Frag) -> Datagram {
        let mut asm = Assembly::new();
        asm.fill(f.start, &p.data()[f.lo..f.hi], f.last);
        p.take(p.len() - f.lo);
        Datagram {
            seq,
            head: p,
            first: f.start == 0,
            asm,
            frags: 1,
        }
    }

    /// Adds a later fragment, or says why it is dropped.
    fn add(&mut self, mut p: Packet, f: &Frag) -> Result<(), Reason> {
        if self.asm.conflicts(f.end(), f.last) {
            return Err(Reason::Inconsistent);
        }
        if !self.asm.fill(f.start, &p.data()[f.lo..f.hi], f.last) {
            return Err(Reason::Duplicate);
        }
        self.frags += 1;
        if f.start == 0 && !self.first {
            p.take(p.len() - f.lo);
            self.head = p;
            self.first = true;
        }
        Ok(())
    }

    /// Bytes counted in `mem_size`.
    fn mem(&self) -> usize {
        ENTRY_MEM + self.head.len() + self.asm.data.len()
    }

    /// The datagram as one packet: the head's headers, then the data (cut to the largest
    /// datagram), with the total length, More Fragments `mf`, offset 0 and a fresh checksum.
    fn into_packet(self, mf: bool) -> Packet {
        let mut q = self.head;
        let off = ip_offset(&q);
        let hl = q.len() - off;
        let n = self.asm.data.len().min(MAX_DATAGRAM - hl);
        q.put(n).copy_from_slice(&self.asm.data[..n]);
        let mut ip = Ipv4Packet::new_unchecked(&mut q.data_mut()[off..]);
        ip.set_total_len((hl + n) as u16);
        ip.set_frag_offset(0);
        ip.set_more_frags(mf);
        ip.fill_checksum();
        q.set_network_offset(off as isize);
        q.set_transport_offset((off + hl) as isize);
        q
    }
}

/// The IPReassembler element.
pub struct IPReassembler {
    timeout: Timestamp,
    himem: usize,
    table: HashMap<Key, Datagram>,
    /// Datagrams by age: arrival rank to key and first arrival.
    order: BTreeMap<u64, (Key, Timestamp)>,
    seq: u64,
    mem: usize,
    fragments: u64,
    reassembled: u64,
    drops: Drops<Reason>,
}

impl Default for IPReassembler {
    fn default() -> Self {
        IPReassembler {
            timeout: Timestamp::from_secs_f64(30.0),
            himem: 256 * 1024,
            table: HashMap::new(),
            order: BTreeMap::new(),
            seq: 0,
            mem: 0,
            fragments: 0,
            reassembled: 0,
            drops: Drops::default(),
        }
    }
}

impl IPReassembler {
    /// Handles one packet: returns what leaves by output 0 now.
    fn handle(&mut self, p: Packet, now: &mut Option<Timestamp>, cx: &mut Cx) -> Option<Packet> {
        let f = match Frag::parse(&p) {
            Ok(Some(f)) => f,
            Ok(None) => return Some(p),
            Err(why) => {
                self.drops.count(why);
                return None;
            }
        };
        self.fragments += 1;
        if f.bad_length() {
            self.drops.count(Reason::BadLength);
            return None;
        }
        if let Some(d) = self.table.get_mut(&f.key) {
            let before = d.mem();
            if let Err(why) = d.add(p, &f) {
                self.drops.count(why);
                return None;
            }
            self.mem = self.mem + d.mem() - before;
            if d.asm.holes.is_empty() {
                return self.finish(&f.key);
            }
        } else {
            let now = *now.get_or_insert_with(|| cx.now());
            self.seq += 1;
            let d = Datagram::new(self.seq, p, &f);
            self.mem += d.mem();
            self.order.insert(self.seq, (f.key, now));
            self.table.insert(f.key, d);
            if !cx.timer_scheduled(0) {
                cx.schedule_timer(0, now + self.timeout);
            }
        }
        if self.mem > self.himem {
            while self.mem > self.himem / 4 * 3 {
                let Some(d) = self.pop_oldest() else { break };
                self.fail(d, Reason::Memory, cx);
            }
        }
        None
    }

    /// Takes the complete datagram `key` out of the table and builds it.
    fn finish(&mut self, key: &Key) -> Option<Packet> {
        let d = self.table.remove(key)?;
        self.order.remove(&d.seq);
        self.mem -= d.mem();
        if d.head.len() - ip_offset(&d.head) + d.asm.data.len() > MAX_DATAGRAM {
            self.drops.add(Reason::BadLength, d.frags);
            return None;
        }
        self.reassembled += 1;
        Some(d.into_packet(false))
    }

    /// Takes the oldest datagram out of the table.
    fn pop_oldest(&mut self) -> Option<Datagram> {
        let (_, (key, _)) = self.order.pop_first()?;
        let d = self.table.remove(&key)?;
        self.mem -= d.mem();
        Some(d)
    }

    /// Gives up on datagram `d`: counts its fragments and sends what arrived to output 1.
    fn fail(&mut self, d: Datagram, why: Reason, cx: &mut Cx) {
        self.drops.add(why, d.frags);
        if cx.noutputs() > 1 {
            let mf = d.asm.end.is_none();
            cx.push_one(1, d.into_packet(mf));
        }
    }
}

impl Element for IPReassembler {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(Seconds(s)) = args.read("TIMEOUT")? {
            if s <= 0.0 {
                args.error("TIMEOUT: must be positive");
                return Err(());
            }
            self.timeout = Timestamp::from_secs_f64(s);
        }
        let himem = args.read::<usize>("HIMEM")?;
        let max_memory = args.read::<usize>("MAX_MEMORY")?;
        if himem.is_some() && max_memory.is_some() {
            args.error("HIMEM and MAX_MEMORY are the same setting: give one");
            return Err(());
        }
        self.himem = himem.or(max_memory).unwrap_or(self.himem);
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        let mut now = None;
        batch.filter_map(|p| self.handle(p, &mut now, cx));
        if self.table.is_empty() && cx.timer_scheduled(0) {
            cx.cancel_timer(0);
        }
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        let now = cx.now();
        while let Some(&(_, created)) = self.order.values().next() {
            if now < created + self.timeout {
                cx.schedule_timer(0, created + self.timeout);
                return;
            }
            if let Some(d) = self.pop_oldest() {
                self.fail(d, Reason::Expired, cx);
            }
        }
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        while let Some(d) = self.pop_oldest() {
            self.drops.add(Reason::Stopped, d.frags);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("fragments", |e| e.fragments)
            .read("reassembled", |e| e.reassembled)
            .drops(|e| &e.drops)
            .read("length", |e| e.table.len())
            .read("mem_size", |e| e.mem)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "IPReassembler",
    ports: "1/1-2",
    processing: "h/h",
    flow: "x/x",
    source: include_str!("ip_reassembler.rs"),
    make: || Box::<IPReassembler>::default(),
};

#[cfg(test)]
mod tests {
    use super::*;

    fn holes(v: &[(usize, usize)]) -> Holes {
        Holes(v.to_vec())
    }

    /// Fills `[start, end)` and returns the parts that were missing.
    fn fill(h: &mut Holes, start: usize, end: usize) -> Vec<(usize, usize)> {
        let mut got = Vec::new();
        h.fill(start, end, |a, b| got.push((a, b)));
        got
    }

    #[test]
    fn holes_in_order_and_reversed() {
        let mut h = Holes::new();
        assert_eq!(fill(&mut h, 0, 8), [(0, 8)]);
        assert_eq!(fill(&mut h, 8, 16), [(8, 16)]);
        h.set_end(20);
        assert_eq!(h, holes(&[(16, 20)]));
        assert_eq!(fill(&mut h, 16, 20), [(16, 20)]);
        assert!(h.is_empty());

        let mut h = Holes::new();
        assert_eq!(fill(&mut h, 16, 20), [(16, 20)]);
        h.set_end(20);
        assert_eq!(h, holes(&[(0, 16)]));
        assert_eq!(fill(&mut h, 8, 16), [(8, 16)]);
        assert_eq!(fill(&mut h, 0, 8), [(0, 8)]);
        assert!(h.is_empty());
    }

    #[test]
    fn holes_split_and_overlap() {
        let mut h = Holes::new();
        assert_eq!(fill(&mut h, 16, 24), [(16, 24)]);
        assert_eq!(h, holes(&[(0, 16), (24, OPEN)]));
        // Spans a hole, received data, and part of the next hole.
        assert_eq!(fill(&mut h, 8, 32), [(8, 16), (24, 32)]);
        assert_eq!(h, holes(&[(0, 8), (32, OPEN)]));
        // Inside received data: nothing new.
        assert!(fill(&mut h, 8, 32).is_empty());
        // In the middle of a hole: splits it.
        assert_eq!(fill(&mut h, 40, 48), [(40, 48)]);
        assert_eq!(h, holes(&[(0, 8), (32, 40), (48, OPEN)]));
        // Covers everything.
        assert_eq!(fill(&mut h, 0, 56), [(0, 8), (32, 40), (48, 56)]);
        assert_eq!(h, holes(&[(56, OPEN)]));
        h.set_end(56);
        assert!(h.is_empty());
    }

    #[test]
    fn set_end_drops_and_clips_holes() {
        let mut h = holes(&[(0, 8), (16, 24), (32, OPEN)]);
        h.set_end(20);
        assert_eq!(h, holes(&[(0, 8), (16, 20)]));
        h.set_end(16);
        assert_eq!(h, holes(&[(0, 8)]));
    }

    #[test]
    fn assembly_keeps_first_data_on_overlap() {
        let mut a = Assembly::new();
        assert!(a.fill(8, &[1; 8], false));
        assert!(a.fill(0, &[2; 16], false));
        assert_eq!(&a.data[..], &[[2; 8], [1; 8]].concat()[..]);
        assert!(!a.fill(0, &[3; 16], false), "a duplicate adds nothing");
        assert!(a.fill(16, &[4; 4], true), "the last fragment");
        assert!(a.holes.is_empty());
        assert_eq!(a.end, Some(20));
        assert_eq!(a.data.len(), 20);
    }

    #[test]
    fn assembly_last_fragment_may_add_only_the_end() {
        let mut a = Assembly::new();
        assert!(a.fill(0, &[1; 24], false));
        assert!(a.fill(16, &[2; 8], true));
        assert!(a.holes.is_empty());
        assert_eq!(a.data, vec![1; 24]);
    }

    #[test]
    fn assembly_conflicts_with_the_end() {
        let mut a = Assembly::new();
        a.fill(0, &[0; 24], false);
        assert!(a.conflicts(16, true), "last fragment before received data");
        assert!(!a.conflicts(32, true));
        a.fill(24, &[0; 8], true);
        assert!(a.conflicts(40, false), "data past the end");
        assert!(a.conflicts(24, true), "another end");
        assert!(!a.conflicts(32, true));
        assert!(!a.conflicts(16, false));
    }
}
