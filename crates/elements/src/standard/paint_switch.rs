//! PaintSwitch — sends each packet to the output its paint annotation names
//!
//! Synopsis: `PaintSwitch([ANNO])`
//!
//! Ports: 1 push input, any number of push outputs. A packet whose paint annotation (or the
//! one-byte annotation ANNO) is K leaves on output K. Paint 255 sends the packet to every
//! output (clones on all but the last, which gets the original; in output order). A packet
//! whose K has no output is dropped and counted.
//!
//! Arguments:
//! - `ANNO` (`PAINT`, default, or an offset 0–15 into the user annotation bytes).
//!
//! Handlers: `drops` (r, packets painted with a missing output).
//!
//! Example: `FromDevice(eth0) -> Paint(1) -> ... -> ps :: PaintSwitch; ps[1] -> ...`

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handler};
use sluice_lang::args::Args;

use super::util::{read_anno, AnnoByte, PortBatches};

/// The PaintSwitch element.
pub struct PaintSwitch {
    anno: AnnoByte,
    out: PortBatches,
    drops: u64,
}

impl Default for PaintSwitch {
    fn default() -> PaintSwitch {
        PaintSwitch {
            anno: AnnoByte::Paint,
            out: PortBatches::new(0),
            drops: 0,
        }
    }
}

impl Element for PaintSwitch {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        self.anno = match args.read_p::<String>("ANNO")? {
            Some(s) => AnnoByte::parse(&s).map_err(|e| args.error(e))?,
            None => read_anno(args)?,
        };
        self.out = PortBatches::new(cx.noutputs());
        Ok(())
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        let n = cx.noutputs();
        for mut p in batch {
            let k = self.anno.get(&p) as usize;
            if k == 255 && n > 0 {
                for o in 0..n - 1 {
                    self.out.add(o, p.clone_packet(), cx);
                }
                self.out.add(n - 1, p, cx);
            } else if k < n {
                self.out.add(k, p, cx);
            } else {
                self.drops += 1;
            }
        }
        self.out.flush(cx);
    }

    fn handlers(&self) -> &'static [Handler] {
        const { &[Handler::r("drops")] }
    }

    fn read_handler(&self, name: &str) -> Option<String> {
        (name == "drops").then(|| self.drops.to_string())
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
