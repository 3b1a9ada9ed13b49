//! TimeFilter — passes packets whose timestamps lie in a range
//!
//! Synopsis: `TimeFilter([START, END], *keywords* START_AFTER, START_DELAY, END_AFTER,
//! END_DELAY, INTERVAL, STOP, END_CALL)`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, but output 1 is push. Packets whose timestamp
//! annotation lies in [start, end) go to output 0; the others go to output 1, or are dropped and
//! counted if output 1 is not connected. The range is given absolutely or relative to the first packet's timestamp or to the
//! time the router started. Without a start (or with START 0) the range starts at the first
//! packet's timestamp; without an end it lasts forever.
//!
//! When a packet at or after the end arrives, the END_CALL write handler is called, with `$t`
//! in its value replaced by the packet's timestamp. If the handler moves the end later (through
//! `end`, `interval` or `extend_interval`), the packet is checked again, and END_CALL called
//! again while it still lies beyond a later end; the packet passes once it lies within the
//! range. END_CALL is called again only after the end has been set anew.
//!
//! Arguments:
//! - `START` (timestamp, seconds since the epoch); `START_AFTER` (time after the first packet's
//!   timestamp); `START_DELAY` (time after the router started). At most one of them.
//! - `END`, `END_AFTER`, `END_DELAY`, or `INTERVAL` (end = start + INTERVAL): at most one.
//! - `STOP` (boolean, default false): stop the router when the first packet at or after the end
//!   arrives (the same as `END_CALL stop true`).
//! - `END_CALL` (`HANDLER [VALUE]`): write handler called then; `$t` in VALUE stands for the
//!   packet's timestamp. As in Click, an END_CALL whose HANDLER does not exist or is not
//!   writable is an initialisation error (`END_CALL: HANDLER: error`).
//!
//! Handlers: `drops`, `drop_details` (r: packets out of range dropped), `start` (rw), `end` (rw), `interval` (rw: writing sets end = start +
//! INTERVAL), `extend_interval` (w: moves the end later by the time written).
//!
//! Example: `FromDump(f.pcap, STOP true) -> TimeFilter(START_AFTER 10, INTERVAL 5) -> ...`

use sluice_core::toolkit::HandlerCall;
use sluice_core::Timestamp;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table};
use sluice_lang::args::{Args, Seconds};

use super::adjust_timestamp::parse_signed_time;
use super::util::{pull_split, push_split};

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

/// What a bound is measured from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum From {
    /// An absolute time.
    #[default]
    Abs,
    /// The first packet's timestamp.
    First,
    /// The time the router started.
    Init,
    /// The start (INTERVAL; end only).
    Start,
}

/// The TimeFilter element.
#[derive(Default)]
pub struct TimeFilter {
    start: Timestamp,
    start_from: From,
    end: Timestamp,
    end_from: From,
    end_call: Option<HandlerCall>,
    /// True until END_CALL has been called for the current end.
    end_call_ready: bool,
    init: Timestamp,
    /// True once the first packet has fixed the relative bounds.
    ready: bool,
}

impl TimeFilter {
    /// Fixes the bounds measured from the first packet (at `first`) or the router's start.
    fn first_packet(&mut self, first: Timestamp) {
        let base = |from: From, init: Timestamp| match from {
            From::First => first,
            From::Init => init,
            From::Abs | From::Start => Timestamp::ZERO,
        };
        self.start = self.start + base(self.start_from, self.init);
        self.end = match self.end_from {
            From::Start => self.end + self.start,
            from => self.end + base(from, self.init),
        };
        self.end_call_ready = self.end_call.is_some();
        self.ready = true;
    }

    /// Whether the packet at `t` passes (calling END_CALL as needed).
    fn passes(&mut self, t: Timestamp, cx: &mut Cx) -> bool {
        if !self.ready {
            self.first_packet(t);
        }
        if t < self.start {
            return false;
        }
        while t >= self.end && self.end_call_ready {
            let before = self.end;
            self.end_call_ready = false;
            if let Some(call) = &self.end_call {
                let t = t.to_string();
                let value = call.value.replace("${t}", &t).replace("$t", &t);
                HandlerCall {
                    value,
                    ..call.clone()
                }
                .call("END_CALL", cx);
                // The call may have written this element's own handlers (a Script moving the
                // end on): they take effect before the packet is checked again.
                cx.run_own_writes(self);
            }
            if self.end <= before {
                break;
            }
        }
        t < self.end
    }

