//! TimeSortedSched — merges timestamp-sorted packet streams
//!
//! Synopsis: `TimeSortedSched([*keywords* STOP, BUFFER])`
//!
//! Ports: any number of pull inputs, 1 pull output. A pull on the output first fills the
//! element's buffer (up to BUFFER packets per input) from every input that may have packets,
//! then returns the buffered packet with the earliest timestamp (ties: the lower input, then
//! the earlier arrival). Inputs are expected to be sorted by timestamp each; a larger BUFFER
//! absorbs small disorder. If an emitted packet is earlier than one emitted before, the
//! `well_ordered` handler turns false. Inputs behind an empty notifier (a Queue) are skipped
//! while it says empty; an input without one counts as exhausted once a pull from it returns
//! nothing. Nothing is dropped.
//!
//! Arguments:
//! - `STOP` (boolean, default false): stop the router when nothing is buffered and every
//!   input is empty or exhausted.
//! - `BUFFER` (integer ≥ 1, default 1).
//!
//! Handlers: `well_ordered` (r, `true` or `false`).
//!
//! Example: `tss :: TimeSortedSched(STOP true); FromDump(a.pcap) -> [0]tss;
//! FromDump(b.pcap) -> [1]tss; tss -> ToDump(merged.pcap)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, Timestamp};
use sluice_lang::args::Args;

/// One input: its notifiers (`None`: it has none), free buffer slots, and whether its last
/// pull returned a packet.
struct Input {
    notes: Option<Vec<NotifierId>>,
    space: usize,
    live: bool,
}

/// The TimeSortedSched element.
pub struct TimeSortedSched {
    stop: bool,
    buffer: usize,
    inputs: Vec<Input>,
    /// Buffered packets with their input and arrival number.
    pkts: Vec<(Packet, usize, u64)>,
    arrivals: u64,
    last: Timestamp,
    well_ordered: bool,
}

impl Default for TimeSortedSched {
    fn default() -> TimeSortedSched {
        TimeSortedSched {
            stop: false,
            buffer: 1,
            inputs: Vec::new(),
            pkts: Vec::new(),
            arrivals: 0,
            last: Timestamp::ZERO,
            well_ordered: true,
        }
    }
}

impl TimeSortedSched {
    /// One packet, the earliest buffered; with nothing buffered or signalled, a STOP
    /// request when `may_stop` (the pull asked for nothing so far, as Click pulls one
    /// packet at a time).
    fn pull_one(&mut self, may_stop: bool, cx: &mut Cx) -> Option<Packet> {
        let mut signals_on = false;
        for i in 0..self.inputs.len() {
            let inp = &self.inputs[i];
            let active = match &inp.notes {
                Some(n) => cx.any_active(n),
                None => inp.live,
            };
            if !active {
                continue;
            }
            signals_on = true;
            while self.inputs[i].space > 0 {
                match cx.pull_one(i) {
                    Some(p) => {
                        self.pkts.push((p, i, self.arrivals));
                        self.arrivals += 1;
                        self.inputs[i].space -= 1;
                    }
                    None => {
                        self.inputs[i].live = false;
                        break;
                    }
                }
            }
        }
        let best = (0..self.pkts.len()).min_by_key(|&k| {
            let (p, i, n) = &self.pkts[k];
            (p.timestamp(), *i, *n)
        });
        let Some(k) = best else {
            if self.stop && !signals_on && may_stop {
                cx.request_driver_stop();
            }
            return None;
        };
        let (p, i, _) = self.pkts.swap_remove(k);
        self.inputs[i].space += 1;
        let t = p.timestamp();
        if t != Timestamp::ZERO {
            if self.last != Timestamp::ZERO && t < self.last {
                self.well_ordered = false;
            }
            self.last = t;
        }
        Some(p)
    }
}

impl Element for TimeSortedSched {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        args.read_into("STOP", &mut self.stop)?;
        args.read_into("BUFFER", &mut self.buffer)?;
        if self.buffer == 0 {
            args.error("BUFFER must be >= 1");
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.inputs = (0..cx.ninputs())
            .map(|i| Input {
                notes: cx.upstream_empty_notifiers(i),
                space: self.buffer,
                live: true,
            })
            .collect();
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut out = Batch::new();
        while out.len() < max {
            match self.pull_one(out.is_empty(), cx) {
                Some(p) => {
                    let _ = out.push(p);
                }
                None => break,
            }
        }
        out
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("well_ordered", |e| e.well_ordered)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "TimeSortedSched",
    ports: "-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("time_sorted_sched.rs"),
    make: || Box::new(TimeSortedSched::default()),
};
