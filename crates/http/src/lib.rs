//! Sluice's HTTP control plane: the HTTPServer element, which serves the JSON API (the
//! element graph, statistics, every handler, hot swap, route changes), Prometheus metrics
//! and the live web view.
//!
//! HTTP is spoken by `tiny_http` on the server's own threads (the control threads); they hand
//! each API request to the element through a bounded queue and a wake-up socket that the
//! router's event loop watches, and the element answers it on the router's thread with
//! handler calls. Workers that move packets never see HTTP.

#![forbid(unsafe_code)]

use sluice_core::ElementClass;

pub mod api;
pub mod graph;
mod http_server;
pub mod metrics;
mod service;
pub mod web;

pub use http_server::HttpServer;

/// The classes of this crate, which the `sluice` command adds to the element library.
pub const CLASSES: &[ElementClass] = &[http_server::CLASS];
