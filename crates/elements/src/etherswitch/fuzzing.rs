//! Body of the BPDU fuzz target, also run over generated inputs by `tests/etherswitch.rs`.
//!
//! The input is a sequence of frames, each fed to a fresh three-port switch (EtherSpanTree,
//! EtherSwitch and the two Suppressors of Figure 16) on simulated time. Each record is a
//! control byte, a length byte and that many bytes of frame (fewer at the end of the
//! input). The control byte picks the port (its value modulo 3), whether the frame goes to
//! EtherSpanTree as a BPDU (bit 2 clear) or into the switch's data path (bit 2 set), and how
//! far the clock moves on first (bits 3 to 7, in quarter seconds), so that the protocol's
//! timers expire between frames.
//!
//! Nothing may panic, and every frame must be accounted for: a BPDU is either processed or
//! dropped and counted by EtherSpanTree; a data frame reaches one Discard or is dropped and
//! counted by an element on the way, or, when the switch floods it, its two copies are.

use std::sync::OnceLock;

use sluice_core::{Element, ElementClass, Library, Packet, Router, RouterOptions, Timestamp};

struct Inject;
impl Element for Inject {}

const INJECT: ElementClass = ElementClass {
    name: "BpduFuzzInject",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: "",
    make: || Box::new(Inject),
};

const CONFIG: &str = "
    stp :: EtherSpanTree(02:00:00:00:00:01, in, out, sw,
                         HELLO_TIME 1, MAX_AGE 6, FORWARD_DELAY 4, PRIORITY 0x8000);
    in, out :: Suppressor;
    sw :: EtherSwitch(TIMEOUT 3);
    b0 :: BpduFuzzInject -> [0]stp[0] -> Discard;
    b1 :: BpduFuzzInject -> [1]stp[1] -> Discard;
    b2 :: BpduFuzzInject -> [2]stp[2] -> Discard;
    d0 :: BpduFuzzInject -> [0]in[0] -> [0]sw[0] -> [0]out[0] -> o0 :: Discard;
    d1 :: BpduFuzzInject -> [1]in[1] -> [1]sw[1] -> [1]out[1] -> o1 :: Discard;
    d2 :: BpduFuzzInject -> [2]in[2] -> [2]sw[2] -> [2]out[2] -> o2 :: Discard;
";

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

/// Frames that left the data path so far: reached a Discard or dropped by an element.
fn data_accounted(r: &mut Router) -> u64 {
    [
        "o0.count",
        "o1.count",
        "o2.count",
        "in.drops",
        "sw.drops",
        "out.drops",
    ]
    .iter()
    .map(|h| num(r, h))
    .sum()
}

/// Feeds the records of `data` to a fresh switch; see the module documentation.
pub fn bpdu(data: &[u8]) {
    let flat = sluice_lang::parse_config(CONFIG, "fuzz.click", &[]).expect("fuzz config parses");
    let opts = RouterOptions {
        simtime: true,
        ..Default::default()
    };
    let mut r = Router::new(flat, library(), opts)
        .unwrap_or_else(|e| panic!("fuzz config: {}", e.join("\n")));
    let mut rest = data;
    while let [control, len, tail @ ..] = rest {
        let n = (*len as usize).min(tail.len());
        let (frame, next) = tail.split_at(n);
        rest = next;
        let now = r.clock().now();
        r.clock()
            .advance_to(now + Timestamp(i64::from(control >> 3) * 250_000_000));
        let port = (control % 3) as usize;
        let bpdu = control & 4 == 0;
        let name = format!("{}{port}", if bpdu { "b" } else { "d" });
        let e = r.element_index(&name).expect("injector");
        let p = Packet::from_bytes(frame);
        if bpdu {
            let before = num(&mut r, "stp.received") + num(&mut r, "stp.drops");
            r.with_element(e, |_, cx| cx.push_one(0, p));
            let after = num(&mut r, "stp.received") + num(&mut r, "stp.drops");
            assert_eq!(after - before, 1, "BPDU not accounted for once");
        } else {
            let before = data_accounted(&mut r);
            let flooded = num(&mut r, "sw.flooded");
            r.with_element(e, |_, cx| cx.push_one(0, p));
            let copies = 1 + num(&mut r, "sw.flooded") - flooded;
            assert_eq!(
                data_accounted(&mut r) - before,
                copies,
                "data frame not accounted for"
            );
        }
        for h in ["stp.msgs", "stp.port_states", "sw.table", "sw.port_counts"] {
            r.read_path(h).unwrap_or_else(|e| panic!("{h}: {e}"));
        }
    }
}
