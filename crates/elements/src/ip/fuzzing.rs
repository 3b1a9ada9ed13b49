//! Shared bodies of the `ip_*` fuzz targets (in `fuzz/fuzz_targets/`), also run over their
//! seed corpora (`fuzz/corpus/ip_*`) and random mutations by `tests/ip.rs`, so CI exercises
//! them without a fuzzing run. Each body pushes arbitrary bytes, as one packet, into real
//! router configurations of the header-parsing elements; any panic is a bug.

use std::cell::RefCell;
use std::net::Ipv4Addr;

use sluice_core::{Element, ElementClass, Library, Packet, PacketType, Router, RouterOptions};

struct Inject;
impl Element for Inject {}

const INJECT: ElementClass = ElementClass {
    name: "FuzzInject",
    ports: "0/1",
    processing: "h/h",
    flow: "",
    source: "",
    make: || Box::new(Inject),
};

/// The configurations: one injector per fuzz target.
const CONFIG: &str = "
    chk :: FuzzInject -> c :: CheckIPHeader(OFFSET 0) -> MarkIPHeader -> DecIPTTL -> Discard;
    c[1] -> Discard;
    chk2 :: FuzzInject -> c2 :: CheckIPHeader2(CHECKSUM false) -> g2 :: IPGWOptions(198.18.0.1, 198.19.0.1)
        -> FixIPSrc(198.18.0.1) -> IPPrint(ACTIVE false) -> Discard;
    g2[1] -> ICMPError(198.18.0.1, parameterproblem) -> Discard;
    c2[1] -> Discard;
    gwo :: FuzzInject -> MarkIPHeader -> g :: IPGWOptions(198.18.0.1) -> Discard;
    g[1] -> ICMPError(198.18.0.1, parameterproblem) -> Discard;
    err :: FuzzInject -> MarkIPHeader -> e1 :: ICMPError(198.18.0.1, timeexceeded) -> Discard;
    e1[1] -> e2 :: ICMPError(198.18.0.1, redirect, host) -> Discard; e2[1] -> Discard;
    err2 :: FuzzInject -> MarkIPHeader -> ICMPError(198.18.0.1, unreachable, needfrag) -> Discard;
    err3 :: FuzzInject -> MarkIPHeader -> ICMPPingResponder -> Discard;
    arp :: FuzzInject -> [1]q :: ARPQuerier(198.18.0.1/24, 00:00:c0:ae:67:ef) -> Discard;
    arpip :: FuzzInject -> q;
    arpr :: FuzzInject -> h :: HostEtherFilter(00:00:c0:ae:67:ef) -> ARPResponder(198.18.0.1 198.19.0.0/16 00:00:c0:ae:67:ef) -> Discard;
    frag :: FuzzInject -> MarkIPHeader -> f :: IPFragmenter(68, HONOR_DF false) -> IPReassembler -> Discard;
    reasm :: FuzzInject -> MarkIPHeader -> ra :: IPReassembler(HIMEM 65536) -> Discard;
    ra[1] -> ICMPError(198.18.0.1, timeexceeded, reassembly) -> Discard;
    frag2 :: FuzzInject -> MarkIPHeader -> f2 :: IPFragmenter(576) -> Discard;
    f2[1] -> ICMPError(198.18.0.1, unreachable, needfrag) -> Discard;
    misc :: FuzzInject -> StripIPHeader -> Discard;
    misc2 :: FuzzInject -> SetIPDSCP(10) -> StoreIPAddress(dst) -> GetIPAddress(src)
        -> MarkIPCE(FORCE true) -> UDPIPEncap(198.18.0.1, 1234, DST_ANNO, 9)
        -> ICMPIPEncap(198.18.0.1, 198.18.0.2, echo) -> Discard;
    l4 :: FuzzInject -> ct :: CheckTCPHeader -> SetTCPChecksum(true) -> Discard;
    ct[1] -> cu :: CheckUDPHeader -> SetUDPChecksum -> Discard; cu[1] -> CheckICMPHeader -> Discard;
    l4b :: FuzzInject -> SetTCPChecksum(true) -> SetUDPChecksum -> CheckICMPHeader -> Discard;
