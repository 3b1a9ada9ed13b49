//! DFQSched — Discretized Fair Queuing link scheduler over per-flow queues
//!
//! Synopsis: `DFQSched([keywords FLOWS, BANDWIDTH, CYCLE, RATE, BURST, DELAY, RESERVE,
//! CAPACITY, LIMIT, MODE, MTU])`
//!
//! Ports: 1 push input, 1 pull output. DFQSched holds one queue per flow; a packet's flow is
//! its aggregate annotation (AggregateIP, AggregateIPFlows), from 0 to FLOWS-1.
//!
//! Reservations (the Panama router's DFQ): flow f reserves a long-term rate B_f (RATE), a
//! burst P_f (BURST, bytes) and a per-hop delay D_f (DELAY). Time is cut into scheduling
//! cycles of length T (CYCLE); in each cycle every eligible backlogged flow gives at most one
//! quantum of Q_f = P_f·T/D_f bytes (its instantaneous bandwidth P_f/D_f times T) to the
//! cycle's transmission batch, without regard to packet boundaries. Eligibility is the
//! reservation's service allowance, kept as credit: each flow starts with P_f bytes of credit,
//! earns B_f·T per cycle up to P_f, and a quantum takes at most what the credit holds. A
//! flow whose credit is spent has had its service for its service cycle (P_f bytes per
//! P_f/B_f): it becomes ineligible and waits in a timing wheel for the cycle in which its
//! credit is back, however long its queue. Cycles follow the link: a cycle ends when every
//! eligible flow has had its quantum, and the next starts at once (so cycles are at most T
//! long when the reservations fit the link), or, after an idle link, at the cycle the clock
//! has reached. The scheduler is work-conserving: when only ineligible flows are backlogged,
//! it moves on to the next cycle in which one of them wakes instead of leaving the link idle,
//! so spare capacity goes to them.
//!
//! Cost: a pull or push costs the same whatever the number of flows. Eligible backlogged
//! flows are bits of a 64-ary hierarchical bitmap walked in flow-id order (which is also the
//! order of the batch bitmap); ineligible flows sit in a 1024-slot timing wheel keyed by the
//! cycle in which their credit renews. There is no scan over flows and no heap. The flow
//! queues are linked lists in one shared pool of packet slots; a quantum reads one 64-byte
//! flow record, the head packet's slot and the bytes it serves, and the walk fetches those
//! of the next flows ahead of time, so that their cache misses overlap.
//!
//! Output modes:
//! - `MODE BATCH` (default): each pulled packet is one transmission batch of a cycle in the
//!   inter-router format of `sluice_wire::dfq` (read by DFQDemux): a 20-byte header (magic
//!   0xDF, version 1, length, cycle number, first flow id, a 64-bit bitmap of the flows
//!   present relative to the first), then per present flow a 16-bit quantum length and the
//!   quantum. A cycle's quanta fill as many batch packets as their flow ids (64 per bitmap)
//!   and MTU need. A flow's byte stream is its packets, each preceded by its length in 16
//!   bits, so packets longer than 65535 bytes are dropped. Batch packets carry no
//!   annotations; their timestamp is unset.
//! - `MODE PACKET`: for links to ordinary hosts. Packets leave unchanged, each once a quantum
//!   has served its last byte, in the order the scheduler completes them.
//!
//! Hot swap: the queued packets move to the new DFQSched, each flow's in order with its
//! arrival time, admitted as new arrivals (FLOWS, CAPACITY and LIMIT of the new configuration
//! apply); a head packet partly sent in batches goes on from the byte where it stopped, or,
//! when the new one is in packet mode, is dropped and counted. Counters and per-flow
//! statistics carry over.
//!
//! Delay bound: with the reservations admitted on the link (`admitted`: the quanta of all
//! flows, with their per-quantum and per-batch overhead in batch mode, fit in C·T bytes,
//! C = BANDWIDTH) every cycle's batch leaves within T. A flow whose arrivals obey its
//! reservation as a token bucket (at most P_f + B_f·t bytes in any interval t, counting the
//! 2-byte length prefix in batch mode) is never short of credit for its backlog, so each of
//! its bytes waits for at most ⌈P_f/Q_f⌉ quanta of its own (⌈P_f/Q_f⌉·T ≈ D_f), plus the
//! cycle under way when it arrived, plus the cycle in which its quantum's batch is sent, plus
//! one cycle by which credit earned per cycle lags the clock: the bound reported is
//! d_f = (⌈P_f/Q_f⌉ + 3)·T, the paper's D_f plus a term proportional to T and independent of
//! the number of flows. `max_delay` measures, per flow, the time from a packet's arrival to
//! the pull that served its last byte (transmission on the link not included).
//!
//! Arguments:
//! - `FLOWS` (integer 1 to 16777216, default 1024): flow ids 0 to FLOWS-1. Packets with a
//!   larger aggregate annotation are dropped.
//! - `BANDWIDTH` (bandwidth, default 1Gbps): the link rate C.
//! - `CYCLE` (time, default 1ms): the scheduling cycle T.
//! - `RATE`, `BURST`, `DELAY`: the default reservation, for flows without RESERVE.
//!   Defaults: RATE = BANDWIDTH/FLOWS, BURST 1536 bytes, DELAY 16·CYCLE (a 96-byte quantum).
//! - `RESERVE` (repeatable: `FLOW[-FLOW] RATE BURST DELAY`, e.g. `RESERVE 3-5 1Mbps 3000
//!   10ms`): the reservation of one flow or a range. DELAY must be at least CYCLE and the
//!   quantum at most 65535 bytes (and fit in MTU in batch mode).
//! - `CAPACITY` (integer, default 1000): packets per flow queue.
//! - `LIMIT` (integer, default 1000000, below 2^32-1): packets in all queues together.
//! - `MODE` (`BATCH` or `PACKET`, default `BATCH`).
//! - `MTU` (integer, default 1500): largest batch packet, in bytes.
//!
//! Handlers: `flow ID` (r, with a parameter: `bytes packets backlog queued max_delay
//! delay_bound drops` of flow ID: bytes and packets served, bytes and packets queued, the
//! largest delay seen and the bound, in seconds, and packets dropped), `flows` (r, the same
//! line, preceded by the id, for every flow that has had a packet), `delay_bound ID`,
//! `quantum ID` (r, with a parameter), `cycle` (r, the current cycle number), `batches` (r,
//! batch packets sent), `packets`, `bytes` (r, served in all), `length` (r, packets queued),
//! `admitted` (r, true if the reservations fit the link), `load` (r, bytes a cycle takes when
//! every flow sends a quantum, with overhead), `cycle_bytes` (r, C·T), `drops`, `drop_details`
//! (r: no such flow, flow queue full, scheduler full, too long for the batch format, queued
//! when the router stopped).
//!
//! Example: `FromDevice(eth0) -> AggregateIP(ip dst) -> DFQSched(FLOWS 256, BANDWIDTH
//! 100Mbps, CYCLE 1ms, RESERVE 7 2Mbps 4000 4ms) -> LinkUnqueue(0, 100Mbps) -> ToDevice(eth1)`

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::ptr::NonNull;

