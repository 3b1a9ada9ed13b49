//! BandwidthRatedSplitter — splits a packet stream at a given bandwidth
//!
//! Synopsis: `BandwidthRatedSplitter(RATE, [*keywords* BURST_DURATION, BURST_BYTES])`
//!
//! Ports: 1 push input, 1 or 2 push outputs. Packets up to RATE bytes per second go to output
//! 0; the rest go to output 1, or are dropped and counted if output 1 is not connected. A token
//! bucket of bytes driven by the router clock decides: a packet conforms while the bucket is
//! positive and takes its length (so the bucket may go into debt by one packet, and a packet
//! longer than the bucket's capacity can still conform). Capacity: RATE × BURST_DURATION
//! (default 20 ms) or BURST_BYTES.
//!
//! Arguments:
//! - `RATE` (bandwidth, mandatory): `10Mbps`, `1MBps`, or plain bytes per second.
//!
//! Handlers: `rate` (rw, bytes/s), `drops` (r), `count0` (r), `count1` (r).
//!
//! Example: `src -> bs :: BandwidthRatedSplitter(1Mbps); bs[0] -> conform; bs[1] -> excess`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::{Args, Bandwidth};

use super::rated_unqueue::read_burst;
use super::util::{fmt_f64, TokenBucket};

/// The BandwidthRatedSplitter element.
pub struct BandwidthRatedSplitter {
    bucket: TokenBucket,
    burst_dur: f64,
    drops: u64,
    counts: [u64; 2],
}

impl Default for BandwidthRatedSplitter {
    fn default() -> BandwidthRatedSplitter {
        BandwidthRatedSplitter {
            bucket: TokenBucket::new(0.0, 1.0),
            burst_dur: 0.02,
            drops: 0,
            counts: [0; 2],
        }
    }
}

impl Element for BandwidthRatedSplitter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let Bandwidth(rate) = args.read_mp::<Bandwidth>("RATE")?;
        let cap = read_burst(args, rate, &["BURST_SIZE", "BURST_BYTES"])?;
        self.burst_dur = cap / rate.max(1e-9);
        self.bucket = TokenBucket::new(rate, cap);
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.bucket.refill(cx.now());
        let mut over = Batch::new();
        let bucket = &mut self.bucket;
        batch.filter_map(|p| {
            if bucket.tokens() > 1e-6 {
                bucket.take(p.len() as f64);
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
                cx.push(1, over);
            } else {
                self.drops += over.len() as u64;
            }
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("rate"),
                Handler::r("drops"),
                Handler::r("count0"),
                Handler::r("count1"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "rate" => fmt_f64(self.bucket.rate()),
            "drops" => self.drops.to_string(),
            "count0" => self.counts[0].to_string(),
            "count1" => self.counts[1].to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "rate" => {
                let Bandwidth(r) =
                    <Bandwidth as sluice_lang::args::FromArg>::from_arg(value.trim())
                        .map_err(|e| format!("rate: {}", e))?;
                self.bucket.set(r, r * self.burst_dur);
                Ok(())
            }
            _ => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "BandwidthRatedSplitter",
    ports: "1/1-2",
    processing: "h/h",
    flow: "",
    source: include_str!("bandwidth_rated_splitter.rs"),
    make: || Box::new(BandwidthRatedSplitter::default()),
};