    /// A bound as its handler shows it: `-` before the first packet or when there is none.
    fn show(&self, t: Timestamp) -> String {
        if !self.ready || t.0 == i64::MAX {
            "-".to_string()
        } else {
            t.to_string()
        }
    }

    /// A write of `v` to a time handler: `set` applies the time, and END_CALL is armed again.
    fn set_time(&mut self, v: &str, set: fn(&mut TimeFilter, Timestamp)) -> Result<(), String> {
        set(self, parse_signed_time(v)?);
        self.end_call_ready = self.end_call.is_some();
        Ok(())
    }
}

/// Reads a bound: the positional or keyword absolute time `abs`, or a time `after` the first
/// packet, or `delay` after the router's start. A zero absolute time counts as none, as in
/// Click.
fn read_bound(
    args: &mut Args,
    abs: &str,
    after: &str,
    delay: &str,
) -> Result<Option<(Timestamp, From)>, ()> {
    let mut found = Vec::new();
    if let Some(s) = args.read_p::<String>(abs)? {
        match parse_timestamp(&s) {
            Some(t) if t != Timestamp::ZERO => found.push((t, From::Abs)),
            Some(_) => {}
            None => {
                args.error(format!("{}: expected timestamp", abs));
                return Err(());
            }
        }
    }
    for (key, from) in [(after, From::First), (delay, From::Init)] {
        if let Some(Seconds(s)) = args.read::<Seconds>(key)? {
            if s != 0.0 {
                found.push((Timestamp::from_secs_f64(s), from));
            }
        }
    }
    if found.len() > 1 {
        args.error(format!("{abs}, {after} and {delay} are mutually exclusive"));
        return Err(());
    }
    Ok(found.pop())
}

impl Element for TimeFilter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        (self.start, self.start_from) = read_bound(args, "START", "START_AFTER", "START_DELAY")?
            .unwrap_or((Timestamp::ZERO, From::First));
        let end = read_bound(args, "END", "END_AFTER", "END_DELAY")?;
        let interval = args
            .read::<Seconds>("INTERVAL")?
            .map(|s| Timestamp::from_secs_f64(s.0));
        (self.end, self.end_from) = match (end, interval) {
            (Some(_), Some(_)) => {
                args.error("END, END_AFTER, END_DELAY and INTERVAL are mutually exclusive");
                return Err(());
            }
            (Some(e), None) => e,
            (None, Some(iv)) => (iv, From::Start),
            (None, None) => (Timestamp(i64::MAX), From::Abs),
        };
        let stop = args.read("STOP")?.unwrap_or(false);
        self.end_call = args.read("END_CALL")?;
        if stop {
            if self.end_call.is_some() {
                args.error("END_CALL and STOP are mutually exclusive");
                return Err(());
            }
            self.end_call = Some(HandlerCall {
                handler: "stop".into(),
                value: "true".into(),
            });
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        if let Some(call) = &self.end_call {
            call.check_as("END_CALL", cx)?;
        }
        self.init = cx.now();
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_split(batch, cx, |p, cx| self.passes(p.timestamp(), cx));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_split(max, cx, |p, cx| self.passes(p.timestamp(), cx))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .unconnected_drops()
            .read("start", |e| e.show(e.start))
            .write("start", |e, v, _| {
                e.set_time(v, |e, t| {
                    if !e.ready {
                        e.first_packet(t);
                    }
                    e.start = t;
                })
            })
            .read("end", |e| e.show(e.end))
            .write("end", |e, v, _| {
                e.set_time(v, |e, t| {
                    e.end = t;
                    e.end_from = From::Abs;
                })
            })
            .read("interval", |e| {
                if e.ready && e.end.0 != i64::MAX {
                    (e.end - e.start).to_string()
                } else {
                    "-".to_string()
                }
            })
            .write("interval", |e, v, _| {
                e.set_time(v, |e, t| e.end = e.start + t)
            })
            .write("extend_interval", |e, v, _| {
                e.set_time(v, |e, t| e.end = e.end + t)
            })
            .into()
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
