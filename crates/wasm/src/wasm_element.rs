//! WasmElement — runs a user's WebAssembly module on packets, sandboxed
//!
//! Synopsis: `WasmElement(MODULE [, keywords MODE, FUEL, MAX_FAULTS, MEMORY_PAGES, SNAPLEN,
//! PARAM, DISABLED])`
//!
//! Ports: 1 push input, 1 or more push outputs.
//!
//! Loads its own element without rebuilding Sluice: MODULE is a WebAssembly module, as text
//! (`.wat`) or binary (`.wasm`), compiled by Wasmtime (Cranelift) when the router is
//! configured. The module runs in Wasmtime's sandbox: it sees only its own linear memory,
//! imports nothing (a module with imports is refused), and each call has a budget of fuel
//! (about one unit per WebAssembly instruction). A call that runs out of fuel, traps
//! (`unreachable`, division by zero, stack overflow, a load or store outside its memory), or
//! answers a port or length out of range is a *fault*: every packet of that call is dropped
//! and counted under the fault's reason, and `faults` grows. Once `faults` reaches
//! MAX_FAULTS the element is disabled: from then on packets take the DISABLED path (dropped
//! and counted, or passed unchanged to output 0) and the router forwards on. A module's
//! state is kept across faults. Every packet leaves by an output or is counted in
//! `drop_details`.
//!
//! The ABI (version 1). The module exports its memory as `memory` and, for MODE batch, a
//! function `sluice_batch` `(func (param $count i32))` called once per batch of up to 32
//! packets, or, for MODE packet, `sluice_packet` `(func (param $len i32) (result i32))`
//! called once per packet and answering its output port (-1 drops it). Before each call the
//! host writes the packet area into the module's memory at the address held by the
//! exported i32 global `sluice_io`, or at 0 without one; the area is 67584 bytes (2048 +
//! 32 × 2048) and must fit in the memory the module declares (2 pages at address 0). All
//! fields are little-endian.
//! - Header, at area + 0: `count` u32 (packets in this call), +4 `version` u32 (1), +8
//!   `noutputs` u32 (valid ports are 0 to noutputs − 1), +12 `snaplen` u32, +16 `now` i64
//!   (router clock, ns since the epoch), +24 `param` u32 (PARAM), +28 reserved.
//! - Descriptor of packet i, at area + 32 + 48 × i: +0 `len` u32 (the packet's length; the
//!   module may lower it to truncate the packet), +4 `caplen` u32 (bytes copied into the
//!   slot: len or SNAPLEN, whichever is less; read only), +8 `port` i32 (the verdict in MODE
//!   batch: preset to 0; an output port, or -1 to drop), +12 `flags` u32 (preset to 0; bit 0:
//!   the module changed the packet's bytes), +16 `timestamp` i64 (ns; read only), +24
//!   `aggregate` u32, +28 `dst_ip` (4 bytes, the destination IP annotation in network
//!   order), +32 `paint` u8, +33 reserved, +34 `net_off` u16 (offset of the network header
//!   from the packet's start, 0xFFFF without one; read only), +36 to +47 reserved.
//!   `aggregate`, `dst_ip` and `paint` are written back to the packet's annotations.
//! - Data of packet i, at area + 2048 + 2048 × i: its first `caplen` bytes (the rest of the
//!   slot holds stale bytes). The module may change them in place; with bit 0 of `flags`
//!   set, the host copies the first min(caplen, new len) bytes back into the packet. Bytes
//!   past `caplen` are never seen and stay as they were.
//!
//! A verdict is bad, and the call a fault, if a port is neither -1 nor below `noutputs`, or
//! a length grows (packets may only shrink); nothing of that call is applied. In MODE packet
//! the host uses descriptor 0 and slot 0 and ignores the descriptor's `port`. The module's
//! start function, if any, runs at load with fuel for one full batch (32 × FUEL).
//!
//! Arguments:
//! - `MODULE` (string, mandatory): the module's file, `.wat` text or `.wasm` binary.
//! - `MODE` (`batch` or `packet`, default batch): one call per batch (`sluice_batch`) or
//!   one per packet (`sluice_packet`).
//! - `FUEL` (unsigned > 0, default 100000): fuel per packet; a call gets FUEL times its
//!   number of packets.
//! - `MAX_FAULTS` (unsigned, default 10): faults after which the element is disabled; 0
//!   never disables it.
//! - `MEMORY_PAGES` (unsigned, 1 to 16384, default 16): the most 64 KiB pages the module's
//!   memory may have; a module declaring more is refused, and `memory.grow` beyond
//!   answers -1.
//! - `SNAPLEN` (unsigned, 1 to 2048, default 2048): the most bytes of each packet copied
//!   into the module's memory (64 is enough for headers and saves copying).
//! - `PARAM` (unsigned 32-bit, default 0): a value passed to the module in the header
//!   (`ttl_filter.wat`'s minimum TTL, `mark_dscp.wat`'s DSCP).
//! - `DISABLED` (`drop` or `pass`, default drop): what happens to packets once the element
//!   is disabled: dropped and counted ("extension disabled"), or sent unchanged to output 0.
//!
//! Handlers: `count` (r): packets received. `calls` (r): calls into the module. `faults`
//! (r): faulty calls since the element was last enabled. `disabled` (r): 1 once disabled,
//! else 0 (per-thread copies are summed: the number of disabled copies). `fuel` (r): fuel
//! used by all calls. `last_fault` (r): Wasmtime's description of the last fault, or
//! nothing. `max_faults` (rw). `enable` (w): enables the element again and sets `faults`
//! to 0. `reset` (w): sets `count`, `calls`, `fuel` and the drop counts to 0. `drops`,
//! `drop_details` (r): packets dropped, by reason: dropped by the module (verdict -1), out
//! of fuel, out-of-bounds access, trap, bad port, bad length, extension disabled.
//!
//! Example: `FromDevice(eth0) -> Strip(14) -> CheckIPHeader ->
//! w :: WasmElement(extensions/ttl_filter.wat, PARAM 5, MAX_FAULTS 3, DISABLED pass) ->
//! Unstrip(14) -> Queue -> ToDevice(eth1)` (the example modules are in `extensions/`; the
//! ABI with a worked module is in `docs/wasm-extensions.md`).

