//! Shared bodies of the packet fuzz targets (`ip_*`, `ip6_*`, `esp_decap`, `nat_rewriters` in
//! `fuzz/fuzz_targets/`), also run over their seed corpora (`fuzz/corpus/TARGET`) and random
//! mutations by `tests/ip.rs`, so CI exercises them without a fuzzing run. Each body pushes
//! arbitrary bytes, as one packet, into real router configurations of the header-parsing
//! elements; any panic is a bug, and so is a packet lost silently: on the paths where one
//! packet in makes one packet out (all but fragmentation, reassembly and ARP) the packet must
//! reach a Discard or be counted as a drop of an element on the way (in the router's `drops`
//! handler, which lists every element's drops). A fragmented packet must be accounted for at
//! least once.

use std::cell::RefCell;
use std::collections::HashMap;
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

/// The configurations: one injector per path; `$GCM` and `$CBC` are ESP key files.
const CONFIG: &str = "
    chk :: FuzzInject -> c :: CheckIPHeader(OFFSET 0) -> MarkIPHeader -> d :: DecIPTTL -> Discard;
    c[1] -> Discard; d[1] -> Discard;
    chk2 :: FuzzInject -> c2 :: CheckIPHeader2(CHECKSUM false) -> g2 :: IPGWOptions(198.18.0.1, 198.19.0.1)
        -> FixIPSrc(198.18.0.1) -> IPPrint(ACTIVE false) -> Discard;
    g2[1] -> e0 :: ICMPError(198.18.0.1, parameterproblem) -> Discard; e0[1] -> Discard;
    c2[1] -> Discard;
    gwo :: FuzzInject -> MarkIPHeader -> g :: IPGWOptions(198.18.0.1) -> Discard;
    g[1] -> eg :: ICMPError(198.18.0.1, parameterproblem) -> Discard; eg[1] -> Discard;
    err :: FuzzInject -> MarkIPHeader -> e1 :: ICMPError(198.18.0.1, timeexceeded) -> Discard;
    e1[1] -> e2 :: ICMPError(198.18.0.1, redirect, host) -> Discard; e2[1] -> Discard;
    err2 :: FuzzInject -> MarkIPHeader -> e3 :: ICMPError(198.18.0.1, unreachable, needfrag) -> Discard;
    e3[1] -> Discard;
    err3 :: FuzzInject -> MarkIPHeader -> pr :: ICMPPingResponder -> Discard; pr[1] -> Discard;
    arp :: FuzzInject -> [1]q :: ARPQuerier(198.18.0.1/24, 00:00:c0:ae:67:ef) -> Discard;
    q[1] -> Discard;
    arpip :: FuzzInject -> q;
    arpr :: FuzzInject -> h :: HostEtherFilter(00:00:c0:ae:67:ef) -> ar :: ARPResponder(198.18.0.1 198.19.0.0/16 00:00:c0:ae:67:ef) -> Discard;
    h[1] -> Discard; ar[1] -> Discard;
    frag :: FuzzInject -> MarkIPHeader -> f :: IPFragmenter(68, HONOR_DF false) -> fr :: IPReassembler -> Discard;
    f[1] -> Discard; fr[1] -> Discard;
    reasm :: FuzzInject -> MarkIPHeader -> ra :: IPReassembler(HIMEM 65536) -> Discard;
    ra[1] -> er :: ICMPError(198.18.0.1, timeexceeded, reassembly) -> Discard; er[1] -> Discard;
    frag2 :: FuzzInject -> MarkIPHeader -> f2 :: IPFragmenter(576) -> Discard;
    f2[1] -> ef :: ICMPError(198.18.0.1, unreachable, needfrag) -> Discard; ef[1] -> Discard;
    misc :: FuzzInject -> StripIPHeader -> Discard;
    misc2 :: FuzzInject -> SetIPDSCP(10) -> StoreIPAddress(dst) -> GetIPAddress(src)
        -> ce :: MarkIPCE(FORCE true) -> UDPIPEncap(198.18.0.1, 1234, DST_ANNO, 9)
        -> ICMPIPEncap(198.18.0.1, 198.18.0.2, echo) -> Discard; ce[1] -> Discard;
    l4 :: FuzzInject -> ct :: CheckTCPHeader -> SetTCPChecksum(true) -> Discard;
    ct[1] -> cu :: CheckUDPHeader -> su :: SetUDPChecksum -> Discard; su[1] -> Discard;
    cu[1] -> ci :: CheckICMPHeader -> Discard; ci[1] -> Discard;
    l4b :: FuzzInject -> SetTCPChecksum(true) -> su2 :: SetUDPChecksum -> ci2 :: CheckICMPHeader -> Discard;
    su2[1] -> Discard; ci2[1] -> Discard;
    esp :: FuzzInject -> MarkIPHeader
        -> dx :: ESPDecap(SA 0x1001 aes-gcm-128 $GCM, SA 0x1002 aes-cbc-128-hmac-sha1 $CBC) -> Discard;
    espgcm :: FuzzInject -> ESPEncap(0x1001, 198.18.0.1, 198.19.0.1, ALG aes-gcm-128, KEYFILE $GCM)
        -> ESPDecap(0x1001, ALG aes-gcm-128, KEYFILE $GCM) -> Discard;
    espcbc :: FuzzInject -> ESPEncap(0x1002, 198.18.0.1, DST_ANNO, ALG aes-cbc-128-hmac-sha1, KEYFILE $CBC)
        -> ESPDecap(0x1002, ALG aes-cbc-128-hmac-sha1, KEYFILE $CBC) -> Discard;
    nat0 :: FuzzInject -> MarkIPHeader -> rw :: IPRewriter(pattern 198.18.0.1 1024-65535 - - 0 1, drop);
    nat1 :: FuzzInject -> MarkIPHeader -> [1]rw; rw[0] -> Discard; rw[1] -> Discard;
    tcp0 :: FuzzInject -> MarkIPHeader -> FTPPortMapper(trw, trw, 0)
        -> trw :: TCPRewriter(pattern 198.18.0.1 1024-65535 - - 0 1, drop);
    tcp1 :: FuzzInject -> MarkIPHeader -> [1]trw; trw[0] -> Discard; trw[1] -> Discard;
    udp0 :: FuzzInject -> MarkIPHeader -> urw :: UDPRewriter(pattern 198.18.0.1 1024-65535 - - 0 1, pass 1);
    udp1 :: FuzzInject -> MarkIPHeader -> [1]urw; urw[0] -> Discard; urw[1] -> Discard;
    ping0 :: FuzzInject -> MarkIPHeader -> ipr :: ICMPPingRewriter(pattern 198.18.0.1 - 0-65535 0 1, drop);
    ping1 :: FuzzInject -> MarkIPHeader -> [1]ipr; ipr[0] -> Discard; ipr[1] -> Discard;
    icmperr :: FuzzInject -> MarkIPHeader -> ICMPRewriter(rw ipr) -> Discard;
    addr0 :: FuzzInject -> MarkIPHeader -> ar0 :: IPAddrRewriter(pattern 198.18.0.0/24 - 0 1, drop);
    addr1 :: FuzzInject -> MarkIPHeader -> [1]ar0; ar0[0] -> Discard; ar0[1] -> Discard;
    ip6 :: FuzzInject -> c6 :: CheckIP6Header -> GetIP6Address(24) -> h6 :: DecIP6HLIM
        -> l6 :: CheckLength(1280) -> rt6 :: LookupIP6Route(2001:db8::/32 0, ::/0 2001:db8::1 1)
        -> Discard;
    rt6[1] -> Discard; c6[1] -> Discard;
    h6[1] -> eh6 :: ICMP6Error(2001:db8::1, timeexceeded) -> Discard; eh6[1] -> Discard;
    l6[1] -> el6 :: ICMP6Error(2001:db8::1, packettoobig, MTU 1280) -> Discard; el6[1] -> Discard;
    ip6b :: FuzzInject -> MarkIP6Header -> IP6Mirror -> SetIP6DSCP(10) -> SetIP6Address(2001:db8::9)
        -> pr6 :: ICMP6PingResponder -> IP6Encap(41, 2001:db8::1, 2001:db8::2) -> Discard;
    pr6[1] -> Discard;
    ip6err :: FuzzInject -> MarkIP6Header -> e61 :: ICMP6Error(2001:db8::1, unreachable, 3) -> Discard;
    e61[1] -> e62 :: ICMP6Error(2001:db8::1, parameterproblem, 0) -> Discard; e62[1] -> Discard;
    ip6frag :: FuzzInject -> MarkIP6Header -> f6 :: IP6Fragmenter(1280) -> Discard; f6[1] -> Discard;
    ip6frag2 :: FuzzInject -> MarkIP6Header -> f62 :: IP6Fragmenter(56) -> Discard; f62[1] -> Discard;
    nda :: FuzzInject -> a6 :: IP6NDAdvertiser(2001:db8::1/128 fe80::1/128 00:00:c0:ae:67:ef) -> Discard;
    a6[1] -> Discard;
    nds0 :: FuzzInject -> MarkIP6Header -> s6 :: IP6NDSolicitor(2001:db8::1, 00:00:c0:ae:67:ef) -> Discard;
    nds1 :: FuzzInject -> [1]s6;
