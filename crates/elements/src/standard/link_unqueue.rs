//! LinkUnqueue — pulls packets and emits them as a serial link of given latency and bandwidth
//!
//! Synopsis: `LinkUnqueue(LATENCY, BANDWIDTH)`
//!
//! Ports: 1 pull input, 1 push output. Models a link: LinkUnqueue pulls a packet only when the
//! link is free, holds the link for the packet's transmission time (its length plus its extra
//! length annotation, divided by BANDWIDTH, in whole microseconds as Click computes it), and
//! pushes the packet out LATENCY after its last byte was sent. Several packets can be in flight
//! at once. Each packet's timestamp annotation is set to the time it leaves, as in Click.
//! Tasks sleep on timers and on the upstream empty notifiers, so a run under `--simtime`
//! finishes at once with the simulated clock showing the link's timing.
//!
//! Arguments:
//! - `LATENCY` (time, mandatory): one-way delay.
//! - `BANDWIDTH` (bandwidth, mandatory, at least 100 bytes/s): `10Mbps`, `1MBps`, or bytes
//!   per second.
//!
//! Handlers: `latency` (r), `bandwidth` (r, bytes/s), `size` (r, packets in flight),
//! `count` (r, packets delivered), `reset` (w, zero the count).
//!
//! Example: `Queue -> LinkUnqueue(10ms, 1Mbps) -> ToDevice(eth0)`

use std::collections::VecDeque;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, NotifierId};
use sluice_core::{Packet, Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{Args, Bandwidth, Seconds};

use super::util::fmt_f64;
use crate::io::extra_length;

/// The LinkUnqueue element.
pub struct LinkUnqueue {
    latency: Timestamp,
    bandwidth: f64,
    link_free: Timestamp,
    inflight: VecDeque<(Timestamp, Packet)>,
    count: u64,
    notifiers: Option<Vec<NotifierId>>,
}

impl Default for LinkUnqueue {
    fn default() -> LinkUnqueue {
        LinkUnqueue {
            latency: Timestamp::ZERO,
            bandwidth: 1.0,
            link_free: Timestamp::ZERO,
            inflight: VecDeque::new(),
            count: 0,
            notifiers: None,
        }
    }
}

impl LinkUnqueue {
    /// The time `p` holds the link: its length with the extra length annotation, in whole
    /// microseconds rounded down as Click computes it (bandwidth in units of 100 bytes/s).
    fn tx_time(&self, p: &Packet) -> Timestamp {
        let len = p.len() as u64 + u64::from(extra_length(p));
        let per_100 = (self.bandwidth / 100.0) as u64;
        Timestamp::from_parts(0, (len * 10_000 / per_100) as i64 * 1000)
    }
}

impl Element for LinkUnqueue {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let Seconds(lat) = args.read_mp::<Seconds>("LATENCY")?;
        let Bandwidth(bw) = args.read_mp::<Bandwidth>("BANDWIDTH")?;
        if bw < 100.0 {
            args.error("bandwidth too small, minimum 100Bps");
            return Err(());
        }
        self.latency = Timestamp::from_secs_f64(lat);
        self.bandwidth = bw;
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.add_task(sluice_core::sched::DEFAULT_TICKETS, true);
        self.notifiers = cx.upstream_empty_notifiers(0);
        for n in self.notifiers.clone().unwrap_or_default() {
            cx.listen(n);
        }
        Ok(())
    }

    fn run_task(&mut self, cx: &mut Cx) -> bool {
        let now = cx.now();
        // Put packets on the link while it is free.
        let mut pulled = 0;
        let mut upstream_empty = false;
        while self.link_free <= now && pulled < BATCH_MAX {
            let Some(p) = cx.pull_one(0) else {
                upstream_empty = true;
                break;
            };
            pulled += 1;
            let start = self.link_free.max(now);
            self.link_free = start + self.tx_time(&p);
            let mut p = p;
            p.set_timestamp(self.link_free + self.latency);
            self.inflight.push_back((self.link_free + self.latency, p));
        }
        // Deliver what has arrived.
        let mut out = Batch::new();
        while let Some((at, _)) = self.inflight.front() {
            if *at > now || out.is_full() {
                break;
            }
            if let Some((_, p)) = self.inflight.pop_front() {
                let _ = out.push(p);
            }
        }
        let delivered = out.len();
        self.count += delivered as u64;
        if delivered > 0 {
            cx.push(0, out);
        }
        // Decide when to run again.
        let due_now = self.inflight.front().is_some_and(|(at, _)| *at <= now);
        let may_pull = self.link_free <= now
            && (!upstream_empty
                || match &self.notifiers {
                    Some(ns) => cx.any_active(ns),
                    None => true,
                });
        if due_now || may_pull {
            cx.reschedule();
        } else {
            let mut next: Option<Timestamp> = self.inflight.front().map(|(at, _)| *at);
            if self.link_free > now {
                next = Some(next.map_or(self.link_free, |n| n.min(self.link_free)));
            }
            if let Some(at) = next {
                cx.schedule_timer(0, at);
            }
        }
        pulled > 0 || delivered > 0
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        cx.reschedule();
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("latency", |e| e.latency)
            .setting()
            .read("bandwidth", |e| fmt_f64(e.bandwidth))
            .setting()
            .read("size", |e| e.inflight.len())
            .read("count", |e| e.count)
            .action("reset", |e| e.count = 0)
            .into()
    }

    fn cleanup(&mut self, _cx: &mut Cx) {
        self.inflight.clear();
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "LinkUnqueue",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("link_unqueue.rs"),
    make: || Box::new(LinkUnqueue::default()),
};
