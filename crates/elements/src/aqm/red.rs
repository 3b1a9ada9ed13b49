//! RED — drops packets early, more often as the queues it watches fill (Random Early Detection)
//!
//! Synopsis: `RED(MIN_THRESH, MAX_THRESH, MAX_P [, keywords QUEUES, STABILITY, GENTLE])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 agnostic, output 1 push.
//!
//! RED watches one or more queues (elements with the Storage interface, such as Queue) and
//! keeps a moving average of the sum of their lengths. Before each packet passes, the
//! average is updated and the packet is either let through on output 0 or marked. Marked
//! packets leave on output 1 when it is connected, else they are dropped and counted. The
//! queues are found as Click finds them: those named by QUEUES, else, by flow-based router
//! context, the nearest ones downstream of output 0 when RED is used in push (it then sits
//! before the queue) or upstream of input 0 when it is used in pull (after the queue).
//!
//! The average is Click's fixed-point one (10 fraction bits) with weight 2^-STABILITY. While
//! the queues are empty it decays once per 20 ms tick that passed since the last empty
//! sighting (Click's idle-time correction; after 100 ticks it is zero). With the average at
//! or below MIN_THRESH nothing is marked; between MIN_THRESH and MAX_THRESH the marking
//! probability p rises linearly from 0 to MAX_P; above MAX_THRESH, in the gentle variant,
//! from MAX_P to 1 at 2*MAX_THRESH; above that (or above MAX_THRESH without GENTLE, or when
//! MAX_P is 1) every packet is marked ("forced drop"). As in Floyd and Jacobson's RED, and
//! as Click does it, random marks ("early drop") are spaced out: after each mark a random R
//! in [0, 65535] is drawn, and the next mark falls on the first packet whose count since the
//! mark exceeds R/p (p in 16-bit fixed point). Marks thus come 1 to 1/p packets apart,
//! (1 + 1/p)/2 on average, evenly rather than in bursts. Random numbers come from the
//! generator that RandomSeed seeds.
//!
//! Arguments:
//! - `MIN_THRESH` (unsigned): average queue length up to which nothing is marked.
//! - `MAX_THRESH` (unsigned, at least MIN_THRESH, at most 65535): average at which the
//!   marking probability reaches MAX_P.
//! - `MAX_P` (real between 0 and 1, kept in 16-bit fixed point): marking probability at
//!   MAX_THRESH.
//! - `QUEUES` (space-separated element names): the queues to watch instead of those found
//!   by router context.
//! - `STABILITY` (unsigned, at most 16, default 4): the average's weight is 2^-STABILITY
//!   (`w_q` in the RED paper); 0 uses the instantaneous length.
//! - `GENTLE` (bool, default true): the gentle variant (the ramp from MAX_P to 1 between
//!   MAX_THRESH and 2*MAX_THRESH).
//!
//! Handlers: `min_thresh`, `max_thresh`, `max_p` (rw; a write is checked as the
//! configuration is, and changes the `config` text), `avg_queue_size` (r, the average, with
//! its fraction), `drops` (r, Click's count: packets marked, sent to output 1 or dropped),
//! `queues` (r, the watched queues' names, one a line), `stats` (r, one a line: the queues'
//! summed length when the last packet passed, the average, the marks), `config` (rw; reads
//! show the thresholds, MAX_P, QUEUES and STABILITY in use; a write reconfigures, keeping
//! the queues and the average), `drop_details` (r, the packets dropped because output 1 is
//! not connected, by reason: early drop, forced drop).
//!
//! Example: `FromDevice(eth0) -> RED(5, 50, 0.02) -> Queue(200) -> ToDevice(eth1)`

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, InitCx, Packet, Table, Timestamp};
use sluice_lang::args::{Args, FromArg};

use crate::standard::util::random_u32;

drop_reasons! {
    /// Why RED drops a packet (with output 1 unconnected).
    enum Reason {
        Early => "early drop",
        Forced => "forced drop",
    }
}

