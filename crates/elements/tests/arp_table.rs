//! ARPTable and ARPQuerier's TABLE keyword (Click's elements/ethernet/arptable): queriers
//! that name one ARPTable share its next hops and waiting packets; the table's handlers;
//! TABLE errors; hot swap keeps the table.

mod ip_common;

use std::net::Ipv4Addr;

use ip_common::*;
use sluice_core::Packet;
use sluice_testkit::{config_error, inject, read, router, taken, Kit};

const ME0: [u8; 6] = [2, 0, 0, 0, 0, 0x10];
const ME1: [u8; 6] = [2, 0, 0, 0, 0, 0x11];
const HOST: [u8; 6] = [2, 0, 0, 0, 0, 2];
const HOST_B: [u8; 6] = [2, 0, 0, 0, 0, 3];

/// A reply "`spa` is at `sha`" to a querier at `me`.
fn reply(sha: [u8; 6], spa: [u8; 4], me: [u8; 6]) -> Packet {
    Packet::from_bytes(&arp(2, sha, spa, me, [198, 18, 0, 1], me))
}

/// An IP packet for next hop `nh`.
fn to(nh: [u8; 4], n: usize) -> Packet {
    let mut p = Packet::from_bytes(&udp(B, nh, 64, n));
    p.set_dst_ip_anno(Ipv4Addr::from(nh));
    p
}

/// Two queriers sharing `arpt`: `iN` feeds querier `qN`, whose packets reach `oN` and
/// queries `aN`; `rN` feeds its input 1.
const SHARED: &str = "arpt :: ARPTable;
    i0 :: TestInject -> q0 :: ARPQuerier(TABLE arpt, 198.18.0.1/24, 02:00:00:00:00:10)
       -> o0 :: TestCapture; q0[1] -> a0 :: TestCapture; r0 :: TestInject -> [1]q0;
    i1 :: TestInject -> q1 :: ARPQuerier(TABLE arpt, 198.18.0.1/24, 02:00:00:00:00:11)
       -> o1 :: TestCapture; q1[1] -> a1 :: TestCapture; r1 :: TestInject -> [1]q1;";

#[test]
fn two_queriers_learn_from_each_others_replies() {
    let mut r = router(SHARED);
    // q0 asks for A; the reply reaches q0, which sends the waiting packet.
    inject(&mut r, "i0", to(A, 0));
    let a0 = taken(&mut r, "a0");
    assert_eq!(a0.len(), 1);
    assert_eq!(&a0[0].data()[38..42], &A, "who has A");
    assert_eq!(read(&mut r, "arpt.length"), "1");
    inject(&mut r, "r0", reply(HOST, A, ME0));
    let o0 = taken(&mut r, "o0");
    assert_eq!(o0.len(), 1);
    assert_eq!(&o0[0].data()[0..12], &[HOST, ME0].concat()[..]);
    // q1 knows A without asking.
    inject(&mut r, "i1", to(A, 1));
    let o1 = taken(&mut r, "o1");
    assert_eq!(o1.len(), 1);
    assert_eq!(&o1[0].data()[0..12], &[HOST, ME1].concat()[..]);
    assert!(taken(&mut r, "a1").is_empty(), "no query from q1");
    // And the other way round: what q1 learns, q0 uses.
    let b_nh = [198, 18, 0, 3];
    inject(&mut r, "i1", to(b_nh, 2));
    assert_eq!(taken(&mut r, "a1").len(), 1);
    inject(&mut r, "r1", reply(HOST_B, b_nh, ME1));
    assert_eq!(taken(&mut r, "o1").len(), 1);
    inject(&mut r, "i0", to(b_nh, 3));
    let o0 = taken(&mut r, "o0");
    assert_eq!(o0.len(), 1);
    assert_eq!(&o0[0].data()[0..12], &[HOST_B, ME0].concat()[..]);
    assert!(taken(&mut r, "a0").is_empty());
    // One table, seen from all three elements.
    let t = read(&mut r, "arpt.table");
    assert!(t.starts_with("198.18.0.2 1 02-00-00-00-00-02"), "{t}");
    assert!(t.contains("\n198.18.0.3 1 02-00-00-00-00-03"), "{t}");
    assert_eq!(read(&mut r, "q0.table"), t);
    assert_eq!(read(&mut r, "q1.table"), t);
    assert_eq!(read(&mut r, "arpt.count"), "2");
    assert_eq!(read(&mut r, "q0.count"), "2");
    assert_eq!(read(&mut r, "arpt.length"), "0");
    assert_eq!(
        (read(&mut r, "q0.queries"), read(&mut r, "q1.queries")),
        ("1".into(), "1".into())
    );
    assert_eq!(
        (read(&mut r, "q0.responses"), read(&mut r, "q1.responses")),
        ("1".into(), "1".into())
    );
}

