//! Behaviour tests of the io and script families: FromDump/ToDump round trips, damaged
//! captures, Script, DriverManager and ControlSocket through real configurations.

use sluice_testkit::{fuzz_seeds, read, router, Kit, TempDir};
use sluice_wire::pcap::{PcapReader, PcapWriter, LINKTYPE_ETHERNET, LINKTYPE_RAW};

/// An Ethernet frame carrying IPv4 of total length `len`.
fn eth_ipv4(len: usize, seed: u8) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&[2, 0, 0, 0, 0, 1]);
    f[6..12].copy_from_slice(&[2, 0, 0, 0, 0, 2]);
    f[12] = 0x08;
    if len > 14 {
        f[14] = 0x45;
    }
    for (i, b) in f.iter_mut().enumerate().skip(34) {
        *b = seed.wrapping_add(i as u8);
    }
    f
}

/// A sample capture: mixed sizes, non-monotonic sub-second parts, one record cut by snaplen.
fn sample_pcap(link: u32, snaplen: u32, nano: bool) -> Vec<u8> {
    let mut w = PcapWriter::new(Vec::new(), link, snaplen, nano).unwrap();
    let sizes = [60usize, 64, 128, 590, 1514, 42, 9000];
    for (i, &n) in sizes.iter().enumerate() {
        let data = if link == LINKTYPE_ETHERNET {
            eth_ipv4(n, i as u8)
        } else {
            let mut v = vec![0x45u8; n];
            v[1] = i as u8;
            v
        };
        let frac = if nano {
            123_456_789 + i as u32 * 7
        } else {
            (654_321 + i as u32 * 3) * 1000
        };
        w.write_record(
            1_700_000_000 + i as u32,
            frac,
            n as u32 + 10 * (i % 2) as u32,
            &data,
        )
        .unwrap();
    }
    w.into_inner()
}

fn round_trip(link: u32, nano: bool) {
    let d = TempDir::new(&format!("io-rt-{link}-{nano}"));
    let input = sample_pcap(link, 65535, nano);
    std::fs::write(d.join("in.pcap"), &input).unwrap();
    let conf = format!(
        "fd :: FromDump({}, STOP true) -> c :: Counter -> td :: ToDump({}, SNAPLEN 65535, NANO {}, USE_ENCAP_FROM fd);",
        d.file("in.pcap"),
        d.file("out.pcap"),
        nano
    );
    let mut r = router(&conf);
    r.run_until_idle();
    assert_eq!(read(&mut r, "fd.count"), "7");
    assert_eq!(read(&mut r, "td.count"), "7");
    assert_eq!(read(&mut r, "fd.drops"), "0");
    assert_eq!(read(&mut r, "fd.nano"), nano.to_string());
    r.cleanup();
    let out = std::fs::read(d.join("out.pcap")).unwrap();
    assert_eq!(out, input, "link {link} nano {nano}: not byte-identical");
}

#[test]
fn ethernet_round_trip_microseconds() {
    round_trip(LINKTYPE_ETHERNET, false);
}

#[test]
fn ethernet_round_trip_nanoseconds() {
    round_trip(LINKTYPE_ETHERNET, true);
}

#[test]
fn raw_ip_round_trip() {
    round_trip(LINKTYPE_RAW, false);
    round_trip(LINKTYPE_RAW, true);
}

#[test]
fn pull_output_round_trip() {
    let d = TempDir::new("io-pull");
    let input = sample_pcap(LINKTYPE_ETHERNET, 65535, false);
    std::fs::write(d.join("in.pcap"), &input).unwrap();
    // FromDump in pull context (pulled by ToDump's task) — no STOP: the router ends when idle.
    let conf = format!(
        "fd :: FromDump({}) -> td :: ToDump({}, SNAPLEN 65535);",
        d.file("in.pcap"),
        d.file("out.pcap")
    );
    // Push through a Queue and pull with ToDump's task.
    let conf2 = format!(
        "fd :: FromDump({}, STOP true) -> q :: Queue(100) -> td :: ToDump({}, SNAPLEN 65535);",
        d.file("in.pcap"),
        d.file("out2.pcap")
    );
    let mut r = router(&conf2);
    r.run_until_idle();
    // STOP may stop the router before the queue drains; ToDump writes what it pulled.
    let written: usize = read(&mut r, "td.count").parse().unwrap();
    let queued: usize = read(&mut r, "q.length").parse().unwrap();
    assert_eq!(written + queued, 7);
    drop(r);
    let mut r = router(&conf);
    r.run_until_idle();
    assert_eq!(read(&mut r, "td.count"), "7");
    drop(r);
    assert_eq!(std::fs::read(d.join("out.pcap")).unwrap(), input);
}

