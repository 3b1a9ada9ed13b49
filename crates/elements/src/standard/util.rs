//! Helpers shared by the standard elements: token buckets, per-port batching, annotation
//! bytes, the part of InfiniteSource and RatedSource they share, the part of Unqueue,
//! RatedUnqueue and TimedSource they share, and the split of CheckPaint and TimeFilter.
//! (Not an element.)

use std::any::Any;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sluice_core::sched::DEFAULT_TICKETS;
use sluice_core::toolkit::HandlerCall;
use sluice_core::{Batch, Cx, InitCx, NotifierId, Packet, Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{unquote_bytes, Args, AtMost, Bandwidth, Data, FromArg, PacketLen};
use sluice_lang::args::{Rate, Seconds};

/// What a rate-limiting element's token bucket counts: packets (RatedSplitter, RatedUnqueue)
/// or bytes (the Bandwidth* forms).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Packets,
    Bytes,
}

impl Unit {
    /// Reads the mandatory RATE: packets per second, or a bandwidth (`10Mbps`, `1MBps`, bytes
    /// per second). Click keeps it as a whole number of tokens per second.
    pub(crate) fn read_rate(self, args: &mut Args) -> Result<u32, ()> {
        Ok(whole(match self {
            Unit::Packets => args.read_mp::<Rate>("RATE")?.0,
            Unit::Bytes => args.read_mp::<Bandwidth>("RATE")?.0,
        }))
    }

    /// Applies a write of `v` to a `rate` handler: `bucket` gets the new rate and the
    /// capacity `burst` gives it.
    pub(crate) fn set_rate(
        self,
        bucket: &mut TokenBucket,
        burst: Burst,
        v: &str,
    ) -> Result<(), String> {
        let r = match self {
            Unit::Packets => Rate::from_arg(v.trim()).map(|r| whole(r.0)),
            Unit::Bytes => Bandwidth::from_arg(v.trim()).map(|b| whole(b.0)),
        }
        .map_err(|e| format!("rate: {}", e))?;
        bucket.set(r, burst.capacity(r, self));
        Ok(())
    }

    /// Tokens the bucket must hold before a packet may pass: one packet, or (bytes) Click's
    /// threshold of 131,072 bytes, which the capacity includes on top of the burst.
    pub(crate) fn threshold(self) -> u32 {
        match self {
            Unit::Packets => 1,
            Unit::Bytes => BANDWIDTH_THRESHOLD,
        }
    }

    /// True if the bucket lets a packet through now.
    pub(crate) fn ready(self, bucket: &TokenBucket) -> bool {
        bucket.contains(self.threshold())
    }

    /// What `p` costs: one token, or its length in bytes.
    pub(crate) fn cost(self, p: &Packet) -> u32 {
        match self {
            Unit::Packets => 1,
            Unit::Bytes => u32::try_from(p.len()).unwrap_or(u32::MAX),
        }
    }

    /// Takes what `p` costs (down to an empty bucket).
    pub(crate) fn take(self, bucket: &mut TokenBucket, p: &Packet) {
        bucket.remove(self.cost(p));
    }

    /// Takes what `p` costs if the bucket lets it through now (RatedSplitter: one whole
    /// token; BandwidthRatedSplitter: the threshold, then the packet's length).
    pub(crate) fn conforms(self, bucket: &mut TokenBucket, p: &Packet) -> bool {
        match self {
            Unit::Packets => bucket.remove_if(1),
            Unit::Bytes => {
                let ok = self.ready(bucket);
                if ok {
                    self.take(bucket, p);
                }
                ok
            }
        }
    }
}

/// The bytes a bandwidth bucket must hold before a packet passes (Click's
/// `tb_bandwidth_thresh`), so that packets of any size pass at the configured rate.
const BANDWIDTH_THRESHOLD: u32 = 131_072;

/// A rate as Click's unsigned integer.
fn whole(r: f64) -> u32 {
    r.round().clamp(0.0, u32::MAX as f64) as u32
}

/// How a rate-limiting element sizes its bucket: a number of tokens given outright, or the
/// tokens earned in a duration at the configured rate.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Burst {
    Tokens(u32),
    Millis(u32),
}

