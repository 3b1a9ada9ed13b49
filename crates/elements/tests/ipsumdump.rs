//! Behaviour tests of FromIPSummaryDump and ToIPSummaryDump through real configurations; the
//! expected lines are Click's outputs for the same inputs (Click's test/analysis,
//! test/icmp, test/ip and test/standard tests).

mod ip_common;

use ip_common::*;
use sluice_testkit::{config_error, inject, read, router, taken, TempDir};

/// Runs `conf` (with `DIR` replaced by a fresh directory) to its end and returns the
/// non-header lines of the summary dump `out` written there.
fn run(name: &str, conf: &str, files: &[(&str, &str)]) -> Vec<String> {
    let d = TempDir::new(&format!("ipsd-{name}"));
    for (f, text) in files {
        std::fs::write(d.join(f), text).unwrap();
    }
    let mut r = router(&conf.replace("DIR", d.to_str().unwrap()));
    r.run_until_idle();
    drop(r);
    let text = std::fs::read_to_string(d.join("out")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('!'))
        .map(String::from)
        .collect()
}

#[test]
fn icmp_packets_from_data() {
    // test/analysis/FromIPSummaryDump-02
    let out = run(
        "icmp",
        r#"FromIPSummaryDump(STOP true, CHECKSUM true, DATA "!data src dst icmp_type
!proto I
18.26.4.44 10.0.0.4 echo
10.0.0.4 18.26.4.44 echo-reply")
    -> c :: CheckICMPHeader -> ToIPSummaryDump(DIR/out, FIELDS src dst icmp_type_name);
    c[1] -> bad :: TestCapture;"#,
        &[],
    );
    assert_eq!(
        out,
        ["18.26.4.44 10.0.0.4 echo", "10.0.0.4 18.26.4.44 echo-reply"]
    );
}

#[test]
fn icmp_error_source_route_through_dumps() {
    // test/icmp/ICMPError-sourceroute-01
    let out = run(
        "sr",
        "FromIPSummaryDump(DIR/in, STOP true, ZERO true)
            -> ICMPError(19.19.19.19, timeexceeded) -> CheckIPHeader -> CheckICMPHeader
            -> ToIPSummaryDump(DIR/out, FIELDS src dst proto payload_len ip_opt);",
        &[(
            "in",
            "!data src sport dst dport proto ip_opt ip_ttl\n\
             18.26.4.44 20 10.0.0.8 80 T ssrr{128.4.45.60,128.4.49.61,^1.2.3.4,5.6.7.8} 0\n",
        )],
    );
    assert_eq!(
        out,
        ["19.19.19.19 18.26.4.44 I 68 ssrr{^128.4.49.61,128.4.45.60}"]
    );
}

#[test]
fn ecn_marks_and_timestamps() {
    // test/ip/MarkIPCE-01
    let input = "!data timestamp src dst ip_ecn\n!proto 9\n1.00002 1.0.0.1 1.0.0.2 no\n\
                 1.00003 1.0.0.2 1.0.0.3 ect1\n1.00004 1.0.0.3 1.0.0.4 ect2\n1.00005 1.0.0.4 1.0.0.5 ce\n";
    let out = run(
        "ecn",
        "FromIPSummaryDump(DIR/in, STOP true, CHECKSUM true) -> CheckIPHeader -> MarkIPCE
            -> CheckIPHeader -> ToIPSummaryDump(DIR/out, FIELDS timestamp src dst ip_ecn)",
        &[("in", input)],
    );
    assert_eq!(
        out,
        [
            "1.000030 1.0.0.2 1.0.0.3 ce",
            "1.000040 1.0.0.3 1.0.0.4 ce",
            "1.000050 1.0.0.4 1.0.0.5 ce"
        ]
    );
}

