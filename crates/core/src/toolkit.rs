//! Building blocks every element family uses: sorting packets between outputs by verdict
//! (push and pull paths), pushing a batch whose packets go to different outputs,
//! collecting packets for one output into batches, the handler calls that arguments name
//! (END_CALL, COUNT_CALL), and counting packets and bytes with their rates.
//!
//! A packet sent to an output that is not connected is dropped and counted by the router as
//! a drop of the element (reason "pushed to an unconnected output"), as Click's
//! `checked_output_push` drops it; elements need not count these themselves.

use crate::batch::Batch;
use crate::context::Cx;
use crate::handlers::{Handlers, Table};
use crate::packet::Packet;
use crate::time::Timestamp;
use sluice_lang::args::{Args, FromArg};

/// Where a packet goes after an element looked at it.
pub enum Verdict {
    /// Emit on this output port (dropped and counted if the port is not connected).
    Out(usize, Packet),
    /// The packet was consumed (dropped and counted by the element, or kept).
    Gone,
}

/// Push path for elements that sort packets between outputs: applies `f` to each packet of
/// `batch` and pushes the results, one batch per output port, order kept within a port.
///
/// Packets for output 0 stay in the input batch (no copy into a new batch), which is then
/// pushed before the packets of the other outputs.
pub fn push_sorted(mut batch: Batch, cx: &mut Cx, mut f: impl FnMut(Packet, &mut Cx) -> Verdict) {
    let mut o1: Option<Batch> = None;
    batch.filter_map(|p| match f(p, cx) {
        Verdict::Out(0, p) => Some(p),
        Verdict::Out(1, p) => {
            let b = o1.get_or_insert_with(Batch::new);
            if let Err(p) = b.push(p) {
                // Cannot happen (a batch never holds more than BATCH_MAX packets), but
                // stay correct: send the full batch on.
                cx.push(1, std::mem::take(b));
                let _ = b.push(p);
            }
            None
        }
        Verdict::Out(k, p) => {
            cx.push_one(k, p);
            None
        }
        Verdict::Gone => None,
    });
    if !batch.is_empty() {
        cx.push(0, batch);
    }
    if let Some(b) = o1.filter(|b| !b.is_empty()) {
        cx.push(1, b);
    }
}

/// [`push_sorted`] for an element that leaves most packets as they are: when `passes` holds
/// for every packet of `batch` (each would get `Verdict::Out(0, p)` unchanged from `f`), the
/// batch goes on to output 0 as it came, without a verdict per packet.
#[inline]
pub fn push_sorted_or_pass(
    batch: Batch,
    cx: &mut Cx,
    passes: impl Fn(&Packet) -> bool,
    f: impl FnMut(Packet, &mut Cx) -> Verdict,
) {
    if batch.iter().all(passes) {
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    } else {
        push_sorted(batch, cx, f);
    }
}

/// Pull path for the same elements: pulls up to `max` packets from input 0, returns those for
/// output 0 and pushes the others out of their ports.
pub fn pull_sorted(
    max: usize,
    cx: &mut Cx,
    mut f: impl FnMut(Packet, &mut Cx) -> Verdict,
) -> Batch {
    let input = cx.pull(0, max);
    let mut out = Batch::new();
    for p in input {
        match f(p, cx) {
            Verdict::Out(0, p) => {
                let _ = out.push(p);
            }
            Verdict::Out(k, p) => cx.push_one(k, p),
            Verdict::Gone => {}
        }
    }
    out
}

/// The "no output" value for [`push_by_port`].
pub const NO_PORT: u32 = u32::MAX;

/// Pushes `batch`, whose packet `i` is bound for output `ports[i]`, as one batch per output in
/// port order, order kept within a port; packets bound for [`NO_PORT`] (or any port at or
/// beyond `noutputs`) are dropped, and their number returned for the element to count. When
/// every packet goes to the same output (the common case on a forwarding path) the batch is
/// pushed as it is; otherwise it is split in `outs`, scratch space that starts empty and is
/// given one batch per output the first time (an element keeps it between calls; a
/// thread-safe element passes a fresh one).
#[inline]
pub fn push_by_port(
    batch: Batch,
    ports: &[u32],
    noutputs: usize,
    outs: &mut Vec<Batch>,
    cx: &mut Cx,
) -> u64 {
    let n = batch.len();
    if n == 0 {
        return 0;
    }
    let first = ports[0];
    if (first as usize) < noutputs && ports[..n].iter().all(|&o| o == first) {
        cx.push(first as usize, batch);
        return 0;
    }
    if outs.len() < noutputs {
        outs.resize_with(noutputs, Batch::new);
    }
    let mut dropped = 0;
    for (i, p) in batch.into_iter().enumerate() {
        let o = ports[i] as usize;
        if o >= noutputs {
            dropped += 1;
            continue;
        }
        if let Err(p) = outs[o].push(p) {
            cx.push(o, std::mem::take(&mut outs[o]));
            let _ = outs[o].push(p);
        }
    }
    for (o, b) in outs.iter_mut().enumerate().take(noutputs) {
        if !b.is_empty() {
            cx.push(o, std::mem::take(b));
        }
    }
    dropped
}

