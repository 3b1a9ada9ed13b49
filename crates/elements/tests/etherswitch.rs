//! The Ethernet switch of Figure 16: EtherSwitch's learning, ageing, flooding, drops and
//! handlers; EtherSpanTree in a router (port states through the Suppressors, BPDUs sent and
//! received, topology change handling through the switch's timeout) and its protocol engine
//! with several bridges on a virtual clock (root election, blocking in a loop, reconvergence
//! after a failure, topology change notification); the example configuration; the BPDU fuzz
//! body.

use sluice_core::{Packet, Router, Timestamp};
use sluice_elements::etherswitch::fuzzing;
use sluice_elements::etherswitch::stp::{Bridge, Outbox, PortRole, PortState, Settings};
use sluice_testkit::{
    conf_file, config_error, fuzz_seeds, inject, inject_packets, read, router, taken, Kit,
};
use sluice_wire::stp::{BpduRepr, BridgeId, ConfigBpdu, BRIDGE_GROUP_ADDR};
use sluice_wire::EtherAddr;

const A: [u8; 6] = [2, 0, 0, 0, 0, 0x0a];
const B: [u8; 6] = [2, 0, 0, 0, 0, 0x0b];
const C: [u8; 6] = [2, 0, 0, 0, 0, 0x0c];
const BCAST: [u8; 6] = [0xff; 6];
const MCAST: [u8; 6] = [0x01, 0, 0x5e, 0, 0, 1];