#[test]
fn timestamps_and_headers_are_annotated() {
    let d = TempDir::new("io-anno");
    std::fs::write(
        d.join("in.pcap"),
        sample_pcap(LINKTYPE_ETHERNET, 65535, true),
    )
    .unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true) -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "fd.encap"), "ETHER");
    assert_eq!(read(&mut r, "fd.snaplen"), "65535");
    // Checked through the library function FromDump uses for each record.
    let parsed = sluice_elements::io::from_dump::parse_pcap(
        &sample_pcap(LINKTYPE_ETHERNET, 65535, true),
        false,
    );
    assert_eq!(parsed.packets.len(), 7);
    let p0 = &parsed.packets[0];
    assert_eq!(p0.timestamp().0, 1_700_000_000_123_456_789);
    assert_eq!(p0.mac_offset(), Some(0));
    assert_eq!(p0.network_offset(), Some(14));
    assert_eq!(sluice_elements::io::extra_length(&parsed.packets[1]), 10);
    let raw =
        sluice_elements::io::from_dump::parse_pcap(&sample_pcap(LINKTYPE_RAW, 0, false), true);
    assert_eq!(raw.packets.len(), 7);
    assert_eq!(raw.packets[3].network_offset(), Some(0));
    assert_eq!(raw.packets[3].mac_offset(), None);
}

#[test]
fn truncated_and_corrupt_files_are_counted() {
    let d = TempDir::new("io-bad");
    let good = sample_pcap(LINKTYPE_ETHERNET, 65535, false);
    // Cut in the middle of the third record's data.
    let cut = 24 + (16 + 60) + (16 + 64) + 16 + 20;
    std::fs::write(d.join("trunc.pcap"), &good[..cut]).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true) -> c :: Counter -> Discard",
        d.file("trunc.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "2");
    assert_eq!(read(&mut r, "fd.errors"), "1");
    assert_eq!(read(&mut r, "fd.drops"), "1");

    // A record header claiming more than 256 KiB: corrupt, not truncated.
    let mut bad = good.clone();
    bad[24 + 16 + 60 + 8..24 + 16 + 60 + 12].copy_from_slice(&300_000u32.to_le_bytes());
    std::fs::write(d.join("corrupt.pcap"), &bad).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true) -> c :: Counter -> Discard",
        d.file("corrupt.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "1");
    assert_eq!(read(&mut r, "fd.errors"), "1");

    // Not a pcap file / missing file: initialisation errors naming the file.
    std::fs::write(d.join("junk.pcap"), b"this is not a capture file at all").unwrap();
    let e = Kit::sim().error(&format!("FromDump({}) -> Discard", d.file("junk.pcap")));
    assert!(e.contains("junk.pcap"), "{e}");
    let e = Kit::sim().error(&format!("FromDump({}) -> Discard", d.file("nope.pcap")));
    assert!(e.contains("nope.pcap"), "{e}");
}

#[test]
fn packets_older_than_the_first_are_read_without_start() {
    let d = TempDir::new("io-order");
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 65535, false).unwrap();
    for (i, t) in [10u32, 5, 20, 3].into_iter().enumerate() {
        w.write_record(t, 0, 60, &eth_ipv4(60, i as u8)).unwrap();
    }
    std::fs::write(d.join("in.pcap"), w.into_inner()).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "4");
    assert_eq!(read(&mut r, "fd.skipped"), "0");
    // START still skips what comes before it, in file order.
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true, START 6) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "fd.skipped"), "2");
    assert_eq!(read(&mut r, "c.count"), "2");
}

#[test]
fn records_longer_than_the_snaplen_are_read_whole() {
    let d = TempDir::new("io-snap");
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 0, false).unwrap();
    for i in 0..10u8 {
        w.write_record(1, 0, 200, &eth_ipv4(200, i)).unwrap();
    }
    let mut f = w.into_inner();
    f[16..20].copy_from_slice(&64u32.to_le_bytes());
    std::fs::write(d.join("in.pcap"), f).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "10");
    assert_eq!(read(&mut r, "c.byte_count"), "2000");
    assert_eq!(read(&mut r, "fd.errors"), "0");
}