use sluice_core::toolkit::{push_by_port, NO_PORT};
use sluice_core::{drop_reasons, Batch, ConfigCx, Cx, Drops, Element, ElementClass, Handlers};
use sluice_core::{Concurrency, Table, BATCH_MAX};
use sluice_lang::args::{Args, AtMost, FromArg};

use crate::abi::{self, Header, DROP, SLOT};
use crate::sandbox::{Fault, FaultKind, Mode, Sandbox};

drop_reasons! {
    /// Why WasmElement drops a packet.
    enum Reason {
        Module => "dropped by the module",
        OutOfFuel => "out of fuel",
        OutOfBounds => "out-of-bounds access",
        Trap => "trap",
        BadPort => "bad port",
        BadLength => "bad length",
        Disabled => "extension disabled",
    }
}

/// Largest MEMORY_PAGES: 1 GiB.
const MAX_PAGES: usize = 16384;

impl FromArg for Mode {
    fn from_arg(s: &str) -> Result<Self, String> {
        match s {
            "batch" => Ok(Mode::Batch),
            "packet" => Ok(Mode::Packet),
            _ => Err("expected `batch` or `packet`".into()),
        }
    }
}

/// Where packets go once the element is disabled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnDisabled {
    /// Dropped and counted.
    Drop,
    /// Unchanged, to output 0.
    Pass,
}

impl FromArg for OnDisabled {
    fn from_arg(s: &str) -> Result<Self, String> {
        match s {
            "drop" => Ok(OnDisabled::Drop),
            "pass" => Ok(OnDisabled::Pass),
            _ => Err("expected `drop` or `pass`".into()),
        }
    }
}

/// The reason reply `r` for a packet of `len` bytes is bad, if it is, with `noutputs`
/// outputs in use.
fn check(r: &abi::Reply, len: usize, noutputs: usize) -> Option<(Reason, String)> {
    if r.port != DROP && !(0..noutputs as i64).contains(&i64::from(r.port)) {
        Some((Reason::BadPort, format!("bad port {}", r.port)))
    } else if r.len as usize > len {
        Some((Reason::BadLength, format!("length {} > {len}", r.len)))
    } else {
        None
    }
}

