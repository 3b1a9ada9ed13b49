//! EtherSwitch — learning, forwarding Ethernet switch
//!
//! Synopsis: `EtherSwitch([keywords TIMEOUT])`
//!
//! Ports: two or more push inputs and as many push outputs. Input *i* and output *i* are
//! one LAN of the switch (a switch port).
//!
//! Expects Ethernet frames. A frame arriving on port *i* from source address *A* teaches the
//! switch that *A* is reached through port *i* (group source addresses are not learned).
//! The frame then goes to the port its destination was learned on, if that entry has been
//! refreshed within TIMEOUT; frames for unknown, aged-out, broadcast and multicast
//! destinations are flooded: sent out of every port but *i*, in decreasing port order,
//! clones on all but the last. Frames in one input batch keep their order on each output.
//!
//! Dropped and counted (`drop_details`): frames shorter than an Ethernet header ("runt
//! frame"); frames whose destination was learned on the port they came in on ("destination
//! on arrival port", as in Click); frames arriving on a port in the 802.1D learning state
//! (`learn_only`, set by EtherSpanTree), which are learned from but not forwarded ("arrival
//! port only learning").
//!
//! Ageing uses the router's clock (Click uses the packets' timestamp annotations). Expired
//! entries are never used; a sweep removes them from memory, at the latest one TIMEOUT
//! after they expire, so the `table` handler may list an expired entry until then. The
//! table has no size limit (as in Click): it holds one entry per source address seen
//! within about twice TIMEOUT.
//!
//! Arguments:
//! - `TIMEOUT` (seconds, default 300): how long an address stays associated with its port
//!   without frames from it. 0 makes the switch learn nothing and flood every frame, a hub.
//!
//! Handlers: `table` (r): one `ADDRESS PORT` line per learned address (addresses as
//! `00-1F-29-4D-F8-31`), in address order. `timeout` (rw): TIMEOUT in whole seconds
//! (EtherSpanTree lowers it to the forward delay during a topology change). `learn_only`
//! (rw): the ports in the learning state, as space-separated port numbers. `port_counts`
//! (r): one `PORT RECEIVED SENT` line per port (frames received on the input, and sent out
//! of the output, flooded copies included). `forwarded` (r): frames sent to one learned
//! port. `flooded` (r): frames flooded. `count` (r): addresses in the table. `drops`,
//! `drop_details` (r).
//!
//! A hot swap to an EtherSwitch of the same name keeps the learned addresses.
//!
//! Example (the switch of Figure 16 of the Click paper, with EtherSpanTree):
//! `c0[1] -> [0]in_supp[0] -> [0]sw :: EtherSwitch[0] -> [0]out_supp[0] -> q0;` and the same
//! for each port; see `sluice doc EtherSpanTree` and `conf/ether-switch.click`.

use ahash::AHashMap;
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{InitCx, Packet, Table, Timestamp, BATCH_MAX};
use sluice_lang::args::{split_words, Args, FromArg, Seconds};
use sluice_wire::EtherAddr;

drop_reasons! {
    /// Why EtherSwitch drops a frame.
    enum Reason {
        Runt => "runt frame",
        SamePort => "destination on arrival port",
        LearnOnly => "arrival port only learning",
    }
}

/// Where a frame goes: an output port, or one of these.
const FLOOD: u32 = u32::MAX;
const DROP_RUNT: u32 = u32::MAX - 1;
const DROP_SAME: u32 = u32::MAX - 2;
const DROP_LEARN: u32 = u32::MAX - 3;

/// The sweep timer.
const SWEEP: usize = 0;

/// A learned address: its port and when a frame from it was last seen.
#[derive(Clone, Copy, Debug)]
struct Station {
    port: u32,
    seen: Timestamp,
}

/// The EtherSwitch element.
pub struct EtherSwitch {
    timeout: Timestamp,
    /// Learned addresses, keyed by the 48-bit address as a number.
    table: AHashMap<u64, Station>,
    /// Ports (below 64) in the learning state.
    learn_only: u64,
    sweep_armed: bool,
    received: Vec<u64>,
    sent: Vec<u64>,
    forwarded: u64,
    flooded: u64,
    /// One batch per output, for splitting an input batch.
    outs: Vec<Batch>,
    drops: Drops<Reason>,
}