impl Burst {
    /// The capacity for `rate`, as Click's RatedUnqueue computes it: RATE × duration (whole
    /// tokens), plus the threshold for bytes, at least one token.
    pub(crate) fn capacity(self, rate: u32, unit: Unit) -> u32 {
        let tokens = match self {
            Burst::Tokens(t) => t,
            Burst::Millis(ms) => u32::try_from(rate as u64 * ms as u64 / 1000).unwrap_or(u32::MAX),
        };
        let tokens = match unit {
            Unit::Packets => tokens,
            Unit::Bytes => tokens.saturating_add(BANDWIDTH_THRESHOLD),
        };
        tokens.max(1)
    }
}

/// Reads Click's token-bucket capacity keywords: BURST_DURATION (default 20 ms) or a size in
/// tokens under any of `size_keys` (e.g. BURST_SIZE, BURST_BYTES), not both.
pub(crate) fn read_burst(args: &mut Args, size_keys: &[&str]) -> Result<Burst, ()> {
    let dur = args.read::<Seconds>("BURST_DURATION")?;
    let mut size = None;
    for k in size_keys {
        if let Some(n) = args.read::<u32>(k)? {
            size = Some(n);
        }
    }
    match (dur, size) {
        (Some(_), Some(_)) => {
            args.error(format!(
                "cannot specify both BURST_DURATION and {}",
                size_keys[0]
            ));
            Err(())
        }
        (_, Some(n)) => Ok(Burst::Tokens(n)),
        (d, None) => Ok(Burst::Millis(whole(d.map_or(20.0, |s| s.0 * 1000.0)))),
    }
}

/// Click's token bucket (`TokenBucket` in Click's `tokenbucket.hh`), bit for bit, so that
/// rate limiters let through exactly what Click's do: the tokens are a 32-bit fraction of the
/// capacity, refilled once per millisecond of the router clock (simulated under `--simtime`) by
/// a whole number of fractions per millisecond. A bucket starts full.
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    /// Fractions per token: `u32::MAX / capacity`.
    scale: u32,
    /// Fractions added per millisecond (0: the rate is 0).
    per_tick: u32,
    /// Milliseconds from empty to full.
    until_full: u64,
    /// Fractions held.
    fraction: u32,
    /// The millisecond of the last refill.
    last: Option<u64>,
}

const TICKS_PER_SEC: u64 = 1000;

impl TokenBucket {
    /// A full bucket of `capacity` tokens refilled at `rate` tokens per second.
    pub(crate) fn new(rate: u32, capacity: u32) -> TokenBucket {
        let mut b = TokenBucket {
            scale: 1,
            per_tick: 0,
            until_full: u64::MAX,
            fraction: u32::MAX,
            last: None,
        };
        b.set(rate, capacity);
        b
    }

    /// Changes the rate and capacity; the bucket keeps its fill as a fraction of the capacity.
    pub(crate) fn set(&mut self, rate: u32, capacity: u32) {
        let (rate, capacity) = if capacity == 0 {
            (0, u32::MAX)
        } else {
            (rate, capacity)
        };
        // At least the tokens of one millisecond, so that a tick's fractions fit in 32 bits.
        let capacity = if rate != 0 {
            capacity.max((rate - 1) / TICKS_PER_SEC as u32 + 1)
        } else {
            capacity
        };
        self.scale = u32::MAX / capacity;
        let per_tick = rate as u64 * self.scale as u64 / TICKS_PER_SEC;
        if rate != 0 {
            self.per_tick = per_tick.max(1) as u32;
            self.until_full = (u32::MAX as u64 - 1) / self.per_tick as u64 + 1;
        } else {
            self.per_tick = 0;
            self.until_full = u64::MAX;
        }
    }

    /// The rate in tokens per second, as Click reports it (from the fractions per tick).
    pub(crate) fn rate(&self) -> u32 {
        let r =
            (self.per_tick as u64 * TICKS_PER_SEC + self.per_tick as u64 / 2) / self.scale as u64;
        u32::try_from(r).unwrap_or(u32::MAX)
    }

    /// Whole tokens held.
    pub(crate) fn size(&self) -> u32 {
        self.fraction / self.scale
    }