#[test]
fn a_pcapng_file_is_named_as_such() {
    let d = TempDir::new("io-ng");
    // A pcapng Section Header Block (little-endian), then nothing useful.
    let mut f = vec![
        0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,
    ];
    f.extend_from_slice(&[0xff; 8]);
    f.extend_from_slice(&[28, 0, 0, 0]);
    std::fs::write(d.join("in.pcapng"), f).unwrap();
    let e = Kit::sim().error(&format!("FromDump({}) -> Discard", d.file("in.pcapng")));
    assert!(e.contains("in.pcapng") && e.contains("pcapng file"), "{e}");
}

#[test]
fn a_write_error_fails_the_run() {
    let mut r = router("InfiniteSource(LIMIT 100, STOP true) -> td :: ToDump(/dev/full)");
    r.run_until_idle();
    r.cleanup();
    assert!(r.run_failed());
    assert_eq!(read(&mut r, "td.errors"), "1");
    let mut r = router("InfiniteSource(LIMIT 100, STOP true) -> td :: ToDump(/dev/null)");
    r.run_until_idle();
    r.cleanup();
    assert!(!r.run_failed());
}

#[test]
fn force_ip_drops_and_counts_non_ip() {
    let d = TempDir::new("io-force");
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 65535, false).unwrap();
    let mut arp = eth_ipv4(60, 0);
    arp[12] = 0x08;
    arp[13] = 0x06;
    w.write_record(1, 0, 60, &arp).unwrap();
    w.write_record(2, 0, 60, &eth_ipv4(60, 1)).unwrap();
    std::fs::write(d.join("in.pcap"), w.into_inner()).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true, FORCE_IP true) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "1");
    assert_eq!(read(&mut r, "fd.drops"), "1");
}

#[test]
fn timing_replays_at_capture_pace_under_simtime() {
    let d = TempDir::new("io-timing");
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 65535, true).unwrap();
    for i in 0..5u32 {
        w.write_record(1_000 + i * 2, 0, 60, &eth_ipv4(60, i as u8))
            .unwrap();
    }
    std::fs::write(d.join("in.pcap"), w.into_inner()).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, STOP true, TIMING true) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    let t0 = r.clock().now();
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "5");
    // Five packets 2 s apart: the last left 8 simulated seconds after the first.
    assert_eq!((r.clock().now() - t0).0, 8_000_000_000);
}

#[test]
fn start_end_window_and_end_call() {
    let d = TempDir::new("io-window");
    let mut w = PcapWriter::new(Vec::new(), LINKTYPE_ETHERNET, 65535, false).unwrap();
    for i in 0..10u32 {
        w.write_record(100 + i, 0, 60, &eth_ipv4(60, i as u8))
            .unwrap();
    }
    std::fs::write(d.join("in.pcap"), w.into_inner()).unwrap();
    let mut r = router(&format!(
        "fd :: FromDump({}, START_AFTER 2, INTERVAL 3, END_CALL c.reset) -> c :: Counter -> Discard",
        d.file("in.pcap")
    ));
    r.run_until_idle();
    assert_eq!(read(&mut r, "fd.count"), "3");
    assert_eq!(read(&mut r, "fd.skipped"), "2");
    // END_CALL reset the counter after the last packet.
    assert_eq!(read(&mut r, "c.count"), "0");
}

#[test]
fn fuzz_corpus_never_panics() {
    let mut n = 0;
    for sub in ["pcap_reader", "from_dump"] {
        for bytes in fuzz_seeds(sub) {
            let _ = sluice_elements::io::from_dump::parse_pcap(&bytes, false);
            let _ = sluice_elements::io::from_dump::parse_pcap(&bytes, true);
            n += 1;
        }
    }
    // Mutations of a good file: every prefix and some byte flips.
    let good = sample_pcap(LINKTYPE_ETHERNET, 2000, false);
    for cut in 0..good.len().min(400) {
        let _ = sluice_elements::io::from_dump::parse_pcap(&good[..cut], true);
    }
    for i in 0..good.len().min(200) {
        let mut m = good.clone();
        m[i] ^= 0xff;
        let _ = sluice_elements::io::from_dump::parse_pcap(&m, false);
    }
    assert!(n >= 3, "seed corpus missing");
    assert!(PcapReader::new(&good[..]).is_ok());
}

