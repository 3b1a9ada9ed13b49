//! PaintSwitch — sends each packet to the output its paint annotation names
//!
//! Synopsis: `PaintSwitch([ANNO])`
//!
//! Ports: 1 push input, any number of push outputs. A packet whose paint annotation (or the
//! one-byte annotation ANNO) is K leaves on output K. Paint 255 sends the packet to every
//! output (clones on all but the last, which gets the original; in output order). A packet
//! whose K has no connected output is dropped and counted. Packets leave in arrival order across
//! outputs, as in Click (consecutive packets for one output travel as one batch).
//!
//! Arguments:
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `drops`, `drop_details` (r): packets painted with a missing output.
//!
//! Example: `FromDevice(eth0) -> Paint(1) -> ... -> ps :: PaintSwitch; ps[1] -> ...`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, Table};
use sluice_lang::args::Args;

use super::util::AnnoByte;

/// The PaintSwitch element.
#[derive(Default)]
pub struct PaintSwitch {
    anno: AnnoByte,
}

/// Packets bound for one output, pushed when the next packet goes elsewhere.
fn flush(run: &mut Option<(usize, Batch)>, cx: &mut Cx) {
    if let Some((port, b)) = run.take() {
        cx.push(port, b);
    }
}

impl Element for PaintSwitch {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.anno = args.read_p("ANNO")?.unwrap_or_default();
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs();
        let mut run: Option<(usize, Batch)> = None;
        for mut p in batch {
            let k = self.anno.get(&p) as usize;
            if k == 255 && n > 0 {
                flush(&mut run, cx);
                for o in 0..n - 1 {
                    cx.push_one(o, p.clone_packet());
                }
                cx.push_one(n - 1, p);
            } else {
                if run
                    .as_ref()
                    .is_some_and(|(port, b)| *port != k || b.is_full())
                {
                    flush(&mut run, cx);
                }
                let _ = run.get_or_insert_with(|| (k, Batch::new())).1.push(p);
            }
        }
        flush(&mut run, cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().unconnected_drops().into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PaintSwitch",
    ports: "1/-",
    processing: "h/h",
    flow: "",
    source: include_str!("paint_switch.rs"),
    make: || Box::new(PaintSwitch::default()),
};
