//! Classifier, IPClassifier, IPFilter and the IPv4 route lookup elements: crafted packets
//! through real configurations, and lookup structures checked against a linear reference on
//! random tables (with adds and removes) and on the real Internet table in
//! ../shared/data/ipv4-prefixes.txt.gz (derived from RouteViews, the RIRs via NRO, and
//! DB-IP, CC BY 4.0).

use std::collections::HashMap;

use sluice_core::Router;
use sluice_elements::classify::{classifier, ip_classifier, ip_filter, ipexpr};
use sluice_elements::lookup::dir24::Dir24;
use sluice_elements::lookup::radix::Radix;
use sluice_elements::lookup::range::Ranges;
use sluice_elements::lookup::table::{mask_of, Linear, Lpm, Route, RouteTable};
use sluice_testkit::{config_error, fuzz_seeds, num, router};

// ---------------------------------------------------------------- packet building

fn ipv4(
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    tos: u8,
    frag: u16,
    opts: &[u8],
    l4: &[u8],
) -> Vec<u8> {
    assert!(opts.len().is_multiple_of(4));
    let hl = 20 + opts.len();
    let total = hl + l4.len();
    let mut p = vec![0x40 | (hl / 4) as u8, tos];
    p.extend_from_slice(&(total as u16).to_be_bytes());
    p.extend_from_slice(&[0x12, 0x34]);
    p.extend_from_slice(&frag.to_be_bytes());
    p.extend_from_slice(&[64, proto, 0, 0]);
    p.extend_from_slice(&src);
    p.extend_from_slice(&dst);
    p.extend_from_slice(opts);
    p.extend_from_slice(l4);
    p
}

fn tcp(sport: u16, dport: u16, flags: u8) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0x20, 0x00, 0, 0, 0, 0]);
    t
}

fn udp(sport: u16, dport: u16) -> Vec<u8> {
    let mut t = Vec::new();
    t.extend_from_slice(&sport.to_be_bytes());
    t.extend_from_slice(&dport.to_be_bytes());
    t.extend_from_slice(&[0, 12, 0, 0, b'h', b'i', b'!', b'!']);
    t
}

fn icmp(ty: u8) -> Vec<u8> {
    vec![ty, 0, 0, 0, 0, 1, 0, 1]
}

fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0xff; 6];
    f.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

fn arp(op: u16) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4];
    a.extend_from_slice(&op.to_be_bytes());
    a.extend_from_slice(&[0; 20]);
    eth(0x0806, &a)
}

const A: [u8; 4] = [10, 0, 0, 1];
const B: [u8; 4] = [192, 168, 1, 7];

// ---------------------------------------------------------------- running configurations

fn hex(p: &[u8]) -> String {
    p.iter().map(|b| format!("{:02x}", b)).collect()
}

/// Sends `pkt` (after `pre`, e.g. `MarkIPHeader(14) ->`) through `elem` with `nout` outputs;
/// returns the output it left on, or None if it was dropped (and counted in `c.drops`).
fn route_of(pre: &str, elem: &str, nout: usize, pkt: &[u8]) -> Option<usize> {
    let mut conf = format!(
        "InfiniteSource(DATA \"\\<{}>\", LIMIT 1, STOP true) -> {} c :: {};\n",
        hex(pkt),
        pre,
        elem
    );
    for i in 0..nout {
        conf += &format!("c[{i}] -> k{i} :: Counter -> Discard;\n");
    }
    let mut r = router(&conf);
    r.run_until_idle();
    let mut got = None;
    for i in 0..nout {
        if num(&mut r, &format!("k{i}.count")) == 1 {
            assert!(got.is_none());
            got = Some(i);
        }
    }
    let drops = num(&mut r, "c.drops");
    assert_eq!(drops, got.is_none() as u64, "{}", conf);
    got
}

fn ipc(patterns: &[&str], pkt: &[u8]) -> Option<usize> {
    route_of(
        "",
        &format!("IPClassifier({})", patterns.join(", ")),
        patterns.len(),
        pkt,
    )
}

// ---------------------------------------------------------------- Classifier

#[test]
fn classifier_ethernet_types() {
    let pats = "12/0806 20/0001, 12/0806 20/0002, 12/0800, -";
    let ip = eth(0x0800, &ipv4(6, A, B, 0, 0, &[], &tcp(1, 80, 2)));
    assert_eq!(
        route_of("", &format!("Classifier({pats})"), 4, &arp(1)),
        Some(0)
    );
    assert_eq!(
        route_of("", &format!("Classifier({pats})"), 4, &arp(2)),
        Some(1)
    );
    assert_eq!(
        route_of("", &format!("Classifier({pats})"), 4, &ip),
        Some(2)
    );
    assert_eq!(
        route_of("", &format!("Classifier({pats})"), 4, &arp(3)),
        Some(3)
    );
    assert_eq!(
        route_of("", &format!("Classifier({pats})"), 4, &[1, 2]),
        Some(3)
    );
    // No catch-all: unmatched packets are dropped and counted.
    assert_eq!(
        route_of("", "Classifier(12/0800, 12/86dd)", 2, &arp(1)),
        None
    );
    assert_eq!(
        route_of("", "Classifier(12/0800, 12/86dd)", 2, &[0; 5]),
        None
    );
}

