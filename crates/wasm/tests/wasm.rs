//! Behaviour tests of WasmElement (sandboxed WebAssembly extensions) through real
//! configurations: the example modules of `extensions/` (compiled from their text at
//! load), small modules written here for the corners of the ABI, and hostile modules that
//! loop, trap, write out of bounds or answer bad verdicts — contained, counted, and
//! disabled after MAX_FAULTS while the router forwards on.

use sluice_core::{Packet, Router};
use sluice_testkit::{assert_conserved, bytes, inject_packets, num, read, taken, Kit, TempDir};

/// The test kit on simulated time, with WasmElement added to the element library.
fn sim() -> Kit {
    Kit::sim().classes(sluice_wasm::CLASSES)
}

/// The router for `conf` on simulated time, one thread.
fn router(conf: &str) -> Router {
    sim().router(conf)
}

/// The errors of `conf`, which must parse and must fail to build.
fn config_error(conf: &str) -> String {
    Kit::new().classes(sluice_wasm::CLASSES).error(conf)
}

/// The path of example module `name` in `extensions/`.
fn ext(name: &str) -> String {
    format!("{}/../../extensions/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// `TestInject` → WasmElement(`args`) → one `TestCapture` per output (`out0`, `out1`, …).
fn wasm(args: &str, outputs: usize) -> Router {
    let mut conf = format!("src :: TestInject -> w :: WasmElement({args});");
    for k in 0..outputs {
        conf += &format!("w[{k}] -> out{k} :: TestCapture;");
    }
    router(&conf)
}

/// Packets whose first byte is each of `firsts`, `len` bytes long.
fn marked(firsts: &[u8], len: usize) -> Vec<Packet> {
    firsts
        .iter()
        .map(|&b| {
            let mut d = vec![b; len];
            d[1..].fill(0x11);
            Packet::from_bytes(&d)
        })
        .collect()
}

/// The one's-complement sum of `data`'s 16-bit words, folded.
fn ones_sum(data: &[u8]) -> u16 {
    let mut s: u32 = data
        .chunks(2)
        .map(|c| u32::from(c[0]) << 8 | u32::from(*c.get(1).unwrap_or(&0)))
        .sum();
    while s > 0xFFFF {
        s = (s & 0xFFFF) + (s >> 16);
    }
    s as u16
}

/// An IPv4 packet (20-byte header, valid checksum, protocol UDP) with `ttl` and `tos`,
/// `len` bytes in all.
fn ipv4(ttl: u8, tos: u8, len: usize) -> Vec<u8> {
    let mut d = vec![0u8; len];
    d[0] = 0x45;
    d[1] = tos;
    d[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    d[8] = ttl;
    d[9] = 17;
    d[12..16].copy_from_slice(&[198, 18, 0, 1]);
    d[16..20].copy_from_slice(&[198, 19, 0, 1]);
    let c = !ones_sum(&d[..20]);
    d[10..12].copy_from_slice(&c.to_be_bytes());
    d[20..].fill(0x5A);
    d
}

/// The module text `wat` in a file of `dir`.
fn module(dir: &TempDir, name: &str, wat: &str) -> String {
    let path = dir.file(name);
    std::fs::write(&path, wat).expect("writes the module");
    path
}

/// The packets element `w` dropped for `reason`.
fn dropped(r: &mut Router, reason: &str) -> u64 {
    let details = read(r, "w.drop_details");
    details
        .lines()
        .find_map(|l| l.trim().strip_suffix(reason)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {reason:?} in {details:?}"))
}

/// Every packet received is out or counted as a drop of the element.
fn assert_accounted(r: &mut Router, outs: &[Vec<Packet>]) {
    let out: usize = outs.iter().map(Vec::len).sum();
    assert_eq!(
        num(r, "w.count"),
        out as u64 + num(r, "w.drops"),
        "{}",
        read(r, "w.drop_details")
    );
}

// ---- The null module ----

#[test]
fn the_null_module_passes_every_packet_unchanged_in_both_modes() {
    for (mode, calls) in [("batch", 3), ("packet", 70)] {
        let mut r = wasm(&format!("{}, MODE {mode}", ext("null.wat")), 1);
        let pkts: Vec<Packet> = (0..70u8).map(|i| Packet::from_bytes(&[i; 60])).collect();
        let want = bytes(&pkts);
        inject_packets(&mut r, "src", 0, pkts);
        let got = taken(&mut r, "out0");
        assert_eq!(bytes(&got), want, "{mode}");
        assert_eq!(num(&mut r, "w.count"), 70);
        assert_eq!(
            num(&mut r, "w.calls"),
            calls,
            "{mode}: one call per batch or packet"
        );
        assert_eq!(num(&mut r, "w.faults"), 0);
        assert_eq!(num(&mut r, "w.drops"), 0);
        assert!(num(&mut r, "w.fuel") > 0);
    }
}

// ---- ttl_filter.wat ----

#[test]
fn ttl_filter_drops_low_ttls_with_one_output_and_sorts_them_with_two() {
    for mode in ["batch", "packet"] {
        let pkts = || {
            (1..=10u8)
                .map(|ttl| Packet::from_bytes(&ipv4(ttl, 0, 60)))
                .chain([
                    Packet::from_bytes(&[0x60; 60]),
                    Packet::from_bytes(&[0x45; 10]),
                ])
                .collect::<Vec<_>>()
        };
        let ttls = |ps: &[Packet]| ps.iter().map(|p| p.data()[8]).collect::<Vec<_>>();

        let mut r = wasm(
            &format!("{}, MODE {mode}, PARAM 5", ext("ttl_filter.wat")),
            1,
        );
        inject_packets(&mut r, "src", 0, pkts());
        let out = taken(&mut r, "out0");
        // TTLs 5..=10 pass, then the IPv6-looking packet and the runt, untouched.
        assert_eq!(ttls(&out), [5, 6, 7, 8, 9, 10, 0x60, 0x45], "{mode}");
        assert_eq!(dropped(&mut r, "dropped by the module"), 4, "{mode}");
        assert_accounted(&mut r, &[out]);

        let mut r = wasm(
            &format!("{}, MODE {mode}, PARAM 5", ext("ttl_filter.wat")),
            2,
        );
        inject_packets(&mut r, "src", 0, pkts());
        assert_eq!(ttls(&taken(&mut r, "out0")).len(), 8);
        assert_eq!(ttls(&taken(&mut r, "out1")), [1, 2, 3, 4], "{mode}");
        assert_eq!(num(&mut r, "w.drops"), 0);
    }
}

#[test]
fn ttl_filter_reads_the_header_at_the_network_header_annotation() {
    let mut r = wasm(&format!("{}, PARAM 64", ext("ttl_filter.wat")), 2);
    let mut framed = vec![0xAAu8; 14];
    framed.extend(ipv4(3, 0, 46));
    let mut p = Packet::from_bytes(&framed);
    p.set_network_offset(14);
    // Without the annotation the header is looked for at the start, where 0xAA is not
    // IPv4: the packet passes.
    inject_packets(&mut r, "src", 0, [p, Packet::from_bytes(&framed)]);
    assert_eq!(taken(&mut r, "out1").len(), 1);
    assert_eq!(taken(&mut r, "out0").len(), 1);
}

// ---- mark_dscp.wat ----

#[test]
fn mark_dscp_rewrites_the_tos_and_keeps_the_checksum_valid() {
    let tos = [0x00u8, 0x01, 0x03, 0xB8, 0xB9, 0x2A, 0xFF];
    for snaplen in ["", ", SNAPLEN 20"] {
        let mut r = wasm(&format!("{}, PARAM 46{snaplen}", ext("mark_dscp.wat")), 1);
        let pkts: Vec<Packet> = tos
            .iter()
            .enumerate()
            .map(|(i, &t)| Packet::from_bytes(&ipv4(i as u8 + 1, t, 60 + 500 * i)))
            .collect();
        let sent = bytes(&pkts);
        inject_packets(&mut r, "src", 0, pkts);
        let got = taken(&mut r, "out0");
        assert_eq!(got.len(), tos.len());
        for ((p, before), &t) in got.iter().zip(&sent).zip(&tos) {
            let d = p.data();
            assert_eq!(d[1], 46 << 2 | (t & 3), "DSCP 46, ECN bits kept");
            assert_eq!(ones_sum(&d[..20]), 0xFFFF, "checksum valid for tos {t:#x}");
            assert_eq!(&d[..1], &before[..1]);
            assert_eq!(&d[2..10], &before[2..10]);
            assert_eq!(&d[12..], &before[12..], "nothing else changes");
        }
    }
}

// ---- The ABI's corners ----

/// A module whose batch entry shortens every packet by 2 bytes, writes `X` into its first
/// byte (flagging the change), paints it 9, sets its aggregate to the ABI version times 100
/// plus its index, its destination IP annotation to 10.0.0.PARAM, and sends packet i to
/// port i % noutputs; its packet entry does the same and answers port 1.
const EDITOR: &str = r#"(module
  (memory (export "memory") 2)
  (func $edit (param $i i32)
    (local $d i32)
    (local.set $d (i32.add (i32.const 32) (i32.mul (local.get $i) (i32.const 48))))
    (i32.store (local.get $d) (i32.sub (i32.load (local.get $d)) (i32.const 2)))
    (i32.store8 (i32.add (i32.const 2048) (i32.mul (local.get $i) (i32.const 2048)))
                (i32.const 88))
    (i32.store offset=12 (local.get $d) (i32.const 1))
    (i32.store8 offset=32 (local.get $d) (i32.const 9))
    (i32.store offset=24 (local.get $d)
      (i32.add (i32.mul (i32.load offset=4 (i32.const 0)) (i32.const 100)) (local.get $i)))
    (i32.store offset=28 (local.get $d)
      (i32.or (i32.const 10) (i32.shl (i32.load offset=24 (i32.const 0)) (i32.const 24))))
    (i32.store offset=8 (local.get $d)
      (i32.rem_u (local.get $i) (i32.load offset=8 (i32.const 0)))))
  (func (export "sluice_batch") (param $n i32)
    (local $i i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (call $edit (local.get $i))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next))))
  (func (export "sluice_packet") (param $len i32) (result i32)
    (call $edit (i32.const 0))
    (i32.const 1)))"#;

#[test]
fn a_module_edits_bytes_length_annotations_and_ports() {
    let dir = TempDir::new("wasm-editor");
    let editor = module(&dir, "editor.wat", EDITOR);
    let mut r = wasm(&format!("{editor}, PARAM 7"), 2);
    inject_packets(&mut r, "src", 0, marked(&[1, 2, 3, 4], 10));
    let (o0, o1) = (taken(&mut r, "out0"), taken(&mut r, "out1"));
    assert_eq!(o0.len() + o1.len(), 4);
    for (p, i) in o0.iter().zip([0u32, 2]).chain(o1.iter().zip([1u32, 3])) {
        assert_eq!(p.data(), b"X\x11\x11\x11\x11\x11\x11\x11");
        assert_eq!(p.anno().paint, 9);
        assert_eq!(p.anno().aggregate, 100 + i);
        assert_eq!(p.dst_ip_anno(), std::net::Ipv4Addr::new(10, 0, 0, 7));
    }

    let mut r = wasm(&format!("{editor}, MODE packet"), 2);
    inject_packets(&mut r, "src", 0, marked(&[1, 2, 3], 10));
    assert_eq!(
        taken(&mut r, "out1").len(),
        3,
        "the packet entry's answer wins"
    );
    assert_eq!(num(&mut r, "w.calls"), 3);
}

#[test]
fn bytes_past_snaplen_are_kept_and_a_longer_length_is_a_fault() {
    let dir = TempDir::new("wasm-snap");
    let editor = module(&dir, "editor.wat", EDITOR);
    let mut r = wasm(&format!("{editor}, SNAPLEN 4"), 1);
    let mut d: Vec<u8> = (0..100).collect();
    d[0] = 1;
    inject_packets(&mut r, "src", 0, [Packet::from_bytes(&d)]);
    let got = taken(&mut r, "out0");
    assert_eq!(got[0].data()[0], b'X');
    assert_eq!(&got[0].data()[1..], &d[1..98]);

    let grow = module(
        &dir,
        "grow.wat",
        r#"(module (memory (export "memory") 2)
             (func (export "sluice_batch") (param $n i32)
               (i32.store (i32.const 32) (i32.add (i32.load (i32.const 32)) (i32.const 1)))))"#,
    );
    let mut r = wasm(&grow, 1);
    inject_packets(&mut r, "src", 0, marked(&[1, 2], 10));
    assert!(taken(&mut r, "out0").is_empty());
    assert_eq!(read(&mut r, "w.last_fault"), "length 11 > 10");
    assert_eq!(dropped(&mut r, "bad length"), 2);
    assert_eq!(num(&mut r, "w.faults"), 1);
}

