//! A three-node Direct VLB mesh inside one router, on simulated time: ClusterEncap at the
//! input node, DirectVLB on every node with the internal links as plain connections, and
//! ClusterDecap at the output node. Checks the direct share, the spreading over the
//! intermediate, phase-2 forwarding by address alone, hellos, and failover when a link dies.

use sluice_testkit::{num, read, Kit};

/// An IPv4/UDP packet of `len` bytes from 198.18.1.2 to 198.18.3.2 (ports 1234 → 53).
fn udp_hex(len: usize) -> String {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    p[8] = 64;
    p[9] = 17;
    p[12..16].copy_from_slice(&[198, 18, 1, 2]);
    p[16..20].copy_from_slice(&[198, 18, 3, 2]);
    p[20..24].copy_from_slice(&[0x04, 0xd2, 0, 53]);
    p[24..26].copy_from_slice(&((len - 20) as u16).to_be_bytes());
    p.iter().map(|b| format!("{b:02x}")).collect()
}

/// Three nodes; traffic enters node 0 for node 2 at `pps` packets/s of 100 bytes (114 with
/// the cluster header) for `n` packets. Links i→j pass through a Switch `sIJ`; `extra` is
/// appended to the configuration.
fn mesh(pps: u32, n: u32, rate: &str, extra: &str) -> String {
    let mut c = format!(
        "src :: RatedSource(DATA \\<{}>, RATE {pps}, LIMIT {n}, STOP true)
           -> ClusterEncap(0, 2, 0) -> [0]v0;",
        udp_hex(100)
    );
    for i in 0..3 {
        c += &format!(
            "v{i} :: DirectVLB({i}, 3, {rate}, LINK_RATE 1MBps);
             v{i}[{i}] -> dec{i} :: ClusterDecap -> c{i} :: Counter -> Discard;"
        );
        if i > 0 {
            c += &format!("Idle -> [0]v{i};");
        }
        for j in 0..3 {
            if i != j {
                c += &format!("v{i}[{j}] -> s{i}{j} :: Switch(0) -> [1]v{j};");
            }
        }
    }
    c + extra
}

#[test]
fn direct_share_then_intermediate() {
    // 3000 packets/s × 114 bytes = 342,000 B/s offered; R = 342,000 B/s, so the direct share
    // R/3 is a third of it and the other two thirds go through node 1.
    let mut r = Kit::sim().router(&mesh(3000, 30_000, "342000Bps", ""));
    r.run_until_idle();
    assert_eq!(
        num(&mut r, "c2.count"),
        30_000,
        "everything arrives at node 2"
    );
    assert_eq!(num(&mut r, "c0.count") + num(&mut r, "c1.count"), 0);
    let direct: Vec<u64> = read(&mut r, "v0.direct")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let via: Vec<u64> = read(&mut r, "v0.via")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    let fwd: Vec<u64> = read(&mut r, "v1.forwarded")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    // 10 s at the direct share, plus the initial burst (16 KiB = 143 packets).
    assert!((10_000..=10_300).contains(&direct[2]), "direct {direct:?}");
    assert_eq!(direct[2] + via[1], 30_000, "direct {direct:?} via {via:?}");
    assert_eq!(
        fwd[2], via[1],
        "node 1 forwards what node 0 sent through it"
    );
    assert_eq!(read(&mut r, "v0.links"), "self up up");
    assert!(
        num(&mut r, "v1.hellos_received") >= 2 * 900,
        "hellos every 10 ms"
    );
    assert_eq!(sluice_testkit::drops(&mut r), 0);
}

#[test]
fn dead_link_is_avoided_within_the_dead_interval() {
    // At 5 s the link between nodes 0 and 2 fails in both directions: after DEAD (50 ms)
    // node 0 sends everything through node 1.
    let script = "Script(wait 5s, write s02.switch -1, write s20.switch -1);";
    let mut r = Kit::sim().router(&mesh(1000, 10_000, "1MBps", script));
    r.run_until_idle();
    let delivered = num(&mut r, "c2.count");
    let lost = 10_000 - delivered;
    // At most the packets sent on the dead link before it was declared down (≤ 60 ms at
    // 1000/s: the direct share is all of the traffic here).
    assert!(lost <= 60, "lost {lost}");
    assert!(lost > 0, "the failure lost nothing: was the link used?");
    assert_eq!(read(&mut r, "v0.links"), "self up down");
    assert_eq!(read(&mut r, "v2.links"), "down up self");
    let via: Vec<u64> = read(&mut r, "v0.via")
        .split(' ')
        .map(|x| x.parse().unwrap())
        .collect();
    assert!(via[1] >= 4_900, "via {via:?}");
    // What was lost was dropped by the dead link's switch, and counted.
    let s02 = read(&mut r, "s02.drops");
    assert!(s02.parse::<u64>().unwrap() >= lost, "s02 drops {s02}");
}

#[test]
fn bad_frames_are_counted() {
    let mut r = Kit::sim().router(
        "i :: Idle -> v :: DirectVLB(0, 2, 1Mbps); Idle -> [1]v; v[0] -> Discard; v[1] -> Discard;
         i2 :: Idle -> d :: ClusterDecap -> Discard;",
    );
    sluice_testkit::inject_bytes(&mut r, "i", 0, &[&[0u8; 60]]);
    sluice_testkit::inject_bytes(&mut r, "i2", 0, &[&[0u8; 60]]);
    let mut frame = [0u8; 60];
    frame[0..6].copy_from_slice(&[2, 0x5b, 0, 0, 7, 0]);
    sluice_testkit::inject_bytes(&mut r, "i", 0, &[&frame]);
    // Node 7 is outside a two-node mesh; port 5 is not one of d's outputs.
    frame[5] = 5;
    sluice_testkit::inject_bytes(&mut r, "i2", 0, &[&frame]);
    let details = |r: &mut sluice_core::Router, e: &str| -> Vec<String> {
        read(r, &format!("{e}.drop_details"))
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    };
    let v = details(&mut r, "v");
    assert!(
        v.contains(&"1 not a cluster frame".into())
            && v.contains(&"1 output node out of range".into()),
        "{v:?}"
    );
    let d = details(&mut r, "d");
    assert!(
        d.contains(&"1 not a cluster frame".into()) && d.contains(&"1 no such output port".into()),
        "{d:?}"
    );
}

#[test]
fn configuration_errors() {
    let e = Kit::new().error("Idle -> v :: DirectVLB(3, 3, 1Mbps) -> Discard; Idle -> [1]v;");
    assert!(e.contains("NODE < NODES"), "{e}");
    let e = Kit::new().error("Idle -> v :: DirectVLB(0, 3, 1Mbps) -> Discard; Idle -> [1]v;");
    assert!(e.contains("expected NODES"), "{e}");
}
