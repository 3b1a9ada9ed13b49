//! StrideSched — pulls from its inputs by stride scheduling
//!
//! Synopsis: `StrideSched(TICKETS0, ..., TICKETSN-1)`
//!
//! Ports: one or more pull inputs, 1 pull output. Input i holds TICKETSi tickets; its stride
//! is 65536 / TICKETSi and its pass starts at one stride. A pull on the output tries the
//! inputs in increasing pass order (ties in input order) until one yields a packet; every
//! input tried, successful or not, advances its pass by its stride, so over time input i
//! supplies a share of packets proportional to its tickets. An input with 0 tickets is never
//! pulled. Nothing is dropped.
//!
//! Arguments: one ticket count (integer 0–32768; larger counts are reduced to 32768) per
//! input, mandatory.
//!
//! Handlers: `ticketsI` (rw) for each input I below 32: its ticket count; writing 0 takes the
//! input out of the schedule, writing a positive count to a 0-ticket input puts it back.
//!
//! Example: `q0 -> [0]s :: StrideSched(3, 1); q1 -> [1]s; s -> ToDevice(eth0)` (3:1 share)

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::{Args, FromArg};

const STRIDE1: u32 = 1 << 16;
const MAX_TICKETS: u32 = 1 << 15;
const HANDLERS: [Handler; 32] = [
    Handler::rw("tickets0").setting(),
    Handler::rw("tickets1").setting(),
    Handler::rw("tickets2").setting(),
    Handler::rw("tickets3").setting(),
    Handler::rw("tickets4").setting(),
    Handler::rw("tickets5").setting(),
    Handler::rw("tickets6").setting(),
    Handler::rw("tickets7").setting(),
    Handler::rw("tickets8").setting(),
    Handler::rw("tickets9").setting(),
    Handler::rw("tickets10").setting(),
    Handler::rw("tickets11").setting(),
    Handler::rw("tickets12").setting(),
    Handler::rw("tickets13").setting(),
    Handler::rw("tickets14").setting(),
    Handler::rw("tickets15").setting(),
    Handler::rw("tickets16").setting(),
    Handler::rw("tickets17").setting(),
    Handler::rw("tickets18").setting(),
    Handler::rw("tickets19").setting(),
    Handler::rw("tickets20").setting(),
    Handler::rw("tickets21").setting(),
    Handler::rw("tickets22").setting(),
    Handler::rw("tickets23").setting(),
    Handler::rw("tickets24").setting(),
    Handler::rw("tickets25").setting(),
    Handler::rw("tickets26").setting(),
    Handler::rw("tickets27").setting(),
    Handler::rw("tickets28").setting(),
    Handler::rw("tickets29").setting(),
    Handler::rw("tickets30").setting(),
    Handler::rw("tickets31").setting(),
];

/// One input's place in the schedule.
#[derive(Clone, Copy, Default)]
struct Client {
    tickets: u32,
    stride: u32,
    pass: u32,
}

impl Client {
    fn set_tickets(&mut self, t: u32) {
        self.tickets = t;
        self.stride = STRIDE1.checked_div(t).unwrap_or(0);
    }
}

/// The StrideSched element.
#[derive(Default)]
pub struct StrideSched {
    all: Vec<Client>,
    /// Inputs with tickets, in increasing pass order.
    list: Vec<usize>,
}

/// True if pass `a` is later than pass `b`, with wraparound.
fn pass_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl StrideSched {
    /// Inserts input `i` before the first listed input whose pass is not earlier.
    fn insert(&mut self, i: usize) {
        let pass = self.all[i].pass;
        let at = self
            .list
            .iter()
            .position(|&j| !pass_gt(pass, self.all[j].pass))
            .unwrap_or(self.list.len());
        self.list.insert(at, i);
    }

    fn pull_one(&mut self, cx: &mut Cx) -> Option<sluice_core::Packet> {
        let mut p = None;
        let mut tried = 0;
        while tried < self.list.len() && p.is_none() {
            let i = self.list[tried];
            p = cx.pull_one(i);
            let c = &mut self.all[i];
            c.pass = c.pass.wrapping_add(c.stride);
            tried += 1;
        }
        let stridden: Vec<usize> = self.list.drain(..tried).collect();
        for i in stridden {
            self.insert(i);
        }
        p
    }

    fn set_tickets(&mut self, port: usize, t: u32) {
        let t = t.min(MAX_TICKETS);
        let old = self.all[port].tickets;
        self.all[port].set_tickets(t);
        if t == 0 && old != 0 {
            self.list.retain(|&j| j != port);
        } else if t != 0 && old == 0 {
            self.all[port].pass = self
                .list
                .first()
                .map_or(0, |&j| self.all[j].pass.wrapping_add(self.all[port].stride));
            self.insert(port);
        }
    }
}

impl Element for StrideSched {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let words = args.rest();
        let n = cx.ninputs();
        if words.len() != n {
            args.error(format!("need {} arguments, one per input port", n));
            return Err(());
        }
        self.all = vec![Client::default(); n];
        for (i, w) in words.iter().enumerate() {
            match i64::from_arg(w) {
                Ok(v) if v >= 0 => {
                    let c = &mut self.all[i];
                    c.set_tickets((v as u64).min(MAX_TICKETS as u64) as u32);
                    c.pass = c.stride;
                }
                Ok(_) => args.error(format!("argument {} (number of tickets) must be >= 0", i)),
                Err(_) => args.error(format!(
                    "argument {} should be number of tickets (integer)",
                    i
                )),
            }
        }
        if !args.errors().is_empty() {
            return Err(());
        }
        for i in (0..n).rev() {
            if self.all[i].tickets != 0 {
                self.insert(i);
            }
        }
        Ok(())
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut out = Batch::new();
        while out.len() < max {
            match self.pull_one(cx) {
                Some(p) => {
                    let _ = out.push(p);
                }
                None => break,
            }
        }
        out
    }

    fn handlers(&self) -> &'static [Handler] {
        &HANDLERS[..self.all.len().min(HANDLERS.len())]
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        let i: usize = name.strip_prefix("tickets")?.parse().ok()?;
        self.all.get(i).map(|c| c.tickets.to_string())
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        let i = name
            .strip_prefix("tickets")
            .and_then(|s| s.parse::<usize>().ok())
            .filter(|&i| i < self.all.len())
            .ok_or_else(|| format!("no handler {}", name))?;
        match i64::from_arg(value.trim()) {
            Ok(t) if t >= 0 => {
                self.set_tickets(i, t.min(MAX_TICKETS as i64) as u32);
                Ok(())
            }
            Ok(_) => Err("number of tickets must be >= 0".into()),
            Err(_) => Err("tickets value must be integer".into()),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "StrideSched",
    ports: "1-/1",
    processing: "l/l",
    flow: "",
    source: include_str!("stride_sched.rs"),
    make: || Box::new(StrideSched::default()),
};