use sluice_core::cpu::prefetch;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{NotifierId, Packet, Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{split_words, Args, Bandwidth, FromArg, Seconds, Word};
use sluice_wire::dfq::{DfqBatchBuilder, HEADER_LEN, PACKET_PREFIX_LEN, QUANTUM_HEADER_LEN};
use sluice_wire::dfq::{MAX_BATCH_LEN, WINDOW};

use super::idset::{IdSet, Wheel, NONE, WHEEL_SLOTS};

drop_reasons! {
    /// Why DFQSched drops a packet.
    enum Reason {
        /// The aggregate annotation is not below FLOWS.
        NoFlow => "no such flow",
        /// The flow's queue held CAPACITY packets.
        FlowFull => "flow queue full",
        /// All queues together held LIMIT packets.
        Full => "scheduler full",
        /// Longer than a 16-bit length prefix allows (batch mode).
        TooLong => "too long for the batch format",
        /// Still queued when the router stopped.
        HeldAtStop => "queued at stop",
        /// Partly sent in batches before a hot swap to packet mode.
        PartlySent => "partly sent before a hot swap",
    }
}

/// Credit is kept in 1/65536 of a byte, so that small rates earn credit every cycle.
const CREDIT_SHIFT: u32 = 16;
/// One byte of credit.
const CREDIT_BYTE: u64 = 1 << CREDIT_SHIFT;
/// Largest FLOWS.
const MAX_FLOWS: usize = 1 << 24;

/// A reservation: rate B (bytes/s), burst P (bytes), delay D (s).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Reservation {
    rate: f64,
    burst: u64,
    delay: f64,
}

/// One `RESERVE` argument: a flow range and its reservation.
struct Reserve {
    first: usize,
    last: usize,
    res: Reservation,
}

impl FromArg for Reserve {
    fn from_arg(s: &str) -> Result<Reserve, String> {
        let w = split_words(s);
        let [flows, rate, burst, delay] = w.as_slice() else {
            return Err("expected FLOW[-FLOW] RATE BURST DELAY".into());
        };
        let id = |t: &str| t.parse::<usize>().map_err(|_| format!("bad flow id {t:?}"));
        let (first, last) = match flows.split_once('-') {
            Some((a, b)) => (id(a)?, id(b)?),
            None => (id(flows)?, id(flows)?),
        };
        if last < first {
            return Err("empty flow range".into());
        }
        Ok(Reserve {
            first,
            last,
            res: Reservation {
                rate: Bandwidth::from_arg(rate)?.0,
                burst: u64::from_arg(burst)?,
                delay: Seconds::from_arg(delay)?.0,
            },
        })
    }
}

/// A reservation turned into per-cycle quantities.
#[derive(Clone, Copy, Debug)]
struct Class {
    res: Reservation,
    /// Q_f, bytes.
    quantum: u32,
    /// Credit earned per cycle (B_f·T, in credit units, at least 1).
    refill: u64,
    /// Most credit (P_f, in credit units).
    cap: u64,
}