#[test]
fn classifier_masks_wildcards_negation() {
    let p = eth(0x0800, &ipv4(17, A, B, 0xb8, 0, &[], &udp(53, 5353)));
    // IP version nibble with '?', TOS under a mask, negated clause.
    assert_eq!(route_of("", "Classifier(14/4?, -)", 2, &p), Some(0));
    assert_eq!(route_of("", "Classifier(14/5?, -)", 2, &p), Some(1));
    assert_eq!(route_of("", "Classifier(15/a0%e0, -)", 2, &p), Some(0));
    assert_eq!(route_of("", "Classifier(15/a0%f0, -)", 2, &p), Some(1));
    assert_eq!(
        route_of("", "Classifier(12/0800 !23/06, -)", 2, &p),
        Some(0)
    );
    assert_eq!(
        route_of("", "Classifier(12/0800 !23/11, -)", 2, &p),
        Some(1)
    );
    // A long value spanning several words, and one past the end of the packet.
    assert_eq!(
        route_of("", "Classifier(26/0a000001c0a80107, -)", 2, &p),
        Some(0)
    );
    assert_eq!(
        route_of("", "Classifier(26/0a000001c0a80108, -)", 2, &p),
        Some(1)
    );
    assert_eq!(route_of("", "Classifier(2000/00, -)", 2, &p), Some(1));
    assert_eq!(route_of("", "Classifier(!2000/00, -)", 2, &p), Some(0));
}

#[test]
fn classifier_errors() {
    let e = config_error(
        "c :: Classifier(12/080, -); InfiniteSource -> c; c[0] -> Discard; c[1] -> Discard",
    );
    assert!(e.contains("12/080"), "{}", e);
    let e = config_error("InfiniteSource -> Classifier(12/0800, -) -> Discard");
    assert!(e.contains("one per output"), "{}", e);
    assert!(classifier::compile(&["12/08%0g".into()]).is_err());
    // An offset near usize::MAX is too large, not an overflow (found by fuzzing).
    let e = classifier::compile(&["18446744073709551615/ff".into()]).unwrap_err();
    assert!(e.contains("offset too large"), "{}", e);
}

// ---------------------------------------------------------------- IPClassifier

#[test]
fn ipclassifier_hosts_nets_protocols() {
    let t = ipv4(6, A, B, 0, 0, &[], &tcp(1234, 80, 0x02));
    let u = ipv4(17, A, B, 0, 0, &[], &udp(53, 9999));
    let i = ipv4(1, B, A, 0, 0, &[], &icmp(8));
    assert_eq!(ipc(&["src host 10.0.0.1", "-"], &t), Some(0));
    assert_eq!(ipc(&["dst host 10.0.0.1", "-"], &t), Some(1));
    assert_eq!(ipc(&["host 10.0.0.1", "-"], &i), Some(0));
    assert_eq!(ipc(&["src and dst host 10.0.0.1", "-"], &i), Some(1));
    assert_eq!(ipc(&["ip src net 10.0.0.0/8", "-"], &t), Some(0));
    assert_eq!(
        ipc(&["dst net 192.168.0.0 mask 255.255.0.0", "-"], &t),
        Some(0)
    );
    assert_eq!(ipc(&["dst net 192.168.2.0/24", "-"], &t), Some(1));
    assert_eq!(ipc(&["192.168.1/24", "-"], &t), Some(0));
    assert_eq!(ipc(&["10.0.0.1", "-"], &u), Some(0));
    assert_eq!(ipc(&["ip proto udp", "tcp", "icmp"], &u), Some(0));
    assert_eq!(ipc(&["ip proto udp", "tcp", "icmp"], &t), Some(1));
    assert_eq!(ipc(&["ip proto udp", "tcp", "icmp"], &i), Some(2));
    assert_eq!(ipc(&["ip proto 17", "-"], &u), Some(0));
    assert_eq!(ipc(&["src host != 10.0.0.1", "-"], &t), Some(1));
    assert_eq!(ipc(&["true", "-"], &t), Some(0));
    assert_eq!(ipc(&["false", "all"], &t), Some(1));
    assert_eq!(ipc(&["ip vers 4 and ip hl 5", "-"], &t), Some(0));
}

