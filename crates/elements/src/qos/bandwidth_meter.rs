//! BandwidthMeter — sorts packets by the byte rate of the stream
//!
//! Synopsis: `BandwidthMeter(RATE1, RATE2, ..., RATEn)`
//!
//! Ports: 1 push input, n + 1 push outputs (one more than the rates). The element measures
//! the rate of its input in bytes per second with Click's moving average (one-millisecond
//! epochs of the router clock, weight 1/16 per epoch; simulated under `--simtime`) and sends
//! each packet to the output of the band the rate is in: output 0 while the rate is below
//! RATE1, output i while it is at least RATEi and below RATEi+1, output n from RATEn up. The
//! whole stream goes to one output at a time (a meter does not split it: see
//! BandwidthRatedSplitter for that). The average changes only when an epoch ends, so a packet
//! is judged by the traffic before its millisecond. Nothing is dropped.
//!
//! Arguments: one or more bandwidths (`384kbps`, `10Mbps`, `1MBps`; a plain number is bytes
//! per second, with Click's warning), each larger than the one before, at most 4,194,303
//! bytes per second (the estimator's fixed-point limit). There must be exactly one argument
//! fewer than output ports.
//!
//! Handlers: `rate` (r): the measured rate in bytes per second, printed as Click prints
//! it, as of the latest packet's millisecond (Click's also decays the average up to the
//! moment of the read); `meters` (r): the rates, in bytes per second, as the estimator
//! stores them.
//!
//! Example: `src -> m :: BandwidthMeter(1MBps); m[0] -> in_profile; m[1] -> excess`

use sluice_core::Timestamp;
use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table};
use sluice_lang::args::{Args, Bandwidth, FromArg, Rate};

use super::rate_ewma::{unparse_fixed, RateEwma, EPOCHS_PER_SEC, SCALE};

/// What a meter counts: packets (Meter) or bytes (BandwidthMeter).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    Packets,
    Bytes,
}

/// The largest rate the estimator can compare with (Click's limit).
const MAX_RATE: u32 = u32::MAX >> SCALE;

/// The Meter and BandwidthMeter elements.
pub struct RateMeter {
    unit: Unit,
    rate: RateEwma,
    /// The band limits, scaled as the estimator's average.
    meters: Vec<u32>,
}

impl RateMeter {
    /// A meter counting `unit`.
    pub(crate) fn new(unit: Unit) -> RateMeter {
        RateMeter {
            unit,
            rate: RateEwma::new(Timestamp::ZERO),
            meters: Vec::new(),
        }
    }

    /// Reads one rate argument: the whole rate and whether it was written without a unit.
    fn parse_rate(&self, s: &str) -> Option<(u32, bool)> {
        let v = match self.unit {
            Unit::Packets => Rate::from_arg(s).ok()?.0,
            Unit::Bytes => Bandwidth::from_arg(s).ok()?.0,
        };
        let unitless = f64::from_arg(s).is_ok();
        Some((v.round().clamp(0.0, u32::MAX as f64) as u32, unitless))
    }

    fn meters_string(&self) -> String {
        let freq = EPOCHS_PER_SEC as u64;
        let all: Vec<String> = self
            .meters
            .iter()
            .map(|&m| unparse_fixed(m as u64 * freq, SCALE))
            .collect();
        all.join(" ")
    }
}

impl Element for RateMeter {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let words = args.take_raw();
        if words.is_empty() {
            let class = match self.unit {
                Unit::Packets => "Meter",
                Unit::Bytes => "BandwidthMeter",
            };
            args.error(format!("too few arguments to {class}(rate, ...)"));
            return Err(());
        }
        let mut rates = Vec::with_capacity(words.len());
        for (i, w) in words.iter().enumerate() {
            let Some((r, unitless)) = self.parse_rate(w) else {
                args.error(format!("argument {} syntax error", i + 1));
                return Err(());
            };
            if rates.last().is_some_and(|&prev| r <= prev) {
                args.error(format!("rate {} must be > rate {}", i + 1, i));
                return Err(());
            }
            if unitless && self.unit == Unit::Bytes {
                cx.warning(&format!(
                    "no units for bandwidth argument {}, assuming Bps",
                    i + 1
                ));
            }
            rates.push(r);
        }
        if let Some(i) = rates.iter().position(|&r| r > MAX_RATE) {
            args.error(format!("rate {} too large (max {})", i + 1, MAX_RATE));
            return Err(());
        }
        self.meters = rates
            .iter()
            .map(|&r| (r << SCALE) / EPOCHS_PER_SEC)
            .collect();
        if self.meters.len() + 1 != cx.noutputs() {
            args.error(format!(
                "need {} arguments, one less than the number of output ports",
                cx.noutputs().saturating_sub(1)
            ));
            return Err(());
        }
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.rate = RateEwma::new(cx.now());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        // The average moves only between epochs, and a batch arrives at one instant: every
        // packet of it sees the same average, so the batch goes out whole.
        let samples = match self.unit {
            Unit::Packets => batch.len(),
            Unit::Bytes => batch.byte_len(),
        };
        self.rate.update(cx.now(), samples as u32);
        let r = self.rate.scaled();
        let out = self
            .meters
            .iter()
            .position(|&m| r < m)
            .unwrap_or(self.meters.len());
        cx.push(out, batch);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("rate", |e| e.rate.unparse())
            .read("meters", RateMeter::meters_string)
            .setting()
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "BandwidthMeter",
    ports: "1/2-",
    processing: "h/h",
    flow: "",
    source: include_str!("bandwidth_meter.rs"),
    make: || Box::new(RateMeter::new(Unit::Bytes)),
};