/// Where a flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Not backlogged, with credit.
    Idle,
    /// Backlogged, with credit: in the eligible set.
    Eligible,
    /// Out of credit: in the wheel.
    Parked,
}

/// One flow's scheduling state: all that a quantum reads or writes, in one cache line.
#[repr(align(64))]
struct Flow {
    /// Bytes queued, prefixes included, not yet served.
    backlog: u64,
    credit: u64,
    /// The cycle up to which credit has been earned.
    last: u64,
    /// The wake cycle while parked.
    wake: u64,
    /// The first and last slots of the queue (NONE when empty).
    head: u32,
    tail: u32,
    /// Bytes of the head packet's stream (prefix included) already served.
    served: u32,
    /// Packets queued.
    queued: u32,
    class: u32,
    /// The next flow in the same wheel slot.
    link: u32,
    state: State,
}

/// One flow's statistics, touched once per packet.
#[derive(Default)]
struct Stats {
    /// Bytes of the packets served whole (prefixes included).
    bytes: u64,
    packets: u64,
    drops: u64,
    max_delay: Timestamp,
}

/// The data of a queued packet, read without going through its descriptor.
struct Data(NonNull<u8>);

// SAFETY: `Data` points into the buffer of the packet in the same slot, which the slot owns
// (and which is `Send`); it is only read while that packet is there, unchanged.
unsafe impl Send for Data {}

/// A queued packet in the shared pool, or a free slot.
struct Slot {
    packet: Option<Packet>,
    /// `packet`'s data, `len` bytes.
    data: Data,
    len: u32,
    /// The next slot of the same queue, or of the free list.
    next: u32,
    /// Arrival time.
    at: Timestamp,
}

/// Flows looked ahead of the one being served (a power of two).
const AHEAD: usize = 32;
/// Position in the look-ahead at which a flow's head slot is fetched (its record is there).
const FETCH_SLOT: usize = 24;
/// Position at which the slot after its head is fetched, if its quantum reaches it.
const FETCH_NEXT: usize = 18;
/// Position at which the bytes its next quantum serves are fetched (its slots are there).
const FETCH_DATA: usize = 12;

/// Fetches every cache line that bytes `from..to` after `base` touch (the first line may
/// start before `from`, so a range of Q bytes can need ⌈Q/64⌉ + 1 lines).
#[inline(always)]
fn prefetch_lines(base: *const u8, from: usize, to: usize) {
    let first = base.wrapping_add(from);
    let end = base.wrapping_add(to);
    let mut line = first.wrapping_sub(first as usize % 64);
    while line < end {
        prefetch(line);
        line = line.wrapping_add(64);
    }
}

/// Output mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Batch,
    Packet,
}

/// The DFQSched element.
pub struct DFQSched {
    mode: Mode,
    nflows: usize,
    bandwidth: f64,
    cycle_ns: i64,
    mtu: usize,
    capacity: usize,
    limit: usize,
    classes: Vec<Class>,
    flows: Vec<Flow>,
    stats: Vec<Stats>,
    /// Queued packets of all flows, and the head of the list of free slots.
    slots: Vec<Slot>,
    free: u32,
    eligible: IdSet,
    /// The next eligible flows of the current cycle, from `pos` on, in id order: a ring of
    /// `ahead_len` flows from `ahead_at`; the walk goes on from `ahead_end` unless
    /// `ahead_done`.
    ahead: [u32; AHEAD],
    ahead_at: usize,
    ahead_len: usize,
    ahead_end: usize,
    ahead_done: bool,
    wheel: Wheel,
    /// Parked flows with packets queued.
    parked_backlogged: usize,
    /// The current cycle and the next flow id it may serve.
    cycle: u64,
    pos: usize,
    /// When cycle 0 started (the first packet).
    start: Option<Timestamp>,
    /// Packets queued in all flows.
    queued: usize,
    /// Completed packets not yet pulled (packet mode).
    ready: VecDeque<Packet>,
    /// The batch being built (batch mode), MTU bytes.
    scratch: Vec<u8>,
    batches: u64,
    bytes: u64,
    packets: u64,
    drops: Drops<Reason>,
    empty_note: NotifierId,
    admitted: bool,
    load: u64,
}

impl Default for DFQSched {
    fn default() -> DFQSched {
        DFQSched {
            mode: Mode::Batch,
            nflows: 0,
            bandwidth: 125e6,
            cycle_ns: 1_000_000,
            mtu: 1500,
            capacity: 1000,
            limit: 1_000_000,
            classes: Vec::new(),
            flows: Vec::new(),
            stats: Vec::new(),
            slots: Vec::new(),
            free: NONE,
            eligible: IdSet::new(1),
            ahead: [0; AHEAD],
            ahead_at: 0,
            ahead_len: 0,
            ahead_end: 0,
            ahead_done: false,
            wheel: Wheel::new(),
            parked_backlogged: 0,
            cycle: 0,
            pos: 0,
            start: None,
            queued: 0,
            ready: VecDeque::new(),
            scratch: Vec::new(),
            batches: 0,
            bytes: 0,
            packets: 0,
            drops: Drops::default(),
            empty_note: 0,
            admitted: true,
            load: 0,
        }
    }
}