/// A 60-byte frame from `src` to `dst` whose last byte is `tag`.
fn frame(dst: [u8; 6], src: [u8; 6], tag: u8) -> Packet {
    let mut d = [0u8; 60];
    d[0..6].copy_from_slice(&dst);
    d[6..12].copy_from_slice(&src);
    d[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    d[59] = tag;
    Packet::from_bytes(&d)
}

/// The tags of the frames a capture received.
fn tags(r: &mut Router, capture: &str) -> Vec<u8> {
    taken(r, capture).iter().map(|p| p.data()[59]).collect()
}

/// A three-port switch between TestInjects `iN` and TestCaptures `oN`, with `extra`.
fn switch(timeout: u32, extra: &str) -> Router {
    router(&format!(
        "sw :: EtherSwitch(TIMEOUT {timeout});
         i0 :: TestInject -> [0]sw[0] -> o0 :: TestCapture;
         i1 :: TestInject -> [1]sw[1] -> o1 :: TestCapture;
         i2 :: TestInject -> [2]sw[2] -> o2 :: TestCapture;
         {extra}"
    ))
}

#[test]
fn switch_learns_and_forwards() {
    let mut r = switch(300, "");
    // A on port 0 sends to unknown B: flooded to ports 1 and 2, not back to 0.
    inject(&mut r, "i0", frame(B, A, 1));
    assert_eq!(tags(&mut r, "o0"), Vec::<u8>::new());
    assert_eq!(tags(&mut r, "o1"), [1]);
    assert_eq!(tags(&mut r, "o2"), [1]);
    // B answers from port 1: A is known, only port 0.
    inject(&mut r, "i1", frame(A, B, 2));
    assert_eq!(tags(&mut r, "o0"), [2]);
    assert!(tags(&mut r, "o1").is_empty() && tags(&mut r, "o2").is_empty());
    // Now both are known.
    inject(&mut r, "i0", frame(B, A, 3));
    assert_eq!(tags(&mut r, "o1"), [3]);
    assert!(tags(&mut r, "o2").is_empty());
    // A moves to port 2: learned again there.
    inject(&mut r, "i2", frame(B, A, 4));
    inject(&mut r, "i1", frame(A, B, 5));
    assert_eq!(tags(&mut r, "o2"), [5]);
    assert!(tags(&mut r, "o0").is_empty());
    assert_eq!(
        read(&mut r, "sw.table"),
        "02-00-00-00-00-0A 2\n02-00-00-00-00-0B 1"
    );
    assert_eq!(read(&mut r, "sw.count"), "2");
    assert_eq!(read(&mut r, "sw.forwarded"), "4");
    assert_eq!(read(&mut r, "sw.flooded"), "1");
    // Received on each input; sent on each output, flooded copies included.
    assert_eq!(read(&mut r, "sw.port_counts"), "0 2 1\n1 2 3\n2 1 2");
    assert_eq!(read(&mut r, "sw.drops"), "0");
}

#[test]
fn group_destinations_flood_and_group_sources_are_not_learned() {
    let mut r = switch(300, "");
    inject(&mut r, "i1", frame(BCAST, A, 1));
    inject(&mut r, "i1", frame(MCAST, A, 2));
    assert_eq!(tags(&mut r, "o0"), [1, 2]);
    assert_eq!(tags(&mut r, "o2"), [1, 2]);
    assert!(tags(&mut r, "o1").is_empty());
    // A multicast source teaches nothing.
    inject(&mut r, "i2", frame(A, MCAST, 3));
    assert_eq!(tags(&mut r, "o1"), [3]);
    assert_eq!(read(&mut r, "sw.table"), "02-00-00-00-00-0A 1");
    assert_eq!(read(&mut r, "sw.flooded"), "2");
}

#[test]
fn same_port_and_runt_frames_are_dropped_and_counted() {
    let mut r = switch(300, "");
    inject(&mut r, "i0", frame(BCAST, A, 1));
    inject(&mut r, "i0", frame(BCAST, B, 2));
    taken(&mut r, "o1");
    taken(&mut r, "o2");
    // A and B are both on port 0: a frame between them stays on that LAN.
    inject(&mut r, "i0", frame(B, A, 3));
    inject(&mut r, "i1", Packet::from_bytes(&[0u8; 13]));
    for o in ["o0", "o1", "o2"] {
        assert!(tags(&mut r, o).is_empty(), "{o}");
    }
    assert_eq!(read(&mut r, "sw.drops"), "2");
    let d = read(&mut r, "sw.drop_details");
    assert!(d.contains("1 destination on arrival port"), "{d}");
    assert!(d.contains("1 runt frame"), "{d}");
    assert_eq!(
        read(&mut r, "drops"),
        "sw\trunt frame\t1\nsw\tdestination on arrival port\t1"
    );
}

#[test]
fn a_batch_is_split_by_port_in_order() {
    let mut r = switch(300, "");
    inject(&mut r, "i1", frame(BCAST, B, 0));
    inject(&mut r, "i2", frame(BCAST, C, 0));
    for o in ["o0", "o1", "o2"] {
        taken(&mut r, o);
    }
    // From port 0: to B, to C, broadcast, to unknown, to B again.
    let batch = vec![
        frame(B, A, 1),
        frame(C, A, 2),
        frame(BCAST, A, 3),
        frame([2, 0, 0, 0, 0, 0x0d], A, 4),
        frame(B, A, 5),
    ];
    inject_packets(&mut r, "i0", 0, batch);
    assert_eq!(tags(&mut r, "o1"), [1, 3, 4, 5]);
    assert_eq!(tags(&mut r, "o2"), [2, 3, 4]);
    assert!(tags(&mut r, "o0").is_empty());
    // A batch entirely for one learned port goes on whole.
    inject_packets(&mut r, "i0", 0, (6..38).map(|t| frame(C, A, t)));
    assert_eq!(tags(&mut r, "o2"), (6..38).collect::<Vec<u8>>());
}

#[test]
fn entries_age_out_after_the_timeout() {
    let mut r = switch(2, "Script(wait 5, stop);");
    inject(&mut r, "i0", frame(BCAST, A, 1));
    assert_eq!(read(&mut r, "sw.count"), "1");
    assert_eq!(read(&mut r, "sw.timeout"), "2");
    r.run_until_idle();
    // The sweep removed the entry; a frame for A is flooded again.
    assert_eq!(read(&mut r, "sw.table"), "");
    for o in ["o1", "o2"] {
        taken(&mut r, o);
    }
    inject(&mut r, "i1", frame(A, B, 2));
    assert_eq!(tags(&mut r, "o0"), [2]);
    assert_eq!(tags(&mut r, "o2"), [2]);
}

#[test]
fn an_expired_entry_is_not_used_before_the_sweep() {
    // Learned at 0 with a 2 s timeout; at 3 s (before any sweep could run, as the router
    // does not run) the entry is expired: the frame floods and the entry goes.
    let mut r = switch(2, "");
    inject(&mut r, "i0", frame(BCAST, A, 1));
    for o in ["o1", "o2"] {
        taken(&mut r, o);
    }
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_parts(3, 0));
    inject(&mut r, "i1", frame(A, B, 2));
    assert_eq!(tags(&mut r, "o0"), [2]);
    assert_eq!(tags(&mut r, "o2"), [2]);
    assert_eq!(read(&mut r, "sw.table"), "02-00-00-00-00-0B 1");
}

#[test]
fn zero_timeout_is_a_hub_and_timeout_is_writable() {
    let mut r = switch(0, "");
    inject(&mut r, "i0", frame(BCAST, A, 1));
    inject(&mut r, "i1", frame(A, B, 2));
    assert_eq!(tags(&mut r, "o0"), [2]);
    assert_eq!(tags(&mut r, "o2"), [1, 2]);
    assert_eq!(read(&mut r, "sw.table"), "");
    r.write_path("sw.timeout", "1min").unwrap();
    assert_eq!(read(&mut r, "sw.timeout"), "60");
    assert!(r.write_path("sw.timeout", "soon").is_err());
    inject(&mut r, "i0", frame(BCAST, A, 3));
    assert_eq!(read(&mut r, "sw.table"), "02-00-00-00-00-0A 0");
}