";

thread_local! {
    static ROUTER: RefCell<Option<Router>> = const { RefCell::new(None) };
}

fn with_router(f: impl FnOnce(&mut Router)) {
    ROUTER.with(|r| {
        let mut r = r.borrow_mut();
        if r.is_none() {
            let flat =
                sluice_lang::parse_config(CONFIG, "fuzz.click", &[]).expect("fuzz config parses");
            let mut lib: Library = crate::library();
            lib.add(&[INJECT]);
            let rt = Router::new(
                flat,
                &lib,
                RouterOptions {
                    simtime: true,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("fuzz config: {}", e.join("\n")));
            *r = Some(rt);
        }
        f(r.as_mut().expect("router built above"));
    });
}

fn inject(r: &mut Router, name: &str, data: &[u8], tweak: u8) {
    let mut p = Packet::from_bytes(data);
    // A few annotation variants, chosen by a byte of the input.
    p.anno_mut().packet_type = match tweak & 3 {
        0 => PacketType::Host,
        1 => PacketType::Broadcast,
        2 => PacketType::Multicast,
        _ => PacketType::OtherHost,
    };
    p.anno_mut().fix_ip_src = tweak & 4 != 0;
    p.anno_mut().param_off = tweak as u16 * 3;
    if tweak & 8 != 0 {
        p.set_dst_ip_anno(Ipv4Addr::new(198, 18, 0, tweak));
    }
    if tweak & 16 != 0 {
        p.set_network_offset((tweak as isize % 7) - 2);
    }
    let e = r.element_index(name).expect("injector");
    r.with_element(e, |_, cx| cx.push_one(0, p));
}

fn tweak(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |a, b| a.wrapping_add(*b))
}

/// CheckIPHeader / CheckIPHeader2 and what follows them; the TCP, UDP and ICMP header
/// checks and checksum setters.
pub fn check_ip_header(data: &[u8]) {
    with_router(|r| {
        inject(r, "chk", data, tweak(data));
        inject(r, "chk2", data, tweak(data));
        inject(r, "misc", data, tweak(data));
        inject(r, "misc2", data, tweak(data));
        inject(r, "l4", data, tweak(data));
        inject(r, "l4b", data, tweak(data));
    });
}

/// IPGWOptions on unchecked packets.
pub fn ip_gw_options(data: &[u8]) {
    with_router(|r| inject(r, "gwo", data, tweak(data)));
}

/// ICMPError (time exceeded, redirect, needfrag) and ICMPPingResponder.
pub fn icmp_error(data: &[u8]) {
    with_router(|r| {
        inject(r, "err", data, tweak(data));
        inject(r, "err2", data, tweak(data));
        inject(r, "err3", data, tweak(data));
    });
}

/// ARPQuerier input 1 (and input 0), ARPResponder, HostEtherFilter.
pub fn arp(data: &[u8]) {
    with_router(|r| {
        inject(r, "arp", data, tweak(data));
        inject(r, "arpip", data, tweak(data));
        inject(r, "arpr", data, tweak(data));
        // Keep the querier's table small across a long run.
        let _ = r.write_path("q.clear", "");
    });
}

/// IPFragmenter with a tiny and a normal MTU (the tiny one followed by IPReassembler), and
/// IPReassembler on arbitrary fragments.
pub fn ip_fragmenter(data: &[u8]) {
    with_router(|r| {
        inject(r, "frag", data, tweak(data));
        inject(r, "frag2", data, tweak(data));
        inject(r, "reasm", data, tweak(data));
    });
}

/// A fuzz body: one input, any bytes.
pub type FuzzBody = fn(&[u8]);

/// Every body, for the corpus tests.
pub const TARGETS: &[(&str, FuzzBody)] = &[
    ("ip_check_ip_header", check_ip_header),
    ("ip_gw_options", ip_gw_options),
    ("ip_icmp_error", icmp_error),
    ("ip_arp", arp),
    ("ip_fragmenter", ip_fragmenter),
];