impl DFQSched {
    /// The cycle length in seconds.
    fn t(&self) -> f64 {
        self.cycle_ns as f64 * 1e-9
    }

    /// Bytes before each packet in a flow's stream.
    fn prefix(&self) -> usize {
        match self.mode {
            Mode::Batch => PACKET_PREFIX_LEN,
            Mode::Packet => 0,
        }
    }

    /// Turns a reservation into a class, or says why it cannot be one.
    fn class(&self, res: Reservation) -> Result<Class, String> {
        let t = self.t();
        if res.delay < t {
            return Err("DELAY must be at least CYCLE".into());
        }
        if res.burst == 0 || res.rate <= 0.0 {
            return Err("RATE and BURST must be positive".into());
        }
        let quantum = (res.burst as f64 * t / res.delay).round().max(1.0);
        let room = match self.mode {
            Mode::Batch => self.mtu.saturating_sub(HEADER_LEN + QUANTUM_HEADER_LEN),
            Mode::Packet => usize::from(u16::MAX),
        };
        if quantum > room.min(usize::from(u16::MAX)) as f64 {
            return Err(format!("quantum of {quantum} bytes too large"));
        }
        Ok(Class {
            res,
            quantum: quantum as u32,
            refill: ((res.rate * t * CREDIT_BYTE as f64).round() as u64).max(1),
            cap: res.burst.saturating_mul(CREDIT_BYTE),
        })
    }

    /// Flow `f`'s class.
    fn class_of(&self, f: usize) -> &Class {
        &self.classes[self.flows[f].class as usize]
    }

    /// Flow `f`'s delay bound in seconds, (⌈P/Q⌉ + 3)·T.
    fn delay_bound(&self, f: usize) -> f64 {
        let c = self.class_of(f);
        (c.res.burst.div_ceil(u64::from(c.quantum)) + 3) as f64 * self.t()
    }

    /// Adds the credit flow `f` earned since its last update, up to its cap.
    fn earn(&mut self, f: usize) {
        let (refill, cap) = {
            let c = self.class_of(f);
            (c.refill, c.cap)
        };
        let fl = &mut self.flows[f];
        let earned = refill.saturating_mul(self.cycle.saturating_sub(fl.last));
        fl.credit = fl.credit.saturating_add(earned).min(cap);
        fl.last = fl.last.max(self.cycle);
    }

    /// Puts flow `f` (out of credit) in the wheel until its credit holds a byte again.
    fn park(&mut self, f: usize) {
        let refill = self.class_of(f).refill;
        let fl = &mut self.flows[f];
        let wait = (CREDIT_BYTE - fl.credit.min(CREDIT_BYTE))
            .div_ceil(refill)
            .max(1);
        fl.wake = self.cycle + wait;
        fl.state = State::Parked;
        if fl.backlog > 0 {
            self.parked_backlogged += 1;
        }
        fl.link = self.wheel.insert(f as u32, fl.wake);
    }

    /// Empties the wheel slot of cycle `slot`: wakes its flows whose wake cycle has come
    /// (earning their credit), and puts the others back.
    fn release(&mut self, slot: u64) {
        let mut f = self.wheel.take(slot);
        while f != NONE {
            let i = f as usize;
            f = self.flows[i].link;
            self.wheel.len -= 1;
            if self.flows[i].wake > self.cycle {
                let wake = self.flows[i].wake;
                self.flows[i].link = self.wheel.insert(i as u32, wake);
                continue;
            }
            self.earn(i);
            if self.flows[i].backlog > 0 {
                self.parked_backlogged -= 1;
                self.flows[i].state = State::Eligible;
                self.make_eligible(i);
            } else {
                self.flows[i].state = State::Idle;
            }
        }
    }

    /// Adds flow `f` to the eligible set (the look-ahead starts again).
    fn make_eligible(&mut self, f: usize) {
        self.eligible.insert(f);
        self.ahead_len = 0;
        self.ahead_end = self.pos;
        self.ahead_done = false;
    }

    /// Ends the current cycle: the next one is the one after, or the one the clock reached
    /// (a jump of more than a wheel turn visits each slot once).
    fn end_cycle(&mut self, now: Timestamp) {
        let start = *self.start.get_or_insert(now);
        let by_clock = ((now - start).0.max(0) / self.cycle_ns) as u64;
        let target = (self.cycle + 1).max(by_clock);
        self.pos = 0;
        self.ahead_len = 0;
        self.ahead_end = 0;
        self.ahead_done = false;
        if target - self.cycle >= WHEEL_SLOTS {
            self.cycle = target;
            for slot in 0..WHEEL_SLOTS {
                if self.wheel.is_occupied(slot) {
                    self.release(slot);
                }
            }
        }
        while self.cycle < target {
            self.cycle += 1;
            if self.wheel.is_occupied(self.cycle) {
                self.release(self.cycle);
            }
        }
    }