#[test]
fn learn_only_ports_learn_but_do_not_forward() {
    let mut r = switch(300, "");
    r.write_path("sw.learn_only", "1 2").unwrap();
    assert_eq!(read(&mut r, "sw.learn_only"), "1 2");
    inject(&mut r, "i1", frame(BCAST, B, 1));
    for o in ["o0", "o1", "o2"] {
        assert!(tags(&mut r, o).is_empty(), "{o}");
    }
    assert_eq!(read(&mut r, "sw.table"), "02-00-00-00-00-0B 1");
    assert!(read(&mut r, "sw.drop_details").contains("1 arrival port only learning"));
    // Port 0 forwards, also to a learn-only port (the output Suppressor blocks that).
    inject(&mut r, "i0", frame(B, A, 2));
    assert_eq!(tags(&mut r, "o1"), [2]);
    assert!(r.write_path("sw.learn_only", "64").is_err());
    r.write_path("sw.learn_only", "").unwrap();
    assert_eq!(read(&mut r, "sw.learn_only"), "");
}

#[test]
fn switch_configuration_errors() {
    let e = config_error(
        "Idle -> sw :: EtherSwitch(TIMEOUT never) -> Discard; Idle -> [1]sw[1] -> Discard;",
    );
    assert!(e.contains("TIMEOUT"), "{e}");
    let e = config_error("Idle -> EtherSwitch -> Discard;");
    assert!(e.contains("EtherSwitch"), "{e}");
}

#[test]
fn hot_swap_keeps_learned_addresses() {
    let conf = "sw :: EtherSwitch;
         i0 :: TestInject -> [0]sw[0] -> o0 :: TestCapture;
         i1 :: TestInject -> [1]sw[1] -> o1 :: TestCapture;";
    let mut r = Kit::sim().hot_swap().router(conf);
    inject(&mut r, "i0", frame(BCAST, A, 1));
    // The new configuration stops at once: run_until_idle would otherwise run the clock on
    // until the entry expires.
    r.write_path("hotconfig", &format!("{conf} Script(stop);"))
        .unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "sw.table"), "02-00-00-00-00-0A 0");
}

// ---------------------------------------------------------------------------------------------
// EtherSpanTree in a router.

const ME: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
const ROOT: [u8; 6] = [2, 0, 0, 0, 0, 0x01];
const OTHER: [u8; 6] = [2, 0, 0, 0, 0, 0x02];

/// Figure 16 with three ports: BPDUs in through TestInjects `bN`, out to TestCaptures `sN`;
/// data frames through `iN` to `oN`; protocol timers of 1, 6 and 4 s; then `extra`.
fn bridge(extra: &str) -> Router {
    router(&format!(
        "stp :: EtherSpanTree(02:00:00:00:00:10, in, out, sw,
                              HELLO_TIME 1, MAX_AGE 6, FORWARD_DELAY 4, PRIORITY 0x8000);
         in, out :: Suppressor;
         sw :: EtherSwitch;
         b0 :: TestInject -> [0]stp[0] -> s0 :: TestCapture;
         b1 :: TestInject -> [1]stp[1] -> s1 :: TestCapture;
         b2 :: TestInject -> [2]stp[2] -> s2 :: TestCapture;
         i0 :: TestInject -> [0]in[0] -> [0]sw[0] -> [0]out[0] -> o0 :: TestCapture;
         i1 :: TestInject -> [1]in[1] -> [1]sw[1] -> [1]out[1] -> o1 :: TestCapture;
         i2 :: TestInject -> [2]in[2] -> [2]sw[2] -> [2]out[2] -> o2 :: TestCapture;
         {extra}"
    ))
}

fn id(prio: u16, a: [u8; 6]) -> BridgeId {
    BridgeId::new(prio, EtherAddr(a))
}

/// A configuration BPDU from `bridge`'s port `port` (1-based) announcing `root` at `cost`,
/// with the timers 1/6/4 s.
fn config(root: BridgeId, cost: u32, bridge: BridgeId, port: u16, age: u16) -> ConfigBpdu {
    ConfigBpdu {
        tc: false,
        tca: false,
        root,
        root_path_cost: cost,
        bridge,
        port_id: 0x8000 | port,
        message_age: age,
        max_age: 6 * 256,
        hello_time: 256,
        forward_delay: 4 * 256,
    }
}

fn bpdu_frame(b: BpduRepr) -> Packet {
    Packet::from_bytes(&b.frame(EtherAddr(OTHER)))
}