/// Fraction bits of the average queue length (Click's `QUEUE_SCALE`).
const QUEUE_SCALE: u32 = 10;
/// Fraction bits of probabilities: 1.0 is `PROB_ONE`.
pub(super) const PROB_SHIFT: u32 = 16;
/// A probability of 1 in 16-bit fixed point.
pub(super) const PROB_ONE: u32 = 1 << PROB_SHIFT;
/// The length of one tick of the idle-time correction (Click's jiffies at 50 Hz).
const TICK_NS: i64 = 20_000_000;
/// Idle ticks after which the average is simply zero (Click's `update_n` shortcut).
const IDLE_RESET_TICKS: u64 = 100;

/// A probability read as Click's 16-bit fixed point (`0.02` is 1311/65536).
pub(super) struct Prob(pub(super) u32);

impl FromArg for Prob {
    fn from_arg(s: &str) -> Result<Self, String> {
        let v = f64::from_arg(s)?;
        if v < 0.0 {
            return Err("expected real number".into());
        }
        let fixed = (v * f64::from(PROB_ONE) + 0.5).floor();
        if fixed > f64::from(u32::MAX) {
            return Err(format!(
                "out of range, bound {}",
                unparse_fixed(u64::from(u32::MAX), PROB_SHIFT)
            ));
        }
        Ok(Prob(fixed as u32))
    }
}

/// A fixed-point number with `bits` fraction bits written as Click writes it: the shortest
/// decimal that reads back to the same value (Knuth's print_scaled, as generalised by Click).
pub(super) fn unparse_fixed(v: u64, bits: u32) -> String {
    let one = 1i64 << bits;
    let mut out = (v >> bits).to_string();
    let frac = (v & (one as u64 - 1)) as i64;
    if frac == 0 {
        return out;
    }
    out.push('.');
    let mut rounder = 5i64;
    while rounder < one / 2 {
        rounder *= 10;
    }
    let mut rest = 10 * frac + 5;
    let mut slack = 10i64;
    loop {
        if slack > one {
            rest += one / 2 - rounder;
        }
        out.push(char::from(b'0' + (rest >> bits) as u8));
        rest = 10 * (rest & (one - 1));
        slack *= 10;
        if rest <= slack {
            return out;
        }
    }
}

/// Click's moving average of a queue length: 10 fraction bits, weight 2^-stability, each
/// step adding half the weight's unit so that the average does not stay below a constant
/// input.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct QueueAverage {
    /// The average times 2^10.
    scaled: u64,
    stability: u32,
}

impl QueueAverage {
    /// One step towards the observation `x` (for a stability of at least 1).
    fn update(&mut self, x: u64) {
        let target = (x << QUEUE_SCALE) + (1 << (self.stability - 1));
        let step = (target.wrapping_sub(self.scaled) as i64) >> self.stability;
        self.scaled = self.scaled.wrapping_add(step as u64);
    }

    /// `n` steps towards `x`; from 100 steps on, the average is `x`.
    fn update_n(&mut self, x: u64, n: u64) {
        if n >= IDLE_RESET_TICKS {
            self.scaled = x << QUEUE_SCALE;
        } else {
            for _ in 0..n {
                self.update(x);
            }
        }
    }

    /// The weight's exponent: the weight is 2^-stability.
    pub(super) fn stability_shift(&self) -> u32 {
        self.stability
    }

    /// The average rounded to an integer.
    pub(super) fn unscaled(&self) -> u64 {
        (self.scaled + (1 << (QUEUE_SCALE - 1))) >> QUEUE_SCALE
    }
}

/// The parameters a configuration (or a handler write) sets.
#[derive(Clone, Copy, Debug)]
pub(super) struct Params {
    pub(super) min_thresh: u32,
    pub(super) max_thresh: u32,
    /// Out of [`PROB_ONE`].
    pub(super) max_p: u32,
    pub(super) stability: u32,
    pub(super) gentle: bool,
}