    /// The next eligible flow of the current cycle (from `pos` on), without moving on.
    fn peek(&mut self) -> Option<usize> {
        if self.ahead_len == 0 {
            while self.ahead_len < AHEAD && self.walk() {}
        }
        (self.ahead_len > 0).then(|| self.ahead[self.ahead_at] as usize)
    }

    /// Appends the next eligible flow of the walk to the look-ahead and fetches its record;
    /// false at the end of the cycle.
    fn walk(&mut self) -> bool {
        if self.ahead_done {
            return false;
        }
        let Some(g) = self.eligible.next(self.ahead_end) else {
            self.ahead_done = true;
            return false;
        };
        prefetch(&self.flows[g]);
        self.ahead[(self.ahead_at + self.ahead_len) % AHEAD] = g as u32;
        self.ahead_len += 1;
        self.ahead_end = g + 1;
        true
    }

    /// The flow `at` places ahead of the one being served, if the look-ahead reaches it.
    fn ahead_flow(&self, at: usize) -> Option<usize> {
        (self.ahead_len > at).then(|| self.ahead[(self.ahead_at + at) % AHEAD] as usize)
    }

    /// Drops the flow at the front of the look-ahead (the one just served), walks one flow
    /// further, and fetches what the flows coming up will need, each fetch reading only
    /// lines fetched before: the head slot of the flow FETCH_SLOT places ahead; the slot
    /// after it, for the one FETCH_NEXT places ahead if its quantum goes past its head
    /// packet; and for the one FETCH_DATA places ahead, the bytes its quantum serves from
    /// those two packets, and the descriptor and statistics of each packet it finishes.
    fn advance(&mut self) {
        self.ahead_at = (self.ahead_at + 1) % AHEAD;
        self.ahead_len -= 1;
        self.walk();
        let prefix = self.prefix();
        if let Some(g) = self.ahead_flow(FETCH_SLOT) {
            if let Some(s) = self.slots.get(self.flows[g].head as usize) {
                prefetch(s);
            }
        }
        if let Some(g) = self.ahead_flow(FETCH_NEXT) {
            let fl = &self.flows[g];
            if let Some(s) = self.slots.get(fl.head as usize) {
                let quantum = self.classes[fl.class as usize].quantum as usize;
                if prefix + s.len as usize - fl.served as usize <= quantum {
                    if let Some(n) = self.slots.get(s.next as usize) {
                        prefetch(n);
                    }
                }
            }
        }
        if let Some(g) = self.ahead_flow(FETCH_DATA) {
            let fl = &self.flows[g];
            let mut left = self.classes[fl.class as usize].quantum as usize;
            let (mut at, mut served) = (fl.head, fl.served as usize);
            for _ in 0..2 {
                let Some(s) = self.slots.get(at as usize) else {
                    break;
                };
                let framed = prefix + s.len as usize;
                let take = (framed - served).min(left);
                let from = served.saturating_sub(prefix);
                prefetch_lines(
                    s.data.0.as_ptr(),
                    from,
                    (served + take).saturating_sub(prefix),
                );
                if served + take < framed {
                    break;
                }
                prefetch(&self.stats[g]);
                if let Some(p) = &s.packet {
                    p.prefetch_for_free();
                }
                left -= take;
                if left == 0 {
                    break;
                }
                (at, served) = (s.next, 0);
            }
        }
    }

    /// The next flow to serve in the current cycle, moving on to later cycles as needed;
    /// `None` when nothing is backlogged.
    fn next_flow(&mut self, now: Timestamp) -> Option<usize> {
        loop {
            if let Some(f) = self.peek() {
                return Some(f);
            }
            if self.eligible.is_empty() && self.parked_backlogged == 0 {
                return None;
            }
            self.end_cycle(now);
            while self.eligible.is_empty() && self.parked_backlogged > 0 {
                let c = self.wheel.next_occupied(self.cycle)?;
                self.cycle = c;
                self.release(c);
            }
        }
    }

    /// The size of flow `f`'s next quantum: Q_f, or less if its credit or backlog is less.
    fn quantum_size(&self, f: usize) -> usize {
        let fl = &self.flows[f];
        let q = u64::from(self.class_of(f).quantum);
        q.min(fl.credit >> CREDIT_SHIFT).min(fl.backlog) as usize
    }

