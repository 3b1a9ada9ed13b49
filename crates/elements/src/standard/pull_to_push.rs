//! PullToPush — pulls packets whenever they are available and pushes them out
//!
//! Synopsis: `PullToPush([BURST, ACTIVE, LIMIT])`
//!
//! Ports: 1 pull input, 1 push output. The same element as Unqueue under Click's other name: a
//! task pulls up to BURST packets per run and pushes them on, sleeping while every upstream
//! queue is empty (empty notifiers).
//!
//! Arguments: as Unqueue — `BURST` (default 32), `ACTIVE` (default true), `LIMIT` (default -1).
//!
//! Handlers: `count` (r), `reset` (w), `active` (rw), `burst` (rw), `limit` (rw).
//!
//! Example: `Queue -> PullToPush -> Discard`

use sluice_core::ElementClass;

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "PullToPush",
    ports: "1/1",
    processing: "l/h",
    flow: "",
    source: include_str!("pull_to_push.rs"),
    make: || Box::new(super::unqueue::Unqueue::default()),
};