#[test]
fn ipclassifier_ports_icmp_tcp_flags() {
    let t = ipv4(6, A, B, 0, 0, &[], &tcp(1234, 80, 0x12));
    let u = ipv4(17, A, B, 0, 0, &[], &udp(53, 9999));
    let e = ipv4(1, A, B, 0, 0, &[], &icmp(8));
    let r = ipv4(1, A, B, 0, 0, &[], &icmp(0));
    assert_eq!(ipc(&["tcp dst port 80", "-"], &t), Some(0));
    assert_eq!(ipc(&["dst port www", "-"], &t), Some(0));
    assert_eq!(ipc(&["port http", "-"], &t), Some(0));
    assert_eq!(ipc(&["www", "-"], &t), Some(0));
    assert_eq!(ipc(&["udp port 80", "-"], &t), Some(1));
    assert_eq!(ipc(&["src port 53", "-"], &u), Some(0));
    assert_eq!(ipc(&["src udp port 1 or 53", "-"], &u), Some(0));
    assert_eq!(ipc(&["src port 1 or 2", "-"], &u), Some(1));
    assert_eq!(ipc(&["dst port > 1023", "-"], &u), Some(0));
    assert_eq!(ipc(&["dst port < 1023", "-"], &u), Some(1));
    assert_eq!(
        ipc(&["dst port >= 9999 && dst port <= 9999", "-"], &u),
        Some(0)
    );
    // 'port != N' needs TCP/UDP; 'not port N' does not.
    assert_eq!(ipc(&["src tcp port != 5", "-"], &u), Some(1));
    assert_eq!(ipc(&["not src tcp port 5", "-"], &u), Some(0));
    assert_eq!(
        ipc(&["icmp type echo", "icmp type echo-reply", "-"], &e),
        Some(0)
    );
    assert_eq!(
        ipc(&["icmp type echo", "icmp type echo-reply", "-"], &r),
        Some(1)
    );
    // A type name after `icmp`, or alone (Click's conf/test-ping.click).
    assert_eq!(ipc(&["icmp echo-reply", "-"], &r), Some(0));
    assert_eq!(ipc(&["icmp echo-reply", "-"], &e), Some(1));
    assert_eq!(ipc(&["icmp echo", "-"], &e), Some(0));
    assert_eq!(ipc(&["timeexceeded or echo-reply", "-"], &r), Some(0));
    assert_eq!(ipc(&["echo-reply", "-"], &u), Some(1));
    assert_eq!(ipc(&["icmp type 8", "-"], &t), Some(1));
    assert_eq!(ipc(&["tcp opt syn", "-"], &t), Some(0));
    assert_eq!(ipc(&["syn and ack", "-"], &t), Some(0));
    assert_eq!(ipc(&["tcp opt fin", "-"], &t), Some(1));
    assert_eq!(ipc(&["rst", "-"], &t), Some(1));
    assert_eq!(ipc(&["tcp win 8192", "-"], &t), Some(0));
    // `tcpudp`: either protocol (Click's test/ip/IPFilter-04 pattern).
    let pat = "(proto tcp and !(syn and !ack)) or (tcpudp port >= 1024)";
    let syn = ipv4(6, A, B, 0, 0, &[], &tcp(80, 80, 0x02));
    assert_eq!(ipc(&[pat, "-"], &t), Some(0), "SYN-ACK");
    assert_eq!(ipc(&[pat, "-"], &syn), Some(1), "bare SYN on low ports");
    assert_eq!(
        ipc(&[pat, "-"], &ipv4(6, A, B, 0, 0, &[], &tcp(80, 8080, 2))),
        Some(0)
    );
    assert_eq!(ipc(&[pat, "-"], &u), Some(0), "UDP to port 9999");
    assert_eq!(
        ipc(&[pat, "-"], &ipv4(17, A, B, 0, 0, &[], &udp(53, 53))),
        Some(1)
    );
    assert_eq!(ipc(&[pat, "-"], &e), Some(1), "ICMP has no ports");
    assert!(config_error("Idle -> IPClassifier(tcpudp ttl 3) -> Discard").contains("tcpudp"));
}

#[test]
fn ipclassifier_options_fragments_tos() {
    // Four bytes of IP options move the transport header.
    let t = ipv4(6, A, B, 0, 0, &[1, 1, 1, 0], &tcp(1234, 80, 0x02));
    assert_eq!(ipc(&["dst port 80 and syn", "-"], &t), Some(0));
    assert_eq!(ipc(&["ip hl 6", "-"], &t), Some(0));
    let mf = ipv4(17, A, B, 0, 0x2000, &[], &udp(53, 80));
    let later = ipv4(17, A, B, 0, 0x0010, &[], &udp(53, 80));
    let df = ipv4(17, A, B, 0, 0x4000, &[], &udp(53, 80));
    assert_eq!(ipc(&["ip frag", "ip unfrag"], &mf), Some(0));
    assert_eq!(ipc(&["ip frag", "ip unfrag"], &later), Some(0));
    assert_eq!(ipc(&["ip frag", "ip unfrag"], &df), Some(1));
    assert_eq!(ipc(&["unfrag", "-"], &df), Some(0));
    // Ports are only seen in first fragments.
    assert_eq!(ipc(&["dst port 80", "-"], &mf), Some(0));
    assert_eq!(ipc(&["dst port 80", "-"], &later), Some(1));
    let q = ipv4(6, A, B, 0xb9, 0, &[], &tcp(1, 2, 0));
    assert_eq!(ipc(&["ip tos 185", "-"], &q), Some(0));
    assert_eq!(ipc(&["ip dscp 46", "-"], &q), Some(0));
    assert_eq!(ipc(&["ip dscp 47", "-"], &q), Some(1));
    assert_eq!(ipc(&["ip ect", "-"], &q), Some(0));
    assert_eq!(ipc(&["ip ce", "-"], &q), Some(1));
    assert_eq!(ipc(&["ip ttl 64", "-"], &q), Some(0));
    assert_eq!(ipc(&["ip ttl > 64", "-"], &q), Some(1));
}

