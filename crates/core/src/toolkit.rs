//! Building blocks every element family uses: sorting packets between outputs by verdict
//! (push and pull paths), pushing a batch whose packets go to different outputs, and
//! collecting packets for one output into batches.
//!
//! A packet sent to an output that is not connected is dropped and counted by the router as
//! a drop of the element (reason "pushed to an unconnected output"), as Click's
//! `checked_output_push` drops it; elements need not count these themselves.

use crate::batch::Batch;
use crate::context::Cx;
use crate::packet::Packet;

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
/// beyond `outs.len()`) are dropped, and their number returned for the element to count.
/// `outs` is the element's scratch space, one empty batch per output. When every packet goes
/// to the same output (the common case on a forwarding path) the batch is pushed as it is.
#[inline]
pub fn push_by_port(batch: Batch, ports: &[u32], outs: &mut [Batch], cx: &mut Cx) -> u64 {
    let n = batch.len();
    if n == 0 {
        return 0;
    }
    let first = ports[0];
    if (first as usize) < outs.len() && ports[..n].iter().all(|&o| o == first) {
        cx.push(first as usize, batch);
        return 0;
    }
    let mut dropped = 0;
    for (i, p) in batch.into_iter().enumerate() {
        let o = ports[i] as usize;
        if o >= outs.len() {
            dropped += 1;
            continue;
        }
        if let Err(p) = outs[o].push(p) {
            cx.push(o, std::mem::take(&mut outs[o]));
            let _ = outs[o].push(p);
        }
    }
    for (o, b) in outs.iter_mut().enumerate() {
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

    /// Pushes what is left.
    #[inline]
    pub fn flush(self, cx: &mut Cx) {
        if !self.batch.is_empty() {
            cx.push(self.port, self.batch);
        }
    }
}

/// A write-handler call named in a configuration argument (Click's `HandlerCall`), such as
/// END_CALL's `HANDLER [VALUE]`: HANDLER is `ELEMENT.NAME`, or a router handler (`stop`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandlerCall {
    /// The handler path.
    pub handler: String,
    /// The value written (may be empty).
    pub value: String,
}

impl sluice_lang::args::FromArg for HandlerCall {
    fn from_arg(s: &str) -> Result<Self, String> {
        let s = s.trim();
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

    /// Makes the call; a failure is reported on standard error as `ELEMENT: WHAT HANDLER:
    /// error` (`what` names the argument, such as `END_CALL`).
    pub fn call(&self, what: &str, cx: &mut Cx) {
        if let Err(e) = cx.write_handler(&self.handler, &self.value) {
            eprintln!("{}: {} {}: {}", cx.name(), what, self.handler, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sluice_lang::args::FromArg;

    #[test]
    fn handler_call_parses_handler_and_value() {
        let c = HandlerCall::from_arg(" c.reset ").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("c.reset", ""));
        let c = HandlerCall::from_arg("s.run  a b").unwrap();
        assert_eq!((c.handler.as_str(), c.value.as_str()), ("s.run", "a b"));
        assert!(HandlerCall::from_arg("  ").is_err());
    }
}