impl Default for EtherSwitch {
    fn default() -> Self {
        EtherSwitch {
            timeout: Timestamp::from_parts(300, 0),
            table: AHashMap::new(),
            learn_only: 0,
            sweep_armed: false,
            received: Vec::new(),
            sent: Vec::new(),
            forwarded: 0,
            flooded: 0,
            outs: Vec::new(),
            drops: Drops::default(),
        }
    }
}

/// The 48-bit address at the start of `b` as a number.
#[inline(always)]
fn mac(b: &[u8]) -> u64 {
    u64::from_be_bytes([0, 0, b[0], b[1], b[2], b[3], b[4], b[5]])
}

/// True for a group (multicast or broadcast) address given as [`mac`] makes it.
#[inline(always)]
fn is_group(a: u64) -> bool {
    a & (1 << 40) != 0
}

/// A time in whole seconds (rounded), as Click's `SecondsArg` reads one into an integer.
struct WholeSeconds(Timestamp);

impl FromArg for WholeSeconds {
    fn from_arg(s: &str) -> Result<Self, String> {
        let Seconds(v) = Seconds::from_arg(s)?;
        Ok(WholeSeconds(Timestamp::from_parts(
            v.round().min(u32::MAX as f64) as i64,
            0,
        )))
    }
}

impl EtherSwitch {
    /// Learns the source of a frame from `port` and decides where the frame goes.
    #[inline]
    fn decide(&mut self, port: usize, d: &[u8], now: Timestamp, cx: &mut Cx) -> u32 {
        if d.len() < 14 {
            return DROP_RUNT;
        }
        if self.timeout == Timestamp::ZERO {
            return FLOOD;
        }
        let (dst, src) = (mac(&d[0..6]), mac(&d[6..12]));
        if !is_group(src) {
            let station = Station {
                port: port as u32,
                seen: now,
            };
            if self.table.insert(src, station).is_none() && !self.sweep_armed {
                self.sweep_armed = true;
                cx.schedule_after(SWEEP, self.timeout);
            }
        }
        if port < 64 && self.learn_only & (1 << port) != 0 {
            return DROP_LEARN;
        }
        if is_group(dst) {
            return FLOOD;
        }
        match self.table.get(&dst) {
            Some(s) if now < s.seen + self.timeout => {
                if s.port as usize == port {
                    DROP_SAME
                } else {
                    s.port
                }
            }
            Some(_) => {
                self.table.remove(&dst);
                FLOOD
            }
            None => FLOOD,
        }
    }

    /// Adds `p` to the batch for output `o`, sending that batch on first if it is full.
    #[inline]
    fn out(&mut self, o: usize, p: Packet, cx: &mut Cx) {
        self.sent[o] += 1;
        if let Err(p) = self.outs[o].push(p) {
            cx.push(o, std::mem::take(&mut self.outs[o]));
            let _ = self.outs[o].push(p);
        }
    }

    /// Removes expired entries and schedules the next sweep, if any entry is left: when the
    /// oldest one expires, but not sooner than an eighth of TIMEOUT from now.
    fn sweep(&mut self, cx: &mut Cx) {
        let now = cx.now();
        let timeout = self.timeout;
        if timeout == Timestamp::ZERO {
            self.table.clear();
        }
        self.table.retain(|_, s| now < s.seen + timeout);
        match self.table.values().map(|s| s.seen).min() {
            Some(oldest) => {
                let at = (oldest + timeout).max(now + Timestamp(timeout.0 / 8));
                cx.schedule_timer(SWEEP, at);
                self.sweep_armed = true;
            }
            None => self.sweep_armed = false,
        }
    }

    fn table_text(&self) -> String {
        let mut v: Vec<(u64, u32)> = self.table.iter().map(|(&a, s)| (a, s.port)).collect();
        v.sort_unstable();
        v.iter()
            .map(|&(a, port)| {
                let b = a.to_be_bytes();
                let e = EtherAddr([b[2], b[3], b[4], b[5], b[6], b[7]]);
                format!("{e} {port}\n")
            })
            .collect()
    }