#[test]
fn lengths_payloads_and_paint() {
    // test/standard/Pad-01, the paths without Truncate.
    let out = run(
        "pad",
        "FromIPSummaryDump(DIR/in, STOP true) -> t :: Tee(3) -> Paint(0)
            -> to :: ToIPSummaryDump(DIR/out, FIELDS paint ip_src ip_len ip_capture_len payload);
         t[1] -> Paint(1) -> Pad -> to; t[2] -> Paint(4) -> Pad(44) -> to;",
        &[(
            "in",
            "!IPSummaryDump 1.3\n!data ip_src ip_opt tcp_opt ip_len payload\n\
             1.0.0.1 . . 50 \"HiFart\"\n1.0.0.2 . . - \"HiFart\"\n",
        )],
    );
    let mut out = out;
    out.sort();
    assert_eq!(
        out,
        [
            "0 1.0.0.1 50 46 \"HiFart\"",
            "0 1.0.0.2 46 46 \"HiFart\"",
            "1 1.0.0.1 50 50 \"HiFart\\000\\000\\000\\000\"",
            "1 1.0.0.2 46 46 \"HiFart\"",
            "4 1.0.0.1 50 46 \"HiFart\"",
            "4 1.0.0.2 46 46 \"HiFart\"",
        ]
    );
}

#[test]
fn truncated_packets_print_dashes() {
    // test/analysis/IPSummaryDump-01, truncating here instead of with Truncate.
    let d = TempDir::new("ipsd-trunc");
    let conf = format!(
        "FromIPSummaryDump(DATA \"!data sport dport tcp_urp tcp_opt\n1 2 3 wscale10\n2 3 4 wscale10\n3 4 5 wscale10\n4 5 6 wscale10\n5 6 7 wscale10\", STOP true) -> got :: TestCapture;
         i :: TestInject -> t :: ToIPSummaryDump({}/out, FIELDS sport dport tcp_urp tcp_opt)",
        d.to_str().unwrap()
    );
    let mut r = router(&conf);
    r.run_until_idle();
    let got = taken(&mut r, "got");
    assert_eq!(got.len(), 5);
    for (mut p, keep) in got.into_iter().zip([usize::MAX, 41, 38, 23, 20]) {
        if keep < p.len() {
            let n = p.len() - keep;
            p.take(n);
        }
        inject(&mut r, "i", p);
    }
    r.write_path("t.flush", "").unwrap();
    let text = std::fs::read_to_string(d.join("out")).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(
        lines,
        ["1 2 3 wscale10", "2 3 4 -", "3 4 - -", "4 - - -", "- - - -"]
    );
}

