//! RatedSplitter, BandwidthRatedSplitter — split a packet stream at a given rate
//!
//! Synopsis: `RatedSplitter(RATE, [*keywords* BURST_DURATION, BURST_SIZE])`,
//! `BandwidthRatedSplitter(RATE, [*keywords* BURST_DURATION, BURST_BYTES])`
//!
//! Ports: 1 push input, 1 or 2 push outputs. Packets up to RATE go to output 0; the rest go to
//! output 1, or are dropped and counted if output 1 is not connected. Unlike a meter, RATE's
//! worth of packets still leaves on output 0 when the input rate is higher. A token bucket
//! driven by the router clock decides.
//!
//! RatedSplitter counts packets. BandwidthRatedSplitter counts bytes: a packet conforms while
//! the bucket holds Click's threshold of 131,072 bytes (the capacity holds it on top of the
//! burst), then takes its length. The bucket is Click's, bit for bit (see RatedUnqueue).
//!
//! Arguments:
//! - `RATE` (mandatory): packets per second for RatedSplitter; a bandwidth for
//!   BandwidthRatedSplitter (`10Mbps`, `1MBps`, or plain bytes per second).
//! - `BURST_DURATION` (keyword, time, default 20 ms): bucket capacity as RATE × duration.
//! - `BURST_SIZE` (keyword; RatedSplitter, packets), `BURST_BYTES` or `BURST_SIZE` (keyword;
//!   BandwidthRatedSplitter, bytes): bucket capacity instead of the duration (not both).
//!
//! Handlers: `rate` (rw; packets/s or bytes/s), `drops` (r), `drop_details` (r: packets dropped
//! because output 1 is not connected), `count0` (r), `count1` (r).
//!
//! Example: `src -> rs :: RatedSplitter(2000); rs[0] -> sample; rs[1] -> rest`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::{read_burst, Burst, TokenBucket, Unit};

/// The RatedSplitter and BandwidthRatedSplitter elements.
pub struct RatedSplitter {
    unit: Unit,
    bucket: TokenBucket,
    burst: Burst,
    counts: [u64; 2],
}

impl RatedSplitter {
    fn new(unit: Unit) -> RatedSplitter {
        RatedSplitter {
            unit,
            bucket: TokenBucket::new(0, 1),
            burst: Burst::Millis(20),
            counts: [0; 2],
        }
    }
}

impl Element for RatedSplitter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let rate = self.unit.read_rate(args)?;
        let burst_keys: &[&str] = match self.unit {
            Unit::Packets => &["BURST_SIZE"],
            Unit::Bytes => &["BURST_SIZE", "BURST_BYTES"],
        };
        self.burst = read_burst(args, burst_keys)?;
        self.bucket = TokenBucket::new(rate, self.burst.capacity(rate, self.unit));
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.bucket.refill(cx.now());
        let mut over = Batch::new();
        let (unit, bucket) = (self.unit, &mut self.bucket);
        batch.filter_map(|p| {
            if unit.conforms(bucket, &p) {
                Some(p)
            } else {
                let _ = over.push(p);
                None
            }
        });
        self.counts[0] += batch.len() as u64;
        if !batch.is_empty() {
            cx.push(0, batch);
        }
        if !over.is_empty() {
            if cx.noutputs() > 1 {
                self.counts[1] += over.len() as u64;
            }
            cx.push(1, over);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("rate", |e| e.bucket.rate())
            .write("rate", |e, v, _| e.unit.set_rate(&mut e.bucket, e.burst, v))
            .unconnected_drops()
            .read("count0", |e| e.counts[0])
            .read("count1", |e| e.counts[1])
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "RatedSplitter",
    ports: "1/1-2",
    processing: "h/h",
    flow: "",
    source: include_str!("rated_splitter.rs"),
    make: || Box::new(RatedSplitter::new(Unit::Packets)),
};

/// `BandwidthRatedSplitter`: the same splitter counting bytes.
pub const BANDWIDTH_CLASS: ElementClass = ElementClass {
    name: "BandwidthRatedSplitter",
    make: || Box::new(RatedSplitter::new(Unit::Bytes)),
    ..CLASS
};