#[test]
fn arp_table_handlers_insert_delete_and_clear() {
    let mut r = router(SHARED);
    r.write_path("arpt.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    assert_eq!(read(&mut r, "arpt.count"), "1");
    let t = read(&mut r, "arpt.table");
    assert!(t.starts_with("198.18.0.2 1 02-00-00-00-00-02 "), "{t}");
    inject(&mut r, "i0", to(A, 0));
    assert_eq!(&taken(&mut r, "o0")[0].data()[0..6], &HOST);
    // Deleted: the entry stays, unknown; packets wait for an answer again.
    r.write_path("arpt.delete", "198.18.0.2").unwrap();
    let t = read(&mut r, "arpt.table");
    assert!(t.starts_with("198.18.0.2 0 FF-FF-FF-FF-FF-FF "), "{t}");
    inject(&mut r, "i0", to(A, 1));
    assert!(taken(&mut r, "o0").is_empty());
    assert_eq!(taken(&mut r, "a0").len(), 1);
    assert_eq!(
        (read(&mut r, "arpt.length"), read(&mut r, "q0.length")),
        ("1".into(), "1".into())
    );
    // As in Click, an insert through the table leaves the waiting packet waiting; the next
    // packet goes straight out.
    r.write_path("arpt.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    assert_eq!(read(&mut r, "arpt.length"), "1");
    inject(&mut r, "i1", to(A, 2));
    assert_eq!(taken(&mut r, "o1").len(), 1);
    // Clearing drops every entry and the waiting packet, counted by the table.
    r.write_path("arpt.clear", "").unwrap();
    assert_eq!(read(&mut r, "arpt.count"), "0");
    assert_eq!(read(&mut r, "arpt.length"), "0");
    assert_eq!(read(&mut r, "arpt.table"), "");
    assert_eq!(read(&mut r, "arpt.drops"), "1");
    assert!(read(&mut r, "arpt.drop_details").contains("1 expired"));
    assert_eq!(
        read(&mut r, "q0.drops"),
        "0",
        "the table's drops are the table's"
    );
    // Malformed writes.
    assert!(r.write_path("arpt.insert", "198.18.0.2").is_err());
    assert!(r.write_path("arpt.insert", "198.18.0.2 xx").is_err());
    assert!(r.write_path("arpt.delete", "nonsense").is_err());
    // A querier's insert reaches the shared table and releases what waits there.
    inject(&mut r, "i0", to(A, 3));
    assert_eq!(read(&mut r, "arpt.length"), "1");
    r.write_path("q1.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    assert_eq!(read(&mut r, "arpt.length"), "0");
    assert_eq!(taken(&mut r, "o1").len(), 1);
}

/// With TABLE, the querier's own limits configure nothing: the ARPTable's count, and so do
/// its drops.
#[test]
fn the_tables_limits_and_drops_are_the_arp_tables() {
    let mut r = router(
        "arpt :: ARPTable(ENTRY_PACKET_CAPACITY 2, TIMEOUT 0);
         i :: TestInject -> q :: ARPQuerier(TABLE arpt, 198.18.0.1, 02:00:00:00:00:10,
             ENTRY_PACKET_CAPACITY 100, CAPACITY_SLIM_FACTOR 0) -> o :: TestCapture;
         Idle -> [1]q;",
    );
    for n in 0..5 {
        inject(&mut r, "i", to(A, n));
    }
    assert_eq!(read(&mut r, "arpt.length"), "2");
    assert_eq!(read(&mut r, "arpt.drops"), "3");
    assert!(read(&mut r, "arpt.drop_details").contains("3 queue full"));
    assert_eq!(read(&mut r, "q.drops"), "0");
    assert_eq!(
        read(&mut r, "q.stats"),
        "3 packets killed\n1 ARP queries sent"
    );
    // At the end, the table counts what still waits.
    r.cleanup();
    assert_eq!(read(&mut r, "arpt.drops"), "5");
    assert!(read(&mut r, "arpt.drop_details").contains("2 unresolved at stop"));
    assert_eq!(read(&mut r, "q.drops"), "0");
}

/// Entries expire on a timer, whichever element made them, and the timer stops once the
/// table is empty.
#[test]
fn shared_entries_expire() {
    let mut r = router(
        "arpt :: ARPTable(TIMEOUT 1);
         i :: TestInject -> q :: ARPQuerier(TABLE arpt, 198.18.0.1, 02:00:00:00:00:10)
           -> o :: TestCapture; Idle -> [1]q;",
    );
    r.write_path("arpt.insert", "198.18.0.3 02:00:00:00:00:03")
        .unwrap();
    inject(&mut r, "i", to(A, 0));
    assert_eq!(read(&mut r, "arpt.count"), "2");
    r.run_until_idle();
    assert_eq!(read(&mut r, "arpt.count"), "0");
    assert_eq!(read(&mut r, "arpt.drops"), "1");
    assert!(read(&mut r, "arpt.drop_details").contains("1 expired"));
}

#[test]
fn table_must_name_an_arp_table() {
    let e = config_error(
        "Idle -> q :: ARPQuerier(TABLE nosuch, 198.18.0.1, 02:00:00:00:00:10) -> Discard;
         Idle -> [1]q;",
    );
    assert!(e.contains("While initializing"), "{e}");
    assert!(
        e.contains("TABLE: 'nosuch' does not name an element"),
        "{e}"
    );
    let e = config_error(
        "i :: Idle -> q :: ARPQuerier(TABLE i, 198.18.0.1, 02:00:00:00:00:10) -> Discard;
         Idle -> [1]q;",
    );
    assert!(e.contains("TABLE: 'i' is not an ARPTable"), "{e}");
    let e = config_error("ARPTable(CAPACITY_SLIM_FACTOR 0)");
    assert!(e.contains("CAPACITY_SLIM_FACTOR cannot be zero"), "{e}");
}

#[test]
fn hot_swap_keeps_an_arp_tables_entries() {
    let conf = |timeout: u32, ip: &str| {
        format!(
            "arpt :: ARPTable(TIMEOUT {timeout});
             i :: Idle -> q :: ARPQuerier(TABLE arpt, {ip}, 02:00:00:00:00:01) -> Discard;
             Idle -> [1]q;"
        )
    };
    let mut r = Kit::sim().hot_swap().router(&conf(600, "198.18.0.1"));
    r.write_path("arpt.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    r.write_path("arpt.insert", "198.18.0.3 02:00:00:00:00:03")
        .unwrap();
    r.write_path("arpt.delete", "198.18.0.3").unwrap();
    inject(&mut r, "i", to([198, 18, 0, 4], 0));
    assert_eq!(read(&mut r, "q.queries"), "1");
    // Another querier address and table timeout (0: run_until_idle would otherwise run the
    // clock on until they expire): the entries and the waiting packet move with the
    // ARPTable; the querier, at another address, starts afresh.
    r.write_path("hotconfig", &conf(0, "198.18.0.9")).unwrap();
    r.run_until_idle();
    let t = read(&mut r, "arpt.table");
    assert!(t.starts_with("198.18.0.2 1 02-00-00-00-00-02"), "{t}");
    assert!(t.contains("\n198.18.0.3 0 FF-FF-FF-FF-FF-FF"), "{t}");
    assert!(t.contains("\n198.18.0.4 0 FF-FF-FF-FF-FF-FF"), "{t}");
    assert_eq!(read(&mut r, "arpt.length"), "1");
    assert_eq!(read(&mut r, "q.table"), t);
    assert_eq!(read(&mut r, "q.ipaddr"), "198.18.0.9");
    assert_eq!(read(&mut r, "q.queries"), "0");
    // At the same address it keeps its counters too.
    r.write_path("hotconfig", &conf(0, "198.18.0.9")).unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "arpt.count"), "3");
    inject(&mut r, "i", to([198, 18, 0, 5], 0));
    r.write_path("hotconfig", &conf(0, "198.18.0.9")).unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "q.queries"), "1");
    assert_eq!(read(&mut r, "arpt.count"), "4");
    assert_eq!(read(&mut r, "arpt.length"), "2");
}