#[test]
fn memory_is_limited_to_memory_pages_and_the_area_may_move() {
    let dir = TempDir::new("wasm-mem");
    // memory.grow's answer goes into every packet's aggregate annotation.
    let grower = module(
        &dir,
        "grower.wat",
        r#"(module (memory (export "memory") 3)
             (global (export "sluice_io") i32 (i32.const 65536))
             (func (export "sluice_batch") (param $n i32)
               (i32.store (i32.const 65592) (memory.grow (i32.const 2)))))"#,
    );
    let mut r = wasm(&format!("{grower}, MEMORY_PAGES 6"), 1);
    inject_packets(&mut r, "src", 0, marked(&[1], 10));
    inject_packets(&mut r, "src", 0, marked(&[1], 10));
    let got = taken(&mut r, "out0");
    assert_eq!(got[0].anno().aggregate, 3, "grown from 3 pages to 5");
    assert_eq!(
        got[1].anno().aggregate,
        u32::MAX,
        "7 pages would exceed MEMORY_PAGES"
    );

    let e = config_error(&format!(
        "Idle -> WasmElement({grower}, MEMORY_PAGES 2) -> Discard"
    ));
    assert!(e.contains("instantiation failed"), "{e}");
}

// ---- Hostile modules ----

#[test]
fn a_module_that_loops_forever_is_stopped_by_fuel_and_disabled() {
    for (disabled, passed) in [("drop", 0), ("pass", 8)] {
        let mut r = wasm(
            &format!(
                "{}, FUEL 1000, MAX_FAULTS 3, DISABLED {disabled}",
                ext("loop_forever.wat")
            ),
            1,
        );
        for _ in 0..5 {
            inject_packets(&mut r, "src", 0, marked(&[1, 2, 3, 4], 64));
        }
        let out = taken(&mut r, "out0");
        assert_eq!(out.len(), passed);
        assert_eq!(num(&mut r, "w.faults"), 3);
        assert_eq!(num(&mut r, "w.disabled"), 1);
        assert_eq!(num(&mut r, "w.calls"), 3, "no calls once disabled");
        assert_eq!(
            num(&mut r, "w.fuel"),
            3 * 4 * 1000,
            "each call burnt its 4 x FUEL"
        );
        assert_eq!(dropped(&mut r, "out of fuel"), 12);
        let disabled_drops = if disabled == "drop" { 8 } else { 0 };
        assert_eq!(dropped(&mut r, "extension disabled"), disabled_drops);
        assert!(read(&mut r, "w.last_fault").contains("fuel"));
        assert_accounted(&mut r, &[out]);
    }
}