    /// Adds the ticks' worth of fractions since the last refill.
    pub(crate) fn refill(&mut self, now: Timestamp) {
        let tick = u64::try_from(now.0).unwrap_or(0) / 1_000_000;
        if let Some(last) = self.last {
            let diff = tick.saturating_sub(last);
            if diff >= self.until_full {
                self.fraction = u32::MAX;
            } else if diff > 0 {
                let f = self.fraction as u64 + diff * self.per_tick as u64;
                self.fraction = u32::try_from(f).unwrap_or(u32::MAX);
            }
        }
        self.last = Some(tick);
    }

    /// `t` tokens as fractions, or `None` if more than the capacity.
    fn fractions(&self, t: u32) -> Option<u32> {
        t.checked_mul(self.scale)
    }

    /// True if the bucket holds at least `t` tokens.
    pub(crate) fn contains(&self, t: u32) -> bool {
        self.fractions(t).is_some_and(|f| f <= self.fraction)
    }

    /// Removes `t` tokens, emptying the bucket if it holds fewer.
    pub(crate) fn remove(&mut self, t: u32) {
        let f = self.fractions(t).unwrap_or(u32::MAX);
        self.fraction = self.fraction.saturating_sub(f);
    }

    /// Removes `t` tokens if the bucket holds them.
    pub(crate) fn remove_if(&mut self, t: u32) -> bool {
        let ok = self.contains(t);
        if ok {
            self.remove(t);
        }
        ok
    }

    /// Time until the bucket holds `t` tokens, in whole milliseconds as Click schedules it (at
    /// least 1 ms; a day if it never will).
    pub(crate) fn wait_for(&self, t: u32) -> Timestamp {
        let day = Timestamp::from_parts(86_400, 0);
        let Some(f) = self.fractions(t) else {
            return day;
        };
        if f <= self.fraction {
            return Timestamp::from_parts(0, 1_000_000);
        }
        if self.per_tick == 0 {
            return day;
        }
        let ticks = (f - self.fraction - 1) as u64 / self.per_tick as u64 + 1;
        Timestamp((ticks.min(86_400_000) * 1_000_000) as i64)
    }
}

/// One batch per output port, flushed when full and at the end of an input batch, so packets
/// keep their order within each port.
#[derive(Default)]
pub(crate) struct PortBatches(Vec<Batch>);

impl PortBatches {
    /// Batches for `n` outputs.
    pub(crate) fn new(n: usize) -> PortBatches {
        PortBatches((0..n).map(|_| Batch::new()).collect())
    }

    /// Adds `p` for output `port`; pushes that port's batch first if it is full.
    pub(crate) fn add(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        if port >= self.0.len() {
            self.0.resize_with(port + 1, Batch::new);
        }
        if let Err(p) = self.0[port].push(p) {
            let full = std::mem::take(&mut self.0[port]);
            cx.push(port, full);
            let _ = self.0[port].push(p);
        }
    }

    /// Pushes every non-empty batch.
    pub(crate) fn flush(&mut self, cx: &mut Cx) {
        for port in 0..self.0.len() {
            if !self.0[port].is_empty() {
                let b = std::mem::take(&mut self.0[port]);
                cx.push(port, b);
            }
        }
    }
}

/// Click's default packet contents for the sources (69 bytes).
const DEFAULT_DATA: &[u8] =
    b"Random bullshit in a packet, at least 64 bytes long. Well, now it is.";

/// What InfiniteSource and RatedSource share: the packet they send (DATA, LENGTH), LIMIT,
/// ACTIVE, STOP and END_CALL, the count of packets sent, and the end when LIMIT is reached.
pub(crate) struct SourceCore {
    /// The packet contents.
    pub(crate) data: Vec<u8>,
    /// Packets to send in all; negative: no limit.
    pub(crate) limit: i64,
    /// Whether the source sends.
    pub(crate) active: bool,
    /// Raise a driver stop event at the end.
    pub(crate) stop: bool,
    /// The write handler called at the end.
    pub(crate) end_call: Option<HandlerCall>,
    /// Packets sent.
    pub(crate) count: u64,
    /// True once the end came (until `reset` or a new `limit`).
    ended: bool,
    /// The empty notifier of a pull output that has one (InfiniteSource's): active while a
    /// pull would return packets.
    pub(crate) empty_note: Option<NotifierId>,
}

