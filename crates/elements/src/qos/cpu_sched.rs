//! CPUSched — shares the processor between flows by their reservations (Panama)
//!
//! Synopsis: `CPUSched(RES0, ..., RESn-1 [, keywords BURST, BATCH, PRIORITY])`
//!
//! Ports: n pull inputs, n push outputs. Input i is flow i's queue; output i starts flow i's
//! processing path (the elements that compute on its packets, up to the queue of its output
//! link). A task moves packets from input i to output i, and times, with the processor's cycle
//! counter, how long the path downstream of output i takes for them: the cycles a flow's
//! packets cost are charged to that flow (a batch at most 8 times the flow's average cost,
//! as more means the thread lost the processor meanwhile). The packets are not changed.
//!
//! Scheduling is the potential-based CPU scheduler of the Panama router (Chiueh et al.): the
//! potential of a backlogged flow is the cycles spent on it divided by its reservation, and
//! the backlogged flow of least potential runs next (ties: lowest input). A flow that was
//! idle takes at least the system potential (the potential of the flow chosen last) when
//! it becomes backlogged again, so it cannot save up processing while it sends nothing.
//! Over any busy period each backlogged flow gets processing in proportion to its
//! reservation, whatever its path costs and however fast it sends: a flow that sends more
//! than it reserved fills only its own queue, and one that conforms keeps its share. Spare
//! processing goes to whoever is backlogged (the scheduler is work-conserving).
//!
//! A reservation is either a share of the processor (`0.5`, `50%`) or, as Panama derives it,
//! a link reservation (a bandwidth: `2Mbps`, `250kB/s`): the flow then reserves the cycles
//! its path needs to process that many bytes per second, from the path's measured cycles
//! per byte (a moving average over the flow's recent packets, weight 1/16). All inputs use
//! the same kind. An input with reservation 0 runs only when no other input is backlogged.
//!
//! Inputs behind empty notifiers (Queues) count as backlogged while those say non-empty;
//! others until a pull returns nothing. The task sleeps while every input is empty. Choosing
//! a flow costs one look at each input, so the number of ports, not of packets, sets it.
//! Nothing is held and nothing is dropped.
//!
//! Arguments:
//! - `RESi` (share or bandwidth): flow i's reservation, one per input.
//! - `BURST` (integer, default 32): packets moved per task run.
//! - `BATCH` (integer 1–256, default 1): packets pulled, pushed and timed at once for the
//!   flow chosen; larger batches cost fewer cycle-counter reads and schedule more coarsely.
//! - `PRIORITY` (space-separated integers, one per input, default all 0): priority levels.
//!   A backlogged input of a lower level always runs before those of higher levels (Panama
//!   serves route-cache misses before extension work this way); potentials order the
//!   inputs of one level.
//!
//! Handlers: `stats` (r): one line per input — input, packets, bytes, cycles spent, cycles
//! per packet, reservation, potential; `potential` (r): the system potential; `reset` (w):
//! zero the counters (potentials, which are the schedule's state, stay).
//!
//! Example: `q1 -> [0]cs :: CPUSched(2Mbps, 1Mbps); q2 -> [1]cs; cs[0] -> ext1 -> out1;
//! cs[1] -> ext2 -> out2` (flow 1 keeps the processing for 2 Mbit/s whatever flow 2 sends)

use sluice_core::cpu::cycles;
use sluice_core::{
    ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId, Table, BATCH_MAX,
};
use sluice_lang::args::{Args, Bandwidth, FromArg};

/// Weight of the newest sample in a path's cycles-per-byte average.
const COST_WEIGHT: f64 = 1.0 / 16.0;

/// A batch is charged at most this many times its flow's average cost: cycles beyond that
/// are time the thread was not running (taken by the system or another process), which
/// would otherwise land on whichever flow happened to be running.
const MAX_CHARGE: f64 = 8.0;

/// What a flow reserved.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Reservation {
    /// A fraction of the processor.
    Share(f64),
    /// A link rate in bytes per second, processed at the path's measured cost.
    Bandwidth(f64),
}