impl Params {
    /// Click's checks of the parameters, in its order and words.
    fn check(&self) -> Result<(), String> {
        if self.max_thresh > 0xFFFF {
            Err("MAX_THRESH must be <= 65535".into())
        } else if self.min_thresh > self.max_thresh {
            Err("MIN_THRESH must be <= MAX_THRESH".into())
        } else if self.max_p > PROB_ONE {
            Err("MAX_P must be between 0 and 1".into())
        } else if self.stability > 16 {
            Err("STABILITY must be between 0 and 16".into())
        } else {
            Ok(())
        }
    }
}

/// The RED element (also AdaptiveRED, with `adaptive` set).
pub struct Red {
    /// AdaptiveRED: configured by TARGET, MAX_P adapted every half second.
    pub(super) adaptive: bool,
    pub(super) min_thresh: u32,
    pub(super) max_thresh: u32,
    /// Average above which every packet is marked.
    kill_thresh: u32,
    /// Out of [`PROB_ONE`].
    pub(super) max_p: u32,
    gentle: bool,
    pub(super) avg: QueueAverage,
    /// Slope and offset of the marking probability up to MAX_THRESH (Click's C1, C2) and
    /// beyond it in the gentle variant (G1, G2), in 16-bit fixed point.
    c1: u32,
    c2: u32,
    g1: u32,
    g2: u32,
    /// Packets since the last mark, -1 when the average was last outside the ramp.
    count: i32,
    /// The random R drawn after the last mark.
    random_value: i32,
    /// The tick at which the queues were last seen empty (0: not since they last held
    /// packets).
    last_tick: u64,
    /// The QUEUES argument's names, resolved at configuration.
    named: Vec<usize>,
    /// The watched queues.
    pub(super) queues: Vec<usize>,
    /// Their names, for the `queues` handler.
    queue_names: Vec<String>,
    /// The summed length of the queues when the last packet passed.
    last_size: u64,
    /// Packets marked (Click's `drops`).
    marked: u64,
    drops: Drops<Reason>,
    /// AdaptiveRED: when the next adaptation is due.
    pub(super) next_adapt: Timestamp,
}

impl Red {
    /// An unconfigured element.
    pub(super) fn new(adaptive: bool) -> Red {
        Red {
            adaptive,
            min_thresh: 0,
            max_thresh: 0,
            kill_thresh: 0,
            max_p: 0,
            gentle: true,
            avg: QueueAverage {
                scaled: 0,
                stability: 4,
            },
            c1: 0,
            c2: 1,
            g1: 0,
            g2: PROB_ONE,
            count: -1,
            random_value: 0,
            last_tick: 0,
            named: Vec::new(),
            queues: Vec::new(),
            queue_names: Vec::new(),
            last_size: 0,
            marked: 0,
            drops: Drops::default(),
            next_adapt: Timestamp::ZERO,
        }
    }

    /// The parameters in use.
    fn params(&self) -> Params {
        Params {
            min_thresh: self.min_thresh,
            max_thresh: self.max_thresh,
            max_p: self.max_p,
            stability: self.avg.stability,
            gentle: self.gentle,
        }
    }

    /// Reads RED's arguments (MIN_THRESH, MAX_THRESH, MAX_P, QUEUES, STABILITY, GENTLE).
    fn read_params(args: &mut Args) -> Result<(Params, Option<String>), ()> {
        let min_thresh = args.read_mp("MIN_THRESH")?;
        let max_thresh = args.read_mp("MAX_THRESH")?;
        let max_p = args.read_mp::<Prob>("MAX_P")?.0;
        let queues = args.read("QUEUES")?;
        let stability = args.read("STABILITY")?.unwrap_or(4);
        let gentle = args.read("GENTLE")?.unwrap_or(true);
        let p = Params {
            min_thresh,
            max_thresh,
            max_p,
            stability,
            gentle,
        };
        Ok((p, queues))
    }