#[test]
fn fields_build_the_packet() {
    let mut r = router(
        r#"FromIPSummaryDump(DATA "!data timestamp src sport dst dport proto ip_id ip_ttl ip_tos tcp_seq tcp_ack tcp_flags tcp_window ip_fragoff payload_len paint
!flowid 9.9.9.9 1 8.8.8.8 2 U
7.5 1.2.3.4 1000 5.6.7.8 80 T 77 9 16 100 200 SA 512 0! 10 3
8 - - - - - - - - - - - - - - 4", CHECKSUM true, STOP true) -> c :: TestCapture"#,
    );
    r.run_until_idle();
    let got = taken(&mut r, "c");
    assert_eq!(got.len(), 2);
    let d = got[0].data();
    assert_eq!(d.len(), 50);
    assert!(header_ok(d));
    assert_eq!(&d[2..4], &50u16.to_be_bytes());
    assert_eq!(
        (d[1], d[4], d[5], d[6], d[8], d[9]),
        (16, 0, 77, 0x40, 9, 6)
    );
    assert_eq!(&d[12..20], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(&d[20..24], &[0x03, 0xe8, 0, 80]);
    assert_eq!(&d[24..28], &100u32.to_be_bytes());
    assert_eq!((d[32], d[33]), (0x50, 0x12));
    assert_eq!(got[0].anno().paint, 3);
    assert_eq!(got[0].timestamp().subsec_nanos(), 500_000_000);
    // The second line takes the flow from `!flowid`: UDP with its length set.
    let u = got[1].data();
    assert_eq!((u[9], u.len()), (17, 28));
    assert_eq!(&u[12..20], &[9, 9, 9, 9, 8, 8, 8, 8]);
    assert_eq!(&u[20..26], &[0, 1, 0, 2, 0, 8]);
    assert_eq!(got[1].anno().paint, 4);
}

#[test]
fn bad_lines_are_counted() {
    let mut r = router(
        r#"f :: FromIPSummaryDump(DATA "!data src dst
junk junk
1.0.0.1 1.0.0.2", STOP true) -> c :: TestCapture"#,
    );
    r.run_until_idle();
    assert_eq!(taken(&mut r, "c").len(), 1);
    assert_eq!(read(&mut r, "f.drops"), "1");
    assert_eq!(read(&mut r, "f.count"), "1");
    let e = config_error("Idle -> ToIPSummaryDump(x, FIELDS src bogus)");
    assert!(e.contains("unknown field 'bogus'"), "{e}");
    let e = config_error("FromIPSummaryDump(STOP true) -> Discard");
    assert!(e.contains("FILENAME"), "{e}");
}

#[test]
fn aggregate_counter_counts_per_aggregate() {
    // test/analysis/AggregateCounter-01
    let d = TempDir::new("ipsd-agg");
    let data = "!data aggregate\n1\n1\n0\n0\n0\n2\n3\n2";
    let mut r = router(&format!(
        "FromIPSummaryDump(DATA \"{data}\", STOP true, ZERO true) -> t :: Tee
            -> a :: AggregateCounter -> Discard;
         t[1] -> f :: AggregateCounter(AGGREGATE_FREEZE 2, BYTES true)
            -> n :: TestCapture; f[1] -> no :: TestCapture;"
    ));
    r.run_until_idle();
    let out = d.join("out");
    r.write_path("a.write_text_file", out.to_str().unwrap())
        .unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('!')).collect();
    assert_eq!(lines, ["0 3", "1 2", "2 2", "3 1"]);
    assert!(
        text.starts_with("!IPAggregate 1.0\n!num_nonzero 4\n"),
        "{text}"
    );
    // Frozen after two aggregates (1 and 0): 2 and 3 are not counted and leave by output 1.
    assert_eq!(read(&mut r, "f.nagg"), "2");
    assert_eq!(read(&mut r, "f.freeze"), "true");
    assert_eq!(taken(&mut r, "n").len(), 5);
    assert_eq!(taken(&mut r, "no").len(), 3);
    r.write_path("f.write_ip_file", out.to_str().unwrap())
        .unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.ends_with("!ip\n0.0.0.0 120\n0.0.0.1 80\n"), "{text}");
    let e = config_error("Idle -> AggregateCounter(COUNT_STOP 1, COUNT_FREEZE 2) -> Discard");
    assert!(e.contains("mutually exclusive"), "{e}");
}

/// IP options in and out: Click's output for the inputs of its FromIPSummaryDump-ipopt-01
/// test (and two more), recorded with Click 2.1.
#[test]
fn ip_options_match_click() {
    let input = "\
             !data src sport dst dport proto ip_opt\n\
             18.26.4.44 30 10.0.0.4 40 T .\n\
             18.26.4.44 30 10.0.0.4 40 T nop;nop;eol\n\
             18.26.4.44 20 10.0.0.8 80 T ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2}\n\
             18.26.4.44 20 10.0.0.8 80 T ssrr{128.4.45.60,128.4.49.61,^1.1.1.1,2.2.2.2}\n\
             18.26.4.44 10 10.0.0.8 80 T rr{2.3.4.5}+3\n\
             18.26.4.44 11 10.0.0.8 80 T rr{}+1\n\
             18.26.4.44 12 10.0.0.1 80 T ts{1.0.0.1=!8320,1.0.0.2=8321}++5\n\
             18.26.4.44 12 10.0.0.1 80 T ts.ip{1.0.0.1=!8320,1.0.0.2=8321}++5\n\
             18.26.4.44 13 10.0.0.1 80 T ts.3{1.0.0.1=1,^1.0.0.3,1.0.0.4=?}+1\n\
             18.26.4.44 14 10.0.0.1 80 T ts{1,10000,!45}+2\n\
             18.26.4.44 15 10.0.0.1 80 T ts{1,10000,!45^0,0};rr{}+1\n\
             18.26.4.44 15 10.0.0.1 80 T 99=1:2;98\n\
";
    let out = run(
        "ipopt",
        "FromIPSummaryDump(DIR/in, STOP true, ZERO true, CHECKSUM true)
            -> ToIPSummaryDump(DIR/out, FIELDS sport ip_opt ip_hl ip_len)",
        &[("in", input)],
    );
    assert_eq!(
        out,
        [
            "30 . 20 40",
            "30 . 24 44",
            "20 ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2} 40 60",
            "20 ssrr{128.4.45.60,128.4.49.61^1.1.1.1,2.2.2.2} 40 60",
            "10 rr{2.3.4.5}+3 40 60",
            "11 rr{}+1 28 48",
            "12 ts.ip{1.0.0.1=!8320,1.0.0.2=8321^}++5 40 60",
            "12 ts.ip{1.0.0.1=!8320,1.0.0.2=8321^}++5 40 60",
            "13 ts.preip{1.0.0.1=1^1.0.0.3,1.0.0.4,0.0.0.0} 56 76",
            "14 ts{1,10000,!45}+2 44 64",
            "15 ts{1,10000,!45}+2;rr{}+1 52 72",
            "15 ? 28 48",
        ]
    );
}