/// The BPDUs a capture received, checking each frame's addresses.
fn bpdus(r: &mut Router, capture: &str) -> Vec<BpduRepr> {
    taken(r, capture)
        .iter()
        .map(|p| {
            let (src, b) = BpduRepr::parse_frame(p.data()).expect("a BPDU");
            assert_eq!(src, EtherAddr(ME));
            assert_eq!(&p.data()[0..6], &BRIDGE_GROUP_ADDR.0);
            assert_eq!(p.len(), 60);
            b
        })
        .collect()
}

fn configs(r: &mut Router, capture: &str) -> Vec<ConfigBpdu> {
    bpdus(r, capture)
        .into_iter()
        .map(|b| match b {
            BpduRepr::Config(c) => c,
            BpduRepr::Tcn => panic!("a TCN on {capture}"),
        })
        .collect()
}

/// `in.activeN` and `out.activeN` of each port.
fn suppressors(r: &mut Router) -> Vec<(bool, bool)> {
    (0..3)
        .map(|p| {
            (
                read(r, &format!("in.active{p}")) == "true",
                read(r, &format!("out.active{p}")) == "true",
            )
        })
        .collect()
}

/// Starts the protocol of a router that does not run (the first frame EtherSpanTree
/// receives starts it: a counted malformed one here), takes the BPDUs it sent as root, and
/// runs the clock on by half a second (half the hold time and the hello time).
fn start(r: &mut Router) {
    inject(r, "b0", Packet::from_bytes(&[0u8; 20]));
    for c in ["s0", "s1", "s2"] {
        assert_eq!(bpdus(r, c).len(), 1);
    }
    let now = r.clock().now();
    r.clock()
        .advance_to(now + Timestamp::from_parts(0, 500_000_000));
}

#[test]
fn a_lone_bridge_is_root_and_its_ports_move_to_forwarding() {
    // Listening for 4 s, learning for 4 s, then forwarding.
    for (wait, state, sup, learn_only) in [
        ("1", "listening", (false, false), ""),
        ("5", "learning", (true, false), "0 1 2"),
        ("9", "forwarding", (true, true), ""),
    ] {
        let mut r = bridge(&format!("Script(wait {wait}, stop);"));
        r.run_until_idle();
        let want: String = (0..3)
            .map(|p| format!("{p} {state} designated\n"))
            .collect();
        assert_eq!(
            read(&mut r, "stp.port_states"),
            want.trim(),
            "after {wait} s"
        );
        assert_eq!(suppressors(&mut r), vec![sup; 3], "after {wait} s");
        assert_eq!(read(&mut r, "sw.learn_only"), learn_only);
        assert_eq!(read(&mut r, "stp.root_port"), "none");
        assert_eq!(read(&mut r, "stp.root_id"), "8000.020000000010");
        assert_eq!(read(&mut r, "stp.bridge_id"), "8000.020000000010");
        // As root it sends a configuration BPDU on every port every hello time.
        let sent = configs(&mut r, "s1");
        let secs: usize = wait.parse().unwrap();
        assert_eq!(sent.len(), secs + 1, "after {wait} s");
        let me = id(0x8000, ME);
        assert_eq!(sent[0], {
            let mut c = config(me, 0, me, 2, 0);
            c.tc = false;
            c
        });
    }
}

#[test]
fn forwarding_ports_signal_a_topology_change_and_shorten_ageing() {
    // At 8 s the ports forward: the root sets TC for max age + forward delay (10 s), and the
    // switch ages addresses out after the forward delay meanwhile.
    let mut r = bridge("Script(wait 9, stop);");
    r.run_until_idle();
    assert_eq!(read(&mut r, "stp.topology_change"), "true");
    assert_eq!(read(&mut r, "sw.timeout"), "4");
    let sent = configs(&mut r, "s0");
    assert!(sent.last().unwrap().tc && !sent[0].tc);
    let mut r = bridge("Script(wait 19, stop);");
    r.run_until_idle();
    assert_eq!(read(&mut r, "stp.topology_change"), "false");
    assert_eq!(read(&mut r, "sw.timeout"), "300");
}