    /// Reads the arguments of this element's class.
    fn read_args(&self, args: &mut Args) -> Result<(Params, Option<String>), ()> {
        if self.adaptive {
            Self::read_adaptive_params(args)
        } else {
            Self::read_params(args)
        }
    }

    /// Checks and installs `p` (Click's `finish_configure`, less the queues).
    pub(super) fn apply(&mut self, p: Params) -> Result<(), String> {
        p.check()?;
        self.min_thresh = p.min_thresh;
        self.max_thresh = p.max_thresh;
        self.kill_thresh = if p.gentle && p.max_p != PROB_ONE {
            p.max_thresh * 2
        } else {
            p.max_thresh
        };
        self.max_p = p.max_p;
        self.avg.stability = p.stability;
        self.gentle = p.gentle;
        self.set_slopes();
        Ok(())
    }

    /// Recomputes the probability ramps from the thresholds and MAX_P (Click's
    /// `set_C1_and_C2`).
    pub(super) fn set_slopes(&mut self) {
        if self.min_thresh >= self.max_thresh {
            self.c1 = 0;
            self.c2 = 1;
        } else {
            let span = self.max_thresh - self.min_thresh;
            // Click's unsigned arithmetic, wrapping included.
            self.c1 = self.max_p / span;
            self.c2 = self.max_p.wrapping_mul(self.min_thresh) / span;
        }
        self.g1 = (PROB_ONE - self.max_p)
            .checked_div(self.max_thresh)
            .unwrap_or(0);
        self.g2 = PROB_ONE.wrapping_sub(2 * self.max_p);
    }

    /// The summed length of the watched queues.
    pub(super) fn queue_size(&self, cx: &Cx) -> u64 {
        self.queues
            .iter()
            .map(|&q| cx.storage_of(q).map_or(0, |s| s.0 as u64))
            .sum()
    }

    /// Updates the average for one packet and decides whether to mark it (Click's
    /// `should_drop`).
    fn should_drop(&mut self, cx: &Cx) -> Option<Reason> {
        let s = self.queue_size(cx);
        self.last_size = s;
        if self.avg.stability == 0 {
            self.avg.scaled = s << QUEUE_SCALE;
        } else if s > 0 {
            self.avg.update(s);
            self.last_tick = 0;
        } else {
            let tick = (cx.now().0 / TICK_NS) as u64;
            let idle = if self.last_tick != 0 {
                tick.wrapping_sub(self.last_tick)
            } else {
                1
            };
            self.avg.update_n(0, idle);
            self.last_tick = tick;
        }
        let avg = if self.avg.stability == 0 {
            s
        } else {
            self.avg.unscaled()
        };
        if avg <= u64::from(self.min_thresh) {
            self.count = -1;
            return None;
        } else if avg > u64::from(self.kill_thresh) {
            self.count = -1;
            return Some(Reason::Forced);
        }
        let (slope, offset) = if avg <= u64::from(self.max_thresh) {
            (self.c1, self.c2)
        } else {
            (self.g1, self.g2)
        };
        let p_b = ((u64::from(slope).wrapping_mul(self.avg.scaled) >> QUEUE_SCALE) as u32)
            .wrapping_sub(offset) as i32;
        self.count += 1;
        if self.count > 0 && p_b > 0 && self.count > self.random_value / p_b {
            self.count = 0;
            self.random_value = Self::draw();
            return Some(Reason::Early);
        }
        if self.count == 0 {
            self.random_value = Self::draw();
        }
        None
    }

    /// A random R in [0, 65535], taken from the bits Click takes.
    fn draw() -> i32 {
        ((random_u32() >> 5) & 0xFFFF) as i32
    }

    /// Sends a marked packet to output 1, or drops it.
    fn mark(&mut self, p: Packet, why: Reason, cx: &mut Cx) {
        self.marked += 1;
        if cx.noutputs() > 1 {
            cx.push_one(1, p);
        } else {
            self.drops.count(why);
        }
    }