impl Default for SourceCore {
    fn default() -> SourceCore {
        SourceCore {
            data: DEFAULT_DATA.to_vec(),
            limit: -1,
            active: true,
            stop: false,
            end_call: None,
            count: 0,
            ended: false,
            empty_note: None,
        }
    }
}

/// A source built on a [`SourceCore`], for the handlers they share ([`SourceCore::handlers`]).
pub(crate) trait Source: Any {
    /// The shared part.
    fn core(&self) -> &SourceCore;
    /// The shared part, to change.
    fn core_mut(&mut self) -> &mut SourceCore;
    /// Starts the schedule again after a write to `reset` or `active` (RatedSource's, which
    /// sends at a rate from a start time).
    fn restart(&mut self) {}
}

impl SourceCore {
    /// Reads the positional DATA.
    pub(crate) fn read_data(&mut self, args: &mut Args) -> Result<(), ()> {
        if let Some(Data(d)) = args.read_p("DATA")? {
            self.data = d;
        }
        Ok(())
    }

    /// Reads the positional LIMIT, then what `after_limit` reads (InfiniteSource's positional
    /// BURST), then the positional ACTIVE and the keywords LENGTH, STOP and END_CALL.
    pub(crate) fn read_rest(
        &mut self,
        args: &mut Args,
        after_limit: impl FnOnce(&mut Args) -> Result<(), ()>,
    ) -> Result<(), ()> {
        self.limit = args.read_p("LIMIT")?.unwrap_or(self.limit);
        after_limit(args)?;
        self.active = args.read_p("ACTIVE")?.unwrap_or(self.active);
        if let Some(AtMost(len)) = args.read::<PacketLen>("LENGTH")? {
            self.set_length(len);
        }
        args.read_into("STOP", &mut self.stop)?;
        self.end_call = args.read("END_CALL")?;
        Ok(())
    }

