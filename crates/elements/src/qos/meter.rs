//! Meter — sorts packets by the packet rate of the stream
//!
//! Synopsis: `Meter(RATE1, RATE2, ..., RATEn)`
//!
//! Ports: 1 push input, n + 1 push outputs (one more than the rates). The element measures
//! the rate of its input in packets per second with Click's moving average (one-millisecond
//! epochs of the router clock, weight 1/16 per epoch; simulated under `--simtime`) and sends
//! each packet to the output of the band the rate is in: output 0 while the rate is below
//! RATE1, output i while it is at least RATEi and below RATEi+1, output n from RATEn up. The
//! whole stream goes to one output at a time (a meter does not split it: see RatedSplitter
//! for that). The average changes only when an epoch ends, so a packet is judged by the
//! traffic before its millisecond. Nothing is dropped. BandwidthMeter measures bytes instead.
//!
//! Arguments: one or more rates in packets per second (`1000`, `10kpps`, `2kHz`), each
//! larger than the one before, at most 4,194,303. There must be exactly one argument fewer
//! than output ports.
//!
//! Handlers: `rate` (r): the measured rate in packets per second, printed as Click prints
//! it, as of the latest packet's millisecond (Click's also decays the average up to the
//! moment of the read); `meters` (r): the rates, as the estimator stores them.
//!
//! Example: `src -> m :: Meter(10000); m[0] -> onward; m[1] -> Discard` (drops the stream
//! while it runs at 10,000 packets per second or more)

use sluice_core::ElementClass;

use super::bandwidth_meter::{RateMeter, Unit};

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Meter",
    source: include_str!("meter.rs"),
    make: || Box::new(RateMeter::new(Unit::Packets)),
    ..super::bandwidth_meter::CLASS
};
