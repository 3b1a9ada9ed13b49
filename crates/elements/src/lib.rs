//! Sluice's element library. One folder per family, one element per file; each file's leading
//! `//!` comment is the element's documentation (`sluice doc CLASS`).

pub mod ip;
pub mod standard;

use sluice_core::Library;

/// Every element class Sluice ships.
pub fn library() -> Library {
    let mut lib = Library::new();
    lib.add(standard::CLASSES);
    lib.add(ip::CLASSES);
    lib
}