/// Ethernet addresses in the MAC header: `ether host`, or a bare address after `src`, `dst`
/// or `host` (Click's test/ip/IPFilter-06 patterns).
#[test]
fn ipfilter_matches_ethernet_addresses() {
    let frame = eth(0x0800, &ipv4(17, A, B, 0, 0, &[], &udp(1, 2)));
    let pre = "MarkMACHeader -> Strip(14) -> MarkIPHeader ->";
    let filter = |pats: &[&str]| {
        route_of(
            pre,
            &format!("IPClassifier({})", pats.join(", ")),
            pats.len(),
            &frame,
        )
    };
    assert_eq!(filter(&["src 2:0:0:0:0:1", "-"]), Some(0));
    assert_eq!(filter(&["dst 2:0:0:0:0:1", "-"]), Some(1));
    assert_eq!(filter(&["host ff:ff:ff:ff:ff:ff", "-"]), Some(0));
    assert_eq!(filter(&["ether host 02-00-00-00-00-01", "-"]), Some(0));
    assert_eq!(filter(&["src ether host 2:0:0:0:0:2", "-"]), Some(1));
    assert_eq!(
        filter(&["dst ff:ff:ff:ff:ff:ff and src host 10.0.0.1", "-"]),
        Some(0)
    );
    // Without a MAC header the test fails.
    let bare = ipv4(17, A, B, 0, 0, &[], &udp(1, 2));
    assert_eq!(
        route_of("", "IPClassifier(src 2:0:0:0:0:1, -)", 2, &bare),
        Some(1)
    );
    // Click's test/ip/IPFilter-06: an address mask, `=`, and a bare address repeating `src`.
    let ip = ipv4(17, A, B, 0, 0, &[], &udp(1, 2));
    let ipc_ip = |pats: &[&str]| {
        route_of(
            "",
            &format!("IPClassifier({})", pats.join(", ")),
            pats.len(),
            &ip,
        )
    };
    assert_eq!(ipc_ip(&["src 10.0.0.1 & 8.0.0.0 = 8.0.0.0", "-"]), Some(0));
    assert_eq!(ipc_ip(&["src & 255.0.0.0 = 10.0.0.0", "-"]), Some(0));
    assert_eq!(ipc_ip(&["src & 255.0.0.0 = 11.0.0.0", "-"]), Some(1));
    assert_eq!(ipc_ip(&["src host 1.1.1.1 or 192.168.1.7", "-"]), Some(1));
    assert_eq!(ipc_ip(&["dst host 1.1.1.1 or 192.168.1.7", "-"]), Some(0));
    let e = config_error("Idle -> IPClassifier(ether host > 2:0:0:0:0:1) -> Discard");
    assert!(e.contains("only compared whole"), "{e}");
}

#[test]
fn ipclassifier_connectives() {
    let t = ipv4(6, A, B, 0, 0, &[], &tcp(1234, 22, 0x02));
    let pats = [
        "(dst port www or dst port ssh) and tcp opt syn",
        "src net 10.0.0.0/8 && !(udp || icmp)",
        "-",
    ];
    assert_eq!(ipc(&pats, &t), Some(0));
    let t2 = ipv4(6, A, B, 0, 0, &[], &tcp(1234, 23, 0x02));
    assert_eq!(ipc(&pats, &t2), Some(1));
    assert_eq!(
        ipc(&["src host 10.0.0.1 tcp dst port 23", "-"], &t2),
        Some(0)
    );
    assert_eq!(ipc(&["tcp ? dst port 23 : false", "-"], &t2), Some(0));
    assert_eq!(ipc(&["not tcp or dst port 22", "-"], &t2), Some(1));
    assert_eq!(ipc(&["! tcp || dst port 23", "-"], &t2), Some(0));
    // A relation on a field the packet is too short to hold is false, even `!=`; negating
    // an equality with `!` makes it true (Click's test/ip/IPFilter-02 and -03).
    let short = &ipv4(6, A, B, 0, 0, &[], &tcp(1234, 23, 0x02))[..21];
    assert_eq!(ipc(&["transp[1]&128!=0", "-"], short), Some(1));
    assert_eq!(ipc(&["transp[1]&128==0", "-"], short), Some(1));
    assert_eq!(ipc(&["not (transp[1]&128==0)", "-"], short), Some(0));
    assert_eq!(ipc(&["transp[1] >= 0", "-"], short), Some(1));
    assert_eq!(ipc(&["transp[1]&128!=0", "-"], &t2), Some(0));
    assert_eq!(ipc(&["transp[0] <= 4", "-"], &t2), Some(0));
}