/// Collects packets for one output port and pushes them in batches.
pub struct OutBatch {
    port: usize,
    batch: Batch,
}

impl OutBatch {
    /// A collector for output `port`.
    pub fn new(port: usize) -> OutBatch {
        OutBatch {
            port,
            batch: Batch::new(),
        }
    }

    /// Adds a packet, pushing a full batch first.
    #[inline]
    pub fn add(&mut self, p: Packet, cx: &mut Cx) {
        if let Err(p) = self.batch.push(p) {
            let full = std::mem::take(&mut self.batch);
            cx.push(self.port, full);
            let _ = self.batch.push(p);
        }
    }

    /// Pushes the packets collected so far, if any, so that what the element does next (a
    /// handler call) comes after they have left.
    pub fn send(&mut self, cx: &mut Cx) {
        if !self.batch.is_empty() {
            cx.push(self.port, std::mem::take(&mut self.batch));
        }
    }

    /// Pushes what is left.
    #[inline]
    pub fn flush(self, cx: &mut Cx) {
        if !self.batch.is_empty() {
            cx.push(self.port, self.batch);
        }
    }
}

/// A write-handler call named in a configuration argument (Click's `HandlerCall`), such as
/// END_CALL's `HANDLER [VALUE]`: HANDLER is `ELEMENT.NAME`, or a router handler (`stop`); a
/// quoted HANDLER is unquoted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerCall {
    /// The handler path.
    pub handler: String,
    /// The value written (may be empty).
    pub value: String,
}

/// `s` (trimmed) with its first word unquoted, if that word is quoted: Click unquotes a
/// HANDLER (`cp_handler_name`), and a call quoted whole as one word (`"c.write 5"`) is read as
/// the call it holds.
fn unquote_first(s: &str) -> Option<String> {
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let end = s[1..].find(q).map_or(s.len(), |i| i + 2);
    let inner = sluice_lang::args::unquote(&s[..end]);
    Some(format!("{} {}", inner, s[end..].trim()))
}

impl FromArg for HandlerCall {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(u) = unquote_first(s) {
            return HandlerCall::from_arg(&u);
        }
        let (handler, value) = s
            .split_once(char::is_whitespace)
            .map_or((s, ""), |(h, v)| (h, v.trim()));
        if handler.is_empty() {
            return Err("expected 'HANDLER [VALUE]'".into());
        }
        Ok(HandlerCall {
            handler: handler.to_string(),
            value: value.to_string(),
        })
    }
}

impl HandlerCall {
    /// Checks, as Click does at initialisation, that the handler exists and is writable.
    pub fn check(&self, cx: &Cx) -> Result<(), String> {
        cx.check_handler(&self.handler, true)
            .map_err(|e| format!("{}: {}", self.handler, e))
    }

    /// [`HandlerCall::check`] for the call given as argument `what` (such as `END_CALL`): the
    /// error reads `WHAT: HANDLER: error`, as an element's initialisation reports it.
    pub fn check_as(&self, what: &str, cx: &Cx) -> Result<(), String> {
        self.check(cx).map_err(|e| format!("{what}: {e}"))
    }

    /// Makes the call; a failure is reported on standard error as `ELEMENT: WHAT HANDLER:
    /// error` (`what` names the argument, such as `END_CALL`).
    pub fn call(&self, what: &str, cx: &mut Cx) {
        if let Err(e) = cx.write_handler(&self.handler, &self.value) {
            eprintln!("{}: {} {}: {}", cx.name(), what, self.handler, e);
        }
    }
}

/// A handler call made when a count reaches a threshold (Click's `N HANDLER [VALUE]`
/// arguments, such as Counter's COUNT_CALL): N is a decimal count, the rest a
/// [`HandlerCall`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountCall {
    /// The count N.
    pub at: u64,
    /// The call.
    pub call: HandlerCall,
}

impl FromArg for CountCall {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if let Some(u) = unquote_first(s) {
            return CountCall::from_arg(&u);
        }
        let err = || "expected 'N HANDLER [VALUE]'".to_string();
        let (n, rest) = s.split_once(char::is_whitespace).ok_or_else(err)?;
        Ok(CountCall {
            at: n.parse().map_err(|_| err())?,
            call: HandlerCall::from_arg(rest).map_err(|_| err())?,
        })
    }
}

