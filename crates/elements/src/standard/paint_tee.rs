//! PaintTee — duplicates packets with a given paint annotation
//!
//! Synopsis: `PaintTee(COLOR [, ANNO])`
//!
//! Ports: 1 input and output 0 agnostic, output 1 push. Every packet goes to output 0; a
//! packet whose paint annotation (or one-byte annotation ANNO) equals COLOR is also cloned to
//! output 1, and the clone is pushed there before the packet itself continues on output 0 (as
//! Click: the copy of packet n leaves before packet n, after packet n-1). Clones share data
//! copy-on-write.
//!
//! Arguments:
//! - `COLOR` (integer 0–255, mandatory).
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `color` (rw), `count` (r, clones sent to output 1).
//!
//! Example: `... -> PaintTee(1) -> ...; [1] -> ICMPError(...)` (Click's redirect detection).

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::AnnoByte;

/// The PaintTee element.
#[derive(Default)]
pub struct PaintTee {
    color: u8,
    anno: AnnoByte,
    count: u64,
}

impl Element for PaintTee {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = args.read_p("ANNO")?.unwrap_or_default();
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        if !batch.iter().any(|p| self.anno.get(p) == self.color) {
            cx.push(0, batch);
            return;
        }
        let mut pending = Batch::new();
        for mut p in batch {
            if self.anno.get(&p) == self.color {
                if !pending.is_empty() {
                    cx.push(0, std::mem::take(&mut pending));
                }
                self.count += 1;
                cx.push_one(1, p.clone_packet());
            }
            let _ = pending.push(p);
        }
        if !pending.is_empty() {
            cx.push(0, pending);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut batch = cx.pull(0, max);
        for p in batch.iter_mut() {
            if self.anno.get(p) == self.color {
                self.count += 1;
                cx.push_one(1, p.clone_packet());
            }
        }
        batch
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .data("color", |e| &mut e.color)
            .read("count", |e| e.count)
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PaintTee",
    ports: "1/2",
    processing: "a/ah",
    flow: "",
    source: include_str!("paint_tee.rs"),
    make: || Box::new(PaintTee::default()),
};