    /// Serves one quantum of flow `f` (the front of the look-ahead), copying its bytes into
    /// `out` (batch mode; `out` exactly the quantum's size) or putting the packets it
    /// completes in `ready`.
    fn serve(&mut self, f: usize, n: usize, mut out: Option<&mut [u8]>, now: Timestamp) {
        let prefix = self.prefix();
        let fl = &mut self.flows[f];
        let mut done = 0;
        while done < n && fl.head != NONE {
            let s = fl.head as usize;
            let slot = &mut self.slots[s];
            let len = slot.len as usize;
            let served = fl.served as usize;
            let framed = prefix + len;
            let take = (framed - served).min(n - done);
            if let Some(out) = out.as_deref_mut() {
                let dst = &mut out[done..done + take];
                let head = prefix.saturating_sub(served).min(take);
                if head > 0 {
                    let lenb = (len as u16).to_be_bytes();
                    dst[..head].copy_from_slice(&lenb[served..served + head]);
                }
                // SAFETY: `slot.packet` holds the packet whose `len` data bytes `slot.data`
                // points to; it has not changed since it was queued.
                let data = unsafe { std::slice::from_raw_parts(slot.data.0.as_ptr(), len) };
                let from = (served + head).saturating_sub(prefix);
                dst[head..].copy_from_slice(&data[from..from + take - head]);
            }
            done += take;
            if served + take < framed {
                fl.served += take as u32;
                break;
            }
            fl.served = 0;
            fl.queued -= 1;
            fl.head = slot.next;
            if fl.head == NONE {
                fl.tail = NONE;
            }
            slot.next = self.free;
            self.free = s as u32;
            let p = slot.packet.take();
            let st = &mut self.stats[f];
            st.packets += 1;
            st.bytes += framed as u64;
            st.max_delay = st.max_delay.max(now - slot.at);
            self.packets += 1;
            self.queued -= 1;
            if let (Mode::Packet, Some(p)) = (self.mode, p) {
                self.ready.push_back(p);
            }
        }
        fl.backlog -= done as u64;
        fl.credit -= (done as u64) << CREDIT_SHIFT;
        self.bytes += done as u64;
        self.pos = f + 1;
        let (backlog, credit) = (fl.backlog, fl.credit);
        self.advance();
        if backlog == 0 || credit < CREDIT_BYTE {
            self.eligible.remove(f);
            self.flows[f].state = State::Idle;
            if credit < CREDIT_BYTE {
                self.park(f);
            }
        }
    }

    /// Forms the next batch packet (batch mode).
    fn next_batch(&mut self, now: Timestamp) -> Option<Packet> {
        let mut f = self.next_flow(now)?;
        let mut b = DfqBatchBuilder::start(f as u32);
        let mut buf = std::mem::take(&mut self.scratch);
        loop {
            self.earn(f);
            let n = self.quantum_size(f);
            let off = b.quantum(&mut buf, f as u32, n as u16);
            self.serve(f, n, Some(&mut buf[off..off + n]), now);
            match self.peek() {
                Some(g) if b.covers(g as u32) => {
                    let mut need = u64::from(self.class_of(g).quantum);
                    need = need.min(self.flows[g].backlog);
                    if b.len() + QUANTUM_HEADER_LEN + need as usize > self.mtu {
                        break;
                    }
                    f = g;
                }
                _ => break,
            }
        }
        let len = b.finish(&mut buf, self.cycle as u32);
        let p = Packet::from_bytes(&buf[..len]);
        self.scratch = buf;
        self.batches += 1;
        Some(p)
    }

    /// Serves quanta until a packet is complete or nothing is queued (packet mode).
    fn serve_packets(&mut self, now: Timestamp) {
        while self.ready.is_empty() {
            let Some(f) = self.next_flow(now) else {
                return;
            };
            self.earn(f);
            let n = self.quantum_size(f);
            self.serve(f, n, None, now);
        }
    }

    /// Queues packet `p` on the flow its aggregate annotation names, arrived at `at`, or
    /// drops it, counting why; true if queued.
    fn admit(&mut self, p: Packet, at: Timestamp) -> bool {
        let f = p.anno().aggregate as usize;
        let reason = if f >= self.nflows {
            Reason::NoFlow
        } else if self.prefix() > 0 && p.len() > usize::from(u16::MAX) {
            Reason::TooLong
        } else if self.flows[f].queued as usize >= self.capacity {
            Reason::FlowFull
        } else if self.queued >= self.limit {
            Reason::Full
        } else {
            self.enqueue(f, p, at);
            return true;
        };
        self.drops.count(reason);
        if let Some(st) = self.stats.get_mut(f) {
            st.drops += 1;
        }
        false
    }

