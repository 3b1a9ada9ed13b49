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

use sluice_core::{ConfigCx, Cx, Element, ElementClass, Handlers, Packet, Table};
use sluice_lang::args::Args;

use super::util::AnnoByte;

/// The Paint element.
#[derive(Default)]
pub struct Paint {
    color: u8,
    anno: AnnoByte,
}

impl Element for Paint {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.color = args.read_mp("COLOR")?;
        self.anno = args.read_p("ANNO")?.unwrap_or_default();
        Ok(())
    }

    fn simple_action(&mut self, mut p: Packet, _cx: &mut Cx) -> Option<Packet> {
        self.anno.set(&mut p, self.color);
        Some(p)
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().data("color", |e| &mut e.color).into()
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
