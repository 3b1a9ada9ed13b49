//! PaintTee — duplicates packets with a given paint annotation
//!
//! Synopsis: `PaintTee(COLOR [, ANNO])`
//!
//! Ports: 1 push input, 2 push outputs. Every packet goes to output 0; a packet whose paint
//! annotation (or one-byte annotation ANNO) equals COLOR is also cloned to output 1 (the clone
//! is pushed first). Clones share data copy-on-write.
//!
//! Arguments:
//! - `COLOR` (integer 0–255, mandatory).
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `color` (rw), `count` (r, clones sent to output 1).
//!
//! Example: `... -> PaintTee(1) -> ...; [1] -> ICMPError(...)` (Click's redirect detection).

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::util::{parse_num, read_anno, AnnoByte};

/// The PaintTee element.
pub struct PaintTee {
    color: u8,
    anno: AnnoByte,
    count: u64,
}

impl Default for PaintTee {
    fn default() -> PaintTee {
        PaintTee {
            color: 0,
            anno: AnnoByte::Paint,
            count: 0,
        }
    }
}

impl Element for PaintTee {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = match args.read_p::<String>("ANNO")? {
            Some(s) => AnnoByte::parse(&s).map_err(|e| args.error(e))?,
            None => read_anno(args)?,
        };
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        let mut clones = Batch::new();
        for p in batch.iter_mut() {
            if self.anno.get(p) == self.color {
                let _ = clones.push(p.clone_packet());
            }
        }
        if !clones.is_empty() {
            self.count += clones.len() as u64;
            cx.push(1, clones);
        }
        cx.push(0, batch);
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("color"), Handler::r("count")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "color" => self.color.to_string(),
            "count" => self.count.to_string(),
            _ => return None,
        })
    }

    fn write_handler(&mut self, name: &str, value: &str, _cx: &mut Cx) -> Result<(), String> {
        match name {
            "color" => self.color = parse_num(name, value)?,
            _ => return Err(format!("no handler {}", name)),
        }
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PaintTee",
    ports: "1/2",
    processing: "h/h",
    flow: "",
    source: include_str!("paint_tee.rs"),
    make: || Box::new(PaintTee::default()),
};