";

/// The ESP key files of the configuration, written once per process.
fn key_files() -> (String, String) {
    let dir = std::env::temp_dir().join(format!("sluice-fuzz-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary directory");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("key file");
        p.to_string_lossy().into_owned()
    };
    (
        write("gcm.keys", "aead 0x000102030405060708090a0b0c0d0e0f10111213\n"),
        write(
            "cbc.keys",
            "enc 0x000102030405060708090a0b0c0d0e0f\nauth 0x000102030405060708090a0b0c0d0e0f10111213\n",
        ),
    )
}

/// What accounts for the packets of one injector: the `count` handlers of the Discards its
/// packets reach, and the other elements they reach (whose drops count).
#[derive(Default)]
struct Account {
    counts: Vec<String>,
    elements: Vec<usize>,
}

/// The router and, per injector, what accounts for its packets.
struct Fuzz {
    router: Router,
    accounts: HashMap<String, Account>,
}

thread_local! {
    static FUZZ: RefCell<Option<Fuzz>> = const { RefCell::new(None) };
}

fn with_router(f: impl FnOnce(&mut Fuzz)) {
    FUZZ.with(|r| {
        let mut r = r.borrow_mut();
        let fz = r.get_or_insert_with(|| {
            let (gcm, cbc) = key_files();
            let conf = CONFIG.replace("$GCM", &gcm).replace("$CBC", &cbc);
            let flat =
                sluice_lang::parse_config(&conf, "fuzz.click", &[]).expect("fuzz config parses");
            let mut lib: Library = crate::library();
            lib.add(&[INJECT]);
            let router = Router::new(
                flat,
                &lib,
                RouterOptions {
                    simtime: true,
                    ..Default::default()
                },
            )
            .unwrap_or_else(|e| panic!("fuzz config: {}", e.join("\n")));
            let accounts = (0..router.nelements())
                .filter(|&e| router.flat_config().elements[e].class == INJECT.name)
                .map(|e| (router.element_name(e).to_string(), account(&router, e)))
                .collect();
            Fuzz { router, accounts }
        });
        f(fz);
    });
}