/// The `program` handler in Click's layout (test/ip/IPFilter-05 and -07).
#[test]
fn ipfilter_program_layout() {
    let prog = |c: &str| {
        let mut r = router(&format!("Idle -> c :: {c} -> Idle;"));
        r.read_path("c.program").unwrap()
    };
    assert_eq!(
        prog("IPFilter(allow tcp && dst 10.0.0.0/32, allow all)"),
        "all->[0]\nsafe length 0\nalignment offset 0\n"
    );
    assert_eq!(
        prog("IPFilter(allow false)"),
        "all->[X]\nsafe length 0\nalignment offset 0\n"
    );
    assert_eq!(
        prog("IPFilter(allow false, allow src 10.0.0.1)"),
        " 0 268/0a000001%ffffffff  yes->[0]  no->[X]\nsafe length 272\nalignment offset 0\n"
    );
}

#[test]
fn ipclassifier_uses_network_header_and_survives_junk() {
    // With MarkIPHeader(14) the IP header is found behind an Ethernet header.
    let f = eth(0x0800, &ipv4(6, A, B, 0, 0, &[], &tcp(1, 80, 0x02)));
    let pats = "IPClassifier(dst port 80, -)";
    assert_eq!(route_of("MarkIPHeader(14) ->", pats, 2, &f), Some(0));
    // Truncated and malformed packets: transport tests fail, nothing panics.
    let full = ipv4(6, A, B, 0, 0, &[], &tcp(1, 80, 0x02));
    for n in 0..full.len() {
        let got = ipc(&["dst port 80", "src host 10.0.0.1", "-"], &full[..n]);
        let want = if n >= 24 {
            0
        } else if n >= 16 {
            1
        } else {
            2
        };
        assert_eq!(got, Some(want), "length {}", n);
    }
    let mut bad = full.clone();
    bad[0] = 0x4f; // IHL 15: the transport header lies past the end
    assert_eq!(ipc(&["dst port 80", "-"], &bad), Some(1));
    assert_eq!(ipc(&["dst port 80"], &[]), None);
}

#[test]
fn ipclassifier_errors_name_the_word() {
    for (pat, word) in [
        ("src hots 10.0.0.1", "hots"),
        ("ip proto bogus", "bogus"),
        ("tcp port 70000", "70000"),
        ("(tcp", "')'"),
        ("icmp type nonsense", "nonsense"),
        ("ip dscp 64", "64"),
        ("src 10.0.0.1/33", "10.0.0.1/33"),
    ] {
        let e = ip_classifier::compile(&[pat.to_string()]).unwrap_err();
        assert!(e.contains(word), "{}: {}", pat, e);
    }
    let e = config_error(
        "c :: IPClassifier(tcp port zz, -); InfiniteSource -> c; c[0] -> Discard; c[1] -> Discard",
    );
    assert!(e.contains("zz"), "{}", e);
}

// ---------------------------------------------------------------- IPFilter

#[test]
fn ipfilter_actions() {
    let conf = "IPFilter(allow tcp dst port 80, 1 icmp type echo, drop udp, deny src host 10.0.0.1, 0 all)";
    let web = ipv4(6, A, B, 0, 0, &[], &tcp(1, 80, 2));
    let ping = ipv4(1, A, B, 0, 0, &[], &icmp(8));
    let dns = ipv4(17, A, B, 0, 0, &[], &udp(1, 53));
    let ssh_a = ipv4(6, A, B, 0, 0, &[], &tcp(1, 22, 2));
    let ssh_b = ipv4(6, B, A, 0, 0, &[], &tcp(1, 22, 2));
    assert_eq!(route_of("", conf, 2, &web), Some(0));
    assert_eq!(route_of("", conf, 2, &ping), Some(1));
    assert_eq!(route_of("", conf, 2, &dns), None);
    assert_eq!(route_of("", conf, 2, &ssh_a), None);
    assert_eq!(route_of("", conf, 2, &ssh_b), Some(0));
    // No rule matches: dropped.
    assert_eq!(route_of("", "IPFilter(allow udp)", 1, &web), None);
    let e = config_error("InfiniteSource -> IPFilter(allow tcp, 3 udp) -> Discard");
    assert!(e.contains("out of range"), "{}", e);
    let e = ip_filter::compile(&["permit tcp".into()], 1).unwrap_err();
    assert!(e.contains("permit"), "{}", e);
}

