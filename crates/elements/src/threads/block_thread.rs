//! BlockThread — blocks the thread that writes its handler, for tests
//!
//! Synopsis: `BlockThread()`
//!
//! Ports: none.
//!
//! Writing the `block` handler blocks the thread that runs the write (the router thread of
//! the Script or ControlSocket writing it) for the time written: nothing else runs on that
//! thread meanwhile, as if an element there were slow. Only useful to test how the router
//! copes with a stalled thread (signals arriving meanwhile, other threads going on).
//!
//! Arguments: none.
//!
//! Handlers: `block` (w, a time such as `0.01s` or `10ms`: how long to block).
//!
//! Example: `bt :: BlockThread; Script(wait 1s, write bt.block 0.5s)`

use sluice_core::{Element, ElementClass, Handlers, Table};
use sluice_lang::args::{FromArg, Seconds};

/// The BlockThread element.
#[derive(Default)]
pub struct BlockThread;

impl Element for BlockThread {
    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .write("block", |_, v, _| {
                let Seconds(s) = Seconds::from_arg(v.trim()).map_err(|_| "bad TIME")?;
                std::thread::sleep(std::time::Duration::from_secs_f64(s));
                Ok(())
            })
            .into()
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "BlockThread",
    ports: "0/0",
    processing: "a/a",
    flow: "",
    source: include_str!("block_thread.rs"),
    make: || Box::new(BlockThread),
};