/// What a [`Trigger`] watches in a [`Tally`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Watch {
    /// The packet count: the call is due when it equals N (Click's COUNT_CALL).
    #[default]
    Packets,
    /// The byte count: the call is due once it is at least N (BYTE_COUNT_CALL).
    Bytes,
}

/// A [`CountCall`] argument as an element keeps it (Counter's COUNT_CALL): checked at
/// initialisation, made once when the count it watches reaches N, and again after
/// [`Trigger::rearm`].
#[derive(Clone, Debug, Default)]
pub struct Trigger {
    /// The argument's name, such as `COUNT_CALL`.
    what: &'static str,
    /// The count it watches.
    watch: Watch,
    /// The call; `None` without the argument.
    call: Option<CountCall>,
    /// True once made, until re-armed.
    fired: bool,
}

impl Trigger {
    /// Reads the optional keyword argument `what` (`N HANDLER [VALUE]`), a call on `watch`.
    /// Errors are recorded in `args`, as its readers do.
    #[allow(clippy::result_unit_err)]
    pub fn read(args: &mut Args, what: &'static str, watch: Watch) -> Result<Trigger, ()> {
        Ok(Trigger {
            what,
            watch,
            call: args.read(what)?,
            fired: false,
        })
    }

    /// Checks the call's handler as Click does at initialisation (`WHAT: HANDLER: error`).
    pub fn check(&self, cx: &Cx) -> Result<(), String> {
        self.call
            .as_ref()
            .map_or(Ok(()), |c| c.call.check_as(self.what, cx))
    }

    /// True while the call is still to be made.
    pub fn armed(&self) -> bool {
        self.call.is_some() && !self.fired
    }

    /// True if the call is still to be made and `tally` has reached N.
    pub fn due(&self, tally: &Tally) -> bool {
        self.call.as_ref().is_some_and(|c| {
            !self.fired
                && match self.watch {
                    Watch::Packets => tally.count == c.at,
                    Watch::Bytes => tally.bytes >= c.at,
                }
        })
    }

    /// Makes the call, which is then disarmed.
    pub fn fire(&mut self, cx: &mut Cx) {
        if let Some(c) = &self.call {
            self.fired = true;
            c.call.call(self.what, cx);
        }
    }

    /// Disarms the call if `tally` is already at or past N (counts taken over at a hot swap:
    /// the old configuration made that call, or the count passed it before this one ran).
    pub fn disarm_if_reached(&mut self, tally: &Tally) {
        if let Some(c) = &self.call {
            self.fired |= match self.watch {
                Watch::Packets => tally.count >= c.at,
                Watch::Bytes => tally.bytes >= c.at,
            };
        }
    }

    /// Arms the call again (a reset).
    pub fn rearm(&mut self) {
        self.fired = false;
    }

    /// A write of `N HANDLER [VALUE]` to the handler that sets the call (named as the argument,
    /// in lower case): checks the handler as at initialisation, then replaces and arms the
    /// call.
    pub fn set(&mut self, value: &str, cx: &Cx) -> Result<(), String> {
        let name = self.what.to_ascii_lowercase();
        let c = CountCall::from_arg(value).map_err(|e| format!("{name}: {e}"))?;
        c.call.check_as(&name, cx)?;
        (self.call, self.fired) = (Some(c), false);
        Ok(())
    }

    /// The element's read/write handler `name` for the call, for [`Table::nest`]: a read gives
    /// N, or nothing without a call; a write sets the call ([`Trigger::set`]). Counter's
    /// `count_call`.
    pub fn handler_rw(name: &'static str) -> Handlers {
        Table::<Trigger>::new()
            .read_with(name, |t| {
                t.call.as_ref().map_or(String::new(), |c| c.at.to_string())
            })
            .write(name, |t, v, cx| t.set(v, cx))
            .setting()
            .into()
    }

    /// The element's write-only handler `name` that sets the call ([`Trigger::set`]), for
    /// [`Table::nest`]. Counter's `byte_count_call`.
    pub fn handler_w(name: &'static str) -> Handlers {
        Table::<Trigger>::new()
            .write(name, |t, v, cx| t.set(v, cx))
            .into()
    }
}

/// Packets and bytes counted, with their rates over windows of at least one second (Click's
/// Counter). Its [`Tally::handlers`]: `count`, `byte_count`, `rate`, `bit_rate`, `byte_rate`.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Packets counted.
    pub count: u64,
    /// Bytes counted.
    pub bytes: u64,
    /// When the open rate window started (zero: none open yet), and the counts then.
    start: (Timestamp, u64, u64),
    /// Packets per second over the last closed window.
    rate: f64,
    /// Bytes per second over the last closed window.
    byte_rate: f64,
}