/// Payload bytes are quoted as Click quotes them (octal escapes, `\n`, `\t`, `\r`, `\"`,
/// `\\`, `\$`).
#[test]
fn payload_quoting_matches_click() {
    let out = run(
        "quote",
        "FromIPSummaryDump(DIR/in, STOP true, PROTO 99)
            -> ToIPSummaryDump(DIR/out, FIELDS payload payload_len)",
        &[("in", "!data payload\n\"a$b\\\"\\t\\r\\n\\001\\377 ~\"\n")],
    );
    assert_eq!(out, [r#""a\$b\"\t\r\n\001\377 ~" 11"#]);
}

#[test]
fn bare_payloads_directions_and_short_timestamps_read_as_click() {
    // As Click's test/IPRewriter inputs write them: `.1` is 0.1 s, a payload may be a bare
    // word, and `direction` reads and writes `>` and `<` (other paints as numbers).
    let out = run(
        "bare",
        "FromIPSummaryDump(DIR/in, STOP true, PROTO 99)
            -> ToIPSummaryDump(DIR/out, FIELDS timestamp payload direction paint)",
        &[(
            "in",
            "!data timestamp payload direction\n.1 XXX >\n1.5 \"y z\" <\n2 w 7\n",
        )],
    );
    assert_eq!(
        out,
        [
            "0.100000 \"XXX\" > 0",
            "1.500000 \"y z\" < 1",
            "2.000000 \"w\" 7 7"
        ]
    );
}

/// Click's test/analysis/AggregateIPFlows-01: flow numbers in order of appearance, paint 1
/// for replies (by port order for a host talking to itself), later fragments held until the
/// `clear` handler gives them their first fragment's flow; ICMP goes to output 1.
#[test]
fn aggregate_ip_flows_numbers_flows_and_holds_fragments() {
    let input = "!data src sport dst dport proto ip_id ip_fragoff ip_len
18.26.4.44 30 10.0.0.4 40 U 1 0 100
18.26.4.44 30 18.26.4.44 41 U 2 0 100
10.0.0.4 40 18.26.4.44 30 U 3 0 100
18.26.4.44 41 18.26.4.44 30 U 4 0 100
18.26.4.44 41 18.26.4.44 30 U 5 24 80
18.26.4.44 30 18.26.4.44 41 U 6 24 84
18.26.4.44 41 18.26.4.44 30 U 5 0+ 24
18.26.4.44 30 18.26.4.44 41 U 6 0+ 24
10.0.0.4 0 18.26.4.44 0 I 7 0 28
";
    let mut r = router(&format!(
        "FromIPSummaryDump(DATA \"{input}\", STOP true) -> SetTimestamp(1)
           -> a :: AggregateIPFlows -> got :: TestCapture;
         a[1] -> other :: TestCapture;"
    ));
    r.run_until_idle();
    let seen = |r: &mut sluice_core::Router| -> Vec<(u32, u8, u16)> {
        taken(r, "got")
            .iter()
            .map(|p| {
                let d = p.data();
                (
                    p.anno().aggregate,
                    p.anno().paint,
                    u16::from_be_bytes([d[2], d[3]]),
                )
            })
            .collect()
    };
    assert_eq!(
        seen(&mut r),
        [(1, 0, 100), (2, 0, 100), (1, 1, 100), (2, 1, 100)],
        "the fragments wait"
    );
    assert_eq!(taken(&mut r, "other").len(), 1, "ICMP is not a flow");
    r.write_path("a.clear", "").unwrap();
    assert_eq!(
        seen(&mut r),
        [(2, 1, 80), (2, 0, 84), (2, 1, 24), (2, 0, 24)]
    );
    assert_eq!(read(&mut r, "a.count"), "2");
    assert_eq!(read(&mut r, "a.drops"), "0");
}

/// AggregateIP reads its field in host order: address bits (shifted down, or in place with
/// UNSHIFT_IP_ADDR), ports for TCP or UDP only, fields built up with INCREMENTAL, payload
/// bytes after the transport header; packets without the field (ICMP for `dport`, later
/// fragments, too short) go to output 1, or are dropped and counted when it is unconnected.
#[test]
fn aggregate_ip_sets_the_annotation_from_a_field() {
    let input = "!data src sport dst dport proto ip_fragoff payload
198.18.7.1 1000 198.19.0.2 5004 U 0 \"ABCD\"
198.18.9.1 1001 198.19.0.3 80 T 0 \"WXYZ\"
198.18.7.1 0 198.19.0.2 0 I 0 \"\"
198.18.7.1 1000 198.19.0.2 5004 U 8 \"ABCD\"
";
    let run = |agg: &str, out1: bool| {
        let other = if out1 {
            "a[1] -> other :: TestCapture;"
        } else {
            ""
        };
        let mut r = router(&format!(
            "FromIPSummaryDump(DATA \"{input}\", STOP true) -> AggregateIP(ip{{112-119}})
               -> a :: AggregateIP({agg}) -> got :: TestCapture; {other}"
        ));
        r.run_until_idle();
        let got: Vec<u32> = taken(&mut r, "got")
            .iter()
            .map(|p| p.anno().aggregate)
            .collect();
        let other = if out1 {
            taken(&mut r, "other").len()
        } else {
            0
        };
        (got, other, read(&mut r, "a.drops"))
    };
    let want = |g: &[u32], o: usize, d: &str| (g.to_vec(), o, d.to_string());
    assert_eq!(run("ip src/16", true), want(&[0xc612; 4], 0, "0"));
    assert_eq!(
        run("ip src & 0x0000FF00, UNSHIFT_IP_ADDR true", true),
        want(&[0x700, 0x900, 0x700, 0x700], 0, "0")
    );
    assert_eq!(run("dport", true), want(&[5004, 80], 2, "0"));
    assert_eq!(run("dport", false), want(&[5004, 80], 0, "2"));
    assert_eq!(run("udp dport", false), want(&[5004], 0, "3"));
    assert_eq!(
        run("ip{152-159}, INCREMENTAL true", true),
        want(
            &[7 * 256 + 2, 9 * 256 + 3, 7 * 256 + 2, 7 * 256 + 2],
            0,
            "0"
        )
    );
    assert_eq!(
        run("data[1:2]", true),
        want(&[u32::from(u16::from_be_bytes(*b"BC")), 0x5859], 2, "0")
    );
    let mut r = router("Idle -> a :: AggregateIP(tcp flags) -> Discard");
    assert_eq!(
        (
            read(&mut r, "a.header"),
            read(&mut r, "a.bit_offset"),
            read(&mut r, "a.bit_length")
        ),
        ("transp".to_string(), "104".to_string(), "8".to_string())
    );
    let e = config_error("Idle -> AggregateIP(ip src & 0xF0F0) -> Discard");
    assert!(e.contains("one run of 1 bits"), "{e}");
}