#[test]
fn script_waits_loops_and_writes_under_simtime() {
    let d = TempDir::new("io-script");
    let out = d.file("out.txt");
    let mut r = router(&format!(
        "src :: InfiniteSource(LIMIT -1, BURST 1, ACTIVE false) -> c :: Counter -> Discard; \
         Script(set i 0, label top, set i $(add $i 1), wait 1s, goto top $(lt $i 5), \
                print >{out} \"done $i $(now)\", write src.limit 3, write src.active true, \
                wait 1s, print >>{out} \"count $(c.count)\", write stop)"
    ));
    let t0 = r.clock().now();
    r.run_until_idle();
    assert_eq!((r.clock().now() - t0).0, 6_000_000_000);
    assert_eq!(read(&mut r, "c.count"), "3");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text, "done 5 946684805.000000\ncount 3\n");
}

#[test]
fn passive_script_steps_and_runs() {
    let d = TempDir::new("io-passive");
    let out = d.file("out.txt");
    let mut r = router(&format!(
        "s :: Script(TYPE PASSIVE, print >>{out} \"a $1\", pause, print >>{out} \"b\", return $(mul 6 7))"
    ));
    r.run_until_idle();
    assert!(!std::path::Path::new(&out).exists());
    r.write_path("s.step", "").unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a \n");
    r.write_path("s.step", "").unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a \nb\n");
    assert_eq!(read(&mut r, "s.run"), "42");
    assert_eq!(read(&mut r, "s.done"), "true");
    r.write_path("s.run", "x").unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "a \nb\na x\n");
    // Unknown instructions and labels are configuration errors.
    let e = Kit::sim().error("Script(frobnicate 3)");
    assert!(e.contains("frobnicate"), "{e}");
    let e = Kit::sim().error("Script(goto nowhere)");
    assert!(e.contains("nowhere"), "{e}");
}

#[test]
fn driver_manager_waits_for_stop_events() {
    let mut r = router(
        "InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard; \
         InfiniteSource(LIMIT 5000, BURST 1, STOP true) -> c2 :: Counter -> Discard; \
         DriverManager(wait_stop 2, write c.reset, stop)",
    );
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "0");
    assert_eq!(read(&mut r, "c2.count"), "5000");

    // Default: stop at the first stop event, though another source runs forever.
    let mut r = router(
        "InfiniteSource(LIMIT 10, STOP true) -> c :: Counter -> Discard; \
         InfiniteSource(LIMIT -1, BURST 1) -> c2 :: Counter -> Discard; DriverManager",
    );
    r.run_until_idle();
    assert_eq!(read(&mut r, "c.count"), "10");

    // A DRIVER script ignores stop events while it waits, and stops the router when it ends.
    let mut r = router(
        "InfiniteSource(LIMIT 5, STOP true) -> c :: Counter -> Discard; \
         Script(TYPE DRIVER, wait 2s, write c.reset)",
    );
    let t0 = r.clock().now();
    r.run_until_idle();
    assert_eq!((r.clock().now() - t0).0, 2_000_000_000);
    assert_eq!(read(&mut r, "c.count"), "0");
}

mod control_socket {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpStream;

    fn reply(rd: &mut BufReader<TcpStream>) -> String {
        let mut l = String::new();
        rd.read_line(&mut l).unwrap();
        assert!(l.ends_with("\r\n"), "{l:?}");
        l.trim_end().to_string()
    }

