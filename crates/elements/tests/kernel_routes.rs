//! KernelRoutes: configuration errors, and a real rtnetlink session with the test's own
//! network namespace (an unused kernel table: the dump completes, nothing is installed). The
//! following of route changes, BIRD included, is tested with real namespaces in
//! tests/netns/scenarios/kernel_routes.sh and bgp.sh.

use sluice_testkit::{config_error, read, Kit};

const TABLE: &str = "Idle -> rt :: RadixIPLookup; rt[0] -> Discard; rt[1] -> Discard;";

#[test]
fn configuration_errors_are_reported() {
    let cases = [
        ("KernelRoutes(KTABLE 100);", "no route table"),
        ("KernelRoutes(nosuch);", "no element named 'nosuch'"),
        ("KernelRoutes(rt, DEV eth0);", "DEV: expected 'NAME OUT'"),
        (
            "KernelRoutes(rt, KTABLE no-such-table-name);",
            "unknown kernel table",
        ),
        ("KernelRoutes(rt, RCVBUF 2000000000);", "RCVBUF"),
        ("KernelRoutes(TABLE6 rt);", "no IPv6 (TABLE6) route table"),
        (
            "Idle -> c :: Counter -> Discard; KernelRoutes(c);",
            "no route table that takes changes",
        ),
    ];
    for (kr, want) in cases {
        let e = config_error(&format!("{TABLE} {kr}"));
        assert!(e.contains(want), "{kr}: {e}");
    }
    // A table whose routes are fixed (Click's LookupIPRoute) cannot be followed.
    let e = config_error("Idle -> s :: LookupIPRoute(0/0 0) -> Discard; KernelRoutes(s);");
    assert!(e.contains("no 'set' handler"), "{e}");
}

#[test]
fn dumps_an_unused_kernel_table() {
    let mut r = Kit::new().router(&format!(
        "{TABLE} Idle -> rt6 :: LookupIP6Route -> Discard;
         kr :: KernelRoutes(rt, TABLE6 rt6, KTABLE 4242, DEV lo 0); Script(wait 0.5, stop);"
    ));
    r.run();
    assert_eq!(read(&mut r, "kr.dumps"), "1");
    assert_eq!(read(&mut r, "kr.synced"), "true");
    assert_eq!(read(&mut r, "kr.routes"), "0");
    assert_eq!(read(&mut r, "kr.kernel_routes"), "0");
    assert_eq!(read(&mut r, "rt.table"), "");
    assert_ne!(read(&mut r, "kr.last_sync"), "0.000000000");
}
