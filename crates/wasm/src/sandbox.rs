//! The host side of a WebAssembly extension: one shared Wasmtime engine with fuel metering,
//! and per element a store holding one instance of the user's module, its memory limit, its
//! exported memory and entry point, and calls that turn every way a module can fail into a
//! [`Fault`].

use std::sync::OnceLock;

use wasmtime::{
    Config, Engine, Instance, Memory, Module, Store, StoreLimits, StoreLimitsBuilder, Trap,
    TypedFunc,
};

use crate::abi::AREA;

/// Bytes per WebAssembly page.
pub(super) const PAGE: usize = 65536;

/// How the element calls the module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// `sluice_batch(count)`, once per batch.
    Batch,
    /// `sluice_packet(len) -> port`, once per packet.
    Packet,
}

/// The module's entry point for the mode.
enum Entry {
    Batch(TypedFunc<i32, ()>),
    Packet(TypedFunc<i32, i32>),
}

/// Why a call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FaultKind {
    /// The call used up its fuel.
    OutOfFuel,
    /// A load or store outside the module's memory (or a table access outside its table).
    OutOfBounds,
    /// Any other trap: `unreachable`, division by zero, stack overflow, ...
    Trap,
}

/// A failed call: its kind and Wasmtime's description.
#[derive(Debug)]
pub(super) struct Fault {
    /// What went wrong.
    pub(super) kind: FaultKind,
    /// Wasmtime's message.
    pub(super) text: String,
}

impl Fault {
    /// The fault that error `e`, returned by a call into the module, describes.
    fn of(e: wasmtime::Error) -> Fault {
        let trap = e.downcast_ref::<Trap>();
        let kind = match trap {
            Some(Trap::OutOfFuel) => FaultKind::OutOfFuel,
            Some(Trap::MemoryOutOfBounds | Trap::TableOutOfBounds) => FaultKind::OutOfBounds,
            _ => FaultKind::Trap,
        };
        Fault {
            kind,
            text: trap.map_or_else(|| e.to_string(), Trap::to_string),
        }
    }
}

/// The engine every extension shares: Cranelift, fuel metering on.
fn engine() -> Result<&'static Engine, String> {
    static ENGINE: OnceLock<Result<Engine, String>> = OnceLock::new();
    ENGINE
        .get_or_init(|| {
            let mut config = Config::new();
            config.consume_fuel(true);
            Engine::new(&config).map_err(|e| format!("WebAssembly engine: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// One instance of a user's module, ready to be called.
pub(super) struct Sandbox {
    store: Store<StoreLimits>,
    memory: Memory,
    /// Address of the packet area in the module's memory.
    base: usize,
    entry: Entry,
}

impl Sandbox {
    /// Compiles the module in file `path` (WebAssembly text or binary) and instantiates it
    /// with memory limited to `pages` pages; its start function, if any, runs on
    /// `start_fuel`. Checks the exports `mode` needs and that the packet area fits in the
    /// memory.
    pub(super) fn load(
        path: &str,
        mode: Mode,
        pages: usize,
        start_fuel: u64,
    ) -> Result<Sandbox, String> {
        let engine = engine()?;
        let module = Module::from_file(engine, path).map_err(|e| format!("{path}: {e:#}"))?;
        if let Some(i) = module.imports().next() {
            return Err(format!(
                "{path}: the module imports `{}::{}`; WasmElement provides no imports",
                i.module(),
                i.name()
            ));
        }
        let limits = StoreLimitsBuilder::new()
            .memory_size(pages * PAGE)
            .table_elements(PAGE)
            .instances(1)
            .memories(1)
            .tables(1)
            .build();
        let mut store = Store::new(engine, limits);
        store.limiter(|limits| limits);
        store.set_fuel(start_fuel).map_err(|e| e.to_string())?;
        let instance = Instance::new(&mut store, &module, &[])
            .map_err(|e| format!("{path}: instantiation failed: {e:#}"))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| format!("{path}: the module exports no memory named `memory`"))?;
        let base = match instance.get_global(&mut store, "sluice_io") {
            None => 0,
            Some(g) => match g.get(&mut store).i32() {
                Some(b) => b as u32 as usize,
                None => return Err(format!("{path}: `sluice_io` is not an i32 global")),
            },
        };
        let size = memory.data_size(&store);
        if base + AREA > size {
            return Err(format!(
                "{path}: the packet area ({AREA} bytes at {base}) does not fit in the \
                 module's memory ({size} bytes): declare at least {} pages",
                (base + AREA).div_ceil(PAGE)
            ));
        }
        let entry = match mode {
            Mode::Batch => Entry::Batch(
                instance
                    .get_typed_func(&mut store, "sluice_batch")
                    .map_err(|e| format!("{path}: needs `sluice_batch` (func (param i32)): {e}"))?,
            ),
            Mode::Packet => Entry::Packet(
                instance
                    .get_typed_func(&mut store, "sluice_packet")
                    .map_err(|e| {
                        format!(
                            "{path}: needs `sluice_packet` (func (param i32) (result i32)): {e}"
                        )
                    })?,
            ),
        };
        Ok(Sandbox {
            store,
            memory,
            base,
            entry,
        })
    }

    /// The packet area in the module's memory (it fitted when loaded, and WebAssembly
    /// memories never shrink).
    pub(super) fn area(&mut self) -> &mut [u8] {
        &mut self.memory.data_mut(&mut self.store)[self.base..self.base + AREA]
    }

    /// Calls the entry point with `arg` (the batch's packet count, or the packet's length)
    /// and `fuel` to burn. Returns the port `sluice_packet` answered (0 for `sluice_batch`)
    /// or the fault, and the fuel the call used.
    pub(super) fn call(&mut self, arg: i32, fuel: u64) -> (Result<i32, Fault>, u64) {
        if let Err(e) = self.store.set_fuel(fuel) {
            return (Err(Fault::of(e)), 0);
        }
        let port = match &self.entry {
            Entry::Batch(f) => f.call(&mut self.store, arg).map(|()| 0),
            Entry::Packet(f) => f.call(&mut self.store, arg),
        };
        let left = self.store.get_fuel().unwrap_or(0).min(fuel);
        (port.map_err(Fault::of), fuel - left)
    }
}