    fn data(rd: &mut BufReader<TcpStream>) -> String {
        let l = reply(rd);
        let n: usize = l.strip_prefix("DATA ").expect("DATA line").parse().unwrap();
        let mut b = vec![0u8; n];
        rd.read_exact(&mut b).unwrap();
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn tcp_read_write_check_and_stop() {
        let mut r = Kit::new().router(
            "cs :: ControlSocket(TCP, 0); ro :: ControlSocket(TCP, 0, READONLY true); \
             src :: InfiniteSource(LIMIT 7) -> c :: Counter -> Discard",
        );
        let port: u16 = read(&mut r, "cs.port").parse().unwrap();
        let ro_port: u16 = read(&mut r, "ro.port").parse().unwrap();
        assert_ne!(port, 0);
        let h = std::thread::spawn(move || {
            r.run_until_idle();
            r
        });
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut w = s.try_clone().unwrap();
        let mut rd = BufReader::new(s);
        assert_eq!(reply(&mut rd), "Click::ControlSocket/1.3");
        w.write_all(b"READ c.count\r\n").unwrap();
        assert_eq!(reply(&mut rd), "200 Read handler 'c.count' OK");
        assert_eq!(data(&mut rd), "7");
        w.write_all(b"WRITE c.reset\n").unwrap();
        assert_eq!(reply(&mut rd), "200 Write handler 'c.reset' OK");
        w.write_all(b"read c.count\n").unwrap();
        reply(&mut rd);
        assert_eq!(data(&mut rd), "0");
        w.write_all(b"READ nope.count\n").unwrap();
        assert!(reply(&mut rd).starts_with("510 "));
        w.write_all(b"READ c.nope\n").unwrap();
        assert!(reply(&mut rd).starts_with("511 "));
        w.write_all(b"READ c.count extra\n").unwrap();
        assert_eq!(reply(&mut rd), "590-Read handler 'c.count' error:");
        let r = reply(&mut rd);
        assert!(
            r.starts_with("590 ") && r.contains("does not take parameters"),
            "{r}"
        );
        w.write_all(b"WRITE c.count 3\n").unwrap();
        assert_eq!(reply(&mut rd), "530 Handler 'c.count' read-only");
        w.write_all(b"WRITE src.limit abc\n").unwrap();
        assert_eq!(reply(&mut rd), "520-Write handler 'src.limit' error:");
        assert!(reply(&mut rd).starts_with("520 "));
        w.write_all(b"WRITEDATA src.data 5\nhelloREAD src.data\n")
            .unwrap();
        assert_eq!(reply(&mut rd), "200 Write handler 'src.data' OK");
        reply(&mut rd);
        assert_eq!(data(&mut rd), "hello");
        w.write_all(b"CHECKREAD c.count\nCHECKWRITE c.count\nCHECKWRITE c.reset\n")
            .unwrap();
        assert!(reply(&mut rd).starts_with("200 "));
        assert!(reply(&mut rd).starts_with("511 "));
        assert!(reply(&mut rd).starts_with("200 "));
        w.write_all(b"CHECKREAD list\nREAD version\nLLRPC c#1234\nFROB\nREAD\n")
            .unwrap();
        assert!(reply(&mut rd).starts_with("200 "));
        reply(&mut rd);
        data(&mut rd);
        assert!(reply(&mut rd).starts_with("501 "));
        assert!(reply(&mut rd).starts_with("501 "));
        assert!(reply(&mut rd).starts_with("500 "));

        // The read-only socket refuses writes.
        let s2 = TcpStream::connect(("127.0.0.1", ro_port)).unwrap();
        s2.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let mut w2 = s2.try_clone().unwrap();
        let mut rd2 = BufReader::new(s2);
        reply(&mut rd2);
        w2.write_all(b"WRITE stop\nQUIT\n").unwrap();
        assert!(reply(&mut rd2).starts_with("530 "));
        assert_eq!(reply(&mut rd2), "200 Goodbye!");

        w.write_all(b"WRITE stop\nQUIT\n").unwrap();
        assert_eq!(reply(&mut rd), "200 Write handler 'stop' OK");
        let mut r = h.join().unwrap();
        assert!(r.is_stopped());
        assert!(read(&mut r, "cs.count").parse::<u64>().unwrap() >= 15);
    }

    #[test]
    fn unix_socket() {
        let d = TempDir::new("io-unix");
        let path = d.file("ctl.sock");
        let mut r = Kit::new().router(&format!("ControlSocket(UNIX, {path})"));
        let h = std::thread::spawn(move || r.run());
        let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        s.write_all(b"READ version\nWRITE stop\n").unwrap();
        let mut got = String::new();
        let mut buf = [0u8; 256];
        while !got.contains("Write handler 'stop' OK") {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "{got}");
            got.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        assert!(
            got.starts_with("Click::ControlSocket/1.3\r\n200 Read handler 'version' OK\r\nDATA ")
        );
        h.join().unwrap();
    }
}
