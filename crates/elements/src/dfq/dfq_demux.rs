//! DFQDemux — rebuilds the packets of DFQ transmission batches
//!
//! Synopsis: `DFQDemux([keywords FLOWS, MAP, LIMIT])`
//!
//! Ports: 1 push input, 1 push output. The downstream half of a DFQ link: each input packet
//! is a transmission batch of DFQSched (`MODE BATCH`) in the format of `sluice_wire::dfq`
//! (magic 0xDF, version 1, length, cycle, first flow id, 64-bit bitmap relative to it, then
//! a 16-bit length and the bytes of each flow's quantum). DFQ does not keep packet
//! boundaries, so DFQDemux appends each quantum to its flow's reassembly buffer and cuts the
//! flow's byte stream (each packet preceded by its 16-bit length) back into packets. Every
//! packet completed leaves at once, in stream order, with its aggregate annotation set to
//! the output flow id that the map table gives for its flow and its timestamp annotation
//! set to the batch's. A packet held whole in one quantum is copied straight from it; bytes
//! of a packet split across quanta wait in a buffer (buffers are recycled, so the steady
//! state allocates nothing).
//!
//! Batches are hostile input: every length is checked before anything is used. A batch that
//! is truncated, has another magic or version, a length field that does not match, a bitmap
//! without bit 0 or past the largest flow id, a quantum that is empty or overruns the batch,
//! or bytes left after its quanta, or that names a flow not below FLOWS, or whose quanta
//! would take the buffered bytes past LIMIT, is dropped whole and counted by reason; no
//! partial batch is applied. Bytes after the batch's length (link padding) are ignored.
//!
//! Arguments:
//! - `FLOWS` (integer, default 16777216): flow ids accepted are those below it.
//! - `MAP` (repeatable: `IN[-IN] OUT`): flow IN leaves with aggregate OUT; a range maps
//!   IN+i to OUT+i. Flows without a MAP keep their id (the identity map).
//! - `LIMIT` (integer, default 16777216): bytes held in all reassembly buffers.
//!
//! Handlers: `batches` (r, batches accepted), `quanta` (r), `packets` (r, packets rebuilt),
//! `bytes` (r, bytes of packets rebuilt), `pending` (r, bytes waiting in buffers),
//! `pending_flows` (r, flows with bytes waiting), `drops`, `drop_details` (r, batches
//! dropped, by reason, and partial packets left when the router stopped).
//!
//! Hot swap: the partial packets move to the new DFQDemux, with the counters; a flow no
//! longer below FLOWS loses its partial packet, counted.
//!
//! Example: `FromDevice(eth1) -> Strip(14) -> DFQDemux(MAP 0-99 1000) -> ToDevice(eth2)`

use std::collections::HashMap;

use sluice_core::toolkit::OutBatch;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::{split_words, Args, FromArg};
use sluice_wire::dfq::{DfqBatch, PACKET_PREFIX_LEN};
use sluice_wire::WireError;

drop_reasons! {
    /// Why DFQDemux drops a batch.
    enum Reason {
        /// Shorter than the header.
        Truncated => "truncated batch",
        /// Another magic number or version.
        BadVersion => "bad magic or version",
        /// The length field is below the header or beyond the packet.
        BadLength => "bad batch length",
        /// Bit 0 unset, or a flow id past 2^32-1.
        BadBitmap => "bad bitmap",
        /// An empty or overrunning quantum, or bytes after the quanta.
        BadQuantum => "bad quantum",
        /// A flow id not below FLOWS.
        NoFlow => "flow out of range",
        /// The buffers would hold more than LIMIT bytes.
        Full => "reassembly memory full",
        /// A partial packet still buffered when the router stopped.
        PartialAtStop => "partial packet at stop",
        /// A partial packet of a flow no longer below FLOWS after a hot swap.
        PartialAtSwap => "partial packet at hot swap",
    }
}

/// Spare buffers kept for reuse.
const SPARE_BUFFERS: usize = 1024;

/// One `MAP` argument.
#[derive(Clone, Copy, Debug)]
struct MapRange {
    first: u32,
    last: u32,
    out: u32,
}

impl FromArg for MapRange {
    fn from_arg(s: &str) -> Result<MapRange, String> {
        let w = split_words(s);
        let [ins, out] = w.as_slice() else {
            return Err("expected IN[-IN] OUT".into());
        };
        let id = |t: &str| t.parse::<u32>().map_err(|_| format!("bad flow id {t:?}"));
        let (first, last) = match ins.split_once('-') {
            Some((a, b)) => (id(a)?, id(b)?),
            None => (id(ins)?, id(ins)?),
        };
        let out = id(out)?;
        if last < first || out.checked_add(last - first).is_none() {
            return Err("bad flow range".into());
        }
        Ok(MapRange { first, last, out })
    }
}

/// The DFQDemux element.
pub struct DFQDemux {
    nflows: u64,
    limit: usize,
    /// MAP ranges, sorted by first id, not overlapping.
    map: Vec<MapRange>,
    /// Partial packets by flow.
    bufs: HashMap<u32, Vec<u8>>,
    spare: Vec<Vec<u8>>,
    pending: usize,
    batches: u64,
    quanta: u64,
    packets: u64,
    bytes: u64,
    drops: Drops<Reason>,
}

