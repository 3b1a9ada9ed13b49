//! ClickyInfo — style information for the Clicky GUI (ignored)
//!
//! Synopsis: `ClickyInfo(STYLE ...)`
//!
//! Ports: none. Accepts any arguments and does nothing: the Clicky GUI reads them from the
//! configuration text, routers ignore them, so configurations written for Clicky run
//! unchanged.
//!
//! Arguments: any number, of any text (Clicky's `STYLE` stylesheets, ...); all ignored.
//!
//! Handlers: none besides the router's.
//!
//! Example: `ClickyInfo(STYLE "port { color: red }")`

use sluice_core::{ConfigCx, Element, ElementClass};
use sluice_lang::args::Args;

/// The ClickyInfo element.
#[derive(Default)]
pub struct ClickyInfo;

impl Element for ClickyInfo {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        let _ = args.take_raw();
        Ok(())
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "ClickyInfo",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("clicky_info.rs"),
    make: || Box::new(ClickyInfo),
};