/// How the packets of one injection must be accounted for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Exactly once: one packet out of a Discard, or one counted drop.
    Once,
    /// At least once (fragmentation makes several).
    AtLeastOnce,
    /// Not checked: the path may hold the packet (reassembly, ARP resolution).
    Held,
}

/// What accounts for the packets on the paths from element `from`.
fn account(r: &Router, from: usize) -> Account {
    let flat = r.flat_config();
    let mut seen = vec![false; r.nelements()];
    let mut todo = vec![from];
    let mut a = Account::default();
    while let Some(e) = todo.pop() {
        if std::mem::replace(&mut seen[e], true) {
            continue;
        }
        todo.extend(
            flat.connections
                .iter()
                .filter(|c| c.from == e)
                .map(|c| c.to),
        );
        if flat.elements[e].class == "Discard" {
            a.counts.push(format!("{}.count", r.element_name(e)));
        } else {
            a.elements.push(e);
        }
    }
    a
}

/// Packets that reached the Discards of `a` or were dropped by its elements, so far.
fn accounted(r: &mut Router, a: &Account) -> u64 {
    let num = |v: &str, what: &str| {
        v.trim()
            .parse::<u64>()
            .unwrap_or_else(|e| panic!("{what}: {v:?}: {e}"))
    };
    let mut n = 0;
    for h in &a.counts {
        n += num(&r.read_path(h).unwrap_or_else(|e| panic!("{h}: {e}")), h);
    }
    for &e in &a.elements {
        n += r
            .element_drops(e)
            .unwrap_or_else(|err| panic!("drops of {}: {err}", r.element_name(e)));
    }
    n
}

fn inject(fz: &mut Fuzz, name: &str, data: &[u8], tweak: u8, expect: Expect) {
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
    let r = &mut fz.router;
    let account = &fz.accounts[name];
    let e = r.element_index(name).expect("injector");
    let before = accounted(r, account);
    r.with_element(e, |_, cx| cx.push_one(0, p));
    let n = accounted(r, account) - before;
    match expect {
        Expect::Once => assert_eq!(n, 1, "{name}: {n} packets accounted for, not 1"),
        Expect::AtLeastOnce => assert!(n >= 1, "{name}: packet not accounted for"),
        Expect::Held => {}
    }
}

fn tweak(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |a, b| a.wrapping_add(*b))
}