    /// Checks END_CALL, gives a push source its task (scheduled if active), and ends at once
    /// with a LIMIT of 0.
    pub(crate) fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if let Some(call) = &self.end_call {
            call.check_as("END_CALL", cx)?;
        }
        if cx.output_is_push(0) {
            cx.add_task(DEFAULT_TICKETS, self.active);
        }
        if self.limit == 0 {
            self.check_end(cx);
        }
        Ok(())
    }

    /// Hot swap: goes on from `old`'s progress (packets sent; the end, if this LIMIT is
    /// reached too), so that a swap neither repeats nor skips packets. Ends now if this LIMIT
    /// is reached and `old`'s was not.
    pub(crate) fn take_progress(&mut self, old: &SourceCore, cx: &mut Cx) {
        self.count = old.count;
        self.ended = old.ended && self.remaining() == 0;
        self.check_end(cx);
    }

    /// Packets still to send.
    pub(crate) fn remaining(&self) -> u64 {
        if self.limit < 0 {
            u64::MAX
        } else {
            (self.limit as u64).saturating_sub(self.count)
        }
    }

    /// A batch of up to `n` packets (no more than the limit allows, at most a batch), counted
    /// as sent, with timestamp annotation `stamp` if given.
    pub(crate) fn make_batch(&mut self, n: usize, stamp: Option<Timestamp>) -> Batch {
        let n = (n as u64).min(self.remaining()).min(BATCH_MAX as u64);
        let mut b = Batch::copies(&self.data, n as usize);
        if let Some(t) = stamp {
            for p in b.iter_mut() {
                p.set_timestamp(t);
            }
        }
        self.count += n;
        b
    }

    /// Repeats or truncates the packet contents to `len` bytes.
    pub(crate) fn set_length(&mut self, len: usize) {
        let src: &[u8] = if self.data.is_empty() {
            &[0]
        } else {
            &self.data
        };
        self.data = src.iter().copied().cycle().take(len).collect();
    }

    /// Once LIMIT is reached: calls END_CALL and raises the stop event with STOP (once, until
    /// `reset` or a new `limit`).
    pub(crate) fn check_end(&mut self, cx: &mut Cx) {
        if self.remaining() == 0 && !self.ended {
            self.ended = true;
            if let Some(call) = &self.end_call {
                call.call("END_CALL", cx);
            }
            if self.stop {
                cx.request_driver_stop();
            }
        }
    }

    /// After a handler write: wakes the task (push) or the pullers (pull, through the empty
    /// notifier) if the source has packets to send.
    pub(crate) fn wake(&self, cx: &mut Cx) {
        if self.active && self.remaining() > 0 {
            if cx.output_is_push(0) {
                cx.reschedule();
            } else if let Some(n) = self.empty_note {
                cx.set_notifier(n, true);
            }
        }
    }

    /// The handlers of source `E`: `count` (r), `reset` (w: zero the count and restart),
    /// `data` (rw), then those `own` adds, then `limit`, `active` (restarts) and `length`
    /// (rw). Each write wakes the source.
    pub(crate) fn handlers<E: Source>(own: impl FnOnce(Table<E>) -> Table<E>) -> Table<E> {
        /// Applies a write to `e`'s core, then restarts `e` if `restart` and wakes it.
        fn apply<E: Source>(
            e: &mut E,
            restart: bool,
            cx: &mut Cx,
            f: impl FnOnce(&mut SourceCore) -> Result<(), String>,
        ) -> Result<(), String> {
            f(e.core_mut())?;
            if restart {
                e.restart();
            }
            e.core().wake(cx);
            Ok(())
        }
        let t = Table::<E>::new()
            .read("count", |e| e.core().count)
            .write("reset", |e, _, cx| {
                apply(e, true, cx, |c| {
                    (c.count, c.ended) = (0, false);
                    Ok(())
                })
            })
            .read("data", |e| {
                String::from_utf8_lossy(&e.core().data).into_owned()
            })
            .write("data", |e, v, cx| {
                apply(e, false, cx, |c| {
                    c.data = unquote_bytes(v.trim());
                    Ok(())
                })
            })
            .setting();
        own(t)
            .read("limit", |e| e.core().limit)
            .write("limit", |e, v, cx| {
                apply(e, false, cx, |c| {
                    c.limit = i64::from_arg(v.trim()).map_err(|m| format!("limit: {m}"))?;
                    c.ended = false;
                    Ok(())
                })
            })
            .setting()
            .read("active", |e| e.core().active)
            .write("active", |e, v, cx| {
                apply(e, true, cx, |c| {
                    c.active = bool::from_arg(v)?;
                    Ok(())
                })
            })
            .setting()
            .read("length", |e| e.core().data.len())
            .write("length", |e, v, cx| {
                apply(e, false, cx, |c| {
                    let AtMost(len) =
                        PacketLen::from_arg(v.trim()).map_err(|m| format!("length: {m}"))?;
                    c.set_length(len);
                    Ok(())
                })
            })
            .setting()
    }
}

/// What the elements that send packets while ACTIVE share (Unqueue, RatedUnqueue,
/// TimedSource): ACTIVE and the count of packets sent, with the handlers of [`SenderTable`].
pub(crate) struct Sending {
    /// Whether the element sends.
    pub(crate) active: bool,
    /// Packets sent.
    pub(crate) count: u64,
}

impl Sending {
    /// Counts the packets of `b` as sent and pushes them out of output 0; true if there were
    /// any (an empty batch is not pushed).
    pub(crate) fn send(&mut self, b: Batch, cx: &mut Cx) -> bool {
        let got = !b.is_empty();
        self.count += b.len() as u64;
        if got {
            cx.push(0, b);
        }
        got
    }
}

impl Default for Sending {
    fn default() -> Sending {
        Sending {
            active: true,
            count: 0,
        }
    }
}

/// An element built on [`Sending`], for the handlers of [`SenderTable`].
pub(crate) trait Sender: Any {
    /// The shared part.
    fn sending(&self) -> &Sending;
    /// The shared part, to change.
    fn sending_mut(&mut self) -> &mut Sending;
    /// Starts sending again if the element may, after a handler write (or RatedUnqueue's
    /// timer). Default: runs the task if ACTIVE (Unqueue's and RatedUnqueue's, whose task may
    /// pull now).
    fn wake(&self, cx: &mut Cx) {
        if self.sending().active {
            cx.reschedule();
        }
    }
    /// Zeroes what the element counts besides the packets sent, at a `reset`
    /// (BandwidthRatedUnqueue's bytes). Default: nothing.
    fn zero_other_counts(&mut self) {}
}