impl Reservation {
    fn parse(s: &str) -> Result<Reservation, String> {
        let s = s.trim();
        if let Some(pct) = s.strip_suffix('%') {
            return match f64::from_arg(pct.trim()) {
                Ok(v) if (0.0..=100.0).contains(&v) => Ok(Reservation::Share(v / 100.0)),
                _ => Err(format!("bad share `{s}`")),
            };
        }
        if let Ok(v) = f64::from_arg(s) {
            return match v {
                v if (0.0..=1.0).contains(&v) => Ok(Reservation::Share(v)),
                _ => Err(format!(
                    "share `{s}` out of range 0-1 (write a bandwidth with a unit)"
                )),
            };
        }
        Bandwidth::from_arg(s)
            .map(|b| Reservation::Bandwidth(b.0))
            .map_err(|_| format!("expected share or bandwidth, not `{s}`"))
    }

    fn is_zero(self) -> bool {
        matches!(self, Reservation::Share(0.0) | Reservation::Bandwidth(0.0))
    }
}

impl std::fmt::Display for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reservation::Share(s) => write!(f, "{}%", s * 100.0),
            Reservation::Bandwidth(b) => write!(f, "{}B/s", b),
        }
    }
}

/// One flow's account.
struct Flow {
    reservation: Reservation,
    level: i64,
    notes: Option<Vec<NotifierId>>,
    /// Backlogged when last looked at.
    backlogged: bool,
    potential: f64,
    /// Measured cycles per byte of the path (0 until the first packet).
    cost: f64,
    packets: u64,
    bytes: u64,
    cycles: u64,
}

/// The CPUSched element.
pub struct CPUSched {
    flows: Vec<Flow>,
    burst: usize,
    batch: usize,
    /// The potential of the flow chosen last.
    system: f64,
    /// Per input: found empty during the current task run (kept to avoid an allocation per run).
    skip: Vec<bool>,
}

impl Default for CPUSched {
    fn default() -> CPUSched {
        CPUSched {
            flows: Vec::new(),
            burst: BATCH_MAX,
            batch: 1,
            system: 0.0,
            skip: Vec::new(),
        }
    }
}

impl CPUSched {
    /// The backlogged input to run next: lowest level, then least potential; reservation-0
    /// inputs only when nothing else is backlogged.
    fn choose(&self, cx: &Cx, skip: &[bool]) -> Option<usize> {
        let mut best: Option<(bool, i64, f64, usize)> = None;
        for (i, f) in self.flows.iter().enumerate() {
            if skip[i] || !f.notes.as_ref().is_none_or(|ns| cx.any_active(ns)) {
                continue;
            }
            let key = (f.reservation.is_zero(), f.level, self.start_potential(f), i);
            let better = best.is_none_or(|b| {
                (key.0, key.1)
                    .cmp(&(b.0, b.1))
                    .then(key.2.total_cmp(&b.2))
                    .is_lt()
            });
            if better {
                best = Some(key);
            }
        }
        best.map(|b| b.3)
    }

    /// The potential `f` runs at: its own, or the system potential if it was idle.
    fn start_potential(&self, f: &Flow) -> f64 {
        if f.backlogged {
            f.potential
        } else {
            f.potential.max(self.system)
        }
    }

    /// Charges `spent` cycles for `bytes` bytes of `packets` packets to flow `i`.
    fn charge(&mut self, i: usize, packets: usize, bytes: usize, spent: u64) {
        let f = &mut self.flows[i];
        let spent = match f.cost * bytes as f64 * MAX_CHARGE {
            cap if cap > 0.0 => spent.min(cap as u64),
            _ => spent,
        };
        f.packets += packets as u64;
        f.bytes += bytes as u64;
        f.cycles += spent;
        let per_byte = spent as f64 / bytes.max(1) as f64;
        f.cost = if f.cost == 0.0 {
            per_byte
        } else {
            f.cost + (per_byte - f.cost) * COST_WEIGHT
        };
        let rate = match f.reservation {
            Reservation::Share(s) => s,
            Reservation::Bandwidth(b) => b * f.cost,
        };
        if rate > 0.0 {
            f.potential += spent as f64 / rate;
        }
    }

    fn reset(&mut self) {
        for f in &mut self.flows {
            (f.packets, f.bytes, f.cycles) = (0, 0, 0);
        }
    }

