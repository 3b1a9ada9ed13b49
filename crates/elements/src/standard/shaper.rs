//! Shaper — lets at most RATE packets per second through a pull path
//!
//! Synopsis: `Shaper(RATE)`, `BandwidthShaper(RATE)`
//!
//! Ports: 1 pull input; pull output 0 and optional pull output 1. A pull on output 0 pulls a
//! packet from the input only when the rate allows one now: within each second the n-th
//! packet may leave once n/RATE of the second has passed (Click's gap rate), so packets leave
//! evenly spaced as long as pulls come often enough. A pull on output 1 pulls from the input
//! only when the rate does *not* allow a packet now, so those packets bypass the shaping
//! (useful for sampling in pull context). BandwidthShaper (whose outputs both shape, as
//! Click's) counts bytes instead of packets:
//! RATE is a bandwidth (`10Mbps`, `1MBps`, or bytes per second), a packet leaves when the
//! bytes sent so far this second are within the allowance, and it then takes its length.
//! Nothing is dropped.
//!
//! Arguments:
//! - `RATE` (mandatory): packets per second (Shaper) or bandwidth (BandwidthShaper).
//!
//! Handlers: `rate` (rw; BandwidthShaper reads in Click's bandwidth form, e.g. `8kbps`),
//! `reset` (w, forget the past: the next pull starts a fresh second).
//!
//! Example: `q :: Queue -> Shaper(1000) -> ToDevice(eth0)`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{Args, Bandwidth, FromArg};

use super::util::{unparse_bandwidth, GapRate, Unit};

/// The Shaper element (also BandwidthShaper).
pub struct Shaper {
    unit: Unit,
    rate: GapRate,
}

impl Shaper {
    fn new(unit: Unit) -> Shaper {
        Shaper {
            unit,
            rate: GapRate::new(0),
        }
    }

    fn parse_rate(&self, s: &str) -> Result<u32, String> {
        let v = match self.unit {
            Unit::Packets => u32::from_arg(s)? as f64,
            Unit::Bytes => Bandwidth::from_arg(s)?.0,
        };
        Ok(v.clamp(0.0, u32::MAX as f64) as u32)
    }
}

impl Element for Shaper {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let rate = match self.unit {
            Unit::Packets => args.read_mp::<u32>("RATE")?,
            Unit::Bytes => args
                .read_mp::<Bandwidth>("RATE")?
                .0
                .clamp(0.0, u32::MAX as f64) as u32,
        };
        self.rate = GapRate::new(rate);
        Ok(())
    }

    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        let now = cx.now();
        let mut out = Batch::new();
        let shaped = port == 0 || self.unit == Unit::Bytes;
        while out.len() < max && self.rate.ready(now) == shaped {
            let Some(p) = cx.pull_one(0) else { break };
            if shaped {
                self.rate.sent(u64::from(self.unit.cost(&p)));
            }
            let _ = out.push(p);
        }
        out
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("rate", |e| match e.unit {
                Unit::Packets => e.rate.rate().to_string(),
                Unit::Bytes => unparse_bandwidth(e.rate.rate()),
            })
            .write("rate", |e, v, cx| {
                let r = e.parse_rate(v.trim()).map_err(|m| format!("RATE: {}", m))?;
                e.rate.set_rate(r, cx.now());
                Ok(())
            })
            .setting()
            .action("reset", |e| e.rate.reset())
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Shaper",
    ports: "1/1-2",
    processing: "l/l",
    flow: "",
    source: include_str!("shaper.rs"),
    make: || Box::new(Shaper::new(Unit::Packets)),
};

/// `BandwidthShaper`: the byte-counting form.
pub const BANDWIDTH_CLASS: ElementClass = ElementClass {
    name: "BandwidthShaper",
    make: || Box::new(Shaper::new(Unit::Bytes)),
    ..CLASS
};
