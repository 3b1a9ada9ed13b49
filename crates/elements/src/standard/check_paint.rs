//! CheckPaint — checks the paint annotation
//!
//! Synopsis: `CheckPaint(COLOR [, ANNO])`
//!
//! Ports: 1 input, 1 or 2 outputs; agnostic, but output 1 is push. Packets whose paint
//! annotation (or one-byte annotation ANNO) equals COLOR go to output 0. The others go to
//! output 1 if it is connected, or are dropped and counted.
//!
//! Arguments:
//! - `COLOR` (integer 0–255, mandatory).
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `color` (rw), `drops` (r, mismatching packets dropped when there is no output 1),
//! `count` (r, packets that matched).
//!
//! Example: `... -> CheckPaint(2) -> ToDevice(eth0)` keeps only packets painted 2.

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::util::{parse_num, read_anno, AnnoByte};

/// The CheckPaint element.
pub struct CheckPaint {
    color: u8,
    anno: AnnoByte,
    drops: u64,
    count: u64,
}

impl Default for CheckPaint {
    fn default() -> CheckPaint {
        CheckPaint {
            color: 0,
            anno: AnnoByte::Paint,
            drops: 0,
            count: 0,
        }
    }
}

impl CheckPaint {
    /// Keeps matching packets in `b`; sends the others out of output 1 or drops them.
    fn split(&mut self, b: &mut Batch, cx: &mut Cx) {
        let mut other = Batch::new();
        let has1 = cx.noutputs() > 1;
        let (anno, color) = (self.anno, self.color);
        let mut drops = 0;
        b.filter_map(|p| {
            if anno.get(&p) == color {
                return Some(p);
            }
            if has1 {
                let _ = other.push(p);
            } else {
                drops += 1;
            }
            None
        });
        self.drops += drops;
        self.count += b.len() as u64;
        if !other.is_empty() {
            cx.push(1, other);
        }
    }
}

impl Element for CheckPaint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = match args.read_p::<String>("ANNO")? {
            Some(s) => AnnoByte::parse(&s).map_err(|e| args.error(e))?,
            None => read_anno(args)?,
        };
        Ok(())
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        self.split(&mut batch, cx);
        if !batch.is_empty() {
            cx.push(0, batch);
        }
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        let mut b = cx.pull(0, max);
        self.split(&mut b, cx);
        b
    }

    fn handlers(&self) -> &'static [Handler] {
        const {
            &[
                Handler::rw("color"),
                Handler::r("drops"),
                Handler::r("count"),
            ]
        }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        Some(match name {
            "color" => self.color.to_string(),
            "drops" => self.drops.to_string(),
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
    name: "CheckPaint",
    ports: "1/1-2",
    processing: "a/ah",
    flow: "",
    source: include_str!("check_paint.rs"),
    make: || Box::new(CheckPaint::default()),
};