#[test]
fn a_better_root_is_followed_and_its_bpdus_relayed() {
    let mut r = bridge("");
    let (root, other, me) = (id(0x1000, ROOT), id(0x8000, OTHER), id(0x8000, ME));
    start(&mut r);
    // The root itself on port 0, 0.5 s old information.
    inject(
        &mut r,
        "b0",
        bpdu_frame(BpduRepr::Config(config(root, 0, root, 1, 128))),
    );
    assert_eq!(read(&mut r, "stp.root_id"), "1000.020000000001");
    assert_eq!(read(&mut r, "stp.root_port"), "0");
    assert_eq!(read(&mut r, "stp.root_cost"), "19");
    assert_eq!(
        read(&mut r, "stp.port_states"),
        "0 listening root\n1 listening designated\n2 listening designated"
    );
    // Relayed on the designated ports once the hold time since the last BPDU there has
    // passed: our cost, our identifiers, the information's age then plus one step.
    assert!(bpdus(&mut r, "s1").is_empty());
    let now = r.clock().now();
    r.clock()
        .advance_to(now + Timestamp::from_parts(0, 500_000_000));
    inject(
        &mut r,
        "b0",
        bpdu_frame(BpduRepr::Config(config(root, 0, root, 1, 128))),
    );
    assert_eq!(configs(&mut r, "s1"), vec![config(root, 19, me, 2, 257)]);
    assert_eq!(configs(&mut r, "s2"), vec![config(root, 19, me, 3, 257)]);
    assert!(bpdus(&mut r, "s0").is_empty());
    // Another bridge with a cheaper path to the root on port 1: it is designated there, so
    // our port 1 blocks.
    inject(
        &mut r,
        "b1",
        bpdu_frame(BpduRepr::Config(config(root, 10, other, 1, 256))),
    );
    assert_eq!(
        read(&mut r, "stp.port_states"),
        "0 listening root\n1 blocking alternate\n2 listening designated"
    );
    assert_eq!(suppressors(&mut r)[1], (false, false));
    let msgs = read(&mut r, "stp.msgs");
    assert!(
        msgs.contains("1 root 1000.020000000001 cost 10 bridge 8000.020000000002 port 8001"),
        "{msgs}"
    );
    assert!(
        msgs.ends_with("best root 1000.020000000001 cost 19 bridge 8000.020000000010 tc false"),
        "{msgs}"
    );
    assert_eq!(read(&mut r, "stp.max_age"), "6");
    // Worse information on port 2 is answered with ours, once the hold time allows (a
    // malformed frame moves the protocol's clock on here).
    inject(
        &mut r,
        "b2",
        bpdu_frame(BpduRepr::Config(config(other, 0, other, 2, 0))),
    );
    assert!(bpdus(&mut r, "s2").is_empty());
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_parts(1, 0));
    inject(&mut r, "b2", Packet::from_bytes(&[0u8; 20]));
    assert_eq!(configs(&mut r, "s2"), vec![config(root, 19, me, 3, 385)]);
    assert_eq!(read(&mut r, "stp.received"), "4");
    assert_eq!(read(&mut r, "stp.drops"), "2");
}

#[test]
fn information_that_stops_coming_ages_out() {
    let mut r = bridge("Script(wait 20, stop);");
    let root = id(0x1000, ROOT);
    inject(
        &mut r,
        "b0",
        bpdu_frame(BpduRepr::Config(config(root, 0, root, 1, 0))),
    );
    assert_eq!(read(&mut r, "stp.root_port"), "0");
    r.run_until_idle();
    // After max age (6 s) the bridge is root again; 8 s later every port forwards.
    assert_eq!(read(&mut r, "stp.root_port"), "none");
    assert_eq!(read(&mut r, "stp.root_id"), "8000.020000000010");
    assert_eq!(
        read(&mut r, "stp.port_states"),
        "0 forwarding designated\n1 forwarding designated\n2 forwarding designated"
    );
}

#[test]
fn topology_change_notifications_go_to_the_root_and_are_acknowledged() {
    let mut r = bridge("");
    let root = id(0x1000, ROOT);
    let from_root = |tc: bool, tca: bool| {
        let mut c = config(root, 0, root, 1, 0);
        c.tc = tc;
        c.tca = tca;
        bpdu_frame(BpduRepr::Config(c))
    };
    inject(&mut r, "b0", from_root(false, false));
    for c in ["s0", "s1", "s2"] {
        bpdus(&mut r, c);
    }
    // A TCN from a bridge below us on port 1, where we are designated: passed on towards
    // the root on port 0, acknowledged on port 1 once the hold time allows.
    inject(&mut r, "b1", bpdu_frame(BpduRepr::Tcn));
    assert_eq!(bpdus(&mut r, "s0"), vec![BpduRepr::Tcn]);
    let now = r.clock().now();
    r.clock().advance_to(now + Timestamp::from_parts(1, 0));
    inject(&mut r, "b0", from_root(false, false));
    let acks = configs(&mut r, "s1");
    assert!(acks[0].tca, "{acks:?}");
    assert!(configs(&mut r, "s2").iter().all(|c| !c.tca));
    // The root acknowledges and sets TC: the switch ages addresses after the forward delay.
    inject(&mut r, "b0", from_root(true, true));
    assert_eq!(read(&mut r, "stp.topology_change"), "true");
    assert_eq!(read(&mut r, "sw.timeout"), "4");
    // TC cleared by the root: the long timeout is back.
    inject(&mut r, "b0", from_root(false, false));
    assert_eq!(read(&mut r, "stp.topology_change"), "false");
    assert_eq!(read(&mut r, "sw.timeout"), "300");
}