impl Tally {
    /// The shortest rate window.
    const WINDOW: Timestamp = Timestamp(1_000_000_000);

    /// Counts the packets of `batch` and brings the rates up to `now`.
    #[inline]
    pub fn add_batch(&mut self, batch: &Batch, now: Timestamp) {
        self.count += batch.len() as u64;
        self.bytes += batch.byte_len() as u64;
        self.update(now);
    }

    /// Counts a packet of `len` bytes; each of `calls` that is then due is made, after
    /// `before(cx)` (which can send on the packets before this one). Call
    /// [`Tally::update`] after the batch.
    #[inline]
    pub fn count_one(
        &mut self,
        len: usize,
        calls: &mut [Trigger],
        cx: &mut Cx,
        mut before: impl FnMut(&mut Cx),
    ) {
        self.count += 1;
        self.bytes += len as u64;
        for call in calls.iter_mut().filter(|c| c.due(self)) {
            before(cx);
            call.fire(cx);
        }
    }

    /// Adds the counts and rates of `old` (an element a hot swap replaces, or one of its
    /// per-thread copies): on a fresh tally, it goes on where `old` was.
    pub fn absorb(&mut self, old: &Tally) {
        self.count += old.count;
        self.bytes += old.bytes;
        self.rate += old.rate;
        self.byte_rate += old.byte_rate;
        if self.start.0 == Timestamp::ZERO {
            self.start = old.start;
        } else {
            self.start.1 += old.start.1;
            self.start.2 += old.start.2;
        }
    }

    /// Brings the rates up to `now`, after counting: once the open window has lasted a second,
    /// its rates are kept and the next window opens.
    pub fn update(&mut self, now: Timestamp) {
        let (start, count, bytes) = self.start;
        let dt = now - start;
        if dt < Self::WINDOW {
            return;
        }
        if start != Timestamp::ZERO {
            let secs = dt.0 as f64 / 1e9;
            self.rate = self.count.saturating_sub(count) as f64 / secs;
            self.byte_rate = self.bytes.saturating_sub(bytes) as f64 / secs;
        }
        self.start = (now, self.count, self.bytes);
    }

    /// Zeroes the counts and forgets the rates; the next update opens a window.
    pub fn reset(&mut self) {
        *self = Tally::default();
    }

    /// The handlers `count`, `byte_count` (r) and `rate`, `bit_rate`, `byte_rate` (r: per
    /// second over the last window, rounded), for [`Table::nest`].
    pub fn handlers() -> Handlers {
        Table::<Tally>::new()
            .read("count", |t| t.count)
            .read("byte_count", |t| t.bytes)
            .read("rate", |t| format!("{:.0}", t.rate))
            .read("bit_rate", |t| format!("{:.0}", t.byte_rate * 8.0))
            .read("byte_rate", |t| format!("{:.0}", t.byte_rate))
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handler_call_parses_handler_and_value() {
        let c = HandlerCall::from_arg(" c.reset ").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("c.reset", ""));
        let c = HandlerCall::from_arg("s.run  a b").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("s.run", "a b"));
        assert!(HandlerCall::from_arg("  ").is_err());
        let c = HandlerCall::from_arg("\"c.reset\"").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("c.reset", ""));
        let c = HandlerCall::from_arg("'s.run a' b").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("s.run", "a b"));
        assert!(HandlerCall::from_arg("\"\"").is_err());
    }

    #[test]
    fn count_call_parses_count_and_call() {
        let c = CountCall::from_arg("5 s.switch 1").unwrap();
        assert_eq!(c.at, 5);
        assert_eq!(
            (c.call.handler.as_str(), c.call.value.as_str()),
            ("s.switch", "1")
        );
        assert_eq!(CountCall::from_arg("\"5 stop\"").unwrap().at, 5);
        for bad in ["", "5", "x stop", "-1 stop"] {
            assert!(CountCall::from_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tally_rates_cover_the_last_second() {
        let mut t = Tally::default();
        let s = |n: i64| Timestamp(n * 1_000_000_000);
        let mut b = Batch::new();
        for _ in 0..25 {
            let _ = b.push(Packet::from_bytes(&[0; 10]));
        }
        t.add_batch(&Batch::new(), s(10));
        t.add_batch(&b, s(10) + Timestamp(500));
        assert_eq!(t.rate, 0.0);
        t.add_batch(&b, s(12));
        assert_eq!((t.count, t.bytes), (50, 500));
        assert_eq!((t.rate, t.byte_rate), (25.0, 250.0));
        t.reset();
        t.update(s(13));
        assert_eq!((t.count, t.rate), (0, 0.0));
    }
}
