//! Helpers shared by the standard elements: token buckets, per-port batching, annotation bytes.
//! (Not an element.)

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sluice_core::{Batch, Cx, Packet, Timestamp};
use sluice_lang::args::{Args, Bandwidth, FromArg, Rate, Seconds};

/// What a rate-limiting element's token bucket counts: packets (RatedSplitter, RatedUnqueue)
/// or bytes (the Bandwidth* forms).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Packets,
    Bytes,
}

impl Unit {
    /// Reads the mandatory RATE: packets per second, or a bandwidth (`10Mbps`, `1MBps`, bytes
    /// per second).
    pub(crate) fn read_rate(self, args: &mut Args) -> Result<f64, ()> {
        Ok(match self {
            Unit::Packets => args.read_mp::<Rate>("RATE")?.0,
            Unit::Bytes => args.read_mp::<Bandwidth>("RATE")?.0,
        })
    }

    /// Parses a rate written to a `rate` handler.
    pub(crate) fn parse(self, s: &str) -> Result<f64, String> {
        match self {
            Unit::Packets => Rate::from_arg(s).map(|r| r.0),
            Unit::Bytes => Bandwidth::from_arg(s).map(|b| b.0),
        }
    }

    /// True if the bucket lets a packet through now: one token for packets; any positive
    /// amount for bytes (the packet then takes its length, so the bucket may go into debt by
    /// one packet, and a packet longer than the capacity can still pass).
    pub(crate) fn ready(self, bucket: &TokenBucket) -> bool {
        match self {
            Unit::Packets => bucket.has(1.0),
            Unit::Bytes => bucket.tokens() > 1e-6,
        }
    }

    /// Tokens a packet costs.
    pub(crate) fn cost(self, p: &Packet) -> f64 {
        match self {
            Unit::Packets => 1.0,
            Unit::Bytes => p.len() as f64,
        }
    }

    /// Takes what `p` costs if the bucket lets it through now.
    pub(crate) fn conforms(self, bucket: &mut TokenBucket, p: &Packet) -> bool {
        let ok = self.ready(bucket);
        if ok {
            bucket.take(self.cost(p));
        }
        ok
    }
}

/// Reads Click's token-bucket capacity keywords: BURST_DURATION (default 20 ms), or a size in
/// tokens under any of `size_keys` (e.g. BURST_SIZE, BURST_BYTES). At least one token.
pub(crate) fn read_burst(args: &mut Args, rate: f64, size_keys: &[&str]) -> Result<f64, ()> {
    let dur = args
        .read::<Seconds>("BURST_DURATION")?
        .map_or(0.02, |s| s.0);
    let mut cap = rate * dur;
    for k in size_keys {
        if let Some(n) = args.read::<f64>(k)? {
            cap = n;
        }
    }
    Ok(cap.max(1.0))
}

/// A token bucket refilled at `rate` tokens per second up to `capacity`, driven by the router
/// clock (simulated under `--simtime`).
#[derive(Clone, Debug)]
pub(crate) struct TokenBucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    last: Option<Timestamp>,
}

impl TokenBucket {
    /// A full bucket.
    pub(crate) fn new(rate: f64, capacity: f64) -> TokenBucket {
        let capacity = capacity.max(1.0);
        TokenBucket {
            rate,
            capacity,
            tokens: capacity,
            last: None,
        }
    }

    /// Fill rate in tokens per second.
    pub(crate) fn rate(&self) -> f64 {
        self.rate
    }

    /// Changes the rate and capacity, keeping the current tokens (clamped).
    pub(crate) fn set(&mut self, rate: f64, capacity: f64) {
        self.rate = rate;
        self.capacity = capacity.max(1.0);
        self.tokens = self.tokens.min(self.capacity);
    }