/// The WasmElement element.
pub struct WasmElement {
    mode: Mode,
    fuel: u64,
    max_faults: u64,
    pages: usize,
    snaplen: usize,
    param: u32,
    on_disabled: OnDisabled,
    /// The loaded module (none until configured).
    sandbox: Option<Sandbox>,
    noutputs: usize,
    count: u64,
    calls: u64,
    faults: u64,
    fuel_used: u64,
    disabled: bool,
    last_fault: String,
    drops: Drops<Reason>,
    /// Each packet's output port in the batch being sorted ([`NO_PORT`]: dropped).
    ports: [u32; BATCH_MAX],
    /// Scratch batches for [`push_by_port`].
    outs: Vec<Batch>,
}

impl Default for WasmElement {
    fn default() -> WasmElement {
        WasmElement {
            mode: Mode::Batch,
            fuel: 100_000,
            max_faults: 10,
            pages: 16,
            snaplen: SLOT,
            param: 0,
            on_disabled: OnDisabled::Drop,
            sandbox: None,
            noutputs: 1,
            count: 0,
            calls: 0,
            faults: 0,
            fuel_used: 0,
            disabled: false,
            last_fault: String::new(),
            drops: Drops::default(),
            ports: [0; BATCH_MAX],
            outs: Vec::new(),
        }
    }
}

impl WasmElement {
    /// Counts a faulty call whose `n` packets are dropped, and disables the element at
    /// MAX_FAULTS.
    fn fault(&mut self, reason: Reason, text: String, n: usize) {
        self.faults += 1;
        self.drops.add(reason, n as u64);
        self.last_fault = text;
        if self.max_faults > 0 && self.faults >= self.max_faults {
            self.disabled = true;
        }
    }

    /// [`WasmElement::fault`] for a call that failed in the module.
    fn trapped(&mut self, f: Fault, n: usize) {
        let reason = match f.kind {
            FaultKind::OutOfFuel => Reason::OutOfFuel,
            FaultKind::OutOfBounds => Reason::OutOfBounds,
            FaultKind::Trap => Reason::Trap,
        };
        self.fault(reason, f.text, n);
    }

    /// The port for verdict `port`, counting a drop.
    fn port_of(&mut self, port: i32) -> u32 {
        if port == DROP {
            self.drops.count(Reason::Module);
            NO_PORT
        } else {
            port as u32
        }
    }

    /// The header of a call of `count` packets.
    fn header(&self, count: usize, cx: &Cx) -> Header {
        Header {
            count: count as u32,
            noutputs: self.noutputs as u32,
            snaplen: self.snaplen as u32,
            param: self.param,
            now: cx.now().0,
        }
    }

    /// MODE batch: one call for the whole batch. Returns false if the batch was dropped
    /// (and counted).
    fn run_batch(&mut self, batch: &mut Batch, cx: &Cx) -> bool {
        let n = batch.len();
        let header = self.header(n, cx);
        let Some(sb) = self.sandbox.as_mut() else {
            self.drops.add(Reason::Disabled, n as u64);
            return false;
        };
        let area = sb.area();
        abi::put_header(area, &header);
        for (i, p) in batch.iter().enumerate() {
            abi::put_packet(area, i, p, self.snaplen);
        }
        self.calls += 1;
        let (result, used) = sb.call(n as i32, self.fuel.saturating_mul(n as u64));
        self.fuel_used += used;
        if let Err(f) = result {
            self.trapped(f, n);
            return false;
        }
        let mut replies = [abi::Reply::default(); BATCH_MAX];
        let area = sb.area();
        for (i, p) in batch.iter().enumerate() {
            replies[i] = abi::get_reply(area, i);
            if let Some((reason, text)) = check(&replies[i], p.len(), self.noutputs) {
                self.fault(reason, text, n);
                return false;
            }
        }
        for (i, p) in batch.iter_mut().enumerate() {
            abi::apply(area, i, &replies[i], p, self.snaplen);
        }
        for (i, r) in replies.iter().enumerate().take(n) {
            self.ports[i] = self.port_of(r.port);
        }
        true
    }

