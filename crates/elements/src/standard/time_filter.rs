//! TimeFilter — passes packets whose timestamps lie in a range
//!
//! Synopsis: `TimeFilter(*keywords* START, START_AFTER, START_DELAY, END, END_AFTER, END_DELAY,
//! INTERVAL, STOP, END_CALL)`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, but output 1 is push. Packets whose timestamp
//! annotation lies in [start, end) go to output 0; the others go to output 1, or are dropped and
//! counted. The range is given absolutely or relative to the first packet's timestamp or to the
//! time the router started; a missing start means the beginning of time, a missing end means
//! forever.
//!
//! Arguments (keywords):
//! - `START` (timestamp, seconds since the epoch); `START_AFTER` (time after the first packet's
//!   timestamp); `START_DELAY` (time after the router started).
//! - `END`, `END_AFTER`, `END_DELAY`: the same for the end of the range.
//! - `INTERVAL` (time): end = start + INTERVAL.
//! - `STOP` (boolean, default false): raise a driver stop event when the first packet at or
//!   after the end arrives.
//! - `END_CALL` (handler): write handler called then.
//!
//! Handlers: `drops` (r), `start` (r), `end` (r).
//!
//! Example: `FromDump(f.pcap, STOP true) -> TimeFilter(START_AFTER 10, INTERVAL 5) -> ...`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler, InitCx, Timestamp};
use sluice_lang::args::{Args, Seconds};

/// Parses an absolute timestamp `SEC[.FRAC]` (optionally negative) with nanosecond precision.
pub(crate) fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (sec, frac) = s.split_once('.').unwrap_or((s, ""));
    if sec.is_empty() && frac.is_empty() {
        return None;
    }
    if !sec.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let secs: i64 = if sec.is_empty() { 0 } else { sec.parse().ok()? };
    let mut ns: i64 = 0;
    for (i, b) in frac.bytes().take(9).enumerate() {
        ns += (b - b'0') as i64 * 10i64.pow(8 - i as u32);
    }
    let t = secs.checked_mul(1_000_000_000)?.checked_add(ns)?;
    Some(Timestamp(if neg { -t } else { t }))
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Bound {
    #[default]
    None,
    Abs(Timestamp),
    AfterFirst(Timestamp),
    AfterInit(Timestamp),
}

/// The TimeFilter element.
#[derive(Default)]
pub struct TimeFilter {
    start_spec: Bound,
    end_spec: Bound,
    interval: Option<Timestamp>,
    stop: bool,
    end_call: Option<String>,
    init: Timestamp,
    resolved: Option<(Timestamp, Timestamp)>,
    ended: bool,
    drops: u64,
}

impl TimeFilter {
    fn resolve(&mut self, first: Timestamp) -> (Timestamp, Timestamp) {
        if let Some(r) = self.resolved {
            return r;
        }
        let at = |b: Bound, dflt: Timestamp| match b {
            Bound::None => dflt,
            Bound::Abs(t) => t,
            Bound::AfterFirst(d) => first + d,
            Bound::AfterInit(d) => self.init + d,
        };
        let start = at(self.start_spec, Timestamp(i64::MIN));
        let end = match self.interval {
            Some(iv) if self.end_spec == Bound::None => start + iv,
            _ => at(self.end_spec, Timestamp(i64::MAX)),
        };
        self.resolved = Some((start, end));
        (start, end)
    }

    fn split(&mut self, b: &mut Batch, cx: &mut Cx) {
        let Some(first) = b.iter().next().map(|p| p.timestamp()) else {
            return;
        };
        let (start, end) = self.resolve(first);
        let mut other = Batch::new();
        let mut past_end = false;
        b.filter_map(|p| {
            let t = p.timestamp();
            if t >= start && t < end {
                return Some(p);
            }
            past_end |= t >= end;
            let _ = other.push(p);
            None
        });
        if !other.is_empty() {
            if cx.noutputs() > 1 {
                cx.push(1, other);
            } else {
                self.drops += other.len() as u64;
            }
        }
        if past_end && !self.ended {
            self.ended = true;
            if let Some(h) = self.end_call.clone() {
                if let Err(e) = cx.write_handler(&h, "") {
                    eprintln!("{}: END_CALL {}: {}", cx.name(), h, e);
                }
            }
            if self.stop {
                cx.request_driver_stop();
            }
        }
    }
}

fn read_bound(args: &mut Args, abs: &str, after: &str, delay: &str) -> Result<Bound, ()> {
    let mut b = Bound::None;
    if let Some(s) = args.read::<String>(abs)? {
        match parse_timestamp(&s) {
            Some(t) => b = Bound::Abs(t),
            None => {
                args.error(format!("{}: expected timestamp", abs));
                return Err(());
            }
        }
    }
    if let Some(Seconds(s)) = args.read::<Seconds>(after)? {
        b = Bound::AfterFirst(Timestamp::from_secs_f64(s));
    }
    if let Some(Seconds(s)) = args.read::<Seconds>(delay)? {
        b = Bound::AfterInit(Timestamp::from_secs_f64(s));
    }
    Ok(b)
}

impl Element for TimeFilter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.start_spec = read_bound(args, "START", "START_AFTER", "START_DELAY")?;
        self.end_spec = read_bound(args, "END", "END_AFTER", "END_DELAY")?;
        self.interval = args
            .read::<Seconds>("INTERVAL")?
            .map(|s| Timestamp::from_secs_f64(s.0));
        if self.interval.is_some() && self.end_spec != Bound::None {
            args.error("INTERVAL: conflicts with END, END_AFTER and END_DELAY");
            return Err(());
        }
        self.stop = args.read("STOP")?.unwrap_or(false);
        self.end_call = args.read("END_CALL")?;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.init = cx.now();
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.split(&mut batch, cx);
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = cx.pull(0, max);
        self.split(&mut b, cx);
        b
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("drops"), Handler::r("start"), Handler::r("end")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        let show = |t: Timestamp| {
            if t.0 == i64::MIN || t.0 == i64::MAX {
                "-".to_string()
            } else {
                t.to_string()
            }
        };
        Some(match name {
            "drops" => self.drops.to_string(),
            "start" => self.resolved.map_or("-".into(), |r| show(r.0)),
            "end" => self.resolved.map_or("-".into(), |r| show(r.1)),
            _ => return None,
        })
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "TimeFilter",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "",
    source: include_str!("time_filter.rs"),
    make: || Box::new(TimeFilter::default()),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse() {
        assert_eq!(parse_timestamp("1.5"), Some(Timestamp(1_500_000_000)));
        assert_eq!(
            parse_timestamp("946684800.000000001"),
            Some(Timestamp(946_684_800_000_000_001))
        );
        assert_eq!(parse_timestamp("-2"), Some(Timestamp(-2_000_000_000)));
        assert_eq!(parse_timestamp("x"), None);
        assert_eq!(parse_timestamp("."), None);
    }
}
