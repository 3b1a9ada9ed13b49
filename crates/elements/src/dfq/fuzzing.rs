//! Body of the `dfq_demux` fuzz target, also run over its seed corpus and mutations of it by
//! `tests/dfq.rs`.
//!
//! The input is a sequence of records, each a 16-bit big-endian length and that many bytes
//! (fewer at the end of the input), pushed one by one as batch packets into a DFQDemux with
//! a map table, a small flow range and a small reassembly limit, so that every drop reason
//! can be reached. Nothing may panic, every batch must be either accepted or dropped and
//! counted once, and the bytes waiting in buffers never exceed the limit.

use std::sync::OnceLock;

use sluice_core::{Element, ElementClass, Library, Packet, Router, RouterOptions};

struct Inject;
impl Element for Inject {}

const INJECT: ElementClass = ElementClass {
    name: "DfqFuzzInject",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: "",
    make: || Box::new(Inject),
};

const CONFIG: &str = "
    i :: DfqFuzzInject -> d :: DFQDemux(FLOWS 1000, LIMIT 4096, MAP 0-9 100, MAP 20 5)
        -> Discard;
";

/// Reassembly limit of the configuration.
const LIMIT: u64 = 4096;

fn library() -> &'static Library {
    static LIB: OnceLock<Library> = OnceLock::new();
    LIB.get_or_init(|| {
        let mut lib = crate::library();
        lib.add(&[INJECT]);
        lib
    })
}

fn num(r: &mut Router, path: &str) -> u64 {
    let v = r.read_path(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    v.trim()
        .parse()
        .unwrap_or_else(|e| panic!("{path} = {v:?}: {e}"))
}

/// Feeds the records of `data` to a fresh DFQDemux; see the module documentation.
pub fn demux(data: &[u8]) {
    let flat = sluice_lang::parse_config(CONFIG, "fuzz.click", &[]).expect("fuzz config parses");
    let opts = RouterOptions {
        simtime: true,
        ..Default::default()
    };
    let mut r = Router::new(flat, library(), opts)
        .unwrap_or_else(|e| panic!("fuzz config: {}", e.join("\n")));
    let e = r.element_index("i").expect("injector");
    let mut rest = data;
    let mut sent = 0;
    while let [hi, lo, tail @ ..] = rest {
        let n = usize::from(u16::from_be_bytes([*hi, *lo])).min(tail.len());
        let (batch, next) = tail.split_at(n);
        rest = next;
        r.with_element(e, |_, cx| cx.push_one(0, Packet::from_bytes(batch)));
        sent += 1;
        assert_eq!(num(&mut r, "d.batches") + num(&mut r, "d.drops"), sent);
        assert!(num(&mut r, "d.pending") <= LIMIT);
    }
}
