//! Helpers shared by the standard elements: token buckets, per-port batching, annotation bytes.
//! (Not an element.)

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
    fn anno_parse() {
        assert_eq!(AnnoByte::parse("PAINT").unwrap(), AnnoByte::Paint);
        assert_eq!(AnnoByte::parse("3").unwrap(), AnnoByte::User(3));
        assert!(AnnoByte::parse("16").is_err());
        assert_eq!(fmt_f64(2.5), "2.5");
        assert_eq!(fmt_f64(3.0), "3");
    }
}