    /// Queues packet `p` (already admitted) on flow `f`.
    fn enqueue(&mut self, f: usize, p: Packet, now: Timestamp) {
        let len = p.len();
        let framed = (self.prefix() + len) as u64;
        let slot = Slot {
            data: Data(NonNull::from(p.data()).cast()),
            packet: Some(p),
            len: len as u32,
            next: NONE,
            at: now,
        };
        let s = match self.slots.get_mut(self.free as usize) {
            Some(free) => {
                let s = self.free;
                self.free = free.next;
                *free = slot;
                if let Some(n) = self.slots.get(self.free as usize) {
                    prefetch(n);
                }
                s
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        };
        let fl = &mut self.flows[f];
        match self.slots.get_mut(fl.tail as usize) {
            Some(t) => t.next = s,
            None => fl.head = s,
        }
        fl.tail = s;
        fl.queued += 1;
        let was_empty = fl.backlog == 0;
        fl.backlog += framed;
        self.queued += 1;
        if was_empty {
            match fl.state {
                State::Idle => {
                    fl.state = State::Eligible;
                    self.make_eligible(f);
                }
                State::Parked => self.parked_backlogged += 1,
                State::Eligible => {}
            }
        }
    }

    /// Frees every packet held and empties the queues.
    fn empty(&mut self) {
        for fl in &mut self.flows {
            fl.queued = 0;
            fl.head = NONE;
            fl.tail = NONE;
        }
        self.slots.clear();
        self.free = NONE;
        self.queued = 0;
        self.ready.clear();
    }

    /// Flow `f`'s line for the `flow` and `flows` handlers.
    fn flow_line(&self, f: usize) -> String {
        let (fl, st) = (&self.flows[f], &self.stats[f]);
        format!(
            "{} {} {} {} {:.9} {:.9} {}",
            st.bytes + u64::from(fl.served),
            st.packets,
            fl.backlog,
            fl.queued,
            st.max_delay.as_secs_f64(),
            self.delay_bound(f),
            st.drops
        )
    }

    /// Parses a flow id handler parameter.
    fn flow_param(&self, p: &str) -> Result<usize, String> {
        match p.trim().parse::<usize>() {
            Ok(f) if f < self.nflows => Ok(f),
            _ => Err(format!("expected a flow id below {}", self.nflows)),
        }
    }
}

impl Element for DFQSched {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.nflows = args.read::<usize>("FLOWS")?.unwrap_or(1024);
        if self.nflows == 0 || self.nflows > MAX_FLOWS {
            args.error(format!("FLOWS must be between 1 and {MAX_FLOWS}"));
            return Err(());
        }
        if let Some(Bandwidth(bw)) = args.read("BANDWIDTH")? {
            self.bandwidth = bw;
        }
        if let Some(Seconds(t)) = args.read("CYCLE")? {
            self.cycle_ns = (t * 1e9).round() as i64;
        }
        if self.bandwidth <= 0.0 || self.cycle_ns <= 0 {
            args.error("BANDWIDTH and CYCLE must be positive");
            return Err(());
        }
        let rate = args.read::<Bandwidth>("RATE")?;
        let burst = args.read::<u64>("BURST")?;
        let delay = args.read::<Seconds>("DELAY")?;
        let reserves = args.read_all::<Reserve>("RESERVE")?;
        args.read_into("CAPACITY", &mut self.capacity)?;
        args.read_into("LIMIT", &mut self.limit)?;
        args.read_into("MTU", &mut self.mtu)?;
        if let Some(Word(m)) = args.read::<Word>("MODE")? {
            self.mode = match m.to_ascii_uppercase().as_str() {
                "BATCH" => Mode::Batch,
                "PACKET" => Mode::Packet,
                _ => {
                    args.error("MODE: expected BATCH or PACKET");
                    return Err(());
                }
            };
        }
        if self.mtu < HEADER_LEN + QUANTUM_HEADER_LEN + 1 || self.mtu > MAX_BATCH_LEN {
            args.error(format!("MTU must be between 23 and {MAX_BATCH_LEN}"));
            return Err(());
        }
        if self.limit >= NONE as usize {
            args.error(format!("LIMIT must be below {NONE}"));
            return Err(());
        }
        let default = Reservation {
            rate: rate.map_or(self.bandwidth / self.nflows as f64, |b| b.0),
            burst: burst.unwrap_or(1536),
            delay: delay.map_or(16.0 * self.t(), |d| d.0),
        };
        let mut classes = Vec::new();
        for res in std::iter::once(default).chain(reserves.iter().map(|r| r.res)) {
            match self.class(res) {
                Ok(c) => classes.push(c),
                Err(e) => {
                    args.error(e);
                    return Err(());
                }
            }
        }
        self.classes = classes;
        let mut class_of = vec![0u32; self.nflows];
        for (i, r) in reserves.iter().enumerate() {
            if r.last >= self.nflows {
                args.error(format!("RESERVE: flow {} not below FLOWS", r.last));
                return Err(());
            }
            class_of[r.first..=r.last].fill(i as u32 + 1);
        }
        self.flows = class_of
            .into_iter()
            .map(|class| Flow {
                backlog: 0,
                credit: self.classes[class as usize].cap,
                last: 0,
                wake: 0,
                head: NONE,
                tail: NONE,
                served: 0,
                queued: 0,
                class,
                link: NONE,
                state: State::Idle,
            })
            .collect();
        self.stats = (0..self.nflows).map(|_| Stats::default()).collect();
        self.scratch = vec![0; self.mtu];
        let (per_quantum, per_batch) = match self.mode {
            Mode::Batch => (QUANTUM_HEADER_LEN as u64, HEADER_LEN as u64),
            Mode::Packet => (0, 0),
        };
        self.load = (0..self.nflows)
            .map(|f| u64::from(self.class_of(f).quantum) + per_quantum)
            .sum::<u64>()
            + (self.nflows as u64).div_ceil(u64::from(WINDOW)) * per_batch;
        self.admitted = self.load as f64 <= self.bandwidth * self.t();
        if !self.admitted {
            cx.warning(&format!(
                "reservations need {} bytes a cycle, the link carries {:.0}: delay bounds do not hold",
                self.load,
                self.bandwidth * self.t()
            ));
        }
        self.eligible = IdSet::new(self.nflows);
        self.empty_note = cx.new_notifier(false);
        cx.provide_empty_notifier(self.empty_note);
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let now = cx.now();
        self.start.get_or_insert(now);
        for p in batch.iter() {
            if let Some(fl) = self.flows.get(p.anno().aggregate as usize) {
                prefetch(fl);
            }
        }
        for p in batch {
            self.admit(p, now);
        }
        if self.queued > 0 {
            cx.set_notifier(self.empty_note, true);
        }
    }