/// A querier that moves from a table of its own to a shared one takes only its counters, as
/// in Click.
#[test]
fn hot_swap_from_an_own_table_to_a_shared_one() {
    let mut r = Kit::sim().hot_swap().router(
        "i :: Idle -> q :: ARPQuerier(198.18.0.1, 02:00:00:00:00:01) -> Discard;
         Idle -> [1]q;",
    );
    r.write_path("q.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    inject(&mut r, "i", to([198, 18, 0, 4], 0));
    r.write_path(
        "hotconfig",
        "arpt :: ARPTable;
         i :: Idle -> q :: ARPQuerier(TABLE arpt, 198.18.0.1, 02:00:00:00:00:01) -> Discard;
         Idle -> [1]q;",
    )
    .unwrap();
    r.run_until_idle();
    assert_eq!(read(&mut r, "q.queries"), "1");
    assert_eq!(read(&mut r, "q.count"), "0");
    assert_eq!(read(&mut r, "arpt.count"), "0");
}

/// The table's entries survive a hot swap and still expire afterwards.
#[test]
fn hot_swap_of_an_expiring_table() {
    let conf = "arpt :: ARPTable(TIMEOUT 5);";
    let mut r = Kit::sim().hot_swap().router(conf);
    r.write_path("arpt.insert", "198.18.0.2 02:00:00:00:00:02")
        .unwrap();
    r.write_path("hotconfig", conf).unwrap();
    assert_eq!(read(&mut r, "arpt.count"), "1");
    r.run_until_idle();
    assert_eq!(read(&mut r, "arpt.count"), "0", "expired after the swap");
}