    /// Adds the tokens earned since the last refill.
    pub(crate) fn refill(&mut self, now: Timestamp) {
        if let Some(last) = self.last {
            let dt = (now - last).0;
            if dt > 0 {
                self.tokens = (self.tokens + dt as f64 * 1e-9 * self.rate).min(self.capacity);
            }
        }
        self.last = Some(now);
    }

    /// True if at least `n` tokens are available (a tiny tolerance absorbs rounding).
    pub(crate) fn has(&self, n: f64) -> bool {
        self.tokens + 1e-6 >= n
    }

    /// Tokens available now (after [`TokenBucket::refill`]).
    pub(crate) fn tokens(&self) -> f64 {
        self.tokens
    }

    /// Removes `n` tokens (the bucket may go into debt).
    pub(crate) fn take(&mut self, n: f64) {
        self.tokens -= n;
    }

    /// Time from now until `n` tokens are available (at least 1 ns; a day if the rate is 0).
    pub(crate) fn wait_for(&self, n: f64) -> Timestamp {
        if self.rate <= 0.0 {
            return Timestamp::from_parts(86_400, 0);
        }
        let need = (n - self.tokens).max(0.0);
        Timestamp(((need / self.rate) * 1e9).ceil().max(1.0) as i64)
    }
}

/// One batch per output port, flushed when full and at the end of an input batch, so packets
/// keep their order within each port.
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

/// A one-byte annotation named by Click's `ANNO` argument: `PAINT` (the paint annotation) or an
/// integer 0–15, a byte of the user annotation area.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnnoByte {
    Paint,
    User(usize),
}

impl AnnoByte {
    /// Parses an `ANNO` argument.
    pub(crate) fn parse(s: &str) -> Result<AnnoByte, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("PAINT") || t.eq_ignore_ascii_case("PAINT_ANNO") {
            return Ok(AnnoByte::Paint);
        }
        match <usize as sluice_lang::args::FromArg>::from_arg(t) {
            Ok(n) if n < 16 => Ok(AnnoByte::User(n)),
            _ => Err("ANNO: expected PAINT or a user annotation offset 0-15".into()),
        }
    }

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

/// Reads an optional `ANNO` keyword.
pub(crate) fn read_anno(args: &mut sluice_lang::args::Args) -> Result<AnnoByte, ()> {
    match args.read::<String>("ANNO")? {
        None => Ok(AnnoByte::Paint),
        Some(s) => AnnoByte::parse(&s).map_err(|e| args.error(e)),
    }
}

/// Parses a handler value as an integer of type `T`.
pub(crate) fn parse_num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T, String> {
    v.trim()
        .parse::<T>()
        .map_err(|_| format!("{}: expected number", name))
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
        let mut b = TokenBucket::new(100.0, 2.0);
        let t0 = Timestamp::SIM_START;
        b.refill(t0);
        let p = Packet::from_bytes(&[0; 60]);
        let take = |b: &mut TokenBucket| Unit::Packets.conforms(b, &p);
        assert!(take(&mut b) && take(&mut b) && !take(&mut b));
        let w = b.wait_for(1.0);
        assert_eq!(w, Timestamp(10_000_000));
        b.refill(t0 + w);
        assert!(take(&mut b));
        b.refill(t0 + Timestamp::from_parts(10, 0));
        assert!((b.tokens() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn byte_bucket_goes_into_debt_by_one_packet() {
        let mut b = TokenBucket::new(1000.0, 100.0);
        b.refill(Timestamp::SIM_START);
        let big = Packet::from_bytes(&[0; 150]);
        assert!(Unit::Bytes.conforms(&mut b, &big));
        assert!((b.tokens() + 50.0).abs() < 1e-9);
        assert!(!Unit::Bytes.conforms(&mut b, &Packet::from_bytes(&[0; 1])));
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
        assert_eq!(AnnoByte::parse("PAINT").unwrap(), AnnoByte::Paint);
        assert_eq!(AnnoByte::parse("3").unwrap(), AnnoByte::User(3));
        assert!(AnnoByte::parse("16").is_err());
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