    /// The `stats` handler.
    fn stats(&self) -> String {
        format!(
            "{} current queue\n{} avg queue\n{} drops\n",
            self.last_size,
            unparse_fixed(self.avg.scaled, QUEUE_SCALE),
            self.marked
        )
    }

    /// Writes `value` into one of the parameters with `set`, checked as a configuration,
    /// and records it in the `config` text as argument `argno`/`keyword` (RED only: an
    /// AdaptiveRED's configuration has no such arguments).
    fn write_param(
        &mut self,
        value: &str,
        argno: usize,
        keyword: &str,
        cx: &mut Cx,
        set: fn(&mut Params, u32),
        parse: fn(&str) -> Result<u32, String>,
    ) -> Result<(), String> {
        let v = parse(value.trim()).map_err(|e| format!("{keyword}: {e}"))?;
        let mut p = self.params();
        set(&mut p, v);
        self.apply(p)?;
        if !self.adaptive {
            let shown = if keyword == "MAX_P" {
                unparse_fixed(u64::from(v), PROB_SHIFT)
            } else {
                v.to_string()
            };
            cx.reconfigure_keyword(argno, keyword, &shown);
        }
        Ok(())
    }

    /// The `config` write handler: reconfigures with `value`, keeping the queues.
    fn write_config(&mut self, value: &str) -> Result<(), String> {
        let mut args = Args::new(value);
        let read = self.read_args(&mut args);
        args.complete().map_err(|e| e.join("\n"))?;
        let Ok((p, _queues)) = read else {
            return Err("bad configuration".into());
        };
        self.apply(p)
    }
}

/// Parses an unsigned threshold.
fn parse_thresh(s: &str) -> Result<u32, String> {
    u32::from_arg(s)
}

/// Parses a probability.
fn parse_prob(s: &str) -> Result<u32, String> {
    Prob::from_arg(s).map(|p| p.0)
}