#[test]
fn bad_bpdus_are_dropped_and_counted() {
    let mut r = bridge("");
    let root = id(0x1000, ROOT);
    let good = BpduRepr::Config(config(root, 0, root, 1, 0)).frame(EtherAddr(OTHER));
    inject(&mut r, "b0", Packet::from_bytes(&good[..40]));
    let mut rstp = good;
    rstp[19] = 2;
    rstp[20] = 2;
    inject(&mut r, "b0", Packet::from_bytes(&rstp));
    let mut ip = good;
    ip[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    inject(&mut r, "b0", Packet::from_bytes(&ip));
    let old = BpduRepr::Config(config(root, 0, root, 1, 6 * 256));
    inject(&mut r, "b0", bpdu_frame(old));
    assert_eq!(read(&mut r, "stp.drops"), "4");
    let d = read(&mut r, "stp.drop_details");
    assert!(d.contains("1 malformed BPDU"), "{d}");
    assert!(d.contains("2 not an STP configuration or TCN BPDU"), "{d}");
    assert!(d.contains("1 message age not below max age"), "{d}");
    assert_eq!(read(&mut r, "stp.received"), "0");
    assert_eq!(read(&mut r, "stp.root_port"), "none");
}

#[test]
fn span_tree_configuration_errors() {
    let ports = "Idle -> [0]stp[0] -> Discard; Idle -> [1]stp[1] -> Discard;
                 Idle -> [0]sw[0] -> Discard; Idle -> [1]sw[1] -> Discard;
                 Idle -> [0]in[0] -> Discard; Idle -> [1]in[1] -> Discard;
                 Idle -> [0]out[0] -> Discard; Idle -> [1]out[1] -> Discard;";
    let e = config_error(&format!(
        "stp :: EtherSpanTree(02:00:00:00:00:01, in, out, nosuch); sw :: EtherSwitch;
         in, out :: Suppressor; {ports}"
    ));
    assert!(e.contains("SWITCH: no element named 'nosuch'"), "{e}");
    let e = config_error(&format!(
        "stp :: EtherSpanTree(02:00:00:00:00:01, in, out, in); sw :: EtherSwitch;
         in, out :: Suppressor; {ports}"
    ));
    assert!(e.contains("SWITCH: 'in' is not a EtherSwitch"), "{e}");
    let e = config_error(&format!(
        "stp :: EtherSpanTree(02:00:00:00:00:01, in, out, sw, MAX_AGE 40); sw :: EtherSwitch;
         in, out :: Suppressor; {ports}"
    ));
    assert!(e.contains("2 * (FORWARD_DELAY - 1) >= MAX_AGE"), "{e}");
    let e = config_error(&format!(
        "stp :: EtherSpanTree(02:00:00:00:00:01, in, out, sw, HELLO_TIME 0.5); sw :: EtherSwitch;
         in, out :: Suppressor; {ports}"
    ));
    assert!(e.contains("HELLO_TIME: must be between 1 and 10"), "{e}");
    // An output Suppressor with one port for two switch ports.
    let e = config_error(
        "stp :: EtherSpanTree(02:00:00:00:00:01, in, out, sw); sw :: EtherSwitch;
         in, out :: Suppressor;
         Idle -> [0]stp[0] -> Discard; Idle -> [1]stp[1] -> Discard;
         Idle -> [0]sw[0] -> Discard; Idle -> [1]sw[1] -> Discard;
         Idle -> [0]in[0] -> Discard; Idle -> [1]in[1] -> Discard;
         Idle -> out -> Discard;",
    );
    assert!(
        e.contains("OUTPUT_SUPPRESSOR: has fewer than 2 ports"),
        "{e}"
    );
}

#[test]
fn the_example_configuration_parses() {
    let conf = conf_file("ether-switch.click");
    let flat = Kit::new()
        .defines(&[("DEV0", "a0"), ("DEV1", "a1"), ("DEV2", "a2")])
        .parse(&conf)
        .unwrap();
    let classes: Vec<&str> = flat.elements.iter().map(|e| e.class.as_str()).collect();
    for c in [
        "EtherSpanTree",
        "EtherSwitch",
        "Suppressor",
        "FromDevice",
        "ToDevice",
    ] {
        assert!(classes.contains(&c), "{c} missing: {classes:?}");
    }
    // With the devices replaced by test elements, it builds, runs and converges.
    let conf = conf
        .replace("FromDevice($DEV0, PROMISC true)", "TestInject")
        .replace("FromDevice($DEV1, PROMISC true)", "TestInject")
        .replace("FromDevice($DEV2, PROMISC true)", "TestInject")
        .replace("ToDevice($DEV0)", "Discard")
        .replace("ToDevice($DEV1)", "Discard")
        .replace("ToDevice($DEV2)", "Discard");
    assert!(!conf.contains("Device("), "{conf}");
    let mut r = Kit::sim()
        .defines(&[
            ("FORWARD_DELAY", "4"),
            ("MAX_AGE", "6"),
            ("HELLO_TIME", "1"),
        ])
        .router(&format!("{conf}\nScript(wait 9, stop);"));
    r.run_until_idle();
    assert_eq!(
        read(&mut r, "stp.port_states"),
        "0 forwarding designated\n1 forwarding designated\n2 forwarding designated"
    );
}

// ---------------------------------------------------------------------------------------------
// The protocol engine: bridges on a virtual clock.

/// A port of a bridge: (bridge, port).
type End = (usize, usize);

/// Bridges joined by point-to-point links, delivering every BPDU at once.
struct Net {
    bridges: Vec<Bridge>,
    /// (bridge, port) at each end, and whether the link is up.
    links: Vec<(End, End, bool)>,
    now: Timestamp,
    /// TCNs sent so far, by bridge.
    tcns: Vec<usize>,
}

const SEC: i64 = 1_000_000_000;

fn settings(prio: u16, last: u8) -> Settings {
    Settings {
        bridge_id: BridgeId::new(prio, EtherAddr([2, 0, 0, 0, 1, last])),
        hello_time: Timestamp(SEC),
        max_age: Timestamp(6 * SEC),
        forward_delay: Timestamp(4 * SEC),
        path_cost: 10,
        port_priority: 0x80,
    }
}

impl Net {
    fn new(bridges: Vec<(Settings, usize)>, links: &[(End, End)]) -> Net {
        let mut net = Net {
            tcns: vec![0; bridges.len()],
            bridges: bridges
                .into_iter()
                .map(|(s, n)| Bridge::new(s, n))
                .collect(),
            links: links.iter().map(|&(a, b)| (a, b, true)).collect(),
            now: Timestamp(0),
        };
        for b in 0..net.bridges.len() {
            let mut out = Outbox::new();
            net.bridges[b].start(net.now, &mut out);
            net.deliver(b, out);
        }
        net
    }

    /// Delivers what bridge `from` sent, and what that provokes, until nothing is left.
    fn deliver(&mut self, from: usize, out: Outbox) {
        let mut todo: Vec<(usize, usize, BpduRepr)> =
            out.into_iter().map(|(p, b)| (from, p, b)).collect();
        while let Some((b, p, bpdu)) = todo.pop() {
            if bpdu == BpduRepr::Tcn {
                self.tcns[b] += 1;
            }
            let peer = self.links.iter().find_map(|&(x, y, up)| match up {
                true if x == (b, p) => Some(y),
                true if y == (b, p) => Some(x),
                _ => None,
            });
            if let Some((pb, pp)) = peer {
                let mut out = Outbox::new();
                self.bridges[pb].receive(pp, &bpdu, self.now, &mut out);
                todo.extend(out.into_iter().map(|(q, x)| (pb, q, x)));
            }
        }
    }

    /// Runs the clock on by `secs` seconds in steps of 10 ms.
    fn run(&mut self, secs: f64) {
        let end = self.now + Timestamp::from_secs_f64(secs);
        while self.now < end {
            self.now = self.now + Timestamp(SEC / 100);
            for b in 0..self.bridges.len() {
                let mut out = Outbox::new();
                self.bridges[b].tick(self.now, &mut out);
                self.deliver(b, out);
            }
        }
    }

    fn states(&self, b: usize) -> Vec<(PortState, PortRole)> {
        let br = &self.bridges[b];
        (0..br.nports())
            .map(|p| (br.state(p), br.role(p)))
            .collect()
    }
}

use PortRole::{Alternate, Designated, Root};
use PortState::{Blocking, Forwarding};

/// Bridges 0 (the root by priority), 1 and 2 in a triangle: 0.0–1.0, 1.1–2.1, 2.0–0.1.
fn triangle() -> Net {
    Net::new(
        vec![
            (settings(0x1000, 1), 2),
            (settings(0x8000, 2), 2),
            (settings(0x8000, 3), 2),
        ],
        &[((0, 0), (1, 0)), ((1, 1), (2, 1)), ((2, 0), (0, 1))],
    )
}

#[test]
fn a_loop_converges_to_a_tree() {
    let mut net = triangle();
    net.run(10.0);
    let root = net.bridges[0].settings().bridge_id;
    for b in &net.bridges {
        assert_eq!(b.root_id(), root);
    }
    assert_eq!(
        net.states(0),
        [(Forwarding, Designated), (Forwarding, Designated)]
    );
    assert_eq!(
        net.states(1),
        [(Forwarding, Root), (Forwarding, Designated)]
    );
    // Bridge 2 has the higher identifier: its port on the 1–2 link blocks.
    assert_eq!(net.states(2), [(Forwarding, Root), (Blocking, Alternate)]);
    assert_eq!(net.bridges[1].root_path_cost(), 10);
    // The tree stays as it is.
    net.run(30.0);
    assert_eq!(net.states(2), [(Forwarding, Root), (Blocking, Alternate)]);
    // TC was raised as ports came up, then cleared everywhere after max age + forward delay.
    assert!(net.bridges.iter().all(|b| !b.topology_change()));
}

#[test]
fn the_tree_reconverges_when_a_root_port_link_fails() {
    let mut net = triangle();
    net.run(12.0);
    let tcns = net.tcns.clone();
    // Bridge 2 loses its link to the root without noticing: the root's information ages
    // out after max age, then its blocked port goes through listening and learning.
    net.links[2].2 = false;
    net.run(5.0);
    assert_eq!(net.bridges[2].root_port(), Some(0));
    net.run(2.0);
    assert_eq!(net.bridges[2].root_port(), Some(1));
    assert_eq!(net.bridges[2].root_path_cost(), 20);
    net.run(8.5);
    assert_eq!(net.states(2)[1], (Forwarding, Root));
    assert_eq!(
        net.states(1),
        [(Forwarding, Root), (Forwarding, Designated)]
    );
    // Its port coming up was a topology change, notified towards the root (and
    // acknowledged: a few TCNs, not one per tick) and flagged by the root for everyone.
    net.run(1.5);
    assert!(
        net.tcns[2] > tcns[2] && net.tcns[2] - tcns[2] < 5,
        "{:?}",
        net.tcns
    );
    assert!(net.bridges.iter().all(|b| b.topology_change()));
    net.run(12.0);
    assert!(net.bridges.iter().all(|b| !b.topology_change()));
}

#[test]
fn a_new_better_root_takes_over() {
    let mut net = triangle();
    net.run(10.0);
    // Bridge 2's priority beats bridge 0's: restart it with priority 0x0800.
    net.bridges[2] = Bridge::new(settings(0x0800, 3), 2);
    let mut out = Outbox::new();
    net.bridges[2].start(net.now, &mut out);
    net.deliver(2, out);
    net.run(10.0);
    let root = net.bridges[2].settings().bridge_id;
    assert!(net.bridges.iter().all(|b| b.root_id() == root));
    assert!(net.bridges[2].is_root());
    // Bridge 0 (0x1000) beats bridge 1 on their link: bridge 1's port 0 blocks.
    assert_eq!(net.states(1), [(Blocking, Alternate), (Forwarding, Root)]);
    assert_eq!(
        net.states(0),
        [(Forwarding, Designated), (Forwarding, Root)]
    );
}

// ---------------------------------------------------------------------------------------------
// The BPDU fuzz body.

/// A record of the fuzz body's input: control byte, length, frame.
fn record(control: u8, frame: &[u8]) -> Vec<u8> {
    let mut v = vec![control, frame.len() as u8];
    v.extend_from_slice(frame);
    v
}

#[test]
fn bpdu_fuzz_body_holds_on_generated_inputs() {
    let root = id(0x1000, ROOT);
    let other = id(0x8000, OTHER);
    let mut seeds: Vec<Vec<u8>> = Vec::new();
    let good = BpduRepr::Config(config(root, 0, root, 1, 0)).frame(EtherAddr(OTHER));
    let worse = BpduRepr::Config(config(root, 30, other, 2, 0)).frame(EtherAddr(OTHER));
    let tcn = BpduRepr::Tcn.frame(EtherAddr(OTHER));
    let data = frame(B, A, 7).data().to_vec();
    // A root on port 0, time passing, data both ways, a TCN, a worse bridge on port 1.
    let mut s = record(0, &good);
    for _ in 0..6 {
        s.extend(record(8 << 3, &good));
        s.extend(record(4 | (1 << 3), &data));
        s.extend(record(5, &data));
    }
    s.extend(record(1, &tcn));
    s.extend(record(1 | (4 << 3), &worse));
    s.extend(record(6 | (31 << 3), &data));
    seeds.push(s);
    seeds.push(Vec::new());
    seeds.push(vec![1, 200, 0x42]);
    // The seed corpus of the fuzz target (fuzz/corpus/bpdu), frames built with scapy.
    seeds.extend(fuzz_seeds("bpdu"));
    // Deterministic mutations of the seeds: flipped bytes, cut records.
    let mut x: u32 = 0x1234_5678;
    let mut rand = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let base = seeds[0].clone();
    for _ in 0..300 {
        let mut m = base.clone();
        for _ in 0..(rand() % 8 + 1) {
            let i = rand() as usize % m.len();
            m[i] = rand() as u8;
        }
        m.truncate(rand() as usize % (m.len() + 1));
        seeds.push(m);
    }
    for s in &seeds {
        fuzzing::bpdu(s);
    }
}
