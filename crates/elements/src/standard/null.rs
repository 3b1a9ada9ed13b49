//! Null, PushNull, PullNull — pass packets unchanged
//!
//! Synopsis: `Null`, `PushNull`, `PullNull`
//!
//! Ports: 1 input, 1 output; agnostic for Null, push for PushNull, pull for PullNull.
//!
//! Processing: every packet arriving on the input leaves on the output, untouched. Useful as a
//! placeholder and for measuring the cost of one element hop.
//!
//! Arguments: none.
//!
//! Handlers: none besides the router's.
//!
//! Example: `InfiniteSource -> Null -> Null -> Discard`

use sluice_core::{Batch, Concurrency, Cx, Element, ElementClass};

/// The Null element.
#[derive(Default)]
pub struct Null;

impl Element for Null {
    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }

    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        cx.push(0, batch);
    }

    fn pull(&mut self, _port: usize, max: usize, cx: &mut Cx) -> Batch {
        cx.pull(0, max)
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "Null",
    ports: "1/1",
    processing: "a/a",
    flow: "x/x",
    source: include_str!("null.rs"),
    make: || Box::new(Null),
};

/// Class description: Null with push ports.
pub const PUSH_CLASS: ElementClass = ElementClass {
    name: "PushNull",
    processing: "h/h",
    ..CLASS
};

/// Class description: Null with pull ports.
pub const PULL_CLASS: ElementClass = ElementClass {
    name: "PullNull",
    processing: "l/l",
    ..CLASS
};
