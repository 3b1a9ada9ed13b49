//! Suppressor — passes or suppresses packets port by port
//!
//! Synopsis: `Suppressor`
//!
//! Ports: any number of inputs, the same number of outputs, agnostic; input *i* flows to
//! output *i*. While port *i* is active (the default) packets pass; while it is suppressed,
//! packets pushed into input *i* are dropped and counted, and pulls from output *i* return
//! nothing (a puller downstream then polls: Suppressor offers no notifier of its own).
//!
//! Handlers: `activeN` (rw, N = 0 … 63: whether port N passes packets; listed for every N,
//! an error for ports not in use), `reset` (w, make
//! every port active), `drops` (r).
//!
//! Example: `s :: Suppressor; a -> [0]s[0] -> x; b -> [1]s[1] -> y`, then write
//! `s.active1 false`.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::discard::parse_bool;

/// `reset`, `drops`, then `active0` … `active63`.
const HANDLERS: &[Handler] = &[
    Handler::w("reset"),
    Handler::r("drops"),
    Handler::rw("active0"),
    Handler::rw("active1"),
    Handler::rw("active2"),
    Handler::rw("active3"),
    Handler::rw("active4"),
    Handler::rw("active5"),
    Handler::rw("active6"),
    Handler::rw("active7"),
    Handler::rw("active8"),
    Handler::rw("active9"),
    Handler::rw("active10"),
    Handler::rw("active11"),
    Handler::rw("active12"),
    Handler::rw("active13"),
    Handler::rw("active14"),
    Handler::rw("active15"),
    Handler::rw("active16"),
    Handler::rw("active17"),
    Handler::rw("active18"),
    Handler::rw("active19"),
    Handler::rw("active20"),
    Handler::rw("active21"),
    Handler::rw("active22"),
    Handler::rw("active23"),
    Handler::rw("active24"),
    Handler::rw("active25"),
    Handler::rw("active26"),
    Handler::rw("active27"),
    Handler::rw("active28"),
    Handler::rw("active29"),
    Handler::rw("active30"),
    Handler::rw("active31"),
    Handler::rw("active32"),
    Handler::rw("active33"),
    Handler::rw("active34"),
    Handler::rw("active35"),
    Handler::rw("active36"),
    Handler::rw("active37"),
    Handler::rw("active38"),
    Handler::rw("active39"),
    Handler::rw("active40"),
    Handler::rw("active41"),
    Handler::rw("active42"),
    Handler::rw("active43"),
    Handler::rw("active44"),
    Handler::rw("active45"),
    Handler::rw("active46"),
    Handler::rw("active47"),
    Handler::rw("active48"),
    Handler::rw("active49"),
    Handler::rw("active50"),
    Handler::rw("active51"),
    Handler::rw("active52"),
    Handler::rw("active53"),
    Handler::rw("active54"),
    Handler::rw("active55"),
    Handler::rw("active56"),
    Handler::rw("active57"),
    Handler::rw("active58"),
    Handler::rw("active59"),
    Handler::rw("active60"),
    Handler::rw("active61"),
    Handler::rw("active62"),
    Handler::rw("active63"),
];

/// The Suppressor element.
#[derive(Default)]
pub struct Suppressor {
    suppressed: Vec<bool>,
    drops: u64,
    nports: usize,
}

impl Suppressor {
    fn port_of(name: &str) -> Option<usize> {
        name.strip_prefix("active")?.parse().ok()
    }
}

impl Element for Suppressor {
    fn configure(&mut self, _args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.nports = cx.ninputs().max(cx.noutputs());
        self.suppressed = vec![false; self.nports];
        Ok(())
    }

    fn push(&mut self, port: usize, batch: Batch, cx: &mut Cx) {
        if self.suppressed.get(port).copied().unwrap_or(false) {
            self.drops += batch.len() as u64;
        } else {
            cx.push(port, batch);
        }
    }

    fn pull(&mut self, port: usize, max: usize, cx: &mut Cx) -> Batch {
        if self.suppressed.get(port).copied().unwrap_or(false) {
            Batch::new()
        } else {
            cx.pull(port, max)
        }
    }

    fn handlers(&self) -> &'static [Handler] {
        // The router records handlers before configuration, so every port's handler is listed;
        // those of ports that are not in use fail.
        HANDLERS
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        if name == "drops" {
            return Some(self.drops.to_string());
        }
        let i = Self::port_of(name)?;
        Some((!self.suppressed.get(i).copied()?).to_string())
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        if name == "reset" {
            self.suppressed.iter_mut().for_each(|s| *s = false);
            return Ok(());
        }
        let i = Self::port_of(name).ok_or_else(|| format!("no handler {}", name))?;
        let active = parse_bool(value)?;
        match self.suppressed.get_mut(i) {
            Some(s) => {
                *s = !active;
                Ok(())
            }
            None => Err(format!("no handler {}", name)),
        }
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Suppressor",
    ports: "-/=",
    processing: "a/a",
    flow: "#/#",
    source: include_str!("suppressor.rs"),
    make: || Box::new(Suppressor::default()),
};