    fn stats(&self) -> String {
        let mut out = String::new();
        for (i, f) in self.flows.iter().enumerate() {
            let per = f.cycles.checked_div(f.packets).unwrap_or(0);
            out += &format!(
                "{i} {} {} {} {per} {} {:.6}\n",
                f.packets, f.bytes, f.cycles, f.reservation, f.potential
            );
        }
        out
    }
}

impl Element for CPUSched {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let n = cx.ninputs();
        if cx.noutputs() != n {
            args.error("needs as many outputs as inputs");
            return Err(());
        }
        self.burst = args.read("BURST")?.unwrap_or(self.burst).max(1);
        self.batch = args
            .read::<usize>("BATCH")?
            .unwrap_or(1)
            .clamp(1, BATCH_MAX);
        let levels: Vec<i64> = match args.read::<String>("PRIORITY")? {
            None => vec![0; n],
            Some(s) => match s.split_whitespace().map(i64::from_arg).collect() {
                Ok(v) => v,
                Err(_) => {
                    args.error("PRIORITY: expected integers");
                    return Err(());
                }
            },
        };
        let words = args.rest();
        if words.len() != n || levels.len() != n {
            args.error(format!(
                "need {n} reservations and priorities, one per input"
            ));
            return Err(());
        }
        let mut flows = Vec::with_capacity(n);
        for (w, level) in words.iter().zip(levels) {
            match Reservation::parse(w) {
                Ok(reservation) => flows.push(Flow {
                    reservation,
                    level,
                    notes: None,
                    backlogged: false,
                    potential: 0.0,
                    cost: 0.0,
                    packets: 0,
                    bytes: 0,
                    cycles: 0,
                }),
                Err(e) => args.error(e),
            }
        }
        let kinds = |f: &Flow| matches!(f.reservation, Reservation::Share(_));
        if flows.iter().any(kinds) && !flows.iter().all(kinds) {
            args.error("reservations must be all shares or all bandwidths");
        }
        if !args.errors().is_empty() {
            return Err(());
        }
        self.flows = flows;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_default_task();
        for i in 0..self.flows.len() {
            let notes = cx.upstream_empty_notifiers(i);
            for &nid in notes.iter().flatten() {
                cx.listen(nid);
            }
            self.flows[i].notes = notes;
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let mut skip = std::mem::take(&mut self.skip);
        skip.clear();
        skip.resize(self.flows.len(), false);
        let mut moved = 0;
        while moved < self.burst {
            let Some(i) = self.choose(cx, &skip) else {
                break;
            };
            let start = self.start_potential(&self.flows[i]);
            let batch = cx.pull(i, self.batch.min(self.burst - moved));
            if batch.is_empty() {
                self.flows[i].backlogged = false;
                skip[i] = true;
                continue;
            }
            self.system = start;
            let f = &mut self.flows[i];
            f.potential = start;
            f.backlogged = true;
            let (n, bytes) = (batch.len(), batch.iter().map(|p| p.len()).sum());
            let t0 = cycles();
            cx.push(i, batch);
            self.charge(i, n, bytes, cycles().wrapping_sub(t0));
            moved += n;
        }
        self.skip = skip;
        let more = self
            .flows
            .iter()
            .any(|f| f.notes.as_ref().is_none_or(|ns| cx.any_active(ns)));
        if more {
            cx.reschedule();
        }
        moved > 0
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("stats", |e| e.stats())
            .read("potential", |e| format!("{:.6}", e.system))
            .action("reset", |e| e.reset())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CPUSched",
    ports: "1-/=",
    processing: "l/h",
    flow: "#/#",
    source: include_str!("cpu_sched.rs"),
    make: || Box::new(CPUSched::default()),
};

#[cfg(test)]
mod tests {
    use super::Reservation;

    #[test]
    fn reservations_parse() {
        assert_eq!(Reservation::parse("0.25"), Ok(Reservation::Share(0.25)));
        assert_eq!(Reservation::parse("50%"), Ok(Reservation::Share(0.5)));
        assert_eq!(
            Reservation::parse("8Mbps"),
            Ok(Reservation::Bandwidth(1_000_000.0))
        );
        assert!(Reservation::parse("2").is_err());
        assert!(Reservation::parse("150%").is_err());
        assert!(Reservation::parse("fast").is_err());
    }
}