    /// A hot swap carries the queued packets over, each flow's in order with its arrival
    /// time, as if they arrived again (so FLOWS, CAPACITY and LIMIT of the new configuration
    /// apply, with their drop reasons), and a head packet partly sent in batches keeps its
    /// place in the byte stream; completed packets waiting to be pulled, the counters, drop
    /// counts and per-flow statistics come along. A packet partly sent in batches cannot be
    /// sent whole in packet mode: it is dropped, counted ("partly sent before a hot swap").
    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<DFQSched>() else {
            return;
        };
        self.drops.take(&mut old.drops);
        self.batches += old.batches;
        self.bytes += old.bytes;
        self.packets += old.packets;
        for (st, o) in self.stats.iter_mut().zip(&mut old.stats) {
            *st = std::mem::take(o);
        }
        let now = cx.now();
        self.start.get_or_insert(now);
        for p in std::mem::take(&mut old.ready) {
            self.admit(p, now);
        }
        for f in 0..old.flows.len() {
            let mut s = std::mem::replace(&mut old.flows[f].head, NONE);
            let mut served = old.flows[f].served as usize;
            while let Some(slot) = old.slots.get_mut(s as usize) {
                s = slot.next;
                let (Some(p), at) = (slot.packet.take(), slot.at) else {
                    continue;
                };
                let carried = std::mem::take(&mut served);
                if carried > 0 && old.mode == Mode::Batch && self.mode == Mode::Packet {
                    self.drops.count(Reason::PartlySent);
                    continue;
                }
                let g = p.anno().aggregate as usize;
                let first = self.flows.get(g).is_some_and(|fl| fl.head == NONE);
                if self.admit(p, at) && first && old.mode == self.mode {
                    self.flows[g].served = carried as u32;
                    self.flows[g].backlog -= carried as u64;
                }
            }
        }
        old.empty();
        if self.queued + self.ready.len() > 0 {
            cx.set_notifier(self.empty_note, true);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let now = cx.now();
        let mut out = Batch::new();
        while out.len() < max.min(BATCH_MAX) {
            let p = match self.mode {
                Mode::Batch => self.next_batch(now),
                Mode::Packet => {
                    self.serve_packets(now);
                    self.ready.pop_front()
                }
            };
            let Some(p) = p else { break };
            let _ = out.push(p);
        }
        if self.queued == 0 && self.ready.is_empty() {
            cx.set_notifier(self.empty_note, false);
        }
        out
    }

    fn storage(&self) -> Option<(usize, usize)> {
        Some((self.queued, self.limit))
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        let n = self.queued + self.ready.len();
        self.drops.add(Reason::HeldAtStop, n as u64);
        for (fl, st) in self.flows.iter_mut().zip(&mut self.stats) {
            st.drops += u64::from(fl.queued);
        }
        self.empty();
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read_param("flow", |e, p| Ok(e.flow_line(e.flow_param(p)?)))
            .read("flows", |e| {
                let mut s = String::new();
                for (f, (fl, st)) in e.flows.iter().zip(&e.stats).enumerate() {
                    if st.packets > 0 || fl.backlog > 0 || st.drops > 0 {
                        let _ = writeln!(s, "{f} {}", e.flow_line(f));
                    }
                }
                s
            })
            .read_param("delay_bound", |e, p| {
                Ok(format!("{:.9}", e.delay_bound(e.flow_param(p)?)))
            })
            .read_param("quantum", |e, p| {
                Ok(e.class_of(e.flow_param(p)?).quantum.to_string())
            })
            .read("cycle", |e| e.cycle)
            .read("batches", |e| e.batches)
            .read("packets", |e| e.packets)
            .read("bytes", |e| e.bytes)
            .read("length", |e| e.queued)
            .read("admitted", |e| e.admitted)
            .read("load", |e| e.load)
            .read("cycle_bytes", |e| format!("{:.0}", e.bandwidth * e.t()))
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "DFQSched",
    ports: "1/1",
    processing: "h/l",
    flow: "",
    source: include_str!("dfq_sched.rs"),
    make: || Box::new(DFQSched::default()),
};