#[test]
fn a_trapping_call_loses_its_own_packets_only() {
    let mut r = wasm(&ext("trap.wat"), 1);
    inject_packets(&mut r, "src", 0, marked(&[1, 2, 3], 20));
    inject_packets(&mut r, "src", 0, marked(&[4, 0xFF, 5], 20));
    inject_packets(&mut r, "src", 0, marked(&[6, 7], 20));
    inject_packets(&mut r, "src", 0, marked(&[0xEE], 20));
    let out = taken(&mut r, "out0");
    assert_eq!(
        out.iter().map(|p| p.data()[0]).collect::<Vec<_>>(),
        [1, 2, 3, 6, 7]
    );
    assert_eq!(num(&mut r, "w.faults"), 2);
    assert_eq!(num(&mut r, "w.disabled"), 0);
    assert_eq!(dropped(&mut r, "trap"), 4);
    assert!(read(&mut r, "w.last_fault").contains("divide by zero"));
    assert_accounted(&mut r, &[out]);

    // One call per packet: only the trapping packet is lost.
    let mut r = wasm(&format!("{}, MODE packet", ext("trap.wat")), 1);
    inject_packets(&mut r, "src", 0, marked(&[4, 0xFF, 5], 20));
    assert_eq!(taken(&mut r, "out0").len(), 2);
    assert!(read(&mut r, "w.last_fault").contains("unreachable"));
    assert_eq!(num(&mut r, "w.drops"), 1);
}