/// CheckIPHeader / CheckIPHeader2 and what follows them; the TCP, UDP and ICMP header
/// checks and checksum setters.
pub fn check_ip_header(data: &[u8]) {
    with_router(|r| {
        inject(r, "chk", data, tweak(data), Expect::Once);
        inject(r, "chk2", data, tweak(data), Expect::Once);
        inject(r, "misc", data, tweak(data), Expect::Once);
        inject(r, "misc2", data, tweak(data), Expect::Once);
        inject(r, "l4", data, tweak(data), Expect::Once);
        inject(r, "l4b", data, tweak(data), Expect::Once);
    });
}

/// IPGWOptions on unchecked packets.
pub fn ip_gw_options(data: &[u8]) {
    with_router(|r| inject(r, "gwo", data, tweak(data), Expect::Once));
}

/// ICMPError (time exceeded, redirect, needfrag) and ICMPPingResponder.
pub fn icmp_error(data: &[u8]) {
    with_router(|r| {
        inject(r, "err", data, tweak(data), Expect::Once);
        inject(r, "err2", data, tweak(data), Expect::Once);
        inject(r, "err3", data, tweak(data), Expect::Once);
    });
}

/// ARPQuerier input 1 (and input 0), ARPResponder, HostEtherFilter.
pub fn arp(data: &[u8]) {
    with_router(|r| {
        inject(r, "arp", data, tweak(data), Expect::Held);
        inject(r, "arpip", data, tweak(data), Expect::Held);
        inject(r, "arpr", data, tweak(data), Expect::Once);
        // Keep the querier's table small across a long run.
        let _ = r.router.write_path("q.clear", "");
    });
}

/// IPFragmenter with a tiny and a normal MTU (the tiny one followed by IPReassembler), and
/// IPReassembler on arbitrary fragments.
pub fn ip_fragmenter(data: &[u8]) {
    with_router(|r| {
        inject(r, "frag", data, tweak(data), Expect::Held);
        inject(r, "frag2", data, tweak(data), Expect::AtLeastOnce);
        inject(r, "reasm", data, tweak(data), Expect::Held);
    });
}

/// ESPDecap on arbitrary packets (found SAs of both suites, any SPI), and both suites' ESPEncap
/// then ESPDecap on arbitrary inner packets.
pub fn esp_decap(data: &[u8]) {
    with_router(|r| {
        inject(r, "esp", data, tweak(data), Expect::Once);
        inject(r, "espgcm", data, tweak(data), Expect::Once);
        inject(r, "espcbc", data, tweak(data), Expect::Once);
    });
}

/// The rewriters' packet parsing: IPRewriter, TCPRewriter behind FTPPortMapper, UDPRewriter,
/// ICMPPingRewriter, IPAddrRewriter on both inputs, and ICMPRewriter on their mappings.
pub fn nat_rewriters(data: &[u8]) {
    with_router(|r| {
        for name in [
            "nat0", "nat1", "tcp0", "tcp1", "udp0", "udp1", "ping0", "ping1", "icmperr", "addr0",
            "addr1",
        ] {
            inject(r, name, data, tweak(data), Expect::Once);
        }
    });
}

/// The IPv6 header elements: CheckIP6Header, DecIP6HLIM, CheckLength and LookupIP6Route
/// with the ICMP6Errors behind them; IP6Mirror, SetIP6DSCP, ICMP6PingResponder, IP6Encap;
/// ICMP6Error of other types; IP6Fragmenter with the minimum and with a tiny MTU.
pub fn ip6_headers(data: &[u8]) {
    with_router(|r| {
        inject(r, "ip6", data, tweak(data), Expect::Once);
        inject(r, "ip6b", data, tweak(data), Expect::Once);
        inject(r, "ip6err", data, tweak(data), Expect::Once);
        inject(r, "ip6frag", data, tweak(data), Expect::AtLeastOnce);
        inject(r, "ip6frag2", data, tweak(data), Expect::AtLeastOnce);
    });
}

/// Neighbour discovery: IP6NDAdvertiser on arbitrary frames, IP6NDSolicitor on arbitrary
/// advertisements (input 1, which consumes valid ones, as ARPQuerier does replies) and packets
/// (input 0, which may wait for resolution).
pub fn ip6_nd(data: &[u8]) {
    with_router(|r| {
        inject(r, "nda", data, tweak(data), Expect::Once);
        inject(r, "nds1", data, tweak(data), Expect::Held);
        inject(r, "nds0", data, tweak(data), Expect::Held);
        // Keep the solicitor's table small across a long run.
        let _ = r.router.write_path("s6.clear", "");
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
    ("esp_decap", esp_decap),
    ("nat_rewriters", nat_rewriters),
    ("ip6_headers", ip6_headers),
    ("ip6_nd", ip6_nd),
];