    fn learn_only_text(&self) -> String {
        (0..64)
            .filter(|i| self.learn_only & (1u64 << i) != 0)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn set_learn_only(&mut self, v: &str) -> Result<(), String> {
        let mut mask = 0u64;
        for w in split_words(v) {
            match w.parse::<u32>() {
                Ok(i) if i < 64 => mask |= 1 << i,
                _ => return Err(format!("expected port numbers below 64, not '{w}'")),
            }
        }
        self.learn_only = mask;
        Ok(())
    }
}

impl Element for EtherSwitch {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        if let Some(WholeSeconds(t)) = args.read("TIMEOUT")? {
            self.timeout = t;
        }
        let n = cx.ninputs().max(cx.noutputs());
        self.received = vec![0; n];
        self.sent = vec![0; n];
        Ok(())
    }

    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        self.outs = (0..cx.noutputs()).map(|_| Batch::new()).collect();
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        let n = batch.len();
        if n == 0 {
            return;
        }
        let noutputs = cx.noutputs();
        self.received[port] += n as u64;
        let now = cx.now();
        let mut to = [FLOOD; BATCH_MAX];
        for (i, p) in batch.iter().enumerate() {
            to[i] = self.decide(port, p.data(), now, cx);
        }
        let first = to[0];
        if (first as usize) < noutputs && to[1..n].iter().all(|&o| o == first) {
            // Every frame goes to the same learned port: the batch goes on as it came.
            self.forwarded += n as u64;
            self.sent[first as usize] += n as u64;
            cx.push(first as usize, batch);
            return;
        }
        for (i, mut p) in batch.into_iter().enumerate() {
            match to[i] {
                o if (o as usize) < noutputs => {
                    self.forwarded += 1;
                    self.out(o as usize, p, cx);
                }
                DROP_RUNT => self.drops.count(Reason::Runt),
                DROP_SAME => self.drops.count(Reason::SamePort),
                DROP_LEARN => self.drops.count(Reason::LearnOnly),
                _ => {
                    self.flooded += 1;
                    let mut others = (0..noutputs).rev().filter(|&o| o != port);
                    let Some(mut o) = others.next() else {
                        continue;
                    };
                    for next in others {
                        let c = p.clone_packet();
                        self.out(o, c, cx);
                        o = next;
                    }
                    self.out(o, p, cx);
                }
            }
        }
        for o in 0..noutputs {
            if !self.outs[o].is_empty() {
                cx.push(o, std::mem::take(&mut self.outs[o]));
            }
        }
    }

    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        self.sweep(cx);
    }

    fn take_state(&mut self, old: &mut dyn Element, cx: &mut Cx) {
        let Some(old) = old.as_any_mut().downcast_mut::<EtherSwitch>() else {
            return;
        };
        let n = self.received.len();
        self.table = std::mem::take(&mut old.table);
        self.table.retain(|_, s| (s.port as usize) < n);
        if !self.table.is_empty() {
            self.sweep(cx);
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("table", Self::table_text)
            .read("timeout", |e| e.timeout.sec())
            .write("timeout", |e, v, cx| {
                let WholeSeconds(t) =
                    WholeSeconds::from_arg(v.trim()).map_err(|_| "expected timeout (integer)")?;
                e.timeout = t;
                if !e.table.is_empty() {
                    cx.schedule_timer(SWEEP, cx.now());
                    e.sweep_armed = true;
                }
                Ok(())
            })
            .setting()
            .read("learn_only", Self::learn_only_text)
            .write("learn_only", |e, v, _| e.set_learn_only(v))
            .setting()
            .read("port_counts", |e| {
                e.received
                    .iter()
                    .zip(&e.sent)
                    .enumerate()
                    .map(|(i, (r, s))| format!("{i} {r} {s}\n"))
                    .collect::<String>()
            })
            .read("forwarded", |e| e.forwarded)
            .read("flooded", |e| e.flooded)
            .read("count", |e| e.table.len())
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "EtherSwitch",
    ports: "2-/=",
    processing: "h/h",
    flow: "",
    source: include_str!("ether_switch.rs"),
    make: || Box::new(EtherSwitch::default()),
};