#[test]
fn out_of_bounds_writes_and_bad_ports_are_faults() {
    for (name, reason) in [
        ("oob_write.wat", "out-of-bounds access"),
        ("bad_port.wat", "bad port"),
    ] {
        for mode in ["batch", "packet"] {
            let mut r = wasm(&format!("{}, MODE {mode}, MAX_FAULTS 4", ext(name)), 2);
            for _ in 0..3 {
                inject_packets(&mut r, "src", 0, marked(&[1, 2], 30));
            }
            let (o0, o1) = (taken(&mut r, "out0"), taken(&mut r, "out1"));
            assert!(o0.is_empty() && o1.is_empty());
            let faults = if mode == "batch" { 3 } else { 4 };
            assert_eq!(num(&mut r, "w.faults"), faults, "{name} {mode}");
            assert_eq!(num(&mut r, "w.disabled"), u64::from(mode == "packet"));
            // Batch: 3 calls of 2 packets; packet: 4 calls of 1, then 2 packets disabled.
            let lost = if mode == "batch" { 6 } else { 4 };
            assert_eq!(dropped(&mut r, reason), lost, "{name} {mode}");
            assert_accounted(&mut r, &[o0, o1]);
        }
    }
}

#[test]
fn the_router_forwards_on_around_a_disabled_extension_and_enable_restarts_it() {
    let mut r = sim().router(&format!(
        "InfiniteSource(LIMIT 1000, BURST 32, STOP true) -> w :: WasmElement({}, FUEL 500, \
         MAX_FAULTS 2, DISABLED pass) -> c :: Counter -> Discard;",
        ext("loop_forever.wat")
    ));
    r.run_until_idle();
    assert_eq!(num(&mut r, "c.count"), 1000 - 2 * 32);
    assert_eq!(num(&mut r, "w.disabled"), 1);
    assert_conserved(&mut r, "loop_forever, disabled after 2 faults");

    let mut r = wasm(&format!("{}, MAX_FAULTS 1", ext("trap.wat")), 1);
    inject_packets(&mut r, "src", 0, marked(&[0xFF], 20));
    inject_packets(&mut r, "src", 0, marked(&[1], 20));
    assert!(taken(&mut r, "out0").is_empty());
    assert_eq!(num(&mut r, "w.disabled"), 1);
    r.write_path("w.enable", "").unwrap();
    assert_eq!(num(&mut r, "w.disabled"), 0);
    assert_eq!(num(&mut r, "w.faults"), 0);
    inject_packets(&mut r, "src", 0, marked(&[2], 20));
    assert_eq!(taken(&mut r, "out0").len(), 1);
    r.write_path("w.reset", "").unwrap();
    assert_eq!(num(&mut r, "w.count") + num(&mut r, "w.drops"), 0);
}

