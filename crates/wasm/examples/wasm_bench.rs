//! WasmElement benchmark: what calling a sandboxed WebAssembly extension costs, in CPU
//! cycles (the TSC), against native code doing the same work, all measured in one run.
//!
//! 1. A bare protected call (Panama's "null protected call", 142 cycles on its Pentium):
//!    Wasmtime calling `null.wat`'s `sluice_packet` from Rust, with and without resetting
//!    the fuel budget per call, against a native call through a function pointer.
//! 2. Per packet in a router: 64-byte packets from InfiniteSource (batches of 32) through
//!    the element under test to Discard, minus the same chain without it. The null
//!    extension, called once per packet (MODE packet) and once per batch (MODE batch),
//!    against Null; `mark_dscp.wat` (rewrite the TOS byte, incremental checksum) against
//!    SetIPDSCP, both behind MarkIPHeader.
//!
//! Each figure is the median of several rounds; the configurations alternate within a
//! round. Cycles are TSC ticks; the TSC rate is calibrated against the monotonic clock and
//! printed, with nanoseconds beside cycles.
//!
//! Run: `cargo run --release -p sluice-wasm --example wasm_bench -- [PACKETS] [ROUNDS]`
//! (default 2,000,000 packets per router run, 7 rounds).

use std::hint::black_box;
use std::time::Instant;

use core::arch::x86_64::_rdtsc;

use sluice_testkit::Kit;
use wasmtime::{Config, Engine, Instance, Module, Store, TypedFunc};

/// The example modules' folder.
const EXT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../extensions");

/// The time-stamp counter.
fn tsc() -> u64 {
    // SAFETY: RDTSC only reads the time-stamp counter; every x86-64 processor has it.
    unsafe { _rdtsc() }
}

/// TSC ticks per second, against the monotonic clock over 200 ms.
fn tsc_hz() -> f64 {
    let (t0, c0) = (Instant::now(), tsc());
    while t0.elapsed().as_millis() < 200 {
        std::hint::spin_loop();
    }
    let (dt, dc) = (t0.elapsed().as_secs_f64(), tsc() - c0);
    dc as f64 / dt
}

/// The median of `v`.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The native stand-in for the null extension's entry point.
#[inline(never)]
fn native_null(len: i32) -> i32 {
    black_box(len);
    0
}

/// `null.wat`'s `sluice_packet` in a store of an engine with fuel metering on or off.
fn null_entry(fuel: bool) -> (Store<()>, TypedFunc<i32, i32>) {
    let mut config = Config::new();
    config.consume_fuel(fuel);
    let engine = Engine::new(&config).expect("engine");
    let module = Module::from_file(&engine, format!("{EXT}/null.wat")).expect("null.wat");
    let mut store = Store::new(&engine, ());
    if fuel {
        store.set_fuel(1000).expect("fuel");
    }
    let instance = Instance::new(&mut store, &module, &[]).expect("instance");
    let f = instance
        .get_typed_func(&mut store, "sluice_packet")
        .expect("sluice_packet");
    (store, f)
}

/// Cycles per call of `calls` bare calls: native, Wasmtime without fuel, Wasmtime with the
/// fuel reset before each call (as WasmElement does).
fn bare_calls(calls: u64) -> [f64; 3] {
    let f: fn(i32) -> i32 = black_box(native_null);
    let c0 = tsc();
    for i in 0..calls {
        black_box(f(i as i32));
    }
    let native = (tsc() - c0) as f64 / calls as f64;

    let (mut store, f) = null_entry(false);
    let c0 = tsc();
    for i in 0..calls {
        black_box(f.call(&mut store, i as i32).expect("call"));
    }
    let no_fuel = (tsc() - c0) as f64 / calls as f64;

    let (mut store, f) = null_entry(true);
    let c0 = tsc();
    for i in 0..calls {
        store.set_fuel(1000).expect("fuel");
        black_box(f.call(&mut store, i as i32).expect("call"));
    }
    let fuel = (tsc() - c0) as f64 / calls as f64;
    [native, no_fuel, fuel]
}