/// The handlers of a [`Sender`], each added where the element's table lists it.
pub(crate) trait SenderTable {
    /// `count` (r): packets sent.
    fn count_handler(self) -> Self;
    /// `reset` (w): zeroes the counts, then wakes the element.
    fn reset_handler(self) -> Self;
    /// `active` (rw): a write wakes the element.
    fn active_handler(self) -> Self;
}

impl<E: Sender> SenderTable for Table<E> {
    fn count_handler(self) -> Self {
        self.read("count", |e| e.sending().count)
    }

    fn reset_handler(self) -> Self {
        self.write("reset", |e, _, cx| {
            e.sending_mut().count = 0;
            e.zero_other_counts();
            e.wake(cx);
            Ok(())
        })
    }

    fn active_handler(self) -> Self {
        self.read("active", |e| e.sending().active)
            .write("active", |e, v, cx| {
                e.sending_mut().active = bool::from_arg(v.trim())?;
                e.wake(cx);
                Ok(())
            })
    }
}

/// Keeps the packets of `b` that `keep` accepts (it may also change them) and pushes the
/// others out of output 1 (dropped by the router when it is not connected), order kept in
/// both.
fn split_batch(b: &mut Batch, cx: &mut Cx, mut keep: impl FnMut(&mut Packet, &mut Cx) -> bool) {
    let mut other: Option<Batch> = None;
    b.filter_map(|mut p| {
        if keep(&mut p, cx) {
            return Some(p);
        }
        let _ = other.get_or_insert_with(Batch::new).push(p);
        None
    });
    if let Some(other) = other {
        cx.push(1, other);
    }
}

/// Push path of an element that passes the packets `keep` accepts to output 0 and the others
/// to output 1 (CheckPaint, TimeFilter, AggregateIP): `keep` sees every packet first, then
/// the others leave by output 1, then the kept ones by output 0.
pub(crate) fn push_split(
    mut batch: Batch,
    cx: &mut Cx,
    keep: impl FnMut(&mut Packet, &mut Cx) -> bool,
) {
    split_batch(&mut batch, cx, keep);
    if !batch.is_empty() {
        cx.push(0, batch);
    }
}

/// Pull path of the same elements: pulls up to `max` packets from input 0, pushes those
/// `keep` refuses out of output 1 and returns the others.
pub(crate) fn pull_split(
    max: usize,
    cx: &mut Cx,
    keep: impl FnMut(&mut Packet, &mut Cx) -> bool,
) -> Batch {
    let mut b = cx.pull(0, max);
    split_batch(&mut b, cx, keep);
    b
}

/// A one-byte annotation named by Click's `ANNO` argument: `PAINT` (the paint annotation, the
/// default) or an integer 0–15, a byte of the user annotation area.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum AnnoByte {
    #[default]
    Paint,
    User(usize),
}

impl FromArg for AnnoByte {
    fn from_arg(s: &str) -> Result<AnnoByte, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("PAINT") || t.eq_ignore_ascii_case("PAINT_ANNO") {
            return Ok(AnnoByte::Paint);
        }
        match usize::from_arg(t) {
            Ok(n) if n < 16 => Ok(AnnoByte::User(n)),
            _ => Err("expected PAINT or a user annotation offset 0-15".into()),
        }
    }
}

impl AnnoByte {
    /// Reads the byte.
    pub(crate) fn get(self, p: &Packet) -> u8 {
        match self {
            AnnoByte::Paint => p.anno().paint,
            AnnoByte::User(i) => p.anno().user[i],
        }
    }

    /// Writes the byte.
    pub(crate) fn set(self, p: &mut Packet, v: u8) {
        match self {
            AnnoByte::Paint => p.anno_mut().paint = v,
            AnnoByte::User(i) => p.anno_mut().user[i] = v,
        }
    }
}