#[test]
fn compiled_program_shares_tests() {
    // Three rules on the same protocol: the protocol byte is tested once per path.
    let p = ip_classifier::compile(&[
        "tcp dst port 80".into(),
        "tcp dst port 443".into(),
        "tcp dst port 22".into(),
    ])
    .unwrap();
    let proto_tests = p
        .insns()
        .iter()
        .filter(|i| i.test.off == 9 && i.test.mask == 0xff00_0000)
        .count();
    assert_eq!(proto_tests, 1, "{}", p.unparse(0));
    assert!(ipexpr::parse("tcp and").is_err());
}

// ---------------------------------------------------------------- lookup elements

fn ip_to(dst: [u8; 4]) -> Vec<u8> {
    ipv4(17, A, dst, 0, 0, &[], &udp(1, 2))
}

#[test]
fn lookup_elements_route_and_drop() {
    for class in [
        "LinearIPLookup",
        "StaticIPLookup",
        "LookupIPRoute",
        "RadixIPLookup",
        "DirectIPLookup",
        "RangeIPLookup",
    ] {
        let e = format!(
            "{class}(18.26.4.24/32 0, 18.26.4/24 1, 18.26.0.0 255.255.0.0 18.26.4.1 2, 0/0 18.26.4.1 3)"
        );
        let e2 = format!("{class}(18.26.4/24 1, 10.0.0.0/8 0)");
        assert_eq!(
            route_of("", &e, 4, &ip_to([18, 26, 4, 24])),
            Some(0),
            "{class}"
        );
        assert_eq!(
            route_of("", &e, 4, &ip_to([18, 26, 4, 25])),
            Some(1),
            "{class}"
        );
        assert_eq!(
            route_of("", &e, 4, &ip_to([18, 26, 5, 1])),
            Some(2),
            "{class}"
        );
        assert_eq!(
            route_of("", &e, 4, &ip_to([1, 2, 3, 4])),
            Some(3),
            "{class}"
        );
        assert_eq!(route_of("", &e2, 2, &ip_to([1, 2, 3, 4])), None, "{class}");
        let err = config_error(&format!("InfiniteSource -> {class}(0/0 2) -> Discard"));
        assert!(err.contains("out of range"), "{}", err);
    }
}

#[test]
fn lookup_handlers() {
    for class in [
        "LinearIPLookup",
        "RadixIPLookup",
        "DirectIPLookup",
        "RangeIPLookup",
    ] {
        let mut r = router(&format!(
            "InfiniteSource(LIMIT 0) -> rt :: {class}(18.26.4/24 1, 0/0 18.26.4.1 0); rt[0] -> Discard; rt[1] -> Discard"
        ));
        // Click's listing: in the order added, the default route first in DirectIPLookup
        // and RangeIPLookup; columns padded with tabs.
        let want = if matches!(class, "DirectIPLookup" | "RangeIPLookup") {
            "0.0.0.0/0\t\t18.26.4.1\t0\n18.26.4.0/24\t\t-\t\t1\n"
        } else {
            "18.26.4.0/24\t\t-\t\t1\n0.0.0.0/0\t\t18.26.4.1\t0\n"
        };
        assert_eq!(r.read_path("rt.table").unwrap(), want, "{class}");
        assert_eq!(r.read_path("rt.size").unwrap(), "2\n", "{class}");
        let look = |r: &mut Router, a: &str| {
            r.read_path_param("rt.lookup", Some(a))
                .unwrap()
                .trim()
                .to_string()
        };
        assert_eq!(look(&mut r, "18.26.4.9"), "1");
        let no_addr = r.read_path("rt.lookup").unwrap_err().to_string();
        assert!(no_addr.contains("expected an IP address"), "{no_addr}");
        let no_param = r.read_path_param("rt.table", Some("x")).unwrap_err();
        assert!(
            no_param.to_string().contains("does not take parameters"),
            "{no_param}"
        );
        assert_eq!(look(&mut r, "8.8.8.8"), "0 18.26.4.1");
        r.write_path("rt.add", "18.26.4.128/25 10.0.0.2 1").unwrap();
        assert_eq!(look(&mut r, "18.26.4.200"), "1 10.0.0.2");
        assert!(
            r.write_path("rt.add", "18.26.4.128/25 0").is_err(),
            "{class}"
        );
        r.write_path("rt.set", "18.26.4.128/25 0").unwrap();
        assert_eq!(look(&mut r, "18.26.4.200"), "0");
        r.write_path("rt.remove", "18.26.4.128/25").unwrap();
        assert_eq!(look(&mut r, "18.26.4.200"), "1");
        assert!(r.write_path("rt.remove", "18.26.4.128/25").is_err());
        // `ctrl` is all or none: the failing removal undoes the addition before it.
        assert!(r
            .write_path("rt.ctrl", "add 18.26.5.0/24 1\nremove 18.26.99.0/24")
            .is_err());
        assert_eq!(
            look(&mut r, "18.26.5.1"),
            "0 18.26.4.1",
            "{class}: rolled back"
        );
        assert!(
            r.write_path("rt.add", "1.0.0.0/8 7").is_err(),
            "port out of range"
        );
        r.write_path("rt.remove", "0/0").unwrap();
        assert_eq!(look(&mut r, "8.8.8.8"), "-1");
        r.write_path("rt.flush", "").unwrap();
        assert_eq!(r.read_path("rt.table").unwrap().trim(), "");
        assert_eq!(look(&mut r, "18.26.4.9"), "-1");
    }
    let mut r = router("InfiniteSource(LIMIT 0) -> rt :: StaticIPLookup(0/0 0) -> Discard");
    assert!(r.write_path("rt.add", "1.0.0.0/8 0").is_err());
}

