//! The driver as the `sluice` command runs it: signals caught by a Script while threads run,
//! and the time warp seen from outside.

use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `sluice ARGS -e CONFIG`; returns the exit status success, standard output and the
/// wall-clock time taken.
fn sluice(args: &[&str], config: &str) -> (bool, String, Duration) {
    let t0 = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(args)
        .args(["-e", config])
        .output()
        .expect("sluice runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "{}", stderr);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        t0.elapsed(),
    )
}

/// Signals that arrive again and again, from packets on two threads, while the signal
/// script blocks its thread: each reaches the script once it waits again, none kills the
/// process (Click's test/userlevel/Script-signal-03).
#[test]
fn signals_redelivered_while_threads_run() {
    let (ok, out, _) = sluice(
        &["--threads", "2"],
        "i :: InfiniteSource(LIMIT 10) -> s :: Script(TYPE PACKET, set y $(kill USR1 $$), end)
             -> d :: Discard;
         j :: InfiniteSource(LIMIT 30) -> s;
         Script(TYPE SIGNAL USR1, init x 0, set x $(add $x 1), goto l1 $(gt $x 1),
                print \"got USR1\", label l1, write bt.block 0.01s, end);
         Script(wait 0.02s, stop);
         StaticThreadSched(i 0, j 1);
         bt :: BlockThread;",
    );
    assert!(ok);
    assert_eq!(out, "got USR1\n");
}

/// With `timewarp` 4, a half-second wait on the router clock takes an eighth of a second
/// (Click's test/userlevel/timewarp-01).
#[test]
fn timewarp_speeds_up_waits() {
    let (ok, out, took) = sluice(
        &[],
        "Script(write timewarp 4, set a $(now), wait 0.5s, print $(sub $(now) $a), stop)",
    );
    assert!(ok);
    let warped: f64 = out.trim().parse().expect("a time");
    assert!((0.5..0.6).contains(&warped), "{warped}");
    assert!(took < Duration::from_millis(400), "{took:?}");
}

/// BlockThread's `block` blocks the writing thread for the time written and refuses a bad
/// time.
#[test]
fn block_thread_blocks_for_the_time_written() {
    let (ok, _, took) = sluice(&[], "bt :: BlockThread; Script(write bt.block 0.2s, stop)");
    assert!(ok);
    assert!(took >= Duration::from_millis(200), "{took:?}");
    let out = Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["-e", "bt :: BlockThread; Script(write bt.block soon, stop)"])
        .output()
        .expect("sluice runs");
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad TIME"));
}
