//! Clipboard — copies bytes from one packet stream and pastes them onto another
//!
//! Synopsis: `Clipboard(RANGE, ...)`
//!
//! Ports: 2 push inputs, 2 push outputs; input *i* flows to output *i*. For every packet
//! arriving on input 0, the bytes of each range are copied to the clipboard and the packet
//! leaves unchanged on output 0 (a packet too short to hold every range leaves the clipboard
//! unchanged and is counted in `short`). For every packet arriving on input 1, the clipboard
//! is pasted over the same ranges and the packet leaves on output 1; a packet too short for
//! the ranges is dropped and counted in `drops`. Before the first copy the clipboard holds
//! zeros.
//!
//! Arguments:
//! - `RANGE` (one or more, `OFFSET/LENGTH` in bytes from the packet data start): the bytes
//!   copied and pasted. The clipboard holds the ranges one after another, in argument order.
//!
//! Handlers: `data` (r, the clipboard in hex), `short` (r), `drops`, `drop_details` (r).
//!
//! Example: `Clipboard(6/6)` copies a source Ethernet address from requests (input 0) into
//! replies (input 1).

use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass};
use sluice_core::{Handlers, Table};
use sluice_lang::args::{Args, FromArg};

drop_reasons! {
    /// Why Clipboard drops a packet.
    enum Reason { TooShort => "too short for the ranges" }
}

/// The Clipboard element.
#[derive(Default)]
pub struct Clipboard {
    ranges: Vec<(usize, usize)>,
    clip: Vec<u8>,
    need: usize,
    short: u64,
    drops: Drops<Reason>,
}

/// Parses `OFFSET/LENGTH`.
fn parse_range(s: &str) -> Option<(usize, usize)> {
    let (o, l) = s.trim().split_once('/')?;
    Some((usize::from_arg(o).ok()?, usize::from_arg(l).ok()?))
}

impl Element for Clipboard {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        for r in args.rest() {
            match parse_range(&r) {
                Some(x) => self.ranges.push(x),
                None => {
                    args.error(format!("RANGE: expected OFFSET/LENGTH, got '{}'", r));
                    return Err(());
                }
            }
        }
        if self.ranges.is_empty() {
            args.error("expected at least one RANGE");
            return Err(());
        }
        self.clip = vec![0; self.ranges.iter().map(|r| r.1).sum()];
        self.need = self.ranges.iter().map(|r| r.0 + r.1).max().unwrap_or(0);
        Ok(())
    }

    fn push(&mut self, port: usize, mut batch: Batch, cx: &mut Cx) {
        if port == 0 {
            for p in batch.iter() {
                let d = p.data();
                if d.len() < self.need {
                    self.short += 1;
                    continue;
                }
                let mut at = 0;
                for &(o, l) in &self.ranges {
                    self.clip[at..at + l].copy_from_slice(&d[o..o + l]);
                    at += l;
                }
            }
            cx.push(0, batch);
        } else {
            let (need, ranges, clip) = (self.need, &self.ranges, &self.clip);
            let mut drops = 0;
            batch.filter_map(|mut p| {
                if p.len() < need {
                    drops += 1;
                    return None;
                }
                let d = p.data_mut();
                let mut at = 0;
                for &(o, l) in ranges {
                    d[o..o + l].copy_from_slice(&clip[at..at + l]);
                    at += l;
                }
                Some(p)
            });
            self.drops.add(Reason::TooShort, drops);
            if !batch.is_empty() {
                cx.push(1, batch);
            }
        }
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("data", |e| {
                e.clip
                    .iter()
                    .map(|b| format!("{:02x}", b))
                    .collect::<String>()
            })
            .read("short", |e| e.short)
            .drops(|e| &e.drops)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Clipboard",
    ports: "2/2",
    processing: "h/h",
    flow: "#/#",
    source: include_str!("clipboard.rs"),
    make: || Box::new(Clipboard::default()),
};