// ---------------------------------------------------------------- lookup structures

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Exact longest-prefix match by probing every length (the reference for large tables).
struct Reference(HashMap<(u32, u8), (u32, u32)>);

impl Reference {
    fn lookup(&self, a: u32) -> Option<(u32, u32)> {
        (0..=32u8)
            .rev()
            .find_map(|l| self.0.get(&(a & mask_of(l), l)).copied())
    }
}

fn check_same<T: Lpm<Addr = u32>>(
    t: &RouteTable<T>,
    lin: &RouteTable<Linear>,
    addrs: &[u32],
    what: &str,
) {
    for &a in addrs {
        assert_eq!(t.lookup(a), lin.lookup(a), "{what}: address {:08x}", a);
    }
    // Runs of one address too (a flow's burst, which Linear looks up once).
    let addrs: Vec<u32> = addrs.iter().flat_map(|&a| [a, a, a]).collect();
    let mut batch = vec![0u32; addrs.len()];
    t.lpm.lookup_batch(&addrs, &mut batch);
    for (a, nh) in addrs.iter().zip(batch) {
        assert_eq!(
            t.nexthops.get(nh as usize).copied(),
            lin.lookup(*a),
            "{what} batch"
        );
    }
}

fn random_ops<T: Lpm<Addr = u32> + Default>(seed: u64, what: &str) {
    let mut rng = XorShift(seed);
    let mut t: RouteTable<T> = RouteTable::default();
    let mut lin: RouteTable<Linear> = RouteTable::default();
    let mut live: Vec<(u32, u8)> = Vec::new();
    // Few top bits so that prefixes overlap a lot.
    let bases: Vec<u32> = (0..4).map(|_| rng.next() as u32 & 0xffff_0000).collect();
    let pick_addr = |rng: &mut XorShift, live: &[(u32, u8)]| -> u32 {
        match rng.below(3) {
            0 if !live.is_empty() => {
                let (a, l) = live[rng.below(live.len() as u64) as usize];
                a | (rng.next() as u32 & !mask_of(l))
            }
            1 => bases[rng.below(4) as usize] | (rng.next() as u32 & 0xffff),
            _ => rng.next() as u32,
        }
    };
    for step in 0..3000 {
        if rng.below(4) != 0 || live.is_empty() {
            let len = match rng.below(10) {
                0 => rng.below(9) as u8,
                1..=3 => 9 + rng.below(15) as u8,
                4..=6 => 24,
                _ => 25 + rng.below(8) as u8,
            };
            let a = pick_addr(&mut rng, &live) & mask_of(len);
            let r = Route {
                addr: a,
                len,
                gw: if rng.below(2) == 0 {
                    0
                } else {
                    rng.next() as u32 | 1
                },
                port: rng.below(8) as u32,
            };
            let replace = rng.below(2) == 0;
            let x = t.add(r, replace);
            let y = lin.add(r, replace);
            assert_eq!(x.is_ok(), y.is_ok());
            if x.is_ok() && !live.contains(&(a, len)) {
                live.push((a, len));
            }
        } else {
            let (a, l) = live.swap_remove(rng.below(live.len() as u64) as usize);
            assert!(t.remove(a, l).is_some());
            assert!(lin.remove(a, l).is_some());
        }
        if step % 100 == 99 {
            let addrs: Vec<u32> = (0..500).map(|_| pick_addr(&mut rng, &live)).collect();
            check_same(&t, &lin, &addrs, what);
        }
    }
    // Remove everything: every lookup misses.
    for (a, l) in live {
        t.remove(a, l);
    }
    for _ in 0..1000 {
        assert_eq!(t.lookup(rng.next() as u32), None, "{what} empty");
    }
}

#[test]
fn radix_agrees_with_linear_on_random_updates() {
    for seed in [1, 2, 3, 0xdead_beef] {
        random_ops::<Radix>(seed, "radix");
    }
}

#[test]
fn dir24_agrees_with_linear_on_random_updates() {
    for seed in [5, 6, 0x1234_5678] {
        random_ops::<Dir24>(seed, "dir24");
    }
}

/// The shared routing table, `../shared/data/` beside the repository.
const TABLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/data/ipv4-prefixes.txt.gz"
);

fn load_real_table() -> Option<Vec<Route>> {
    let path = TABLE;
    let out = std::process::Command::new("gzip")
        .args(["-dc", path])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let mut v = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        v.push(Route::parse(line).expect("table line parses"));
    }
    Some(v)
}