#[test]
fn each_thread_runs_its_own_instance() {
    let mut r = Kit::new()
        .classes(sluice_wasm::CLASSES)
        .threads(2)
        .router(&format!(
        "s0 :: InfiniteSource(LIMIT 200, BURST 32) -> w :: WasmElement({}) -> c :: Counter -> Discard;
         s1 :: InfiniteSource(LIMIT 300, BURST 32) -> w;
         StaticThreadSched(s0 0, s1 1);",
        ext("null.wat")
    ));
    let w = r.element_index("w").unwrap();
    assert_eq!(r.placement().unwrap().elem_threads[w], vec![0, 1]);
    r.run_until_idle();
    assert_eq!(num(&mut r, "w.count"), 500);
    assert_eq!(
        num(&mut r, "w.calls"),
        7 + 10,
        "batches of 32 on each thread"
    );
    assert_eq!(num(&mut r, "c.count"), 500);
}

// ---- Configuration errors ----

#[test]
fn bad_modules_are_configuration_errors() {
    let dir = TempDir::new("wasm-bad");
    let conf = |args: &str| format!("Idle -> WasmElement({args}) -> Discard");
    let cases = [
        ("(module)", "", "exports no memory"),
        (
            r#"(module (memory (export "memory") 1))"#,
            "",
            "does not fit",
        ),
        (
            r#"(module (memory (export "memory") 2))"#,
            "",
            "sluice_batch",
        ),
        (
            r#"(module (memory (export "memory") 2) (func (export "sluice_batch") (param i32)))"#,
            ", MODE packet",
            "sluice_packet",
        ),
        (
            r#"(module (memory (export "memory") 2) (func (export "sluice_batch") (param i32 i32)))"#,
            "",
            "sluice_batch",
        ),
        (
            r#"(module (import "env" "f" (func)) (memory (export "memory") 2))"#,
            "",
            "imports `env::f`",
        ),
        (
            r#"(module (memory (export "memory") 2) (func $s (loop $l (br $l))) (start $s))"#,
            "",
            "fuel",
        ),
        ("(module", "", "expected"),
    ];
    for (i, (wat, extra, want)) in cases.iter().enumerate() {
        let m = module(&dir, &format!("m{i}.wat"), wat);
        let e = config_error(&conf(&format!("{m}{extra}")));
        assert!(e.contains(want), "{wat}: {e}");
    }
    let e = config_error(&conf(&dir.file("missing.wasm")));
    assert!(e.contains("missing.wasm"), "{e}");
    let null = ext("null.wat");
    for (args, want) in [
        (
            format!("{null}, MODE fast"),
            "MODE: expected `batch` or `packet`",
        ),
        (
            format!("{null}, DISABLED maybe"),
            "DISABLED: expected `drop` or `pass`",
        ),
        (
            format!("{null}, SNAPLEN 4096"),
            "SNAPLEN: out of range, bound 2048",
        ),
        (format!("{null}, FUEL 0"), "at least 1"),
    ] {
        let e = config_error(&conf(&args));
        assert!(e.contains(want), "{args}: {e}");
    }
}

