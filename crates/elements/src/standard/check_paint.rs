//! CheckPaint — checks the paint annotation
//!
//! Synopsis: `CheckPaint(COLOR [, ANNO])`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, but output 1 is push. Packets whose paint
//! annotation (or one-byte annotation ANNO) equals COLOR go to output 0. The others go to
//! output 1 if it exists, or are dropped and counted.
//!
//! Arguments:
//! - `COLOR` (integer 0–255, mandatory).
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `color` (rw), `drops`, `drop_details` (r, mismatching packets dropped when there
//! is no output 1), `count` (r, packets that matched).
//!
//! Example: `... -> CheckPaint(2) -> ToDevice(eth0)` keeps only packets painted 2.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

use super::util::{pull_split, push_split, AnnoByte};

/// The CheckPaint element.
pub struct CheckPaint {
    color: u8,
    anno: AnnoByte,
    count: u64,
}

impl Default for CheckPaint {
    fn default() -> CheckPaint {
        CheckPaint {
            color: 0,
            anno: AnnoByte::Paint,
            count: 0,
        }
    }
}

impl CheckPaint {
    /// Whether `p` goes to output 0 (counted) rather than output 1 (dropped by the router when
    /// there is none).
    fn matches(&mut self, p: &Packet) -> bool {
        let m = self.anno.get(p) == self.color;
        self.count += m as u64;
        m
    }
}

impl Element for CheckPaint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = args.read_p::<AnnoByte>("ANNO")?.unwrap_or_default();
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        push_split(batch, cx, |p, _| self.matches(p));
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        pull_split(max, cx, |p, _| self.matches(p))
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("color", |e| &mut e.color)
            .unconnected_drops()
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "CheckPaint",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "",
    source: include_str!("check_paint.rs"),
    make: || Box::new(CheckPaint::default()),
};