impl Element for Red {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let (p, queues) = self.read_args(args)?;
        if let Err(e) = p.check() {
            args.error(e);
            return Err(());
        }
        if let Some(q) = queues.filter(|_| self.named.is_empty()) {
            for name in q.split_whitespace() {
                match cx.find_element(name) {
                    Some(e) => self.named.push(e),
                    None => args.error(format!("no element named '{name}'")),
                }
            }
            if !args.errors().is_empty() {
                return Err(());
            }
        }
        self.apply(p).map_err(|e| args.error(e))
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        let mut found = self.named.clone();
        if found.is_empty() {
            let is_storage = |e: &dyn sluice_core::Element| e.storage().is_some();
            found = if cx.output_is_push(0) {
                cx.find_downstream(0, is_storage)
            } else {
                cx.find_upstream(0, is_storage)
            };
            found.sort_unstable();
        }
        if found.is_empty() {
            return Err("no nearby Queues".into());
        }
        let not_storage: Vec<String> = found
            .iter()
            .filter(|&&q| cx.storage_of(q).is_none())
            .map(|&q| format!("'{}' is not a Storage element", cx.element_name(q)))
            .collect();
        if !not_storage.is_empty() {
            return Err(not_storage.join("\n"));
        }
        self.queue_names = found
            .iter()
            .map(|&q| cx.element_name(q).to_string())
            .collect();
        self.queues = found;
        self.avg.scaled = 0;
        self.marked = 0;
        self.count = -1;
        self.last_tick = 0;
        if self.adaptive {
            self.start_adapting(cx);
        } else {
            let max_p = unparse_fixed(u64::from(self.max_p), PROB_SHIFT);
            cx.reconfigure_keyword(0, "MIN_THRESH", &self.min_thresh.to_string());
            cx.reconfigure_keyword(1, "MAX_THRESH", &self.max_thresh.to_string());
            cx.reconfigure_keyword(2, "MAX_P", &max_p);
        }
        let names = self.queue_names.join(" ");
        cx.reconfigure_keyword(usize::MAX, "QUEUES", &names);
        let stability = self.avg.stability.to_string();
        cx.reconfigure_keyword(usize::MAX, "STABILITY", &stability);
        Ok(())
    }

    fn take_state(&mut self, old: &mut dyn Element, _cx: &mut Cx) {
        if let Some(old) = old.as_any().downcast_ref::<Red>() {
            self.avg.scaled = old.avg.scaled;
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        for p in batch {
            match self.should_drop(cx) {
                Some(why) => self.mark(p, why, cx),
                None => cx.push_one(0, p),
            }
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut out = Batch::new();
        while out.len() < max {
            let Some(p) = cx.pull_one(0) else { break };
            match self.should_drop(cx) {
                Some(why) => self.mark(p, why, cx),
                None => {
                    let _ = out.push(p);
                }
            }
        }
        out
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.adapt(cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("min_thresh", |e| e.min_thresh)
            .write("min_thresh", |e, v, cx| {
                e.write_param(
                    v,
                    0,
                    "MIN_THRESH",
                    cx,
                    |p, v| p.min_thresh = v,
                    parse_thresh,
                )
            })
            .setting()
            .read("max_thresh", |e| e.max_thresh)
            .write("max_thresh", |e, v, cx| {
                e.write_param(
                    v,
                    1,
                    "MAX_THRESH",
                    cx,
                    |p, v| p.max_thresh = v,
                    parse_thresh,
                )
            })
            .setting()
            .read("max_p", |e| unparse_fixed(u64::from(e.max_p), PROB_SHIFT))
            .write("max_p", |e, v, cx| {
                e.write_param(v, 2, "MAX_P", cx, |p, v| p.max_p = v, parse_prob)
            })
            .setting()
            .read("avg_queue_size", |e| {
                unparse_fixed(e.avg.scaled, QUEUE_SCALE)
            })
            .read("drops", |e| e.marked)
            .read("queues", |e| {
                e.queue_names
                    .iter()
                    .map(|n| format!("{n}\n"))
                    .collect::<String>()
            })
            .read("stats", Red::stats)
            .write("config", |e, v, _| e.write_config(v))
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RED",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "x/x",
    source: include_str!("red.rs"),
    make: || Box::new(Red::new(false)),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_is_shown_as_click_shows_it() {
        assert_eq!(unparse_fixed(1311, PROB_SHIFT), "0.02");
        assert_eq!(unparse_fixed(u64::from(PROB_ONE), PROB_SHIFT), "1");
        assert_eq!(unparse_fixed(0x8000, PROB_SHIFT), "0.5");
        assert_eq!(unparse_fixed(188, QUEUE_SCALE), "0.184");
        assert_eq!(unparse_fixed(5 * 1024 + 8, QUEUE_SCALE), "5.008");
        assert_eq!(unparse_fixed(0, QUEUE_SCALE), "0");
    }

    #[test]
    fn every_probability_reads_back_from_how_it_is_shown() {
        for x in 0..=PROB_ONE {
            let shown = unparse_fixed(u64::from(x), PROB_SHIFT);
            assert_eq!(Prob::from_arg(&shown).map(|p| p.0), Ok(x), "{shown}");
        }
        assert_eq!(Prob::from_arg("0.02").map(|p| p.0), Ok(1311));
    }

    #[test]
    fn average_steps_as_clicks() {
        let mut a = QueueAverage {
            scaled: 0,
            stability: 4,
        };
        a.update(1);
        assert_eq!(a.scaled, 64);
        a.update(2);
        assert_eq!(a.scaled, 188);
        a.update_n(0, 2);
        assert_eq!(a.scaled, 188 - 12 - 11);
        a.update_n(0, 100);
        assert_eq!(a.scaled, 0);
    }
}
