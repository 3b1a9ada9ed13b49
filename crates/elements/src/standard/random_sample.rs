//! RandomSample — samples packets with a given probability
//!
//! Synopsis: `RandomSample([P, *keywords* SAMPLE, DROP, ACTIVE])`
//!
//! Ports: 1 input, 1 or 2 outputs; input and output 0 push or pull, output 1 push. Each packet
//! is kept with probability P and leaves on output 0; the others leave on output 1 if it is
//! connected and are dropped otherwise, and are counted in `drops` either way (as in Click).
//! In pull mode a pull that draws a dropped packet returns nothing for it. RandomSeed makes
//! the draws repeatable.
//!
//! Arguments: one of P, SAMPLE and DROP is required; SAMPLE and DROP not both.
//! - `P` or `SAMPLE` (real between 0 and 1): the sampling probability.
//! - `DROP` (real between 0 and 1): the drop probability, 1 − SAMPLE.
//! - `ACTIVE` (boolean, default true): when false, every packet goes to output 0.
//!
//! Probabilities are kept, as in Click, in 28-bit fixed point.
//!
//! Handlers: `sampling_prob` (rw), `drop_prob` (rw), `active` (rw), `drops` (r: packets not
//! kept, Click's count), `drop_details` (r: packets dropped because output 1 is not connected).
//!
//! Example: `src -> RandomSample(0.01) -> IPPrint -> Discard`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::random_u32;

const SHIFT: u32 = 28;
const ONE: u32 = 1 << SHIFT;

/// The RandomSample element.
pub struct RandomSample {
    /// Sampling probability in 28-bit fixed point.
    prob: u32,
    active: bool,
    /// Packets not kept, whether sent to output 1 or dropped (Click's `drops`).
    unsampled: u64,
}

impl Default for RandomSample {
    fn default() -> RandomSample {
        RandomSample {
            prob: ONE,
            active: true,
            unsampled: 0,
        }
    }
}

/// A probability in 28-bit fixed point, or an error.
fn fixed(v: f64) -> Result<u32, String> {
    if (0.0..=1.0).contains(&v) {
        Ok((v * ONE as f64).round() as u32)
    } else {
        Err("sampling probability must be between 0 and 1".into())
    }
}

/// A fixed-point probability as a decimal.
fn unparse(p: u32) -> String {
    let s = format!("{:.8}", p as f64 / ONE as f64);
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() {
        "0".into()
    } else {
        s.into()
    }
}

/// Parses a probability written to a handler.
fn parse_prob(v: &str) -> Result<u32, String> {
    v.trim()
        .parse::<f64>()
        .ok()
        .and_then(|v| fixed(v).ok())
        .ok_or_else(|| "Must be given a number between 0.0 and 1.0".to_string())
}

impl RandomSample {
    /// Draws whether the next packet is kept.
    fn keep(&self) -> bool {
        !self.active || (random_u32() & (ONE - 1)) < self.prob
    }

    /// Keeps the sampled packets of `batch`; the others go to output 1.
    fn split(&mut self, mut batch: Batch, cx: &mut Cx) -> Batch {
        let mut rejected = Batch::new();
        batch.filter_map(|p| {
            if self.keep() {
                Some(p)
            } else {
                let _ = rejected.push(p);
                None
            }
        });
        if !rejected.is_empty() {
            self.unsampled += rejected.len() as u64;
            cx.push(1, rejected);
        }
        batch
    }
}

impl Element for RandomSample {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let p: Option<f64> = args.read_p("P")?;
        let sample: Option<f64> = args.read("SAMPLE")?;
        let drop: Option<f64> = args.read("DROP")?;
        args.read_into("ACTIVE", &mut self.active)?;
        let prob = match (p, sample, drop) {
            (_, Some(_), Some(_)) => Err("give at most one of SAMPLE and DROP".to_string()),
            (_, None, Some(d)) => fixed(d).map(|d| ONE - d),
            (_, Some(s), None) | (Some(s), None, None) => fixed(s),
            (None, None, None) => Err("sampling probability must be between 0 and 1".into()),
        };
        match prob {
            Ok(p) => {
                self.prob = p;
                Ok(())
            }
            Err(e) => {
                args.error(e);
                Err(())
            }
        }
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let kept = self.split(batch, cx);
        if !kept.is_empty() {
            cx.push(0, kept);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let b = cx.pull(0, max);
        self.split(b, cx)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("sampling_prob", |e| unparse(e.prob))
            .write("sampling_prob", |e, v, _| {
                e.prob = parse_prob(v)?;
                Ok(())
            })
            .read("drop_prob", |e| unparse(ONE - e.prob))
            .write("drop_prob", |e, v, _| {
                e.prob = ONE - parse_prob(v)?;
                Ok(())
            })
            .data("active", |e| &mut e.active)
            .read("drops", |e| e.unsampled)
            .unconnected_drops()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RandomSample",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "",
    source: include_str!("random_sample.rs"),
    make: || Box::new(RandomSample::default()),
};