/// Formats a rate for a handler: integer when whole, otherwise up to 6 decimals.
pub(crate) fn fmt_f64(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{:.6}", v);
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

static RANDOM_STATE: AtomicU64 = AtomicU64::new(0);
static RANDOM_SEEDED: AtomicBool = AtomicBool::new(false);

/// Seeds the random numbers the standard elements draw (RandomSwitch): with `seed`, the
/// sequence repeats from run to run; without, it starts from the clock.
pub(crate) fn random_seed(seed: Option<u32>) {
    let s = seed.map_or_else(|| Timestamp::now_real().0 as u64, u64::from);
    RANDOM_STATE.store(s, Ordering::Relaxed);
    RANDOM_SEEDED.store(true, Ordering::Relaxed);
}

/// The next random number (SplitMix64; lock-free, shared by every thread).
pub(crate) fn random_u32() -> u32 {
    if !RANDOM_SEEDED.load(Ordering::Relaxed) {
        random_seed(None);
    }
    let mut z = RANDOM_STATE
        .fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed)
        .wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    ((z ^ (z >> 31)) >> 32) as u32
}

/// Click's gap-rate limiter (Shaper, BandwidthShaper): within each second, the n-th unit may
/// pass once the second's elapsed fraction reaches n/RATE, so packets leave evenly spaced;
/// units unused in one second carry over into the next only as a deficit, never as a burst.
#[derive(Clone, Debug)]
pub(crate) struct GapRate {
    rate: u32,
    ugap: u64,
    sec_count: i64,
    sec: Option<i64>,
}

impl GapRate {
    const SHIFT: u32 = 12;
    const MAX_RATE: u64 = 1_000_000 << Self::SHIFT;

    /// A limiter of `rate` units per second, freshly reset.
    pub(crate) fn new(rate: u32) -> GapRate {
        let mut g = GapRate {
            rate: 0,
            ugap: 0,
            sec_count: 0,
            sec: None,
        };
        g.init(rate);
        g
    }

    fn init(&mut self, rate: u32) {
        self.rate = (rate as u64).min(Self::MAX_RATE) as u32;
        self.ugap = if self.rate == 0 {
            Self::MAX_RATE + 1
        } else {
            Self::MAX_RATE / self.rate as u64
        };
    }

    /// Units per second.
    pub(crate) fn rate(&self) -> u32 {
        self.rate
    }

    /// Changes the rate, keeping the current second's position.
    pub(crate) fn set_rate(&mut self, rate: u32, now: Timestamp) {
        if rate != self.rate {
            self.init(rate);
            if self.sec.is_some() && self.rate != 0 {
                self.sec_count = self.need(now) as i64;
            }
        }
    }

    /// Forgets the past: the next check starts a new second.
    pub(crate) fn reset(&mut self) {
        self.sec = None;
    }

    fn scaled_usec(now: Timestamp) -> u64 {
        ((now.subsec_nanos() / 1000) as u64) << Self::SHIFT
    }

    fn need(&self, now: Timestamp) -> u64 {
        Self::scaled_usec(now) / self.ugap
    }

    /// True if a unit may pass at `now`.
    pub(crate) fn ready(&mut self, now: Timestamp) -> bool {
        let need = self.need(now);
        match self.sec {
            None => {
                self.sec = Some(now.sec());
                let rem = Self::scaled_usec(now) - need * self.ugap;
                self.sec_count = need as i64 + (rem > self.ugap / 2) as i64;
            }
            Some(s) if now.sec() > s => {
                self.sec = Some(now.sec());
                if self.sec_count > 0 {
                    self.sec_count -= self.rate as i64;
                }
            }
            _ => {}
        }
        need as i64 >= self.sec_count
    }

    /// Records `n` units sent.
    pub(crate) fn sent(&mut self, n: u64) {
        self.sec_count += n as i64;
    }
}

/// Formats a rate in bytes per second as Click's `BandwidthArg::unparse` (`8kbps`,
/// `1.5Mbps`, `2Gbps`).
pub(crate) fn unparse_bandwidth(bytes_per_sec: u32) -> String {
    fn real10(v: u64, digits: u32) -> String {
        let p = 10u64.pow(digits);
        let frac = format!("{:0width$}", v % p, width = digits as usize);
        let frac = frac.trim_end_matches('0');
        if frac.is_empty() {
            (v / p).to_string()
        } else {
            format!("{}.{}", v / p, frac)
        }
    }
    let x = bytes_per_sec as u64;
    if x >= 0x2000_0000 {
        real10(x, 6) + "MBps"
    } else if x >= 125_000_000 {
        real10(x * 8, 9) + "Gbps"
    } else if x >= 125_000 {
        real10(x * 8, 6) + "Mbps"
    } else {
        real10(x * 8, 3) + "kbps"
    }
}