#[test]
fn a_binary_module_loads_too() {
    // null.wat assembled by hand: magic, version, a type, two functions, a memory and
    // three exports.
    let wasm_bytes: &[u8] = &[
        0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // header
        0x01, 0x0a, 0x02, 0x60, 0x01, 0x7f, 0x00, 0x60, 0x01, 0x7f, 0x01, 0x7f, // types
        0x03, 0x03, 0x02, 0x00, 0x01, // functions
        0x05, 0x03, 0x01, 0x00, 0x02, // memory: 2 pages
        0x07, 0x29, 0x03, // exports
        0x06, b'm', b'e', b'm', b'o', b'r', b'y', 0x02, 0x00, //
        0x0c, b's', b'l', b'u', b'i', b'c', b'e', b'_', b'b', b'a', b't', b'c', b'h', 0x00,
        0x00, //
        0x0d, b's', b'l', b'u', b'i', b'c', b'e', b'_', b'p', b'a', b'c', b'k', b'e', b't', 0x00,
        0x01, //
        0x0a, 0x09, 0x02, 0x02, 0x00, 0x0b, 0x04, 0x00, 0x41, 0x00, 0x0b, // code
    ];
    let dir = TempDir::new("wasm-bin");
    let path = dir.file("null.wasm");
    std::fs::write(&path, wasm_bytes).unwrap();
    let mut r = wasm(&path, 1);
    inject_packets(&mut r, "src", 0, marked(&[1, 2], 20));
    assert_eq!(taken(&mut r, "out0").len(), 2);
}

#[test]
fn the_class_is_well_formed_and_documented() {
    let mut lib = sluice_elements::library();
    lib.add(sluice_wasm::CLASSES);
    let (_, problems) = sluice_testkit::class_problems(&lib);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