/// A 64-byte IPv4/UDP packet as configuration data (`\<45 00 ...>`).
fn ip_packet_data() -> String {
    let mut d = [0u8; 64];
    d[..20].copy_from_slice(&[
        0x45, 0, 0, 64, 0, 0, 0, 0, 64, 17, 0, 0, 198, 18, 0, 1, 198, 19, 0, 1,
    ]);
    let mut sum: u32 = d[..20]
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(c[1]))
        .sum();
    sum = (sum & 0xFFFF) + (sum >> 16);
    d[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    let hex: Vec<String> = d.iter().map(|b| format!("{b:02x}")).collect();
    format!("\\<{}>", hex.join(" "))
}

/// Elements compared on the same traffic: a title, the chain without them (the baseline),
/// and each chain's name and configuration text.
struct Group {
    title: &'static str,
    base: &'static str,
    chains: Vec<(&'static str, String)>,
}

/// TSC cycles per packet of a router run of `packets` packets through `chain`.
fn router_run(chain: &str, packets: u64, data: &str) -> f64 {
    let mut r = Kit::sim().classes(sluice_wasm::CLASSES).router(&format!(
        "InfiniteSource(DATA {data}, LIMIT {packets}, BURST 32, STOP true) {chain} -> Discard"
    ));
    let c0 = tsc();
    r.run_until_idle();
    (tsc() - c0) as f64 / packets as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let packets: u64 = args
        .get(1)
        .map_or(2_000_000, |a| a.parse().expect("PACKETS"));
    let rounds: usize = args.get(2).map_or(7, |a| a.parse().expect("ROUNDS"));
    let hz = tsc_hz();
    let ns = |c: f64| c / hz * 1e9;
    println!(
        "TSC {:.3} GHz; {packets} packets per router run, median of {rounds} rounds",
        hz / 1e9
    );

    let mut bare = [Vec::new(), Vec::new(), Vec::new()];
    for _ in 0..rounds {
        for (v, c) in bare.iter_mut().zip(bare_calls(packets)) {
            v.push(c);
        }
    }
    println!("\nBare call (no packet), cycles per call:");
    let names = [
        "native call through a function pointer",
        "Wasmtime call, no fuel metering",
        "Wasmtime call, fuel reset per call",
    ];
    for (name, v) in names.iter().zip(bare) {
        let c = median(v);
        println!("  {name:<44} {c:>7.1} cycles {:>6.1} ns", ns(c));
    }

    let data = ip_packet_data();
    let null = format!("{EXT}/null.wat");
    let dscp = format!("{EXT}/mark_dscp.wat");
    let groups = [
        Group {
            title: "null: packets pass unchanged",
            base: "",
            chains: vec![
                ("native Null", "-> Null".into()),
                (
                    "WasmElement(null.wat, MODE packet)",
                    format!("-> WasmElement({null}, MODE packet)"),
                ),
                (
                    "WasmElement(null.wat, MODE batch)",
                    format!("-> WasmElement({null})"),
                ),
            ],
        },
        Group {
            title: "DSCP 46 with checksum update, behind MarkIPHeader",
            base: "-> MarkIPHeader",
            chains: vec![
                (
                    "native SetIPDSCP(46)",
                    "-> MarkIPHeader -> SetIPDSCP(46)".into(),
                ),
                (
                    "WasmElement(mark_dscp.wat, PARAM 46)",
                    format!("-> MarkIPHeader -> WasmElement({dscp}, PARAM 46)"),
                ),
                (
                    "  the same, SNAPLEN 20",
                    format!("-> MarkIPHeader -> WasmElement({dscp}, PARAM 46, SNAPLEN 20)"),
                ),
            ],
        },
    ];
    for Group {
        title,
        base,
        chains,
    } in groups
    {
        let mut base_v = Vec::new();
        let mut vs = vec![Vec::new(); chains.len()];
        for _ in 0..rounds {
            base_v.push(router_run(base, packets, &data));
            for (v, (_, chain)) in vs.iter_mut().zip(&chains) {
                v.push(router_run(chain, packets, &data));
            }
        }
        let b = median(base_v);
        println!("\n{title}; cycles per packet (router total, and added to the baseline):");
        println!(
            "  {:<44} {b:>7.1} total",
            format!("baseline: InfiniteSource {base} -> Discard").replace("  ", " ")
        );
        for ((name, _), v) in chains.iter().zip(vs) {
            let c = median(v);
            println!(
                "  {name:<44} {c:>7.1} total {:>7.1} added {:>6.1} ns",
                c - b,
                ns(c - b)
            );
        }
    }
}
