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

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::{Args, FromArg};

const STRIDE1: u32 = 1 << 16;
const MAX_TICKETS: u32 = 1 << 15;

/// Adds to table `$t` the handlers `ticketsI` (read/write the tickets of input I) for the
/// inputs I listed that are below `$n`.
macro_rules! tickets_handlers {
    ($t:ident, $n:expr, $($i:literal)*) => {$(
        if $i < $n {
            $t = $t
                .read(concat!("tickets", $i), |e| e.all[$i].tickets)
                .write(concat!("tickets", $i), |e, v, _| e.write_tickets($i, v))
                .setting();
        }
    )*};
}

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

    /// The write handler of input `i`'s tickets.
    fn write_tickets(&mut self, i: usize, v: &str) -> Result<(), String> {
        match i64::from_arg(v.trim()) {
            Ok(t) if t >= 0 => {
                self.set_tickets(i, t.min(MAX_TICKETS as i64) as u32);
                Ok(())
            }
            Ok(_) => Err("number of tickets must be >= 0".into()),
            Err(_) => Err("tickets value must be integer".into()),
        }
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

    fn handler_table(&self) -> Handlers {
        let (mut t, n) = (Table::<Self>::new(), self.all.len());
        tickets_handlers!(t, n,
            0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
        t.into()
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
