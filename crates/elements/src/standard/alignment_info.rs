//! AlignmentInfo — alignment facts written by click-align (ignored)
//!
//! Synopsis: `AlignmentInfo(ELEMENT [MODULUS OFFSET ...], ...)`
//!
//! Ports: none. Click's click-align tool adds this element to record how packet data is
//! aligned at each element's inputs. Sluice reads headers without alignment assumptions, so
//! the element accepts its arguments and does nothing, letting aligned configurations run
//! unchanged.
//!
//! Arguments:
//! - `ELEMENT [MODULUS OFFSET ...]` (any number of arguments, any text): accepted and
//!   ignored. click-align writes one per element: its name, then a MODULUS and OFFSET pair for
//!   each of its inputs.
//!
//! Handlers: none besides the router's.
//!
//! Example: `AlignmentInfo(c 4 2, s 4 0)`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::Args;

/// The AlignmentInfo element.
#[derive(Default)]
pub struct AlignmentInfo;

impl Element for AlignmentInfo {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let _ = args.take_raw();
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "AlignmentInfo",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("alignment_info.rs"),
    make: || Box::new(AlignmentInfo),
};