/// Formats an interval as Click's `Timestamp::unparse_interval`: whole milliseconds,
/// microseconds or nanoseconds below a second (`500ms`, `20us`, `7ns`), seconds from a second
/// on (`1.500000s`).
pub(crate) fn unparse_interval(t: Timestamp) -> String {
    let ns = t.0;
    if (0..1_000_000_000).contains(&ns) {
        if ns % 1_000_000 == 0 {
            format!("{}ms", ns / 1_000_000)
        } else if ns % 1_000 == 0 {
            format!("{}us", ns / 1_000)
        } else {
            format!("{}ns", ns)
        }
    } else {
        format!("{}s", t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_refills_at_rate() {
        let mut b = TokenBucket::new(100, 2);
        let t0 = Timestamp::SIM_START;
        b.refill(t0);
        let p = Packet::from_bytes(&[0; 60]);
        let take = |b: &mut TokenBucket| Unit::Packets.conforms(b, &p);
        assert!(take(&mut b) && take(&mut b) && !take(&mut b));
        // 100 tokens/s with 2 tokens of capacity: 214,748,364 of 2,147,483,647 fractions per
        // millisecond, so a token takes 11 ms, not 10 (Click's rounding).
        let w = b.wait_for(1);
        assert_eq!(w, Timestamp(11_000_000));
        b.refill(t0 + Timestamp(10_000_000));
        assert!(!take(&mut b));
        b.refill(t0 + w);
        assert!(take(&mut b));
        b.refill(t0 + Timestamp::from_parts(10, 0));
        assert_eq!(b.size(), 2);
        assert_eq!(b.rate(), 100);
    }

    #[test]
    fn byte_bucket_needs_the_threshold_and_empties_at_most() {
        let rate = 1000;
        let cap = Burst::Tokens(100).capacity(rate, Unit::Bytes);
        assert_eq!(cap, 131_172);
        let mut b = TokenBucket::new(rate, cap);
        b.refill(Timestamp::SIM_START);
        let big = Packet::from_bytes(&[0; 150]);
        assert!(Unit::Bytes.conforms(&mut b, &big));
        assert!(!Unit::Bytes.conforms(&mut b, &Packet::from_bytes(&[0; 1])));
        b.remove(u32::MAX);
        assert_eq!(b.size(), 0);
        assert!(!b.contains(cap + 1));
    }

    #[test]
    fn gap_rate_spaces_packets_evenly() {
        let mut g = GapRate::new(1000);
        let t0 = Timestamp::from_parts(100, 0);
        let mut sent = 0;
        for ms in 0..2000 {
            let now = t0 + Timestamp(ms * 1_000_000);
            for _ in 0..3 {
                if g.ready(now) {
                    g.sent(1);
                    sent += 1;
                }
            }
        }
        assert!((1999..=2001).contains(&sent), "{}", sent);
        let mut z = GapRate::new(0);
        assert!(z.ready(t0));
        z.sent(1);
        assert!(!z.ready(t0 + Timestamp(500_000_000)));
        assert!(!z.ready(t0 + Timestamp::from_parts(3, 0)));
    }

    #[test]
    fn anno_parse() {
        assert_eq!(AnnoByte::from_arg("PAINT").unwrap(), AnnoByte::Paint);
        assert_eq!(AnnoByte::from_arg("3").unwrap(), AnnoByte::User(3));
        assert!(AnnoByte::from_arg("16").is_err());
        assert_eq!(fmt_f64(2.5), "2.5");
        assert_eq!(fmt_f64(3.0), "3");
        assert_eq!(unparse_interval(Timestamp(500_000_000)), "500ms");
        assert_eq!(unparse_bandwidth(1000), "8kbps");
        assert_eq!(unparse_bandwidth(187_500), "1.5Mbps");
        assert_eq!(unparse_interval(Timestamp(20_000)), "20us");
        assert_eq!(
            unparse_interval(Timestamp::from_parts(1, 500_000_000)),
            "1.500000s"
        );
    }
}
