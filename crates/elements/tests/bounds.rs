//! Size and resource arguments are bounded at configuration time, with Click's wording: no
//! configuration can make an element allocate gigabytes.

use sluice_testkit::Kit;

/// The errors of `conf` on `threads` threads; empty if it builds.
fn errors(conf: &str, threads: usize) -> String {
    Kit::new()
        .threads(threads)
        .build(conf)
        .err()
        .unwrap_or_default()
}

#[test]
fn oversized_arguments_are_configuration_errors() {
    for (conf, want) in [
        (
            "InfiniteSource(LENGTH 4294967295) -> Discard",
            "LENGTH: out of range, bound 262144",
        ),
        (
            "RatedSource(LENGTH 262145) -> Discard",
            "LENGTH: out of range, bound 262144",
        ),
        (
            "Idle -> Pad(4000000000) -> Discard",
            "LENGTH: out of range, bound 262144",
        ),
        (
            "Idle -> Resize(0, 4000000000) -> Discard",
            "TAIL: out of range, bound 262144",
        ),
        (
            "Idle -> Unstrip(4294967295) -> Discard",
            "LENGTH: out of range, bound 262144",
        ),
        (
            "Idle -> Strip(99999999999) -> Discard",
            "LENGTH: out of range, bound 262144",
        ),
        (
            "InfiniteSource(BURST 0) -> Discard",
            "burst size must be >= 1",
        ),
        (
            "Idle -> ThreadSafeQueue(4294967295) -> Discard",
            "CAPACITY: out of range, bound 16777216",
        ),
        (
            "Idle -> CPUQueue(100000000) -> Discard",
            "CAPACITY: out of range, bound 16777216",
        ),
    ] {
        let e = errors(conf, 1);
        assert!(e.contains(want), "{conf}: {e}");
    }
}

#[test]
fn the_largest_sizes_are_accepted() {
    for conf in [
        "InfiniteSource(LENGTH 262144, LIMIT 1) -> Unstrip(262144) -> Pad(262144) -> Discard",
        "Idle -> Resize(-262144, 262144) -> Strip(262144) -> Discard",
        "Idle -> ThreadSafeQueue(16777216) -> Discard",
    ] {
        assert_eq!(errors(conf, 1), "", "{conf}");
    }
    assert_eq!(
        errors("Idle -> CPUQueue(16777216) -> Discard", 4),
        "",
        "four rings of the largest size: address space only"
    );
}

#[test]
fn library_callers_cannot_ask_for_more_threads_than_the_cli_allows() {
    let e = errors("Idle -> Discard", 100_000);
    assert_eq!(e, "100000 threads: at most 256 are supported");
    assert_eq!(errors("Idle -> Discard", 256), "");
}
