//! Extensions: elements users write themselves, loaded without rebuilding Sluice and run
//! sandboxed (WebAssembly under Wasmtime, with per-call fuel limits), so that a buggy or
//! hostile extension has its packets dropped and counted while the router forwards on.

use sluice_core::ElementClass;

mod abi;
mod sandbox;
mod wasm_element;

/// The classes of this crate, which the `sluice` command adds to the element library.
pub const CLASSES: &[ElementClass] = &[wasm_element::CLASS];