#[test]
fn real_table_radix_and_dir24_agree_with_reference() {
    let routes = load_real_table()
        .unwrap_or_else(|| panic!("cannot read {} (gzip and ../shared/data are needed)", TABLE));
    assert!(routes.len() > 500_000);
    let mut reference = Reference(HashMap::new());
    let mut radix: RouteTable<Radix> = RouteTable::default();
    let mut dir: RouteTable<Dir24> = RouteTable::default();
    for r in &routes {
        reference.0.insert((r.addr, r.len), (r.gw, r.port));
        radix.add(*r, true).unwrap();
        dir.add(*r, true).unwrap();
    }
    let mut rng = XorShift(77);
    let check = |reference: &Reference,
                 radix: &RouteTable<Radix>,
                 dir: &RouteTable<Dir24>,
                 rng: &mut XorShift,
                 what: &str| {
        for i in 0..100_000 {
            let a = if i % 2 == 0 {
                rng.next() as u32
            } else {
                let r = routes[rng.below(routes.len() as u64) as usize];
                r.addr | (rng.next() as u32 & !mask_of(r.len))
            };
            let want = reference.lookup(a);
            assert_eq!(radix.lookup(a), want, "{what} radix {:08x}", a);
            assert_eq!(dir.lookup(a), want, "{what} dir24 {:08x}", a);
        }
    };
    check(&reference, &radix, &dir, &mut rng, "full");
    // Remove a tenth of the routes and check again.
    for (i, r) in routes.iter().enumerate() {
        if i % 10 == 3 {
            reference.0.remove(&(r.addr, r.len));
            radix.remove(r.addr, r.len).unwrap();
            dir.remove(r.addr, r.len).unwrap();
        }
    }
    check(&reference, &radix, &dir, &mut rng, "after removals");
}

#[test]
fn ranges_agree_with_linear_on_random_updates() {
    for seed in [7, 8, 0x0bad_cafe] {
        random_ops::<Ranges>(seed, "ranges");
    }
}

/// RangeIPLookup's structure holds the whole real table (well past the 262,144 ranges at
/// which Click's RangeIPLookup fails) and agrees with DIR-24-8, before and after removals.
#[test]
fn real_table_ranges_agree_with_dir24() {
    let routes = load_real_table()
        .unwrap_or_else(|| panic!("cannot read {} (gzip and ../shared/data are needed)", TABLE));
    let mut ranges: RouteTable<Ranges> = RouteTable::default();
    let mut dir: RouteTable<Dir24> = RouteTable::default();
    for r in &routes {
        ranges.add(*r, true).unwrap();
        dir.add(*r, true).unwrap();
    }
    let mut rng = XorShift(99);
    let mut check = |ranges: &RouteTable<Ranges>, dir: &RouteTable<Dir24>, what: &str| {
        for i in 0..100_000 {
            let a = if i % 2 == 0 {
                rng.next() as u32
            } else {
                let r = routes[rng.below(routes.len() as u64) as usize];
                r.addr | (rng.next() as u32 & !mask_of(r.len))
            };
            assert_eq!(ranges.lookup(a), dir.lookup(a), "{what} {:08x}", a);
        }
    };
    check(&ranges, &dir, "full");
    assert!(ranges.lpm.ranges() > 262_144, "{}", ranges.lpm.ranges());
    for (i, r) in routes.iter().enumerate() {
        if i % 10 == 3 {
            ranges.remove(r.addr, r.len).unwrap();
            dir.remove(r.addr, r.len).unwrap();
        }
    }
    check(&ranges, &dir, "after removals");
}

// ---------------------------------------------------------------- fuzz corpus

fn corpus(name: &str) -> Vec<Vec<u8>> {
    let v = fuzz_seeds(name);
    assert!(v.len() >= 5, "corpus {name} has too few seeds");
    v
}

/// Runs a fuzz body over its corpus and over cheap mutations of every seed.
fn run_corpus(name: &str, body: fn(&[u8])) {
    let mut rng = XorShift(42);
    for seed in corpus(name) {
        body(&seed);
        for n in 0..seed.len() {
            body(&seed[..n]);
        }
        for _ in 0..200 {
            let mut m = seed.clone();
            if m.is_empty() {
                m.push(0);
            }
            for _ in 0..1 + rng.below(4) {
                let i = rng.below(m.len() as u64) as usize;
                match rng.below(3) {
                    0 => m[i] = rng.next() as u8,
                    1 => m[i] = b" ()!&|,/%?-0123456789abcdef"[rng.below(27) as usize],
                    _ => {
                        m.remove(i);
                        if m.is_empty() {
                            m.push(b'(');
                        }
                    }
                }
            }
            body(&m);
        }
    }
}

#[test]
fn classifier_fuzz_corpus() {
    run_corpus("classifier", sluice_elements::classify::fuzzing::classifier);
}

#[test]
fn ipfilter_fuzz_corpus() {
    run_corpus("ipfilter", sluice_elements::classify::fuzzing::ipfilter);
}
