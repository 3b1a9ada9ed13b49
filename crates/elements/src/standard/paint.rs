//! Paint — sets the paint annotation
//!
//! Synopsis: `Paint(COLOR [, ANNO])`
//!
//! Ports: 1 input, 1 output, agnostic. Sets each packet's paint annotation (or the one-byte
//! annotation ANNO) to COLOR and passes it on.
//!
//! Arguments:
//! - `COLOR` (integer 0–255, mandatory).
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `color` (rw).
//!
//! Example: `FromDevice(eth0) -> Paint(1) -> ...; ... -> CheckPaint(1)`

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handler, Packet};
use sluice_lang::args::Args;

use super::util::{parse_num, read_anno, AnnoByte};

/// The Paint element.
pub struct Paint {
    color: u8,
    anno: AnnoByte,
}

impl Default for Paint {
    fn default() -> Paint {
        Paint {
            color: 0,
            anno: AnnoByte::Paint,
        }
    }
}

impl Element for Paint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = match args.read_p::<String>("ANNO")? {
            Some(s) => AnnoByte::parse(&s).map_err(|e| args.error(e))?,
            None => read_anno(args)?,
        };
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        self.anno.set(&mut p, self.color);
        Some(p)
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::rw("color")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "color").then(|| self.color.to_string())
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
    name: "Paint",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("paint.rs"),
    make: || Box::new(Paint::default()),
};
