//! SIGINT/SIGTERM: the first one asks the running router to stop at once, cleanly (output
//! files are flushed and closed, `-h` handlers printed); a second one ends the process.
//!
//! Signals caught for the configuration (Script's TYPE SIGNAL, as Click's driver does) are
//! recorded and handled by the driver loop between tasks; see [`catch`].
//!
//! The handler also writes to an eventfd that every waiting driver thread polls, so a router
//! asleep on a timer or on nothing at all reacts immediately.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);
/// Bit `n`: signal `n` was caught for the configuration and is not yet handled.
static CAUGHT: AtomicU32 = AtomicU32::new(0);
/// Bit `n`: signal `n` is caught for the configuration ([`catch`]).
static CATCHING: AtomicU32 = AtomicU32::new(0);

fn wake() {
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: write(2) is async-signal-safe; it writes 8 bytes from a live u64 to the
        // eventfd created by `wake_fd_init`.
        unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

fn wake_fd_init() {
    if WAKE_FD.load(Ordering::SeqCst) < 0 {
        // SAFETY: eventfd has no pointer arguments; on failure it returns -1, which leaves
        // waiting threads to notice the signal at their next wake-up.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        WAKE_FD.store(fd, Ordering::SeqCst);
    }
}

extern "C" fn on_caught(sig: libc::c_int) {
    CAUGHT.fetch_or(1 << sig, Ordering::SeqCst);
    wake();
}

/// Catches signal `signo` (1 to 31) for the configuration: its arrival is recorded for
/// [`take_caught`] instead of taking the default action (this replaces the stop handler for
/// SIGINT and SIGTERM, and [`install`] leaves it in place).
pub fn catch(signo: i32) {
    if !(1..32).contains(&signo) {
        return;
    }
    CATCHING.fetch_or(1 << signo, Ordering::SeqCst);
    wake_fd_init();
    let handler = on_caught as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installs an async-signal-safe handler (atomics and write(2)) for a signal
    // number checked to be in range.
    unsafe { libc::signal(signo, handler) };
}

/// Gives signal `signo` its default action again.
pub fn release(signo: i32) {
    if (1..32).contains(&signo) {
        CATCHING.fetch_and(!(1 << signo), Ordering::SeqCst);
        // SAFETY: restores the default disposition of a signal number checked to be in range.
        unsafe { libc::signal(signo, libc::SIG_DFL) };
    }
}

/// True (and forgotten) if signal `signo` was caught and not yet taken.
pub(crate) fn take_caught_one(signo: i32) -> bool {
    CAUGHT.fetch_and(!(1 << signo), Ordering::SeqCst) & (1 << signo) != 0
}

/// Takes the set of signals caught since the last call (bit `n` for signal `n`).
pub(crate) fn take_caught() -> u32 {
    if CAUGHT.load(Ordering::Relaxed) == 0 {
        return 0;
    }
    if let Some(fd) = wake_fd() {
        let mut v: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64 from the non-blocking eventfd; a stop signal
        // that also woke it is seen through `stop_requested`, not through the eventfd.
        unsafe { libc::read(fd, &mut v as *mut u64 as *mut libc::c_void, 8) };
    }
    CAUGHT.swap(0, Ordering::SeqCst)
}

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) };
    }
    wake();
}

/// Installs the handlers for SIGINT and SIGTERM.
pub fn install() {
    wake_fd_init();
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    for signo in [libc::SIGINT, libc::SIGTERM] {
        if CATCHING.load(Ordering::SeqCst) & (1 << signo) == 0 {
            // SAFETY: installs an async-signal-safe handler (it touches atomics and calls
            // write and _exit) for a standard signal.
            unsafe { libc::signal(signo, handler) };
        }
    }
}

/// True once a stop signal arrived.
#[inline]
pub fn stop_requested() -> bool {
    SIGNALS.load(Ordering::Relaxed) > 0
}

/// The descriptor that becomes readable when a stop signal arrives (after [`install`]).
pub(crate) fn wake_fd() -> Option<i32> {
    let fd = WAKE_FD.load(Ordering::Relaxed);
    (fd >= 0).then_some(fd)
}
