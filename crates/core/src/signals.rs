//! SIGINT/SIGTERM: the first one asks the running router to stop at once, cleanly (output
//! files are flushed and closed, `-h` handlers printed); a second one ends the process.
//!
//! The handler also writes to an eventfd that every waiting driver thread polls, so a router
//! asleep on a timer or on nothing at all reacts immediately.

use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);
static WAKE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn on_signal(sig: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) >= 1 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) };
    }
    let fd = WAKE_FD.load(Ordering::SeqCst);
    if fd >= 0 {
        let one: u64 = 1;
        // SAFETY: write(2) is async-signal-safe; it writes 8 bytes from a live u64 to the
        // eventfd created by `install`.
        unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    }
}

/// Installs the handlers for SIGINT and SIGTERM.
pub fn install() {
    if WAKE_FD.load(Ordering::SeqCst) < 0 {
        // SAFETY: eventfd has no pointer arguments; on failure it returns -1, which leaves
        // waiting threads to notice the signal at their next wake-up.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        WAKE_FD.store(fd, Ordering::SeqCst);
    }
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: installs an async-signal-safe handler (it touches atomics and calls write and
    // _exit) for two standard signals.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
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
