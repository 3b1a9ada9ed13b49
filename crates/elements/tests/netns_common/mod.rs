//! Shared helpers of the tests that need real interfaces: a private network namespace per
//! test thread, veth pairs, shell commands, and a StopAfter element that ends a run (in the
//! library of [`kit`]).

#![allow(dead_code)]

use std::process::Command;

use sluice_core::{Batch, ConfigCx, Cx, Element, ElementClass, Handlers, InitCx, Table, Timestamp};
use sluice_lang::args::Args;
use sluice_testkit::Kit;

/// Test helper element: counts pushed frames whose EtherType is 0x88b5 and stops the router
/// after `N` of them (any packet with `ANY true`), or after `SECS` seconds of real time.
#[derive(Default)]
pub struct StopAfter {
    n: u64,
    secs: f64,
    any: bool,
    seen: u64,
    other: u64,
}

impl Element for StopAfter {
    fn configure(&mut self, args: &mut Args, _cx: &mut ConfigCx) -> Result<(), ()> {
        self.n = args.read_mp("N")?;
        self.secs = args.read("SECS")?.unwrap_or(5.0);
        self.any = args.read("ANY")?.unwrap_or(false);
        Ok(())
    }
    fn initialize(&mut self, cx: &mut InitCx) -> Result<(), String> {
        cx.schedule_after(0, Timestamp::from_secs_f64(self.secs));
        Ok(())
    }
    fn push(&mut self, _port: usize, batch: Batch, cx: &mut Cx) {
        for p in batch {
            if self.any || p.data().get(12..14) == Some(&[0x88, 0xb5]) {
                self.seen += 1;
            } else {
                self.other += 1;
            }
        }
        if self.seen >= self.n {
            cx.stop_router();
        }
    }
    fn run_timer(&mut self, _id: usize, cx: &mut Cx) {
        cx.stop_router();
    }
    fn handler_table(&self) -> Handlers {
        Table::<Self>::new().read("seen", |e| e.seen).into()
    }
}

/// The test elements: StopAfter.
pub const TEST_CLASSES: &[ElementClass] = &[ElementClass {
    name: "StopAfter",
    ports: "1/0",
    processing: "h/h",
    flow: "",
    source: "",
    make: || Box::new(StopAfter::default()),
}];

/// The test kit for these tests: the wall clock, one thread, with StopAfter.
pub fn kit() -> Kit {
    Kit::new().classes(TEST_CLASSES)
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Moves this thread into a fresh network namespace; false (with a message) if impossible.
pub fn private_netns(test: &str) -> bool {
    if !is_root() {
        assert!(
            std::env::var_os("CI").is_none(),
            "{}: CI runs as root; these tests must not be skipped",
            test
        );
        eprintln!(
            "{}: not root, skipped (needs CAP_NET_ADMIN and CAP_BPF)",
            test
        );
        return false;
    }
    // SAFETY: unshare affects only the calling thread's namespace membership.
    let r = unsafe { libc::unshare(libc::CLONE_NEWNET) };
    assert_eq!(r, 0, "unshare(CLONE_NEWNET) failed as root");
    sh("ip link set lo up");
    true
}

/// Runs `f` on a fresh thread inside its own network namespace (root only).
pub fn in_netns(name: &'static str, f: impl FnOnce() + Send + 'static) {
    std::thread::spawn(move || {
        if private_netns(name) {
            f();
        }
    })
    .join()
    .unwrap();
}

/// Standard output of a shell command.
pub fn sh_out(cmd: &str) -> String {
    let o = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn sh(cmd: &str) {
    let st = Command::new("sh").arg("-c").arg(cmd).status().expect("sh");
    assert!(st.success(), "command failed: {}", cmd);
}

/// A veth pair `a`/`b`, up, without IPv6 chatter.
pub fn veth(a: &str, b: &str) {
    sh(&format!(
        "ip link add {a} type veth peer name {b} && \
         sysctl -qw net.ipv6.conf.{a}.disable_ipv6=1 net.ipv6.conf.{b}.disable_ipv6=1 && \
         ip link set {a} up && ip link set {b} up"
    ));
}

pub const FRAME: &str = "\"\\<02 00 00 00 00 02 02 00 00 00 00 01 88 b5 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f 10 11 12 13 14 15 16 17 18 19 1a 1b 1c 1d 1e 1f 20 21 22 23 24 25 26 27 28 29 2a 2b 2c 2d 2e 2f 30 31>\"";
