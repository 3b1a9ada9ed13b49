//! The Sluice engine: packets, batches, per-thread pools, the element interface, the router
//! graph with Click's push/pull rules, stride-scheduled tasks, timers, notifiers and handlers.

#![deny(clippy::undocumented_unsafe_blocks)]

pub mod batch;
mod buffers;
pub mod context;
pub mod cpu;
pub mod element;
pub mod handlers;
pub mod library;
pub mod packet;
pub mod ports;
pub mod ring;
pub mod router;
pub mod sched;
pub mod signals;
pub mod threads;
pub mod time;
pub mod toolkit;

pub use batch::{Batch, BATCH_MAX};
pub use context::{ConfigCx, Cx, InitCx, NotifierId, NotifierSignal, PullNotes};
pub use element::{Element, ElementClass, Handler, SharedElement, Sharing};
pub use handlers::{DropReason, Drops, Footprint, Handlers, Table};
pub use library::Library;
pub use packet::{Anno, Packet, PacketType};
pub use router::{HandlerError, PassThrough, Reconfigure, Router, RouterOptions};
pub use sluice_lang::args::Args;
pub use threads::Concurrency;
pub use time::Timestamp;