    /// MODE packet: one call per packet; a fault drops that packet only, and the packets
    /// after the one that disabled the element take the DISABLED path.
    fn run_packets(&mut self, batch: &mut Batch, cx: &Cx) {
        let header = self.header(1, cx);
        for (i, p) in batch.iter_mut().enumerate() {
            let Some(sb) = self.sandbox.as_mut().filter(|_| !self.disabled) else {
                self.ports[i] = match self.on_disabled {
                    OnDisabled::Pass => 0,
                    OnDisabled::Drop => {
                        self.drops.count(Reason::Disabled);
                        NO_PORT
                    }
                };
                continue;
            };
            let area = sb.area();
            abi::put_header(area, &header);
            abi::put_packet(area, 0, p, self.snaplen);
            self.calls += 1;
            let (result, used) = sb.call(p.len() as i32, self.fuel);
            self.fuel_used += used;
            self.ports[i] = NO_PORT;
            let port = match result {
                Ok(port) => port,
                Err(f) => {
                    self.trapped(f, 1);
                    continue;
                }
            };
            let mut reply = abi::get_reply(sb.area(), 0);
            reply.port = port;
            if let Some((reason, text)) = check(&reply, p.len(), self.noutputs) {
                self.fault(reason, text, 1);
                continue;
            }
            abi::apply(sb.area(), 0, &reply, p, self.snaplen);
            self.ports[i] = self.port_of(port);
        }
    }

    /// The `enable` handler.
    fn enable(&mut self) {
        self.disabled = false;
        self.faults = 0;
    }

    /// The `reset` handler.
    fn reset(&mut self) {
        self.count = 0;
        self.calls = 0;
        self.fuel_used = 0;
        self.drops.reset();
    }
}

impl Element for WasmElement {
    fn configure(&mut self, args: &mut Args, cx: &mut ConfigCx) -> Result<(), ()> {
        let module: String = args.read_mp("MODULE")?;
        args.read_into("MODE", &mut self.mode)?;
        args.read_into("FUEL", &mut self.fuel)?;
        args.read_into("MAX_FAULTS", &mut self.max_faults)?;
        if let Some(AtMost(p)) = args.read::<AtMost<MAX_PAGES>>("MEMORY_PAGES")? {
            self.pages = p;
        }
        if let Some(AtMost(s)) = args.read::<AtMost<SLOT>>("SNAPLEN")? {
            self.snaplen = s;
        }
        args.read_into("PARAM", &mut self.param)?;
        args.read_into("DISABLED", &mut self.on_disabled)?;
        if self.fuel == 0 || self.pages == 0 || self.snaplen == 0 {
            args.error("FUEL, MEMORY_PAGES and SNAPLEN must be at least 1");
            return Err(());
        }
        self.noutputs = cx.noutputs().max(1);
        let start_fuel = self.fuel.saturating_mul(BATCH_MAX as u64);
        match Sandbox::load(&module, self.mode, self.pages, start_fuel) {
            Ok(sb) => {
                self.sandbox = Some(sb);
                Ok(())
            }
            Err(e) => {
                args.error(e);
                Err(())
            }
        }
    }

    fn push(&mut self, _port: usize, mut batch: Batch, cx: &mut Cx) {
        let n = batch.len();
        self.count += n as u64;
        if self.disabled || self.sandbox.is_none() {
            match self.on_disabled {
                OnDisabled::Pass => cx.push(0, batch),
                OnDisabled::Drop => self.drops.add(Reason::Disabled, n as u64),
            }
            return;
        }
        match self.mode {
            Mode::Batch => {
                if !self.run_batch(&mut batch, cx) {
                    return;
                }
            }
            Mode::Packet => self.run_packets(&mut batch, cx),
        }
        // Drops were counted by reason above: push_by_port's count repeats them.
        push_by_port(batch, &self.ports[..n], self.noutputs, &mut self.outs, cx);
    }

    fn handler_table(&self) -> Handlers {
        Table::<Self>::new()
            .read("count", |e| e.count)
            .read("calls", |e| e.calls)
            .read("faults", |e| e.faults)
            .read("disabled", |e| u8::from(e.disabled))
            .read("fuel", |e| e.fuel_used)
            .read("last_fault", |e| e.last_fault.clone())
            .data("max_faults", |e| &mut e.max_faults)
            .action("enable", Self::enable)
            .action("reset", Self::reset)
            .drops(|e| &e.drops)
            .into()
    }

    fn concurrency(&self) -> Concurrency {
        Concurrency::Replicated
    }
}

/// Class description.
pub const CLASS: ElementClass = ElementClass {
    name: "WasmElement",
    ports: "1/1-",
    processing: "h/h",
    flow: "",
    source: include_str!("wasm_element.rs"),
    make: || Box::<WasmElement>::default(),
};