impl Default for DFQDemux {
    fn default() -> DFQDemux {
        DFQDemux {
            nflows: 1 << 24,
            limit: 1 << 24,
            map: Vec::new(),
            bufs: HashMap::new(),
            spare: Vec::new(),
            pending: 0,
            batches: 0,
            quanta: 0,
            packets: 0,
            bytes: 0,
            drops: Drops::default(),
        }
    }
}

/// Cuts the complete packets at the front of `stream` out (each a 16-bit length and that
/// many bytes), passing each to `emit`; returns the bytes consumed.
fn cut(stream: &[u8], mut emit: impl FnMut(&[u8])) -> usize {
    let mut at = 0;
    while let Some(len) = stream.get(at..at + PACKET_PREFIX_LEN) {
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let Some(p) = stream.get(at + PACKET_PREFIX_LEN..at + PACKET_PREFIX_LEN + len) else {
            break;
        };
        emit(p);
        at += PACKET_PREFIX_LEN + len;
    }
    at
}

impl DFQDemux {
    /// The output flow id of flow `f`.
    fn map(&self, f: u32) -> u32 {
        let i = self.map.partition_point(|r| r.first <= f);
        match i.checked_sub(1).map(|i| self.map[i]) {
            Some(r) if f <= r.last => r.out + (f - r.first),
            _ => f,
        }
    }

    /// Checks a batch; the reason to drop it, if any.
    fn check(&self, data: &[u8]) -> Result<(), Reason> {
        let b = DfqBatch::new_checked(data).map_err(|e| match e {
            WireError::Truncated => Reason::Truncated,
            WireError::BadVersion => Reason::BadVersion,
            WireError::BadTotalLength => Reason::BadLength,
            WireError::Unsupported => Reason::BadBitmap,
            _ => Reason::BadQuantum,
        })?;
        let last = u64::from(b.first()) + u64::from(63 - b.bitmap().leading_zeros());
        if last >= self.nflows {
            return Err(Reason::NoFlow);
        }
        let grow: usize = b.quanta().map(|(_, q)| q.len()).sum();
        if self.pending + grow > self.limit {
            return Err(Reason::Full);
        }
        Ok(())
    }

    /// Appends quantum `q` to flow `f`'s stream and sends the packets it completes.
    fn quantum(&mut self, f: u32, q: &[u8], ts: Timestamp, out: &mut OutBatch, cx: &mut Cx) {
        let agg = self.map(f);
        let mut made = 0u64;
        let mut made_bytes = 0u64;
        let mut emit = |d: &[u8]| {
            let mut p = Packet::from_bytes(d);
            p.anno_mut().aggregate = agg;
            p.set_timestamp(ts);
            made += 1;
            made_bytes += d.len() as u64;
            out.add(p, cx);
        };
        match self.bufs.get_mut(&f) {
            None => {
                let used = cut(q, &mut emit);
                if used < q.len() {
                    let mut b = self.spare.pop().unwrap_or_default();
                    b.extend_from_slice(&q[used..]);
                    self.pending += b.len();
                    self.bufs.insert(f, b);
                }
            }
            Some(b) => {
                b.extend_from_slice(q);
                let used = cut(b, &mut emit);
                b.drain(..used);
                self.pending = self.pending + q.len() - used;
                if b.is_empty() {
                    if let Some(b) = self.bufs.remove(&f) {
                        if self.spare.len() < SPARE_BUFFERS {
                            self.spare.push(b);
                        }
                    }
                }
            }
        }
        self.packets += made;
        self.bytes += made_bytes;
    }
}

impl Element for DFQDemux {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("FLOWS", &mut self.nflows)?;
        args.read_into("LIMIT", &mut self.limit)?;
        let mut map = args.read_all::<MapRange>("MAP")?;
        map.sort_by_key(|r| r.first);
        if map.windows(2).any(|w| w[1].first <= w[0].last) {
            args.error("MAP: overlapping ranges");
            return Err(());
        }
        self.map = map;
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let mut out = OutBatch::new(0);
        for p in batch {
            if let Err(r) = self.check(p.data()) {
                self.drops.count(r);
                continue;
            }
            self.batches += 1;
            let ts = p.timestamp();
            let b = DfqBatch::new_unchecked(p.data());
            for (f, q) in b.quanta() {
                self.quanta += 1;
                self.quantum(f, q, ts, &mut out, cx);
            }
        }
        out.flush(cx);
    }

    /// A hot swap carries the partial packets over, with the counters and drop counts; those
    /// of flows no longer below FLOWS are dropped, counted ("partial packet at hot swap").
    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<DFQDemux>() else {
            return;
        };
        self.drops.take(&mut old.drops);
        self.batches += old.batches;
        self.quanta += old.quanta;
        self.packets += old.packets;
        self.bytes += old.bytes;
        for (f, b) in old.bufs.drain() {
            if u64::from(f) < self.nflows {
                self.pending += b.len();
                self.bufs.insert(f, b);
            } else {
                self.drops.count(Reason::PartialAtSwap);
            }
        }
        old.pending = 0;
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        self.drops
            .add(Reason::PartialAtStop, self.bufs.len() as u64);
        self.bufs.clear();
        self.pending = 0;
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("batches", |e| e.batches)
            .read("quanta", |e| e.quanta)
            .read("packets", |e| e.packets)
            .read("bytes", |e| e.bytes)
            .read("pending", |e| e.pending)
            .read("pending_flows", |e| e.bufs.len())
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DFQDemux",
    ports: "1/1",
    processing: "h/h",
    flow: "",
    source: include_str!("dfq_demux.rs"),
    make: || Box::new(DFQDemux::default()),
};
